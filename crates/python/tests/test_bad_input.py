"""Bad input gets a typed exception with the Rust library's message: never a crash, never
a wrong answer."""

from __future__ import annotations

import math
import sys

import pytest

import bloomkit
from conftest import DYNAMIC, VARIANTS, filled, ids, keys_of

SIZED = [v for v in DYNAMIC if v.cls is not bloomkit.Bitmap]


@pytest.mark.parametrize("v", SIZED, ids=ids(SIZED))
@pytest.mark.parametrize("fpr", [0.0, 1.0, -0.5, 1.5, math.nan, math.inf, -math.inf])
def test_rates_outside_the_open_interval(v, fpr):
    with pytest.raises(bloomkit.ParameterError) as e:
        v.cls(1000, fpr)
    assert isinstance(e.value, ValueError) and "rate" in str(e.value)


@pytest.mark.parametrize("v", SIZED, ids=ids(SIZED))
def test_zero_items(v):
    with pytest.raises(bloomkit.ParameterError):
        v.cls(0, 0.01)


@pytest.mark.parametrize("v", SIZED, ids=ids(SIZED))
def test_extreme_sizes_are_refused_not_allocated(v):
    # 2**64 - 1 items, the smallest positive rate, a limit of one byte: each refused with
    # an error (a parameter, a size, an allocation), never a crash or a 2**60-byte attempt.
    for args, kw in [
        ((2**64 - 1, 0.01), {}),
        ((1000, sys.float_info.min * sys.float_info.epsilon), {}),
        ((1000, 0.01), {"max_bytes": 1}),
    ]:
        try:
            f = v.cls(*args, **kw)
        except bloomkit.Error as e:
            assert isinstance(e, (ValueError, OverflowError, MemoryError)), type(e)
            assert str(e)
        else:
            # Growing variants start small and may accept a huge expected count.
            assert f.nbytes < 1 << 30


@pytest.mark.parametrize("v", SIZED, ids=ids(SIZED))
def test_negative_and_oversized_integers_as_parameters(v):
    with pytest.raises(OverflowError):
        v.cls(-1, 0.01)
    with pytest.raises(OverflowError):
        v.cls(2**64, 0.01)
    with pytest.raises(TypeError):
        v.cls("1000", 0.01)


def test_window_parameters():
    with pytest.raises(bloomkit.ParameterError):
        bloomkit.WindowFilter(100, 0.01, over_time=0)
    for slack in (0.0, -1.0, math.nan):
        with pytest.raises(bloomkit.ParameterError):
            bloomkit.WindowFilter(100, 0.01, slack=slack)


def test_bitmap_parameters():
    with pytest.raises(bloomkit.ParameterError):
        bloomkit.Bitmap(10, 5)
    with pytest.raises(OverflowError):
        bloomkit.Bitmap(-1, 5)


def test_split_block_has_no_seed():
    with pytest.raises(bloomkit.ParameterError, match="seed 0 only"):
        bloomkit.SplitBlockFilter(100, 0.01, seed=3)


@pytest.mark.parametrize("key,bad", [
    (str, b"bytes"), (str, 5), (str, None), (bytes, "text"), (bytes, bytearray(b"x")),
    (int, "5"), (int, 5.0), (int, True), (int, None),
])
def test_wrong_key_types_name_the_type(key, bad):
    f = bloomkit.BloomFilter(100, 0.01, key=key)
    for call in (f.add, f.__contains__, lambda k: f.add_many([k]), lambda k: f.contains_many([k])):
        with pytest.raises(bloomkit.KeyTypeError) as e:
            call(bad)
        assert isinstance(e.value, TypeError)
        assert type(bad).__name__ in str(e.value) and key.__name__ in str(e.value)


@pytest.mark.parametrize("bad", [-1, 2**64, -(2**70), 2**100])
def test_ints_outside_u64(bad):
    f = bloomkit.BloomFilter(100, 0.01, key=int)
    with pytest.raises(bloomkit.KeyRangeError) as e:
        f.add(bad)
    assert isinstance(e.value, OverflowError) and str(bad) in str(e.value)
    with pytest.raises(bloomkit.KeyRangeError):
        f.add_many([1, 2, bad])
    with pytest.raises(bloomkit.KeyRangeError):
        bad in f


def test_a_refused_key_stops_its_batch():
    # Keys go in 4,096 at a time: a bad key's own batch is not added, the ones before are.
    f = bloomkit.BloomFilter(100_000, 0.01, key=int)
    empty = bytes(f)
    with pytest.raises(bloomkit.KeyRangeError):
        f.add_many([1, 2, -3])
    assert bytes(f) == empty
    with pytest.raises(bloomkit.KeyRangeError):
        f.add_many(list(range(10, 5000)) + [-1])
    assert all(f.contains_many(range(10, 10 + 4096)))
    assert sum(f.contains_many(range(10 + 4096, 5000))) < 50


def test_a_str_with_no_utf8_form():
    f = bloomkit.BloomFilter(100, 0.01)
    for call in (f.add, f.__contains__, lambda k: f.add_many([k])):
        with pytest.raises(bloomkit.KeyTypeError, match="UTF-8"):
            call("\ud800")


def test_not_iterable():
    with pytest.raises(TypeError):
        bloomkit.BloomFilter(100, 0.01).add_many(5)


@pytest.mark.parametrize("v", VARIANTS, ids=ids(VARIANTS))
def test_corrupt_and_truncated_bytes(v):
    key = v.key_types[0]
    f = filled(v, key, keys_of(key, 40))
    data = bytes(f)
    for n in sorted({0, 1, 7, 8, 16, 31, 32, 47, 48, 63, 64, len(data) // 2, len(data) - 1}):
        if n >= len(data):
            continue
        with pytest.raises(bloomkit.DecodeError) as e:
            type(f).from_bytes(data[:n], key=key)
        assert isinstance(e.value, ValueError) and str(e.value)
    with pytest.raises(bloomkit.DecodeError):
        type(f).from_bytes(data + b"\0", key=key)
    for i in range(0, len(data), max(1, len(data) // 64)):
        flipped = bytearray(data)
        flipped[i] ^= 0x10
        with pytest.raises(bloomkit.DecodeError):
            type(f).from_bytes(bytes(flipped), key=key)


def test_bytes_of_another_variant():
    data = bytes(bloomkit.BloomFilter(100, 0.01))
    with pytest.raises(bloomkit.DecodeError):
        bloomkit.BlockedBloomFilter.from_bytes(data)
    assert isinstance(bloomkit.loads(data), bloomkit.BloomFilter)
    with pytest.raises(bloomkit.DecodeError):
        bloomkit.loads(b"not a filter at all")


def test_files(tmp_path):
    f = bloomkit.BloomFilter(100, 0.01)
    with pytest.raises(bloomkit.FileError) as e:
        bloomkit.BloomFilter.load(tmp_path / "missing.bloom")
    assert isinstance(e.value, OSError) and "missing.bloom" in str(e.value)
    with pytest.raises(bloomkit.FileError):
        f.save(tmp_path / "no" / "such" / "dir" / "f.bloom")
    with pytest.raises(bloomkit.FileError):
        f.save(tmp_path)  # a directory
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no temporary file left
    (tmp_path / "junk").write_bytes(b"\0" * 100)
    with pytest.raises(bloomkit.DecodeError):
        bloomkit.load(tmp_path / "junk")


def test_every_error_is_a_bloomkit_error():
    for name in bloomkit._errors.__all__:
        cls = getattr(bloomkit, name)
        assert issubclass(cls, bloomkit.Error)


def test_a_key_whose_repr_uses_the_filter_does_not_deadlock():
    # Reading a bad key builds its message with the key's repr (Python code): no filter
    # lock may be held meanwhile.
    import threading

    w = bloomkit.WindowFilter(100, 0.01, key=int)

    class Sneaky(int):
        def __repr__(self):
            w.add(5)
            return "Sneaky"

    errors = []

    def run():
        for call in (lambda: w.add_at(Sneaky(-1), 3), lambda: w.contains_at(Sneaky(-1), 3),
                     lambda: w.add(Sneaky(-1)), lambda: Sneaky(-1) in w):
            try:
                call()
            except bloomkit.KeyRangeError as e:
                errors.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout=20)
    assert not t.is_alive(), "deadlocked"
    assert len(errors) == 4 and 5 in w


def test_errors_from_the_pipelined_half_of_a_batch():
    # From the second chunk on, the Rust half of a batch runs on a worker thread: its
    # errors, and the reading half's, reach the caller as they would one at a time.
    q = bloomkit.QuotientFilter(10_000, 0.01, key=int)  # full after some 16,000: the 4th chunk
    with pytest.raises(bloomkit.CapacityError):
        q.add_many(range(1_000_000))
    assert all(q.contains_many(range(4096)))  # the chunks before the full one stayed

    def keys():
        yield from range(20_000)
        raise RuntimeError("the source failed")

    f = bloomkit.BloomFilter(100_000, 0.01, key=int)
    with pytest.raises(RuntimeError, match="the source failed"):
        f.add_many(keys())
    assert all(f.contains_many(range(16_384)))


def test_a_source_that_asks_the_filter_meanwhile():
    # A generator that looks the filter up while add_many runs: the worker holds the lock
    # only for a chunk at a time and never needs the GIL, so this ends.
    f = bloomkit.BloomFilter(100_000, 0.01, key=int)
    f.add_many(range(0, 50_000, 2))
    seen = []

    def keys():
        for k in range(50_000):
            seen.append(k in f)
            yield k

    assert f.add_many(keys()) > 0
    assert all(f.contains_many(range(50_000))) and len(seen) == 50_000
