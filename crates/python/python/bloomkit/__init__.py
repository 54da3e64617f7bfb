"""bloomkit: a family of set-membership filters, with the same bytes as the Rust crates.

Pick the variant that suits the data; every class answers ``key in f``, ``add``,
``add_many`` / ``contains_many`` (batches with the GIL released; NumPy arrays of ``uint64``
keys answered as NumPy ``bool`` arrays), ``bytes(f)`` / ``Class.from_bytes``, ``save`` /
``load`` and pickling. Keys are ``str``, ``bytes`` or ``int`` (0..2**64), declared per filter
(``key=str``, the default), and hashed exactly as the Rust filter of that key type hashes
them: a filter saved here is answered identically by Rust and by the ``bloomkit`` command.

>>> import bloomkit
>>> seen = bloomkit.BloomFilter(expected_items=1_000_000, fpr=0.01)
>>> seen.add("https://a.example/")
True
>>> "https://a.example/" in seen
True
>>> "https://b.example/" in seen  # wrong at most ~1% of the time
False
"""

from ._errors import (
    AllocationError,
    CapacityError,
    DecodeError,
    Error,
    FileError,
    IncompatibleError,
    KeyRangeError,
    KeyTypeError,
    NotPresentError,
    OutOfRangeError,
    ParameterError,
    UnsupportedError,
)
from ._native import (
    BinaryFuse8,
    BinaryFuse16,
    BinaryFuse32,
    Bitmap,
    BlockedBloomFilter,
    BloomFilter,
    CountingBloomFilter,
    ExpandableFilter,
    MappedFilter,
    QuotientFilter,
    RibbonFilter,
    ScalableBloomFilter,
    SimdBlockFilter,
    SplitBlockFilter,
    WindowFilter,
    __version__,
    load,
    loads,
    open,
)

#: Every filter class, in the order of the README's "Which structure?".
FILTERS = (
    BloomFilter,
    BlockedBloomFilter,
    SimdBlockFilter,
    SplitBlockFilter,
    CountingBloomFilter,
    ScalableBloomFilter,
    QuotientFilter,
    ExpandableFilter,
    BinaryFuse8,
    BinaryFuse16,
    BinaryFuse32,
    RibbonFilter,
    Bitmap,
    WindowFilter,
)

__all__ = [
    "AllocationError",
    "BinaryFuse8",
    "BinaryFuse16",
    "BinaryFuse32",
    "Bitmap",
    "BlockedBloomFilter",
    "BloomFilter",
    "CapacityError",
    "CountingBloomFilter",
    "DecodeError",
    "Error",
    "ExpandableFilter",
    "FILTERS",
    "FileError",
    "IncompatibleError",
    "MappedFilter",
    "KeyRangeError",
    "KeyTypeError",
    "NotPresentError",
    "OutOfRangeError",
    "ParameterError",
    "QuotientFilter",
    "RibbonFilter",
    "ScalableBloomFilter",
    "SimdBlockFilter",
    "SplitBlockFilter",
    "UnsupportedError",
    "WindowFilter",
    "__version__",
    "load",
    "loads",
    "open",
]
