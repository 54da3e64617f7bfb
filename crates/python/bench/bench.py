"""bloomkit for Python against the Python filter packages, side by side in one run.

    python crates/python/bench/bench.py            # 10^7 keys for bloomkit and rbloom
    python crates/python/bench/bench.py --n 1000000 --small 100000

Prints one table: ns per key (add, lookup of present keys, lookup of absent keys), bits per
key, and the measured false-positive rate, for

- one Bloom filter at 1%: bloomkit's BloomFilter, rbloom's Bloom, pyprobables' BloomFilter
  and pybloom-live's BloomFilter, one key at a time (``add`` / ``in``) and, where the
  package has one, its fastest batch (bloomkit: ``add_many`` / ``contains_many``; rbloom:
  ``update`` / ``map(b.__contains__, keys)``);
- bloomkit's other variants against pyprobables' structure of the same kind;
- NumPy ``uint64`` batches against the Rust library's own ``contains_batch`` of the same
  filter (timed in Rust, in this process);
- ``contains_many`` split over 1 and 2 Python threads, with a batch's worker thread (the Rust
  half overlapped with reading the next chunk) off and on.

pyprobables and pybloom-live are pure Python: they get ``--small`` keys (ns per key is
what the table compares). Packages that are not installed are skipped and said so.
"""

from __future__ import annotations

import argparse
import gc
import time

import bloomkit


def timed(fn) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


class Contender:
    """One structure and one way of using it, measured a round at a time."""

    def __init__(self, name, make, bits_of, add, hit, miss, note):
        self.name, self.make, self.bits_of = name, make, bits_of
        self.add, self.hit, self.miss, self.note = add, hit, miss, note
        self.times = {"add": [], "hit": [], "miss": []}
        self.bits = self.rate = float("nan")

    def round(self, members, absent):
        f = self.make(len(members))
        self.times["add"].append(timed(lambda: self.add(f, members)) / len(members))
        self.times["hit"].append(timed(lambda: self.hit(f, members)) / len(members))
        answers = []
        self.times["miss"].append(timed(lambda: answers.append(self.miss(f, absent))) / len(absent))
        self.bits = self.bits_of(f) / len(members)
        self.rate = sum(answers[0]) / len(absent)

    def row(self, n):
        t = {k: median(v) * 1e9 for k, v in self.times.items()}
        return (self.name, n, t["add"], t["hit"], t["miss"], self.bits, self.rate, self.note)


def one_by_one(name, make, bits_of, note="add / in"):
    return Contender(
        name, make, bits_of,
        add=lambda f, keys: [f.add(k) for k in keys],
        hit=lambda f, keys: [k in f for k in keys],
        miss=lambda f, keys: [k in f for k in keys],
        note=note,
    )


def batched(name, make):
    """A bloomkit class asked through its batches: ``add_many`` / ``contains_many``."""
    return Contender(
        name, make, lambda f: f.nbytes * 8,
        add=lambda f, keys: f.add_many(keys),
        hit=lambda f, keys: f.contains_many(keys),
        miss=lambda f, keys: f.contains_many(keys),
        note="add_many / contains_many",
    )


def run_rounds(contenders, members, absent, rounds):
    """Every contender once a round, the order rotated each round: a busy moment of a
    shared machine falls on all of them, not on one."""
    for r in range(rounds):
        order = contenders[r % len(contenders):] + contenders[: r % len(contenders)]
        for c in order:
            c.round(members, absent)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000, help="keys for bloomkit and rbloom")
    ap.add_argument("--small", type=int, default=100_000, help="keys for the pure-Python packages")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are shown")
    ap.add_argument("--fpr", type=float, default=0.01)
    args = ap.parse_args()
    n, small, p = args.n, args.small, args.fpr

    members = [f"https://example.com/item/{i}" for i in range(n)]
    absent = [f"https://example.com/other/{i}" for i in range(min(n, 1_000_000))]
    rows: list = []

    # --- one Bloom filter at the same memory and rate, str keys ----------------------
    big = [
        one_by_one("bloomkit BloomFilter", lambda m: bloomkit.BloomFilter(m, p), lambda f: f.nbytes * 8),
        batched("bloomkit BloomFilter", lambda m: bloomkit.BloomFilter(m, p)),
        batched("bloomkit SimdBlockFilter", lambda m: bloomkit.SimdBlockFilter(m, p)),
    ]
    try:
        import rbloom
    except ImportError:
        print("rbloom is not installed: skipped")
    else:
        big.append(one_by_one("rbloom Bloom", lambda m: rbloom.Bloom(m, p), lambda b: b.size_in_bits))
        big.append(Contender(
            "rbloom Bloom", lambda m: rbloom.Bloom(m, p), lambda b: b.size_in_bits,
            add=lambda b, keys: b.update(keys),
            hit=lambda b, keys: list(map(b.__contains__, keys)),
            miss=lambda b, keys: list(map(b.__contains__, keys)),
            note="update / map(__contains__)",
        ))
    run_rounds(big, members, absent, args.rounds)
    rows += [c.row(n) for c in big]

    # The Rust library's own batched lookup of the same filter and keys: the floor.
    f = bloomkit.BloomFilter(n, p)
    f.add_many(members)
    t_rust, present = f._rust_contains_batch(members)
    assert present == n
    rows.append(("Rust BloomFilter::contains_batch", n, float("nan"), t_rust * 1e9 / n, float("nan"),
                 f.nbytes * 8 / n, float("nan"), "the same filter and keys, timed in Rust"))
    del f

    # --- the pure-Python packages, and bloomkit's other variants against pyprobables' ------
    few, few_absent = members[:small], absent[:small]
    small_ones = [
        one_by_one("bloomkit BloomFilter", lambda m: bloomkit.BloomFilter(m, p), lambda f: f.nbytes * 8),
        one_by_one("bloomkit CountingBloomFilter", lambda m: bloomkit.CountingBloomFilter(m, p), lambda f: f.nbytes * 8),
        one_by_one("bloomkit ScalableBloomFilter", lambda m: bloomkit.ScalableBloomFilter(m // 10, p), lambda f: f.nbytes * 8),
        one_by_one("bloomkit QuotientFilter", lambda m: bloomkit.QuotientFilter(m, p), lambda f: f.nbytes * 8),
        one_by_one("bloomkit ExpandableFilter", lambda m: bloomkit.ExpandableFilter(m // 10, p), lambda f: f.nbytes * 8),
        one_by_one("bloomkit WindowFilter", lambda m: bloomkit.WindowFilter(m, p), lambda f: f.nbytes * 8),
    ]
    try:
        import probables
    except ImportError:
        print("pyprobables is not installed: skipped")
    else:
        small_ones += [
            one_by_one("pyprobables BloomFilter",
                       lambda m: probables.BloomFilter(est_elements=m, false_positive_rate=p),
                       lambda f: f.number_bits),
            one_by_one("pyprobables CountingBloomFilter",
                       lambda m: probables.CountingBloomFilter(est_elements=m, false_positive_rate=p),
                       lambda f: f.number_bits * 32),
            one_by_one("pyprobables ExpandingBloomFilter",
                       lambda m: probables.ExpandingBloomFilter(est_elements=m // 10, false_positive_rate=p),
                       lambda f: sum(x.number_bits for x in f._blooms)),
            one_by_one("pyprobables QuotientFilter",
                       lambda m: probables.QuotientFilter(quotient=max(1, (2 * m - 1).bit_length()), auto_expand=True),
                       lambda f: f.size * (f.bits_per_elm + 3)),
            one_by_one("pyprobables RotatingBloomFilter",
                       lambda m: probables.RotatingBloomFilter(est_elements=m, false_positive_rate=p, max_queue_size=2),
                       lambda f: sum(x.number_bits for x in f._blooms)),
        ]
    try:
        import pybloom_live
    except ImportError:
        print("pybloom-live is not installed: skipped")
    else:
        small_ones.append(one_by_one("pybloom-live BloomFilter",
                                     lambda m: pybloom_live.BloomFilter(capacity=m, error_rate=p),
                                     lambda f: f.num_bits))
    run_rounds(small_ones, few, few_absent, 1)
    rows += [c.row(small) for c in small_ones]

    # --- NumPy batches against the Rust library's own contains_batch ---------------------
    try:
        import numpy as np
    except ImportError:
        print("numpy is not installed: the NumPy rows are skipped")
    else:
        keys = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        g = bloomkit.BloomFilter(n, p, key=int)
        g.add_many(keys)
        ratios = []
        for _ in range(args.rounds):
            t_np = timed(lambda: g.contains_many(keys))
            t_rust, present = g._rust_contains_batch(keys)
            assert present == n
            ratios.append((t_np / t_rust, t_np, t_rust))
        ratio, t_np, t_rust = median(ratios)
        rows.append(("bloomkit BloomFilter (int keys)", n, float("nan"), t_np * 1e9 / n, float("nan"),
                     g.nbytes * 8 / n, float("nan"),
                     f"contains_many(uint64 array); Rust contains_batch {t_rust * 1e9 / n:.1f} ns: {ratio:.2f}x"))

    # --- batches across threads, and the worker thread of a batch on and off -------------
    import threading

    from bloomkit import _native

    m = min(n, 2_000_000)
    some = members[:m]
    h = bloomkit.BloomFilter(m, p)
    h.add_many(some)

    def across(threads):
        parts = [some[i::threads] for i in range(threads)]
        ts = [threading.Thread(target=h.contains_many, args=(part,)) for part in parts]
        start = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return (time.perf_counter() - start) * 1e9 / m

    for pipelined in (False, True):
        _native._pipeline(pipelined)
        for threads in (1, 2):
            ns = median([across(threads) for _ in range(args.rounds)])
            rows.append(("bloomkit BloomFilter", m, float("nan"), ns, float("nan"), h.nbytes * 8 / m,
                         float("nan"), f"contains_many split over {threads} thread(s), worker thread {'on' if pipelined else 'off'}"))
    _native._pipeline(True)

    print(f"\n{'structure':34} {'keys':>10} {'add ns':>8} {'hit ns':>8} {'miss ns':>8} {'bits/key':>9} {'rate':>8}  how")
    for name, count, a, h, m, bits, rate, note in rows:
        print(f"{name:34} {count:>10} {a:>8.1f} {h:>8.1f} {m:>8.1f} {bits:>9.2f} {rate:>8.4f}  {note}")


if __name__ == "__main__":
    main()
