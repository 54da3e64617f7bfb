//! The expandable filter: [`ExpandableFilter`] (its docs give the design and the rate
//! model).

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;

use bloomkit_core::batch::{pipeline, try_insert_counting, with_popcnt};
use bloomkit_core::build::{FromSettings, Settings};
use bloomkit_core::{Error, Remove, Xxh3Builder};
use derive_where::derive_where;

use crate::table::Table;
use crate::{fingerprint, home_slots_for, max_width, room, MAX_HOME_SLOTS, MAX_LOAD};

/// The doublings an [`ExpandableFilter`]'s fingerprints are sized for: 10, a thousandfold
/// growth, with the rate still under the target (see [`ExpandableFilter`]); past them the slots
/// widen as needed.
pub const GROWTH_HORIZON: u32 = 10;

/// A quotient filter that doubles as it fills, keeping its false-positive rate under the
/// target at every size, with removes and counts.
///
/// It grows without a size given in advance through fingerprints that give up a bit on each
/// doubling (InfiniFilter, Dayan, Bercea, Reviriego, Pagh, SIGMOD 2023; the Aleph filter,
/// PVLDB 2024).
///
/// # Design
///
/// One rank-select quotient table of `m` home slots (a multiple of 64, the fewest that hold
/// the initial items at 95% load), each slot `w` bits wide. A key with hash `h` takes home
/// slot `x = h * m / 2^64` and the first `F = w - 1` bits of the fraction left over
/// (`h * m mod 2^64`) as its fingerprint, stored with a one bit after it: `fingerprint << 1 |
/// 1`. (For `m = 2^q` these are the hash's top `q` bits and the next `F`.) When the table
/// reaches 95% load it doubles: `h * 2m / 2^64` is `2x` plus the fraction's first bit, so
/// every entry's fingerprint gives its first bit to the home slot, and the slot's value
/// shifts up by one, so the one bit that ends the fingerprint moves up too (`value << 1`,
/// the unary code of the entry's age, in the style of InfiniFilter). A slot thus always says how many fingerprint bits it still
/// holds: `w - 1 - trailing_zeros(value)`. An entry whose fingerprint is used up (a *void*
/// entry, value `1 << (w - 1)`) matches every key of its home slot; on the next doubling it
/// is copied to both halves (as the Aleph filter does), so no key it stood for is lost.
///
/// A lookup scans the run of its home slot (one table, one run: no slices to probe) and
/// matches a slot when the slot's remaining fingerprint bits equal the key's hash bits at the
/// same place. A removal takes the matching entry with the *longest* fingerprint (the only
/// choice that never strands another key), so removing keys that were inserted never causes
/// a false negative.
///
/// # Rate model
///
/// An entry with `L` fingerprint bits left in a table of `m` home slots matches a key never
/// inserted with probability `2^-L / m`, and that never changes for an entry (a doubling
/// takes a bit from `L` and doubles `m`; a void entry's two copies each match `1 / 2m` of the
/// keys, as one entry did `1 / m`). [`estimated_fpr`](Self::estimated_fpr) is
/// `1 - exp(-s)` with `s` the sum over entries of `2^-L / m`, kept exact from a count of
/// entries by `L`. The entries of
/// one generation (inserted between two doublings, from 47.5% to 95% of the slots) add up to
/// `0.475 * 2^-F` at most (the first generation, from empty, `0.95 * 2^-F`), whatever
/// happens to them later, so after `G` doublings the rate is at most
/// `2^-F * 0.475 * (G + 2)`.
///
/// The fingerprint length `F` is chosen for a *growth horizon* of 10 doublings (a
/// thousandfold, [`GROWTH_HORIZON`]) and kept while the projected rate (the rate now plus a
/// full new generation) stays under the target; past that, each doubling widens the slots
/// by as many bits as the new generation needs. The filter grows without a limit other than
/// the hash's 64 bits (`log2(m) + w <= 64`), 2^40 home slots ([`Error::TooLarge`] past
/// them) and the builder's [`max_bytes`](bloomkit_core::build::Builder::max_bytes), if set
/// ([`Error::LimitReached`]), and the rate is under the target at every point: memory grows a
/// bit a slot per doubling or two beyond the horizon.
///
/// A slot costs `w + 3` bits (as in [`QuotientFilter`](crate::QuotientFilter)), so at 1%
/// (`F = 10`) a key takes 14.7 bits at 95% load and twice that just after a doubling.
///
/// Each copy of a key takes a slot. Compared with a scalable Bloom filter, a lookup reads one
/// run in one table, keys can be removed, and the memory a key takes does not grow with the
/// number of slices.
///
/// # Examples
///
/// ```
/// use bloomkit_quotient::ExpandableFilter;
///
/// let mut seen = ExpandableFilter::<u64>::new(1_000, 0.01)?;
/// for url_id in 0..100_000u64 {
///     seen.try_insert(&url_id)?; // grows past 1,000 without being told
/// }
/// assert!((0..100_000u64).all(|k| seen.contains(&k)));
/// assert!(seen.estimated_fpr() <= 0.01);
/// seen.remove(&7)?;
/// assert_eq!(seen.len(), 99_999);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[derive_where(Clone, PartialEq; S)]
pub struct ExpandableFilter<K: ?Sized, S = Xxh3Builder> {
    /// The table and its counts: what the filter and its view ([`ExpandableFilterRef`])
    /// both read.
    core: Core<Vec<u64>>,
    /// The most heap bytes the filter may grow to ([`Builder::max_bytes`]); `None`, no limit
    /// but the hash's bits and 2^40 home slots. Not part of the byte format: a decoded filter
    /// has none until [`set_max_bytes`](Self::set_max_bytes).
    ///
    /// [`Builder::max_bytes`]: bloomkit_core::build::Builder::max_bytes
    #[derive_where(skip)]
    max_bytes: Option<u64>,
    hasher: S,
    key: PhantomData<fn(&K)>,
}

bloomkit_core::impl_builder_entry!(ExpandableFilter, "bloomkit_quotient", hasher);

impl<K: ?Sized, S: BuildHasher> FromSettings for ExpandableFilter<K, S> {
    type Hasher = S;

    /// Home slots for `items` at [`MAX_LOAD`] (the fewest blocks of 64, as the quotient
    /// filter takes: `home_slots_for`) and fingerprints
    /// long enough for the rate to stay under `fpr` through [`GROWTH_HORIZON`] doublings.
    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        let design = settings.design()?;
        let home = home_slots_for(design.capacity);
        if home > MAX_HOME_SLOTS as u128 {
            return Err(Error::TooLarge {
                what: bloomkit_core::Unit::HomeSlots,
                size: home as f64,
                max: MAX_HOME_SLOTS as u64,
            });
        }
        let home = home as usize;
        // 2^-F * 0.475 * (horizon + 2) <= fpr, in floats until F is known to fit: a rate
        // near the smallest positive f64 makes `need` infinite.
        let need = 0.5 * MAX_LOAD * f64::from(GROWTH_HORIZON + 2) / design.fpr;
        let bits = need.log2().ceil().max(1.0);
        if bits >= f64::from(max_width(home)) {
            return Err(Error::FprBelowMinimum {
                fpr: design.fpr,
                min: 0.5
                    * MAX_LOAD
                    * f64::from(GROWTH_HORIZON + 2)
                    * (-f64::from(max_width(home) - 1)).exp2(),
                variant: bloomkit_core::Variant::Expandable,
            });
        }
        let width = bits as u32 + 1;
        settings.check_bytes(heap_bytes_of(Table::heap_bytes_for(home, width), width))?;
        Ok(ExpandableFilter {
            core: Core {
                table: Table::with_home_slots(home, width)?,
                target_fpr: design.fpr,
                by_bits: vec![0; width as usize],
                copies: 0,
                doublings: 0,
                saturated: false,
            },
            max_bytes: settings.max_bytes,
            hasher,
            key: PhantomData,
        })
    }
}

/// The heap bytes of a filter whose table takes `table` bytes, with slots `width` bits wide
/// (the table and the count of entries by fingerprint bits).
fn heap_bytes_of(table: u64, width: u32) -> u64 {
    table + u64::from(width) * 8
}

/// Adds `value` to the run of `x` in `table`, adding blocks after the table's last when the
/// runs reach its end (many copies of one key, or keys hashed near the top: their runs
/// cannot wrap around), within `max_bytes` of heap with `other` bytes held beside the table.
///
/// # Errors
/// [`Error::LimitReached`] past `max_bytes`, [`Error::AllocationFailed`]; nothing is
/// changed then.
fn push_growing(
    table: &mut Table,
    x: usize,
    value: u64,
    max_bytes: Option<u64>,
    other: u64,
) -> Result<(), Error> {
    loop {
        if table.push_raw(x, value, u64::MAX).is_some() {
            return Ok(());
        }
        // A table of `max_slots` slots holds every run (see `Table::max_slots`); a push
        // that fails short of it grows the tail.
        let slots = table.next_tail().ok_or(Error::Full {
            items: table.used,
            slots: table.quotients as u64,
        })?;
        let bytes = Table::heap_bytes_with(slots, table.remainder_bits) + other;
        if let Some(limit) = max_bytes.filter(|&limit| bytes > limit) {
            return Err(Error::LimitReached {
                what: bloomkit_core::Limit::Bytes,
                limit,
            });
        }
        table.grow_tail(slots)?;
    }
}

/// Whether slot value `v` matches a key whose next `w - 1` hash bits are `f` (slots of `w`
/// bits): the `w - 1 - age` fingerprint bits the slot holds above its one bit at `age`
/// equal the first as many of `f`'s. A void entry (`age = w - 1`) matches every key.
#[inline(always)]
fn matches(v: u64, f: u64) -> bool {
    let age = v.trailing_zeros();
    v >> (age + 1) == f >> age
}

/// The fingerprint bits a slot value holds, in slots of `w` bits.
#[inline(always)]
fn bits_held(v: u64, w: u32) -> u32 {
    w - 1 - v.trailing_zeros()
}

impl<K: ?Sized, S> ExpandableFilter<K, S> {
    /// Adds a copy of the key whose hash is `hash`, doubling the table first when it is at
    /// [`MAX_LOAD`]; `Ok(true)` when no entry matched it before (the key is certainly new).
    ///
    /// Copies of one key each take a slot, as distinct keys do: many copies make the table
    /// double as many keys would (and add slots after its last home slot when their run
    /// reaches it).
    ///
    /// # Errors
    /// [`Error::TooLarge`] when the table cannot double again (2^40 home slots, or the hash's
    /// 64 bits spent); [`Error::LimitReached`] when growing would pass the builder's
    /// [`max_bytes`](bloomkit_core::build::Builder::max_bytes);
    /// [`Error::AllocationFailed`]. Nothing is changed then, but a doubling that succeeded
    /// before the error (the key is not added).
    pub fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        if self.core.table.used >= room(self.core.table.quotients) {
            self.double()?;
        }
        let (x, f) = self.split(hash);
        self.core.table.prefetch_remainders(x);
        let value = (f << 1) | 1;
        let (new, pushed) = with_popcnt(
            #[inline(always)]
            || {
                let new = !self.core.table.run_back(x).any(|(_, v)| matches(v, f));
                (new, self.core.table.push_raw(x, value, u64::MAX).is_some())
            },
        );
        if !pushed {
            // The runs reached the table's last slot: rare, so out of the fast path.
            let other = self.core.by_bits.len() as u64 * 8;
            push_growing(&mut self.core.table, x, value, self.max_bytes, other)?;
        }
        let newest = (self.width() - 1) as usize;
        self.core.by_bits[newest] += 1;
        self.core.copies += 1;
        Ok(new)
    }

    /// Adds a copy of every key of `keys`, in order, doubling as it fills, with the cache
    /// lines of a group of keys requested before any is inserted. Returns how many were
    /// certainly new (as [`try_insert`](Self::try_insert) counts them one at a time).
    ///
    /// # Errors
    /// As [`try_insert_hash`](Self::try_insert_hash), at the first key refused: the keys
    /// before it are in, it and the keys after it are not.
    pub fn try_insert_batch<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        K: Hash,
        S: BuildHasher,
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        try_insert_counting(
            self,
            keys,
            |f, key| f.stage(key.borrow()),
            Self::try_insert_hash,
        )
    }

    /// Removes a copy of the key whose hash is `hash`: the matching entry with the longest
    /// fingerprint.
    ///
    /// # Errors
    /// [`Error::NotPresent`] when no entry matches: the key was certainly never inserted (or
    /// all its copies were removed); nothing is changed. Removing a key never inserted that
    /// matches another key's entry removes that entry, as with a counting Bloom filter:
    /// remove only keys you inserted.
    pub fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        let (x, f) = self.split(hash);
        self.core.table.prefetch_remainders(x);
        let w = self.width();
        let best = with_popcnt(
            #[inline(always)]
            || {
                self.core
                    .table
                    .run_back(x)
                    .filter(|&(_, v)| matches(v, f))
                    .min_by_key(|&(_, v)| v.trailing_zeros())
            },
        );
        let (at, v) = best.ok_or(Error::NotPresent)?;
        with_popcnt(
            #[inline(always)]
            || self.core.table.remove_raw(x, at),
        );
        self.core.by_bits[bits_held(v, w) as usize] -= 1;
        // A void entry's copies count once: removing the key it stood for twice (a key
        // removed more often than inserted) may find a second copy.
        self.core.copies = self.core.copies.saturating_sub(1);
        Ok(())
    }

    /// The bound on the rate once the slots free now fill with entries of
    /// `fingerprint_bits`: the entries held plus that many more.
    fn projected_fpr(&self, fingerprint_bits: u32) -> f64 {
        let home = self.core.table.quotients;
        let free = room(home).saturating_sub(self.core.table.used);
        self.match_sum() + free as f64 * (-f64::from(fingerprint_bits)).exp2() / home as f64
    }

    /// The table at twice the home slots: every fingerprint gives a bit to its home slot
    /// (void entries go to both halves), and the slots widen when the next generation needs
    /// longer fingerprints to keep the rate under the target.
    fn double(&mut self) -> Result<(), Error> {
        let (quotients, w) = (self.core.table.quotients * 2, self.width());
        // The most home slots: 2^40, and fewer when slots of `width` bits leave the home
        // slot fewer of the hash's 64 bits.
        let too_large = |width: u32| Error::TooLarge {
            what: bloomkit_core::Unit::HomeSlots,
            size: quotients as f64,
            max: (MAX_HOME_SLOTS as u64).min(1u64 << (64 - width).min(63)),
        };
        if quotients > MAX_HOME_SLOTS {
            return Err(too_large(w));
        }
        // The narrowest slots (at least today's) under which a full new generation keeps the
        // rate under the target: the rate held is the same after doubling.
        let free = room(quotients).saturating_sub(self.core.table.used);
        let held = self.match_sum();
        let mut fingerprint_bits = w - 1;
        let widest = max_width(quotients);
        while held + free as f64 * (-f64::from(fingerprint_bits)).exp2() / quotients as f64
            > self.core.target_fpr
            && fingerprint_bits + 1 < widest
        {
            fingerprint_bits += 1;
        }
        let wide = fingerprint_bits + 1;
        if wide > widest {
            return Err(too_large(wide));
        }
        let other = u64::from(wide) * 8;
        let needed = heap_bytes_of(Table::heap_bytes_for(quotients, wide), wide);
        if let Some(limit) = self.max_bytes.filter(|&limit| needed > limit) {
            return Err(Error::LimitReached {
                what: bloomkit_core::Limit::Bytes,
                limit,
            });
        }
        let mut table = Table::with_home_slots(quotients, wide)?;
        let mut by_bits = vec![0u64; wide as usize];
        let void = 1u64 << (wide - 1);
        let widen = wide - w;
        let mask = u64::MAX >> (64 - wide);
        for (x, v) in self.core.table.iter_raw() {
            if bits_held(v, w) == 0 {
                for half in 0..2 {
                    push_growing(&mut table, x << 1 | half, void, self.max_bytes, other)?;
                }
                by_bits[0] += 2;
            } else {
                let first = (v >> (w - 1)) as usize;
                let rest = (v << (1 + widen)) & mask;
                push_growing(&mut table, x << 1 | first, rest, self.max_bytes, other)?;
                by_bits[bits_held(rest, wide) as usize] += 1;
            }
        }
        self.core.table = table;
        self.core.by_bits = by_bits;
        self.core.doublings += 1;
        // The same bound, summed again over the new table (in another order: a rounding's
        // slack), with the voids' copies taking free slots.
        debug_assert!(
            self.projected_fpr(wide - 1) <= self.core.target_fpr * (1.0 + 1e-9) || wide >= widest
        );
        Ok(())
    }

    /// Removes every key (and ends a saturation); the table keeps its size and slot width.
    pub fn clear(&mut self) {
        self.core.table.clear();
        self.core.by_bits.fill(0);
        self.core.copies = 0;
        self.core.saturated = false;
    }

    /// Heap memory held.
    pub fn heap_bytes(&self) -> usize {
        self.core.table.heap_bytes() + self.core.by_bits.len() * 8
    }

    /// The most heap bytes the filter may grow to: the builder's
    /// [`max_bytes`](bloomkit_core::build::Builder::max_bytes), `None` for no limit.
    pub fn max_bytes(&self) -> Option<u64> {
        self.max_bytes
    }

    /// Sets the most heap bytes the filter may grow to (a decoded filter has no limit: the
    /// byte format does not carry one). A doubling that would pass it is
    /// [`Error::LimitReached`]; the filter already held is kept whatever its size.
    pub fn set_max_bytes(&mut self, max_bytes: Option<u64>) {
        self.max_bytes = max_bytes;
    }
}

impl<K: Hash + ?Sized, S: BuildHasher> ExpandableFilter<K, S> {
    /// Adds a copy of `key`; `Ok(true)` when it is certainly new.
    ///
    /// # Errors
    /// As [`try_insert_hash`](Self::try_insert_hash).
    pub fn try_insert(&mut self, key: &K) -> Result<bool, Error> {
        self.try_insert_hash(self.hasher.hash_one(key))
    }

    /// Removes a copy of `key`.
    ///
    /// # Errors
    /// As [`remove_hash`](Self::remove_hash).
    pub fn remove(&mut self, key: &K) -> Result<(), Error> {
        self.remove_hash(self.hasher.hash_one(key))
    }
}

/// Adds a copy of every key, doubling as the filter fills, as
/// [`try_insert_batch`](ExpandableFilter::try_insert_batch) does. `extend` cannot return an
/// error and never drops a key or panics: when the filter cannot double again (past the
/// builder's [`max_bytes`](bloomkit_core::build::Builder::max_bytes), past the hash's 64
/// bits or 2^40 home slots, or when the memory cannot be had), it
/// [saturates](ExpandableFilter::is_saturated): from then on it answers "present" for every
/// key, until [`clear`](ExpandableFilter::clear). Without `max_bytes`, the hash's bits
/// end it first at very low rates (a filter made for 1,000 keys at 10^-12 takes 44-bit
/// slots and cannot double past about 5 * 10^5 keys); at 1% they last to 2^40 home slots.
/// To be told instead, call `try_insert_batch`.
///
/// # Examples
///
/// ```
/// use bloomkit_quotient::ExpandableFilter;
///
/// let mut f = ExpandableFilter::<u64>::new(1_000, 0.01)?;
/// f.extend(0..100_000u64); // doubles as it fills, the rate kept
/// assert!((0..100_000u64).all(|k| f.contains(&k)));
/// assert!(!f.is_saturated() && f.estimated_fpr() <= 0.01);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
impl<K: Hash + ?Sized, S: BuildHasher, T: Borrow<K>> Extend<T> for ExpandableFilter<K, S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, keys: I) {
        // A saturated filter answers every key already; otherwise the keys before a refusal
        // are in, and the refused key and those after it are answered by the saturation.
        if !self.core.saturated && self.try_insert_batch(keys).is_err() {
            self.core.saturated = true;
        }
    }
}

/// The read side, the same for the filter and its view over bytes
/// ([`ExpandableFilterRef`]): lookups, counts, sizes and estimates over the fields `core`
/// ([`Core`]) and `hasher`, `Debug`, and the read-only side of bloomkit's traits.
macro_rules! read_side {
    ([$($lt:lifetime)?] $ty:ident) => {
        impl<$($lt,)? K: ?Sized, S> $ty<$($lt,)? K, S> {
            /// Slot width `w`: the newest entries' fingerprint bits, plus one.
            #[inline(always)]
            fn width(&self) -> u32 {
                self.core.table.remainder_bits
            }

            /// A hash's home slot among `m` and its next `w - 1` bits ([`fingerprint`]).
            #[inline(always)]
            fn split(&self, hash: u64) -> (usize, u64) {
                fingerprint(hash, self.core.table.quotients, self.width() - 1)
            }

            /// The hasher keys are hashed with.
            pub fn hasher(&self) -> &S {
                &self.hasher
            }

            /// Copies held (exact, counting a void entry's copies once; a
            /// [saturated](Self::is_saturated) filter leaves out the keys `extend` could not place).
            pub fn len(&self) -> u64 {
                self.core.copies
            }

            /// Whether the filter holds nothing.
            pub fn is_empty(&self) -> bool {
                self.core.copies == 0
            }

            /// Home slots now (a multiple of 64, doubled at each doubling).
            pub fn capacity(&self) -> u64 {
                self.core.table.quotients as u64
            }

            /// Slots in use over home slots (the table doubles past [`MAX_LOAD`]).
            pub fn load_factor(&self) -> f64 {
                self.core.table.used as f64 / self.core.table.quotients as f64
            }

            /// Doublings since the filter was made.
            pub fn doublings(&self) -> u32 {
                self.core.doublings
            }

            /// Fingerprint bits the next key inserted gets (the slot width less one).
            pub fn fingerprint_bits(&self) -> u32 {
                self.width() - 1
            }

            /// Whether the key whose hash is `hash` may be in the filter.
            #[inline]
            pub fn contains_hash(&self, hash: u64) -> bool {
                let (x, f) = self.split(hash);
                // The remainders near the home slot are requested before the block's bits are
                // read, so that the two misses overlap; a key whose home slot holds no run is
                // answered from those bits, without entering the POPCNT scope (a call).
                self.core.table.prefetch_remainders(x);
                if !self.core.table.is_occupied(x) {
                    return self.core.saturated;
                }
                with_popcnt(
                    #[inline(always)]
                    || self.matched(x, f),
                )
            }

            /// Whether an entry of home slot `x`'s run matches fingerprint bits `f`, or the
            /// filter is saturated (inside a POPCNT scope).
            #[inline(always)]
            fn matched(&self, x: usize, f: u64) -> bool {
                self.core.table.run_back(x).any(|(_, v)| matches(v, f)) | self.core.saturated
            }

            /// Whether the filter is saturated: [`Extend`] met a key it could not make room
            /// for (a doubling past the builder's
            /// [`max_bytes`](bloomkit_core::build::Builder::max_bytes), past the hash's bits
            /// or 2^40 home slots, or memory that could not be had), so that every key answers
            /// "present" (and counts `u64::MAX`) until [`clear`](ExpandableFilter::clear).
            /// Only `extend` saturates a filter (it cannot return an error and never drops a
            /// key); every other insert returns the error. The byte format keeps the state.
            pub fn is_saturated(&self) -> bool {
                self.core.saturated
            }

            /// Entries matching the key whose hash is `hash`: at least the copies inserted and not
            /// removed, more when other keys' entries match it; `u64::MAX` for every key when the
            /// filter is [saturated](Self::is_saturated).
            pub fn count_hash(&self, hash: u64) -> u64 {
                if self.core.saturated {
                    return u64::MAX;
                }
                let (x, f) = self.split(hash);
                with_popcnt(
                    #[inline(always)]
                    || {
                        self.core.table
                            .run_back(x)
                            .filter(|&(_, v)| matches(v, f))
                            .count() as u64
                    },
                )
            }

            /// The false-positive rate now: `1 - exp(-s)`, where `s` is the sum over entries of
            /// `2^-L / m`, `L` the fingerprint bits an entry holds and `m` the home slots (see the
            /// type docs): the chance that some entry matches a key never inserted (1 when the
            /// filter is [saturated](Self::is_saturated)).
            pub fn estimated_fpr(&self) -> f64 {
                if self.core.saturated {
                    return 1.0;
                }
                -(-self.match_sum()).exp_m1()
            }

            /// The expected number of entries a key never inserted matches: the sum over entries of
            /// `2^-L / m`, which bounds the rate from above.
            fn match_sum(&self) -> f64 {
                let sum: f64 = self
                    .core
                    .by_bits
                    .iter()
                    .enumerate()
                    .map(|(bits, &n)| n as f64 * (-(bits as f64)).exp2())
                    .sum();
                sum / self.core.table.quotients as f64
            }

            /// Whether each of `keys` may be in the filter, appended to `out` in order: the answers
            /// of [`contains`](Self::contains), with the cache lines of a group of keys requested
            /// before any is probed ([`bloomkit_core::batch`]), so that in a table larger than the
            /// cache their misses overlap.
            ///
            /// # Examples
            ///
            /// ```
            /// use bloomkit_quotient::ExpandableFilter;
            ///
            /// let mut f = ExpandableFilter::<u64>::new(100, 0.01)?;
            /// let new = f.try_insert_batch(0..10_000u64)?; // doubles as it fills
            /// assert!(new > 9_900); // less the keys that matched an entry already
            /// let mut found = Vec::new();
            /// f.contains_batch([1u64, 9_999], &mut found);
            /// assert_eq!(found, [true, true]);
            /// # Ok::<(), bloomkit_core::Error>(())
            /// ```
            pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
            where
                K: Hash,
                S: BuildHasher,
                I: IntoIterator,
                I::Item: Borrow<K>,
            {
                with_popcnt(
                    #[inline(always)]
                    || {
                        pipeline(
                            out,
                            keys,
                            |_, key| self.stage(key.borrow()),
                            |out, hash| {
                                let (x, f) = self.split(hash);
                                out.push(self.matched(x, f));
                            },
                        );
                    },
                );
            }

            /// A key's hash, with the cache line its lookup starts at requested.
            #[inline(always)]
            fn stage(&self, key: &K) -> u64
            where
                K: Hash,
                S: BuildHasher,
            {
                let hash = self.hasher.hash_one(key);
                self.core.table.prefetch(self.split(hash).0);
                hash
            }
        }

        key_reads!([$($lt)?] $ty, count = "Entries matching `key`");

        impl<$($lt,)? K: ?Sized, S: fmt::Debug> fmt::Debug for $ty<$($lt,)? K, S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("len", &self.core.copies)
                    .field("home_slots", &self.core.table.quotients)
                    .field("slot_bits", &self.core.table.remainder_bits)
                    .field("doublings", &self.core.doublings)
                    .field("saturated", &self.core.saturated)
                    .field("hasher", &self.hasher)
                    .finish()
            }
        }

        bloomkit_core::impl_lookup!([$($lt,)? S: BuildHasher] $ty<$($lt,)? K, S>, key = K,
            exact_len, target_fpr = |f| f.core.target_fpr);
    };
}

read_side!([] ExpandableFilter);

/// A read-only [`ExpandableFilter`] over its serialized bytes, without copying the table:
/// an expandable filter answered (and counted) in place from a memory-mapped file, by the
/// owned filter's read code.
///
/// The bytes must have the table's words aligned to 8 bytes (a memory map, or any buffer
/// aligned to 64); others get [`DecodeError::NotViewable`](bloomkit_core::DecodeError::NotViewable),
/// and the owned decoder reads them. Every run is checked when the view is made.
///
/// # Examples
///
/// ```
/// use bloomkit_core::format::AlignedBytes;
/// use bloomkit_quotient::{ExpandableFilter, ExpandableFilterRef};
///
/// let mut f = ExpandableFilter::<u64>::new(100, 0.01)?;
/// f.try_insert_batch(0..10_000u64)?;
/// let bytes = AlignedBytes::copy_from(&f.to_bytes());
/// let view = ExpandableFilterRef::<u64>::from_bytes(&bytes)?;
/// assert!((0..10_000u64).all(|k| view.contains(&k)));
/// assert_eq!(view.to_filter(), f);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[cfg(feature = "serde")]
pub struct ExpandableFilterRef<'a, K: ?Sized, S = Xxh3Builder> {
    core: Core<&'a [u64]>,
    hasher: S,
    key: PhantomData<fn(&K)>,
}

#[cfg(feature = "serde")]
impl<K: ?Sized, S> ExpandableFilterRef<'_, K, S> {
    /// Heap memory the view holds: its counts by fingerprint bits (it borrows the table).
    pub fn heap_bytes(&self) -> usize {
        self.core.by_bits.len() * 8
    }
}

#[cfg(feature = "serde")]
read_side!(['a] ExpandableFilterRef);

/// What the filter and its view both read: the table and the counts its rate comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Core<W> {
    /// `m` home slots (a multiple of 64, doubling), `w` bits wide (the remainder bits).
    pub(crate) table: Table<W>,
    pub(crate) target_fpr: f64,
    /// Entries (slots) by the fingerprint bits they hold, `0..w`.
    pub(crate) by_bits: Vec<u64>,
    /// Copies of keys held (a void entry's copies count once).
    pub(crate) copies: u64,
    /// Doublings so far.
    pub(crate) doublings: u32,
    /// Whether [`Extend`] met a key it could not make room for (see
    /// [`ExpandableFilter::is_saturated`]).
    pub(crate) saturated: bool,
}

bloomkit_core::impl_fallible_filter!([S: BuildHasher] ExpandableFilter<K, S>, key = K);

impl<K: Hash + ?Sized, S: BuildHasher> Remove for ExpandableFilter<K, S> {
    fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        ExpandableFilter::remove_hash(self, hash)
    }
}

/// The expandable filter's byte format (variant tag 13, `docs/format.md`) and serde through
/// it. Parameters: home slots, slot bits, the target rate, the copies held, the doublings.
/// Payload: the table's blocks as little-endian words, as the quotient filter's; reading
/// checks every run (sorted, every entry with its one bit) and rebuilds the count of
/// entries by fingerprint bits from them.
#[cfg(feature = "serde")]
mod codec {
    use core::marker::PhantomData;

    use bloomkit_core::format::{Reader, Verify, Writer};
    use bloomkit_core::{Codec, DecodeError, Error, PortableHasher, Variant};
    use serde::{Deserialize, Serialize};

    use super::{bits_held, Core, ExpandableFilter, ExpandableFilterRef};
    use crate::table::{Table, BLOCK};
    use crate::{max_width, MAX_HOME_SLOTS};

    #[derive(Serialize, Deserialize)]
    struct Params {
        home_slots: u64,
        slot_bits: u32,
        target_fpr: f64,
        copies: u64,
        doublings: u32,
    }

    impl<K: ?Sized, S: PortableHasher> Codec for ExpandableFilter<K, S> {
        const VARIANT: Variant = Variant::Expandable;

        fn encode(&self) -> Writer<'_> {
            Writer::new(Variant::Expandable, self.hasher.spec())
                .params(&Params {
                    home_slots: self.core.table.quotients as u64,
                    slot_bits: self.core.table.remainder_bits,
                    target_fpr: crate::codec::saturation::write(
                        self.core.target_fpr,
                        self.core.saturated,
                    ),
                    copies: self.core.copies,
                    doublings: self.core.doublings,
                })
                .words(&self.core.table.words)
        }

        fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
            let hasher = reader.hasher::<S>()?;
            let p: Params = reader.params()?;
            let words = reader.words()?;
            reader.finish()?;
            Ok(ExpandableFilter {
                core: p.check(words)?,
                max_bytes: None,
                hasher,
                key: PhantomData,
            })
        }
    }

    impl Params {
        /// The table over `words` and its counts, every parameter and run checked (the
        /// owned decoder's and the view's one set of checks).
        fn check<W: AsRef<[u64]>>(&self, words: W) -> Result<Core<W>, Error> {
            let p = self;
            let bad = |why: String| {
                Error::Decode(DecodeError::Invalid(format!("expandable filter: {why}")))
            };
            let home = p.home_slots;
            if home == 0 || home % BLOCK as u64 != 0 || home > MAX_HOME_SLOTS as u64 {
                return Err(bad(format!("{home} home slots")));
            }
            let home = home as usize;
            if !(2..=max_width(home)).contains(&p.slot_bits) {
                return Err(bad(format!("{}-bit slots", p.slot_bits)));
            }
            let (target_fpr, saturated) = crate::codec::saturation::read(p.target_fpr)?;
            if p.doublings > 64 {
                return Err(bad(format!("{} doublings", p.doublings)));
            }
            let table = Table::from_words_in(home, p.slot_bits, None, words).map_err(bad)?;
            if p.copies > table.used {
                return Err(bad(format!(
                    "{} copies in {} entries",
                    p.copies, table.used
                )));
            }
            let mut by_bits = vec![0u64; p.slot_bits as usize];
            for (_, v) in table.iter_raw() {
                by_bits[bits_held(v, p.slot_bits) as usize] += 1;
            }
            Ok(Core {
                table,
                target_fpr,
                by_bits,
                copies: p.copies,
                doublings: p.doublings,
                saturated,
            })
        }
    }

    impl<'a, K: ?Sized> ExpandableFilterRef<'a, K> {
        /// A view of `bytes`, every byte checked (both checksums and every run).
        ///
        /// # Errors
        /// As [`ExpandableFilter::from_bytes`], and `NotViewable` for bytes that cannot be
        /// used in place (not 8-byte aligned).
        pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
            Self::with_hasher(bytes, Verify::All)
        }
    }

    impl<'a, K: ?Sized, S: PortableHasher> ExpandableFilterRef<'a, K, S> {
        /// A view of `bytes` written with hasher `S`, checked as `verify` says (the table's
        /// runs are always checked).
        ///
        /// # Errors
        /// As [`from_bytes`](ExpandableFilterRef::from_bytes).
        pub fn with_hasher(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
            let mut reader = Reader::open(bytes, Variant::Expandable, verify)?;
            let hasher = reader.hasher::<S>()?;
            let p: Params = reader.params()?;
            let words = reader.words_in_place::<u64>()?;
            reader.finish()?;
            Ok(ExpandableFilterRef {
                core: p.check(words)?,
                hasher,
                key: PhantomData,
            })
        }

        /// An owned copy of the filter (with no byte limit, as a decoded one).
        pub fn to_filter(&self) -> ExpandableFilter<K, S>
        where
            S: Clone,
        {
            let t = &self.core.table;
            ExpandableFilter {
                core: Core {
                    table: Table {
                        remainder_bits: t.remainder_bits,
                        quotients: t.quotients,
                        len: t.len,
                        distinct: t.distinct,
                        used: t.used,
                        blocks: t.blocks,
                        words: t.words.to_vec(),
                    },
                    target_fpr: self.core.target_fpr,
                    by_bits: self.core.by_bits.clone(),
                    copies: self.core.copies,
                    doublings: self.core.doublings,
                    saturated: self.core.saturated,
                },
                max_bytes: None,
                hasher: self.hasher.clone(),
                key: PhantomData,
            }
        }
    }

    impl<K: ?Sized, S: PortableHasher> ExpandableFilter<K, S> {
        /// The filter in bloomkit's byte format (`docs/format.md`).
        ///
        /// # Examples
        ///
        /// ```
        /// use bloomkit_quotient::ExpandableFilter;
        ///
        /// let mut f = ExpandableFilter::<u64>::new(100, 0.01)?;
        /// for k in 0..1_000u64 {
        ///     f.try_insert(&k)?;
        /// }
        /// let g = ExpandableFilter::<u64>::from_bytes(&f.to_bytes())?;
        /// assert_eq!(f, g);
        /// # Ok::<(), bloomkit_core::Error>(())
        /// ```
        pub fn to_bytes(&self) -> Vec<u8> {
            Codec::to_bytes(self)
        }
    }

    impl<K: ?Sized> ExpandableFilter<K> {
        /// Reads a filter written by [`to_bytes`](Self::to_bytes).
        ///
        /// # Errors
        /// [`Error::Decode`] for truncated, corrupted or hostile bytes (every run is
        /// checked), another variant, hasher or format version; never a panic.
        pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
            Codec::from_bytes(bytes)
        }
    }

    bloomkit_core::impl_serde_via_bytes!([K: ?Sized, S: PortableHasher] ExpandableFilter<K, S>);
}
