//! The quotient filter's byte format (variant tag 12, `docs/format.md`) and serde through
//! it. Parameters: quotient and remainder bits, the target rate, the count. Payload: the
//! table's blocks as little-endian words (each block's spill count, occupied bits, run-end
//! bits and packed remainders); reading checks every run and every count against them.

use bloomkit_core::format::{Reader, Writer};
use bloomkit_core::{check_fpr, Codec, DecodeError, Error, PortableHasher, Variant};
use serde::{Deserialize, Serialize};

use crate::table::Table;
use crate::{QuotientFilter, MAX_QUOTIENT_BITS, MIN_QUOTIENT_BITS};

#[derive(Serialize, Deserialize)]
struct Params {
    quotient_bits: u32,
    remainder_bits: u32,
    target_fpr: f64,
    len: u64,
}

impl<K: ?Sized, S: PortableHasher> Codec for QuotientFilter<K, S> {
    const VARIANT: Variant = Variant::Quotient;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::Quotient, self.hasher.spec())
            .params(&Params {
                quotient_bits: self.quotient_bits,
                remainder_bits: self.table.remainder_bits,
                target_fpr: self.target_fpr,
                len: self.table.len,
            })
            .words(&self.table.words)
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let hasher = reader.hasher::<S>()?;
        let p: Params = reader.params()?;
        let words = reader.words()?;
        reader.finish()?;
        let bad =
            |why: String| Error::Decode(DecodeError::Invalid(format!("quotient filter: {why}")));
        if !(MIN_QUOTIENT_BITS..=MAX_QUOTIENT_BITS).contains(&p.quotient_bits) {
            return Err(bad(format!("{} quotient bits", p.quotient_bits)));
        }
        if p.remainder_bits == 0 || p.remainder_bits > 64 - p.quotient_bits {
            return Err(bad(format!("{} remainder bits", p.remainder_bits)));
        }
        check_fpr(p.target_fpr).map_err(Error::into_decode)?;
        let max = crate::room(1 << p.quotient_bits);
        if p.len > max {
            return Err(bad(format!(
                "{} fingerprints, more than the {max} it takes",
                p.len
            )));
        }
        let table =
            Table::from_words(p.quotient_bits, p.remainder_bits, p.len, words).map_err(bad)?;
        Ok(QuotientFilter {
            table,
            quotient_bits: p.quotient_bits,
            target_fpr: p.target_fpr,
            hasher,
            key: core::marker::PhantomData,
        })
    }
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
    /// f.insert(&7)?;
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
