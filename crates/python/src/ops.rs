//! What every class does, written once over the Rust traits (`Lookup`, `Filter`, `Remove`,
//! `Union`, `Codec`): one key at a time with the GIL held, batches with it released.
//!
//! Each filter sits in a [`Locked`]: calls made with the GIL held reach it directly while no
//! batch works on it without the GIL, and take its lock otherwise; batches register, then
//! take the lock inside `Python::detach` and let it go before coming back, so no thread
//! holds the lock while waiting for the GIL, and a lookup in one thread and an insert in
//! another never deadlock.

use bloomkit::{Codec, Error, Filter, Lookup, Remove};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList};

use crate::errors;
use crate::keys::{Chunk, KeyType, PyKey, CHUNK};
pub(crate) use crate::locked::Locked;

/// A failed insert as a Python exception: bloomkit's errors by their kind, others as
/// `bloomkit.Error`.
pub(crate) fn insert_error<E: std::error::Error + 'static>(e: E) -> PyErr {
    Failure::of(e).into_py()
}

pub(crate) fn contains<F>(lock: &Locked<F>, key: &Bound<'_, PyAny>) -> PyResult<bool>
where
    F: Lookup,
    F::Key: PyKey,
{
    <F::Key>::with_key(key, |k| lock.with(key.py(), |f| f.contains(k)))
}

pub(crate) fn insert<F>(lock: &Locked<F>, key: &Bound<'_, PyAny>) -> PyResult<bool>
where
    F: Filter,
    F::Key: PyKey,
{
    <F::Key>::with_key(key, |k| lock.with_mut(key.py(), |f| f.try_insert(k)))?.map_err(insert_error)
}

/// `remove`: `Ok(false)` when the key is not there (the caller decides whether that is an
/// error: `remove` raises, `discard` does not).
pub(crate) fn remove<F>(lock: &Locked<F>, key: &Bound<'_, PyAny>) -> PyResult<bool>
where
    F: Remove,
    F::Key: PyKey,
{
    match <F::Key>::with_key(key, |k| lock.with_mut(key.py(), |f| f.remove(k)))? {
        Ok(()) => Ok(true),
        Err(Error::NotPresent) => Ok(false),
        Err(e) => Err(errors::to_py(&e)),
    }
}

/// Where a batch's keys come from.
enum Source<'py> {
    /// An unsigned NumPy array (or any object with `dtype` and `astype`): read as
    /// little-endian `u64` words, 64 Ki keys at a time.
    Array(Bound<'py, PyAny>),
    /// The lines of a `bytes` object.
    Lines(Bound<'py, PyBytes>),
    /// Any iterable of keys.
    Iter(Bound<'py, PyAny>),
}

/// Keys of a NumPy array read per call: a bounded copy, however long the array.
const ARRAY_STEP: usize = 1 << 16;

fn source<'py>(keys: &Bound<'py, PyAny>, kind: KeyType) -> PyResult<Source<'py>> {
    if let Ok(bytes) = keys.cast::<PyBytes>() {
        return Ok(Source::Lines(bytes.clone()));
    }
    if keys.hasattr("dtype")? && keys.hasattr("astype")? {
        let dtype = keys.getattr("dtype")?;
        let code: String = dtype.getattr("kind")?.extract()?;
        if code == "u" {
            if kind != KeyType::Int {
                return Err(errors::key_type(format!(
                    "an array of unsigned integers holds int keys; this filter's keys are {}",
                    kind.name()
                )));
            }
            let ndim: usize = keys.getattr("ndim")?.extract()?;
            if ndim != 1 {
                return Err(errors::key_type(format!(
                    "an array of keys must have one dimension, this one has {ndim}"
                )));
            }
            // `copy=False`: no copy when the array is already little-endian uint64.
            let kwargs = pyo3::types::PyDict::new(keys.py());
            kwargs.set_item("copy", false)?;
            return Ok(Source::Array(keys.call_method(
                "astype",
                ("<u8",),
                Some(&kwargs),
            )?));
        }
        if kind == KeyType::Int {
            return Err(errors::key_type(format!(
                "an array of int keys must be of an unsigned dtype (uint64: negative numbers \
                 are not keys), got {}",
                dtype.str()?
            )));
        }
    }
    Ok(Source::Iter(keys.clone()))
}

/// Why the Rust half of a batch stopped: kept free of Python objects, since it may be made
/// on a thread that does not hold the GIL, and raised on the caller's.
#[derive(Debug)]
pub(crate) enum Failure {
    /// bloomkit's own error.
    Rust(Error),
    /// Another error type's message.
    Other(String),
}

impl Failure {
    /// An insert's error, whatever its type.
    pub(crate) fn of<E: std::error::Error + 'static>(e: E) -> Failure {
        match (&e as &dyn std::any::Any).downcast_ref::<Error>() {
            Some(inner) => Failure::Rust(inner.clone()),
            None => Failure::Other(e.to_string()),
        }
    }

    fn into_py(self) -> PyErr {
        match self {
            Failure::Rust(e) => errors::to_py(&e),
            Failure::Other(message) => errors::raise(errors::Kind::Other, message),
        }
    }
}

/// Whether batches overlap reading keys with the Rust work (`bloomkit._native._pipeline`,
/// for the benchmark's comparison; on by default).
pub(crate) static PIPELINE: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(true);

/// Reads the keys `keys` holds into chunks of [`CHUNK`] (a NumPy array's into chunks of
/// [`ARRAY_STEP`]) with the GIL held, handing each full chunk, then the last, to `emit`,
/// which leaves it empty.
fn produce<K: PyKey + ?Sized>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    mut emit: impl FnMut(&mut K::Chunk) -> PyResult<()>,
) -> PyResult<()> {
    let mut chunk = K::Chunk::default();
    match source(keys, K::KIND)? {
        Source::Lines(bytes) => {
            for line in bytes.as_bytes().split(|&b| b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.is_empty() {
                    continue;
                }
                chunk.push_line(line)?;
                if chunk.len() == CHUNK {
                    emit(&mut chunk)?;
                }
            }
        }
        Source::Array(array) => {
            let len = array.len()?;
            let mut start = 0;
            while start < len {
                let end = (start + ARRAY_STEP).min(len);
                let part = array.get_item(pyo3::types::PySlice::new(
                    py,
                    start as isize,
                    end as isize,
                    1,
                ))?;
                let bytes = part.call_method0("tobytes")?;
                let bytes = bytes.cast::<PyBytes>()?;
                chunk.push_words(bytes.as_bytes())?;
                emit(&mut chunk)?;
                start = end;
            }
        }
        Source::Iter(iterable) => {
            for key in iterable.try_iter()? {
                chunk.push(&key?)?;
                if chunk.len() == CHUNK {
                    emit(&mut chunk)?;
                }
            }
        }
    }
    if chunk.len() > 0 {
        emit(&mut chunk)?;
    }
    Ok(())
}

/// Runs `each` on every chunk of the keys `keys` holds, in order, with the GIL released.
///
/// Reading Python objects needs the GIL and the Rust work does not, so from the second
/// chunk on the two overlap: a worker thread runs `each` on one chunk while this thread
/// reads the next (at most one chunk waits between them). A batch of one chunk runs here
/// alone. The worker never touches Python; its errors come back as [`Failure`]s.
fn chunks<K: PyKey + ?Sized>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    each: impl FnMut(&K::Chunk) -> Result<(), Failure> + Send,
) -> PyResult<()> {
    use std::sync::mpsc;

    let pipelined = PIPELINE.load(std::sync::atomic::Ordering::Relaxed);
    std::thread::scope(|scope| {
        let mut each = Some(each);
        let mut worker = None;
        let mut full = 0usize;
        let read = produce::<K>(py, keys, |chunk| {
            full += 1;
            if pipelined && worker.is_none() && full >= 2 {
                if let Some(mut work) = each.take() {
                    let (to_worker, work_queue) = mpsc::sync_channel::<K::Chunk>(1);
                    let (spare_back, spares) = mpsc::channel::<K::Chunk>();
                    let handle = scope.spawn(move || -> Result<(), Failure> {
                        for mut chunk in work_queue {
                            work(&chunk)?;
                            chunk.clear();
                            let _ = spare_back.send(chunk);
                        }
                        Ok(())
                    });
                    worker = Some((to_worker, spares, handle));
                }
            }
            match (&mut each, &worker) {
                (Some(work), _) => {
                    py.detach(|| work(chunk)).map_err(Failure::into_py)?;
                    chunk.clear();
                }
                (None, Some((to_worker, spares, _))) => {
                    let next = spares.try_recv().unwrap_or_default();
                    let full_chunk = std::mem::replace(chunk, next);
                    if py.detach(|| to_worker.send(full_chunk)).is_err() {
                        // The worker stopped on an error: it is raised below.
                        return Err(errors::raise(errors::Kind::Other, "batch stopped".into()));
                    }
                }
                (None, None) => {}
            }
            Ok(())
        });
        if let Some((to_worker, _, handle)) = worker {
            drop(to_worker);
            match py.detach(|| handle.join()) {
                Ok(Ok(())) => {}
                Ok(Err(failure)) => return Err(failure.into_py()),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        read
    })
}

/// Whether the answers of a batch go back as a NumPy array (the keys came as one).
fn as_array(keys: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(!keys.is_instance_of::<PyBytes>() && keys.hasattr("dtype")? && keys.hasattr("astype")?)
}

/// `contains_many`: a list of `bool`, or a NumPy `bool` array for a NumPy array of keys.
pub(crate) fn contains_many<F>(
    py: Python<'_>,
    lock: &Locked<F>,
    keys: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>>
where
    F: Lookup + Send + Sync,
    F::Key: PyKey,
{
    let filter = lock.detach(py);
    answer_many::<F::Key>(py, keys, &|batch: &[&F::Key], out: &mut Vec<bool>| {
        filter.read().contains_batch(batch.iter().copied(), out);
    })
}

/// The answers of `batch` for every chunk of `keys`: a list of `bool`, or a NumPy `bool`
/// array for a NumPy array of keys.
pub(crate) fn answer_many<K: PyKey + ?Sized>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    batch: &(dyn Fn(&[&K], &mut Vec<bool>) + Sync),
) -> PyResult<Py<PyAny>> {
    let mut out: Vec<bool> = Vec::new();
    chunks::<K>(py, keys, |chunk| {
        chunk.with_keys(|keys| batch(keys, &mut out));
        Ok(())
    })?;
    if as_array(keys)? {
        let bytes: Vec<u8> = out.iter().map(|&b| u8::from(b)).collect();
        let buffer = PyByteArray::new(py, &bytes);
        let numpy = py.import("numpy")?;
        let array = numpy.call_method1("frombuffer", (buffer, numpy.getattr("bool_")?))?;
        return Ok(array.unbind());
    }
    Ok(PyList::new(py, out)?.into_any().unbind())
}

/// `add_many`: how many keys were new.
pub(crate) fn insert_many<F>(
    py: Python<'_>,
    lock: &Locked<F>,
    keys: &Bound<'_, PyAny>,
) -> PyResult<u64>
where
    F: Filter + Send + Sync,
    F::Key: PyKey,
{
    let filter = lock.detach(py);
    let mut new = 0u64;
    chunks::<F::Key>(py, keys, |chunk| {
        let added = chunk
            .with_keys(|keys| filter.write().try_insert_batch(keys.iter().copied()))
            .map_err(Failure::of)?;
        new += added as u64;
        Ok(())
    })?;
    Ok(new)
}

/// The filter's bytes (bloomkit's format: versioned, checksummed), built with the GIL
/// released.
pub(crate) fn to_bytes<'py, F: Codec + Send + Sync>(
    py: Python<'py>,
    lock: &Locked<F>,
) -> Bound<'py, PyBytes> {
    let filter = lock.detach(py);
    let bytes = py.detach(|| filter.read().to_bytes());
    PyBytes::new(py, &bytes)
}

/// A filter of type `F` from its bytes.
pub(crate) fn from_bytes<F: Codec + Send>(py: Python<'_>, bytes: &[u8]) -> PyResult<Locked<F>> {
    py.detach(|| F::from_bytes(bytes))
        .map(Locked::new)
        .map_err(|e| errors::to_py(&e))
}

/// A copy of the filter.
pub(crate) fn duplicate<F: Clone>(py: Python<'_>, lock: &Locked<F>) -> Locked<F> {
    Locked::new(lock.with(py, F::clone))
}

/// Whether two filters are equal: the same parameters, seed and contents.
pub(crate) fn equal<F: PartialEq>(py: Python<'_>, a: &Locked<F>, b: &Locked<F>) -> bool {
    if std::ptr::eq(a, b) {
        return true;
    }
    Locked::with_both(py, a, b, |a, b| a == b)
}

/// Every key of `keys` (any of `contains_many`'s sources), as Rust values.
pub(crate) fn collect<K>(py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<K::Owned>>
where
    K: PyKey + ToOwned + ?Sized,
    K::Owned: Send,
{
    let mut all = Vec::new();
    chunks::<K>(py, keys, |chunk| {
        chunk.with_keys(|keys| all.extend(keys.iter().map(|k| (*k).to_owned())));
        Ok(())
    })?;
    Ok(all)
}

/// The benchmark's yardstick (`bench/bench.py`): the seconds the Rust library's own
/// `contains_batch` takes over every key of `keys` (read into Rust values first, untimed),
/// run with the GIL released, and how many answered present: what a Rust program holding
/// the same filter and keys would measure. The Python path's overhead is its time over this.
pub(crate) fn time_contains_batch<F>(
    py: Python<'_>,
    lock: &Locked<F>,
    keys: &Bound<'_, PyAny>,
) -> PyResult<(f64, usize)>
where
    F: Lookup + Send + Sync,
    F::Key: PyKey + ToOwned,
    <F::Key as ToOwned>::Owned: Send + Sync,
{
    let all = collect::<F::Key>(py, keys)?;
    let filter = lock.detach(py);
    Ok(py.detach(|| {
        let f = filter.read();
        let mut out = Vec::with_capacity(all.len());
        let start = std::time::Instant::now();
        f.contains_batch(all.iter().map(std::borrow::Borrow::borrow), &mut out);
        let seconds = start.elapsed().as_secs_f64();
        (seconds, out.iter().filter(|&&b| b).count())
    }))
}
