"""Issue 40, break 3: an upload is priced on its tensors' metadata before anything is
converted or copied. A 2 KB bfloat16 .pt whose q is a stride-0 expand of one element to
25,000 x 25,000 was converted to float32 (2.5 GB) before the element cap refused it."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from explorer import sources
from explorer.measure import bench
from explorer.text import say_error

MB = 2 ** 20


def _can_measure_peaks() -> bool:
    return os.access("/proc/self/clear_refs", os.W_OK)


def _expanded_bf16(path):
    torch.save({"q": torch.zeros(1, dtype=torch.bfloat16).expand(25_000, 25_000),
                "k": torch.zeros(4, 4, dtype=torch.bfloat16)}, path)
    return path


def _refusal(path) -> ValueError:
    with pytest.raises(ValueError) as caught:
        sources.load_file(path)
    return caught.value


@pytest.mark.skipif(not _can_measure_peaks(), reason="needs Linux /proc/self/clear_refs")
def test_a_2_kb_expanded_bf16_upload_is_refused_without_allocating(tmp_path):
    bomb = _expanded_bf16(tmp_path / "expanded.pt")
    assert bomb.stat().st_size < 4096

    def refused():
        try:
            sources.load_file(bomb)
        except ValueError as exc:
            return exc
        return None

    exc, peak = bench.measure_peak_bytes(refused)
    assert exc is not None, "the expanded upload was accepted"
    assert peak < 100 * MB, f"refusing it took {peak / MB:.0f} MB"
    assert "625,000,000 elements is over the cap of 4,194,304" in str(exc)
    assert "stores only 1 of them" in str(exc)


def test_the_refusal_is_said_in_chinese_on_the_chinese_page(tmp_path):
    exc = _refusal(_expanded_bf16(tmp_path / "expanded.pt"))
    chinese = say_error(exc, "zh")
    assert "625,000,000" in chinese and "上限" in chinese and "elements" not in chinese


def test_an_overlapping_float32_view_is_priced_by_its_shape_not_its_storage(tmp_path):
    # 8,191 stored numbers shown as 4,096 x 4,096: each row starts one element after the last.
    stored = torch.zeros(8191)
    torch.save({"q": stored.as_strided((4096, 4096), (1, 1)), "k": torch.zeros(4, 4)}, tmp_path / "overlap.pt")
    exc = _refusal(tmp_path / "overlap.pt")
    assert "16,777,216 elements is over the cap" in str(exc) and "stores only 8,191" in str(exc)


def test_a_view_of_a_storage_past_the_limit_is_refused(tmp_path, monkeypatch):
    from explorer.sources import arrays

    monkeypatch.setattr(arrays, "MAX_STORAGE_BYTES", 4096)
    with pytest.raises(ValueError, match="keeps a storage of 8,000 bytes"):
        sources.from_arrays(torch.zeros(2000)[:64].reshape(8, 8), torch.zeros(8, 8))


def test_a_small_expanded_view_and_rarer_floats_still_load(tmp_path):
    torch.save({"q": torch.ones(1, 1, dtype=torch.bfloat16).expand(16, 8),
                "k": torch.ones(16, 8).to(torch.float8_e4m3fn)}, tmp_path / "small.pt")
    sample = sources.load_file(tmp_path / "small.pt")
    assert sample.q.shape[-2:] == (16, 8) and sample.q.is_contiguous()
    assert torch.equal(sample.q, torch.ones_like(sample.q)) and torch.equal(sample.k, torch.ones_like(sample.k))


def test_a_tensor_of_bits_is_refused_in_words():
    with pytest.raises(ValueError, match="q: dtype torch.bits8 is refused"):
        sources.from_arrays(torch.zeros(16, 8, dtype=torch.uint8).view(torch.bits8), np.ones((16, 8)))
