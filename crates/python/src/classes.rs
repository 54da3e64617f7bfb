//! The classes: one per variant of the family, with the Rust name.

use bloomkit::counting::U4;
use bloomkit::{
    BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloomFilter, BloomFilter, CountingBloomFilter,
    ExpandableFilter, QuotientFilter, RibbonFilter, ScalableBloomFilter, SimdBlockFilter,
    SplitBlockFilter, WindowFilter, Xxh3Builder,
};
use pyo3::prelude::*;

use crate::errors;
use crate::family::{
    common_methods, each, insert_methods, intersection_methods, keyed, len_method, remove_methods,
    union_methods, Keyed,
};
use crate::keys::{KeyType, PyKey};
use crate::ops;

/// The insides of a class over the Rust filter `$ty<K>` for each key type.
macro_rules! keyed_type {
    ($ty:ident $(, $extra:ty)*) => {
        Keyed<$ty<str $(, $extra)*>, $ty<[u8] $(, $extra)*>, $ty<u64 $(, $extra)*>>
    };
}

/// `count`, for the variants that count a key's copies (each its own inherent `count`,
/// hence the closure: one method path cannot name the three key types' methods).
macro_rules! count_method {
    ($py_ty:ident, $doc:literal) => {
        #[pymethods]
        #[allow(clippy::redundant_closure_for_method_calls)]
        impl $py_ty {
            #[doc = $doc]
            fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
                each!(&self.inner, f => <_ as PyKey>::with_key(key, |k| f.with(key.py(), |f| f.count(k))))
            }
        }
    };
}
/// A class for a filter sized from `(expected_items, fpr)` through the family's builder.
macro_rules! sized_class {
    ($(
        $(#[$doc:meta])*
        $py_ty:ident, $name:literal, $ty:ident $(<$extra:ty>)?, seeded = $seeded:tt,
        methods = [$($methods:ident),*];
    )+) => {$(
        sized_class!(@one $(#[$doc])* $py_ty, $name, $ty $(<$extra>)?, $seeded);
        $($methods!($py_ty);)*
    )+};
    (
        @one $(#[$doc:meta])*
        $py_ty:ident, $name:literal, $ty:ident $(<$extra:ty>)?, $seeded:tt
    ) => {
        $(#[$doc])*
        #[pyclass(name = $name, module = "bloomkit", frozen)]
        pub(crate) struct $py_ty {
            inner: keyed_type!($ty $(, $extra)?),
        }

        #[pymethods]
        impl $py_ty {
            #[new]
            #[pyo3(signature = (expected_items, fpr = 0.01, *, key = None, seed = 0, max_bytes = None))]
            fn new(
                expected_items: u64,
                fpr: f64,
                key: Option<&Bound<'_, PyAny>>,
                seed: u64,
                max_bytes: Option<u64>,
            ) -> PyResult<Self> {
                let key = KeyType::from_arg(key)?;
                sized_class!(@seed $seeded, $name, seed);
                let inner = keyed!(key, |K| {
                    let builder = $ty::<K $(, $extra)?>::builder(expected_items, fpr);
                    let builder = sized_class!(@apply_seed $seeded, builder, seed);
                    let builder = match max_bytes {
                        Some(bytes) => builder.max_bytes(bytes),
                        None => builder,
                    };
                    builder.build().map_err(|e| errors::to_py(&e))?
                });
                Ok(Self { inner })
            }
        }

        common_methods!($py_ty, $name);
        insert_methods!($py_ty);
    };
    (@seed true, $name:literal, $seed:ident) => {};
    (@seed false, $name:literal, $seed:ident) => {
        if $seed != 0 {
            return Err(errors::raise(
                errors::Kind::Parameter,
                format!("{} hashes with Parquet's XXH64, seed 0 only; got seed {}", $name, $seed),
            ));
        }
    };
    (@apply_seed true, $builder:ident, $seed:ident) => { $builder.seed($seed) };
    (@apply_seed false, $builder:ident, $seed:ident) => { $builder };
}

sized_class! {
    /// The classic Bloom filter: ``BloomFilter(expected_items, fpr=0.01, *, key=str,
    /// seed=0, max_bytes=None)``. About 9.6 bits a key at 1%; union and intersection of
    /// filters of the same size and seed.
    PyBloomFilter, "BloomFilter", BloomFilter, seeded = true,
    methods = [intersection_methods];
    /// The cache-line blocked Bloom filter: one cache line a lookup, about 3% more memory
    /// than ``BloomFilter`` at 1%.
    PyBlockedBloomFilter, "BlockedBloomFilter", BlockedBloomFilter, seeded = true,
    methods = [intersection_methods];
    /// The SIMD block filter: a key's eight bits in one 256-bit block, set and tested with
    /// a few SIMD instructions; the fastest Bloom variant to build and ask.
    PySimdBlockFilter, "SimdBlockFilter", SimdBlockFilter, seeded = true,
    methods = [intersection_methods];
    /// Parquet's split-block Bloom filter, hashed as Parquet hashes (XXH64, seed 0): the
    /// bits a Parquet reader finds in a column chunk's filter for the same values.
    PySplitBlockFilter, "SplitBlockFilter", SplitBlockFilter, seeded = false,
    methods = [intersection_methods];
    /// The counting Bloom filter: keys leave with ``remove``; 4-bit counters that stick at
    /// their ceiling instead of wrapping (a stuck counter never frees its key's bits).
    PyCountingBloomFilter, "CountingBloomFilter", CountingBloomFilter<U4>, seeded = true,
    methods = [union_methods, remove_methods];
    /// The scalable Bloom filter: grows as keys arrive and keeps the rate under ``fpr``,
    /// whatever their number; ``expected_items`` sizes its first slice.
    PyScalableBloomFilter, "ScalableBloomFilter", ScalableBloomFilter, seeded = true,
    methods = [union_methods];
    /// The quotient filter: fingerprints in a compact table (about 10 bits a key at 1%);
    /// keys leave with ``remove``, copies are counted (``count``), ``len()`` is exact.
    PyQuotientFilter, "QuotientFilter", QuotientFilter, seeded = true,
    methods = [union_methods, remove_methods, len_method];
    /// The expandable filter: a quotient filter that doubles as it fills, the rate kept
    /// under ``fpr``, with removes.
    PyExpandableFilter, "ExpandableFilter", ExpandableFilter, seeded = true,
    methods = [remove_methods, len_method];
}

count_method!(
    PyCountingBloomFilter,
    "How many times ``key`` may have been added (an upper bound: the smallest of its counters)."
);

count_method!(
    PyQuotientFilter,
    "How many copies of ``key`` the filter holds (copies of keys sharing its fingerprint included)."
);

/// The window filter: ``WindowFilter(window, fpr=0.01, *, key=str, seed=0,
/// max_bytes=None, over_time=None, slack=None)``. Every key of the last ``window`` adds
/// answers ``True``; older keys are forgotten by ``(1 + slack) * window`` (``slack`` 0.1 by
/// default); the rate stays under ``fpr`` at every moment. With ``over_time=T`` the window
/// is the last ``T`` time units instead, given by the caller (``add_at`` /
/// ``contains_at``), for up to ``window`` adds in any ``T``.
#[pyclass(name = "WindowFilter", module = "bloomkit", frozen)]
pub(crate) struct PyWindowFilter {
    inner: keyed_type!(WindowFilter),
}

#[pymethods]
impl PyWindowFilter {
    #[new]
    #[pyo3(signature = (window, fpr = 0.01, *, key = None, seed = 0, max_bytes = None, over_time = None, slack = None))]
    fn new(
        window: u64,
        fpr: f64,
        key: Option<&Bound<'_, PyAny>>,
        seed: u64,
        max_bytes: Option<u64>,
        over_time: Option<u64>,
        slack: Option<f64>,
    ) -> PyResult<Self> {
        let key = KeyType::from_arg(key)?;
        let inner = keyed!(key, |K| {
            let mut builder = WindowFilter::<K>::builder(window, fpr).seed(seed);
            if let Some(bytes) = max_bytes {
                builder = builder.max_bytes(bytes);
            }
            if let Some(span) = over_time {
                builder = builder.over_time(span);
            }
            if let Some(slack) = slack {
                builder = builder.slack(slack);
            }
            builder.build().map_err(|e| errors::to_py(&e))?
        });
        Ok(Self { inner })
    }

    /// Adds ``key`` at time ``t`` (a window over time). Times never go back: a ``t``
    /// before the latest seen counts as the latest. On a window over adds, ``t`` is not
    /// used (the same as ``add``).
    fn add_at(&self, key: &Bound<'_, PyAny>, t: u64) -> PyResult<bool> {
        // The key is read before the lock is taken: reading it may run Python code (a
        // subclass's `__repr__` in an error message) that uses this filter.
        each!(&self.inner, f => {
            <_ as PyKey>::with_key(key, |k| f.with_mut(key.py(), |f| f.try_insert_at(k, t)))?
                .map_err(|e| errors::to_py(&e))
        })
    }

    /// Whether ``key`` may have been added within the window as of time ``t`` (a window
    /// over time): ``t`` after the latest time seen asks about the window ending at ``t``
    /// (keys that will have aged out by then answer ``False``); a ``t`` at or before the
    /// latest time seen answers as of that latest time.
    fn contains_at(&self, key: &Bound<'_, PyAny>, t: u64) -> PyResult<bool> {
        each!(&self.inner, f => <_ as PyKey>::with_key(key, |k| f.with(key.py(), |f| f.contains_at(k, t))))
    }

    /// The window: adds (or, over time, adds per window) every key of which is answered.
    #[getter]
    // A closure: one method path cannot name the three key types' `window`.
    #[allow(clippy::redundant_closure_for_method_calls)]
    fn window(&self, py: Python<'_>) -> u64 {
        each!(&self.inner, f => f.with(py, |f| f.window()))
    }

    /// How many adds (or time units) after its add a key is certainly forgotten.
    #[getter]
    fn forgotten_after(&self, py: Python<'_>) -> u64 {
        each!(&self.inner, f => f.with(py, |f| {
            f.time_forgotten_after().unwrap_or_else(|| f.forgotten_after())
        }))
    }
}

common_methods!(PyWindowFilter, "WindowFilter");
insert_methods!(PyWindowFilter);

/// A class for a static filter, built once from every key.
macro_rules! static_class {
    (
        $(#[$doc:meta])*
        $py_ty:ident, $name:literal, $ty:ident, |$keys:ident, $hasher:ident, $fpr:ident| $build:expr
    ) => {
        $(#[$doc])*
        #[pyclass(name = $name, module = "bloomkit", frozen)]
        pub(crate) struct $py_ty {
            inner: keyed_type!($ty),
        }

        #[pymethods]
        impl $py_ty {
            #[new]
            #[pyo3(signature = (keys, fpr = 0.01, *, key = None, seed = 0))]
            fn new(
                py: Python<'_>,
                keys: &Bound<'_, PyAny>,
                fpr: f64,
                key: Option<&Bound<'_, PyAny>>,
                seed: u64,
            ) -> PyResult<Self> {
                let key = KeyType::from_arg(key)?;
                let $fpr = fpr;
                let $hasher = Xxh3Builder::with_seed(seed);
                let inner = keyed!(key, |K| {
                    let all = ops::collect::<K>(py, keys)?;
                    let $keys: Vec<&K> = all.iter().map(std::borrow::Borrow::borrow).collect();
                    py.detach(|| $build).map_err(|e| errors::to_py(&e))?
                });
                Ok(Self { inner })
            }
        }

        common_methods!($py_ty, $name);
        len_method!($py_ty);
    };
}

static_class! {
    /// The binary fuse filter with 8-bit fingerprints: ``BinaryFuse8(keys, *, key=str,
    /// seed=0)``, built once from every key (an immutable file's keys, a shipped
    /// blocklist); 9.0 bits a key at 0.39%. ``fpr`` is ignored: the fingerprint fixes it.
    PyBinaryFuse8, "BinaryFuse8", BinaryFuse8, |keys, hasher, _fpr| {
        BinaryFuse8::from_keys_with_hasher(keys.iter().copied(), hasher)
    }
}

static_class! {
    /// The binary fuse filter with 16-bit fingerprints: 18 bits a key at 0.0015%.
    PyBinaryFuse16, "BinaryFuse16", BinaryFuse16, |keys, hasher, _fpr| {
        BinaryFuse16::from_keys_with_hasher(keys.iter().copied(), hasher)
    }
}

static_class! {
    /// The binary fuse filter with 32-bit fingerprints: 36 bits a key at 2^-32, for sets
    /// where a false positive is costly.
    PyBinaryFuse32, "BinaryFuse32", BinaryFuse32, |keys, hasher, _fpr| {
        BinaryFuse32::from_keys_with_hasher(keys.iter().copied(), hasher)
    }
}

static_class! {
    /// The standard ribbon filter: ``RibbonFilter(keys, fpr=0.01, *, key=str, seed=0)``,
    /// built once from every key; about 7 bits a key at 1%.
    PyRibbonFilter, "RibbonFilter", RibbonFilter, |keys, hasher, fpr| {
        RibbonFilter::from_keys_with_hasher(keys.iter().copied(), fpr, hasher)
    }
}

/// The bitmap: ``Bitmap(lo, hi)`` holds any set of the integers ``lo..=hi`` exactly, one
/// bit each (ids, IPv4 addresses, timestamps in a window); ``len()`` is exact, and it has
/// ``remove``, union and intersection.
#[pyclass(name = "Bitmap", module = "bloomkit", frozen)]
pub(crate) struct PyBitmap {
    inner: crate::family::IntOnly<bloomkit::Bitmap<u64>>,
}

#[pymethods]
impl PyBitmap {
    #[new]
    fn new(lo: u64, hi: u64) -> PyResult<Self> {
        let bitmap = bloomkit::Bitmap::<u64>::new(lo..=hi).map_err(|e| errors::to_py(&e))?;
        Ok(Self {
            inner: crate::family::IntOnly(Keyed::Int(ops::Locked::new(bitmap))),
        })
    }
}

common_methods!(PyBitmap, "Bitmap");
insert_methods!(PyBitmap);
remove_methods!(PyBitmap);
intersection_methods!(PyBitmap);
len_method!(PyBitmap);
