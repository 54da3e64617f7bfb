"""Threads: batches release the GIL, and a filter shared between threads that look up and
add at once answers every added key."""

from __future__ import annotations

import threading

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
    # A thread that only runs while the GIL is free makes progress during a long batch.
    f = bloomkit.BloomFilter(1_000_000, 0.01, key=int)
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)

    keys = list(range(1_000_000))
    t = threading.Thread(target=tick)
    t.start()
    try:
        before = len(ticks)
        f.add_many(keys)
        f.contains_many(keys)
        during = len(ticks) - before
    finally:
        done.set()
        t.join()
    assert during > 0
