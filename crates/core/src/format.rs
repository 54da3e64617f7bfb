//! bloomkit's versioned, validated, portable byte format (spec: `docs/format.md`).
//!
//! ```text
//! offset  size  field
//! 0       4     magic b"BLMK"
//! 4       2     format version, u16 LE (this build: 1)
//! 6       1     variant tag (see Variant::tag)
//! 7       1     hasher id (PortableHasher::ID)
//! 8       8     hasher seed, u64 LE
//! 16      8     body length B, u64 LE
//! 24      B     body: the variant's parameters (bincode 2, fixed-width little-endian
//!               integers), then its payload sections
//! 24+B    8     checksum: XXH3-64 (seed 0) of bytes 0..24+B, u64 LE
//! ```
//!
//! A payload section of words is a u64 LE count followed by that many u64 LE words; a
//! section of bytes is a u64 LE length followed by the bytes.
//!
//! [`Reader`] checks, in order: length, magic, version, variant, body length against the
//! input, checksum, and then, as the variant reads them, the hasher, the parameters, and
//! every section's length against the bytes that remain *before* allocating for it. So a
//! truncated, corrupted or hostile input gets a [`DecodeError`], never a panic, and never
//! an allocation larger than the input itself.

use serde::de::DeserializeOwned;
use serde::Serialize;
use twox_hash::XxHash3_64;

use crate::hash::{HasherSpec, PortableHasher};
use crate::{DecodeError, Error, Variant};

/// The first four bytes of every serialized bloomkit filter.
pub const MAGIC: [u8; 4] = *b"BLMK";
/// The format version this build writes and reads.
pub const VERSION: u16 = 1;
/// Bytes before the body.
pub const HEADER_LEN: usize = 24;
/// Bytes after the body (the checksum).
pub const TRAILER_LEN: usize = 8;

/// The bincode configuration of the parameter block: fixed-width little-endian integers,
/// so each field sits at a fixed offset and the layout does not depend on the values.
const PARAMS: bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Fixint,
> = bincode::config::standard().with_fixed_int_encoding();

/// The checksum stored in the trailer: XXH3-64 with seed 0 of everything before it.
pub fn checksum(content: &[u8]) -> u64 {
    XxHash3_64::oneshot_with_seed(0, content)
}

/// Types that convert to and from bloomkit's byte format.
///
/// The bytes carry the variant, the hasher and its seed and every parameter, so a filter
/// written by one process (on any platform) answers identically when read by another.
pub trait Codec: Sized {
    /// The filter as bytes.
    fn to_bytes(&self) -> Vec<u8>;

    /// The filter from bytes written by [`to_bytes`](Codec::to_bytes).
    ///
    /// # Errors
    /// [`Error::Decode`] on truncated, corrupted or hostile input, bytes of another variant,
    /// hasher or format version; never a panic.
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error>;
}

/// The common header of a serialized filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header {
    /// Which variant the bytes hold.
    pub variant: Variant,
    /// The hasher and seed the filter was built with.
    pub hasher: HasherSpec,
}

/// Writes a filter: header, parameters, payload sections, checksum.
#[derive(Debug)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// Starts the bytes of a `variant` built with `hasher`.
    pub fn new(variant: Variant, hasher: HasherSpec) -> Writer {
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(&MAGIC);
        buf.extend_from_slice(&VERSION.to_le_bytes());
        buf.push(variant.tag());
        buf.push(hasher.id);
        buf.extend_from_slice(&hasher.seed.to_le_bytes());
        buf.extend_from_slice(&0u64.to_le_bytes()); // body length, patched in finish()
        Writer { buf }
    }

    /// Appends the variant's parameter block.
    pub fn params<P: Serialize>(&mut self, params: &P) -> &mut Writer {
        // Plain structs of integers and floats cannot fail to encode into a Vec.
        bincode::serde::encode_into_std_write(params, &mut self.buf, PARAMS)
            .expect("encoding plain parameters into a Vec cannot fail");
        self
    }

    /// Appends a section of `u64` words.
    pub fn words(&mut self, words: &[u64]) -> &mut Writer {
        self.buf.reserve(8 + words.len() * 8);
        self.buf
            .extend_from_slice(&(words.len() as u64).to_le_bytes());
        for w in words {
            self.buf.extend_from_slice(&w.to_le_bytes());
        }
        self
    }

    /// Appends a section of raw bytes.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Writer {
        self.buf
            .extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.buf.extend_from_slice(bytes);
        self
    }

    /// Closes the body and appends the checksum.
    pub fn finish(&mut self) -> Vec<u8> {
        let mut buf = core::mem::take(&mut self.buf);
        let body_len = (buf.len() - HEADER_LEN) as u64;
        buf[16..24].copy_from_slice(&body_len.to_le_bytes());
        let sum = checksum(&buf);
        buf.extend_from_slice(&sum.to_le_bytes());
        buf
    }
}

/// Reads and validates a filter written by [`Writer`].
#[derive(Debug)]
pub struct Reader<'a> {
    header: Header,
    body: &'a [u8],
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

impl<'a> Reader<'a> {
    /// Checks the envelope of `bytes` (length, magic, version, variant, checksum) and
    /// returns a reader positioned at the start of the body.
    ///
    /// # Errors
    /// The first check that fails, as a [`DecodeError`].
    pub fn open(bytes: &'a [u8], expected: Variant) -> Result<Reader<'a>, DecodeError> {
        let min = (HEADER_LEN + TRAILER_LEN) as u64;
        let truncated = |needed: u64| DecodeError::Truncated {
            needed,
            available: bytes.len() as u64,
        };
        if bytes.len() >= 4 && bytes[..4] != MAGIC {
            let mut found = [0; 4];
            found.copy_from_slice(&bytes[..4]);
            return Err(DecodeError::BadMagic {
                found,
                expected: MAGIC,
            });
        }
        if (bytes.len() as u64) < min {
            return Err(truncated(min));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != VERSION {
            return Err(DecodeError::UnsupportedVersion {
                found: version,
                supported: VERSION,
            });
        }
        let found = Variant::from_tag(bytes[6]).ok_or(DecodeError::UnknownVariant(bytes[6]))?;
        if found != expected {
            return Err(DecodeError::WrongVariant { expected, found });
        }
        let body_len = read_u64(bytes, 16);
        let needed = body_len.saturating_add(min);
        let available = bytes.len() as u64;
        if available < needed {
            return Err(truncated(needed));
        }
        if available > needed {
            return Err(DecodeError::TrailingBytes(available - needed));
        }
        let end = HEADER_LEN + body_len as usize;
        let stored = read_u64(bytes, end);
        let computed = checksum(&bytes[..end]);
        if stored != computed {
            return Err(DecodeError::ChecksumMismatch { stored, computed });
        }
        Ok(Reader {
            header: Header {
                variant: found,
                hasher: HasherSpec {
                    id: bytes[7],
                    seed: read_u64(bytes, 8),
                },
            },
            body: &bytes[HEADER_LEN..end],
        })
    }

    /// The validated header.
    pub fn header(&self) -> Header {
        self.header
    }

    /// The hasher the bytes were written with, rebuilt as an `S`.
    ///
    /// # Errors
    /// [`DecodeError::HasherMismatch`] when the bytes name another hasher.
    pub fn hasher<S: PortableHasher>(&self) -> Result<S, DecodeError> {
        S::from_spec(self.header.hasher)
    }

    /// Reads the parameter block.
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when it does not decode.
    pub fn params<P: DeserializeOwned>(&mut self) -> Result<P, DecodeError> {
        let (params, used) = bincode::serde::decode_from_slice(self.body, PARAMS)
            .map_err(|e| DecodeError::Invalid(format!("parameters: {e}")))?;
        self.body = &self.body[used..];
        Ok(params)
    }

    fn section(&mut self, what: &str, elem: u64) -> Result<&'a [u8], DecodeError> {
        let invalid = |msg: String| DecodeError::Invalid(msg);
        if self.body.len() < 8 {
            return Err(invalid(format!("{what}: missing length")));
        }
        let count = read_u64(self.body, 0);
        let rest = &self.body[8..];
        let size = count
            .checked_mul(elem)
            .filter(|&s| s <= rest.len() as u64)
            .ok_or_else(|| {
                invalid(format!(
                    "{what}: {count} entries announced, {} bytes present",
                    rest.len()
                ))
            })?;
        let (section, rest) = rest.split_at(size as usize);
        self.body = rest;
        Ok(section)
    }

    /// Reads a section of `u64` words.
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when its announced length exceeds what remains.
    pub fn words(&mut self) -> Result<Vec<u64>, DecodeError> {
        let section = self.section("words", 8)?;
        Ok(section.chunks_exact(8).map(|c| read_u64(c, 0)).collect())
    }

    /// Reads a section of raw bytes.
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when its announced length exceeds what remains.
    pub fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        self.section("bytes", 1)
    }

    /// Checks that the whole body was read.
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] when bytes remain.
    pub fn finish(self) -> Result<(), DecodeError> {
        if self.body.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::Invalid(format!(
                "{} bytes left over in the body",
                self.body.len()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Xxh3Builder;

    fn sample() -> Vec<u8> {
        let mut w = Writer::new(Variant::Classic, Xxh3Builder::with_seed(9).spec());
        w.params(&(7u32, 1000u64)).words(&[1, 2, 3]).bytes(b"xy");
        w.finish()
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        let mut r = Reader::open(&bytes, Variant::Classic).unwrap();
        assert_eq!(r.header().hasher, HasherSpec { id: 1, seed: 9 });
        assert_eq!(
            r.hasher::<Xxh3Builder>().unwrap(),
            Xxh3Builder::with_seed(9)
        );
        assert_eq!(r.params::<(u32, u64)>().unwrap(), (7, 1000));
        assert_eq!(r.words().unwrap(), vec![1, 2, 3]);
        assert_eq!(r.bytes().unwrap(), b"xy");
        r.finish().unwrap();
    }

    #[test]
    fn envelope_errors() {
        let bytes = sample();
        assert!(matches!(
            Reader::open(&bytes, Variant::Bitmap),
            Err(DecodeError::WrongVariant { .. })
        ));
        for cut in 0..bytes.len() {
            assert!(
                Reader::open(&bytes[..cut], Variant::Classic).is_err(),
                "{cut}"
            );
        }
        let mut long = bytes.clone();
        long.push(0);
        assert_eq!(
            Reader::open(&long, Variant::Classic).unwrap_err(),
            DecodeError::TrailingBytes(1)
        );
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(matches!(
            Reader::open(&bad, Variant::Classic),
            Err(DecodeError::BadMagic { .. })
        ));
        let mut bad = bytes.clone();
        bad[4] = 2;
        assert!(matches!(
            Reader::open(&bad, Variant::Classic),
            Err(DecodeError::UnsupportedVersion { found: 2, .. })
        ));
        let mut bad = bytes.clone();
        bad[6] = 200;
        assert_eq!(
            Reader::open(&bad, Variant::Classic).unwrap_err(),
            DecodeError::UnknownVariant(200)
        );
        let mut bad = bytes.clone();
        bad[30] ^= 1;
        assert!(matches!(
            Reader::open(&bad, Variant::Classic),
            Err(DecodeError::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn hostile_section_lengths_do_not_allocate() {
        let mut w = Writer::new(Variant::Classic, Xxh3Builder::default().spec());
        w.params(&1u8);
        let mut bytes = w.finish();
        // Splice a section that announces 2^60 words into the body, and re-seal.
        bytes.truncate(bytes.len() - TRAILER_LEN);
        bytes.extend_from_slice(&(1u64 << 60).to_le_bytes());
        let body_len = (bytes.len() - HEADER_LEN) as u64;
        bytes[16..24].copy_from_slice(&body_len.to_le_bytes());
        let sum = checksum(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        let mut r = Reader::open(&bytes, Variant::Classic).unwrap();
        r.params::<u8>().unwrap();
        assert!(matches!(r.words(), Err(DecodeError::Invalid(_))));
    }
}
