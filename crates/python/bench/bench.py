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
  filter (timed in Rust, in this process).

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


def row(rows, name, n, add, hit, miss, bits, rate, note=""):
    rows.append((name, n, add * 1e9 / n, hit * 1e9 / n, miss * 1e9 / n, bits, rate, note))


def one_at_a_time(make, bits_of, name, members, absent, rows, note=""):
    f = make(len(members))
    add = f.add
    t_add = timed(lambda: [add(k) for k in members])
    t_hit = timed(lambda: [k in f for k in members])
    hits = 0

    def probe():
        nonlocal hits
        hits = sum(1 for k in absent if k in f)

    t_miss = timed(probe)
    row(rows, name, len(members), t_add, t_hit, t_miss * len(members) / len(absent),
        bits_of(f) / len(members), hits / len(absent), note)
    return f


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000, help="keys for bloomkit and rbloom")
    ap.add_argument("--small", type=int, default=100_000, help="keys for the pure-Python packages")
    ap.add_argument("--fpr", type=float, default=0.01)
    args = ap.parse_args()
    n, small, p = args.n, args.small, args.fpr

    members = [f"https://example.com/item/{i}" for i in range(n)]
    absent = [f"https://example.com/other/{i}" for i in range(min(n, 1_000_000))]
    rows: list = []

    # --- one Bloom filter, str keys -------------------------------------------------
    one_at_a_time(lambda m: bloomkit.BloomFilter(m, p), lambda f: f.nbytes * 8,
                  "bloomkit BloomFilter", members, absent, rows, "add / in")
    f = bloomkit.BloomFilter(n, p)
    t_add = timed(lambda: f.add_many(members))
    t_hit = timed(lambda: f.contains_many(members))
    hits = 0

    def batch_miss():
        nonlocal hits
        hits = sum(f.contains_many(absent))

    t_miss = timed(batch_miss)
    row(rows, "bloomkit BloomFilter", n, t_add, t_hit, t_miss * n / len(absent),
        f.nbytes * 8 / n, hits / len(absent), "add_many / contains_many")
    s = bloomkit.SimdBlockFilter(n, p)
    t_add = timed(lambda: s.add_many(members))
    t_hit = timed(lambda: s.contains_many(members))
    t_miss = timed(lambda: s.contains_many(absent))
    row(rows, "bloomkit SimdBlockFilter", n, t_add, t_hit, t_miss * n / len(absent),
        s.nbytes * 8 / n, sum(s.contains_many(absent)) / len(absent), "add_many / contains_many")

    try:
        import rbloom
    except ImportError:
        print("rbloom is not installed: skipped")
    else:
        one_at_a_time(lambda m: rbloom.Bloom(m, p), lambda b: b.size_in_bits,
                      "rbloom Bloom", members, absent, rows, "add / in")
        b = rbloom.Bloom(n, p)
        t_add = timed(lambda: b.update(members))
        t_hit = timed(lambda: list(map(b.__contains__, members)))
        t_miss = timed(lambda: list(map(b.__contains__, absent)))
        row(rows, "rbloom Bloom", n, t_add, t_hit, t_miss * n / len(absent), b.size_in_bits / n,
            sum(map(b.__contains__, absent)) / len(absent), "update / map(__contains__)")

    few, few_absent = members[:small], absent[:small]
    try:
        import probables
    except ImportError:
        print("pyprobables is not installed: skipped")
        probables = None
    if probables is not None:
        one_at_a_time(lambda m: probables.BloomFilter(est_elements=m, false_positive_rate=p),
                      lambda f: f.number_bits, "pyprobables BloomFilter", few, few_absent, rows, "add / check")
    try:
        import pybloom_live
    except ImportError:
        print("pybloom-live is not installed: skipped")
    else:
        one_at_a_time(lambda m: pybloom_live.BloomFilter(capacity=m, error_rate=p),
                      lambda f: f.num_bits, "pybloom-live BloomFilter", few, few_absent, rows, "add / in")

    # --- the other variants, against pyprobables' structure of the same kind -------------
    ours = [
        ("bloomkit CountingBloomFilter", lambda m: bloomkit.CountingBloomFilter(m, p), lambda f: f.nbytes * 8),
        ("bloomkit ScalableBloomFilter", lambda m: bloomkit.ScalableBloomFilter(m // 10, p), lambda f: f.nbytes * 8),
        ("bloomkit QuotientFilter", lambda m: bloomkit.QuotientFilter(m, p), lambda f: f.nbytes * 8),
        ("bloomkit ExpandableFilter", lambda m: bloomkit.ExpandableFilter(m // 10, p), lambda f: f.nbytes * 8),
        ("bloomkit WindowFilter", lambda m: bloomkit.WindowFilter(m, p), lambda f: f.nbytes * 8),
    ]
    for name, make, bits in ours:
        one_at_a_time(make, bits, name, few, few_absent, rows, "add / in")
    if probables is not None:
        theirs = [
            ("pyprobables CountingBloomFilter",
             lambda m: probables.CountingBloomFilter(est_elements=m, false_positive_rate=p),
             lambda f: f.number_bits * 32),
            ("pyprobables ExpandingBloomFilter",
             lambda m: probables.ExpandingBloomFilter(est_elements=m // 10, false_positive_rate=p),
             lambda f: sum(x.number_bits for x in f._blooms)),
            ("pyprobables QuotientFilter",
             lambda m: probables.QuotientFilter(quotient=max(1, (2 * m - 1).bit_length()), auto_expand=True),
             lambda f: f.size * (f.bits_per_elm + 3)),
            ("pyprobables RotatingBloomFilter",
             lambda m: probables.RotatingBloomFilter(est_elements=m, false_positive_rate=p, max_queue_size=2),
             lambda f: sum(x.number_bits for x in f._blooms)),
        ]
        for name, make, bits in theirs:
            try:
                one_at_a_time(make, bits, name, few, few_absent, rows, "add / check")
            except Exception as e:  # an API that moved between releases: said, not hidden
                print(f"{name}: {type(e).__name__}: {e}")

    # --- NumPy batches against the Rust library's own contains_batch ---------------------
    try:
        import numpy as np
    except ImportError:
        print("numpy is not installed: the NumPy rows are skipped")
    else:
        keys = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        g = bloomkit.BloomFilter(n, p, key=int)
        g.add_many(keys)
        t_np = timed(lambda: g.contains_many(keys))
        t_rust, present = g._rust_contains_batch(keys)
        assert present == n
        rows.append(("bloomkit BloomFilter (int)", n, float("nan"), t_np * 1e9 / n, float("nan"),
                     g.nbytes * 8 / n, float("nan"), f"contains_many(uint64 array); Rust contains_batch {t_rust * 1e9 / n:.1f} ns, ratio {t_np / t_rust:.2f}"))

    print(f"\n{'structure':34} {'keys':>10} {'add ns':>8} {'hit ns':>8} {'miss ns':>8} {'bits/key':>9} {'rate':>8}  how")
    for name, count, a, h, m, bits, rate, note in rows:
        print(f"{name:34} {count:>10} {a:>8.1f} {h:>8.1f} {m:>8.1f} {bits:>9.2f} {rate:>8.4f}  {note}")


if __name__ == "__main__":
    main()
