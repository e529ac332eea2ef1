"""What a recall model reads at each question: every mixer's map is the one its output is
made of, its rows sum as its mechanism says, and the figure outlines the pair each question
asks for, in English and Chinese."""

import numpy as np
import pytest
import torch

from explorer.experiments import mqar, mqar_inspect
from explorer.figures.mqar import mqar_figure
from explorer.figures.mqar_inspect import recall_heatmap
from explorer.figures.style import said_figure
from explorer.experiments import mqar_table
from tests.helpers.words import english_words, figure_texts

TASK = mqar.Task()


def untrained(mixer: str, width: int = 16, seed: int = 0) -> mqar.RecallModel:
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return mqar.RecallModel(mqar.ModelShape(mixer, width), TASK.vocab).eval()


@pytest.mark.parametrize("mixer", [m for m in mqar.MIXERS if m != "hybrid"])
def test_the_map_is_what_the_mixer_multiplies_its_values_by(mixer):
    torch.manual_seed(1)
    layer = mqar.Mixer(mixer, 8, 2)
    x = torch.randn(2, 13, 8)
    with torch.no_grad():
        inputs = layer.inputs(x)
        weights = mqar_inspect.mixer_map(layer, x)
        assert torch.allclose(weights @ inputs["v"], layer.attend(**inputs), rtol=1e-4, atol=1e-5)
    assert torch.equal(weights.triu(1), torch.zeros_like(weights))          # causal: no later token
    rows = weights.sum(-1)
    if mixer in mqar.DELTA:
        assert (weights < 0).any()                       # signed, its rows not held to 1
    else:
        assert torch.allclose(rows, torch.ones_like(rows), atol=1e-5)
        assert (weights >= 0).all()
    if mixer == "sliding_window":                        # the last WINDOW tokens, itself included
        lag = torch.arange(13).unsqueeze(-1) - torch.arange(13)
        assert (weights[..., lag >= mqar.WINDOW] == 0).all() and (weights[..., (lag >= 0) & (lag < mqar.WINDOW)] > 0).all()


@pytest.mark.parametrize("mixer", ["softmax", "deltanet", "hybrid"])
def test_the_inspection_keeps_the_question_rows_and_the_asked_pairs(mixer):
    model = untrained(mixer)
    found = mqar_inspect.inspect(model, TASK, seed=4)
    tokens, labels = mqar.sequences(TASK, 1, torch.Generator().manual_seed(mqar_inspect.SEQUENCE_SEED + 4))
    assert found.tokens == tokens[0].tolist()
    assert found.questions == (labels[0] != mqar.IGNORED).nonzero().flatten().tolist()
    assert len(found.questions) == TASK.pairs
    for q, key, answer, pair in zip(found.questions, found.asked, found.answers, found.pair_positions):
        assert found.tokens[q] == key == found.tokens[pair]          # the pair holds the key asked
        assert found.tokens[pair + 1] == answer                       # and its value after it
        assert pair < 2 * TASK.pairs < q
    with torch.no_grad():
        logits = model(tokens)
    assert found.predicted == logits[0, found.questions].argmax(-1).tolist()
    assert found.mixers == list(model_shape(mixer).layer_mixers())
    for layer, rows in enumerate(found.maps):
        assert rows.shape == (model_shape(mixer).heads, TASK.pairs, TASK.length)
        for i, q in enumerate(found.questions):
            assert np.all(rows[:, i, q + 1:] == 0)                    # nothing after the question
        if found.mixers[layer] in mqar.DELTA:
            assert found.signed[layer]
        else:
            np.testing.assert_allclose(rows.sum(-1), 1.0, atol=1e-5)
    assert found.rows(0).shape == (TASK.pairs, TASK.length)
    np.testing.assert_allclose(found.rows(0), found.maps[0].mean(0))


def test_the_reading_head_is_the_one_with_most_weight_on_the_asked_pairs():
    found = mqar_inspect.inspect(untrained("softmax", seed=3), TASK, seed=1)
    for layer, m in enumerate(found.maps):
        weight = [np.mean([m[h, i, p] + m[h, i, p + 1] for i, p in enumerate(found.pair_positions)])
                  for h in range(m.shape[0])]
        np.testing.assert_allclose(found.pair_weight(layer), weight)
        assert found.reading_head(layer) == int(np.argmax(weight))
    assert found.reading_layer() == int(np.argmax([found.pair_weight(i).max() for i in range(len(found.maps))]))


def model_shape(mixer):
    return mqar.ModelShape(mixer, 16)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_heatmap_outlines_each_questions_pair(lang):
    found = mqar_inspect.inspect(untrained("softmax"), TASK, seed=2)
    built = recall_heatmap(found, 1, None, mixer="softmax", width=16)
    np.testing.assert_allclose(np.asarray(built.data[0].z), found.rows(1))
    fig = said_figure(built, lang)            # the words in the page's language, the data as built
    heat = fig.data[0]
    boxes = [(s.x0, s.x1, s.y0, s.y1) for s in fig.layout.shapes]
    assert boxes == [(p - 0.5, p + 1.5, i - 0.5, i + 0.5) for i, p in enumerate(found.pair_positions)]
    names = list(fig.layout.xaxis.ticktext)
    for i, (p, key) in enumerate(zip(found.pair_positions, found.asked)):
        assert names[p] == f"k{key}" and names[p + 1] == f"v{found.answers[i]}"
        assert f"k{key}" in fig.layout.yaxis.ticktext[i]
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text and heat.colorbar.title.text
    if lang == "zh":
        texts = figure_texts(fig) + [fig.layout.title.text, fig.layout.title.subtitle.text, heat.colorbar.title.text]
        assert english_words(" ".join(texts)) == []
    one_head = recall_heatmap(found, 0, 3, mixer="softmax", width=16)
    np.testing.assert_allclose(np.asarray(one_head.data[0].z), found.maps[0][3])


def test_a_signed_map_gets_a_scale_centred_on_zero():
    found = mqar_inspect.inspect(untrained("deltanet"), TASK, seed=0)
    fig = recall_heatmap(found, 0, None, mixer="deltanet", width=16)
    assert fig.data[0].zmid == 0 and fig.data[0].zmin == -fig.data[0].zmax


def test_a_live_point_joins_the_shipped_figure():
    table = mqar_table.shipped()
    point = {"mixer": "gla", "width": 32, "steps": 40, "seed": 7, "accuracy": 0.25, "state_bytes": 1792}
    plain, with_live = mqar_figure(table), said_figure(mqar_figure(table, live=[point]), "zh")
    assert len(with_live.data) == len(plain.data) + 1
    live = [t for t in with_live.data if "40" in t.name and "7" in t.name]
    assert len(live) == 1 and list(live[0].x) == [1792] and list(live[0].y) == [0.25]
    assert live[0].marker.symbol.endswith("-open")
    assert english_words(live[0].name) == []
