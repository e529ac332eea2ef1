"""One budget for the whole server: the memory granted at once and the heavy requests running
at once never pass it, whatever threads ask; what can never fit is refused at once."""

from __future__ import annotations

import threading
import time

import pytest

from explorer.measure import budget, cost

GB = 10 ** 9


def test_grants_add_up_and_never_exceed_the_budget_under_concurrent_threads():
    pool = budget.Budget(memory_bytes=4 * GB, heavy_slots=3, wait_s=5.0)
    ceiling = pool.memory_bytes - pool.reserve
    seen, refused, lock = [], [], threading.Lock()

    def visitor(nbytes):
        try:
            with budget.request(pool) as grant:
                budget.claim(nbytes, 10.0)
                with lock:
                    seen.append(pool.granted)
                    assert pool.granted <= ceiling and pool.heavy <= pool.heavy_slots
                time.sleep(0.02)
                assert grant.bytes == nbytes
        except budget.BudgetRefusal:
            with lock:
                refused.append(nbytes)

    sizes = [int(0.9 * GB), int(1.3 * GB), int(0.4 * GB), int(2.0 * GB)] * 6
    threads = [threading.Thread(target=visitor, args=(n,)) for n in sizes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert pool.granted == 0 and pool.heavy == 0            # everything given back
    assert len(seen) + len(refused) == len(sizes) and seen
    assert max(seen) <= ceiling and pool.peak_granted <= ceiling
    assert pool.peak_granted > 2 * GB                        # and requests did run side by side


def test_a_claim_larger_than_the_whole_budget_is_refused_at_once():
    pool = budget.Budget(memory_bytes=1 * GB, heavy_slots=1, wait_s=30.0)
    started = time.monotonic()
    with budget.request(pool), pytest.raises(budget.BudgetRefusal) as caught:
        budget.claim(2 * GB, 10.0)
    assert time.monotonic() - started < 1.0                  # no waiting for what can never fit
    assert "2.0 GB" in str(caught.value) and "0.9 GB" in str(caught.value)
    assert "2.0 GB" in caught.value.say("zh")
    assert pool.granted == 0


def test_a_claim_that_does_not_fit_now_waits_briefly_then_is_refused_in_words():
    pool = budget.Budget(memory_bytes=2 * GB, heavy_slots=1, wait_s=0.2)
    with budget.request(pool):
        budget.claim(1 * GB, 10.0)                           # holds the one heavy slot
        outcome = {}

        def other():
            with budget.request(pool):
                try:
                    budget.claim(int(0.5 * GB), 10.0)
                    outcome["granted"] = True
                except budget.BudgetRefusal as exc:
                    outcome["refused"] = str(exc)
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert "busy" in outcome["refused"] and "1 running" in outcome["refused"]
    # once the first has finished, the same claim is granted
    with budget.request(pool) as grant:
        budget.claim(int(0.5 * GB), 10.0)
        assert grant.slot and pool.granted == int(0.5 * GB)


def test_a_light_request_passes_while_every_heavy_slot_is_taken():
    pool = budget.Budget(memory_bytes=2 * GB, heavy_slots=1, wait_s=0.0)
    with budget.request(pool):
        budget.claim(int(1.5 * GB), 30.0)                    # heavy, up to the reserve
        other = budget.Grant(pool)
        with pytest.raises(budget.BudgetRefusal):
            other.claim(int(0.2 * GB), 30.0)                 # a second heavy one: no slot, refused
        light = budget.Grant(pool)
        light.claim(10 * 10 ** 6, 0.1)                       # a short text's maps: served from the reserve
        assert not light.slot and pool.granted == int(1.5 * GB) + 10 * 10 ** 6
        light.close()
    assert pool.granted == 0


def test_a_grant_is_its_largest_claim_and_cost_check_claims_it_inside_a_request_only():
    pool = budget.Budget(memory_bytes=8 * GB, heavy_slots=2)
    small = cost.estimate("maps", n=512, d=64, maps=["elu1"])
    large = cost.estimate("maps", n=2048, d=64, maps=["elu1"])
    cost.check(large)                                        # outside a request: nothing claimed
    assert pool.granted == 0
    with budget.request(pool) as grant:
        cost.check(small)
        cost.check(large)
        cost.check(small)
        assert grant.bytes == large.bytes == pool.granted    # the peak, not the sum of steps
        assert cost.fits(large) and pool.granted == large.bytes   # asking is not claiming
    assert pool.granted == 0 and pool.heavy == 0


def test_the_sizing_reads_explorer_memory_gb_and_else_the_machine():
    assert budget.sized_memory_bytes({"EXPLORER_MEMORY_GB": "6"}) == 6 * GB
    assert budget.sized_memory_bytes({"EXPLORER_MEMORY_GB": "1.5"}) == int(1.5 * GB)
    machine = budget.machine_memory_bytes()
    assert machine and machine > GB // 4
    for junk in ("", "lots", "-3", "nan", "inf"):
        assert budget.sized_memory_bytes({"EXPLORER_MEMORY_GB": junk}) == int(machine * budget.MACHINE_SHARE)
    assert budget.sized_heavy_slots({"EXPLORER_HEAVY_REQUESTS": "3"}) == 3
    assert budget.sized_heavy_slots({}) == max(1, budget.cpu_count() // 2)
