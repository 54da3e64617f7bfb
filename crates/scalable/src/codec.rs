//! The byte format of [`ScalableBloomFilter`] ([`Codec`]), and serde through those bytes.
//! Decoding goes through `from_parts`, which validates everything.

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_core::format::{Reader, Writer};
use bloomkit_core::{sizing, Codec, Design, Error, PortableHasher, Variant};
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
fn check_sequence<K: ?Sized, S: core::hash::BuildHasher>(
    config: Config,
    next: u32,
    slices: &[Slice<K, S>],
) -> Result<(), Error> {
    let mut position: Option<u32> = None;
    for (i, s) in slices.iter().enumerate() {
        let design = s.filter.design().map_or(f64::NAN, |d| d.fpr);
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
        let model =
            sizing::blocked_fpr_model(s.capacity, s.filter.num_blocks(), s.filter.num_hashes())
                .map_err(Error::into_decode)?;
        // A hair of slack, so that a refinement of the sizing model does not make files
        // written before it unreadable; a slice sized for another rate is far off.
        if model > design * 1.01 {
            return Err(Error::invalid_bytes(format!(
                "slice {i} is too small for its rate: {} blocks, {} probes give {model:e} at \
                 {} items, above {design:e}",
                s.filter.num_blocks(),
                s.filter.num_hashes(),
                s.capacity
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

    fn slice_from_parts(hasher: &S, p: SliceParams, words: &[u64]) -> Result<Slice<K, S>, Error> {
        if p.items > p.capacity {
            return Err(Error::invalid_bytes(format!(
                "slice holds {} items, more than its capacity {}",
                p.items, p.capacity
            )));
        }
        if p.blocks == 0 || p.blocks.checked_mul(8) != Some(words.len() as u64) {
            return Err(Error::invalid_bytes(format!(
                "a slice of {} blocks with {} words",
                p.blocks,
                words.len()
            )));
        }
        let design = Design::new(p.capacity, p.fpr).map_err(Error::into_decode)?;
        let filter = BlockedBloomFilter::from_words(words, p.hashes, hasher.clone(), Some(design))
            .map_err(Error::into_decode)?;
        Ok(Slice {
            filter,
            capacity: p.capacity,
            items: p.items,
        })
    }

    /// Rebuilds a filter from decoded parts, rejecting anything the filter could not have
    /// reached by itself.
    fn from_parts(hasher: S, params: Params, slices: Vec<Slice<K, S>>) -> Result<Self, Error> {
        let config = params.config.check().map_err(Error::into_decode)?;
        if slices.is_empty() || slices.len() as u64 != params.slices {
            return Err(Error::invalid_bytes(format!(
                "{} slices announced, {} present",
                params.slices,
                slices.len()
            )));
        }
        check_sequence(config, params.next, &slices)?;
        let items = slices
            .iter()
            .try_fold(0u64, |sum, s| sum.checked_add(s.items))
            .ok_or_else(|| Error::invalid_bytes("the slices' item counts overflow"))?;
        if items != params.len {
            return Err(Error::invalid_bytes(format!(
                "slices hold {items} items, the filter says {}",
                params.len
            )));
        }
        if config.max_items.is_some_and(|max| params.len > max) {
            return Err(Error::invalid_bytes(
                "more items than the filter's own limit",
            ));
        }
        Ok(ScalableBloomFilter {
            slices,
            hasher,
            config,
            next: params.next,
            len: params.len,
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
        let mut slices = Vec::new();
        for _ in 0..params.slices {
            let p: SliceParams = reader.params()?;
            let words = reader.words()?;
            slices.push(Self::slice_from_parts(&hasher, p, &words)?);
        }
        reader.finish()?;
        Self::from_parts(hasher, params, slices)
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized, S: PortableHasher + Clone] ScalableBloomFilter<K, S>);
