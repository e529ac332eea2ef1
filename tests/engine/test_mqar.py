"""Associative recall (MQAR) on tiny models: the task, the mixers against the mechanisms' own
float64 loops, the state's bytes, the price and the stop signal, the shipped table and its figure."""

import statistics

import pytest
import torch

from explorer import mechanisms, stopping
from explorer.experiments import mqar, mqar_table
from explorer.figures.mqar import mqar_figure
from explorer.figures.style import said_figure
from explorer.linearize.attention import windowed_attention_reference
from explorer.measure import cost
from tests.helpers.words import english_words, figure_texts

TINY = mqar.Task(vocab=16, length=10, pairs=3)


def test_every_sequence_holds_distinct_keys_and_asks_each_once():
    tokens, labels = mqar.sequences(mqar.Task(), 200, torch.Generator().manual_seed(3))
    task = mqar.Task()
    p = task.pairs
    for row, lab in zip(tokens, labels):
        keys, values = row[0:2 * p:2].tolist(), row[1:2 * p:2].tolist()
        assert len(set(keys)) == p and all(k in task.keys for k in keys) and all(v in task.values for v in values)
        asked = (lab != mqar.IGNORED).nonzero().flatten()
        assert len(asked) == p and int(asked.min()) >= 2 * p           # questions come after the pairs
        pairs = dict(zip(keys, values))
        assert sorted(row[asked].tolist()) == sorted(keys)               # every key asked once
        assert all(pairs[int(row[i])] == int(lab[i]) for i in asked)     # the label is its value
        others = [i for i in range(2 * p, task.length) if i not in asked.tolist()]
        assert all(int(row[i]) == mqar.FILLER for i in others)


def test_sequences_are_seeded():
    a = mqar.sequences(TINY, 8, torch.Generator().manual_seed(5))
    b = mqar.sequences(TINY, 8, torch.Generator().manual_seed(5))
    c = mqar.sequences(TINY, 8, torch.Generator().manual_seed(6))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) and not torch.equal(a[0], c[0])


@pytest.mark.parametrize("bad", [dict(vocab=7), dict(pairs=0), dict(vocab=8, pairs=4), dict(length=8, pairs=3)])
def test_a_task_that_cannot_be_asked_is_refused(bad):
    with pytest.raises(ValueError):
        mqar.Task(**{**dict(vocab=16, length=10, pairs=3), **bad})


@pytest.mark.parametrize("mixer", [m for m in mqar.MIXERS if m != "hybrid"])
def test_the_mixer_is_the_mechanisms_own_output(mixer):
    torch.manual_seed(0)
    layer = mqar.Mixer(mixer, 8, 2)
    x = torch.randn(2, 13, 8)
    inputs = layer.inputs(x)
    got = layer.attend(**inputs).detach().double()
    q, k, v = (inputs.pop(name).detach() for name in ("q", "k", "v"))
    params = {name: value.detach() for name, value in inputs.items()}
    if mixer == "sliding_window":
        flat = [t.reshape(4, 13, 4) for t in (q, k, v)]
        nothing = torch.zeros(4, 13, 1)
        want = windowed_attention_reference(*flat, nothing, nothing, mqar.WINDOW, 0.5).reshape(2, 2, 13, 4)
    else:
        want = mechanisms.get(mqar.mechanism(mixer)).reference(q, k, v, **params)
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-5)


def test_the_feature_map_mixers_write_their_maps_features():
    # Based writes Taylor-2 features of q and k, Hedgehog its learned map's, one (W, b) per head.
    from explorer import maps
    torch.manual_seed(0)
    x = torch.randn(2, 13, 8)
    based = mqar.Mixer("based", 8, 2)
    q = based.qkv(based.conv(x.transpose(1, 2))[..., :13].transpose(1, 2)).chunk(3, -1)[0]
    q = q.reshape(2, 13, 2, 4).transpose(1, 2)
    assert torch.allclose(based.inputs(x)["q"], maps.create("taylor2", 4)(q, is_query=True))
    hedgehog = mqar.Mixer("hedgehog", 8, 2)
    assert hedgehog.features.wq.shape == (2, 4, 4) and hedgehog.inputs(x)["k"].shape == (2, 2, 13, 8)
    assert any(p is hedgehog.features.wk for p in hedgehog.parameters())


def test_gradients_reach_every_weight_of_every_mixer():
    for mixer in mqar.MIXERS:
        model = mqar.RecallModel(mqar.ModelShape(mixer, 8), TINY.vocab)
        tokens, labels = mqar.sequences(TINY, 2, torch.Generator().manual_seed(0))
        torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), labels.flatten(),
                                          ignore_index=mqar.IGNORED).backward()
        assert all(p.grad is not None for p in model.parameters()), mixer


def test_the_state_bytes_formula():
    # width 32 in heads of 4 (8 heads), N = 32, float32, and each layer's 2 convolution inputs.
    conv = 2 * 32
    assert mqar.layer_state_bytes("softmax", 32, 8, 32) == 4 * (2 * 32 * 32 + conv)          # the KV cache
    assert mqar.layer_state_bytes("sliding_window", 32, 8, 32) == 4 * (2 * mqar.WINDOW * 32 + conv)
    assert mqar.layer_state_bytes("linear", 32, 8, 32) == 4 * (8 * (4 * 4 + 4) + conv)       # S and z
    assert mqar.layer_state_bytes("deltanet", 32, 8, 32) == 4 * (8 * 4 * 4 + conv)           # S alone
    # Taylor-2 writes m = 1 + 4 + 10 features per key of 4, Hedgehog 2 x 4: S is m x 4, z is m.
    assert mqar.layer_state_bytes("based", 32, 8, 32) == 4 * (8 * (15 * 4 + 15) + conv)
    assert mqar.layer_state_bytes("hedgehog", 32, 8, 32) == 4 * (8 * (8 * 4 + 8) + conv)
    task = mqar.Task()
    hybrid = mqar.state_bytes(mqar.ModelShape("hybrid", 32), task)
    assert hybrid == mqar.layer_state_bytes("linear", 32, 8, 32) + mqar.layer_state_bytes("softmax", 32, 8, 32)
    assert mqar.state_bytes(mqar.ModelShape("gla", 64), task) == 2 * 4 * (16 * 20 + 2 * 64)
    # The KV cache grows with N; a recurrent state does not.
    assert mqar.layer_state_bytes("softmax", 32, 8, 64) > mqar.layer_state_bytes("softmax", 32, 8, 32)
    assert mqar.layer_state_bytes("gla", 32, 8, 64) == mqar.layer_state_bytes("gla", 32, 8, 32)


def test_training_is_refused_over_its_price_before_it_starts():
    huge = mqar.Training(steps=10 ** 7)
    with pytest.raises(cost.Refusal) as caught:
        mqar.train(mqar.ModelShape("softmax", 32), training=huge, limit_seconds=60)
    assert "softmax" in str(caught.value) and "训练" in caught.value.say("zh")
    with pytest.raises(cost.Refusal):
        mqar_table.run(mqar_table.grid(), training=huge)


@pytest.mark.slow                   # Adam's first construction imports torch's compiler (~5 s)
def test_training_stops_when_asked():
    steps = []
    with pytest.raises(stopping.Stopped):
        mqar.train(mqar.ModelShape("linear", 8), TINY, mqar.Training(steps=50, batch=4, test=4),
                   should_stop=lambda: len(steps) >= 3, on_step=lambda step, loss: steps.append(step))
    assert steps == [0, 1, 2]


def test_the_grid_stops_before_its_next_point():
    trained = []
    with pytest.raises(stopping.Stopped):
        mqar_table.run(mqar_table.grid(), should_stop=lambda: True, on_result=trained.append)
    assert trained == []


@pytest.mark.slow
def test_a_short_training_recalls_above_chance():
    task = mqar.Task(vocab=16, length=8, pairs=2)
    result = mqar.train(mqar.ModelShape("softmax", 16), task, mqar.Training(steps=150, batch=32, test=256))
    assert result.accuracy > 3 * mqar.chance(task)
    again = mqar.train(mqar.ModelShape("softmax", 16), task, mqar.Training(steps=150, batch=32, test=256))
    assert again.accuracy == result.accuracy                # seeded: the same model and data


# ------------------------------------------------------------------- the shipped table

@pytest.fixture(scope="module")
def table():
    return mqar_table.shipped()


def test_the_shipped_table_has_every_point_and_its_provenance(table):
    want = {(p.mixer, p.width, p.seed) for p in mqar_table.grid()}
    assert {(p["mixer"], p["width"], p["seed"]) for p in table["points"]} == want
    assert set(table["versions"]) >= {"python", "torch", "numpy", "explorer"} and table["created_utc"]
    task, training, head_dim = mqar_table.settings(table)
    assert (task, training, head_dim) == (mqar.Task(), mqar.Training(), mqar.ModelShape().head_dim)
    for p in table["points"]:
        assert p["state_bytes"] == mqar.state_bytes(mqar.ModelShape(p["mixer"], p["width"], head_dim), task)
        # A diverged run is kept, with the step it diverged at and no accuracy.
        assert (p["accuracy"] is None) == (p["diverged"] is not None)
        assert p["accuracy"] is None or 0.0 <= p["accuracy"] <= 1.0
    assert sum(p["accuracy"] is None for p in table["points"]) <= 2


def test_the_figure_draws_the_tables_numbers(table):
    fig = mqar_figure(table)
    traces = {t.name: t for t in fig.data}
    assert fig.data[-1].name == "softmax"                    # drawn last, over the rest
    assert fig.layout.xaxis.type == "log" and "bytes" in fig.layout.xaxis.title.text
    for mixer in mqar.MIXERS:
        points = [p for p in table["points"] if p["mixer"] == mixer and p["accuracy"] is not None]
        widths = sorted({p["width"] for p in points})
        trace = traces[mqar_figure_name(mixer)]
        assert list(trace.x) == [next(p["state_bytes"] for p in points if p["width"] == w) for w in widths]
        for w, y, up, down in zip(widths, trace.y, trace.error_y.array, trace.error_y.arrayminus):
            accs = [p["accuracy"] for p in points if p["width"] == w]
            assert y == pytest.approx(statistics.fmean(accs))
            assert y + up == pytest.approx(max(accs)) and y - down == pytest.approx(min(accs))


def mqar_figure_name(mixer):
    from explorer.text import say
    return say(f"mqar.mixer.{mixer}")


def test_the_figure_speaks_chinese(table):
    fig = said_figure(mqar_figure(table), "zh")
    texts = " ".join(figure_texts(fig) + [t.name for t in fig.data] + [a.text for a in fig.layout.annotations])
    assert "字节" in fig.layout.xaxis.title.text and "准确率" in fig.layout.yaxis.title.text
    assert english_words(texts) == []


def test_the_command_line_prints_the_shipped_table(capsys, table):
    from explorer.__main__ import main
    assert main(["mqar"]) == 0
    out = capsys.readouterr().out
    assert "softmax" in out and f"{table['points'][0]['state_bytes']:,}" in out


@pytest.mark.slow
def test_check_reproduces_a_shipped_point(table):
    found = mqar_table.check(table, [mqar_table.Point("softmax", 32, 0)])
    assert found[0].holds, found


def markdown_row(s) -> str:
    """A row of docs/mqar.md's table, as the docs write it."""
    from explorer.text import say
    return (f"| {say(f'mqar.mixer.{s.mixer}')} | {s.width} | {s.state_bytes:,} | {s.mean:.3f} | "
            + ", ".join(f"{a:.3f}" for a in s.seeds) + " |")


def test_the_docs_quote_the_shipped_numbers(table):
    from pathlib import Path
    docs = (Path(__file__).resolve().parents[2] / "docs" / "mqar.md").read_text(encoding="utf-8")
    for s in mqar_table.summarise(table):
        assert markdown_row(s) in docs, markdown_row(s)


def _made(mixer, seed, accuracy=0.5):
    result = mqar.RecallResult(mixer, 32, 8, seed, accuracy, mqar.state_bytes(mqar.ModelShape(mixer, 32), mqar.Task()),
                               1000, 1.5, [1.0, 0.5])
    return mqar_table.record([result], mqar.Task(), mqar.Training(), 4, 1.5)


def test_a_mixer_added_later_merges_into_the_table_only_if_trained_alike():
    base, extra = _made("softmax", 0), _made("based", 0, 0.9)
    merged = mqar_table.merge(base, extra)
    assert [(p["mixer"], p["accuracy"]) for p in merged["points"]] == [("softmax", 0.5), ("based", 0.9)]
    assert merged["seconds"] == 3.0 and merged["task"] == base["task"]
    with pytest.raises(ValueError, match="both tables"):
        mqar_table.merge(base, _made("softmax", 0))
    other = {**extra, "training": {**extra["training"], "steps": 100}}
    with pytest.raises(ValueError, match="training"):
        mqar_table.merge(base, other)
    newer_torch = {**extra, "versions": {**extra["versions"], "torch": "9.9"}}
    with pytest.raises(ValueError, match="versions"):
        mqar_table.merge(base, newer_torch)
