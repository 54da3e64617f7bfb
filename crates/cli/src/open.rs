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

use bloomkit::counting::U4;
use bloomkit::format::{self, AlignedBytes, Header, Reader, Verify};
use bloomkit::prelude::*;
use bloomkit::{
    BinaryFuseRef, BlockedBloomFilterRef, BloomFilterRef, Codec, DecodeError, LookupCore,
    QuotientFilterRef, RibbonFilterRef, SimdBlockFilterRef, Variant,
};
use memmap2::Mmap;

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
}

/// Where the answers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A zero-copy view over the file's bytes.
    View,
    /// A filter decoded into memory (the variant has no view).
    Decoded,
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
        } else {
            match SplitBlockFilter::<str>::from_parquet_bytes(&bytes) {
                Ok(_) => Kind::Parquet,
                Err(e) => {
                    let start: String = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
                    return Err(CliError::new(format!(
                        "{}: not a bloomkit filter (it starts with {start}, not \"BLMK\") nor \
                         Parquet's Bloom filter bytes ({e})",
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

    /// The variant, for either kind.
    pub fn variant(&self) -> Variant {
        match self.kind {
            Kind::Bloomkit(h) => h.variant,
            Kind::Parquet => Variant::SplitBlock,
        }
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
    /// variant has one, decoded otherwise.
    ///
    /// # Errors
    /// Corrupt or truncated bytes, a keyed hasher (its key is not in the file), and the
    /// variants whose keys are not strings (the bitmap's integers, the multi-attribute
    /// filter's records).
    pub fn open(&self) -> Result<Opened<'_>, CliError> {
        let b: &[u8] = &self.bytes;
        let v = self.verify();
        let e = |e: bloomkit::Error| self.err(e);
        let header = match self.kind {
            Kind::Parquet => {
                return SplitBlockFilter::from_parquet_bytes(b)
                    .map(Opened::SplitBlock)
                    .map_err(|x| self.err(x));
            }
            Kind::Bloomkit(h) => h,
        };
        if header.hasher.id == 3 {
            return Err(self.err(
                "built with a keyed hasher (SipHash under a secret key, which the file does \
                 not hold): open it with the library and the key",
            ));
        }
        Ok(match header.variant {
            // Bytes a view cannot use in place (format version 1, written by bloomkit
            // 0.1.0; a big-endian host) are decoded instead.
            Variant::Classic => match BloomFilterRef::with_hasher(b, v) {
                Err(bloomkit::Error::Decode(DecodeError::NotViewable(_))) => {
                    Opened::ClassicOwned(self.decode()?)
                }
                other => Opened::Classic(other.map_err(e)?),
            },
            Variant::Blocked => match BlockedBloomFilterRef::with_hasher(b, v) {
                Err(bloomkit::Error::Decode(DecodeError::NotViewable(_))) => {
                    Opened::BlockedOwned(self.decode()?)
                }
                other => Opened::Blocked(other.map_err(e)?),
            },
            Variant::SimdBlock => match SimdBlockFilterRef::with_hasher(b, v) {
                Err(bloomkit::Error::Decode(DecodeError::NotViewable(_))) => {
                    Opened::SimdBlockOwned(self.decode()?)
                }
                other => Opened::SimdBlock(other.map_err(e)?),
            },
            Variant::BinaryFuse8 => Opened::Fuse8(BinaryFuseRef::with_hasher(b, v).map_err(e)?),
            Variant::BinaryFuse16 => Opened::Fuse16(BinaryFuseRef::with_hasher(b, v).map_err(e)?),
            Variant::BinaryFuse32 => Opened::Fuse32(BinaryFuseRef::with_hasher(b, v).map_err(e)?),
            Variant::Ribbon => Opened::Ribbon(RibbonFilterRef::with_hasher(b, v).map_err(e)?),
            Variant::Quotient => Opened::Quotient(QuotientFilterRef::with_hasher(b, v).map_err(e)?),
            Variant::Counting => self.counting()?,
            Variant::Scalable => Opened::Scalable(self.decode()?),
            Variant::Expandable => Opened::Expandable(self.decode()?),
            Variant::SplitBlock => Opened::SplitBlock(self.decode()?),
            Variant::Bitmap => {
                return Err(self.err(
                    "a bitmap's keys are integers, not lines of text: read it with the \
                     library (bloomkit::Bitmap)",
                ))
            }
            Variant::Multi => {
                return Err(self.err(
                    "a multi-attribute filter's keys are records whose type the file does \
                     not hold: read it with the library (bloomkit::MultiFilter)",
                ))
            }
            other => return Err(self.err(format!("{other} files are not supported yet"))),
        })
    }

    fn decode<F: Codec>(&self) -> Result<F, CliError> {
        // The owned decoders always check the payload, --no-verify or not (said in --help).
        let bytes: &[u8] = &self.bytes;
        F::from_bytes(bytes).map_err(|e| self.err(e))
    }

    /// The counter width a counting filter's parameters name: format versions 2 and 3
    /// keep it at bytes 44..48 (docs/format.md); `None` for version 1 (try every width).
    pub fn counter_width(&self) -> Option<u32> {
        let b: &[u8] = &self.bytes;
        match self.kind {
            Kind::Bloomkit(h)
                if h.variant == Variant::Counting && h.version >= 2 && b.len() >= 48 =>
            {
                Some(u32::from_le_bytes([b[44], b[45], b[46], b[47]]))
            }
            _ => None,
        }
    }

    /// A counting filter, at the counter width its parameters name.
    fn counting(&self) -> Result<Opened<'_>, CliError> {
        let named = self.counter_width();
        type Attempt = fn(&FilterFile) -> Result<Opened<'_>, CliError>;
        let attempts: [(u32, Attempt); 4] = [
            (4, |f| f.decode().map(Opened::Counting4)),
            (8, |f| f.decode().map(Opened::Counting8)),
            (16, |f| f.decode().map(Opened::Counting16)),
            (32, |f| f.decode().map(Opened::Counting32)),
        ];
        let mut first = None;
        for (bits, attempt) in attempts {
            if named.is_some_and(|n| n != bits) {
                continue;
            }
            match attempt(self) {
                Ok(o) => return Ok(o),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        Err(first.unwrap_or_else(|| {
            self.err(format!(
                "counter width {} bits: not one of 4, 8, 16, 32",
                named.unwrap_or(0)
            ))
        }))
    }
}

/// A filter file's contents, keyed by `str`.
#[allow(missing_docs)]
pub enum Opened<'a> {
    Classic(BloomFilterRef<'a, str>),
    Blocked(BlockedBloomFilterRef<'a, str>),
    SimdBlock(SimdBlockFilterRef<'a, str>),
    ClassicOwned(BloomFilter<str>),
    BlockedOwned(BlockedBloomFilter<str>),
    SimdBlockOwned(SimdBlockFilter<str>),
    Fuse8(BinaryFuseRef<'a, u8, str>),
    Fuse16(BinaryFuseRef<'a, u16, str>),
    Fuse32(BinaryFuseRef<'a, u32, str>),
    Ribbon(RibbonFilterRef<'a, str>),
    Quotient(QuotientFilterRef<'a, str>),
    Counting4(CountingBloomFilter<str, U4>),
    Counting8(CountingBloomFilter<str, u8>),
    Counting16(CountingBloomFilter<str, u16>),
    Counting32(CountingBloomFilter<str, u32>),
    Scalable(ScalableBloomFilter<str>),
    Expandable(ExpandableFilter<str>),
    SplitBlock(SplitBlockFilter<str>),
}

impl std::fmt::Debug for Opened<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Opened").field(&self.variant()).finish()
    }
}

/// `$body` with `$f` bound to the filter, whichever variant it is.
macro_rules! each {
    ($opened:expr, $f:ident => $body:expr) => {
        match $opened {
            Opened::Classic($f) => $body,
            Opened::Blocked($f) => $body,
            Opened::SimdBlock($f) => $body,
            Opened::ClassicOwned($f) => $body,
            Opened::BlockedOwned($f) => $body,
            Opened::SimdBlockOwned($f) => $body,
            Opened::Fuse8($f) => $body,
            Opened::Fuse16($f) => $body,
            Opened::Fuse32($f) => $body,
            Opened::Ribbon($f) => $body,
            Opened::Quotient($f) => $body,
            Opened::Counting4($f) => $body,
            Opened::Counting8($f) => $body,
            Opened::Counting16($f) => $body,
            Opened::Counting32($f) => $body,
            Opened::Scalable($f) => $body,
            Opened::Expandable($f) => $body,
            Opened::SplitBlock($f) => $body,
        }
    };
}

impl Opened<'_> {
    /// The filter through the trait every variant shares.
    pub fn core(&self) -> &dyn LookupCore {
        each!(self, f => f)
    }

    /// Appends the answers for `keys` to `out`, through the variant's batched lookup (the
    /// trait's contract: `out` is never cleared).
    pub fn contains_batch(&self, keys: &[impl AsRef<str>], out: &mut Vec<bool>) {
        let keys = keys.iter().map(AsRef::as_ref);
        each!(self, f => f.contains_batch(keys, out));
    }

    /// Whether the answers come from a view over the file or a decoded copy.
    pub fn source(&self) -> Source {
        match self {
            Opened::Classic(_)
            | Opened::Blocked(_)
            | Opened::SimdBlock(_)
            | Opened::Fuse8(_)
            | Opened::Fuse16(_)
            | Opened::Fuse32(_)
            | Opened::Ribbon(_)
            | Opened::Quotient(_) => Source::View,
            _ => Source::Decoded,
        }
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        match self {
            Opened::Classic(_) | Opened::ClassicOwned(_) => Variant::Classic,
            Opened::Blocked(_) | Opened::BlockedOwned(_) => Variant::Blocked,
            Opened::SimdBlock(_) | Opened::SimdBlockOwned(_) => Variant::SimdBlock,
            Opened::Fuse8(_) => Variant::BinaryFuse8,
            Opened::Fuse16(_) => Variant::BinaryFuse16,
            Opened::Fuse32(_) => Variant::BinaryFuse32,
            Opened::Ribbon(_) => Variant::Ribbon,
            Opened::Quotient(_) => Variant::Quotient,
            Opened::Counting4(_)
            | Opened::Counting8(_)
            | Opened::Counting16(_)
            | Opened::Counting32(_) => Variant::Counting,
            Opened::Scalable(_) => Variant::Scalable,
            Opened::Expandable(_) => Variant::Expandable,
            Opened::SplitBlock(_) => Variant::SplitBlock,
        }
    }

    /// The variant's own figures, for `info` to print (as text or JSON).
    pub fn details(&self) -> Vec<Detail> {
        let bloom = |blocks: Option<(u64, u32)>, k: Option<u32>, ones: u64, bits: u64| {
            vec![
                match blocks {
                    Some((count, bits)) => Detail::Blocks { count, bits },
                    None => Detail::Bits(bits),
                },
                Detail::Hashes(k),
                Detail::Fill { ones, bits },
            ]
        };
        let counting = |count: u64, k: u32, bits: u32| {
            vec![Detail::Counters { count, bits }, Detail::Hashes(Some(k))]
        };
        match self {
            Opened::Classic(f) => bloom(None, Some(f.num_hashes()), f.count_ones(), f.num_bits()),
            Opened::ClassicOwned(f) => {
                bloom(None, Some(f.num_hashes()), f.count_ones(), f.num_bits())
            }
            Opened::Blocked(f) => bloom(
                Some((f.num_blocks(), 512)),
                Some(f.num_hashes()),
                f.count_ones(),
                f.num_bits(),
            ),
            Opened::BlockedOwned(f) => bloom(
                Some((f.num_blocks(), 512)),
                Some(f.num_hashes()),
                f.count_ones(),
                f.num_bits(),
            ),
            Opened::SimdBlock(f) => bloom(
                Some((f.num_blocks(), 256)),
                None,
                f.count_ones(),
                f.num_bits(),
            ),
            Opened::SimdBlockOwned(f) => bloom(
                Some((f.num_blocks(), 256)),
                None,
                f.count_ones(),
                f.num_bits(),
            ),
            Opened::SplitBlock(f) => bloom(
                Some((f.num_blocks(), 256)),
                None,
                f.count_ones(),
                f.num_bits(),
            ),
            Opened::Counting4(f) => counting(f.num_counters(), f.num_hashes(), 4),
            Opened::Counting8(f) => counting(f.num_counters(), f.num_hashes(), 8),
            Opened::Counting16(f) => counting(f.num_counters(), f.num_hashes(), 16),
            Opened::Counting32(f) => counting(f.num_counters(), f.num_hashes(), 32),
            Opened::Scalable(f) => vec![Detail::Slices(f.num_slices() as u64)],
            _ => Vec::new(),
        }
    }
}

/// One of a variant's own figures, as `info` reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Detail {
    /// A flat bit array of this many bits.
    Bits(u64),
    /// `count` blocks of `bits` bits each.
    Blocks {
        /// How many blocks.
        count: u64,
        /// Bits in each block.
        bits: u32,
    },
    /// Bits set per key: `None` for the split-block layouts (one bit in each 32-bit word).
    Hashes(Option<u32>),
    /// `ones` of `bits` bits set.
    Fill {
        /// Bits set.
        ones: u64,
        /// All bits.
        bits: u64,
    },
    /// `count` counters of `bits` bits each.
    Counters {
        /// How many counters.
        count: u64,
        /// Bits in each counter.
        bits: u32,
    },
    /// Sub-filters of a scalable filter.
    Slices(u64),
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
    } else {
        SplitBlockFilter::<[u8]>::parquet_len(&data).map_err(|e| {
            invalid(DecodeError::Invalid(format!(
                "not a bloomkit filter (no \"BLMK\") nor Parquet's filter bytes ({e})"
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
