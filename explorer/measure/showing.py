"""How a metric is shown honestly: a mean over rows says how many rows had no value, and
on how many it is +inf. Plain dicts of ``explorer.measure.metrics.compare`` in, numbers,
messages and sentences out.
"""

from __future__ import annotations

import math

from ..text import Message


# metric key -> (key of the count of rows that have no value for it, why such a row has none)
UNDEFINED_ROWS = {
    "map_rel_error": ("error_rows_excluded", "their weights are not finite (a zero normaliser)"),
    "output_rel_error": ("error_rows_excluded", "their weights are not finite (a zero normaliser)"),
    "kl_mean": ("kl_rows_undefined", "the map gives negative or non-finite weight to a key softmax attends "
                                     "to, or the row is ill-defined"),
    "entropy_approx": ("entropy_approx_rows_undefined", "they hold negative or non-finite weights, or are "
                                                        "ill-defined: not probability distributions"),
    "monotonicity": ("monotonicity_rows_undefined", "they have a single key (the first causal row), constant "
                                                    "weights or logits, or are ill-defined"),
}


# metric key -> key of the count of rows where it is +inf (a value, the worst one: the mean
# beside it is over the finite rows, and the count is shown with it, never dropped).
INFINITE_ROWS = {"kl_mean": "kl_rows_infinite"}


# The means that only a probability distribution has: none for a map without a normaliser.
DISTRIBUTION_METRICS = ("kl_mean", "entropy_approx")


def why_key(row: dict, key: str) -> str:
    """The key of the words that say why ``key`` has no value on some rows of ``row``: for
    KL and entropy of a map without a normaliser, that its rows are weights; otherwise the
    metric's own reason (``common.why.<key>``; the output error shares the map error's)."""
    if key in DISTRIBUTION_METRICS and row.get("unnormalised_rows"):
        return "metrics.why_weights"
    return f"common.why.{'map_rel_error' if key == 'output_rel_error' else key}"


def weights_note(row: dict, name=None) -> Message:
    """The sentence under a table that has a map without a normaliser: its rows are weights,
    not distributions, so no KL or entropy; its map and output errors are what judge it."""
    def number(x):
        return Message("common.na") if x is None else f"{x:.3g}"

    negative = row.get("negative_fraction")
    return Message("metrics.weights_note", map=row["map"] if name is None else name,
               rows=int(row.get("unnormalised_rows") or 0), total=int(row.get("total_rows") or 0),
               negative=Message("metrics.weights_negative", share=f"{negative:.0%}") if negative else "",
               map_error=number(row.get("map_rel_error")), output_error=number(row.get("output_rel_error")))


def infinite_count(row: dict, key: str) -> int:
    """Rows of one ``compare`` row where ``key`` is +inf (0 for metrics that cannot be)."""
    count_key = INFINITE_ROWS.get(key)
    return int(row.get(count_key) or 0) if count_key else 0


def undefined_share(row: dict, key: str) -> tuple[int, int]:
    """(rows without a value for ``key``, rows compared) of one ``compare`` row; (0, total)
    for metrics that are not means over rows."""
    total = int(row.get("total_rows") or 0)
    count_key = UNDEFINED_ROWS.get(key, (None, ""))[0]
    count = int(row.get(count_key) or 0) if count_key else 0
    return count, total


def rows_in_mean(row: dict, key: str) -> int:
    """How many rows the mean ``row[key]`` is over: the rows compared, less those without a
    value and those where it is +inf (counted apart, never averaged in)."""
    count, total = undefined_share(row, key)
    return total - count - infinite_count(row, key)


def mostly_undefined(row: dict, key: str) -> bool:
    """No value on more than half of the rows, or no row with a value at all: not a number
    to show bare, no point on a plane, no bar. (The 'needle' preset with the identity map:
    KL defined on 1 row of 128 and 0 there.) Rows where the value is +inf have one."""
    count, total = undefined_share(row, key)
    if total > 0 and 2 * count > total:
        return True
    return row.get(key) is None and not infinite_count(row, key)


def shown_value(row: dict, key: str, digits: int = 4):
    """What a table shows for ``key``: the number when every row has a finite one; "0.123 (5
    of 128 rows n/a)" when most rows do; "n/a (127 of 128 rows)" when most do not (or none
    does). Rows where the value is +inf are said beside the finite mean: "0.123 (∞ on 4 of
    128 rows)", or "∞ (on 128 of 128 rows)" when no row is finite."""
    value = row.get(key)
    count, total = undefined_share(row, key)
    inf = infinite_count(row, key)
    if mostly_undefined(row, key):
        if count and inf:
            return Message("common.na_rows_inf", count=count, total=total, inf=inf)
        if count:
            return Message("common.na_rows", count=count, total=total)
        return Message("common.na") if value is None else value
    if value is None:
        return Message("common.inf_only", inf=inf, total=total)
    number = round_significant(value, digits)
    shown = f"{number:.{digits}g}"
    if inf:
        if count:
            return Message("common.inf_mean_na", number=shown, inf=inf, count=count, total=total)
        return Message("common.inf_mean", number=shown, inf=inf, total=total)
    return Message("common.na_some", number=shown, count=count, total=total) if count else number


def infinite_tail(row: dict, key: str) -> Message | str:
    mean = row.get(key)
    return "" if mean is None else Message("common.inf_tail", mean=f"{mean:.4g}", rest=rows_in_mean(row, key))


def infinite_note(row: dict, key: str, name=None, metric=None) -> Message:
    """The sentence that says on how many rows ``key`` is +inf, and what the mean beside it covers."""
    from ..catalog import METRIC_SHORT
    return Message("common.inf_note", map=row["map"] if name is None else name,
                   metric=METRIC_SHORT.get(key, key) if metric is None else metric, inf=infinite_count(row, key),
                   total=row.get("total_rows") or 0, tail=infinite_tail(row, key))


def round_significant(x, digits):
    """A float rounded to ``digits`` significant figures; None, flags, integers, zero and
    non-finite values as they are."""
    if x is None or isinstance(x, bool) or isinstance(x, int):
        return x
    if not math.isfinite(x) or x == 0:
        return x
    return float(f"{x:.{digits}g}")
