//! Opening a filter file: read it into an aligned buffer (or map it, with `--mmap`), read
//! its header, and hand back the variant it holds, as a zero-copy view where the variant has
//! one.
//!
//! Files are read, not mapped, unless asked: a read is a snapshot, so a file that another
//! process truncates or rewrites meanwhile gives a consistent answer or a one-line error (a
//! truncated read fails the checksum or the length checks), where a mapped one could kill the
//! process (`SIGBUS`) or change under a view. Reading costs one pass over the file; `--mmap`
//! saves it for large files nothing else writes.
//!
//! This is the crate's one module with `unsafe`: mapping a file.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use bloomkit::format::{self, AlignedBytes, Header, Reader, Verify};
use bloomkit::jvm::JvmFormat;
use bloomkit::prelude::*;
use bloomkit::registry::{self, AnyLookup};
use bloomkit::{DecodeError, Variant};
use memmap2::Mmap;

use crate::jvm::JvmFilter;
use crate::CliError;

/// How a file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Map the file, or read it into memory (the default; see the module docs).
    pub mmap: bool,
    /// Check the payload's checksum before answering (the default: reads the whole file
    /// once); the header and parameters' checksum is always checked.
    pub verify: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            mmap: false,
            verify: true,
        }
    }
}

enum Bytes {
    Map(Mmap),
    Owned(AlignedBytes),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(b) => b.as_bytes(),
        }
    }
}

/// A filter file's bytes, mapped or read, and what its first bytes say it is.
pub struct FilterFile {
    path: PathBuf,
    bytes: Bytes,
    kind: Kind,
    options: Options,
}

impl std::fmt::Debug for FilterFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilterFile")
            .field("path", &self.path)
            .field("len", &self.bytes.len())
            .field("kind", &self.kind)
            .finish()
    }
}

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// bloomkit's byte format (`docs/format.md`), with this header.
    Bloomkit(Header),
    /// The bytes Parquet stores for a column chunk's Bloom filter (Thrift header, bitset).
    Parquet,
    /// Guava's or Spark's Bloom filter bytes ([`crate::jvm`]).
    Jvm(JvmFormat),
}

impl FilterFile {
    /// Maps (or reads) `path` and reads its header.
    ///
    /// # Errors
    /// A missing, unreadable or empty file, a directory, or bytes that are neither
    /// bloomkit's format nor Parquet's filter bytes.
    pub fn read(path: &Path, options: Options) -> Result<FilterFile, CliError> {
        let name = path.display();
        let mut file = File::open(path).map_err(|e| CliError::at(&name, e))?;
        // The opened file's metadata: what is read is what was checked.
        let meta = file.metadata().map_err(|e| CliError::at(&name, e))?;
        if meta.is_dir() {
            return Err(CliError::at(&name, "is a directory, not a filter file"));
        }
        // A pipe, a device or a process substitution (`<(...)`) has no length of its own:
        // read up to the length its header declares, and no further (`/dev/zero` is not
        // read to the end of memory).
        if !meta.is_file() {
            let data = read_declared(&mut file).map_err(|e| CliError::at(&name, e))?;
            return Self::from_bytes(&name.to_string(), &data, options);
        }
        if meta.len() == 0 {
            return Err(CliError::at(&name, "is empty, not a filter file"));
        }
        let bytes = if options.mmap {
            // SAFETY: the map is read-only and lives in `FilterFile`, which every view
            // borrows; the file must not be truncated or rewritten while it is mapped (the
            // condition `--mmap` states in `--help`; without it the file is read).
            let map = unsafe { Mmap::map(&file) }.map_err(|e| CliError::at(&name, e))?;
            Bytes::Map(map)
        } else {
            // At most the length seen at open: a file that grows meanwhile is read as it
            // was, one that shrinks reads short and fails its checks.
            let data = AlignedBytes::read_from(&mut file, meta.len())
                .map_err(|e| CliError::at(&name, e))?;
            if data.is_empty() {
                return Err(CliError::at(&name, "is empty, not a filter file"));
            }
            Bytes::Owned(data)
        };
        Self::classify(path.to_path_buf(), bytes, options)
    }

    /// The same over bytes in memory (copied into an aligned buffer); `name` names them in
    /// messages.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn from_bytes(name: &str, bytes: &[u8], options: Options) -> Result<FilterFile, CliError> {
        if bytes.is_empty() {
            return Err(CliError::at(name, "is empty, not a filter file"));
        }
        Self::classify(
            PathBuf::from(name),
            Bytes::Owned(AlignedBytes::copy_from(bytes)),
            options,
        )
    }

    fn classify(path: PathBuf, bytes: Bytes, options: Options) -> Result<FilterFile, CliError> {
        // (A view checks its bytes as it opens them; a file read short fails there.)
        let kind = if bytes.starts_with(&format::MAGIC) {
            Kind::Bloomkit(format::peek(&bytes).map_err(|e| CliError::at(path.display(), e))?)
        } else if let Some(jvm) = JvmFormat::sniff(&bytes) {
            Kind::Jvm(jvm)
        } else {
            match SplitBlockFilter::<str>::from_parquet_bytes(&bytes) {
                Ok(_) => Kind::Parquet,
                Err(e) => {
                    let start: String = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
                    return Err(CliError::new(format!(
                        "{}: not a bloomkit filter (it starts with {start}, not \"BLMK\"), nor \
                         Guava's or Spark's Bloom filter bytes, nor Parquet's ({e})",
                        path.display()
                    )));
                }
            }
        };
        Ok(FilterFile {
            path,
            bytes,
            kind,
            options,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// What it holds.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The variant, for bloomkit's and Parquet's bytes; `None` for the JVM's, which are
    /// none of bloomkit's variants.
    pub fn variant(&self) -> Option<Variant> {
        match self.kind {
            Kind::Bloomkit(h) => Some(h.variant),
            Kind::Parquet => Some(Variant::SplitBlock),
            Kind::Jvm(_) => None,
        }
    }

    /// [`variant`](Self::variant), or an error saying the file is a JVM filter and which
    /// commands read it (for the commands that need one of bloomkit's variants).
    ///
    /// # Errors
    /// A Guava or Spark file.
    pub fn require_variant(&self) -> Result<Variant, CliError> {
        self.variant().ok_or_else(|| {
            self.err(
                "a Guava or Spark BloomFilter, not one of bloomkit's variants: `bloomkit info` \
                 and `bloomkit query --funnel` read it (bloomkit::jvm combines them in Rust)",
            )
        })
    }

    fn verify(&self) -> Verify {
        if self.options.verify {
            Verify::All
        } else {
            Verify::SkipPayloadChecksum
        }
    }

    fn err(&self, e: impl std::fmt::Display) -> CliError {
        CliError::at(self.path.display(), e)
    }

    /// Checks the envelope and the checksums (the payload's too unless the options skip
    /// it), for any variant, without decoding.
    ///
    /// # Errors
    /// The first check that fails.
    pub fn check(&self) -> Result<(), CliError> {
        if let Kind::Bloomkit(h) = self.kind {
            Reader::open(&self.bytes, h.variant, self.verify()).map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// The filter the file holds, keyed by `str` (lines): a view over the bytes where the
    /// variant has one, decoded otherwise (through the family's one list,
    /// [`bloomkit::registry`]).
    ///
    /// # Errors
    /// Corrupt or truncated bytes, a keyed hasher (its key is not in the file), the
    /// variants whose keys are not strings (the bitmap's integers, the multi-attribute
    /// filter's records), and the JVM's filters (see [`open_jvm`](Self::open_jvm)).
    pub fn open(&self) -> Result<Box<dyn AnyLookup + '_>, CliError> {
        let b: &[u8] = &self.bytes;
        match self.kind {
            Kind::Jvm(JvmFormat::Guava(_)) => Err(self.err(
                "a Guava BloomFilter, not one of bloomkit's variants: `bloomkit query` (with \
                 --funnel) and `bloomkit info` read it",
            )),
            Kind::Jvm(JvmFormat::Spark(_)) => Err(self.err(
                "a Spark sketch BloomFilter, not one of bloomkit's variants: `bloomkit query` \
                 (with --funnel) and `bloomkit info` read it",
            )),
            Kind::Parquet => SplitBlockFilter::<str>::from_parquet_bytes(b)
                .map(|f| -> Box<dyn AnyLookup> { Box::new(f) })
                .map_err(|x| self.err(x)),
            Kind::Bloomkit(_) => registry::open(b, self.verify()).map_err(|x| self.err(x)),
        }
    }
}

impl FilterFile {
    /// The Guava or Spark filter the file holds, decoded; `None` for bloomkit's and
    /// Parquet's bytes ([`open`](Self::open)).
    ///
    /// # Errors
    /// The decoder's.
    pub fn open_jvm(&self) -> Result<Option<JvmFilter>, CliError> {
        match self.kind {
            Kind::Jvm(format) => {
                JvmFilter::decode(&self.path.display().to_string(), format, &self.bytes).map(Some)
            }
            _ => Ok(None),
        }
    }
}

/// The bytes of a filter from a stream without a length (a pipe, a device): the first
/// bytes, then as many more as the header declares (bloomkit's format or Parquet's filter
/// bytes), never more; memory grows only with what arrives.
///
/// # Errors
/// A read error, or first bytes that are neither format (their own error).
fn read_declared(input: &mut File) -> std::io::Result<Vec<u8>> {
    let invalid = |e: DecodeError| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
    // Enough for either header (a Parquet header may carry fields it skips).
    let mut data = Vec::with_capacity(4096);
    input.by_ref().take(4096).read_to_end(&mut data)?;
    if data.is_empty() {
        return Ok(data);
    }
    let declared = if data.starts_with(&format::MAGIC) {
        format::declared_len(&data).map_err(invalid)?
    } else if let Some((_, len)) = JvmFormat::peek(&data) {
        len
    } else {
        SplitBlockFilter::<[u8]>::parquet_len(&data).map_err(|e| {
            invalid(DecodeError::Invalid(format!(
                "not a bloomkit filter (no \"BLMK\"), nor Guava's or Spark's Bloom filter \
                 bytes, nor Parquet's ({e})"
            )))
        })?
    };
    let held = data.len() as u64;
    if declared <= held {
        data.truncate(declared as usize);
    } else {
        input.take(declared - held).read_to_end(&mut data)?;
    }
    Ok(data)
}
