//! The byte format of [`CountingBloomFilter`] ([`Codec`]), and serde through those bytes.
//! Decoding goes through `from_parts`, which validates everything.

use core::borrow::Borrow;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use std::borrow::Cow;

use bloomkit_core::format::{Reader, Verify, Writer};
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::sizing::{check_hashes, Design};
use bloomkit_core::{Codec, DecodeError, Error, PortableHasher, Variant, Xxh3Builder};
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

impl Params {
    /// The checks the owned decoder and the view share: the counter width is `C`'s, there
    /// are counters, and k and the design are valid; k and the design.
    fn check<C: Counter>(&self) -> Result<(u32, Option<Design>), Error> {
        if self.counter_bits != C::BITS {
            return Err(Error::Decode(DecodeError::Invalid(format!(
                "filter of {}-bit counters, expected {}-bit counters",
                self.counter_bits,
                C::BITS
            ))));
        }
        let check = || -> Result<(u32, Option<Design>), Error> {
            if self.counters == 0 {
                return Err(Error::ZeroBits);
            }
            let hashes = check_hashes(u64::from(self.hashes))?;
            let design = match self.design {
                Some(d) => Some(Design::new(d.capacity, d.fpr)?),
                None => None,
            };
            Ok((hashes, design))
        };
        check().map_err(Error::into_decode)
    }
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
        let (hashes, design) = params.check::<C>()?;
        let check = || -> Result<Self, Error> {
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

/// A read-only [`CountingBloomFilter`] over its serialized bytes, without copying the
/// counters: a counting filter answered in place from a memory-mapped file (lookups and
/// counts; removals need the owned filter). The counters are read where the bytes keep
/// them, packed little-endian at their width, so any alignment serves.
///
/// # Examples
///
/// ```
/// use bloomkit_counting::{CountingBloomFilter, CountingBloomFilterRef};
///
/// let mut f = CountingBloomFilter::<str>::new(1_000, 0.01)?;
/// f.insert("a");
/// f.insert("a");
/// let bytes = f.to_bytes();
/// let view = CountingBloomFilterRef::<str>::from_bytes(&bytes)?;
/// assert!(view.contains("a"));
/// assert_eq!(view.count("a"), 2);
/// assert_eq!(view.to_filter()?, f);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub struct CountingBloomFilterRef<'a, K: ?Sized, C: Counter = crate::U4, S = Xxh3Builder> {
    packed: &'a [u8],
    len: u64,
    hashes: u32,
    probes: ProbeScheme,
    design: Option<Design>,
    hasher: S,
    key: PhantomData<fn(&K, C)>,
}

impl<'a, K: ?Sized> CountingBloomFilterRef<'a, K> {
    /// A view of `bytes` (4-bit counters, the default hasher), every byte checked.
    ///
    /// # Errors
    /// As [`CountingBloomFilter::from_bytes`], and [`DecodeError::NotViewable`] for bytes
    /// whose counters cannot be lent in place.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::All)
    }
}

impl<'a, K: ?Sized, C: Counter, S: PortableHasher> CountingBloomFilterRef<'a, K, C, S> {
    /// A view of `bytes` with counters `C` and hasher `S`, checked as `verify` says.
    ///
    /// # Errors
    /// As [`from_bytes`](CountingBloomFilterRef::from_bytes); another counter width is a
    /// [`DecodeError::Invalid`] naming both.
    pub fn with_hasher(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let mut reader = Reader::open(bytes, Variant::Counting, verify)?;
        let hasher = reader.hasher::<S>()?;
        let params: Params = reader.params()?;
        let probes = reader.probes()?;
        let packed = match reader.bytes()? {
            Cow::Borrowed(packed) => packed,
            Cow::Owned(_) => {
                return Err(Error::Decode(DecodeError::NotViewable(
                    "the counters are not stored in place".into(),
                )))
            }
        };
        reader.finish()?;
        let (hashes, design) = params.check::<C>()?;
        let check = || -> Result<Self, Error> {
            let expected = crate::counter::packed_bits::<C>(params.counters).div_ceil(8);
            if packed.len() as u128 != expected {
                return Err(Error::Decode(DecodeError::Invalid(format!(
                    "{} {}-bit counters need {expected} bytes, found {}",
                    params.counters,
                    C::BITS,
                    packed.len()
                ))));
            }
            if C::BITS == 4 && params.counters % 2 == 1 && packed[packed.len() - 1] >> 4 != 0 {
                return Err(Error::Decode(DecodeError::Invalid(
                    "nonzero padding after the last counter".into(),
                )));
            }
            Ok(CountingBloomFilterRef {
                packed,
                len: params.counters,
                hashes,
                probes,
                design,
                hasher,
                key: PhantomData,
            })
        };
        check().map_err(Error::into_decode)
    }

    /// An owned copy of the filter.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when the counters cannot be allocated.
    pub fn to_filter(&self) -> Result<CountingBloomFilter<K, C, S>, Error>
    where
        S: Clone,
    {
        let counters = C::Array::decode(Cow::Borrowed(self.packed), self.len)?;
        Ok(CountingBloomFilter::from_counters(
            counters,
            self.hashes,
            self.probes,
            self.design,
            self.hasher.clone(),
        ))
    }
}

impl<K: ?Sized, C: Counter, S> CountingBloomFilterRef<'_, K, C, S> {
    /// Counter `i` (below `len`, which the probes keep to), read little-endian at its width.
    #[inline(always)]
    fn get(&self, i: u64) -> u64 {
        let p = self.packed;
        match C::BITS {
            4 => u64::from((p[(i >> 1) as usize] >> ((i & 1) * 4)) & 0x0f),
            8 => u64::from(p[i as usize]),
            16 => {
                let at = i as usize * 2;
                u64::from(u16::from_le_bytes([p[at], p[at + 1]]))
            }
            _ => {
                let at = i as usize * 4;
                u64::from(u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]]))
            }
        }
    }

    /// The byte holding counter `i`.
    #[inline(always)]
    fn byte_of(&self, i: u64) -> &u8 {
        &self.packed[(u128::from(i) * u128::from(C::BITS) / 8) as usize]
    }

    /// Whether the key whose hash is `hash` may be in the filter: every counter of its
    /// positions above zero, as the owned filter answers.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.probes
            .all(hash, self.len, self.hashes, |i| self.get(i) > 0)
    }

    /// How many times the key whose hash is `hash` may have been inserted (the owned
    /// filter's [`count_hash`](CountingBloomFilter::count_hash)).
    pub fn count_hash(&self, hash: u64) -> u64 {
        crate::Runs::new(
            self.probes.positions(hash, self.len, self.hashes),
            self.hashes,
        )
        .count::<C>(|i| self.get(i))
    }

    /// The number of counters.
    pub fn num_counters(&self) -> u64 {
        self.len
    }

    /// Counters above zero, counted (reads every counter).
    pub fn nonzero_counters(&self) -> u64 {
        let mut n = 0;
        for i in 0..self.len {
            if self.get(i) > 0 {
                n += 1;
            }
        }
        n
    }

    /// An estimate of the number of distinct keys inserted (reads every counter).
    pub fn estimated_len(&self) -> f64 {
        bloomkit_core::sizing::estimate_cardinality(self.len, self.hashes, self.nonzero_counters())
            .unwrap_or(f64::INFINITY)
    }

    /// The false-positive rate from the fraction of nonzero counters (reads every counter).
    pub fn estimated_fpr(&self) -> f64 {
        bloomkit_core::sizing::fpr_from_fill(self.len, self.hashes, self.nonzero_counters())
            .unwrap_or(1.0)
    }

    /// Heap memory the view holds: none (it borrows its bytes).
    pub fn heap_bytes(&self) -> usize {
        0
    }

    /// Requests the cache lines of the key's counters; returns the hash.
    #[inline]
    fn locate(&self, hash: u64) -> u64 {
        self.probes.for_each(hash, self.len, self.hashes, |i| {
            bloomkit_core::batch::prefetch(self.byte_of(i));
        });
        hash
    }
}

bloomkit_core::impl_shape_accessors!([C: Counter, S] CountingBloomFilterRef<'_, K, C, S>, key = K, probes);

impl<K: Hash + ?Sized, C: Counter, S: BuildHasher> CountingBloomFilterRef<'_, K, C, S> {
    /// The 64-bit hash of `key` the `*_hash` methods take.
    #[inline]
    pub fn hash_key(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Whether `key` may be in the filter.
    #[inline]
    pub fn contains(&self, key: &K) -> bool {
        self.contains_hash(self.hash_key(key))
    }

    /// How many times `key` may have been inserted.
    pub fn count(&self, key: &K) -> u64 {
        self.count_hash(self.hash_key(key))
    }

    /// Whether each of `keys` may be in the filter, appended to `out` in order, with the
    /// counters of a group of keys requested before any is tested.
    pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        bloomkit_core::batch::pipeline(
            out,
            keys,
            |_, key| self.locate(self.hash_key(key.borrow())),
            |out, hash| out.push(self.contains_hash(hash)),
        );
    }
}

bloomkit_core::impl_lookup!([C: Counter, S: BuildHasher] CountingBloomFilterRef<'_, K, C, S>, key = K);

impl<K: ?Sized, C: Counter, S: core::fmt::Debug> core::fmt::Debug
    for CountingBloomFilterRef<'_, K, C, S>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CountingBloomFilterRef")
            .field("counters", &self.len)
            .field("counter_bits", &C::BITS)
            .field("hashes", &self.hashes)
            .field("hasher", &self.hasher)
            .finish()
    }
}
