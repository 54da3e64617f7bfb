//! Rust errors as Python exceptions: the classes live in `bloomkit._errors` (each a
//! subclass of `bloomkit.Error` and of the built-in exception for what happened) and carry
//! the Rust library's message.

use bloomkit::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// One of `bloomkit._errors`'s classes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Parameter,
    KeyType,
    KeyRange,
    OutOfRange,
    Capacity,
    Allocation,
    Incompatible,
    Decode,
    NotPresent,
    Unsupported,
    File,
    Other,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::Parameter => "ParameterError",
            Kind::KeyType => "KeyTypeError",
            Kind::KeyRange => "KeyRangeError",
            Kind::OutOfRange => "OutOfRangeError",
            Kind::Capacity => "CapacityError",
            Kind::Allocation => "AllocationError",
            Kind::Incompatible => "IncompatibleError",
            Kind::Decode => "DecodeError",
            Kind::NotPresent => "NotPresentError",
            Kind::Unsupported => "UnsupportedError",
            Kind::File => "FileError",
            Kind::Other => "Error",
        }
    }
}

/// The exception of `kind` with `message`.
pub(crate) fn raise(kind: Kind, message: String) -> PyErr {
    Python::attach(|py| {
        static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
        let class = MODULE
            .get_or_try_init(py, || py.import("bloomkit._errors").map(Bound::unbind))
            .and_then(|m| m.bind(py).getattr(kind.class_name()))
            .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
        match class {
            Ok(class) => PyErr::from_type(class, message),
            // Only when the package's Python half is missing (the native module imported
            // alone): the message is kept.
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// A key of the wrong type.
pub(crate) fn key_type(message: String) -> PyErr {
    raise(Kind::KeyType, message)
}

/// An `int` key outside 0..2**64.
pub(crate) fn key_range(message: String) -> PyErr {
    raise(Kind::KeyRange, message)
}

/// Which class a Rust error is.
fn kind_of(e: &Error) -> Kind {
    match e {
        Error::ZeroItems
        | Error::FprBelowMinimum { .. }
        | Error::InvalidFpr(_)
        | Error::ZeroBits
        | Error::InvalidHashCount { .. }
        | Error::UnreachableFpr { .. }
        | Error::EmptyRange { .. }
        | Error::InvalidSlack(_)
        | Error::ZeroSpan
        | Error::InvalidGrowth { .. }
        | Error::TooLarge { .. }
        | Error::OverLimit { .. }
        | Error::ConstructionFailed { .. } => Kind::Parameter,
        Error::Full { .. }
        | Error::LimitReached { .. }
        | Error::WindowFull { .. }
        | Error::GrowthStopped { .. }
        | Error::CannotResize { .. } => Kind::Capacity,
        Error::AllocationFailed { .. } => Kind::Allocation,
        Error::Incompatible { .. }
        | Error::IncompatibleSettings { .. }
        | Error::RangeMismatch { .. }
        | Error::NoFilters
        | Error::MergeFailed { .. } => Kind::Incompatible,
        Error::KeyOutOfRange { .. } => Kind::OutOfRange,
        Error::NotPresent => Kind::NotPresent,
        Error::Unsupported(_) => Kind::Unsupported,
        Error::Decode(_)
        | Error::WordCount { .. }
        | Error::StrayBits { .. }
        | Error::PartialBlock { .. }
        | Error::InvalidFill { .. } => Kind::Decode,
        _ => Kind::Other,
    }
}

/// The Python exception for a Rust error.
pub(crate) fn to_py(e: &Error) -> PyErr {
    raise(kind_of(e), e.to_string())
}

/// The Python exception for a file's I/O error, naming the file.
pub(crate) fn io(path: &std::path::Path, what: &str, e: &std::io::Error) -> PyErr {
    raise(Kind::File, format!("cannot {what} {}: {e}", path.display()))
}
