"""The one bounded cache every memo of the app uses."""
import threading

from explorer.lru import LRU


def test_the_least_recently_used_entry_goes_first():
    cache = LRU(max_items=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1               # a is now the most recent
    cache.put("c", 3)
    assert list(cache) == ["a", "c"] and "b" not in cache
    assert cache.peek("a") == 1 and list(cache) == ["a", "c"]      # peeking does not count as use
    assert cache.get("b", "gone") == "gone"


def test_bounded_in_bytes_the_newest_entry_always_stays():
    cache = LRU(max_bytes=10, size_of=len)
    cache.put("a", "x" * 6)
    cache.put("b", "x" * 6)
    assert list(cache) == ["b"]
    cache.put("c", "x" * 50)                 # over the bound alone: kept, the others go
    assert list(cache) == ["c"] and cache.values() == ["x" * 50]


def test_limits_may_be_read_when_used():
    limit = {"n": 3}
    cache = LRU(max_items=lambda: limit["n"])
    for i in range(3):
        cache.put(i, i)
    limit["n"] = 1
    cache.put(3, 3)
    assert cache.items() == [(3, 3)]
    assert cache.pop(3) == 3 and len(cache) == 0


def test_safe_across_threads():
    cache = LRU(max_items=50)

    def work(offset):
        for i in range(2000):
            cache.put((offset, i % 80), i)
            cache.get((offset, (i * 7) % 80))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 50
