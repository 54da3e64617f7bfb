//! The filter file: a header naming the store state it reflects, then the filter's bytes.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "BKKVFLT1"
//!      8     8  store id (little-endian)
//!     16     8  generation (little-endian)
//!     24     8  length of the filter bytes (little-endian)
//!     32     8  XXH3-64 of bytes 0..32
//!     40     -  the filter in bloomkit's byte format (checksummed on its own)
//! ```
//!
//! Written to a temporary file, flushed to disk, then renamed over the old one (and the
//! directory flushed), so a crash leaves the old file or the new one, never half of one.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use twox_hash::XxHash3_64;

use crate::guard::GuardFilter;
use crate::store::Marker;

const MAGIC: &[u8; 8] = b"BKKVFLT1";
const HEADER: usize = 40;

/// Why a filter file was not loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unusable {
    Missing,
    Corrupt(String),
    Stale { file: Marker },
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// Writes `filter`, reflecting the store state `marker`, to `path` atomically.
pub(crate) fn write<F: GuardFilter>(path: &Path, marker: Marker, filter: &F) -> io::Result<()> {
    let tmp = temp_path(path);
    let mut header = [0u8; HEADER];
    header[..8].copy_from_slice(MAGIC);
    header[8..16].copy_from_slice(&marker.store_id.to_le_bytes());
    header[16..24].copy_from_slice(&marker.generation.to_le_bytes());
    header[24..32].copy_from_slice(&filter.serialized_len().to_le_bytes());
    let check = XxHash3_64::oneshot(&header[..32]);
    header[32..].copy_from_slice(&check.to_le_bytes());

    let file = File::create(&tmp)?;
    let mut out = BufWriter::new(file);
    out.write_all(&header)?;
    filter.write_to(&mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    drop(file);
    fs::rename(&tmp, path)?;
    // The rename itself must reach the disk before the file counts as written.
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Reads the filter file at `path` if it reflects the state `current`.
pub(crate) fn read<F: GuardFilter>(path: &Path, current: Marker) -> Result<F, Unusable> {
    // A temporary file left by a crash mid-write is never read; remove it.
    let _ = fs::remove_file(temp_path(path));
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Unusable::Missing),
        Err(e) => return Err(Unusable::Corrupt(format!("cannot open it: {e}"))),
    };
    let corrupt = |what: String| Unusable::Corrupt(what);
    let file_len = file
        .metadata()
        .map_err(|e| corrupt(format!("cannot stat it: {e}")))?
        .len();
    let mut input = BufReader::new(file);
    let mut header = [0u8; HEADER];
    input
        .read_exact(&mut header)
        .map_err(|e| corrupt(format!("header: {e}")))?;
    if &header[..8] != MAGIC {
        return Err(corrupt("not a bloomkit-kv filter file (bad magic)".into()));
    }
    let word = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
    if XxHash3_64::oneshot(&header[..32]) != word(32) {
        return Err(corrupt("header checksum mismatch".into()));
    }
    let file_marker = Marker {
        store_id: word(8),
        generation: word(16),
    };
    if file_marker != current {
        return Err(Unusable::Stale { file: file_marker });
    }
    let len = word(24);
    if file_len != HEADER as u64 + len {
        return Err(corrupt(format!(
            "{file_len} bytes, the header announces {}",
            HEADER as u64 + len
        )));
    }
    F::read_from(input.take(len)).map_err(|e| corrupt(format!("filter bytes: {e}")))
}
