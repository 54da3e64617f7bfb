//! The classes' insides: a Rust filter per key type, and the macros that write each
//! class's methods once for every variant that has them.

use bloomkit::Codec;
use pyo3::prelude::*;

use crate::errors;
use crate::keys::KeyType;
use crate::ops::{self, Locked};

/// A filter of one of the three key types; which one is fixed when it is made.
#[derive(Debug)]
pub(crate) enum Keyed<S, B, I> {
    /// `key=str`.
    Str(Locked<S>),
    /// `key=bytes`.
    Bytes(Locked<B>),
    /// `key=int`.
    Int(Locked<I>),
}

/// Runs `$body` with `$f` bound to the filter, whatever its key type.
macro_rules! each {
    ($value:expr, $f:ident => $body:expr) => {
        match $crate::family::Family::keyed($value) {
            $crate::family::Keyed::Str($f) => $body,
            $crate::family::Keyed::Bytes($f) => $body,
            $crate::family::Keyed::Int($f) => $body,
        }
    };
}
pub(crate) use each;

/// Runs `$body` with `$a` and `$b` bound to two filters of the same key type, or raises
/// `IncompatibleError`.
macro_rules! each_pair {
    ($left:expr, $right:expr, $a:ident, $b:ident => $body:expr) => {
        match (
            $crate::family::Family::keyed($left),
            $crate::family::Family::keyed($right),
        ) {
            ($crate::family::Keyed::Str($a), $crate::family::Keyed::Str($b)) => $body,
            ($crate::family::Keyed::Bytes($a), $crate::family::Keyed::Bytes($b)) => $body,
            ($crate::family::Keyed::Int($a), $crate::family::Keyed::Int($b)) => $body,
            (l, r) => {
                return Err($crate::errors::raise(
                    $crate::errors::Kind::Incompatible,
                    format!(
                        "cannot combine filters: key types differ ({} vs {})",
                        l.key_type().name(),
                        r.key_type().name()
                    ),
                ))
            }
        }
    };
}
pub(crate) use each_pair;

/// What the shared methods need of a class's insides.
pub(crate) trait Family: Sized + Send + Sync {
    /// The filter for `str` keys.
    type S;
    /// The filter for `bytes` keys.
    type B;
    /// The filter for `int` keys.
    type I;
    /// The filter, by key type.
    fn keyed(&self) -> &Keyed<Self::S, Self::B, Self::I>;
    /// The key type.
    fn key_type(&self) -> KeyType {
        self.keyed().key_type()
    }
    /// Filters from bytes, for keys of `key`.
    fn decode(py: Python<'_>, bytes: &[u8], key: KeyType) -> PyResult<Self>;
    /// A copy.
    fn duplicate(&self, py: Python<'_>) -> Self;
    /// Whether both hold the same filter.
    fn equal(&self, py: Python<'_>, other: &Self) -> bool;
}

impl<S, B, I> Keyed<S, B, I> {
    /// The key type.
    pub(crate) fn key_type(&self) -> KeyType {
        match self {
            Keyed::Str(_) => KeyType::Str,
            Keyed::Bytes(_) => KeyType::Bytes,
            Keyed::Int(_) => KeyType::Int,
        }
    }
}

impl<S, B, I> Family for Keyed<S, B, I>
where
    S: Codec + Clone + PartialEq + Send + Sync,
    B: Codec + Clone + PartialEq + Send + Sync,
    I: Codec + Clone + PartialEq + Send + Sync,
{
    type S = S;
    type B = B;
    type I = I;

    fn keyed(&self) -> &Self {
        self
    }

    fn decode(py: Python<'_>, bytes: &[u8], key: KeyType) -> PyResult<Self> {
        Ok(match key {
            KeyType::Str => Keyed::Str(ops::from_bytes(py, bytes)?),
            KeyType::Bytes => Keyed::Bytes(ops::from_bytes(py, bytes)?),
            KeyType::Int => Keyed::Int(ops::from_bytes(py, bytes)?),
        })
    }

    fn duplicate(&self, py: Python<'_>) -> Self {
        match self {
            Keyed::Str(f) => Keyed::Str(ops::duplicate(py, f)),
            Keyed::Bytes(f) => Keyed::Bytes(ops::duplicate(py, f)),
            Keyed::Int(f) => Keyed::Int(ops::duplicate(py, f)),
        }
    }

    fn equal(&self, py: Python<'_>, other: &Self) -> bool {
        match (self, other) {
            (Keyed::Str(a), Keyed::Str(b)) => ops::equal(py, a, b),
            (Keyed::Bytes(a), Keyed::Bytes(b)) => ops::equal(py, a, b),
            (Keyed::Int(a), Keyed::Int(b)) => ops::equal(py, a, b),
            _ => false,
        }
    }
}

/// The insides of a class whose keys are integers only (the bitmap): always `Keyed::Int`.
#[derive(Debug)]
pub(crate) struct IntOnly<F>(pub(crate) Keyed<F, F, F>);

impl<F: Codec + Clone + PartialEq + Send + Sync> Family for IntOnly<F> {
    type S = F;
    type B = F;
    type I = F;

    fn keyed(&self) -> &Keyed<F, F, F> {
        &self.0
    }

    fn decode(py: Python<'_>, bytes: &[u8], key: KeyType) -> PyResult<Self> {
        if key != KeyType::Int {
            return Err(errors::key_type(format!(
                "this class's keys are int, not {}",
                key.name()
            )));
        }
        Ok(IntOnly(Keyed::Int(ops::from_bytes(py, bytes)?)))
    }

    fn duplicate(&self, py: Python<'_>) -> Self {
        IntOnly(self.0.duplicate(py))
    }

    fn equal(&self, py: Python<'_>, other: &Self) -> bool {
        self.0.equal(py, &other.0)
    }
}

/// Makes a filter of the key type `key` names: `$make` is generic over the key type `K`.
macro_rules! keyed {
    ($key:expr, |$k:ident| $make:expr) => {
        match $key {
            $crate::keys::KeyType::Str => {
                type $k = str;
                $crate::family::Keyed::Str($crate::ops::Locked::new($make))
            }
            $crate::keys::KeyType::Bytes => {
                type $k = [u8];
                $crate::family::Keyed::Bytes($crate::ops::Locked::new($make))
            }
            $crate::keys::KeyType::Int => {
                type $k = u64;
                $crate::family::Keyed::Int($crate::ops::Locked::new($make))
            }
        }
    };
}
pub(crate) use keyed;

/// The bytes a file holds.
pub(crate) fn read_file(path: &std::path::Path) -> PyResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| errors::io(path, "read", &e))
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed into place once
/// complete: a crash or a full disk never leaves a half-written filter under the name.
pub(crate) fn write_file(path: &std::path::Path, bytes: &[u8]) -> PyResult<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let name = path.file_name().map_or_else(
        || std::ffi::OsString::from("filter"),
        std::ffi::OsStr::to_os_string,
    );
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(&name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(errors::io(path, "write", &e));
    }
    Ok(())
}

/// The methods every class has: membership, batches of lookups, bytes, files, pickling,
/// copies, equality, sizes, `repr`.
macro_rules! common_methods {
    ($py_ty:ident, $name:literal) => {
        #[pymethods]
        impl $py_ty {
            /// Whether `key` may be in the filter: ``True`` for every key added (and not
            /// removed), ``False`` for most others (at about the filter's rate).
            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                $crate::family::each!(&self.inner, f => $crate::ops::contains(f, key))
            }

            /// Whether each key may be in the filter, answered in batches with the GIL
            /// released: a list of ``bool``, or a NumPy ``bool`` array when ``keys`` is a
            /// NumPy array. ``keys`` is any iterable of keys, a ``bytes`` object whose
            /// lines are the keys (``\n``, a trailing ``\r`` dropped, empty lines
            /// skipped), or a NumPy array of unsigned integers (``key=int``).
            fn contains_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                $crate::family::each!(&self.inner, f => $crate::ops::contains_many(py, f, keys))
            }

            /// The key type: ``str``, ``bytes`` or ``int``.
            #[getter]
            fn key<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyType> {
                $crate::family::Family::key_type(&self.inner).type_object(py)
            }

            /// The number of distinct keys added, estimated from the filter's contents.
            fn approx_len(&self, py: Python<'_>) -> f64 {
                $crate::family::each!(&self.inner, f => f.with(py, |f| bloomkit::LookupCore::estimated_len(f)))
            }

            /// The false-positive rate the filter was made for (``None`` where it has none).
            #[getter]
            fn fpr(&self, py: Python<'_>) -> Option<f64> {
                $crate::family::each!(&self.inner, f => f.with(py, |f| bloomkit::LookupCore::target_fpr(f)))
            }

            /// The false-positive rate now, estimated from the filter's contents.
            fn estimated_fpr(&self, py: Python<'_>) -> f64 {
                $crate::family::each!(&self.inner, f => f.with(py, |f| bloomkit::LookupCore::estimated_fpr(f)))
            }

            /// The bytes of memory the filter's table takes.
            #[getter]
            fn nbytes(&self, py: Python<'_>) -> usize {
                $crate::family::each!(&self.inner, f => f.with(py, |f| bloomkit::LookupCore::heap_bytes(f)))
            }

            /// For the benchmark script only (``bench/bench.py``): the seconds the Rust
            /// library's ``contains_batch`` takes over ``keys``, and how many answered
            /// present.
            fn _rust_contains_batch(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<(f64, usize)> {
                $crate::family::each!(&self.inner, f => $crate::ops::time_contains_batch(py, f, keys))
            }

            fn __sizeof__(&self, py: Python<'_>) -> usize {
                ::std::mem::size_of::<Self>() + self.nbytes(py)
            }

            /// The filter's bytes: bloomkit's format (versioned, checksummed), the same as
            /// the Rust library's ``to_bytes`` and the ``bloomkit`` command's files.
            fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
                $crate::family::each!(&self.inner, f => $crate::ops::to_bytes(py, f))
            }

            /// The filter ``data`` holds (bytes from ``bytes(f)``, ``save``, the Rust
            /// library or the ``bloomkit`` command), for keys of type ``key``. Raises
            /// ``DecodeError`` for bytes that are not such a filter.
            #[classmethod]
            #[pyo3(signature = (data, key = None))]
            fn from_bytes(
                _cls: &Bound<'_, pyo3::types::PyType>,
                py: Python<'_>,
                data: &[u8],
                key: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                let key = $crate::keys::KeyType::from_arg(key)?;
                Ok(Self { inner: $crate::family::Family::decode(py, data, key)? })
            }

            /// Writes the filter's bytes to ``path`` (a temporary file renamed into place:
            /// never half a filter under the name).
            fn save(&self, py: Python<'_>, path: ::std::path::PathBuf) -> PyResult<()> {
                let bytes = self.__bytes__(py);
                let bytes = bytes.as_bytes();
                py.detach(|| $crate::family::write_file(&path, bytes))
            }

            /// The filter saved at ``path``, for keys of type ``key``.
            #[classmethod]
            #[pyo3(signature = (path, key = None))]
            fn load(
                cls: &Bound<'_, pyo3::types::PyType>,
                py: Python<'_>,
                path: ::std::path::PathBuf,
                key: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                let bytes = py.detach(|| $crate::family::read_file(&path))?;
                Self::from_bytes(cls, py, &bytes, key)
            }

            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, pyo3::types::PyBytes>, Bound<'py, pyo3::types::PyType>))> {
                let py = slf.py();
                let this = slf.get();
                let from_bytes = slf.get_type().getattr("from_bytes")?;
                Ok((from_bytes, (this.__bytes__(py), this.key(py))))
            }

            /// A copy of the filter.
            fn copy(&self, py: Python<'_>) -> Self {
                Self { inner: $crate::family::Family::duplicate(&self.inner, py) }
            }

            fn __copy__(&self, py: Python<'_>) -> Self {
                self.copy(py)
            }

            fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> Self {
                self.copy(py)
            }

            /// Equal when both hold the same filter: the same key type, parameters, seed
            /// and contents.
            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                other.cast::<Self>().is_ok_and(|o| $crate::family::Family::equal(&self.inner, other.py(), &o.get().inner))
            }

            fn __repr__(&self, py: Python<'_>) -> String {
                let fpr = self.fpr(py).map_or_else(|| "None".to_owned(), |p| format!("{p}"));
                format!(
                    "{}(key={}, approx_len={:.0}, fpr={}, nbytes={})",
                    $name,
                    $crate::family::Family::key_type(&self.inner).name(),
                    self.approx_len(py),
                    fpr,
                    self.nbytes(py)
                )
            }
        }
    };
}
pub(crate) use common_methods;

/// The methods of a class that takes keys after it is made: `add`, `update`, `add_many`,
/// `clear`.
macro_rules! insert_methods {
    ($py_ty:ident) => {
        #[pymethods]
        impl $py_ty {
            /// Adds ``key``; ``True`` if it was certainly not there before.
            fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                $crate::family::each!(&self.inner, f => $crate::ops::insert(f, key))
            }

            /// Adds every key of each iterable (as ``set.update``).
            #[pyo3(signature = (*iterables))]
            fn update(&self, py: Python<'_>, iterables: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<()> {
                for keys in iterables.iter() {
                    self.add_many(py, &keys)?;
                }
                Ok(())
            }

            /// Adds every key, in batches with the GIL released; returns how many were new.
            /// ``keys`` is any iterable of keys, a ``bytes`` object whose lines are the
            /// keys, or a NumPy array of unsigned integers (``key=int``). Not atomic: when
            /// a key is refused (a wrong type, a full filter), the batches before its own
            /// (4,096 keys each) stay added.
            fn add_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<u64> {
                $crate::family::each!(&self.inner, f => $crate::ops::insert_many(py, f, keys))
            }

            /// Removes every key, keeping the filter's size and seed.
            fn clear(&self, py: Python<'_>) {
                $crate::family::each!(&self.inner, f => f.with_mut(py, bloomkit::FilterCore::clear))
            }
        }
    };
}
pub(crate) use insert_methods;

/// `remove` and `discard`, for the variants that delete.
macro_rules! remove_methods {
    ($py_ty:ident) => {
        #[pymethods]
        impl $py_ty {
            /// Removes one copy of ``key``; raises ``NotPresentError`` (a ``KeyError``)
            /// when the filter does not hold it. Remove only keys that were added: removing
            /// a false positive takes another key's trace.
            fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                if $crate::family::each!(&self.inner, f => $crate::ops::remove(f, key))? {
                    Ok(())
                } else {
                    Err($crate::errors::to_py(&bloomkit::Error::NotPresent))
                }
            }

            /// Removes one copy of ``key`` if the filter may hold it. As with ``remove``,
            /// only for keys that were added: a key never added that answers ``True`` (a
            /// false positive) takes another key's trace, which can then answer ``False``.
            fn discard(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                $crate::family::each!(&self.inner, f => $crate::ops::remove(f, key)).map(drop)
            }
        }
    };
}
pub(crate) use remove_methods;

/// `|`, `|=` and `union` (and with `intersection`, `&`, `&=`), for the variants that
/// combine: both filters must have the same key type, size and seed.
macro_rules! union_methods {
    ($py_ty:ident) => {
        #[pymethods]
        impl $py_ty {
            /// A filter holding the keys of both (they must match in key type, size and
            /// seed; ``IncompatibleError`` otherwise).
            fn union(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
                let result = self.copy(py);
                result.union_update(py, other)?;
                Ok(result)
            }

            /// Adds the keys of ``other`` to this filter.
            fn union_update(&self, py: Python<'_>, other: &Self) -> PyResult<()> {
                if ::std::ptr::eq(self, other) {
                    return Ok(());
                }
                $crate::family::each_pair!(&self.inner, &other.inner, a, b => {
                    // A copy of `other` first: `a` and `b` are never reached at once.
                    let b = b.with(py, Clone::clone);
                    a.with_mut(py, |a| bloomkit::Union::union_with(a, &b)).map_err(|e| $crate::errors::to_py(&e))
                })
            }

            fn __or__(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
                self.union(py, other)
            }

            fn __ior__(&self, py: Python<'_>, other: &Self) -> PyResult<()> {
                self.union_update(py, other)
            }
        }
    };
}
pub(crate) use union_methods;

/// [`union_methods`], and `intersection`, `intersection_update`, `&` and `&=`.
macro_rules! intersection_methods {
    ($py_ty:ident) => {
        $crate::family::union_methods!($py_ty);

        #[pymethods]
        impl $py_ty {
            /// A filter of the keys both may hold (the same key type, size and seed).
            fn intersection(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
                let result = self.copy(py);
                result.intersection_update(py, other)?;
                Ok(result)
            }

            /// Keeps only the keys both may hold.
            fn intersection_update(&self, py: Python<'_>, other: &Self) -> PyResult<()> {
                if ::std::ptr::eq(self, other) {
                    return Ok(());
                }
                $crate::family::each_pair!(&self.inner, &other.inner, a, b => {
                    // A copy of `other` first: `a` and `b` are never reached at once.
                    let b = b.with(py, Clone::clone);
                    a.with_mut(py, |a| bloomkit::Intersection::intersect_with(a, &b)).map_err(|e| $crate::errors::to_py(&e))
                })
            }

            fn __and__(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
                self.intersection(py, other)
            }

            fn __iand__(&self, py: Python<'_>, other: &Self) -> PyResult<()> {
                self.intersection_update(py, other)
            }
        }
    };
}
pub(crate) use intersection_methods;

/// `len()` for the variants that know their count exactly.
macro_rules! len_method {
    ($py_ty:ident) => {
        #[pymethods]
        impl $py_ty {
            /// The number of keys the filter holds, exactly (with multiplicity where the
            /// variant counts copies).
            fn __len__(&self, py: Python<'_>) -> usize {
                let n = $crate::family::each!(&self.inner, f => f.with(py, |f| f.len()));
                usize::try_from(n).unwrap_or(usize::MAX)
            }
        }
    };
}
pub(crate) use len_method;
