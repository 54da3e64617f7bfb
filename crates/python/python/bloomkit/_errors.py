"""bloomkit's exceptions: one base class, each also the built-in exception a Python user
would catch for what happened (a bad parameter is a ``ValueError``, a key of the wrong type a
``TypeError``, ...). Every message is the Rust library's own."""

from __future__ import annotations

__all__ = [
    "Error",
    "ParameterError",
    "KeyTypeError",
    "KeyRangeError",
    "OutOfRangeError",
    "CapacityError",
    "AllocationError",
    "IncompatibleError",
    "DecodeError",
    "NotPresentError",
    "UnsupportedError",
    "FileError",
]


class Error(Exception):
    """The base class of every error bloomkit raises."""


class ParameterError(Error, ValueError):
    """A parameter out of its domain: 0 expected items, a rate outside (0, 1), NaN, a
    memory limit too small for the filter asked for."""


class KeyTypeError(Error, TypeError):
    """A key of another type than the filter's (``key=str``, ``bytes`` or ``int``), a
    ``key=`` naming another type, or a ``str`` with no UTF-8 form (a lone surrogate)."""


class KeyRangeError(Error, OverflowError):
    """An ``int`` key outside 0..2**64."""


class OutOfRangeError(Error, ValueError):
    """A key outside a bitmap's range."""


class CapacityError(Error, OverflowError):
    """The filter is full, at its memory or item limit, or cannot grow further; the key was
    not inserted (in ``add_many``, the batches before its own were)."""


class AllocationError(Error, MemoryError):
    """The memory for the filter could not be allocated."""


class IncompatibleError(Error, ValueError):
    """Two filters that cannot be combined (sizes, seeds or key types differ)."""


class DecodeError(Error, ValueError):
    """Bytes that are not a filter of this class: truncated, corrupt, another variant, a
    newer format."""


class NotPresentError(Error, KeyError):
    """``remove`` of a key the filter does not hold (``discard`` ignores it)."""

    def __str__(self) -> str:  # KeyError quotes its argument; the message reads better plain
        return str(self.args[0]) if self.args else ""


class UnsupportedError(Error, TypeError):
    """An operation the variant does not have."""


class FileError(Error, OSError):
    """A file could not be read or written."""
