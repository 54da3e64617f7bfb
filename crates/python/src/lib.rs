//! Python bindings for bloomkit: every variant of the family as a class with its Rust name,
//! hashing keys exactly as the Rust filter of the same key type does, so that a filter's
//! bytes are the same in both languages and in the `bloomkit` command.
//!
//! This crate is built by maturin into the `bloomkit` Python package
//! (`pip install ./crates/python`); its Python half (`python/bloomkit`) holds the
//! exceptions, the type stubs and the docs. The tests are Python's (`tests/`, pytest).
//!
//! ```text
//! >>> import bloomkit
//! >>> seen = bloomkit.BloomFilter(expected_items=1_000_000, fpr=0.01, key=str)
//! >>> seen.add("https://a.example/")
//! True
//! >>> "https://a.example/" in seen
//! True
//! ```

// Two modules allow `unsafe`, one call each: text.rs (a `str` key's UTF-8 bytes without a
// copy) and mapped.rs (a filter file's memory map).
#![deny(unsafe_code)]

mod classes;
mod errors;
mod family;
mod keys;
mod locked;
mod mapped;
mod ops;
mod text;

use bloomkit::Variant;
use pyo3::prelude::*;
use pyo3::types::PyType;

use classes::{
    PyBinaryFuse16, PyBinaryFuse32, PyBinaryFuse8, PyBitmap, PyBlockedBloomFilter, PyBloomFilter,
    PyCountingBloomFilter, PyExpandableFilter, PyQuotientFilter, PyRibbonFilter,
    PyScalableBloomFilter, PySimdBlockFilter, PySplitBlockFilter, PyWindowFilter,
};

/// The Python class that reads a variant's bytes, by its name in the module.
fn class_name(variant: Variant) -> Option<&'static str> {
    Some(match variant {
        Variant::Classic => "BloomFilter",
        Variant::Blocked => "BlockedBloomFilter",
        Variant::SimdBlock => "SimdBlockFilter",
        Variant::SplitBlock => "SplitBlockFilter",
        Variant::Counting => "CountingBloomFilter",
        Variant::Scalable => "ScalableBloomFilter",
        Variant::Quotient => "QuotientFilter",
        Variant::Expandable => "ExpandableFilter",
        Variant::BinaryFuse8 => "BinaryFuse8",
        Variant::BinaryFuse16 => "BinaryFuse16",
        Variant::BinaryFuse32 => "BinaryFuse32",
        Variant::Ribbon => "RibbonFilter",
        Variant::Bitmap => "Bitmap",
        Variant::Window => "WindowFilter",
        _ => return None,
    })
}

/// The filter `data` holds, whichever variant: an object of that variant's class.
#[pyfunction]
#[pyo3(pass_module, signature = (data, key = None))]
fn loads<'py>(
    module: &Bound<'py, PyModule>,
    data: &[u8],
    key: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let header =
        bloomkit::format::peek(data).map_err(|e| errors::to_py(&bloomkit::Error::Decode(e)))?;
    let name = class_name(header.variant).ok_or_else(|| {
        errors::raise(
            errors::Kind::Unsupported,
            format!("{} has no Python class yet", header.variant),
        )
    })?;
    let class = module.getattr(name)?.cast_into::<PyType>()?;
    let key = match (header.variant, key) {
        // A bitmap's keys are integers, whatever the caller's default.
        (Variant::Bitmap, None) => Some(module.py().get_type::<pyo3::types::PyInt>().into_any()),
        (_, key) => key.cloned(),
    };
    class.call_method1("from_bytes", (data, key))
}

/// The filter saved at `path`, whichever variant.
#[pyfunction]
#[pyo3(pass_module, signature = (path, key = None))]
#[allow(clippy::needless_pass_by_value)] // PyO3 hands arguments over by value
fn load<'py>(
    module: &Bound<'py, PyModule>,
    path: std::path::PathBuf,
    key: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = module.py().detach(|| family::read_file(&path))?;
    loads(module, &bytes, key)
}

/// A filter file answered in place (`bloomkit.open`): the Rust library's zero-copy view
/// over the memory-mapped file, or, for bytes a view cannot use in place (older format
/// versions), the decoded filter of its class. ``verify=False`` skips the payload's checksum
/// (the header's is always checked), so a large file answers without being read first: for
/// files checked otherwise (written locally, or verified once on arrival).
#[pyfunction]
#[pyo3(pass_module, signature = (path, key = None, verify = true))]
#[allow(clippy::needless_pass_by_value)] // PyO3 hands arguments over by value
fn open(
    module: &Bound<'_, PyModule>,
    path: std::path::PathBuf,
    key: Option<&Bound<'_, PyAny>>,
    verify: bool,
) -> PyResult<Py<PyAny>> {
    mapped::open(module, path, key, verify)
}

/// For the benchmark script: whether long batches overlap reading Python keys with the Rust
/// work on a second thread (on by default); returns the previous setting.
#[pyfunction]
fn _pipeline(on: bool) -> bool {
    ops::PIPELINE.swap(on, std::sync::atomic::Ordering::Relaxed)
}

/// For the tests: how many calls made with the GIL held took a filter's lock because a batch
/// was working on it without the GIL.
#[pyfunction]
fn _locked_calls() -> u64 {
    locked::LOCKED_CALLS.load(std::sync::atomic::Ordering::Relaxed)
}

/// The native half of the `bloomkit` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBloomFilter>()?;
    m.add_class::<PyBlockedBloomFilter>()?;
    m.add_class::<PySimdBlockFilter>()?;
    m.add_class::<PySplitBlockFilter>()?;
    m.add_class::<PyCountingBloomFilter>()?;
    m.add_class::<PyScalableBloomFilter>()?;
    m.add_class::<PyQuotientFilter>()?;
    m.add_class::<PyExpandableFilter>()?;
    m.add_class::<PyBinaryFuse8>()?;
    m.add_class::<PyBinaryFuse16>()?;
    m.add_class::<PyBinaryFuse32>()?;
    m.add_class::<PyRibbonFilter>()?;
    m.add_class::<PyBitmap>()?;
    m.add_class::<PyWindowFilter>()?;
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(_locked_calls, m)?)?;
    m.add_class::<mapped::PyMappedFilter>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
