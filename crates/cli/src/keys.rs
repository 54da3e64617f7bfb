//! Keys as lines: from files, or from stdin, read in chunks so a file of any size streams.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::CliError;

/// Keys are read and answered this many at a time (the batched lookups' and inserts'
/// chunk: large enough for their prefetching, small enough to stay in cache).
pub const CHUNK: usize = 4096;

/// The longest line read as a key (a larger one is an error naming its line, not an
/// allocation the size of the input).
pub const MAX_LINE: usize = 1 << 20;

/// Lines of one file after another (or of stdin, for no files or `-`): each line is a key
/// once its `\n` and a trailing `\r` are dropped; empty lines are skipped.
pub struct Lines {
    inputs: std::vec::IntoIter<Option<PathBuf>>,
    current: Option<(String, Box<dyn BufRead>)>,
    line: u64,
    buf: Vec<u8>,
    bytes: u64,
    keys: u64,
}

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lines")
            .field("input", &self.current.as_ref().map(|c| &c.0))
            .field("line", &self.line)
            .field("keys", &self.keys)
            .finish()
    }
}

impl Lines {
    /// The lines of `files` in order; of stdin when `files` is empty; `-` is stdin too.
    pub fn new(files: &[PathBuf]) -> Lines {
        let inputs: Vec<Option<PathBuf>> = if files.is_empty() {
            vec![None]
        } else {
            files
                .iter()
                .map(|f| (f.as_os_str() != "-").then(|| f.clone()))
                .collect()
        };
        Lines {
            inputs: inputs.into_iter(),
            current: None,
            line: 0,
            buf: Vec::new(),
            bytes: 0,
            keys: 0,
        }
    }

    /// The total size of the files, when every input is a regular file (for a progress bar).
    pub fn total_bytes(files: &[PathBuf]) -> Option<u64> {
        if files.is_empty() || files.iter().any(|f| f.as_os_str() == "-") {
            return None;
        }
        files
            .iter()
            .map(|f| {
                std::fs::metadata(f)
                    .ok()
                    .filter(std::fs::Metadata::is_file)
                    .map(|m| m.len())
            })
            .sum()
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// Keys read so far.
    pub fn keys_read(&self) -> u64 {
        self.keys
    }

    fn open(path: Option<&Path>) -> Result<(String, Box<dyn BufRead>), CliError> {
        match path {
            None => Ok((
                "stdin".into(),
                Box::new(BufReader::with_capacity(1 << 16, io::stdin())),
            )),
            Some(p) => {
                let name = p.display().to_string();
                let meta = std::fs::metadata(p).map_err(|e| CliError::at(&name, e))?;
                if meta.is_dir() {
                    return Err(CliError::at(&name, "is a directory, not a file of keys"));
                }
                let file = File::open(p).map_err(|e| CliError::at(&name, e))?;
                let reader: Box<dyn Read> = Box::new(file);
                Ok((name, Box::new(BufReader::with_capacity(1 << 16, reader))))
            }
        }
    }

    /// Clears `out` and fills it with up to `max` keys; `false` once every input is done
    /// (and `out` is empty).
    ///
    /// # Errors
    /// An input that cannot be opened or read, a line that is not UTF-8 or is longer than
    /// [`MAX_LINE`]: the message names the input and the line.
    pub fn next_chunk(&mut self, out: &mut Vec<String>, max: usize) -> Result<bool, CliError> {
        out.clear();
        while out.len() < max {
            if self.current.is_none() {
                match self.inputs.next() {
                    None => break,
                    Some(path) => {
                        self.current = Some(Self::open(path.as_deref())?);
                        self.line = 0;
                    }
                }
            }
            let (name, reader) = self.current.as_mut().expect("an input is open");
            self.buf.clear();
            let got = reader
                .by_ref()
                .take(MAX_LINE as u64 + 2)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| CliError::at(&*name, e))?;
            if got == 0 {
                self.current = None;
                continue;
            }
            self.line += 1;
            self.bytes += got as u64;
            let mut line = &self.buf[..];
            if let Some(rest) = line.strip_suffix(b"\n") {
                line = rest;
            } else if got > MAX_LINE {
                return Err(CliError::new(format!(
                    "{name}: line {} is longer than {MAX_LINE} bytes",
                    self.line
                )));
            }
            if let Some(rest) = line.strip_suffix(b"\r") {
                line = rest;
            }
            if line.is_empty() {
                continue;
            }
            if line.len() > MAX_LINE {
                return Err(CliError::new(format!(
                    "{name}: line {} is longer than {MAX_LINE} bytes",
                    self.line
                )));
            }
            let key = std::str::from_utf8(line).map_err(|e| {
                CliError::new(format!("{name}: line {} is not UTF-8 ({e})", self.line))
            })?;
            out.push(key.to_owned());
            self.keys += 1;
        }
        Ok(!out.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_skip_blanks_drop_cr_and_name_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        std::fs::write(&a, b"one\r\n\ntwo\nthree").unwrap();
        let b = dir.path().join("b.txt");
        std::fs::write(&b, b"four\n\xff\xfe\n").unwrap();
        let mut lines = Lines::new(&[a.clone(), b]);
        let mut out = Vec::new();
        assert!(lines.next_chunk(&mut out, 2).unwrap());
        assert_eq!(out, ["one", "two"]);
        assert!(lines
            .next_chunk(&mut out, 10)
            .is_err_and(|e| e.to_string().contains("line 2 is not UTF-8")));
        let mut lines = Lines::new(&[a]);
        assert!(lines.next_chunk(&mut out, 10).unwrap());
        assert_eq!(out, ["one", "two", "three"]);
        assert!(!lines.next_chunk(&mut out, 10).unwrap());
        assert!(out.is_empty());
    }
}
