//! The window filter's byte format (variant tag 15, `docs/format.md`), serde through it, and
//! the zero-copy view.
//!
//! Parameters: fingerprint bits, tag bits, `L`, inserts a generation takes, buckets, the
//! target rate, the span of a generation (0 for a window over inserts), the generation
//! number, the sweep's next bucket, the current generation's start and the latest time
//! seen. Payload: the table's words (buckets packed, then two words of padding), the
//! generations' counts (one a tag), the stash (`[bucket, slot]` pairs).

use core::hash::BuildHasher;
use core::marker::PhantomData;

use bloomkit_core::format::{Reader, Verify, Writer};
use bloomkit_core::sizing::window::{words_for, MAX_GENERATIONS, MAX_SLOT_BITS, MAX_WORDS};
use bloomkit_core::{check_fpr, Codec, DecodeError, Error, PortableHasher, Variant};
use serde::{Deserialize, Serialize};

use crate::{read_side, Core, Fixed, Shape, WindowFilter, MAX_STASH};

/// The parameter block: the fixed parameters (bincode writes a nested struct's fields in
/// place), then the generation, the sweep and the clock.
#[derive(Serialize, Deserialize)]
struct Params {
    fixed: Fixed,
    generation: u64,
    sweep: u64,
    gen_start: u64,
    now: u64,
}

impl Params {
    fn of<W>(core: &Core<W>) -> Params {
        Params {
            fixed: core.shape.fixed,
            generation: core.generation,
            sweep: core.sweep,
            gen_start: core.gen_start,
            now: core.now,
        }
    }

    /// The core over `words`, `counts` and `stash`, every parameter checked (the owned
    /// decoder's and the view's one set of checks).
    fn check<W: AsRef<[u64]>>(
        &self,
        words: W,
        counts: Vec<u64>,
        stash: Vec<u64>,
    ) -> Result<Core<W>, Error> {
        let bad =
            |why: String| Error::Decode(DecodeError::Invalid(format!("window filter: {why}")));
        let (p, q) = (&self.fixed, self);
        if !(1..=MAX_GENERATIONS).contains(&p.generations) {
            return Err(bad(format!("{} generations", p.generations)));
        }
        if !(1..=13).contains(&p.tag_bits) || 1u64 << p.tag_bits < u64::from(p.generations) + 2 {
            return Err(bad(format!(
                "{}-bit tags for {} generations",
                p.tag_bits, p.generations
            )));
        }
        if p.fingerprint_bits == 0 || p.fingerprint_bits > MAX_SLOT_BITS - p.tag_bits {
            return Err(bad(format!(
                "{}-bit fingerprints with {}-bit tags",
                p.fingerprint_bits, p.tag_bits
            )));
        }
        if p.per_generation == 0 {
            return Err(bad("generations of 0 inserts".into()));
        }
        let slot_bits = p.fingerprint_bits + p.tag_bits;
        let fits = p.buckets > 0 && p.buckets <= MAX_WORDS;
        let expected = fits.then(|| words_for(p.buckets, slot_bits));
        if expected.is_none_or(|w| w > MAX_WORDS || w != words.as_ref().len() as u64) {
            return Err(bad(format!(
                "{} buckets of {slot_bits}-bit slots in {} words",
                p.buckets,
                words.as_ref().len()
            )));
        }
        // The sizing leaves at least 10% of the slots free at the worst moment; a table that
        // cannot hold its alive entries at all is not one bloomkit writes.
        let alive = (u64::from(p.generations) + 1).saturating_mul(p.per_generation);
        if alive > p.buckets.saturating_mul(4) {
            return Err(bad(format!(
                "{} buckets for {alive} entries alive",
                p.buckets
            )));
        }
        if counts.len() as u64 != 1 << p.tag_bits {
            return Err(bad(format!(
                "{} counts for {}-bit tags",
                counts.len(),
                p.tag_bits
            )));
        }
        if let Some(c) = counts.iter().find(|&&c| c > p.per_generation) {
            return Err(bad(format!(
                "a generation of {c} inserts, over its {}",
                p.per_generation
            )));
        }
        if stash.len() % 2 != 0 || stash.len() > 2 * MAX_STASH {
            return Err(bad(format!("a stash of {} words", stash.len())));
        }
        let slot_max = (1u64 << slot_bits) - 1;
        if let Some(e) = stash
            .chunks_exact(2)
            .find(|e| e[0] >= p.buckets || e[1] >> p.tag_bits == 0 || e[1] > slot_max)
        {
            return Err(bad(format!("a stash entry {:?}", e)));
        }
        if q.sweep >= p.buckets {
            return Err(bad(format!(
                "a sweep at bucket {} of {}",
                q.sweep, p.buckets
            )));
        }
        check_fpr(p.target_fpr).map_err(Error::into_decode)?;
        let clock_ok = if p.span == 0 {
            q.gen_start == 0 && q.now == 0
        } else {
            q.gen_start <= q.now && q.now - q.gen_start < p.span
        };
        if !clock_ok {
            return Err(bad(format!(
                "clock at {} in a generation from {} spanning {}",
                q.now, q.gen_start, p.span
            )));
        }
        Ok(Core {
            words,
            counts,
            stash,
            shape: Shape::new(*p),
            generation: q.generation,
            sweep: q.sweep,
            gen_start: q.gen_start,
            now: q.now,
        })
    }
}

impl<K: ?Sized, S: PortableHasher> Codec for WindowFilter<K, S> {
    const VARIANT: Variant = Variant::Window;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::Window, self.hasher.spec())
            .params(&Params::of(&self.core))
            .words(&self.core.words)
            .words(&self.core.counts)
            .words(&self.core.stash)
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let hasher = reader.hasher::<S>()?;
        let p: Params = reader.params()?;
        let words = reader.words()?;
        let counts = reader.words()?;
        let stash = reader.words()?;
        reader.finish()?;
        Ok(WindowFilter {
            core: p.check(words, counts, stash)?,
            hasher,
            key: PhantomData,
        })
    }
}

impl<K: ?Sized, S: PortableHasher> WindowFilter<K, S> {
    /// The filter in bloomkit's byte format (`docs/format.md`), clock included.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_window::WindowFilter;
    ///
    /// let mut f = WindowFilter::<u64>::new(1_000, 0.01)?;
    /// f.try_insert_batch(0..2_000u64)?;
    /// let g = WindowFilter::<u64>::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

impl<K: ?Sized> WindowFilter<K> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant, hasher
    /// or format version; never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized, S: PortableHasher] WindowFilter<K, S>);

/// A read-only [`WindowFilter`] over its serialized bytes, answering from the table in
/// place (a memory-mapped file), by the owned filter's read code, as of the clock the bytes
/// hold (`contains_at` looks ahead without changing anything).
///
/// The table must be aligned to 8 bytes (a memory map, or any buffer aligned to 64);
/// others get [`DecodeError::NotViewable`], and the owned decoder reads them.
///
/// # Examples
///
/// ```
/// use bloomkit_core::format::AlignedBytes;
/// use bloomkit_window::{WindowFilter, WindowFilterRef};
///
/// let mut f = WindowFilter::<u64>::new(1_000, 0.01)?;
/// f.try_insert_batch(0..1_000u64)?;
/// let bytes = AlignedBytes::copy_from(&f.to_bytes());
/// let view = WindowFilterRef::<u64>::from_bytes(&bytes)?;
/// assert!((0..1_000u64).all(|k| view.contains(&k)));
/// assert_eq!(view.to_filter(), f);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub struct WindowFilterRef<'a, K: ?Sized, S = bloomkit_core::Xxh3Builder> {
    core: Core<&'a [u64]>,
    hasher: S,
    key: PhantomData<fn(&K)>,
}

impl<K: ?Sized, S> WindowFilterRef<'_, K, S> {
    fn words_bytes(&self) -> usize {
        // Borrowed, not held.
        0
    }
}

read_side!(['a] WindowFilterRef);

impl<'a, K: ?Sized> WindowFilterRef<'a, K> {
    /// A view of `bytes`, every byte checked.
    ///
    /// # Errors
    /// As [`WindowFilter::from_bytes`], and `NotViewable` for bytes that cannot be used in
    /// place (not 8-byte aligned).
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::All)
    }
}

impl<'a, K: ?Sized, S: PortableHasher> WindowFilterRef<'a, K, S> {
    /// A view of `bytes` written with hasher `S`, checked as `verify` says (the parameters
    /// always are).
    ///
    /// # Errors
    /// As [`from_bytes`](WindowFilterRef::from_bytes).
    pub fn with_hasher(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let mut reader = Reader::open(bytes, Variant::Window, verify)?;
        let hasher = reader.hasher::<S>()?;
        let p: Params = reader.params()?;
        let words = reader.words_in_place::<u64>()?;
        let counts = reader.words()?;
        let stash = reader.words()?;
        reader.finish()?;
        Ok(WindowFilterRef {
            core: p.check(words, counts, stash)?,
            hasher,
            key: PhantomData,
        })
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> WindowFilter<K, S>
    where
        S: Clone + BuildHasher,
    {
        let c = &self.core;
        WindowFilter {
            core: Core {
                words: c.words.to_vec(),
                counts: c.counts.clone(),
                stash: c.stash.clone(),
                shape: c.shape,
                generation: c.generation,
                sweep: c.sweep,
                gen_start: c.gen_start,
                now: c.now,
            },
            hasher: self.hasher.clone(),
            key: PhantomData,
        }
    }
}
