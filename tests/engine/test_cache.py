"""explorer.core.cache.LRU: the one bounded cache behind every memo (views, lecture, page)."""

from __future__ import annotations

import threading

import pytest

from explorer.core.cache import LRU


def test_count_bound_drops_the_least_recently_used():
    cache = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1                 # a is now the most recent
    cache.put("c", 3)                          # so b goes
    assert list(cache) == ["a", "c"] and cache.get("b") is None


def test_peek_does_not_make_an_entry_recent():
    cache = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.peek("a") == 1 and cache.peek("zz", "none") == "none"
    cache.put("c", 3)
    assert "a" not in cache and list(cache) == ["b", "c"]


def test_weight_bound_keeps_the_newest_even_when_it_alone_is_over():
    cache = LRU(max_weight=10, weigh=len)
    cache.put("x", "aaaa")
    cache.put("y", "bbbb")
    cache.put("z", "cccc")                     # 12 > 10: x goes
    assert list(cache) == ["y", "z"]
    cache.put("big", "d" * 50)
    assert list(cache) == ["big"]              # over the bound alone, but kept
    cache.pop("big")
    cache.put("p", "eeeee")
    cache.put("q", "fffff")                    # 10: both fit once big's weight is gone
    assert list(cache) == ["p", "q"]


def test_both_bounds_and_replacing_a_key_counts_it_once():
    cache = LRU(3, max_weight=100, weigh=lambda v: v)
    for key in "abcd":
        cache.put(key, 10)
    assert list(cache) == ["b", "c", "d"]
    cache.put("b", 60)                         # b replaced, now the most recent: 10 + 10 + 60
    assert list(cache) == ["c", "d", "b"] and cache.values() == [10, 10, 60]
    cache.put("e", 31)                         # 4 > 3: c goes; then 101 > 100: d goes
    assert list(cache) == ["b", "e"]
    cache.clear()
    assert len(cache) == 0 and cache.items() == []


def test_weight_needs_a_weigher():
    with pytest.raises(ValueError, match="together"):
        LRU(max_weight=5)


def test_compute_runs_once_for_threads_asking_together_and_a_failure_is_not_kept():
    cache, calls, results = LRU(4), [], []
    release = threading.Event()

    def slow():
        calls.append(1)
        release.wait(5)
        return "chapter"

    workers = [threading.Thread(target=lambda: results.append(cache.get("ch", slow))) for _ in range(4)]
    for worker in workers:
        worker.start()
    release.set()
    for worker in workers:
        worker.join()
    assert results == ["chapter"] * 4 and len(calls) == 1

    def broken():
        raise RuntimeError("no model")
    with pytest.raises(RuntimeError):
        cache.get("other", broken)
    assert cache.get("other", lambda: "drawn") == "drawn"


def test_copy_of_hands_out_copies_of_one_computation_and_keeps_nothing_without_a_key():
    cache, calls = LRU(4), []

    def compute():
        calls.append(1)
        return {"values": [1, 2, 3]}

    first = cache.copy_of("k", compute)
    first["values"].append(99)                       # a caller writes into its copy
    assert cache.copy_of("k", compute) == {"values": [1, 2, 3]} and calls == [1]
    assert cache.copy_of(None, compute) == {"values": [1, 2, 3]} and calls == [1, 1]
    assert list(cache) == ["k"]
