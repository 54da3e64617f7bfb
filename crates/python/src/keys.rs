//! Python objects as keys: each filter declares its key type (`key=str`, `bytes` or `int`),
//! and a key is hashed exactly as the Rust filter of that type hashes it (`str` as a Rust
//! `str`, `bytes` as a `[u8]`, `int` as a `u64`), so the bytes of a filter agree between
//! the two languages.
//!
//! Keys are read in chunks: a chunk copies the keys' bytes into one buffer while the GIL is
//! held, and the filter then answers the whole chunk with the GIL released.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyString, PyType};

use crate::errors;

/// Keys per chunk of a batch: large enough that the batched lookup's prefetch pipeline runs
/// full and the GIL is released rarely, small enough that the copy stays in cache.
pub(crate) const CHUNK: usize = 4096;

/// Which key type a filter holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyType {
    Str,
    Bytes,
    Int,
}

impl KeyType {
    /// The Python name of the key type.
    pub(crate) fn name(self) -> &'static str {
        match self {
            KeyType::Str => "str",
            KeyType::Bytes => "bytes",
            KeyType::Int => "int",
        }
    }

    /// The Python type object (`str`, `bytes`, `int`), for `repr` and pickling.
    pub(crate) fn type_object(self, py: Python<'_>) -> Bound<'_, PyType> {
        match self {
            KeyType::Str => py.get_type::<PyString>(),
            KeyType::Bytes => py.get_type::<PyBytes>(),
            KeyType::Int => py.get_type::<PyInt>(),
        }
    }

    /// The key type a `key=` argument names: the type `str`, `bytes` or `int`, or its name.
    pub(crate) fn from_arg(arg: Option<&Bound<'_, PyAny>>) -> PyResult<KeyType> {
        let Some(arg) = arg else {
            return Ok(KeyType::Str);
        };
        let py = arg.py();
        if let Ok(name) = arg.cast::<PyString>() {
            return match &*name.to_cow()? {
                "str" => Ok(KeyType::Str),
                "bytes" => Ok(KeyType::Bytes),
                "int" => Ok(KeyType::Int),
                other => Err(errors::key_type(format!(
                    "key must be str, bytes or int, got {other:?}"
                ))),
            };
        }
        for kind in [KeyType::Str, KeyType::Bytes, KeyType::Int] {
            if arg.is(kind.type_object(py)) {
                return Ok(kind);
            }
        }
        Err(errors::key_type(format!(
            "key must be str, bytes or int, got {}",
            arg.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        )))
    }
}

/// The name of an object's type, for a `TypeError`.
pub(crate) fn type_name(ob: &Bound<'_, PyAny>) -> String {
    ob.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// A key type of the Rust filters that Python keys map to.
pub(crate) trait PyKey: std::hash::Hash + Sync + 'static {
    /// Which Python type it is.
    const KIND: KeyType;
    /// A chunk of keys of this type, read from Python objects.
    type Chunk: Chunk<Self> + Default + Send + Sync;

    /// Runs `f` on the key `ob` is, or says why it is not one.
    fn with_key<R>(ob: &Bound<'_, PyAny>, f: impl FnOnce(&Self) -> R) -> PyResult<R>;
}

/// Keys gathered for one batched call.
pub(crate) trait Chunk<K: ?Sized> {
    /// Appends the key `ob` is.
    fn push(&mut self, ob: &Bound<'_, PyAny>) -> PyResult<()>;
    /// Appends one line of a `bytes` object.
    fn push_line(&mut self, line: &[u8]) -> PyResult<()>;
    /// Appends the keys of an array of little-endian 64-bit words (a NumPy `uint64` array's
    /// bytes): int keys only.
    fn push_words(&mut self, words: &[u8]) -> PyResult<()> {
        let _ = words;
        Err(errors::key_type(
            "an array of unsigned integers holds int keys, not this filter's".into(),
        ))
    }
    /// How many keys it holds.
    fn len(&self) -> usize;
    /// Forgets its keys, keeping the allocation.
    fn clear(&mut self);
    /// Runs `f` on the keys.
    fn with_keys<R>(&self, f: impl FnOnce(&[&K]) -> R) -> R;
}

fn wrong_type(kind: KeyType, ob: &Bound<'_, PyAny>) -> PyErr {
    errors::key_type(format!(
        "this filter's keys are {}, got {}",
        kind.name(),
        type_name(ob)
    ))
}

/// The UTF-8 text of a `str` key, borrowed from the object where CPython allows.
fn text<'a>(ob: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    match ob.cast::<PyString>() {
        Ok(s) => crate::text::utf8(s).map_err(|e| {
            // A lone surrogate: a `str` with no UTF-8 form, hence no key.
            errors::key_type(format!("a str key must be encodable as UTF-8: {e}"))
        }),
        Err(_) => Err(wrong_type(KeyType::Str, ob)),
    }
}

impl PyKey for str {
    const KIND: KeyType = KeyType::Str;
    type Chunk = Strings;

    fn with_key<R>(ob: &Bound<'_, PyAny>, f: impl FnOnce(&str) -> R) -> PyResult<R> {
        Ok(f(&text(ob)?))
    }
}

impl PyKey for [u8] {
    const KIND: KeyType = KeyType::Bytes;
    type Chunk = ByteStrings;

    fn with_key<R>(ob: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
        match ob.cast::<PyBytes>() {
            Ok(b) => Ok(f(b.as_bytes())),
            Err(_) => Err(wrong_type(KeyType::Bytes, ob)),
        }
    }
}

/// An `int` key as a `u64`, or why it is not one (a `bool` is refused: `True` is not the
/// key 1 to a reader of the code).
pub(crate) fn int_key(ob: &Bound<'_, PyAny>) -> PyResult<u64> {
    if ob.is_instance_of::<pyo3::types::PyBool>() || !ob.is_instance_of::<PyInt>() {
        return Err(wrong_type(KeyType::Int, ob));
    }
    ob.extract::<u64>().map_err(|_| {
        errors::key_range(format!(
            "int keys are 0..2**64, got {}",
            ob.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        ))
    })
}

impl PyKey for u64 {
    const KIND: KeyType = KeyType::Int;
    type Chunk = Ints;

    fn with_key<R>(ob: &Bound<'_, PyAny>, f: impl FnOnce(&u64) -> R) -> PyResult<R> {
        Ok(f(&int_key(ob)?))
    }
}

/// Byte-string keys, end to end in one buffer.
#[derive(Debug, Default)]
pub(crate) struct ByteStrings {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl ByteStrings {
    fn add(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    fn slices(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let key = &self.bytes[start..end];
                start = end;
                key
            })
            .collect()
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }
}

impl Chunk<[u8]> for ByteStrings {
    fn push(&mut self, ob: &Bound<'_, PyAny>) -> PyResult<()> {
        <[u8]>::with_key(ob, |key| self.add(key))
    }
    fn push_line(&mut self, line: &[u8]) -> PyResult<()> {
        self.add(line);
        Ok(())
    }
    fn len(&self) -> usize {
        self.ends.len()
    }
    fn clear(&mut self) {
        ByteStrings::clear(self);
    }
    fn with_keys<R>(&self, f: impl FnOnce(&[&[u8]]) -> R) -> R {
        f(&self.slices())
    }
}

/// `str` keys, end to end in one `String`.
#[derive(Debug, Default)]
pub(crate) struct Strings {
    text: String,
    ends: Vec<usize>,
}

impl Strings {
    fn add(&mut self, key: &str) {
        self.text.push_str(key);
        self.ends.push(self.text.len());
    }
}

impl Chunk<str> for Strings {
    fn push(&mut self, ob: &Bound<'_, PyAny>) -> PyResult<()> {
        self.add(&text(ob)?);
        Ok(())
    }
    fn push_line(&mut self, line: &[u8]) -> PyResult<()> {
        match std::str::from_utf8(line) {
            Ok(s) => {
                self.add(s);
                Ok(())
            }
            Err(e) => Err(errors::key_type(format!(
                "a line of the bytes is not UTF-8 text ({e}), and this filter's keys are str: \
                 declare key=bytes to use raw lines"
            ))),
        }
    }
    fn len(&self) -> usize {
        self.ends.len()
    }
    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }
    fn with_keys<R>(&self, f: impl FnOnce(&[&str]) -> R) -> R {
        let mut start = 0;
        let keys: Vec<&str> = self
            .ends
            .iter()
            .map(|&end| {
                // Every end is the end of a whole key, so a char boundary.
                let key = self.text.get(start..end).unwrap_or_default();
                start = end;
                key
            })
            .collect();
        f(&keys)
    }
}

/// Integer keys.
#[derive(Debug, Default)]
pub(crate) struct Ints(pub(crate) Vec<u64>);

impl Chunk<u64> for Ints {
    fn push(&mut self, ob: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.push(int_key(ob)?);
        Ok(())
    }
    fn push_line(&mut self, _: &[u8]) -> PyResult<()> {
        Err(errors::key_type(
            "this filter's keys are int; lines of bytes are keys of str or bytes filters".into(),
        ))
    }
    fn push_words(&mut self, words: &[u8]) -> PyResult<()> {
        self.0.extend(
            words
                .chunks_exact(8)
                .map(|w| u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])),
        );
        Ok(())
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    fn with_keys<R>(&self, f: impl FnOnce(&[&u64]) -> R) -> R {
        let keys: Vec<&u64> = self.0.iter().collect();
        f(&keys)
    }
}
