"""The Python API of every class: membership, batches, bytes, files, pickling, copies,
equality, set operations, removal, sizes."""

from __future__ import annotations

import copy
import pickle

import pytest

import bloomkit
from conftest import DYNAMIC, STATIC, VARIANTS, filled, ids, keys_of


def each_key(variants):
    return [pytest.param(v, k, id=f"{v.name}-{k.__name__}") for v in variants for k in v.key_types]


@pytest.mark.parametrize("v,key", each_key(VARIANTS))
def test_members_answer_and_bytes_round_trip(v, key, tmp_path):
    keys = keys_of(key, 500)
    f = filled(v, key, keys)
    assert all(k in f for k in keys)
    assert f.contains_many(keys) == [True] * len(keys)
    assert f.key is key
    data = bytes(f)
    g = type(f).from_bytes(data, key=key)
    assert g == f and bytes(g) == data
    assert all(k in g for k in keys)
    path = tmp_path / "f.bloom"
    f.save(path)
    assert path.read_bytes() == data
    assert type(f).load(path, key=key) == f
    assert bloomkit.load(path, key=key) == f
    assert bloomkit.loads(data, key=key) == f
    h = pickle.loads(pickle.dumps(f))
    assert type(h) is type(f) and h == f and h.key is key
    assert copy.copy(f) == f and copy.deepcopy(f) == f and f.copy() == f
    assert repr(f).startswith(f"{v.name}(key={key.__name__}")
    assert f.nbytes > 0 and f.__sizeof__() > f.nbytes


@pytest.mark.parametrize("v,key", each_key(VARIANTS))
def test_absent_keys_mostly_absent(v, key):
    f = filled(v, key, keys_of(key, 1000))
    absent = keys_of(key, 10_000, start=1 << 30)
    hits = sum(f.contains_many(absent))
    assert hits < 400, f"{hits} of 10,000 absent keys answered present"


@pytest.mark.parametrize("v,key", each_key(DYNAMIC))
def test_add_update_and_clear(v, key):
    f = v.make(100, key)
    keys = keys_of(key, 50)
    assert f.add(keys[0]) is True
    f.update(keys[1:10], keys[10:20])
    assert f.add_many(keys[20:]) >= 1
    assert all(k in f for k in keys)
    if not isinstance(f, bloomkit.WindowFilter):
        assert f.approx_len() == pytest.approx(50, rel=0.3)
    f.clear()
    assert f.contains_many(keys).count(True) < 5


@pytest.mark.parametrize("v,key", each_key([v for v in DYNAMIC if v.removes]))
def test_remove_and_discard(v, key):
    f = v.make(100, key)
    keys = keys_of(key, 20)
    f.add_many(keys)
    f.remove(keys[0])
    f.discard(keys[1])
    f.discard(keys[1])  # not there: no error
    assert all(k in f for k in keys[2:])
    with pytest.raises(bloomkit.NotPresentError) as e:
        f.remove(keys[1] if key is not int else 999_999)
    assert isinstance(e.value, KeyError) and isinstance(e.value, bloomkit.Error)
    assert "not in the filter" in str(e.value)


@pytest.mark.parametrize("v,key", each_key([v for v in VARIANTS if v.exact_len]))
def test_len_is_exact(v, key):
    keys = keys_of(key, 300)
    f = filled(v, key, keys)
    assert len(f) == 300


@pytest.mark.parametrize("v,key", each_key([v for v in DYNAMIC if v.union]))
def test_union(v, key):
    a, b = v.make(1000, key), v.make(1000, key)
    ka, kb = keys_of(key, 100), keys_of(key, 100, start=5000)
    a.add_many(ka)
    b.add_many(kb)
    c = a | b
    assert all(k in c for k in ka + kb)
    assert c == a.union(b)
    a |= b
    assert all(k in a for k in kb)


@pytest.mark.parametrize("v,key", each_key([v for v in DYNAMIC if v.intersection]))
def test_intersection(v, key):
    a, b = v.make(1000, key), v.make(1000, key)
    both = keys_of(key, 50)
    a.add_many(both + keys_of(key, 50, start=5000))
    b.add_many(both + keys_of(key, 50, start=9000))
    c = a & b
    assert all(k in c for k in both)
    a &= b
    assert a == c


@pytest.mark.parametrize("v", [v for v in DYNAMIC if v.union and str in v.key_types], ids=ids([v for v in DYNAMIC if v.union and str in v.key_types]))
def test_union_refuses_another_key_type(v):
    a, b = v.make(1000, str), v.make(1000, bytes)
    with pytest.raises(bloomkit.IncompatibleError, match="key types differ"):
        a | b
    with pytest.raises(TypeError):
        a | 5


def test_union_refuses_another_size():
    a = bloomkit.BloomFilter(1000, 0.01)
    b = bloomkit.BloomFilter(100_000, 0.01)
    with pytest.raises(bloomkit.IncompatibleError) as e:
        a |= b
    assert isinstance(e.value, ValueError)


def test_equality_and_hashing():
    a = bloomkit.BloomFilter(100, 0.01, seed=1)
    b = bloomkit.BloomFilter(100, 0.01, seed=1)
    assert a == b
    a.add("x")
    assert a != b
    b.add("x")
    assert a == b
    assert a != bloomkit.BloomFilter(100, 0.01, seed=2)
    assert a != bloomkit.BlockedBloomFilter(100, 0.01, seed=1)
    assert a != "x"
    with pytest.raises(TypeError):
        hash(a)  # mutable: not hashable, as a set is not


def test_seeds_place_keys_apart():
    a = bloomkit.BloomFilter(1000, 0.01, seed=1)
    b = bloomkit.BloomFilter(1000, 0.01, seed=2)
    a.add("k")
    b.add("k")
    assert bytes(a) != bytes(b)


def test_counts():
    c = bloomkit.CountingBloomFilter(100, 0.01)
    q = bloomkit.QuotientFilter(100, 0.01)
    for f in (c, q):
        for _ in range(3):
            f.add("x")
        assert f.count("x") >= 3
        assert f.count("never") < 3
    assert len(q) == 3


def test_bitmap():
    b = bloomkit.Bitmap(10, 20)
    assert b.key is int
    b.update([10, 15, 20])
    assert len(b) == 3 and 15 in b and 16 not in b
    with pytest.raises(bloomkit.OutOfRangeError) as e:
        b.add(21)
    assert isinstance(e.value, ValueError)
    with pytest.raises(bloomkit.KeyTypeError):
        b.add("15")
    with pytest.raises(bloomkit.KeyTypeError):
        bloomkit.Bitmap.from_bytes(bytes(b), key=str)
    assert bloomkit.loads(bytes(b)) == b  # a bitmap's keys are ints without saying so


def test_window_forgets():
    w = bloomkit.WindowFilter(1000, 0.01, key=int)
    w.add_many(range(10_000))
    assert all(k in w for k in range(9_000, 10_000))  # the last window: all present
    old = sum(w.contains_many(range(0, 5000)))
    assert old < 150, f"{old} of 5,000 keys older than 5 windows still answered"
    assert w.window == 1000 and 1000 < w.forgotten_after <= 1100


def test_window_over_time():
    w = bloomkit.WindowFilter(100, 0.01, over_time=60, key=str)
    w.add_at("a", 0)
    assert w.contains_at("a", 59)
    w.add_at("b", 200)
    assert not w.contains_at("a", 200)
    assert w.contains_at("b", 200)


@pytest.mark.parametrize("v", STATIC, ids=ids(STATIC))
def test_static_filters_take_no_keys_later(v):
    f = v.build(["a", "b"], str)
    assert not hasattr(f, "add") and not hasattr(f, "remove")
    assert len(f) == 2


def test_batches_from_bytes_lines():
    f = bloomkit.BloomFilter(100, 0.01)
    assert f.add_many(b"one\r\n\ntwo\nthree") == 3
    assert f.contains_many(b"one\ntwo\nthree\nfour") == [True, True, True, False]
    assert "one" in f and "" not in f
    raw = bloomkit.BloomFilter(100, 0.01, key=bytes)
    raw.add_many(b"\xff\xfe\nok\n")
    assert b"\xff\xfe" in raw and b"ok" in raw
    with pytest.raises(bloomkit.KeyTypeError, match="not UTF-8"):
        f.add_many(b"\xff\xfe\n")
    with pytest.raises(bloomkit.KeyTypeError):
        bloomkit.BloomFilter(100, 0.01, key=int).add_many(b"1\n2\n")


def test_batches_from_any_iterable():
    f = bloomkit.BloomFilter(10_000, 0.01, key=int)
    assert 4950 <= f.add_many(x * 3 for x in range(5000)) <= 5000
    assert f.contains_many(iter([0, 3, 6])) == [True, True, True]
    assert f.contains_many([]) == []


def test_numpy_batches():
    np = pytest.importorskip("numpy")
    f = bloomkit.BloomFilter(200_000, 0.01, key=int)
    keys = np.arange(0, 300_000, 3, dtype=np.uint64)
    # Keys that were certainly new: all but the few that met a false positive on the way in.
    assert 0.99 * len(keys) <= f.add_many(keys) <= len(keys)
    got = f.contains_many(keys)
    assert isinstance(got, np.ndarray) and got.dtype == np.bool_ and got.all()
    got[0] = False  # a writable array of the caller's own
    absent = f.contains_many(np.arange(1, 300_000, 3, dtype=np.uint64))
    assert absent.sum() < 0.02 * len(absent)
    big = np.array([2**64 - 1, 0], dtype=np.uint64)
    f.add_many(big)
    assert 2**64 - 1 in f
    # Smaller unsigned widths are widened; signed arrays are refused (negatives are not keys).
    assert f.contains_many(np.array([0, 3], dtype=np.uint32)).all()
    with pytest.raises(bloomkit.KeyTypeError, match="unsigned"):
        f.contains_many(np.array([1, 2], dtype=np.int64))
    with pytest.raises(bloomkit.KeyTypeError, match="one dimension"):
        f.contains_many(np.zeros((2, 2), dtype=np.uint64))
    with pytest.raises(bloomkit.KeyTypeError):
        bloomkit.BloomFilter(10, 0.01, key=str).contains_many(np.arange(3, dtype=np.uint64))
    # Strided and non-native-endian arrays read the same keys.
    assert f.contains_many(keys[::2]).all()
    assert f.contains_many(keys.astype(">u8")).all()


def test_key_argument_forms():
    assert bloomkit.BloomFilter(10, key="bytes").key is bytes
    assert bloomkit.BloomFilter(10).key is str
    with pytest.raises(TypeError, match="key must be str, bytes or int"):
        bloomkit.BloomFilter(10, key=float)
    with pytest.raises(TypeError, match="key must be str, bytes or int"):
        bloomkit.BloomFilter(10, key="float")


def test_help_reads_well():
    for cls in bloomkit.FILTERS:
        assert cls.__doc__ and len(cls.__doc__) > 40, cls
        for name in ("contains_many", "from_bytes", "save"):
            assert getattr(cls, name).__doc__, (cls, name)


def test_the_stubs_name_every_method():
    # python/bloomkit/_native.pyi is written by hand: every public method and property a
    # class has at run time must be in it (for its class or a base the stub gives it).
    import ast
    from pathlib import Path

    stub = ast.parse((Path(bloomkit.__file__).parent / "_native.pyi").read_text())
    classes = {n.name: n for n in stub.body if isinstance(n, ast.ClassDef)}

    def names(cls_name):
        node = classes[cls_name]
        own = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
        for base in node.bases:
            own |= names(base.id)
        return own

    for cls in bloomkit.FILTERS + (bloomkit.MappedFilter,):
        runtime = {n for n in dir(cls) if not n.startswith("_")}
        # PyO3 gives every class the number slots (answering NotImplemented: a TypeError),
        # so `|` and `&` are there exactly when `union` and `intersection` are.
        runtime |= {"__len__"} if hasattr(cls, "__len__") else set()
        runtime |= {"__or__", "__ior__"} if hasattr(cls, "union") else set()
        runtime |= {"__and__", "__iand__"} if hasattr(cls, "intersection") else set()
        missing = runtime - names(cls.__name__)
        assert not missing, f"{cls.__name__}: {sorted(missing)} missing from the stub"
        extra = {n for n in names(cls.__name__) if not n.startswith("_")} - {n for n in dir(cls)}
        assert not extra, f"{cls.__name__}: the stub names {sorted(extra)}, which it lacks"


@pytest.mark.parametrize("v", [v for v in VARIANTS if not v.union], ids=ids([v for v in VARIANTS if not v.union]))
def test_no_operators_where_the_variant_does_not_combine(v):
    f = filled(v, v.key_types[0], keys_of(v.key_types[0], 3))
    with pytest.raises(TypeError):
        f | f
    with pytest.raises(TypeError):
        f & f


@pytest.mark.parametrize("n", [4095, 4096, 4097, 8193])
def test_batches_across_chunk_boundaries(n):
    keys = [f"key-{i}" for i in range(n)]
    f = bloomkit.BloomFilter(n, 0.01)
    assert f.add_many(keys) >= 0.98 * n
    assert f.contains_many(keys) == [True] * n
    g = bloomkit.BloomFilter(n, 0.01)
    g.add_many("\r\n".join(keys).encode())  # lines, \r\n endings across the boundaries
    assert g == f
    assert g.contains_many(("\n".join(keys) + "\n").encode()) == [True] * n


@pytest.mark.parametrize("n", [65535, 65536, 65537, 140000])
def test_numpy_across_slice_boundaries(n):
    np = pytest.importorskip("numpy")
    keys = np.arange(n, dtype=np.uint64) * np.uint64(7)
    f = bloomkit.BloomFilter(n, 0.01, key=int)
    f.add_many(keys)
    got = f.contains_many(keys)
    assert len(got) == n and got.all()
    g = bloomkit.BloomFilter(n, 0.01, key=int)
    g.add_many(int(k) for k in keys)
    assert g == f


def test_static_filters_from_numpy_arrays():
    np = pytest.importorskip("numpy")
    keys = np.arange(10_000, dtype=np.uint64)
    for cls in (bloomkit.BinaryFuse8, bloomkit.RibbonFilter):
        f = cls(keys, key=int)
        assert len(f) == 10_000 and f.contains_many(keys).all()
        assert f == cls(list(range(10_000)), key=int)
