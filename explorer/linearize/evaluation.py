"""How much a linearized model loses: perplexity, agreement and KL against the original, on texts.

    evaluate(texts, layers, kind, window, model) -> {"perplexity", "original_perplexity",
                                                     "top1_agreement", "kl", "tokens", ...}
    sensitivity(texts, kind, window, model) -> one row per layer, linearized alone, ranked
    keep_softmax(texts, kind, window, model, ks) -> per k: perplexity with k softmax layers kept,
                                                    chosen greedily, as the first k, or evenly spaced

Every number is over next-token predictions: token t + 1 predicted from tokens 0..t, each
text cut to ``max_tokens`` (the cost of one forward grows with its length). Perplexity is
exp(mean negative log-likelihood); top-1 agreement the share of positions where both models
rank the same token first; KL the mean over positions of KL(original || linearized) in nats.
The original model's log-probabilities are computed once per text and kept (bounded cache);
the keep-softmax search compares perplexities only, so it never needs them.

The greedy choice starts from every layer linear and, for k = 1, 2, ..., keeps softmax in the
layer that lowers the perplexity most given the k - 1 already kept: L + (L - 1) + ... forwards
per text, so it is the expensive one; ``max_forwards`` refuses it before any work when the
count of forwards times tokens is over the bound. The two plain rules' choices at k are among
its candidates (they are measured for their own curves anyway): one added layer cannot always
repair what an early pick locked in (elu+1's damage is spread over many layers), and a search
that saw a better set of k layers should not report a worse one. So the greedy curve is never
above either rule's, by construction, and the choice it reports at k is the best set it saw.
"""

from __future__ import annotations

import math

import torch

from ..core.cache import LRU
from ..stopping import check as check_stop
from .maps import MODEL
from .model import linearized, logits_of, resolve, token_ids

DEFAULT_MAX_TOKENS = 256
MAX_TEXTS = 64
MAX_FORWARD_TOKENS = 2_000_000        # tokens read by all the forwards of one call, at most

# Original log-probabilities per (model, token ids): 256 tokens x 49,152 words is 50 MB.
_ORIGINAL = LRU(64, max_weight=512 << 20, weigh=lambda t: t.numel() * t.element_size())


def _texts_ids(loaded, texts, max_tokens: int) -> list[torch.Tensor]:
    if isinstance(texts, str):
        texts = [texts]
    texts = list(texts)
    if not 1 <= len(texts) <= MAX_TEXTS:
        raise ValueError(f"texts: expected 1 to {MAX_TEXTS} texts, got {len(texts)}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 2 <= max_tokens <= 8192:
        raise ValueError(f"max_tokens: expected a whole number from 2 to 8192, got {str(max_tokens)[:40]}")
    ids = [token_ids(loaded, text, max_tokens) for text in texts]
    if all(len(i) < 2 for i in ids):
        raise ValueError("texts: each needs at least two tokens (one to read, one to predict)")
    return [i for i in ids if len(i) >= 2]


def _log_probs(loaded, ids, chosen, maps) -> torch.Tensor:
    """(N - 1, vocab) log-probabilities of the next token at every position but the last."""
    with linearized(loaded, chosen, maps):
        return torch.log_softmax(logits_of(loaded, ids)[:-1], dim=-1)


def _original(loaded, ids) -> torch.Tensor:
    key = (loaded.name, tuple(ids.tolist()))
    return _ORIGINAL.get(key, lambda: _log_probs(loaded, ids, [], None))


def _perplexity(loaded, all_ids, chosen, maps) -> float:
    """Perplexity alone: what the keep-softmax search compares (no original needed)."""
    nll = count = 0.0
    for ids in all_ids:
        got = _log_probs(loaded, ids, chosen, maps)
        nll -= float(got.gather(1, ids[1:].view(-1, 1)).sum())
        count += len(ids) - 1
    return math.exp(nll / count)


def _scores(loaded, all_ids, chosen, maps) -> dict:
    nll = nll_original = kl = agree = count = 0.0
    for ids in all_ids:
        ref = _original(loaded, ids)
        got = ref if not chosen else _log_probs(loaded, ids, chosen, maps)
        target = ids[1:].view(-1, 1)
        nll -= float(got.gather(1, target).sum())
        nll_original -= float(ref.gather(1, target).sum())
        kl += float((ref.exp() * (ref - got)).sum())
        agree += float((ref.argmax(-1) == got.argmax(-1)).sum())
        count += len(target)
    return {"perplexity": math.exp(nll / count), "original_perplexity": math.exp(nll_original / count),
            "top1_agreement": agree / count, "kl": kl / count, "tokens": int(count)}


def _bound(all_ids, forwards: int, max_forwards_tokens: int) -> None:
    need = forwards * sum(len(i) for i in all_ids)
    if need > max_forwards_tokens:
        raise ValueError(f"texts: this needs {forwards:,} forwards over {sum(len(i) for i in all_ids):,} tokens "
                         f"({need:,} token-reads), more than the bound of {max_forwards_tokens:,}; "
                         "use fewer or shorter texts (max_tokens)")


def evaluate(texts, layers, kind="hedgehog", window: int = 0, model: str = MODEL,
             max_tokens: int = DEFAULT_MAX_TOKENS, sinks: int = 0) -> dict:
    """Perplexity, the original's perplexity, top-1 agreement and KL over ``texts`` with
    ``layers`` linearized ([] the original, "all" every layer); plus the layers and tokens."""
    loaded, chosen, maps = resolve(model, layers, kind, window, sinks)
    with loaded.lock, torch.no_grad():
        result = _scores(loaded, _texts_ids(loaded, texts, max_tokens), chosen, maps)
    return {**result, "layers": chosen, "kind": maps.kind if maps else None, "window": maps.window if maps else 0,
            "sinks": maps.sinks if maps else 0}


def sensitivity(texts, kind="hedgehog", window: int = 0, model: str = MODEL,
                max_tokens: int = DEFAULT_MAX_TOKENS, stop=None,
                max_forward_tokens: int = MAX_FORWARD_TOKENS, sinks: int = 0) -> list[dict]:
    """Each layer linearized alone: one row per layer (layer, perplexity, top1_agreement, kl,
    rank), rank 1 the layer whose linearizing costs most (highest KL)."""
    loaded, every, maps = resolve(model, "all", kind, window, sinks)
    with loaded.lock, torch.no_grad():
        all_ids = _texts_ids(loaded, texts, max_tokens)
        _bound(all_ids, len(every) + 1, max_forward_tokens)
        rows = []
        for layer in every:
            check_stop(stop)
            rows.append({"layer": layer, **_scores(loaded, all_ids, [layer], maps)})
    for rank, row in enumerate(sorted(rows, key=lambda r: -r["kl"]), start=1):
        row["rank"] = rank
    return rows


def first_k(k: int, count: int) -> list[int]:
    """The plain rule "keep the first k layers softmax"."""
    return list(range(k))


def evenly_spaced(k: int, count: int) -> list[int]:
    """The plain rule "keep k layers softmax, evenly spaced": the middle of each of k equal parts."""
    return sorted({int((i + 0.5) * count / k) for i in range(k)}) if k else []


def greedy_forwards(ks, count: int) -> int:
    """Forwards the greedy choice needs to reach the largest k in ``ks``: one per layer it may
    add, and the two plain rules' sets at each k."""
    return sum(count - j + 2 for j in range(max(ks)))


def keep_softmax(texts, kind="hedgehog", window: int = 0, model: str = MODEL, ks=None,
                 max_tokens: int = DEFAULT_MAX_TOKENS, stop=None, progress=None,
                 max_forward_tokens: int = MAX_FORWARD_TOKENS, sinks: int = 0) -> dict:
    """Perplexity with k layers kept softmax (the rest linearized), for every k in ``ks``
    (default 0 ... all), the kept layers chosen three ways: "greedy", "first", "even".

    Returns {"original_perplexity", "ks", "greedy": [...], "first": [...], "even": [...],
    "kept": {"greedy": [[layers kept at k], ...], ...}}. ``progress(fraction)`` is told how far."""
    loaded, every, maps = resolve(model, "all", kind, window, sinks)
    count = len(every)
    ks = list(range(count + 1)) if ks is None else sorted({int(k) for k in ks})
    if not ks or ks[0] < 0 or ks[-1] > count:
        raise ValueError(f"ks: expected values from 0 to {count}")
    out = {"ks": ks, "kind": maps.kind, "window": maps.window, "sinks": maps.sinks, "greedy": [], "first": [], "even": [],
           "kept": {"greedy": [], "first": [], "even": []}}
    with loaded.lock, torch.no_grad():
        all_ids = _texts_ids(loaded, texts, max_tokens)
        forwards = greedy_forwards(ks, count) + 2 * len(ks) + 1
        _bound(all_ids, forwards, max_forward_tokens)
        measured: dict = {}

        def perplexity(kept) -> float:
            """Perplexity with the layers ``kept`` softmax; each set is measured once."""
            key = tuple(sorted(kept))
            if key not in measured:
                check_stop(stop)
                measured[key] = _perplexity(loaded, all_ids, [i for i in every if i not in key], maps)
                if progress is not None:
                    progress(min(1.0, len(measured) / forwards))
            return measured[key]

        out["original_perplexity"] = _perplexity(loaded, all_ids, [], maps)
        kept, greedy_at = [], {0: []}
        for k in range(1, ks[-1] + 1):
            candidates = [sorted(kept + [layer]) for layer in every if layer not in kept]
            candidates += [first_k(k, count), evenly_spaced(k, count)]
            kept = min(candidates, key=perplexity)
            greedy_at[k] = kept
        for k in ks:
            for name, chosen in (("greedy", greedy_at[k]), ("first", first_k(k, count)),
                                 ("even", evenly_spaced(k, count))):
                out["kept"][name].append(chosen)
                out[name].append(perplexity(chosen))
    return out


RULES = ("even", "first", "sensitivity")


def keep_rule(rule: str, k: int, count: int, ranking=None) -> list[int]:
    """The k layers kept softmax by ``rule``: "first", "even", or "sensitivity" (the k layers
    whose linearizing alone costs most; ``ranking`` is ``sensitivity()``'s rows)."""
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= count:
        raise ValueError(f"keep: expected a whole number from 0 to {count}, got {str(k)[:40]}")
    if rule == "first":
        return first_k(k, count)
    if rule == "even":
        return evenly_spaced(k, count)
    if rule == "sensitivity":
        if ranking is None:
            raise ValueError("rule: 'sensitivity' needs the per-layer ranking")
        return sorted(row["layer"] for row in ranking if row["rank"] <= k)
    raise ValueError(f"rule: expected one of {', '.join(RULES)}, got {str(rule)[:40]!r}")


def hybrid_table(texts, keep: int, kind="hedgehog", window: int = 0, model: str = MODEL, rule: str = "even",
                 max_tokens: int = DEFAULT_MAX_TOKENS, stop=None, max_forward_tokens: int = MAX_FORWARD_TOKENS,
                 sinks: int = 0) -> dict:
    """Three rows on ``texts``: the original, ``keep`` layers kept softmax (by ``rule``) with
    the rest linearized, and every layer linearized; each with its perplexity, agreement and KL.
    With rule "sensitivity" the per-layer rows come too."""
    from ..sources.models import get_model

    count = len(get_model(model).model.layers)
    ranking = (sensitivity(texts, kind, window, model, max_tokens, stop, max_forward_tokens, sinks)
               if rule == "sensitivity" else None)
    kept = keep_rule(rule, keep, count, ranking)
    rows = []
    for name, layers in (("original", []), (f"keep {keep} ({rule})", [i for i in range(count) if i not in kept]),
                         ("all linear", "all")):
        check_stop(stop)
        result = evaluate(texts, layers, kind, window, model, max_tokens, sinks)
        rows.append({"model": name, "softmax_layers": count - len(result["layers"]),
                     "perplexity": result["perplexity"], "top1_agreement": result["top1_agreement"],
                     "kl": result["kl"], "tokens": result["tokens"]})
    return {"kind": kind, "window": window, "sinks": sinks, "keep": keep, "rule": rule, "kept": kept, "rows": rows,
            "sensitivity": ranking}
