//! The byte format of [`CountingBloomFilter`] ([`Codec`]), and serde through those bytes.
//! Decoding goes through `from_parts`, which validates everything.

use std::borrow::Cow;

use bloomkit_core::format::{Reader, Verify, Writer};
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::sizing::{check_hashes, Design};
use bloomkit_core::{Codec, DecodeError, Error, PortableHasher, Variant};
use serde::{Deserialize, Serialize};

use crate::{Counter, CounterArray, CountingBloomFilter};

/// The parameter block of the byte format (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Params {
    counters: u64,
    hashes: u32,
    /// 4, 8, 16 or 32: bytes of one width are not read as another.
    counter_bits: u32,
    design: Option<Design>,
}

impl<K: ?Sized, C: Counter, S: PortableHasher> CountingBloomFilter<K, C, S> {
    fn params(&self) -> Params {
        Params {
            counters: self.counters.len(),
            hashes: self.hashes,
            counter_bits: C::BITS,
            design: self.design,
        }
    }

    /// Rebuilds a filter from decoded parts, rejecting anything a constructor would not
    /// have produced.
    fn from_parts(
        hasher: S,
        params: Params,
        probes: ProbeScheme,
        packed: Cow<'_, [u8]>,
    ) -> Result<Self, Error> {
        if params.counter_bits != C::BITS {
            return Err(Error::Decode(DecodeError::Invalid(format!(
                "filter of {}-bit counters, expected {}-bit counters",
                params.counter_bits,
                C::BITS
            ))));
        }
        let check = || -> Result<Self, Error> {
            if params.counters == 0 {
                return Err(Error::ZeroBits);
            }
            let hashes = check_hashes(u64::from(params.hashes))?;
            let design = match params.design {
                Some(d) => Some(Design::new(d.capacity, d.fpr)?),
                None => None,
            };
            let counters = C::Array::decode(packed, params.counters)?;
            Ok(CountingBloomFilter::from_counters(
                counters, hashes, probes, design, hasher,
            ))
        };
        check().map_err(Error::into_decode)
    }

    /// The filter in bloomkit's byte format: header, parameters (including the counter
    /// width), the counters packed at their width, and checksums (`docs/format.md`). To
    /// write without this buffer, use [`Codec::write_to`].
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

/// The default width and hasher, so that `CountingBloomFilter::from_bytes(&bytes)` needs no
/// annotation (as `new` needs none).
impl<K: ?Sized> CountingBloomFilter<K> {
    /// Reads a filter of 4-bit counters and the default hasher, written by
    /// [`to_bytes`](CountingBloomFilter::to_bytes). For another counter width or hasher, use
    /// [`Codec::from_bytes`]: `<CountingBloomFilter<K, u8> as Codec>::from_bytes(&bytes)`.
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant, counter
    /// width, hasher or format version; never a panic, and no allocation beyond the input's
    /// size.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_core::Codec;
    /// use bloomkit_counting::CountingBloomFilter;
    ///
    /// let mut f = CountingBloomFilter::new(100, 0.01)?;
    /// f.insert("x");
    /// let back = CountingBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, back);
    /// // Another width: through `Codec`, and only if the bytes hold that width.
    /// assert!(<CountingBloomFilter<str, u8> as Codec>::from_bytes(&f.to_bytes()).is_err());
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

/// The counter width (4, 8, 16 or 32 bits) a counting filter's bytes hold, read from their
/// parameters without decoding the counters: which `C` to decode them with. `None` for
/// bytes that are not a counting filter whose parameters read (then every width's decoder
/// refuses them with its own error).
///
/// # Examples
///
/// ```
/// use bloomkit_counting::{counter_bits, CountingBloomFilter};
///
/// let f = CountingBloomFilter::<str>::builder(100, 0.01).counter::<u16>().build()?;
/// assert_eq!(counter_bits(&f.to_bytes()), Some(16));
/// assert_eq!(counter_bits(b"not a filter"), None);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub fn counter_bits(bytes: &[u8]) -> Option<u32> {
    let mut reader = Reader::open(bytes, Variant::Counting, Verify::SkipPayloadChecksum).ok()?;
    reader.params::<Params>().ok().map(|p| p.counter_bits)
}

impl<K: ?Sized, C: Counter, S: PortableHasher> Codec for CountingBloomFilter<K, C, S> {
    const VARIANT: Variant = Variant::Counting;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::Counting, self.hasher.spec())
            .params(&self.params())
            .probes(self.probe_scheme())
            .bytes(self.counters.encode())
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let hasher = reader.hasher::<S>()?;
        let params: Params = reader.params()?;
        let probes = reader.probes()?;
        let packed = reader.bytes()?;
        reader.finish()?;
        Self::from_parts(hasher, params, probes, packed)
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized, C: Counter, S: PortableHasher] CountingBloomFilter<K, C, S>);
