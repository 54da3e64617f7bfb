"""`bloomkit.open`: files answered in place through the Rust library's zero-copy views."""

from __future__ import annotations

import threading

import pytest

import bloomkit
from conftest import VARIANTS, filled, keys_of, run


def each_key(variants):
    return [pytest.param(v, k, id=f"{v.name}-{k.__name__}") for v in variants for k in v.key_types]


@pytest.mark.parametrize("v,key", each_key(VARIANTS))
@pytest.mark.parametrize("verify", [True, False])
def test_a_mapped_file_answers_as_the_filter(v, key, verify, tmp_path):
    keys = keys_of(key, 2000)
    f = filled(v, key, keys)
    path = tmp_path / "f.bloom"
    f.save(path)
    m = bloomkit.open(path, key=key, verify=verify)
    assert isinstance(m, bloomkit.MappedFilter)
    assert m.key is key and m.nbytes == path.stat().st_size
    assert all(k in m for k in keys)
    probes = keys + keys_of(key, 5000, start=1 << 30)
    assert m.contains_many(probes) == f.contains_many(probes)
    assert m.fpr == f.fpr
    assert m.approx_len() == pytest.approx(f.approx_len())
    assert type(bloomkit.loads(bytes(f), key=key)) is v.cls
    names = {"BloomFilter": "classic", "BlockedBloomFilter": "blocked", "SimdBlockFilter": "simd-block",
             "SplitBlockFilter": "split-block", "CountingBloomFilter": "counting",
             "ScalableBloomFilter": "scalable", "QuotientFilter": "quotient",
             "ExpandableFilter": "expandable", "BinaryFuse8": "binary-fuse8",
             "BinaryFuse16": "binary-fuse16", "BinaryFuse32": "binary-fuse32",
             "RibbonFilter": "ribbon", "Bitmap": "bitmap", "WindowFilter": "window"}
    assert m.variant == names[v.name]
    assert "MappedFilter(" in repr(m)


def test_numpy_batches_through_a_map(tmp_path):
    np = pytest.importorskip("numpy")
    f = bloomkit.BlockedBloomFilter(100_000, 0.01, key=int)
    keys = np.arange(100_000, dtype=np.uint64)
    f.add_many(keys)
    f.save(tmp_path / "f")
    m = bloomkit.open(tmp_path / "f", key=int)
    got = m.contains_many(keys)
    assert got.dtype == np.bool_ and got.all()


def test_a_corrupt_payload_is_caught_when_verified(tmp_path):
    f = bloomkit.BloomFilter(10_000, 0.01)
    f.add_many(keys_of(str, 1000))
    data = bytearray(bytes(f))
    data[-20] ^= 0xFF  # a payload byte
    (tmp_path / "bad").write_bytes(bytes(data))
    with pytest.raises(bloomkit.DecodeError):
        bloomkit.open(tmp_path / "bad")
    # Unverified, the payload is taken as it is (the header is still checked): an answer,
    # not a crash.
    m = bloomkit.open(tmp_path / "bad", verify=False)
    assert isinstance(m.contains_many(keys_of(str, 1000)), list)
    header = bytearray(bytes(f))
    header[10] ^= 0xFF
    (tmp_path / "bad-header").write_bytes(bytes(header))
    with pytest.raises(bloomkit.DecodeError):
        bloomkit.open(tmp_path / "bad-header", verify=False)


def test_files_that_cannot_be_opened(tmp_path):
    with pytest.raises(bloomkit.FileError):
        bloomkit.open(tmp_path / "missing")
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(bloomkit.DecodeError, match="empty"):
        bloomkit.open(tmp_path / "empty")
    (tmp_path / "junk").write_bytes(b"x" * 4096)
    with pytest.raises(bloomkit.DecodeError):
        bloomkit.open(tmp_path / "junk")
    b = bloomkit.Bitmap(0, 100)
    b.add(5)
    b.save(tmp_path / "bitmap")
    assert 5 in bloomkit.open(tmp_path / "bitmap")  # int keys without saying so
    with pytest.raises(bloomkit.Error):
        bloomkit.open(tmp_path / "bitmap", key=str)


def test_the_map_outlives_a_replaced_file(tmp_path):
    path = tmp_path / "f"
    f = bloomkit.BloomFilter(1000, 0.01)
    f.add("old")
    f.save(path)
    m = bloomkit.open(path)
    g = bloomkit.BloomFilter(1000, 0.01)
    g.add("new")
    g.save(path)  # a rename over the mapped file: the map keeps the old one
    assert "old" in m and "old" not in bloomkit.open(path)


def test_threads_share_a_mapped_filter(tmp_path):
    f = bloomkit.SimdBlockFilter(200_000, 0.01, key=int)
    f.add_many(range(200_000))
    f.save(tmp_path / "f")
    m = bloomkit.open(tmp_path / "f", key=int)
    results = []

    def ask():
        results.append(all(m.contains_many(range(200_000))))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 4


def test_counting_filters_of_every_width_from_the_command(bloomkit_cli, tmp_path):
    keys = [f"k{i}" for i in range(1000)]
    (tmp_path / "keys").write_text("\n".join(keys) + "\n")
    for bits in (4, 8, 16, 32):
        out = tmp_path / f"c{bits}"
        r = run([bloomkit_cli, "build", "--variant", "counting", "--counter-bits", bits, "-o", out, tmp_path / "keys"])
        assert r.returncode == 0, r.stderr.decode()
        m = bloomkit.open(out)
        assert all(m.contains_many(keys)), bits
