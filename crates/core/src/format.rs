//! bloomkit's versioned, validated, portable byte format (spec: `docs/format.md`).
//!
//! Version 3, written by this build:
//!
//! ```text
//! offset      size  field
//! 0           4     magic b"BLMK"
//! 4           2     format version, u16 LE (3)
//! 6           1     variant tag (see Variant::tag)
//! 7           1     hasher id (PortableHasher::ID)
//! 8           8     hasher seed, u64 LE
//! 16          8     meta length M, u64 LE
//! 24          8     data length D, u64 LE
//! 32          M     meta: the variant's parameter blocks (bincode 2, fixed-width LE
//!                   integers) and the length of each payload section, in order
//! 32+M        8     meta checksum: XXH3-64 (seed 0) of bytes 0..32+M
//! 40+M        D     data: each payload section, starting at an offset that is a multiple
//!                   of 64 (a cache line), zero padding before it
//! 40+M+D      8     data checksum: XXH3-64 (seed 0) of bytes 40+M..40+M+D
//! ```
//!
//! The payload (bit arrays, counters) is apart from the parameters and aligned, so a
//! read-only view can use it in place in a memory-mapped file, and the parameters are
//! checksummed on their own, so such a view can check them without reading the payload.
//! Version 1 (the parameters and payload interleaved in one checksummed body) is still
//! read.
//!
//! [`Reader`] checks, in order: magic, version, variant, the announced lengths against the
//! input, the checksums, and then, as the variant reads them, the hasher, the parameters,
//! and every section's length against the bytes that remain *before* allocating for it.
//! So a truncated, corrupted or hostile input gets a [`DecodeError`], never a panic, and
//! never an allocation larger than the input itself (from a stream: than the bytes read).

use std::borrow::Cow;
use std::fmt;
use std::hash::Hasher as _;
use std::io::{self, Read, Write};

use bytemuck::Pod;
use serde::de::DeserializeOwned;
use serde::Serialize;
use twox_hash::XxHash3_64;

use crate::hash::{HashKey, HasherSpec, PortableHasher, ProbeScheme};
use crate::{DecodeError, Error, Variant};

/// The first four bytes of every serialized bloomkit filter.
pub const MAGIC: [u8; 4] = *b"BLMK";
/// The format version this build writes; it reads every version from 1 to this one.
pub const VERSION: u16 = 3;
/// Bytes before the meta block (versions 2 and 3).
pub const HEADER_LEN: usize = 32;
/// Bytes of one checksum.
pub const CHECKSUM_LEN: usize = 8;
/// Payload sections start at offsets that are multiples of this (a cache line), so that a
/// view over a page-aligned buffer (a memory map) finds its blocks on cache lines.
pub const ALIGN: usize = 64;

/// Version 1's header: magic, version, tag, hasher id, seed, body length.
const V1_HEADER_LEN: usize = 24;

/// The bytes every version starts with: magic, version, variant, hasher id, seed.
const START_LEN: usize = 16;

/// The bincode configuration of the parameter blocks: fixed-width little-endian integers,
/// so each field sits at a fixed offset and the layout does not depend on the values.
const PARAMS: bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Fixint,
> = bincode::config::standard().with_fixed_int_encoding();

/// Zeros to pad a section to [`ALIGN`].
const ZEROS: [u8; ALIGN] = [0; ALIGN];

/// The checksum stored in the format: XXH3-64 with seed 0 of `content`.
pub fn checksum(content: &[u8]) -> u64 {
    XxHash3_64::oneshot_with_seed(0, content)
}

/// serde for a [`Codec`] type: the filter's bytes ([`Codec::to_bytes`]), as one byte
/// string, so a bincode (or JSON, or any serde format) payload carries the same versioned,
/// checksummed bytes as a file, and a changed byte inside it is refused like a changed byte
/// in a file. Every variant's `Serialize` and `Deserialize` go through here.
pub mod serde_bytes {
    use core::marker::PhantomData;

    use serde::de::{self, Error as _, SeqAccess, Visitor};
    use serde::{Deserializer, Serializer};

    use super::{fmt, Codec};

    /// Serializes `filter` as its bytes.
    ///
    /// # Errors
    /// What the serializer returns.
    pub fn serialize<C: Codec, S: Serializer>(
        filter: &C,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&filter.to_bytes())
    }

    /// Deserializes a filter from its bytes (a byte string, or a sequence of bytes for
    /// formats without byte strings), validated as [`Codec::from_bytes`] validates them.
    ///
    /// # Errors
    /// The deserializer's error, carrying the [`DecodeError`](crate::DecodeError)'s message,
    /// for bytes [`Codec::from_bytes`] refuses.
    pub fn deserialize<'de, C: Codec, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<C, D::Error> {
        deserializer.deserialize_bytes(Bytes(PhantomData))
    }

    struct Bytes<C>(PhantomData<C>);

    impl<'de, C: Codec> Visitor<'de> for Bytes<C> {
        type Value = C;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the bytes of a bloomkit filter (docs/format.md)")
        }

        fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<C, E> {
            C::from_bytes(bytes).map_err(E::custom)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<C, A::Error> {
            // Grows only as elements arrive: a hostile length hint allocates nothing.
            let mut bytes = Vec::new();
            while let Some(byte) = seq.next_element::<u8>()? {
                bytes.push(byte);
            }
            C::from_bytes(&bytes).map_err(A::Error::custom)
        }
    }
}

/// `Serialize` and `Deserialize` through [`serde_bytes`] for a type that implements
/// [`Codec`]. Generic parameters go in brackets:
/// `impl_serde_via_bytes!([K: ?Sized, S: PortableHasher] BloomFilter<K, S>)`.
///
/// Exported only so the variant crates can use it: not part of the public API.
#[doc(hidden)]
#[macro_export]
macro_rules! impl_serde_via_bytes {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> $crate::format::__serde::Serialize for $ty {
            fn serialize<Ser: $crate::format::__serde::Serializer>(
                &self,
                serializer: Ser,
            ) -> ::core::result::Result<Ser::Ok, Ser::Error> {
                $crate::format::serde_bytes::serialize(self, serializer)
            }
        }

        impl<'de, $($generics)*> $crate::format::__serde::Deserialize<'de> for $ty {
            fn deserialize<De: $crate::format::__serde::Deserializer<'de>>(
                deserializer: De,
            ) -> ::core::result::Result<Self, De::Error> {
                $crate::format::serde_bytes::deserialize(deserializer)
            }
        }
    };
}

#[doc(hidden)]
pub use serde as __serde;

/// How much of the input a decoder checks before answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Verify {
    /// Both checksums: every byte is checked (reads the whole payload once).
    #[default]
    All,
    /// The meta checksum, the parameters and every length, but not the payload's checksum,
    /// so a view over a large memory-mapped file answers without reading the file first.
    /// The view stays memory-safe and consistent whatever the payload holds; a corrupted
    /// payload gives wrong answers instead of an error, so choose this only for files
    /// whose payload is checked otherwise (written locally, or verified once on arrival).
    SkipPayloadChecksum,
}

/// Types that convert to and from bloomkit's byte format.
///
/// The bytes carry the variant, the hasher and its seed and every parameter, so a filter
/// written by one process (on any platform) answers identically when read by another.
/// A variant says what it writes ([`encode`](Codec::encode)) and how it reads it back
/// ([`decode`](Codec::decode)); the provided methods move the bytes to and from a slice or
/// a stream.
///
/// # Examples
///
/// ```
/// use bloomkit_classic::BloomFilter;
/// use bloomkit_core::Codec;
///
/// let mut f = BloomFilter::new(1_000, 0.01)?;
/// f.insert("a");
///
/// // To any `io::Write` (a file, a socket), without a copy of the bit array on the way.
/// let mut file = Vec::new();
/// f.write_to(&mut file)?;
/// assert_eq!(file.len() as u64, f.serialized_len());
/// assert_eq!(file, f.to_bytes());
///
/// // And back from any `io::Read`, which is read no further than the filter's end.
/// let g = BloomFilter::<str>::read_from(file.as_slice())?;
/// assert_eq!(f, g);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Codec: Sized {
    /// The variant tag the bytes carry.
    const VARIANT: Variant;

    /// The filter's bytes, described: its parameters and payload sections, borrowed.
    fn encode(&self) -> Writer<'_>;

    /// The filter from a reader positioned after the header. Implementations read what
    /// [`encode`](Codec::encode) wrote, call [`Reader::finish`], then validate.
    ///
    /// # Errors
    /// [`Error::Decode`] for bytes no filter of this type writes.
    fn decode(reader: Reader<'_>) -> Result<Self, Error>;

    /// The filter as bytes.
    fn to_bytes(&self) -> Vec<u8> {
        self.encode().to_vec()
    }

    /// The length of [`to_bytes`](Codec::to_bytes)' output, without producing it.
    fn serialized_len(&self) -> u64 {
        self.encode().serialized_len()
    }

    /// Writes the bytes of [`to_bytes`](Codec::to_bytes) to `out`, the payload straight
    /// from the filter's memory (no second buffer). Wrap a file in a `BufWriter`: the
    /// header and parameters go out in small writes.
    ///
    /// # Errors
    /// The first error `out` returns.
    fn write_to<W: Write>(&self, out: W) -> io::Result<()> {
        self.encode().write_to(out)
    }

    /// The filter from bytes written by [`to_bytes`](Codec::to_bytes) (any format version
    /// this build reads).
    ///
    /// # Errors
    /// [`Error::Decode`] on truncated, corrupted or hostile input, bytes of another variant,
    /// hasher or format version; never a panic, and no allocation beyond the input's size.
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::decode(Reader::open(bytes, Self::VARIANT, Verify::All)?)
    }

    /// The filter from a stream holding what [`write_to`](Codec::write_to) wrote, read no
    /// further than the filter's last byte (so several filters can follow each other in
    /// one stream). The payload is read straight into the filter's memory.
    ///
    /// # Errors
    /// As [`from_bytes`](Codec::from_bytes), and [`DecodeError::Io`] when the stream fails.
    /// Memory grows only as bytes arrive, so a hostile length cannot allocate more than
    /// the stream holds.
    fn read_from<R: Read>(mut input: R) -> Result<Self, Error> {
        Self::decode(Reader::from_read(&mut input, Self::VARIANT)?)
    }

    /// As [`from_bytes`](Codec::from_bytes), for a filter built with a keyed hasher
    /// ([`KeyedHasher`](crate::hash::KeyedHasher)): its bytes do not hold the key.
    ///
    /// # Errors
    /// As [`from_bytes`](Codec::from_bytes), and [`DecodeError::WrongKey`] when `key` is not
    /// the filter's.
    fn from_bytes_with_key(bytes: &[u8], key: &HashKey) -> Result<Self, Error> {
        Self::decode(Reader::open(bytes, Self::VARIANT, Verify::All)?.with_key(key))
    }

    /// As [`read_from`](Codec::read_from), with the key of a keyed hasher.
    ///
    /// # Errors
    /// As [`read_from`](Codec::read_from) and [`from_bytes_with_key`](Codec::from_bytes_with_key).
    fn read_from_with_key<R: Read>(mut input: R, key: &HashKey) -> Result<Self, Error> {
        Self::decode(Reader::from_read(&mut input, Self::VARIANT)?.with_key(key))
    }
}

/// The common header of a serialized filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header {
    /// Which variant the bytes hold.
    pub variant: Variant,
    /// The hasher and seed the filter was built with.
    pub hasher: HasherSpec,
    /// The format version the bytes were written in.
    pub version: u16,
}

/// Describes a filter's bytes (header, parameters, payload sections) and writes them.
///
/// The payload is borrowed from the filter, so [`serialized_len`](Writer::serialized_len) costs nothing and
/// [`write_to`](Writer::write_to) copies nothing.
pub struct Writer<'a> {
    variant: Variant,
    hasher: HasherSpec,
    meta: Vec<u8>,
    payload: Vec<Cow<'a, [u8]>>,
}

impl fmt::Debug for Writer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("variant", &self.variant)
            .field("hasher", &self.hasher)
            .field("meta_len", &self.meta.len())
            .field("sections", &self.payload.len())
            .finish()
    }
}

/// `at` rounded up to a multiple of [`ALIGN`].
fn align_up(at: u64) -> u64 {
    at.div_ceil(ALIGN as u64) * ALIGN as u64
}

impl<'a> Writer<'a> {
    /// Starts the bytes of a `variant` built with `hasher`.
    pub fn new(variant: Variant, hasher: HasherSpec) -> Writer<'a> {
        Writer {
            variant,
            hasher,
            meta: Vec::with_capacity(64),
            payload: Vec::new(),
        }
    }

    /// Appends a parameter block.
    pub fn params<P: Serialize>(mut self, params: &P) -> Writer<'a> {
        // Plain structs of integers and floats cannot fail to encode into a Vec.
        bincode::serde::encode_into_std_write(params, &mut self.meta, PARAMS)
            .expect("encoding plain parameters into a Vec cannot fail");
        self
    }

    /// Appends a probe scheme's id (one byte; read back by [`Reader::probes`]).
    pub fn probes(self, probes: ProbeScheme) -> Writer<'a> {
        self.params(&probes.id())
    }

    /// Appends a section of `u64` words.
    pub fn words(self, words: &'a [u64]) -> Writer<'a> {
        self.words_as(words)
    }

    /// Appends a section of values made of `u64` words only (such as `[u64; 8]` blocks),
    /// written as their words, little-endian.
    pub fn words_as<T: Pod>(mut self, values: &'a [T]) -> Writer<'a> {
        const { assert!(core::mem::size_of::<T>() % 8 == 0 && core::mem::align_of::<T>() >= 8) };
        let bytes: &'a [u8] = bytemuck::cast_slice(values);
        self.meta
            .extend_from_slice(&(bytes.len() as u64 / 8).to_le_bytes());
        self.payload.push(if cfg!(target_endian = "little") {
            Cow::Borrowed(bytes)
        } else {
            let words: &[u64] = bytemuck::cast_slice(values);
            Cow::Owned(words.iter().flat_map(|w| w.to_le_bytes()).collect())
        });
        self
    }

    /// Appends a section of raw bytes.
    pub fn bytes(mut self, bytes: impl Into<Cow<'a, [u8]>>) -> Writer<'a> {
        let bytes = bytes.into();
        self.meta
            .extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.payload.push(bytes);
        self
    }

    /// Length of the data region: every section at an aligned offset, from `start`.
    fn data_len(&self, start: u64) -> u64 {
        self.payload
            .iter()
            .fold(start, |at, p| align_up(at) + p.len() as u64)
            - start
    }

    /// The number of bytes [`write_to`](Writer::write_to) writes.
    pub fn serialized_len(&self) -> u64 {
        let meta_end = (HEADER_LEN + self.meta.len()) as u64;
        meta_end + 2 * CHECKSUM_LEN as u64 + self.data_len(meta_end + CHECKSUM_LEN as u64)
    }

    /// Writes the bytes to `out`: the header and meta block, then each payload section from
    /// the filter's memory, computing the data checksum on the way.
    ///
    /// # Errors
    /// The first error `out` returns.
    pub fn write_to<W: Write>(&self, mut out: W) -> io::Result<()> {
        let data_start = (HEADER_LEN + self.meta.len() + CHECKSUM_LEN) as u64;
        let mut head = Vec::with_capacity(HEADER_LEN + self.meta.len() + CHECKSUM_LEN);
        head.extend_from_slice(&MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.push(self.variant.tag());
        head.push(self.hasher.id);
        head.extend_from_slice(&self.hasher.seed.to_le_bytes());
        head.extend_from_slice(&(self.meta.len() as u64).to_le_bytes());
        head.extend_from_slice(&self.data_len(data_start).to_le_bytes());
        head.extend_from_slice(&self.meta);
        let meta_sum = checksum(&head);
        head.extend_from_slice(&meta_sum.to_le_bytes());
        out.write_all(&head)?;
        let mut sum = XxHash3_64::with_seed(0);
        let mut at = data_start;
        for section in &self.payload {
            let pad = &ZEROS[..(align_up(at) - at) as usize];
            out.write_all(pad)?;
            out.write_all(section)?;
            sum.write(pad);
            sum.write(section);
            at += (pad.len() + section.len()) as u64;
        }
        out.write_all(&sum.finish().to_le_bytes())
    }

    /// The bytes, in a vector of exactly [`serialized_len`](Writer::serialized_len) bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(usize::try_from(self.serialized_len()).unwrap_or(0));
        self.write_to(&mut out)
            .expect("writing into a Vec cannot fail");
        out
    }
}

/// Bytes in memory aligned to [`ALIGN`] (64), for zero-copy views of filters that arrive
/// other than through a memory map (read from a socket, embedded, tested): a plain
/// `Vec<u8>` may start at any address, and a view needs its payload aligned.
///
/// # Examples
///
/// ```
/// use bloomkit_classic::{BlockedBloomFilter, BlockedBloomFilterRef};
/// use bloomkit_core::format::AlignedBytes;
///
/// let f = BlockedBloomFilter::<u64>::new(1_000, 0.01)?;
/// let bytes = AlignedBytes::copy_from(&f.to_bytes());
/// let view = BlockedBloomFilterRef::<u64>::from_bytes(&bytes)?;
/// assert_eq!(view.num_blocks(), f.num_blocks());
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct AlignedBytes {
    lines: Vec<Line>,
    len: usize,
}

/// One cache line of bytes, aligned.
#[derive(Clone, Copy, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Line([u8; ALIGN]);

impl AlignedBytes {
    /// A copy of `bytes`, starting at a 64-byte aligned address.
    pub fn copy_from(bytes: &[u8]) -> AlignedBytes {
        let mut lines = vec![Line([0; ALIGN]); bytes.len().div_ceil(ALIGN)];
        bytemuck::cast_slice_mut::<Line, u8>(&mut lines)[..bytes.len()].copy_from_slice(bytes);
        AlignedBytes {
            lines,
            len: bytes.len(),
        }
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<Line, u8>(&self.lines)[..self.len]
    }

    /// Up to `len` bytes read from `input` (fewer when it ends first) into an aligned
    /// buffer, with no second copy: how a file of known length is read for a view. The
    /// buffer is asked of the allocator fallibly.
    ///
    /// # Errors
    /// The first error of `input` (reads interrupted by a signal are retried);
    /// [`io::ErrorKind::OutOfMemory`] when the buffer cannot be had.
    pub fn read_from(input: &mut dyn Read, len: u64) -> io::Result<AlignedBytes> {
        let refused = || io::Error::new(io::ErrorKind::OutOfMemory, format!("{len} bytes"));
        let len = usize::try_from(len).map_err(|_| refused())?;
        let mut lines = Vec::new();
        lines
            .try_reserve_exact(len.div_ceil(ALIGN))
            .map_err(|_| refused())?;
        lines.resize(len.div_ceil(ALIGN), Line([0; ALIGN]));
        let buf = &mut bytemuck::cast_slice_mut::<Line, u8>(&mut lines)[..len];
        let mut got = 0;
        while got < len {
            match input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        lines.truncate(got.div_ceil(ALIGN));
        Ok(AlignedBytes { lines, len: got })
    }
}

impl core::ops::Deref for AlignedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AlignedBytes({} bytes)", self.len)
    }
}

/// Where a reader's payload sections come from.
enum Data<'a> {
    /// Version 1: each section's bytes follow its length in the body.
    Inline,
    /// Version 2 in memory: the data region `at..end` of `bytes`.
    Slice {
        bytes: &'a [u8],
        at: usize,
        end: usize,
    },
    /// Version 2 from a stream, `left` bytes of data to come, checksummed as read.
    Stream {
        input: &'a mut dyn Read,
        at: u64,
        left: u64,
        /// Boxed: the streaming state holds a 256-byte buffer.
        sum: Box<XxHash3_64>,
    },
}

/// Reads and validates a filter written by [`Writer`] (or by a version 1 build).
pub struct Reader<'a> {
    header: Header,
    /// The secret key for a keyed hasher, when the caller gave one.
    key: Option<HashKey>,
    /// The meta block (version 1: the whole body), read from `at` on.
    meta: Cow<'a, [u8]>,
    at: usize,
    data: Data<'a>,
}

impl fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("header", &self.header)
            .field("meta_left", &(self.meta.len() - self.at))
            .finish_non_exhaustive()
    }
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

fn io_error(e: &io::Error) -> DecodeError {
    DecodeError::Io {
        kind: e.kind(),
        message: e.to_string(),
    }
}

/// Reads into `buf` until it is full or the stream ends; returns the bytes read.
fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> Result<usize, DecodeError> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(&e)),
        }
    }
    Ok(got)
}

/// Reads exactly `len` bytes, growing the buffer only as they arrive.
fn read_exactly(input: &mut dyn Read, len: u64, read_before: u64) -> Result<Vec<u8>, DecodeError> {
    let mut buf = Vec::new();
    input
        .take(len)
        .read_to_end(&mut buf)
        .map_err(|e| io_error(&e))?;
    if (buf.len() as u64) < len {
        return Err(DecodeError::Truncated {
            needed: read_before.saturating_add(len),
            available: read_before + buf.len() as u64,
        });
    }
    Ok(buf)
}

/// Reads the `len` bytes that follow `head` in a stream and the checksum after them, and
/// checks it against `head` and those bytes (version 1: the whole body; version 2: the
/// meta block). Returns the bytes, without the checksum.
fn read_sealed(input: &mut dyn Read, head: &[u8], len: u64) -> Result<Vec<u8>, DecodeError> {
    let mut bytes = read_exactly(
        input,
        len.saturating_add(CHECKSUM_LEN as u64),
        head.len() as u64,
    )?;
    let stored = read_u64(&bytes, bytes.len() - CHECKSUM_LEN);
    bytes.truncate(bytes.len() - CHECKSUM_LEN);
    let mut sum = XxHash3_64::with_seed(0);
    sum.write(head);
    sum.write(&bytes);
    check_sum(stored, sum.finish())?;
    Ok(bytes)
}

/// Reads the header of serialized filter bytes without knowing their variant: magic,
/// version, variant tag, hasher and seed. A tool that opens files someone sent (the
/// `bloomkit` command line) calls it to pick the type to decode with; nothing past the
/// first 16 bytes is read or checked, so decoding can still fail.
///
/// # Errors
/// [`DecodeError::BadMagic`], [`DecodeError::Truncated`] (fewer than 16 bytes),
/// [`DecodeError::UnsupportedVersion`] or [`DecodeError::UnknownVariant`].
///
/// # Examples
/// ```
/// use bloomkit_core::format;
/// use bloomkit_core::Variant;
///
/// // The first 16 bytes of a blocked filter's file: magic, version 3, tag 5, hasher 4, seed 0.
/// let bytes = b"BLMK\x03\x00\x05\x04\0\0\0\0\0\0\0\0";
/// let header = format::peek(bytes).unwrap();
/// assert_eq!(header.variant, Variant::Blocked);
/// assert_eq!(header.hasher.id, 4);
/// assert!(format::peek(b"PAR1").is_err());
/// ```
pub fn peek(bytes: &[u8]) -> Result<Header, DecodeError> {
    check_magic(bytes)?;
    if bytes.len() < START_LEN {
        return Err(DecodeError::Truncated {
            needed: START_LEN as u64,
            available: bytes.len() as u64,
        });
    }
    read_start(bytes).map(|(_, header)| header)
}

/// The whole length of the serialized filter whose first bytes are `start`, as its header
/// declares it (version 1: 24 bytes of header, version 2 and later: 32), without reading or
/// checking anything past the header: how a tool reads a filter from a pipe or a device
/// (which has no length of its own) up to its end and no further. The declared length is
/// the writer's word, checked by the checksums only once the bytes are read.
///
/// # Errors
/// As [`peek`], [`DecodeError::Truncated`] when `start` ends inside the header, and
/// [`DecodeError::Invalid`] for lengths whose sum passes `u64`.
///
/// # Examples
/// ```
/// use bloomkit_classic::BlockedBloomFilter;
/// use bloomkit_core::format;
///
/// let bytes = BlockedBloomFilter::<u64>::new(1_000, 0.01)?.to_bytes();
/// assert_eq!(format::declared_len(&bytes[..32])?, bytes.len() as u64);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn declared_len(start: &[u8]) -> Result<u64, DecodeError> {
    let (version, _) = {
        check_magic(start)?;
        if start.len() < START_LEN {
            return Err(DecodeError::Truncated {
                needed: START_LEN as u64,
                available: start.len() as u64,
            });
        }
        read_start(start)?
    };
    let header = if version == 1 {
        V1_HEADER_LEN
    } else {
        HEADER_LEN
    };
    if start.len() < header {
        return Err(DecodeError::Truncated {
            needed: header as u64,
            available: start.len() as u64,
        });
    }
    let overflow = || DecodeError::Invalid("declared lengths pass 2^64 bytes".to_owned());
    if version == 1 {
        // Header, body, checksum.
        return read_u64(start, 16)
            .checked_add((V1_HEADER_LEN + CHECKSUM_LEN) as u64)
            .ok_or_else(overflow);
    }
    // Header, meta block, its checksum, the data region, its checksum.
    read_u64(start, 16)
        .checked_add(read_u64(start, 24))
        .and_then(|n| n.checked_add((HEADER_LEN + 2 * CHECKSUM_LEN) as u64))
        .ok_or_else(overflow)
}

/// Reads the fixed start of the header: version, variant, hasher; returns the version too.
fn read_start(bytes: &[u8]) -> Result<(u16, Header), DecodeError> {
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if !(1..=VERSION).contains(&version) {
        return Err(DecodeError::UnsupportedVersion {
            found: version,
            supported: VERSION,
        });
    }
    let found = Variant::from_tag(bytes[6]).ok_or(DecodeError::UnknownVariant(bytes[6]))?;
    let header = Header {
        variant: found,
        hasher: HasherSpec {
            id: bytes[7],
            seed: read_u64(bytes, 8),
        },
        version,
    };
    Ok((version, header))
}

/// Checks the fixed start of the header: magic, version, variant; returns the version.
fn check_start(bytes: &[u8], expected: Variant) -> Result<(u16, Header), DecodeError> {
    let (version, header) = read_start(bytes)?;
    if header.variant != expected {
        return Err(DecodeError::WrongVariant {
            expected,
            found: header.variant,
        });
    }
    Ok((version, header))
}

fn check_magic(bytes: &[u8]) -> Result<(), DecodeError> {
    if bytes.len() >= 4 && bytes[..4] != MAGIC {
        let mut found = [0; 4];
        found.copy_from_slice(&bytes[..4]);
        return Err(DecodeError::BadMagic {
            found,
            expected: MAGIC,
        });
    }
    Ok(())
}

fn check_sum(stored: u64, computed: u64) -> Result<(), DecodeError> {
    if stored == computed {
        Ok(())
    } else {
        Err(DecodeError::ChecksumMismatch { stored, computed })
    }
}

impl<'a> Reader<'a> {
    /// Checks the envelope of `bytes` (magic, version, variant, lengths, and the checksums
    /// `verify` asks for) and returns a reader positioned at the first parameter block.
    ///
    /// # Errors
    /// The first check that fails, as a [`DecodeError`].
    pub fn open(
        bytes: &'a [u8],
        expected: Variant,
        verify: Verify,
    ) -> Result<Reader<'a>, DecodeError> {
        check_magic(bytes)?;
        let available = bytes.len() as u64;
        let truncated = |needed: u64| DecodeError::Truncated { needed, available };
        if bytes.len() < V1_HEADER_LEN + CHECKSUM_LEN {
            return Err(truncated((V1_HEADER_LEN + CHECKSUM_LEN) as u64));
        }
        let (version, header) = check_start(bytes, expected)?;
        let exact = |needed: u64| {
            if available < needed {
                Err(truncated(needed))
            } else if available > needed {
                Err(DecodeError::TrailingBytes(available - needed))
            } else {
                Ok(())
            }
        };
        if version == 1 {
            let body_len = read_u64(bytes, 16);
            exact(body_len.saturating_add((V1_HEADER_LEN + CHECKSUM_LEN) as u64))?;
            let end = V1_HEADER_LEN + body_len as usize;
            check_sum(read_u64(bytes, end), checksum(&bytes[..end]))?;
            return Ok(Reader {
                key: None,
                header,
                meta: Cow::Borrowed(&bytes[V1_HEADER_LEN..end]),
                at: 0,
                data: Data::Inline,
            });
        }
        if bytes.len() < HEADER_LEN {
            return Err(truncated(HEADER_LEN as u64));
        }
        let (meta_len, data_len) = (read_u64(bytes, 16), read_u64(bytes, 24));
        let needed = meta_len
            .checked_add(data_len)
            .and_then(|n| n.checked_add((HEADER_LEN + 2 * CHECKSUM_LEN) as u64))
            .unwrap_or(u64::MAX);
        exact(needed)?;
        let meta_end = HEADER_LEN + meta_len as usize;
        check_sum(read_u64(bytes, meta_end), checksum(&bytes[..meta_end]))?;
        let (start, end) = (meta_end + CHECKSUM_LEN, bytes.len() - CHECKSUM_LEN);
        if verify == Verify::All {
            check_sum(read_u64(bytes, end), checksum(&bytes[start..end]))?;
        }
        Ok(Reader {
            key: None,
            header,
            meta: Cow::Borrowed(&bytes[HEADER_LEN..meta_end]),
            at: 0,
            data: Data::Slice {
                bytes,
                at: start,
                end,
            },
        })
    }

    /// Reads and checks the header and parameters from a stream, and returns a reader that
    /// takes the payload sections from it as the variant asks for them. The data checksum
    /// is checked by [`finish`](Reader::finish), after the last section.
    ///
    /// # Errors
    /// As [`open`](Reader::open), and [`DecodeError::Io`] when the stream fails.
    pub fn from_read(
        input: &'a mut dyn Read,
        expected: Variant,
    ) -> Result<Reader<'a>, DecodeError> {
        let mut head = [0u8; HEADER_LEN];
        let got = read_full(input, &mut head[..V1_HEADER_LEN])?;
        check_magic(&head[..got])?;
        if got < V1_HEADER_LEN {
            return Err(DecodeError::Truncated {
                needed: (V1_HEADER_LEN + CHECKSUM_LEN) as u64,
                available: got as u64,
            });
        }
        let (version, header) = check_start(&head, expected)?;
        if version == 1 {
            let body = read_sealed(input, &head[..V1_HEADER_LEN], read_u64(&head, 16))?;
            return Ok(Reader {
                key: None,
                header,
                meta: Cow::Owned(body),
                at: 0,
                data: Data::Inline,
            });
        }
        let more = read_full(input, &mut head[V1_HEADER_LEN..])?;
        if more < HEADER_LEN - V1_HEADER_LEN {
            return Err(DecodeError::Truncated {
                needed: HEADER_LEN as u64,
                available: (V1_HEADER_LEN + more) as u64,
            });
        }
        let (meta_len, data_len) = (read_u64(&head, 16), read_u64(&head, 24));
        let meta = read_sealed(input, &head, meta_len)?;
        Ok(Reader {
            key: None,
            header,
            at: 0,
            data: Data::Stream {
                input,
                at: (HEADER_LEN + meta.len() + CHECKSUM_LEN) as u64,
                left: data_len,
                sum: Box::new(XxHash3_64::with_seed(0)),
            },
            meta: Cow::Owned(meta),
        })
    }

    /// The validated header.
    pub fn header(&self) -> Header {
        self.header
    }

    /// The hasher the bytes were written with, rebuilt as an `S`.
    ///
    /// # Errors
    /// [`DecodeError::HasherMismatch`] when the bytes name another hasher;
    /// [`DecodeError::KeyRequired`] / [`DecodeError::WrongKey`] for a keyed hasher read
    /// without its key ([`with_key`](Reader::with_key)) or with another.
    pub fn hasher<S: PortableHasher>(&self) -> Result<S, DecodeError> {
        match &self.key {
            Some(key) => S::from_spec_with_key(self.header.hasher, key),
            None => S::from_spec(self.header.hasher),
        }
    }

    /// Gives the reader the secret key of a keyed hasher, for [`hasher`](Reader::hasher).
    #[must_use]
    pub fn with_key(mut self, key: &HashKey) -> Self {
        self.key = Some(*key);
        self
    }

    /// Reads the next parameter block.
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when it does not decode.
    pub fn params<P: DeserializeOwned>(&mut self) -> Result<P, DecodeError> {
        let (params, used) = bincode::serde::decode_from_slice(&self.meta[self.at..], PARAMS)
            .map_err(|e| DecodeError::Invalid(format!("parameters: {e}")))?;
        self.at += used;
        Ok(params)
    }

    /// Reads a probe scheme written by [`Writer::probes`]: from format version 3 on, a byte
    /// where the variant's layout names it; bytes of versions 1 and 2 have none and were all
    /// written with [`ProbeScheme::Enhanced`], which this returns without reading.
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when the byte is missing, [`DecodeError::UnknownProbeScheme`]
    /// for an id this build does not know.
    pub fn probes(&mut self) -> Result<ProbeScheme, DecodeError> {
        // Version 3 added the scheme; before it, every filter used the enhanced scheme.
        if self.header.version < 3 {
            return Ok(ProbeScheme::Enhanced);
        }
        let id = self.params::<u8>()?;
        ProbeScheme::from_id(id).ok_or(DecodeError::UnknownProbeScheme(id))
    }

    /// Reads a section's announced length and returns its size in bytes, checked against
    /// what the input can still hold.
    fn section_size(&mut self, what: &str, elem: u64) -> Result<u64, DecodeError> {
        let meta = &self.meta[self.at..];
        if meta.len() < 8 {
            return Err(DecodeError::Invalid(format!("{what}: missing length")));
        }
        let count = read_u64(meta, 0);
        self.at += 8;
        let room = match &self.data {
            Data::Inline => (self.meta.len() - self.at) as u64,
            Data::Slice { at, end, .. } => (*end - *at) as u64,
            Data::Stream { left, .. } => *left,
        };
        count
            .checked_mul(elem)
            .filter(|&size| size <= room)
            .ok_or_else(|| {
                DecodeError::Invalid(format!(
                    "{what}: {count} entries announced, {room} bytes present"
                ))
            })
    }

    /// The next section's bytes, in place when the input is in memory.
    fn section(&mut self, what: &str, elem: u64) -> Result<Cow<'a, [u8]>, DecodeError> {
        let size = self.section_size(what, elem)?;
        match &mut self.data {
            Data::Inline => {
                let (from, to) = (self.at, self.at + size as usize);
                self.at = to;
                Ok(match &self.meta {
                    Cow::Borrowed(body) => Cow::Borrowed(&body[from..to]),
                    Cow::Owned(body) => Cow::Owned(body[from..to].to_vec()),
                })
            }
            Data::Slice { bytes, at, end } => {
                let start = align_up(*at as u64) as usize;
                let stop = start as u64 + size;
                if stop > *end as u64 {
                    return Err(DecodeError::Invalid(format!(
                        "{what}: {size} bytes announced at offset {start}, the data ends at {end}"
                    )));
                }
                if bytes[*at..start].iter().any(|&b| b != 0) {
                    return Err(DecodeError::Invalid(format!(
                        "{what}: padding before offset {start} is not zero"
                    )));
                }
                *at = stop as usize;
                Ok(Cow::Borrowed(&bytes[start..stop as usize]))
            }
            Data::Stream { .. } => Ok(Cow::Owned(self.stream_section::<u8>(what, size)?)),
        }
    }

    /// Reads `size` bytes of the next section from the stream into a vector of `T`,
    /// growing it only as the bytes arrive.
    fn stream_section<T: Pod>(&mut self, what: &str, size: u64) -> Result<Vec<T>, DecodeError> {
        let Data::Stream {
            input,
            at,
            left,
            sum,
        } = &mut self.data
        else {
            unreachable!("called on a stream reader only")
        };
        let pad = align_up(*at) - *at;
        let mut zeros = [0u8; ALIGN];
        let need = pad + size;
        if need > *left {
            return Err(DecodeError::Invalid(format!(
                "{what}: {size} bytes announced, {left} bytes of data left"
            )));
        }
        let got = read_full(*input, &mut zeros[..pad as usize])?;
        if got < pad as usize {
            return Err(DecodeError::Truncated {
                needed: *at + need,
                available: *at + got as u64,
            });
        }
        if zeros[..pad as usize].iter().any(|&b| b != 0) {
            return Err(DecodeError::Invalid(format!(
                "{what}: padding before offset {} is not zero",
                *at + pad
            )));
        }
        sum.write(&zeros[..pad as usize]);
        let elem = core::mem::size_of::<T>();
        let total = (size / elem as u64) as usize;
        // Grow 1 MiB at a time: a length the stream does not back costs at most that.
        let step = ((1 << 20) / elem).max(1);
        let mut out: Vec<T> = Vec::new();
        while out.len() < total {
            let from = out.len();
            out.resize((from + step).min(total), T::zeroed());
            let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut out[from..]);
            let got = read_full(*input, buf)?;
            if got < buf.len() {
                return Err(DecodeError::Truncated {
                    needed: *at + need,
                    available: *at + pad + (from * elem + got) as u64,
                });
            }
            sum.write(buf);
        }
        *at += need;
        *left -= need;
        Ok(out)
    }

    /// Reads a section of `u64` words.
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when its announced length exceeds what remains.
    pub fn words(&mut self) -> Result<Vec<u64>, DecodeError> {
        self.words_as()
    }

    /// Reads a section written by [`Writer::words_as`] into values made of `u64` words
    /// (such as `[u64; 8]` blocks): one copy, from the input into the result.
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when its announced length exceeds what remains or is not a
    /// whole number of values.
    pub fn words_as<T: Pod>(&mut self) -> Result<Vec<T>, DecodeError> {
        const { assert!(core::mem::size_of::<T>() % 8 == 0 && core::mem::align_of::<T>() >= 8) };
        let elem = core::mem::size_of::<T>() as u64;
        let mut values: Vec<T> = if let Data::Stream { .. } = self.data {
            let size = self.section_size("words", 8)?;
            self.check_whole(size, elem)?;
            self.stream_section("words", size)?
        } else {
            let bytes = self.section("words", 8)?;
            self.check_whole(bytes.len() as u64, elem)?;
            let mut values = vec![T::zeroed(); bytes.len() / elem as usize];
            // Zeros of an integer type (`u64`, `[u64; 8]`) are allocated zeroed, untouched by
            // this process when large: advised before the copy first writes them (see
            // `crate::bits::filled_vec`).
            crate::arch::advise_huge_pages(&mut values);
            bytemuck::cast_slice_mut::<T, u8>(&mut values).copy_from_slice(&bytes);
            values
        };
        if cfg!(target_endian = "big") {
            for w in bytemuck::cast_slice_mut::<T, u64>(&mut values) {
                *w = u64::from_le(*w);
            }
        }
        Ok(values)
    }

    fn check_whole(&self, size: u64, elem: u64) -> Result<(), DecodeError> {
        if size % elem == 0 {
            Ok(())
        } else {
            Err(DecodeError::Invalid(format!(
                "a section of {} words is not a whole number of {}-word values",
                size / 8,
                elem / 8
            )))
        }
    }

    /// The next section of words as values of `T`, in place: no copy. For zero-copy views.
    ///
    /// # Errors
    /// [`DecodeError::NotViewable`] when the bytes are of format version 1 (no aligned
    /// payload), the section is not aligned to `T` in memory, the reader reads a stream, or
    /// this platform is big-endian; [`DecodeError::Invalid`] as for
    /// [`words_as`](Reader::words_as).
    pub fn words_in_place<T: Pod>(&mut self) -> Result<&'a [T], DecodeError> {
        let not = |why: String| Err(DecodeError::NotViewable(why));
        if cfg!(target_endian = "big") {
            return not("the payload is little-endian and this platform is big-endian".into());
        }
        match self.data {
            Data::Slice { .. } => {}
            Data::Inline => {
                return not(format!(
                    "format version {} keeps the payload at unaligned offsets: read it with \
                     from_bytes, or write it again with this build (version {VERSION})",
                    self.header.version
                ))
            }
            Data::Stream { .. } => return not("a view needs the bytes in memory".into()),
        }
        let elem = core::mem::size_of::<T>() as u64;
        let bytes = match self.section("words", 8)? {
            Cow::Borrowed(bytes) => bytes,
            Cow::Owned(_) => unreachable!("a slice reader lends its sections"),
        };
        self.check_whole(bytes.len() as u64, elem)?;
        bytemuck::try_cast_slice(bytes).or_else(|_| {
            not(format!(
                "the payload is at address {:#x}, not a multiple of {}: map the file (maps \
                 are page-aligned) or copy the bytes into a buffer aligned to {ALIGN}",
                bytes.as_ptr() as usize,
                core::mem::align_of::<T>()
            ))
        })
    }

    /// Reads a section of raw bytes (in place when the input is in memory).
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when its announced length exceeds what remains.
    pub fn bytes(&mut self) -> Result<Cow<'a, [u8]>, DecodeError> {
        self.section("bytes", 1)
    }

    /// Checks that everything was read, and (from a stream) the data checksum.
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when parameters or data remain unread,
    /// [`DecodeError::ChecksumMismatch`] when the streamed data does not match its checksum.
    pub fn finish(self) -> Result<(), DecodeError> {
        let meta_left = self.meta.len() - self.at;
        if meta_left > 0 {
            return Err(DecodeError::Invalid(format!(
                "{meta_left} bytes left over in the parameters"
            )));
        }
        let data_left = match &self.data {
            Data::Inline => 0,
            Data::Slice { at, end, .. } => (end - at) as u64,
            Data::Stream { left, .. } => *left,
        };
        if data_left > 0 {
            return Err(DecodeError::Invalid(format!(
                "{data_left} bytes of data after the last section"
            )));
        }
        if let Data::Stream { input, at, sum, .. } = self.data {
            let mut stored = [0u8; CHECKSUM_LEN];
            let got = read_full(input, &mut stored)?;
            if got < CHECKSUM_LEN {
                return Err(DecodeError::Truncated {
                    needed: at + CHECKSUM_LEN as u64,
                    available: at + got as u64,
                });
            }
            check_sum(u64::from_le_bytes(stored), sum.finish())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Xxh3Builder;

    fn sample() -> Vec<u8> {
        Writer::new(Variant::Classic, Xxh3Builder::with_seed(9).spec())
            .params(&(7u32, 1000u64))
            .words(&[1, 2, 3])
            .bytes(&b"xy"[..])
            .to_vec()
    }

    fn read_sample(mut r: Reader<'_>) {
        assert_eq!(r.header().hasher, HasherSpec { id: 4, seed: 9 });
        assert_eq!(r.header().version, VERSION);
        assert_eq!(
            r.hasher::<Xxh3Builder>().unwrap(),
            Xxh3Builder::with_seed(9)
        );
        assert_eq!(r.params::<(u32, u64)>().unwrap(), (7, 1000));
        assert_eq!(r.words().unwrap(), vec![1, 2, 3]);
        assert_eq!(&*r.bytes().unwrap(), b"xy");
        r.finish().unwrap();
    }

    #[test]
    fn round_trip_from_memory_and_from_a_stream() {
        let bytes = sample();
        read_sample(Reader::open(&bytes, Variant::Classic, Verify::All).unwrap());
        let mut stream = bytes.as_slice();
        read_sample(Reader::from_read(&mut stream, Variant::Classic).unwrap());
        assert!(stream.is_empty());
    }

    #[test]
    fn peek_reads_the_header_of_any_variant_and_refuses_what_is_not_one() {
        let bytes = sample();
        let header = peek(&bytes).unwrap();
        assert_eq!(header.variant, Variant::Classic);
        assert_eq!(header.hasher, HasherSpec { id: 4, seed: 9 });
        assert_eq!(header.version, VERSION);
        // Only the start is read: a truncated file still peeks, and fails to decode.
        assert_eq!(peek(&bytes[..START_LEN]).unwrap(), header);
        for cut in 0..START_LEN {
            assert!(matches!(
                peek(&bytes[..cut]),
                Err(DecodeError::Truncated { .. } | DecodeError::BadMagic { .. })
            ));
        }
        let mut bad = bytes.clone();
        bad[0] = b'P';
        assert!(matches!(peek(&bad), Err(DecodeError::BadMagic { .. })));
        let mut bad = bytes.clone();
        bad[6] = 200;
        assert!(matches!(peek(&bad), Err(DecodeError::UnknownVariant(200))));
        let mut bad = bytes;
        bad[4] = 0;
        assert!(matches!(
            peek(&bad),
            Err(DecodeError::UnsupportedVersion { found: 0, .. })
        ));
    }

    #[test]
    fn sections_are_aligned_and_the_length_is_exact() {
        let words = [5u64; 9];
        let w = Writer::new(Variant::Blocked, Xxh3Builder::default().spec())
            .params(&3u8)
            .words(&words)
            .bytes(&b"abc"[..])
            .words(&words);
        let bytes = w.to_vec();
        assert_eq!(bytes.len() as u64, w.serialized_len());
        // meta: 1 + 3 lengths of 8 = 25 bytes, so the data starts at 32 + 25 + 8 = 65; the
        // first section at 128, the bytes at 128 + 72 = 200 -> 256, the last at 320.
        let at = |i: usize| read_u64(&bytes, i);
        assert_eq!((at(128), at(128 + 64)), (5, 5));
        assert_eq!(&bytes[256..259], b"abc");
        assert_eq!(at(320 + 64), 5);
        assert_eq!(bytes.len(), 320 + 72 + 8);
    }

    #[test]
    fn envelope_errors() {
        let bytes = sample();
        assert!(matches!(
            Reader::open(&bytes, Variant::Bitmap, Verify::All),
            Err(DecodeError::WrongVariant { .. })
        ));
        for cut in 0..bytes.len() {
            assert!(
                Reader::open(&bytes[..cut], Variant::Classic, Verify::All).is_err(),
                "{cut}"
            );
            let mut stream = &bytes[..cut];
            let r = Reader::from_read(&mut stream, Variant::Classic);
            let whole = r.and_then(|mut r| {
                r.params::<(u32, u64)>()?;
                r.words()?;
                r.bytes()?;
                r.finish()
            });
            assert!(whole.is_err(), "stream cut at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert_eq!(
            Reader::open(&long, Variant::Classic, Verify::All).unwrap_err(),
            DecodeError::TrailingBytes(1)
        );
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(matches!(
            Reader::open(&bad, Variant::Classic, Verify::All),
            Err(DecodeError::BadMagic { .. })
        ));
        let mut bad = bytes.clone();
        bad[4] = VERSION as u8 + 1;
        assert!(matches!(
            Reader::open(&bad, Variant::Classic, Verify::All),
            Err(DecodeError::UnsupportedVersion { found, .. }) if found == VERSION + 1
        ));
        let mut bad = bytes.clone();
        bad[6] = 200;
        assert_eq!(
            Reader::open(&bad, Variant::Classic, Verify::All).unwrap_err(),
            DecodeError::UnknownVariant(200)
        );
        // A flip in the meta is caught by the meta checksum, even when the payload's is
        // skipped; a flip in the payload only by the data checksum.
        let mut bad = bytes.clone();
        bad[HEADER_LEN + 2] ^= 1;
        assert!(matches!(
            Reader::open(&bad, Variant::Classic, Verify::SkipPayloadChecksum),
            Err(DecodeError::ChecksumMismatch { .. })
        ));
        let mut bad = bytes.clone();
        let last = bad.len() - CHECKSUM_LEN - 1;
        bad[last] ^= 1;
        assert!(matches!(
            Reader::open(&bad, Variant::Classic, Verify::All),
            Err(DecodeError::ChecksumMismatch { .. })
        ));
        assert!(Reader::open(&bad, Variant::Classic, Verify::SkipPayloadChecksum).is_ok());
        let mut stream = bad.as_slice();
        let mut r = Reader::from_read(&mut stream, Variant::Classic).unwrap();
        r.params::<(u32, u64)>().unwrap();
        r.words().unwrap();
        r.bytes().unwrap();
        assert!(matches!(
            r.finish(),
            Err(DecodeError::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn hostile_section_lengths_do_not_allocate() {
        // A meta block that announces 2^60 words, sealed with a valid checksum.
        let mut bytes = Writer::new(Variant::Classic, Xxh3Builder::default().spec())
            .params(&1u8)
            .to_vec();
        bytes.truncate(HEADER_LEN + 1);
        bytes.extend_from_slice(&(1u64 << 60).to_le_bytes());
        bytes[16..24].copy_from_slice(&9u64.to_le_bytes());
        let sum = checksum(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        bytes.extend_from_slice(&checksum(&[]).to_le_bytes());
        let mut r = Reader::open(&bytes, Variant::Classic, Verify::All).unwrap();
        r.params::<u8>().unwrap();
        assert!(matches!(r.words(), Err(DecodeError::Invalid(_))));
        // From a stream that also announces 2^40 bytes of data it does not have.
        bytes[24..32].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let meta_end = HEADER_LEN + 9;
        let sum = checksum(&bytes[..meta_end]);
        bytes[meta_end..meta_end + 8].copy_from_slice(&sum.to_le_bytes());
        let mut stream = bytes.as_slice();
        let mut r = Reader::from_read(&mut stream, Variant::Classic).unwrap();
        r.params::<u8>().unwrap();
        assert!(matches!(r.words(), Err(DecodeError::Invalid(_))));
    }

    #[test]
    fn views_need_aligned_version_2_bytes() {
        let bytes = sample();
        let mut r = Reader::open(&bytes, Variant::Classic, Verify::All).unwrap();
        r.params::<(u32, u64)>().unwrap();
        // A Vec<u8> may start anywhere; copy into u64s to know the address is aligned.
        let mut aligned = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut aligned)[..bytes.len()].copy_from_slice(&bytes);
        let in_u64 = &bytemuck::cast_slice::<u64, u8>(&aligned)[..bytes.len()];
        let mut r = Reader::open(in_u64, Variant::Classic, Verify::All).unwrap();
        r.params::<(u32, u64)>().unwrap();
        assert_eq!(r.words_in_place::<u64>().unwrap(), &[1, 2, 3]);
        // One byte off: refused with the reason, not copied.
        let mut shifted = vec![0u64; bytes.len().div_ceil(8) + 1];
        let view = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut shifted)[1..=bytes.len()];
        view.copy_from_slice(&bytes);
        let mut r = Reader::open(view, Variant::Classic, Verify::All).unwrap();
        r.params::<(u32, u64)>().unwrap();
        assert!(matches!(
            r.words_in_place::<u64>(),
            Err(DecodeError::NotViewable(why)) if why.contains("not a multiple of 8")
        ));
    }
}
