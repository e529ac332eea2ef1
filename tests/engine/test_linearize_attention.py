"""Windowed causal linear attention against its float64 reference, the training form against
the fast form, and the shipped map files' format and size (no model needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from explorer.linearize import attention, maps, texts, transfer
from explorer.maps.learned import Hedgehog

ROOT = Path(__file__).resolve().parents[2]


def _inputs(heads, n, d, m, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(heads, n, d, generator=gen) for _ in range(3))
    return q, k, v, torch.rand(heads, n, m, generator=gen) + 0.01, torch.rand(heads, n, m, generator=gen) + 0.01


@pytest.mark.parametrize("n, window, chunk, sinks", [(1, 0, 4, 0), (1, 3, 4, 0), (13, 0, 4, 0), (13, 1, 4, 0),
                                                     (13, 5, 4, 0), (29, 8, 8, 0), (29, 40, 8, 0), (64, 16, 64, 0),
                                                     (70, 3, 16, 0), (1, 0, 4, 1), (13, 0, 4, 1), (13, 5, 4, 1),
                                                     (29, 8, 8, 3), (70, 3, 16, 2), (21, 0, 8, 30)])
def test_fast_form_equals_the_float64_reference(n, window, chunk, sinks):
    q, k, v, fq, fk = _inputs(3, n, 6, 5, seed=n + window + sinks)
    fast = attention.windowed_attention(q, k, v, fq, fk, window, 0.4, chunk_size=chunk, sinks=sinks)
    slow = attention.windowed_attention_reference(q, k, v, fq, fk, window, 0.4, sinks=sinks)
    assert fast.shape == (3, n, 6)
    torch.testing.assert_close(fast.double(), slow, atol=2e-6, rtol=1e-5)


def test_a_sink_is_read_exactly_and_never_through_the_kernel():
    """Changing the sink's features changes nothing; with sinks covering the text it is softmax."""
    q, k, v, fq, fk = _inputs(2, 19, 4, 3, seed=5)
    sunk = attention.windowed_attention(q, k, v, fq, fk, 2, 0.5, sinks=1)
    moved = fk.clone()
    moved[:, 0] *= 50
    assert torch.equal(sunk, attention.windowed_attention(q, k, v, fq, moved, 2, 0.5, sinks=1))
    assert not torch.equal(sunk, attention.windowed_attention(q, k, v, fq, moved, 2, 0.5))
    torch.testing.assert_close(attention.windowed_attention(q, k, v, fq, fk, 0, 0.5, sinks=19),
                               attention.softmax_attention(q, k, v, 0.5), atol=1e-6, rtol=1e-5)


def test_a_window_as_long_as_the_text_is_softmax_and_window_zero_ignores_logits():
    q, k, v, fq, fk = _inputs(2, 21, 4, 3, seed=1)
    whole = attention.windowed_attention(q, k, v, fq, fk, 21, 0.5, chunk_size=8)
    torch.testing.assert_close(whole, attention.softmax_attention(q, k, v, 0.5), atol=1e-6, rtol=1e-5)
    linear = attention.windowed_attention(q, k, v, fq, fk, 0, 0.5)
    assert torch.equal(linear, attention.windowed_attention(q * 100, k, v, fq, fk, 0, 0.5))


@pytest.mark.parametrize("window, sinks", [(0, 0), (1, 0), (7, 0), (40, 0), (0, 1), (16, 1), (7, 4)])
def test_training_form_equals_the_fast_form_with_the_kernel_weight(window, sinks):
    q, k, v, _, _ = _inputs(3, 37, 8, 1, seed=window + sinks)
    fmap = Hedgehog(8, 8, seed=3, heads=(3,))
    log_weight = torch.tensor([0.5, -1.0, 0.0])
    with torch.no_grad():
        trained = transfer.layer_output(fmap, log_weight, q, k, v, window, 0.3, sinks)
        fq = fmap(q, is_query=True) * (log_weight.exp().view(-1, 1, 1) if window or sinks else 1)
        fast = attention.windowed_attention(q, k, v, fq, fmap(k), window, 0.3, chunk_size=16, sinks=sinks)
    torch.testing.assert_close(trained, fast, atol=1e-5, rtol=1e-5)


def test_a_bad_window_or_shape_is_refused_in_one_sentence():
    q, k, v, fq, fk = _inputs(2, 5, 4, 3, seed=0)
    for window in (-1, 1.5, True):
        with pytest.raises(ValueError, match="window"):
            attention.windowed_attention(q, k, v, fq, fk, window, 0.5)
        with pytest.raises(ValueError, match="sinks"):
            attention.windowed_attention(q, k, v, fq, fk, 0, 0.5, sinks=window)
    with pytest.raises(ValueError, match="sinks"):
        maps.layer_maps("elu1", sinks=maps.MAX_SINKS + 1)
    with pytest.raises(ValueError, match="fq, fk"):
        attention.windowed_attention(q, k, v, fq[:, :3], fk, 0, 0.5)
    with pytest.raises(ValueError, match="kind"):
        maps.layer_maps("nope")
    with pytest.raises(ValueError, match="model"):
        maps.layer_maps("elu1", model="gpt2")


def test_maps_round_trip_through_the_file_and_give_per_head_features(tmp_path):
    sets = {}
    for layer in range(30):
        fmap = Hedgehog(64, 64, seed=layer, heads=(9,))
        with torch.no_grad():
            fmap.bq.add_(0.01 * layer)
        fmap.requires_grad_(False)
        sets[layer] = fmap
    written = maps.LayerMaps("hedgehog", 64, maps.MODEL, list(sets.values()), torch.full((30, 9), -0.5), sinks=2)
    path = maps.write_maps(written, tmp_path / "set.safetensors", steps=3)
    again = maps.read_maps(path)
    assert (again.kind, again.window, again.sinks, again.layers, again.num_features) == ("hedgehog", 64, 2, 30, 64)
    q = torch.randn(9, 11, 64)
    phi = again.query(4, q)
    assert phi.shape == (9, 11, 64) and again.key(4, q).shape == (9, 11, 64)
    expected = sets[4](q, is_query=True) * torch.tensor(-0.5).exp()
    torch.testing.assert_close(phi, expected, atol=2e-3, rtol=2e-3)       # stored in float16
    assert path.read_bytes() == maps.write_maps(written, tmp_path / "again.safetensors", steps=3).read_bytes()


def test_shipped_sets_load_and_stay_under_eight_megabytes():
    found = maps.shipped()
    assert ("hedgehog", 0, 0) in found and len(found) >= 2
    total = sum(maps.map_path(kind, window, sinks=sinks).stat().st_size for kind, window, sinks in found)
    assert total <= 8 * 2 ** 20
    for kind, window, sinks in found:
        loaded = maps.load_shipped(kind, window, sinks=sinks)
        assert loaded.layers == 30 and loaded.heads == 9 and (loaded.window, loaded.sinks) == (window, sinks)
    assert [maps.parse_suffix(maps.set_suffix(w, s)) for w, s in ((0, 0), (64, 0), (16, 1))] == [(0, 0), (64, 0), (16, 1)]
    assert maps.parse_suffix("w16s") is None and maps.parse_suffix("x3") is None
    assert maps.layer_maps("favor_plus").query(0, torch.randn(9, 3, 64)).shape == (9, 3, maps.FAVOR_FEATURES)


def _ngrams(text, lang, n):
    units = text.split() if lang == "en" else [ch for ch in text if not ch.isspace()]
    return {tuple(units[i:i + n]) for i in range(len(units) - n + 1)}


@pytest.mark.parametrize("lang, n", [("en", 8), ("zh", 12)])
def test_no_heldout_passage_shares_a_long_run_with_training(lang, n):
    train = set().union(*(_ngrams(p, lang, n) for p in texts.load(lang, "train")))
    for passage in texts.load(lang, "heldout"):
        shared = _ngrams(passage, lang, n) & train
        assert not shared, f"{lang} held-out passage shares {sorted(shared)[:2]} with training"
    assert not set(texts.load(lang, "train")) & set(texts.load(lang, "heldout"))


def test_pydoc_topics_are_an_english_judge_nobody_here_wrote():
    topics = texts.pydoc_topics(5)
    assert len(topics) == 5 and all(len(t) > 1000 for t in topics)
    with pytest.raises(ValueError, match="lang, split"):
        texts.load("fr", "train")


@pytest.mark.parametrize("kind, window, sinks", [("hedgehog", 0, 0), ("luna", 0, 0), ("hedgehog", 4, 0),
                                                 ("hedgehog", 4, 1)])
def test_training_lowers_the_output_error_and_repeats_exactly(kind, window, sinks):
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(6, 3, 24, 8, generator=gen) for _ in range(3))
    out = attention.softmax_attention(q, k, v, 8 ** -0.5)
    batch = transfer.Batch(q, k, v, out)
    first = transfer.train_layer(batch, kind, window, sinks=sinks, num_features=8, steps=30, batch_size=3, seed=1)
    again = transfer.train_layer(batch, kind, window, sinks=sinks, num_features=8, steps=30, batch_size=3, seed=1)
    assert first.losses == again.losses
    assert all(torch.equal(a, b) for a, b in zip(first.feature_map.state_dict().values(),
                                                 again.feature_map.state_dict().values()))
    assert sum(first.losses[-5:]) < sum(first.losses[:5])
    with pytest.raises(ValueError, match="kind"):
        transfer.train_layer(batch, "elu1")
