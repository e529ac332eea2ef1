"""A saved map's metadata is a request like any other: nested or long values are refused in
one sentence (never a RecursionError), and what a refusal echoes of the file stays short."""

from __future__ import annotations

import json
import re
import struct

import pytest
from safetensors.torch import save_file

from explorer.maps import learned
from explorer.maps.learned import Hedgehog
from explorer.views import learn as lv

DEEP = "[" * 30000


def _write(path, **meta_over):
    phi = Hedgehog(32, 8, seed=0)
    meta = {"kind": "hedgehog", "head_dim": "32", "num_features": "8", "heads": "[]", **meta_over}
    save_file({k: v.contiguous() for k, v in phi.state_dict().items()}, str(path), metadata=meta)
    return path


@pytest.mark.parametrize("field", ["heads", "layer", "head", "model", "head_dim"])
def test_a_deeply_nested_metadata_value_is_refused_in_one_sentence(tmp_path, field):
    path = _write(tmp_path / "deep.safetensors", **{field: DEEP})
    with pytest.raises(ValueError) as caught:
        learned.load_map(path)
    message = str(caught.value)
    assert message.startswith("file: the metadata field") and "at most 256 characters" in message
    assert len(message) < 160


def test_a_header_nested_too_deeply_is_refused_in_one_sentence(tmp_path):
    header = ('{"__metadata__": {"kind": "hedgehog"}, "x": ' + DEEP + "]" * 30000 + "}").encode()
    path = tmp_path / "nested.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(ValueError, match="nested too deeply"):
        learned.load_map(path)


def test_a_short_heads_value_that_is_not_a_list_is_refused_in_words(tmp_path):
    for heads in ("[[[[[[", "[6, 12", '"six"', "[6, [12]]"):
        with pytest.raises(ValueError, match="heads must list"):
            learned.load_map(_write(tmp_path / "h.safetensors", heads=heads))


def test_a_map_naming_another_model_echoes_at_most_80_characters_of_its_name(tmp_path):
    name = "M" * 250
    fmap = learned.load_map(_write(tmp_path / "named.safetensors", model=json.dumps(name)))
    with pytest.raises(ValueError, match="trained on") as caught:
        lv.evaluate_map(fmap, 0, 0, heldout_count=1)
    echoed = sum(len(run) for run in re.findall("M{10,}", str(caught.value)))
    assert 0 < echoed <= 80, str(caught.value)
