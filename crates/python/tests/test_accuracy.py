"""Measured false-positive rates: keys never added, compared with each filter's target
within a statistical tolerance (the binomial's standard deviation, 4 sigma, plus 10% for the
sizing's rounding)."""

from __future__ import annotations

import math

import pytest

import bloomkit

N = 20_000
PROBES = 200_000


def bound(p: float) -> float:
    return 1.10 * p + 4 * math.sqrt(p * (1 - p) / PROBES)


CASES = [
    (lambda key: bloomkit.BloomFilter(N, 0.01, key=key), 0.01),
    (lambda key: bloomkit.BlockedBloomFilter(N, 0.01, key=key), 0.01),
    (lambda key: bloomkit.SimdBlockFilter(N, 0.01, key=key), 0.01),
    (lambda key: bloomkit.CountingBloomFilter(N, 0.01, key=key), 0.01),
    (lambda key: bloomkit.ScalableBloomFilter(1000, 0.01, key=key), 0.01),
    (lambda key: bloomkit.QuotientFilter(N, 0.01, key=key), 0.01),
    (lambda key: bloomkit.ExpandableFilter(1000, 0.01, key=key), 0.01),
    (lambda key: bloomkit.WindowFilter(N, 0.01, key=key), 0.01),
]


@pytest.mark.parametrize("make,target", CASES, ids=lambda c: getattr(c, "__name__", str(c)))
@pytest.mark.parametrize("key", [str, int])
def test_rate_at_most_target(make, target, key):
    f = make(key)
    if key is int:
        members, probes = range(N), range(1 << 40, (1 << 40) + PROBES)
    else:
        members = [f"member-{i}" for i in range(N)]
        probes = [f"probe-{i}" for i in range(PROBES)]
    f.add_many(members)
    rate = sum(f.contains_many(probes)) / PROBES
    assert rate <= bound(target), f"{type(f).__name__}: measured {rate:.5f}, target {target}"


@pytest.mark.parametrize("cls,target", [(bloomkit.BinaryFuse8, 2**-8), (bloomkit.RibbonFilter, 0.01)])
def test_static_rates(cls, target):
    f = cls([f"member-{i}" for i in range(N)])
    rate = sum(f.contains_many([f"probe-{i}" for i in range(PROBES)])) / PROBES
    assert rate <= bound(target), f"{cls.__name__}: measured {rate:.5f}, target {target}"
