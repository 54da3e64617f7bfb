//! `bloomkit.open`: a filter file answered in place, through the Rust library's zero-copy
//! view over the memory-mapped file: no copy, no decode, the pages read as lookups touch
//! them (and shared with every other process that maps the same file).
//!
//! The view borrows the map; `yoke` (ICU4X's crate for a value that borrows from the box
//! it travels with) keeps the two together, so no lifetime is forged here. The one
//! `unsafe` is the map itself (`memmap2::Mmap::map`), as in the `bloomkit` command's
//! `--mmap`.

#![allow(unsafe_code)]

use std::path::PathBuf;

use bloomkit::format::Verify;
use bloomkit::{Lookup, LookupCore, Variant};
use memmap2::Mmap;
use pyo3::prelude::*;
use pyo3::types::PyType;
use yoke::{Yoke, Yokeable};

use crate::errors;
use crate::keys::{KeyType, PyKey};
use crate::ops;

/// What a mapped filter answers, whatever its variant and key type.
pub(crate) trait ViewOps: Send + Sync {
    fn contains(&self, key: &Bound<'_, PyAny>) -> PyResult<bool>;
    fn contains_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>>;
    fn core(&self) -> &dyn LookupCore;
}

impl<V> ViewOps for V
where
    V: Lookup + Send + Sync,
    V::Key: PyKey,
{
    fn contains(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        <V::Key>::with_key(key, |k| Lookup::contains(self, k))
    }

    fn contains_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::answer_many::<V::Key>(py, keys, &|batch: &[&V::Key], out: &mut Vec<bool>| {
            self.contains_batch(batch.iter().copied(), out);
        })
    }

    fn core(&self) -> &dyn LookupCore {
        self
    }
}

/// The view, borrowing the map.
#[derive(Yokeable)]
pub(crate) struct View<'a>(Box<dyn ViewOps + 'a>);

/// A view of the key type `key` names: `$make` is generic over the key type `K`.
macro_rules! view_of {
    ($key:expr, |$k:ident| $make:expr) => {
        match $key {
            KeyType::Str => {
                type $k = str;
                View(Box::new($make))
            }
            KeyType::Bytes => {
                type $k = [u8];
                View(Box::new($make))
            }
            KeyType::Int => {
                type $k = u64;
                View(Box::new($make))
            }
        }
    };
}

/// The view of `variant` over `bytes`, for keys of `key`.
fn view(
    bytes: &[u8],
    variant: Variant,
    key: KeyType,
    verify: Verify,
) -> Result<View<'_>, bloomkit::Error> {
    use bloomkit::counting::{counter_bits, U4};
    use bloomkit::{
        BinaryFuseRef, BitmapRef, BlockedBloomFilterRef, BloomFilterRef, CountingBloomFilterRef,
        ExpandableFilterRef, QuotientFilterRef, RibbonFilterRef, ScalableBloomFilterRef,
        SimdBlockFilterRef, SplitBlockFilterRef, WindowFilterRef,
    };
    Ok(match variant {
        Variant::Classic => view_of!(key, |K| BloomFilterRef::<K>::with_hasher(bytes, verify)?),
        Variant::Blocked => {
            view_of!(key, |K| BlockedBloomFilterRef::<K>::with_hasher(
                bytes, verify
            )?)
        }
        Variant::SimdBlock => {
            view_of!(key, |K| SimdBlockFilterRef::<K>::with_hasher(
                bytes, verify
            )?)
        }
        Variant::SplitBlock => {
            view_of!(key, |K| SplitBlockFilterRef::<K>::with_verify(
                bytes, verify
            )?)
        }
        Variant::Counting => match counter_bits(bytes) {
            Some(8) => view_of!(key, |K| CountingBloomFilterRef::<K, u8>::with_hasher(
                bytes, verify
            )?),
            Some(16) => view_of!(key, |K| CountingBloomFilterRef::<K, u16>::with_hasher(
                bytes, verify
            )?),
            Some(32) => view_of!(key, |K| CountingBloomFilterRef::<K, u32>::with_hasher(
                bytes, verify
            )?),
            _ => view_of!(key, |K| CountingBloomFilterRef::<K, U4>::with_hasher(
                bytes, verify
            )?),
        },
        Variant::Scalable => {
            view_of!(key, |K| ScalableBloomFilterRef::<K>::with_hasher(
                bytes, verify
            )?)
        }
        Variant::BinaryFuse8 => {
            view_of!(key, |K| BinaryFuseRef::<u8, K>::with_hasher(bytes, verify)?)
        }
        Variant::BinaryFuse16 => view_of!(key, |K| BinaryFuseRef::<u16, K>::with_hasher(
            bytes, verify
        )?),
        Variant::BinaryFuse32 => view_of!(key, |K| BinaryFuseRef::<u32, K>::with_hasher(
            bytes, verify
        )?),
        Variant::Ribbon => view_of!(key, |K| RibbonFilterRef::<K>::with_hasher(bytes, verify)?),
        Variant::Quotient => view_of!(key, |K| QuotientFilterRef::<K>::with_hasher(bytes, verify)?),
        Variant::Expandable => {
            view_of!(key, |K| ExpandableFilterRef::<K>::with_hasher(
                bytes, verify
            )?)
        }
        Variant::Window => view_of!(key, |K| WindowFilterRef::<K>::with_hasher(bytes, verify)?),
        Variant::Bitmap => {
            if key != KeyType::Int {
                return Err(bloomkit::Error::Unsupported("a bitmap's keys are int"));
            }
            View(Box::new(BitmapRef::<u64>::with_verify(bytes, verify)?))
        }
        _ => {
            return Err(bloomkit::Error::Unsupported(
                "this variant has no Python class yet",
            ))
        }
    })
}

/// A filter file answered in place: ``bloomkit.open(path, key=str, verify=True)``.
///
/// Read-only: ``key in f``, ``contains_many``, ``approx_len()``, ``fpr``,
/// ``estimated_fpr()``, ``nbytes`` (the file's length), ``variant`` and ``path``. The file
/// must not be truncated or rewritten while it is open (a file replaced by renaming another
/// over it, as ``save`` does, is safe: the map keeps the old one).
#[pyclass(name = "MappedFilter", module = "bloomkit", frozen)]
pub(crate) struct PyMappedFilter {
    view: Yoke<View<'static>, Box<Mmap>>,
    variant: Variant,
    key: KeyType,
    path: PathBuf,
}

#[pymethods]
impl PyMappedFilter {
    /// Whether `key` may be in the filter.
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.view.get().0.contains(key)
    }

    /// Whether each key may be in the filter, in batches with the GIL released (as the
    /// filter classes' ``contains_many``).
    fn contains_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.view.get().0.contains_many(py, keys)
    }

    /// The number of distinct keys added, estimated from the filter's contents.
    fn approx_len(&self) -> f64 {
        self.view.get().0.core().estimated_len()
    }

    /// The false-positive rate the filter was made for (``None`` where it has none).
    #[getter]
    fn fpr(&self) -> Option<f64> {
        self.view.get().0.core().target_fpr()
    }

    /// The false-positive rate now, estimated from the filter's contents.
    fn estimated_fpr(&self) -> f64 {
        self.view.get().0.core().estimated_fpr()
    }

    /// The bytes mapped: the file's length.
    #[getter]
    fn nbytes(&self) -> usize {
        self.view.backing_cart().len()
    }

    /// The key type.
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> Bound<'py, PyType> {
        self.key.type_object(py)
    }

    /// The variant the file holds, as the ``bloomkit`` command names it (``classic``,
    /// ``quotient``, ...).
    #[getter]
    fn variant(&self) -> &'static str {
        self.variant.facts().command_name
    }

    /// The file.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "MappedFilter({:?}, variant={:?}, key={}, nbytes={})",
            self.path.display().to_string(),
            self.variant(),
            self.key.name(),
            self.nbytes()
        )
    }
}

/// `bloomkit.open(path, key=None, verify=True)`.
pub(crate) fn open(
    module: &Bound<'_, PyModule>,
    path: PathBuf,
    key: Option<&Bound<'_, PyAny>>,
    verify: bool,
) -> PyResult<Py<PyAny>> {
    let py = module.py();
    let file = std::fs::File::open(&path).map_err(|e| errors::io(&path, "open", &e))?;
    let len = file
        .metadata()
        .map_err(|e| errors::io(&path, "read", &e))?
        .len();
    if len == 0 {
        return Err(errors::raise(
            errors::Kind::Decode,
            format!("{} is empty, not a filter file", path.display()),
        ));
    }
    // SAFETY: the map is read-only and lives in the `Yoke` with the view that borrows it.
    // The file must not be truncated or rewritten in place while it is mapped: the condition
    // this function's docs state (as the command's `--mmap`); a truncated file would fault
    // on access, not be read out of bounds by Rust.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| errors::io(&path, "map", &e))?;
    let header =
        bloomkit::format::peek(&map).map_err(|e| errors::to_py(&bloomkit::Error::Decode(e)))?;
    let key_type = match (header.variant, key) {
        (Variant::Bitmap, None) => KeyType::Int,
        (_, key) => KeyType::from_arg(key)?,
    };
    let verify = if verify {
        Verify::All
    } else {
        Verify::SkipPayloadChecksum
    };
    let variant = header.variant;
    let made = py.detach(|| {
        Yoke::try_attach_to_cart(Box::new(map), |map: &Mmap| {
            view(map, variant, key_type, verify)
        })
    });
    match made {
        Ok(view) => Ok(Py::new(
            py,
            PyMappedFilter {
                view,
                variant,
                key: key_type,
                path,
            },
        )?
        .into_any()),
        // Bytes a view cannot use in place (an older format version, or a layout that
        // needs decoding): the decoded filter instead, of its own class.
        Err(bloomkit::Error::Decode(bloomkit::DecodeError::NotViewable(_))) => {
            let bytes = crate::family::read_file(&path)?;
            let key = key_type.type_object(py).into_any();
            Ok(crate::loads(module, &bytes, Some(&key))?.unbind())
        }
        Err(e) => Err(errors::to_py(&e)),
    }
}
