//! The command's one error type: a one-line message, printed as `error: ...` with exit
//! status 2.

use std::fmt;

/// What went wrong, in one line that names the file, key or flag at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError(String);

impl CliError {
    /// An error with this message (newlines become spaces: one line on a terminal).
    pub fn new(message: impl Into<String>) -> CliError {
        let message: String = message.into();
        CliError(message.replace(['\n', '\r'], " "))
    }

    /// `what: error`, the way every message names its subject.
    pub fn at(what: impl fmt::Display, error: impl fmt::Display) -> CliError {
        CliError::new(format!("{what}: {error}"))
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CliError {}
