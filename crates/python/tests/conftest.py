"""Shared helpers: every class of the family, made the same way for each key type."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

import bloomkit

REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Variant:
    """How a test makes and uses one class."""

    cls: type
    #: Makes an empty filter for `n` keys of type `key` (None for static filters).
    make: Callable[[int, type], Any] | None
    #: Builds a filter from keys (static filters).
    build: Callable[[list, type], Any] | None = None
    removes: bool = False
    union: bool = False
    intersection: bool = False
    exact_len: bool = False
    key_types: tuple = (str, bytes, int)
    extra: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.cls.__name__

    @property
    def dynamic(self) -> bool:
        return self.make is not None


def _sized(cls, **kw):
    return lambda n, key: cls(max(n, 1), 0.01, key=key, **kw)


VARIANTS = [
    Variant(bloomkit.BloomFilter, _sized(bloomkit.BloomFilter), union=True, intersection=True),
    Variant(bloomkit.BlockedBloomFilter, _sized(bloomkit.BlockedBloomFilter), union=True, intersection=True),
    Variant(bloomkit.SimdBlockFilter, _sized(bloomkit.SimdBlockFilter), union=True, intersection=True),
    Variant(bloomkit.SplitBlockFilter, _sized(bloomkit.SplitBlockFilter), union=True, intersection=True),
    Variant(bloomkit.CountingBloomFilter, _sized(bloomkit.CountingBloomFilter), removes=True, union=True),
    Variant(bloomkit.ScalableBloomFilter, lambda n, key: bloomkit.ScalableBloomFilter(16, 0.01, key=key), union=True),
    Variant(bloomkit.QuotientFilter, _sized(bloomkit.QuotientFilter), removes=True, union=True, exact_len=True),
    Variant(bloomkit.ExpandableFilter, lambda n, key: bloomkit.ExpandableFilter(16, 0.01, key=key), removes=True, exact_len=True),
    Variant(bloomkit.WindowFilter, lambda n, key: bloomkit.WindowFilter(max(n, 1), 0.01, key=key)),
    Variant(bloomkit.BinaryFuse8, None, build=lambda keys, key: bloomkit.BinaryFuse8(keys, key=key), exact_len=True),
    Variant(bloomkit.BinaryFuse16, None, build=lambda keys, key: bloomkit.BinaryFuse16(keys, key=key), exact_len=True),
    Variant(bloomkit.BinaryFuse32, None, build=lambda keys, key: bloomkit.BinaryFuse32(keys, key=key), exact_len=True),
    Variant(bloomkit.RibbonFilter, None, build=lambda keys, key: bloomkit.RibbonFilter(keys, 0.01, key=key), exact_len=True),
    Variant(
        bloomkit.Bitmap,
        lambda n, key: bloomkit.Bitmap(0, 2**20),
        removes=True,
        union=True,
        intersection=True,
        exact_len=True,
        key_types=(int,),
    ),
]

DYNAMIC = [v for v in VARIANTS if v.dynamic]
STATIC = [v for v in VARIANTS if not v.dynamic]


def ids(vs):
    return [v.name for v in vs]


def keys_of(key: type, n: int, start: int = 0) -> list:
    """`n` distinct keys of type `key`."""
    if key is int:
        return list(range(start, start + n))
    if key is bytes:
        return [b"k%d" % i for i in range(start, start + n)]
    return [f"https://example.com/{i}" for i in range(start, start + n)]


def filled(v: Variant, key: type, keys: list):
    """A filter of variant `v` holding `keys`."""
    if v.dynamic:
        f = v.make(len(keys), key)
        f.add_many(keys)
        return f
    return v.build(keys, key)


def cli() -> Path | None:
    """The `bloomkit` command: $BLOOMKIT_CLI, or the workspace's release or debug build."""
    env = os.environ.get("BLOOMKIT_CLI")
    if env:
        return Path(env)
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "bloomkit"
        if p.exists():
            return p
    found = shutil.which("bloomkit")
    return Path(found) if found else None


@pytest.fixture
def bloomkit_cli() -> Path:
    path = cli()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the bloomkit command is missing (build it: cargo build --release -p bloomkit-cli)")
        pytest.skip("the bloomkit command is not built (cargo build --release -p bloomkit-cli)")
    return path


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, **kw)


@pytest.fixture
def rng() -> random.Random:
    return random.Random(20261129)
