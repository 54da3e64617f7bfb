"""No false negatives after any sequence of operations, checked against Python's own
containers (a multiset of what was added and not removed; for the window filter, the last
`window` adds), every variant and key type. More cases: BLOOMKIT_PY_CASES=2000."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bloomkit
from conftest import DYNAMIC, STATIC, ids

CASES = int(os.environ.get("BLOOMKIT_PY_CASES", "60"))
SETTINGS = settings(
    max_examples=CASES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

KEYS = {
    str: st.text(max_size=12),
    bytes: st.binary(max_size=12),
    int: st.integers(min_value=0, max_value=2**64 - 1),
}
BITMAP_KEYS = st.integers(min_value=0, max_value=2**20)

ops = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 2**16)),
    st.tuples(st.just("add_many"), st.lists(st.integers(0, 2**16), max_size=40)),
    st.tuples(st.just("remove"), st.integers(0, 2**16)),
    st.tuples(st.just("union"), st.lists(st.integers(0, 2**16), max_size=20)),
    st.tuples(st.just("reload"), st.just(0)),
    st.tuples(st.just("clear"), st.just(0)),
)


def params():
    return [pytest.param(v, k, id=f"{v.name}-{k.__name__}") for v in DYNAMIC for k in v.key_types]


@pytest.mark.parametrize("v,key", params())
@SETTINGS
@given(data=st.data())
def test_no_false_negative_after_any_operations(v, key, data):
    strategy = BITMAP_KEYS if v.cls is bloomkit.Bitmap else KEYS[key]
    pool = data.draw(st.lists(strategy, min_size=1, max_size=60, unique=True), label="pool")
    program = data.draw(st.lists(ops, max_size=30), label="program")
    window = isinstance(v.make(1, key), bloomkit.WindowFilter)
    size = 64
    f = v.make(size, key)
    model: Counter = Counter()
    recent: list = []  # the window filter's model: every add, in order

    def pick(i):
        return pool[i % len(pool)]

    for op, arg in program:
        if op == "add":
            k = pick(arg)
            f.add(k)
            model[k] += 1
            recent.append(k)
        elif op == "add_many":
            ks = [pick(i) for i in arg]
            f.add_many(ks)
            model.update(ks)
            recent.extend(ks)
        elif op == "remove" and v.removes:
            k = pick(arg)
            if model[k] > 0:
                f.remove(k)
                model[k] -= 1
            else:
                f.discard(k) if v.cls is bloomkit.Bitmap else None
        elif op == "union" and v.union:
            other = v.make(size, key)
            ks = [pick(i) for i in arg]
            other.add_many(ks)
            f |= other
            model.update(ks)
        elif op == "reload":
            f = type(f).from_bytes(bytes(f), key=key)
        elif op == "clear":
            f.clear()
            model.clear()
            recent.clear()
        if v.cls is bloomkit.Bitmap:
            # A set, not a multiset: one remove takes the key out.
            model = Counter({k: 1 for k, c in model.items() if c > 0})
        if window:
            must = set(recent[-size:])
        else:
            must = {k for k, c in model.items() if c > 0}
        missing = [k for k in must if k not in f]
        assert not missing, f"false negatives after {op}: {missing[:5]}"
        if must:
            assert all(f.contains_many(list(must)))


@pytest.mark.parametrize("v", STATIC, ids=ids(STATIC))
@pytest.mark.parametrize("key", [str, bytes, int])
@SETTINGS
@given(data=st.data())
def test_static_filters_hold_every_key(v, key, data):
    keys = data.draw(st.lists(KEYS[key], max_size=300), label="keys")
    f = v.build(keys, key)
    assert all(k in f for k in keys)
    g = type(f).from_bytes(bytes(f), key=key)
    assert all(g.contains_many(keys))
