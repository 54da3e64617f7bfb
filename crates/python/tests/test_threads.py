"""Threads: batches release the GIL, and a filter shared between threads that look up and
add at once answers every added key."""

from __future__ import annotations

import threading
import time

import bloomkit


def test_concurrent_lookups_and_adds():
    f = bloomkit.BloomFilter(400_000, 0.01, key=int)
    base = list(range(100_000))
    f.add_many(base)
    errors: list = []
    results: list = []

    def look():
        try:
            for _ in range(5):
                results.append(all(f.contains_many(base)))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def add(start):
        try:
            for i in range(start, start + 50_000, 5_000):
                f.add_many(range(i, i + 5_000))
                f.add(i)
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=look) for _ in range(4)]
    threads += [threading.Thread(target=add, args=(s,)) for s in (1_000_000, 2_000_000)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results and all(results)
    assert all(f.contains_many(range(1_000_000, 1_050_000)))
    assert all(f.contains_many(range(2_000_000, 2_050_000)))


def test_batches_release_the_gil():
    # With the interpreter's thread switching turned off, a second thread runs only when the
    # GIL is released: it makes progress only during the batches' Rust work.
    import sys

    f = bloomkit.BloomFilter(1_000_000, 0.01, key=int)
    keys = list(range(1_000_000))
    ticks = []
    started = threading.Event()
    done = threading.Event()

    def tick():
        started.set()
        while not done.is_set():
            ticks.append(1)
            time.sleep(0)  # hands the GIL back: the main thread runs until it lets go

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    t = threading.Thread(target=tick)
    try:
        t.start()
        started.wait()
        before = len(ticks)
        f.add_many(keys)
        f.contains_many(keys)
        during = len(ticks) - before
        sorted(keys)  # pure Python work: no release, no ticks
        after = len(ticks) - before - during
    finally:
        done.set()
        sys.setswitchinterval(interval)
        t.join()
    assert during > 0
    assert after == 0 or after < during


def test_calls_beside_a_batch_take_the_lock():
    # A batch's worker thread writes the filter while this thread, holding the GIL, reads
    # the batch's next keys from a generator that adds, looks up and removes on the same
    # filter one key at a time: those calls must take the lock (a batch is registered), not
    # the direct path a lone call takes. Counted (`_locked_calls`), and seen in the answers:
    # a quotient filter moves its slots on every insert, so two unguarded writers lose keys.
    from bloomkit import _native

    was = _native._pipeline(True)
    try:
        _calls_beside_a_batch(_native)
    finally:
        _native._pipeline(was)


def _calls_beside_a_batch(_native):
    for make in (
        lambda: bloomkit.QuotientFilter(400_000, 0.01, key=int),
        lambda: bloomkit.CountingBloomFilter(400_000, 0.01, key=int),
        lambda: bloomkit.BloomFilter(400_000, 0.01, key=int),
    ):
        f = make()
        side = []
        calls = 0

        def keys():
            nonlocal calls
            for i in range(200_000):
                if i % 7 == 0:
                    k = 10_000_000 + i
                    f.add(k)
                    side.append(k)
                    assert k in f
                    calls += 2
                    if i % 21 == 0 and hasattr(f, "remove"):
                        f.add(k + 1)
                        f.remove(k + 1)
                        calls += 2
                yield i

        before = _native._locked_calls()
        f.add_many(keys())
        assert _native._locked_calls() - before >= calls, "a call beside a batch took no lock"
        before = _native._locked_calls()
        assert 10_000_000 in f
        assert _native._locked_calls() == before, "a lone call took the lock"
        assert all(f.contains_many(range(200_000))), type(f).__name__
        assert all(f.contains_many(side)), type(f).__name__
        assert all(k in f for k in side)
        if hasattr(f, "__len__"):
            assert len(f) == 200_000 + len(side)
