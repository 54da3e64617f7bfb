//! The byte format of [`ScalableBloomFilter`] ([`Codec`]), and serde through those bytes.
//! Decoding goes through `from_parts`, which validates everything.

use core::borrow::Borrow;

use bloomkit_classic::{BlockedBloomFilter, BlockedBloomFilterRef};
use bloomkit_core::format::{Reader, Verify, Writer};
use bloomkit_core::{sizing, Codec, Design, Error, PortableHasher, Variant, Xxh3Builder};
use serde::{Deserialize, Serialize};

use crate::{Config, ScalableBloomFilter, Slice};

/// The filter-wide parameter block (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Params {
    /// The settings, field by field (a nested struct adds no bytes).
    config: Config,
    next: u32,
    len: u64,
    slices: u64,
}

/// One slice's parameter block, followed in the byte format by its words.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct SliceParams {
    blocks: u64,
    hashes: u32,
    capacity: u64,
    fpr: f64,
    items: u64,
}

/// Checks that `slices` are what this filter and the filters unioned into it could have
/// built: runs of its configuration's sequence `slice(0), slice(1), ...` (capacity and
/// rate), one per filter merged in, the last run (its own) exactly `next` long, and every
/// slice large enough for its rate at its capacity. This bounds what a decoded filter does
/// next: its next slice is `growth` times its largest, whose bits are in the input.
fn check_sequence(config: Config, next: u32, slices: &[SliceParams]) -> Result<(), Error> {
    let mut position: Option<u32> = None;
    for (i, s) in slices.iter().enumerate() {
        let design = s.fpr;
        let expected = |j: u32| config.slice(j).ok();
        let matches = |j: u32| {
            expected(j).is_some_and(|(capacity, fpr)| {
                capacity == s.capacity && (fpr - design).abs() <= 1e-9 * fpr
            })
        };
        let j = if matches(0) {
            0
        } else {
            match position.map(|p| p + 1).filter(|&j| matches(j)) {
                Some(j) => j,
                None => {
                    return Err(Error::invalid_bytes(format!(
                        "slice {i} ({} items at rate {design}) does not follow the filter's \
                         sequence (initial capacity {}, growth {}, tightening {})",
                        s.capacity, config.initial_capacity, config.growth, config.tightening
                    )))
                }
            }
        };
        let model = sizing::blocked_fpr_model(s.capacity, s.blocks, s.hashes)
            .map_err(Error::into_decode)?;
        // A hair of slack, so that a refinement of the sizing model does not make files
        // written before it unreadable; a slice sized for another rate is far off.
        if model > design * 1.01 {
            return Err(Error::invalid_bytes(format!(
                "slice {i} is too small for its rate: {} blocks, {} probes give {model:e} at \
                 {} items, above {design:e}",
                s.blocks, s.hashes, s.capacity
            )));
        }
        position = Some(j);
    }
    let own = position.map_or(0, |p| p + 1);
    if own != next {
        return Err(Error::invalid_bytes(format!(
            "the filter's own slices are {own}, it says it made {next}"
        )));
    }
    Ok(())
}

impl SliceParams {
    /// Checks one slice's parameters against its `words` (the owned decoder's and the
    /// view's); its design.
    fn check(&self, words: usize) -> Result<Design, Error> {
        if self.items > self.capacity {
            return Err(Error::invalid_bytes(format!(
                "slice holds {} items, more than its capacity {}",
                self.items, self.capacity
            )));
        }
        if self.blocks == 0 || self.blocks.checked_mul(8) != Some(words as u64) {
            return Err(Error::invalid_bytes(format!(
                "a slice of {} blocks with {words} words",
                self.blocks
            )));
        }
        Design::new(self.capacity, self.fpr).map_err(Error::into_decode)
    }
}

impl Params {
    /// Checks that `slices` are what this filter and the filters unioned into it could have
    /// built (see [`check_sequence`]), with counts that add up; the checked configuration.
    fn check(&self, slices: &[SliceParams]) -> Result<Config, Error> {
        let config = self.config.check().map_err(Error::into_decode)?;
        if slices.is_empty() || slices.len() as u64 != self.slices {
            return Err(Error::invalid_bytes(format!(
                "{} slices announced, {} present",
                self.slices,
                slices.len()
            )));
        }
        check_sequence(config, self.next, slices)?;
        let items = slices
            .iter()
            .try_fold(0u64, |sum, s| sum.checked_add(s.items))
            .ok_or_else(|| Error::invalid_bytes("the slices' item counts overflow"))?;
        if items != self.len {
            return Err(Error::invalid_bytes(format!(
                "slices hold {items} items, the filter says {}",
                self.len
            )));
        }
        if config.max_items.is_some_and(|max| self.len > max) {
            return Err(Error::invalid_bytes(
                "more items than the filter's own limit",
            ));
        }
        Ok(config)
    }
}

impl<K: ?Sized, S: PortableHasher + Clone> ScalableBloomFilter<K, S> {
    fn params(&self) -> Params {
        Params {
            config: self.config,
            next: self.next,
            len: self.len,
            slices: self.slices.len() as u64,
        }
    }

    fn slice_params(slice: &Slice<K, S>) -> SliceParams {
        SliceParams {
            blocks: slice.filter.num_blocks(),
            hashes: slice.filter.num_hashes(),
            capacity: slice.capacity,
            fpr: slice.filter.design().map_or(f64::NAN, |d| d.fpr),
            items: slice.items,
        }
    }

    fn slice_from_parts(hasher: &S, p: &SliceParams, words: &[u64]) -> Result<Slice<K, S>, Error> {
        let design = p.check(words.len())?;
        let filter = BlockedBloomFilter::from_words(words, p.hashes, hasher.clone(), Some(design))
            .map_err(Error::into_decode)?;
        Ok(Slice {
            filter,
            capacity: p.capacity,
            items: p.items,
        })
    }

    /// The filter in bloomkit's byte format: header, the filter's parameters, then each
    /// slice's parameters and bit array, and a checksum (`docs/format.md`).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_scalable::ScalableBloomFilter;
    ///
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// for i in 0..100u64 {
    ///     f.try_insert(&i)?;
    /// }
    /// let g = ScalableBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

impl<K: ?Sized> ScalableBloomFilter<K> {
    /// Reads a filter written by [`to_bytes`](ScalableBloomFilter::to_bytes). (For a hasher
    /// of your own, use [`Codec::from_bytes`].)
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant, hasher
    /// or format version; never a panic, and no allocation beyond the input's size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

impl<K: ?Sized, S: PortableHasher + Clone> Codec for ScalableBloomFilter<K, S> {
    const VARIANT: Variant = Variant::Scalable;

    fn encode(&self) -> Writer<'_> {
        let mut w = Writer::new(Variant::Scalable, self.hasher.spec()).params(&self.params());
        for slice in &self.slices {
            w = w
                .params(&Self::slice_params(slice))
                .words(slice.filter.words());
        }
        w
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let hasher = reader.hasher::<S>()?;
        let params: Params = reader.params()?;
        // One slice at a time: a hostile count cannot allocate more than the input holds.
        let (mut slices, mut shapes) = (Vec::new(), Vec::new());
        for _ in 0..params.slices {
            let p: SliceParams = reader.params()?;
            let words = reader.words()?;
            slices.push(Self::slice_from_parts(&hasher, &p, &words)?);
            shapes.push(p);
        }
        reader.finish()?;
        let config = params.check(&shapes)?;
        Ok(ScalableBloomFilter {
            slices,
            hasher,
            config,
            next: params.next,
            len: params.len,
        })
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized, S: PortableHasher + Clone] ScalableBloomFilter<K, S>);

/// A read-only [`ScalableBloomFilter`] over its serialized bytes, without copying any slice:
/// a grown filter answered in place from a memory-mapped file. Each slice is a
/// [`BlockedBloomFilterRef`] over its words; a lookup asks them newest first, with the
/// key's block in every slice requested together in a batch, as the owned filter does.
///
/// The bytes must be of format version 2 or 3 with the words aligned to 8 bytes (a memory
/// map, or any buffer aligned to 64); other bytes get
/// [`DecodeError::NotViewable`](bloomkit_core::DecodeError::NotViewable) and the owned
/// decoder reads them. The checks are the owned decoder's, every one.
///
/// # Examples
///
/// ```
/// use bloomkit_core::format::AlignedBytes;
/// use bloomkit_scalable::{ScalableBloomFilter, ScalableBloomFilterRef};
///
/// let mut f = ScalableBloomFilter::<u64>::new(100, 0.01)?;
/// f.try_insert_batch(0..10_000u64)?; // grows to several slices
/// let bytes = AlignedBytes::copy_from(&f.to_bytes());
/// let view = ScalableBloomFilterRef::<u64>::from_bytes(&bytes)?;
/// assert!((0..10_000u64).all(|k| view.contains(&k)));
/// assert_eq!(view.num_slices(), f.num_slices());
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub struct ScalableBloomFilterRef<'a, K: ?Sized, S = Xxh3Builder> {
    /// Oldest first, as in the bytes.
    slices: Vec<BlockedBloomFilterRef<'a, K, S>>,
    hasher: S,
    config: Config,
    len: u64,
}

impl<'a, K: ?Sized> ScalableBloomFilterRef<'a, K> {
    /// A view of `bytes` (the default hasher), every byte checked.
    ///
    /// # Errors
    /// As [`ScalableBloomFilter::from_bytes`], and `NotViewable` for bytes that cannot be
    /// used in place.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::All)
    }
}

impl<'a, K: ?Sized, S: PortableHasher + Clone> ScalableBloomFilterRef<'a, K, S> {
    /// A view of `bytes` written with hasher `S`, checked as `verify` says (every
    /// parameter is always checked).
    ///
    /// # Errors
    /// As [`from_bytes`](ScalableBloomFilterRef::from_bytes).
    pub fn with_hasher(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let mut reader = Reader::open(bytes, Variant::Scalable, verify)?;
        let hasher = reader.hasher::<S>()?;
        let params: Params = reader.params()?;
        let (mut slices, mut shapes) = (Vec::new(), Vec::new());
        for _ in 0..params.slices {
            let p: SliceParams = reader.params()?;
            let words = reader.words_in_place::<u64>()?;
            let design = p.check(words.len())?;
            slices.push(
                BlockedBloomFilterRef::from_words(words, p.hashes, hasher.clone(), Some(design))
                    .map_err(Error::into_decode)?,
            );
            shapes.push(p);
        }
        reader.finish()?;
        let config = params.check(&shapes)?;
        Ok(ScalableBloomFilterRef {
            slices,
            hasher,
            config,
            len: params.len,
        })
    }
}

impl<K: ?Sized, S> ScalableBloomFilterRef<'_, K, S> {
    /// Whether the key whose hash is `hash` may be in the filter: the slices newest first.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.slices.iter().rev().any(|s| s.contains_hash(hash))
    }

    /// The number of items inserted (keys that were certainly new when inserted).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of slices.
    pub fn num_slices(&self) -> usize {
        self.slices.len()
    }

    /// The false-positive rate now, from the slices' fill: `1 - prod(1 - fpr_i)` (reads
    /// every slice).
    pub fn estimated_fpr(&self) -> f64 {
        1.0 - self
            .slices
            .iter()
            .map(|s| 1.0 - s.estimated_fpr())
            .product::<f64>()
    }

    /// The hasher.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Heap memory the view holds: its list of slices (it borrows their bits).
    pub fn heap_bytes(&self) -> usize {
        self.slices.capacity() * core::mem::size_of::<BlockedBloomFilterRef<'_, K, S>>()
    }
}

impl<K: core::hash::Hash + ?Sized, S: core::hash::BuildHasher> ScalableBloomFilterRef<'_, K, S> {
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

    /// Whether each of `keys` may be in the filter, appended to `out` in order, with the
    /// key's block in every slice requested for a group of keys before any is probed.
    pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        bloomkit_core::batch::pipeline(
            out,
            keys,
            |_, key| {
                let hash = self.hash_key(key.borrow());
                for slice in &self.slices {
                    slice.prefetch(hash);
                }
                hash
            },
            |out, hash| out.push(self.contains_hash(hash)),
        );
    }
}

bloomkit_core::impl_lookup!([S: core::hash::BuildHasher] ScalableBloomFilterRef<'_, K, S>, key = K,
    exact_len, target_fpr = |f| f.config.fpr);

impl<K: ?Sized, S: core::fmt::Debug> core::fmt::Debug for ScalableBloomFilterRef<'_, K, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ScalableBloomFilterRef")
            .field("len", &self.len)
            .field("slices", &self.slices.len())
            .field("config", &self.config)
            .field("hasher", &self.hasher)
            .finish()
    }
}
