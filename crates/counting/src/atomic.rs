//! [`AtomicCountingBloomFilter`]: a counting Bloom filter that many threads insert into and
//! remove from at once, through `&self`.

use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use core::sync::atomic::Ordering::Relaxed;
use derive_where::derive_where;

use bloomkit_core::batch::prefetch;
use bloomkit_core::bits::AtomicWords;
use bloomkit_core::build::{FromSettings, Settings};
use bloomkit_core::hash::{Positions, ProbeScheme};
use bloomkit_core::sizing::{self, Design};
use bloomkit_core::{Error, PortableHasher, Xxh3Builder};

use crate::{Counter, CounterArray, CountingBloomFilter, Runs, U4};

/// A [`CountingBloomFilter`] whose inserts and removals run from any number of threads at
/// once, through `&self`, with no lock.
///
/// The counters are packed into 64-bit words exactly as the single-threaded filter packs
/// them (16 four-bit counters, 8 `u8`, 4 `u16` or 2 `u32` per word, little-endian), and each
/// change of a counter is a compare-and-swap on its word that keeps every guarantee of the
/// single-threaded filter:
///
/// - **saturating**: a counter at the ceiling is never raised past it (no wrap-around) and
///   never lowered again (a stuck counter sticks), decided on the value the swap replaces;
/// - **no lost update**: a swap that finds its word changed by another thread (another
///   counter of the same word, or the same counter) retries on the new value, so every
///   increment and decrement takes effect exactly once;
/// - **the same counters as one thread**: saturating increments commute, so any
///   interleaving of inserts leaves the counters a sequential build of the same keys leaves
///   (tested, bit for bit, against [`CountingBloomFilter`]).
///
/// A removal checks the key's counters first and refuses ([`Error::NotPresent`], nothing
/// changed) when one is too low for the key to have been inserted, as the single-threaded
/// filter does; [`remove`](Self::remove) has the same precondition (remove only keys whose
/// insert finished before the removal began, and not more often than they were inserted).
/// Under it a counter being lowered is always above zero: the key's own insert raised it
/// and only other keys' removals, each lowering only what its own insert raised, run
/// meanwhile.
///
/// # Which width
///
/// Every width is lock-free here. Four-bit counters are the memory choice (1/4 of `u16`'s)
/// and keep their single-threaded overflow bound (Fan et al.), but sixteen share a word, so
/// two threads collide on a word four times as often as with `u16`, and a collision costs a
/// retried swap. Wider counters are the choice for keys inserted many times over. See
/// `docs/performance.md` ("atomic counting") for the measured cost of each.
///
/// # Examples
///
/// ```
/// use bloomkit_counting::AtomicCountingBloomFilter;
///
/// let sessions = AtomicCountingBloomFilter::new(100_000, 0.01)?;
/// std::thread::scope(|s| {
///     for t in 0..2u64 {
///         let sessions = &sessions;
///         s.spawn(move || {
///             for i in 0..1_000u64 {
///                 sessions.insert(&(t * 1_000 + i));
///             }
///             // Each thread ends the sessions it opened.
///             for i in 0..500u64 {
///                 sessions.remove(&(t * 1_000 + i)).unwrap();
///             }
///         });
///     }
/// });
/// assert!(sessions.contains(&999u64) && sessions.contains(&1_999u64));
/// let single = sessions.to_filter()?; // the same counters, for one thread
/// assert!(single.contains(&1_500u64));
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[derive_where(Clone, PartialEq; S)]
pub struct AtomicCountingBloomFilter<K: ?Sized, C: Counter = U4, S = Xxh3Builder> {
    words: AtomicWords,
    counters: u64,
    hashes: u32,
    probes: ProbeScheme,
    design: Option<Design>,
    hasher: S,
    key: PhantomData<fn(&K)>,
    width: PhantomData<C>,
}

/// Where counter `i` of width `C` lives: its word and the shift of its lowest bit.
#[inline]
fn slot<C: Counter>(i: u64) -> (usize, u64) {
    let bit = i * u64::from(C::BITS);
    ((bit >> 6) as usize, bit & 63)
}

/// How many 64-bit words hold `counters` counters of width `C`.
fn words_for<C: Counter>(counters: u64) -> u128 {
    crate::counter::packed_bits::<C>(counters).div_ceil(64)
}

impl<K: ?Sized, C: Counter, S> AtomicCountingBloomFilter<K, C, S> {
    fn zeroed(
        counters: u64,
        hashes: u32,
        probes: ProbeScheme,
        design: Option<Design>,
        hasher: S,
    ) -> Result<Self, Error> {
        let words = u64::try_from(words_for::<C>(counters)).map_err(|_| Error::TooLarge {
            what: bloomkit_core::Unit::Counters,
            size: counters as f64,
            max: bloomkit_core::bits::MAX_BITS,
        })?;
        Ok(AtomicCountingBloomFilter {
            words: AtomicWords::zeroed(words)?,
            counters,
            hashes,
            probes,
            design,
            hasher,
            key: PhantomData,
            width: PhantomData,
        })
    }

    /// Counter `i` as it is now.
    #[inline]
    fn get(&self, i: u64) -> u64 {
        let (word, shift) = slot::<C>(i);
        (self.words[word].load(Relaxed) >> shift) & C::MAX
    }

    /// Replaces counter `i`'s value `c` with `new(c)` in one compare-and-swap on its word
    /// (retried while other threads change the word), or leaves it when `new` returns
    /// `None`; returns the value it saw last, the one replaced or left.
    #[inline]
    fn update(&self, i: u64, new: impl Fn(u64) -> Option<u64>) -> u64 {
        let (word, shift) = slot::<C>(i);
        let seen = self.words[word]
            .fetch_update(Relaxed, Relaxed, |w| {
                let c = (w >> shift) & C::MAX;
                new(c).map(|n| w - (c << shift) + (n << shift))
            })
            .unwrap_or_else(|w| w);
        (seen >> shift) & C::MAX
    }

    /// Raises counter `i` by one unless it is stuck at the ceiling; returns its value before.
    #[inline]
    fn increment(&self, i: u64) -> u64 {
        self.update(i, |c| (c < C::MAX).then(|| c + 1))
    }

    /// Lowers counter `i` by `times` unless it is stuck at the ceiling. `Err(())` (and no
    /// change) when it is below `times`: only a broken removal precondition gets there.
    #[inline]
    fn decrement(&self, i: u64, times: u64) -> Result<(), ()> {
        let c = self.update(i, |c| (c != C::MAX && c >= times).then(|| c - times));
        if c != C::MAX && c < times {
            Err(())
        } else {
            Ok(())
        }
    }

    /// Every counter as it is now, in order.
    fn values(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.counters).map(|i| self.get(i))
    }
}

impl<K: ?Sized, C: Counter, S: BuildHasher> FromSettings for AtomicCountingBloomFilter<K, C, S> {
    type Hasher = S;

    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        // The twin's sizing; the byte check on the whole words this filter allocates (up to
        // 7 bytes more than the twin's packed counters), so `max_bytes` bounds its heap.
        let (design, plan) = settings.slot_plan(|counters| {
            u64::try_from(words_for::<C>(counters) * 8).unwrap_or(u64::MAX)
        })?;
        Self::zeroed(
            plan.bits,
            plan.hashes,
            settings.probes.unwrap_or_default(),
            Some(design),
            hasher,
        )
    }
}

crate::counting_settings!(AtomicCountingBloomFilter);

impl<K: ?Sized, C: Counter, S: BuildHasher> AtomicCountingBloomFilter<K, C, S> {
    #[inline]
    fn probes(&self, hash: u64) -> Positions {
        self.probes.positions(hash, self.counters, self.hashes)
    }

    /// Inserts the key whose hash is `hash`: raises each of its k counters by one (a stuck
    /// counter stays at the ceiling). Returns `true` if one of them was zero.
    #[inline]
    pub fn insert_hash(&self, hash: u64) -> bool {
        let mut new = false;
        self.probes.for_each(hash, self.counters, self.hashes, |i| {
            // `if`, not `new |= old == 0` cast to an integer (rust-lang/rust#158206).
            if self.increment(i) == 0 {
                new = true;
            }
        });
        new
    }

    /// Whether the key whose hash is `hash` may be in the filter (all its counters above
    /// zero).
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.probes
            .all(hash, self.counters, self.hashes, |i| self.get(i) > 0)
    }

    /// Removes one occurrence of the key whose hash is `hash`; see
    /// [`remove`](Self::remove).
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    pub fn remove_hash(&self, hash: u64) -> Result<(), Error> {
        let runs = Runs::new(self.probes(hash), self.hashes);
        if !runs.removable::<C>(|i| self.get(i)) {
            return Err(Error::NotPresent);
        }
        for (done, &(i, times)) in runs.as_slice().iter().enumerate() {
            if self.decrement(i, times).is_err() {
                // A counter went too low between the check and here: another thread removed
                // a key it should not have. Give back what this call took, so that it
                // changes nothing, and refuse.
                for &(j, times) in &runs.as_slice()[..done] {
                    for _ in 0..times {
                        self.increment(j);
                    }
                }
                return Err(Error::NotPresent);
            }
        }
        Ok(())
    }

    /// Removes one occurrence of `key`: lowers each of its counters that is not stuck at
    /// the ceiling, from any thread.
    ///
    /// # Correctness
    ///
    /// As [`CountingBloomFilter::remove`]: `key` must have been inserted (and that insert
    /// finished before this call began: joined, or signalled through a channel or a lock),
    /// and inserted more times than it was removed since. Removing any other key can lower
    /// counters that other keys share and make them read as absent.
    ///
    /// # Errors
    /// [`Error::NotPresent`] when a counter of the key is too low for it ever to have been
    /// inserted; this call then changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_counting::AtomicCountingBloomFilter;
    ///
    /// let f = AtomicCountingBloomFilter::new(1_000, 0.01)?;
    /// f.insert("alice");
    /// f.remove("alice")?;
    /// assert!(!f.contains("alice"));
    /// assert!(f.remove("alice").is_err()); // certainly absent now: refused
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn remove<Q: Hash + ?Sized>(&self, key: &Q) -> Result<(), Error>
    where
        K: Hash + core::borrow::Borrow<Q>,
    {
        self.remove_hash(self.hash_key(key))
    }

    /// An estimate of how many times `key` was inserted and not removed, as
    /// [`CountingBloomFilter::count`] reads it, from the counters as they are now.
    pub fn count<Q: Hash + ?Sized>(&self, key: &Q) -> u64
    where
        K: Hash + core::borrow::Borrow<Q>,
    {
        Runs::new(self.probes(self.hash_key(key)), self.hashes).count::<C>(|i| self.get(i))
    }

    /// Requests the cache lines of the key's counters; returns the hash.
    #[inline]
    fn locate(&self, hash: u64) -> u64 {
        self.probes.for_each(hash, self.counters, self.hashes, |i| {
            prefetch(&self.words[slot::<C>(i).0]);
        });
        hash
    }

    /// Removes every item and unsticks every counter (`&mut self`: nothing runs meanwhile).
    pub fn clear(&mut self) {
        for word in self.words.iter_mut() {
            *word.get_mut() = 0;
        }
    }

    /// `m`, the number of counters.
    pub fn num_counters(&self) -> u64 {
        self.counters
    }

    /// Counter `i` as it is now; `None` past [`num_counters`](Self::num_counters).
    pub fn counter(&self, i: u64) -> Option<u64> {
        (i < self.counters).then(|| self.get(i))
    }

    /// How many counters are above zero, counted now (O(m)).
    pub fn nonzero_counters(&self) -> u64 {
        self.values().filter(|&c| c > 0).count() as u64
    }

    /// How many counters are stuck at the ceiling, counted now (O(m)).
    pub fn saturated_counters(&self) -> u64 {
        self.values().filter(|&c| c == C::MAX).count() as u64
    }

    /// An estimate of the number of distinct keys present, from the counters now (as
    /// [`CountingBloomFilter::estimated_len`]; O(m)).
    pub fn estimated_len(&self) -> f64 {
        sizing::estimate_cardinality(self.counters, self.hashes, self.nonzero_counters())
            .unwrap_or(f64::INFINITY)
    }

    /// The false-positive rate from the nonzero counters now (O(m)).
    pub fn estimated_fpr(&self) -> f64 {
        sizing::fpr_from_fill(self.counters, self.hashes, self.nonzero_counters()).unwrap_or(1.0)
    }

    /// Bytes of heap memory held (the counter words).
    pub fn heap_bytes(&self) -> usize {
        core::mem::size_of_val(&*self.words)
    }

    /// A single-threaded copy of the filter as it is now: the same counters, parameters and
    /// hasher.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when the copy cannot be allocated.
    pub fn to_filter(&self) -> Result<CountingBloomFilter<K, C, S>, Error>
    where
        S: Clone,
    {
        let mut counters = C::Array::zeroed(self.counters)?;
        for (i, c) in self.values().enumerate() {
            if c != 0 {
                counters.set(i as u64, c);
            }
        }
        Ok(CountingBloomFilter::from_counters(
            counters,
            self.hashes,
            self.probes,
            self.design,
            self.hasher.clone(),
        ))
    }

    /// The filter with the counters of `filter` (which it consumes), for use from many
    /// threads.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when the atomic words cannot be allocated.
    pub fn from_filter(filter: CountingBloomFilter<K, C, S>) -> Result<Self, Error> {
        let counters = filter.counters.len();
        let this = Self::zeroed(
            counters,
            filter.hashes,
            filter.probe_scheme(),
            filter.design,
            filter.hasher,
        )?;
        for i in 0..counters {
            let c = filter.counters.get(i);
            if c != 0 {
                let (word, shift) = slot::<C>(i);
                this.words[word].fetch_or(c << shift, Relaxed);
            }
        }
        Ok(this)
    }

    /// Adds `other`'s counters in, counter by counter, saturating at the ceiling (as
    /// [`CountingBloomFilter`]'s union), alongside inserts and removals.
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the two were built with different counters, probes,
    /// hasher, seed or probe scheme; nothing is changed then.
    pub fn union_with(&self, other: &CountingBloomFilter<K, C, S>) -> Result<(), Error>
    where
        S: PortableHasher,
    {
        bloomkit_core::check_same_shape(
            (
                bloomkit_core::Parameter::Counters,
                self.counters,
                other.counters.len(),
            ),
            (self.hashes, other.hashes),
            (self.hasher.spec(), other.hasher.spec()),
        )?;
        bloomkit_core::check_same_probes(self.probes, other.probe_scheme())?;
        for i in 0..self.counters {
            let add = other.counters.get(i);
            if add != 0 {
                // The sum saturates at the ceiling.
                self.update(i, |c| Some((c + add).min(C::MAX)));
            }
        }
        Ok(())
    }
}

bloomkit_core::impl_shape_accessors!(
    [C: Counter, S] AtomicCountingBloomFilter<K, C, S>, key = K, probes
);

bloomkit_core::impl_key_methods!(
    [C: Counter, S: BuildHasher] AtomicCountingBloomFilter<K, C, S>, key = K,
    doc = ("bloomkit_counting", AtomicCountingBloomFilter),
    insert = shared Self::insert_hash, contains_batch = pipeline
);

bloomkit_core::impl_infallible_filter!([C: Counter, S: BuildHasher] AtomicCountingBloomFilter<K, C, S>, key = K);

/// See [`AtomicCountingBloomFilter::remove`]: remove only keys that were inserted.
impl<K: Hash + ?Sized, C: Counter, S: BuildHasher> bloomkit_core::Remove
    for AtomicCountingBloomFilter<K, C, S>
{
    fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        AtomicCountingBloomFilter::remove_hash(self, hash)
    }
}

impl<K: ?Sized, C: Counter, S: fmt::Debug> fmt::Debug for AtomicCountingBloomFilter<K, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicCountingBloomFilter")
            .field("counter_bits", &C::BITS)
            .field("counters", &self.counters)
            .field("hashes", &self.hashes)
            .field("probes", &self.probes)
            .field("design", &self.design)
            .field("hasher", &self.hasher)
            .finish_non_exhaustive()
    }
}
bloomkit_core::impl_builder_entry!(AtomicCountingBloomFilter, "bloomkit_counting");
