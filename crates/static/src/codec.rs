//! The byte format of the static filters ([`Codec`]; variant tags 8-11, `docs/format.md`),
//! serde through those bytes, and the zero-copy views [`BinaryFuseRef`] and
//! [`RibbonFilterRef`].
//!
//! Parameters: the layout (construction seed, sizes, key count; for ribbon the columns and
//! the target rate). Payload: one section of little-endian `u64` words (binary fuse: the
//! fingerprints packed little-endian in them; ribbon: the solution, two words per 128-row
//! column of each block). Decoding checks the layout against the payload's length, so a
//! lookup never leaves the table whatever the bytes say.

use core::fmt;
use core::hash::BuildHasher;
use core::marker::PhantomData;

use bloomkit_core::format::{Reader, Verify, Writer};
use bloomkit_core::{Codec, Error, PortableHasher, Variant, Xxh3Builder};

use crate::fuse::{fuse_read_side, FuseLayout};
use crate::ribbon::{ribbon_read_side, RibbonLayout};
use crate::{BinaryFuse, Fingerprint, RibbonFilter};

/// The words a binary fuse table of `layout` takes.
fn fuse_words<F: Fingerprint>(layout: &FuseLayout) -> usize {
    let per_word = 8 / core::mem::size_of::<F>();
    layout.slots().div_ceil(per_word)
}

/// Reads and checks a binary fuse filter's parameters, then its words with `words`.
fn read_fuse<'a, F: Fingerprint, S: PortableHasher, W: AsRef<[u64]>>(
    mut reader: Reader<'a>,
    words: impl FnOnce(&mut Reader<'a>) -> Result<W, Error>,
) -> Result<(FuseLayout, W, S), Error> {
    let hasher = reader.hasher::<S>()?;
    let layout: FuseLayout = reader.params()?;
    let w = words(&mut reader)?;
    reader.finish()?;
    layout.check().map_err(Error::into_decode)?;
    let expected = fuse_words::<F>(&layout);
    if w.as_ref().len() != expected {
        return Err(Error::WordCount {
            bits: layout.slots() as u64 * u64::from(F::BITS),
            expected: expected as u64,
            found: w.as_ref().len() as u64,
        }
        .into_decode());
    }
    Ok((layout, w, hasher))
}

/// Reads and checks a ribbon filter's parameters, then its words with `words`.
fn read_ribbon<'a, S: PortableHasher, W: AsRef<[u64]>>(
    mut reader: Reader<'a>,
    words: impl FnOnce(&mut Reader<'a>) -> Result<W, Error>,
) -> Result<(RibbonLayout, W, S), Error> {
    let hasher = reader.hasher::<S>()?;
    let layout: RibbonLayout = reader.params()?;
    let w = words(&mut reader)?;
    reader.finish()?;
    layout.check(w.as_ref().len())?;
    Ok((layout, w, hasher))
}

impl<F: Fingerprint, K: ?Sized, S: PortableHasher> Codec for BinaryFuse<F, K, S> {
    const VARIANT: Variant = F::VARIANT;

    fn encode(&self) -> Writer<'_> {
        Writer::new(F::VARIANT, self.hasher.spec())
            .params(&self.layout)
            .words(&self.words)
    }

    fn decode(reader: Reader<'_>) -> Result<Self, Error> {
        let (layout, words, hasher) =
            read_fuse::<F, S, _>(reader, |r| r.words().map_err(Error::from))?;
        Ok(BinaryFuse {
            layout,
            words,
            hasher,
            key: PhantomData,
        })
    }
}

impl<F: Fingerprint, K: ?Sized, S: PortableHasher> BinaryFuse<F, K, S> {
    /// The filter in bloomkit's byte format: header, layout, fingerprints, checksums
    /// (`docs/format.md`). To write without this buffer, use [`Codec::write_to`].
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_static::BinaryFuse8;
    ///
    /// let f = BinaryFuse8::<u64>::from_keys(0..1_000u64)?;
    /// let g = BinaryFuse8::<u64>::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

impl<F: Fingerprint, K: ?Sized> BinaryFuse<F, K> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes). (For a hasher of your own,
    /// use [`Codec::from_bytes`].)
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant (a
    /// `BinaryFuse16`'s bytes read as a `BinaryFuse8`), hasher or format version; never a
    /// panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

bloomkit_core::impl_serde_via_bytes!([F: Fingerprint, K: ?Sized, S: PortableHasher] BinaryFuse<F, K, S>);

impl<K: ?Sized, S: PortableHasher> Codec for RibbonFilter<K, S> {
    const VARIANT: Variant = Variant::Ribbon;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::Ribbon, self.hasher.spec())
            .params(&self.layout)
            .words(&self.words)
    }

    fn decode(reader: Reader<'_>) -> Result<Self, Error> {
        let (layout, words, hasher) =
            read_ribbon::<S, _>(reader, |r| r.words().map_err(Error::from))?;
        Ok(RibbonFilter {
            layout,
            words,
            hasher,
            key: PhantomData,
        })
    }
}

impl<K: ?Sized, S: PortableHasher> RibbonFilter<K, S> {
    /// The filter in bloomkit's byte format (`docs/format.md`).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_static::RibbonFilter;
    ///
    /// let f = RibbonFilter::<u64>::from_keys_with_fpr(0..1_000u64, 0.001)?;
    /// let g = RibbonFilter::<u64>::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

impl<K: ?Sized> RibbonFilter<K> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant, hasher
    /// or format version; never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized, S: PortableHasher] RibbonFilter<K, S>);

/// A read-only [`BinaryFuse`] over serialized bytes, without copying its table (for
/// filters in memory-mapped files): the owned filter's lookups, by the same code.
///
/// The payload must be aligned to 8 bytes in memory (maps are; [`AlignedBytes`] copies
/// into such a buffer), or the view is refused with
/// [`DecodeError::NotViewable`](bloomkit_core::DecodeError::NotViewable).
///
/// [`AlignedBytes`]: bloomkit_core::format::AlignedBytes
///
/// # Examples
///
/// ```
/// use bloomkit_core::format::AlignedBytes;
/// use bloomkit_static::{BinaryFuse16, BinaryFuseRef};
///
/// let f = BinaryFuse16::<u64>::from_keys(0..1_000u64)?;
/// let bytes = AlignedBytes::copy_from(&f.to_bytes());
/// let view = BinaryFuseRef::<u16, u64>::from_bytes(&bytes)?;
/// assert!((0..1_000u64).all(|k| view.contains(&k)));
/// assert_eq!(view.to_filter(), f);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub struct BinaryFuseRef<'a, F, K: ?Sized, S = Xxh3Builder> {
    layout: FuseLayout,
    words: &'a [u64],
    hasher: S,
    key: PhantomData<fn(&K, F)>,
}

impl<'a, F: Fingerprint, K: ?Sized> BinaryFuseRef<'a, F, K> {
    /// A view of `bytes`, every byte checked (reads the whole input once).
    ///
    /// # Errors
    /// As [`BinaryFuse::from_bytes`], and `NotViewable` for bytes that cannot be used in
    /// place.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::All)
    }

    /// A view whose payload checksum is not checked ([`Verify::SkipPayloadChecksum`]):
    /// O(1), without reading the table first.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), but for a corrupted payload.
    pub fn from_bytes_unverified_payload(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::SkipPayloadChecksum)
    }
}

impl<'a, F: Fingerprint, K: ?Sized, S: PortableHasher> BinaryFuseRef<'a, F, K, S> {
    /// A view of `bytes` written with hasher `S`, checked as `verify` says.
    ///
    /// # Errors
    /// As [`from_bytes`](BinaryFuseRef::from_bytes).
    pub fn with_hasher(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let reader = Reader::open(bytes, F::VARIANT, verify)?;
        let (layout, words, hasher) =
            read_fuse::<F, S, _>(reader, |r| r.words_in_place::<u64>().map_err(Error::from))?;
        Ok(BinaryFuseRef {
            layout,
            words,
            hasher,
            key: PhantomData,
        })
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> BinaryFuse<F, K, S>
    where
        S: Clone,
    {
        BinaryFuse {
            layout: self.layout,
            words: self.words.to_vec(),
            hasher: self.hasher.clone(),
            key: PhantomData,
        }
    }
}

impl<F, K: ?Sized, S> BinaryFuseRef<'_, F, K, S> {
    /// Heap memory the view holds: none (it borrows its bytes).
    pub fn heap_bytes(&self) -> usize {
        0
    }
}

fuse_read_side!(BinaryFuseRef<'a>);
impl_static_lookup!(['a, F: Fingerprint, S: BuildHasher] BinaryFuseRef<'a, F, K, S>, key = K);

impl<F: Fingerprint, K: ?Sized, S: fmt::Debug> fmt::Debug for BinaryFuseRef<'_, F, K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BinaryFuseRef")
            .field("variant", &F::VARIANT)
            .field("items", &self.layout.items)
            .field("slots", &self.layout.slots())
            .field("hasher", &self.hasher)
            .finish()
    }
}

/// A read-only [`RibbonFilter`] over serialized bytes, without copying its solution. Same
/// rules as [`BinaryFuseRef`].
///
/// # Examples
///
/// ```
/// use bloomkit_core::format::AlignedBytes;
/// use bloomkit_static::{RibbonFilter, RibbonFilterRef};
///
/// let f = RibbonFilter::<u64>::from_keys(0..1_000u64)?;
/// let bytes = AlignedBytes::copy_from(&f.to_bytes());
/// let view = RibbonFilterRef::<u64>::from_bytes(&bytes)?;
/// assert!((0..1_000u64).all(|k| view.contains(&k)));
/// assert_eq!(view.to_filter(), f);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub struct RibbonFilterRef<'a, K: ?Sized, S = Xxh3Builder> {
    layout: RibbonLayout,
    words: &'a [u64],
    hasher: S,
    key: PhantomData<fn(&K)>,
}

impl<'a, K: ?Sized> RibbonFilterRef<'a, K> {
    /// A view of `bytes`, every byte checked.
    ///
    /// # Errors
    /// As [`RibbonFilter::from_bytes`], and `NotViewable` for bytes that cannot be used in
    /// place.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::All)
    }

    /// A view whose payload checksum is not checked: O(1).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), but for a corrupted payload.
    pub fn from_bytes_unverified_payload(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::SkipPayloadChecksum)
    }
}

impl<'a, K: ?Sized, S: PortableHasher> RibbonFilterRef<'a, K, S> {
    /// A view of `bytes` written with hasher `S`, checked as `verify` says.
    ///
    /// # Errors
    /// As [`from_bytes`](RibbonFilterRef::from_bytes).
    pub fn with_hasher(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let reader = Reader::open(bytes, Variant::Ribbon, verify)?;
        let (layout, words, hasher) =
            read_ribbon::<S, _>(reader, |r| r.words_in_place::<u64>().map_err(Error::from))?;
        Ok(RibbonFilterRef {
            layout,
            words,
            hasher,
            key: PhantomData,
        })
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> RibbonFilter<K, S>
    where
        S: Clone,
    {
        RibbonFilter {
            layout: self.layout,
            words: self.words.to_vec(),
            hasher: self.hasher.clone(),
            key: PhantomData,
        }
    }
}

impl<K: ?Sized, S> RibbonFilterRef<'_, K, S> {
    /// Heap memory the view holds: none (it borrows its bytes).
    pub fn heap_bytes(&self) -> usize {
        0
    }
}

ribbon_read_side!(RibbonFilterRef<'a>);
impl_static_lookup!(['a, S: BuildHasher] RibbonFilterRef<'a, K, S>, key = K);

impl<K: ?Sized, S: fmt::Debug> fmt::Debug for RibbonFilterRef<'_, K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RibbonFilterRef")
            .field("items", &self.layout.items)
            .field("blocks", &self.layout.blocks)
            .field("hasher", &self.hasher)
            .finish()
    }
}
