//! A `str` key's UTF-8 bytes without a copy.
//!
//! CPython keeps a `str`'s UTF-8 form inside the object (for ASCII text it *is* the
//! object's data) and hands it out through `PyUnicode_AsUTF8AndSize`. That function is in
//! the stable ABI from Python 3.10; the wheel's ABI floor is 3.9, where the same function,
//! with the same signature since Python 3.3, is exported by CPython's library on Linux and
//! macOS but not declared by PyO3. Without it, PyO3 on the 3.9 ABI encodes each key into a
//! new `bytes` object: an allocation and a copy per key, which made `key in f` 2.6x slower
//! for `str` keys than for `bytes` keys (192 ns against 74 ns, `bench/bench.py`'s keys).
//!
//! Where the declaration would not hold (Windows, whose `python3.dll` exports only the
//! stable ABI of the wheel's floor, and PyPy, whose symbol has another name), or is not
//! needed (an ABI floor of 3.10 or a build for one interpreter, where PyO3's `to_str` is
//! this same call), PyO3's safe calls are used.

#![allow(unsafe_code)]

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::PyString;

/// The UTF-8 text of `s`, borrowed from the object for as long as the caller holds it
/// (copied only where CPython's cached form cannot be reached).
pub(crate) fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    #[cfg(all(Py_LIMITED_API, not(Py_3_10), not(PyPy), not(windows)))]
    return cached::utf8(s).map(Cow::Borrowed);
    #[cfg(not(all(Py_LIMITED_API, not(Py_3_10), not(PyPy), not(windows))))]
    return s.to_cow();
}

#[cfg(all(Py_LIMITED_API, not(Py_3_10), not(PyPy), not(windows)))]
mod cached {
    use std::os::raw::c_char;

    use pyo3::ffi::{PyObject, Py_ssize_t};
    use pyo3::prelude::*;
    use pyo3::types::PyString;

    unsafe extern "C" {
        /// CPython: "Return a pointer to the UTF-8 encoding of the Unicode object, and store the
        /// size of the encoded representation (in bytes) in size. [...] The returned buffer
        /// always has an extra null byte appended [...]. This caches the UTF-8 representation
        /// of the string in the Unicode object, and subsequent calls will return a pointer to
        /// the same buffer. The caller is not responsible for deallocating the buffer. The
        /// buffer is deallocated and pointers to it become invalid when the Unicode object is
        /// garbage collected." On error (a lone surrogate) it sets an exception and returns
        /// NULL.
        fn PyUnicode_AsUTF8AndSize(unicode: *mut PyObject, size: *mut Py_ssize_t) -> *const c_char;
    }

    /// The UTF-8 text of `s`, borrowed from the object for as long as the caller holds it.
    pub(super) fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
        let mut size: Py_ssize_t = 0;
        // SAFETY: `s` is a live `str` (a `Bound` holds a strong reference and the GIL, or the
        // thread's attachment), the call's documented contract above; `size` is a valid place
        // to write.
        let ptr = unsafe { PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size) };
        if ptr.is_null() {
            return Err(PyErr::take(s.py()).unwrap_or_else(|| {
                pyo3::exceptions::PyUnicodeEncodeError::new_err("a str with no UTF-8 form")
            }));
        }
        let len = usize::try_from(size).unwrap_or(0);
        // SAFETY: CPython returned a buffer of `size` bytes that lives as long as the object,
        // which `s` keeps alive for `'a`; nothing writes to it (a `str` is immutable).
        let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: CPython encodes with the strict UTF-8 codec (a lone surrogate is the error
        // above, never written), so the buffer is valid UTF-8. Checking it again cost 6% of a
        // batch of URL-sized keys.
        Ok(unsafe { std::str::from_utf8_unchecked(bytes) })
    }
}
