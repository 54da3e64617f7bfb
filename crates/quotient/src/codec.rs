//! The quotient filter's byte format (variant tag 12, `docs/format.md`) and serde through
//! it. Parameters: quotient and remainder bits, the target rate, the count. Payload: the
//! table's blocks as little-endian words (each block's spill count, occupied bits, run-end
//! bits and packed remainders); reading checks every run and every count against them.

use core::marker::PhantomData;

use bloomkit_core::format::{Reader, Verify, Writer};
use bloomkit_core::{Codec, DecodeError, Error, PortableHasher, Variant, Xxh3Builder};
use serde::{Deserialize, Serialize};

use crate::table::Table;
use crate::{home_slots_ok, QuotientFilter, MAX_QUOTIENT_BITS};

#[derive(Serialize, Deserialize)]
struct Params {
    /// The home slots: `q` (6 to 40) for `2^q`, or [`BLOCKS_FLAG`] plus `b` for `64 b` that
    /// is not a power of two.
    home: u32,
    remainder_bits: u32,
    target_fpr: f64,
    len: u64,
}

/// The flag of a home-slot count written in blocks of 64 (one that is not a power of two).
const BLOCKS_FLAG: u32 = 1 << 31;

/// `home` home slots as the parameter block writes them (`home_slots_ok` holds).
fn write_home(home: usize) -> u32 {
    if home.is_power_of_two() {
        home.trailing_zeros()
    } else {
        BLOCKS_FLAG | (home / crate::table::BLOCK) as u32
    }
}

/// The home slots a parameter block's field names, if it is one this build writes.
fn read_home(home: u32) -> Option<usize> {
    let slots = if home & BLOCKS_FLAG == 0 {
        // 2^q; the 64 the fewest, 2^40 the most.
        (6..=MAX_QUOTIENT_BITS)
            .contains(&home)
            .then(|| 1usize << home)?
    } else {
        let blocks = (home & !BLOCKS_FLAG) as usize;
        // One form for each count: a power of two is written as its exponent.
        Some(blocks * crate::table::BLOCK).filter(|m| !m.is_power_of_two())?
    };
    home_slots_ok(slots).then_some(slots)
}

impl<K: ?Sized, S: PortableHasher> Codec for QuotientFilter<K, S> {
    const VARIANT: Variant = Variant::Quotient;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::Quotient, self.hasher.spec())
            .params(&Params {
                home: write_home(self.table.quotients),
                remainder_bits: self.table.remainder_bits,
                target_fpr: saturation::write(self.target_fpr, self.saturated),
                len: self.table.len,
            })
            .words(&self.table.words)
    }

    fn decode(reader: Reader<'_>) -> Result<Self, Error> {
        let parts = read::<S, _>(reader, Reader::words)?;
        Ok(QuotientFilter {
            table: parts.table,
            target_fpr: parts.target_fpr,
            saturated: parts.saturated,
            hasher: parts.hasher,
            key: PhantomData,
        })
    }
}

/// How both tables' formats keep a [saturated](crate::QuotientFilter::is_saturated) filter:
/// its target rate negated (a negative rate is no valid target, so a reader that does not
/// know the state refuses the bytes instead of answering "absent" wrongly).
pub(crate) mod saturation {
    use bloomkit_core::{check_fpr, Error};

    /// The target rate as written: negative when saturated.
    pub(crate) fn write(target_fpr: f64, saturated: bool) -> f64 {
        if saturated {
            -target_fpr
        } else {
            target_fpr
        }
    }

    /// The target rate and whether the filter is saturated, from the rate as written.
    ///
    /// # Errors
    /// [`Error::Decode`] unless the rate, or its negation, is a valid target.
    pub(crate) fn read(written: f64) -> Result<(f64, bool), Error> {
        let saturated = written.is_sign_negative();
        let target = check_fpr(written.abs()).map_err(Error::into_decode)?;
        Ok((target, saturated))
    }
}

/// A decoded filter's fields, over words `W` (owned, or borrowed in place).
struct Parts<S, W> {
    table: Table<W>,
    target_fpr: f64,
    saturated: bool,
    hasher: S,
}

/// Reads and checks the parameters and the table, whose words `words` takes from the reader
/// (a copy, or a slice of the bytes in place): the same checks for the filter and its view.
fn read<'a, S: PortableHasher, W: AsRef<[u64]>>(
    mut reader: Reader<'a>,
    words: impl FnOnce(&mut Reader<'a>) -> Result<W, DecodeError>,
) -> Result<Parts<S, W>, Error> {
    let hasher = reader.hasher::<S>()?;
    let p: Params = reader.params()?;
    let words = words(&mut reader)?;
    reader.finish()?;
    let bad = |why: String| Error::Decode(DecodeError::Invalid(format!("quotient filter: {why}")));
    let home = read_home(p.home).ok_or_else(|| bad(format!("home slots field {:#x}", p.home)))?;
    if p.remainder_bits < crate::MIN_REMAINDER_BITS || p.remainder_bits > crate::max_width(home) {
        return Err(bad(format!("{} remainder bits", p.remainder_bits)));
    }
    let (target_fpr, saturated) = saturation::read(p.target_fpr)?;
    let table = Table::from_words_in(home, p.remainder_bits, Some(p.len), words).map_err(bad)?;
    Ok(Parts {
        table,
        target_fpr,
        saturated,
        hasher,
    })
}

impl<K: ?Sized, S: PortableHasher> QuotientFilter<K, S> {
    /// The filter in bloomkit's byte format (`docs/format.md`).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_quotient::QuotientFilter;
    ///
    /// let mut f = QuotientFilter::<u64>::new(1_000, 0.01)?;
    /// f.try_insert(&7)?;
    /// let g = QuotientFilter::<u64>::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

impl<K: ?Sized> QuotientFilter<K> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes (every run is checked),
    /// another variant, hasher or format version; never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized, S: PortableHasher] QuotientFilter<K, S>);

/// A read-only [`QuotientFilter`] over serialized bytes (a memory-mapped file), without
/// copying its table: the same lookups, counts and estimates, and the read-only side of
/// bloomkit's trait. Opening it checks the table as [`from_bytes`](QuotientFilter::from_bytes)
/// does (every run and count, in one pass over the bytes, allocating nothing), so no bytes
/// can make a lookup misbehave. The bytes must be 8-byte aligned (as a memory map is;
/// [`AlignedBytes`](bloomkit_core::format::AlignedBytes) aligns a copy).
///
/// # Examples
///
/// ```
/// use bloomkit_core::format::AlignedBytes;
/// use bloomkit_quotient::{QuotientFilter, QuotientFilterRef};
///
/// let mut f = QuotientFilter::<u64>::new(1_000, 0.01)?;
/// f.try_insert_batch([1u64, 2, 2, 3])?;
/// let bytes = AlignedBytes::copy_from(&f.to_bytes());
/// let view = QuotientFilterRef::<u64>::from_bytes(&bytes)?;
/// assert!(view.contains(&1) && view.count(&2) == 2);
/// assert_eq!(view.to_filter(), f);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub struct QuotientFilterRef<'a, K: ?Sized, S = Xxh3Builder> {
    pub(crate) table: Table<&'a [u64]>,
    pub(crate) target_fpr: f64,
    pub(crate) saturated: bool,
    pub(crate) hasher: S,
    pub(crate) key: PhantomData<fn(&K)>,
}

impl<'a, K: ?Sized> QuotientFilterRef<'a, K> {
    /// A view of `bytes`, every byte checked.
    ///
    /// # Errors
    /// As [`QuotientFilter::from_bytes`], and `NotViewable` for bytes that cannot be used
    /// in place (not 8-byte aligned).
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::All)
    }
}

impl<'a, K: ?Sized, S: PortableHasher> QuotientFilterRef<'a, K, S> {
    /// A view of `bytes` written with hasher `S`, checked as `verify` says (the table's
    /// structure is always checked).
    ///
    /// # Errors
    /// As [`from_bytes`](QuotientFilterRef::from_bytes).
    pub fn with_hasher(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let reader = Reader::open(bytes, Variant::Quotient, verify)?;
        let parts = read::<S, _>(reader, Reader::words_in_place::<u64>)?;
        Ok(QuotientFilterRef {
            table: parts.table,
            target_fpr: parts.target_fpr,
            saturated: parts.saturated,
            hasher: parts.hasher,
            key: PhantomData,
        })
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> QuotientFilter<K, S>
    where
        S: Clone,
    {
        QuotientFilter {
            table: Table {
                remainder_bits: self.table.remainder_bits,
                quotients: self.table.quotients,
                len: self.table.len,
                distinct: self.table.distinct,
                used: self.table.used,
                blocks: self.table.blocks,
                words: self.table.words.to_vec(),
            },
            target_fpr: self.target_fpr,
            saturated: self.saturated,
            hasher: self.hasher.clone(),
            key: PhantomData,
        }
    }
}

impl<K: ?Sized, S> QuotientFilterRef<'_, K, S> {
    /// Heap memory the view holds: none (it borrows its bytes).
    pub fn heap_bytes(&self) -> usize {
        0
    }
}
