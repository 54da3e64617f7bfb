//! A filter that forgets: "was this key inserted in the last N inserts?" or "in the last
//! T?", in memory fixed before the first insert.
//!
//! [`WindowFilter`] is a cuckoo table of fingerprints (buckets of four slots, two buckets a
//! key: Fan, Andersen, Kaminsky & Mitzenmacher, "Cuckoo Filter", 2014) in which each entry is
//! tagged with the generation of its key's latest insert. Inserts are counted in generations
//! (`g` inserts, or a span of time); an entry more than `L` generations old is dead and its
//! slot free, so the table holds the keys of the last `L + 1` generations at most. Its
//! promises:
//!
//! - **no false negative within the window**: every key of the last
//!   [`window`](WindowFilter::window) inserts (or the last `T` time units of a window over
//!   time) answers "present", whatever came before or after it (an insert of a key already
//!   held refreshes its entry; entries move between their two buckets but never drop);
//! - **the false-positive rate at most the target at every moment** of an endless stream
//!   (sized for the worst moment: `L + 1` full generations of distinct keys);
//! - **forgotten within a stated slack**: a key older than
//!   [`forgotten_after`](WindowFilter::forgotten_after) inserts (1.1 windows by default, for
//!   windows of 10 inserts or more) is dead, so it answers "present" only as often as a key
//!   never inserted;
//! - memory fixed by the window and the rate ([`WindowFilter::heap_bytes`] before the first
//!   insert; the builder's `max_bytes` is honoured): 17.1 bits a window item at 1%. (An
//!   insert that finds no room after 500 cuckoo moves parks an entry in a small stash
//!   beside the table; at the sizing's load, at most 90% of the slots alive, that does not
//!   happen in the tests' streams.)
//!
//! A lookup reads two buckets (two cache lines; three when a bucket straddles a line, about
//! one bucket in ten at 1%) and compares each bucket's slots at once. Sizing, its model and
//! its source: `bloomkit_core::sizing::window`.
//!
//! # Examples
//!
//! A stream de-duplicator that remembers the last 100,000 event ids:
//!
//! ```
//! use bloomkit_window::WindowFilter;
//!
//! let mut seen = WindowFilter::<u64>::new(100_000, 0.01)?;
//! let mut fresh = 0;
//! for id in (0..300_000u64).map(|i| i % 150_000) {
//!     // `true`: certainly not seen in the window; `false`: seen (or, rarely, a false
//!     // positive).
//!     if seen.try_insert(&id)? {
//!         fresh += 1;
//!     }
//! }
//! // Ids recur 150,000 inserts apart, past the window: most count as fresh again.
//! assert!(fresh > 280_000, "{fresh}");
//! assert!(seen.contains(&149_999)); // inserted last: inside the window
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! A window over time, with the times passed in (any unit; here seconds), so replays are
//! deterministic:
//!
//! ```
//! use bloomkit_window::WindowFilter;
//!
//! // URLs fetched in the last week, about a million fetches a week, arriving evenly (each of
//! // the window's generations takes its share; a burst past it is refused, `WindowFull`).
//! let week = 7 * 24 * 3600;
//! let mut fetched = WindowFilter::<str>::builder(1_000_000, 0.01).over_time(week).build()?;
//! fetched.try_insert_at("https://example.org/", 1_000)?;
//! assert!(fetched.contains_at("https://example.org/", 1_000 + week - 1));
//! assert!(!fetched.contains_at("https://example.org/", 1_000 + 2 * week));
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! The builder's other settings: a slack (keys live up to `1 + slack` windows; a larger
//! slack takes fewer generations and tag bits), a seed or hasher, a memory limit:
//!
//! ```
//! use bloomkit_window::WindowFilter;
//!
//! let f = WindowFilter::<str>::builder(10_000, 0.001)
//!     .over_time(60_000_000) // a minute, in microseconds (`contains_now` reads that clock)
//!     .slack(0.25)           // forgotten by about 1.25 minutes
//!     .seed(7)
//!     .max_bytes(1 << 20)
//!     .build()?;
//! assert!(f.heap_bytes() <= 1 << 20);
//! assert_eq!(f.time_forgotten_after().map(|t| t < 76_000_000), Some(true));
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
#![forbid(unsafe_code)]

use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use std::borrow::Borrow;

use bloomkit_core::batch::{self, prefetch};
use bloomkit_core::bits::filled_vec;
use bloomkit_core::build::{FromSettings, Settings, Windowed};
use bloomkit_core::sizing::window as sizing;
use bloomkit_core::{Error, Xxh3Builder};
use derive_where::derive_where;

#[cfg(feature = "serde")]
mod codec;
#[cfg(feature = "serde")]
pub use codec::WindowFilterRef;

/// A filter of the keys inserted within a sliding window (of inserts or of time); see the
/// crate docs.
///
/// Inserts go through [`try_insert`](Self::try_insert): a window over inserts never refuses
/// one; a window over time refuses ([`Error::WindowFull`]) an insert that would pass the
/// items it was sized for within one generation, since taking it would raise the rate
/// past the target and shifting early would forget keys still inside the window.
#[derive_where(Clone, PartialEq; S)]
pub struct WindowFilter<K: ?Sized, S = Xxh3Builder> {
    core: Core<Vec<u64>>,
    hasher: S,
    key: PhantomData<fn(&K)>,
}

/// What a window filter and its view both read: the table, the generations and the clock.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Core<W> {
    /// The buckets, packed: slot `j` of bucket `b` at bits `(b * SLOTS + j) * w` (bit `i`
    /// of the table is bit `i % 64` of word `i / 64`), then two words of padding. A slot
    /// holds `fingerprint << t | tag`; 0 is empty.
    pub(crate) words: W,
    /// Inserts of each generation, at its tag (`2^t` counts).
    pub(crate) counts: Vec<u64>,
    /// Entries no bucket of their pair had room for: `[bucket, slot]` pairs (empty unless
    /// cuckoo inserts failed, which they do above about 95% load; the sizing's is 90%).
    pub(crate) stash: Vec<u64>,
    pub(crate) shape: Shape,
    /// Generations begun since the filter was made (the current tag is its low `t` bits).
    pub(crate) generation: u64,
    /// The next bucket the sweep clears of dead entries.
    pub(crate) sweep: u64,
    /// When the current generation started (time windows; 0 otherwise).
    pub(crate) gen_start: u64,
    /// The latest time seen (time windows; 0 otherwise).
    pub(crate) now: u64,
}

/// The fixed parameters of a window filter (the first fields of its byte format).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Fixed {
    /// `f`.
    pub(crate) fingerprint_bits: u32,
    /// `t`.
    pub(crate) tag_bits: u32,
    /// `L`.
    pub(crate) generations: u32,
    /// `g`: inserts a generation takes.
    pub(crate) per_generation: u64,
    /// `m`.
    pub(crate) buckets: u64,
    pub(crate) target_fpr: f64,
    /// Time units a generation spans; 0 for a window over inserts.
    pub(crate) span: u64,
}

/// The fixed parameters (through `Deref`) and the masks lookups use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shape {
    pub(crate) fixed: Fixed,
    masks: Masks,
}

impl core::ops::Deref for Shape {
    type Target = Fixed;

    fn deref(&self) -> &Fixed {
        &self.fixed
    }
}

/// Bit patterns over a bucket's lanes (one lane a slot), for the SWAR compares.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Masks {
    /// Bit 0 of each lane.
    low: u128,
    /// The top bit of each lane.
    top: u128,
    /// Every bit of the bucket.
    lanes: u128,
    /// The fingerprint bits of each lane.
    fingerprints: u128,
    /// The tag bits of each lane.
    tags: u128,
}

impl Shape {
    pub(crate) fn new(fixed: Fixed) -> Shape {
        let w = fixed.fingerprint_bits + fixed.tag_bits;
        let lane = |v: u128| (0..sizing::SLOTS).fold(0u128, |acc, j| acc | v << (j * w));
        let ones = |bits: u32| u128::MAX >> (128 - bits.clamp(1, 128));
        Shape {
            fixed,
            masks: Masks {
                low: lane(1),
                top: lane(1 << (w - 1)),
                lanes: ones(w * sizing::SLOTS),
                fingerprints: lane(ones(w) ^ ones(fixed.tag_bits)),
                tags: lane(ones(fixed.tag_bits)),
            },
        }
    }

    fn slot_bits(&self) -> u32 {
        self.fingerprint_bits + self.tag_bits
    }

    fn bucket_bits(&self) -> u64 {
        u64::from(sizing::SLOTS * self.slot_bits())
    }

    fn tag_mask(&self) -> u64 {
        (1 << self.tag_bits) - 1
    }

    /// Inserts every one of which is answered: `L * g`.
    /// (Saturating: decoded parameters are checked for consistency, not for size.)
    fn window(&self) -> u64 {
        u64::from(self.generations).saturating_mul(self.per_generation)
    }

    /// Inserts after which a key is dead: `(L + 1) * g`.
    fn forgotten_after(&self) -> u64 {
        (u64::from(self.generations) + 1).saturating_mul(self.per_generation)
    }
}

/// `x` scaled to `0..m` by its high bits (Lemire's fast range).
#[inline(always)]
fn fast_range(x: u64, m: u64) -> u64 {
    ((u128::from(x) * u128::from(m)) >> 64) as u64
}

/// The other bucket of fingerprint `fp` in bucket `b`: `(H(fp) - b) mod m`, so the map is
/// its own inverse.
#[inline(always)]
fn alternate(b: u64, fp: u64, m: u64) -> u64 {
    let h = fast_range(fp.wrapping_mul(0x9E37_79B9_7F4A_7C15), m);
    if h >= b {
        h - b
    } else {
        h + m - b
    }
}

/// The most moves an insert makes to find a free slot before stashing the entry it holds.
const MAX_KICKS: u32 = 500;

/// The most entries the stash holds (a filter sized by the builder stashes none: its load is
/// at most 90%, where cuckoo inserts do not fail); past it a new key is refused
/// ([`Error::Full`]), and the byte format refuses more.
pub(crate) const MAX_STASH: usize = 1 << 16;

/// A bucket's bits as the compares take them: `u64` when the bucket fits one (slots of up
/// to 16 bits), `u128` otherwise.
trait Lanes:
    Copy
    + core::ops::BitAnd<Output = Self>
    + core::ops::BitOr<Output = Self>
    + core::ops::BitXor<Output = Self>
    + core::ops::Not<Output = Self>
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Shr<u32, Output = Self>
    + core::ops::Shl<u32, Output = Self>
    + PartialEq
{
    const ZERO: Self;
    fn cut(x: u128) -> Self;
    fn trailing_zeros(self) -> u32;
    /// The bucket starting at bit `r` of word `q`.
    fn load(words: &[u64], q: usize, r: u32) -> Self;
}

/// Word `i` of `words`, 0 past the end (a table's padding makes every read in range).
#[inline(always)]
fn word(words: &[u64], i: usize) -> u64 {
    words.get(i).copied().unwrap_or(0)
}

impl Lanes for u64 {
    const ZERO: u64 = 0;
    #[inline(always)]
    fn cut(x: u128) -> u64 {
        x as u64
    }
    #[inline(always)]
    fn trailing_zeros(self) -> u32 {
        u64::trailing_zeros(self)
    }
    #[inline(always)]
    fn load(words: &[u64], q: usize, r: u32) -> u64 {
        let x = u128::from(word(words, q)) | u128::from(word(words, q + 1)) << 64;
        (x >> r) as u64
    }
}

impl Lanes for u128 {
    const ZERO: u128 = 0;
    #[inline(always)]
    fn cut(x: u128) -> u128 {
        x
    }
    #[inline(always)]
    fn trailing_zeros(self) -> u32 {
        u128::trailing_zeros(self)
    }
    #[inline(always)]
    fn load(words: &[u64], q: usize, r: u32) -> u128 {
        let x = u128::from(word(words, q)) | u128::from(word(words, q + 1)) << 64;
        let hi = u128::from(word(words, q + 2));
        if r == 0 {
            x
        } else {
            x >> r | hi << (128 - r)
        }
    }
}

/// A staged key of a batch: its buckets and fingerprint.
#[derive(Clone, Copy, Default)]
pub(crate) struct Staged {
    b1: u64,
    b2: u64,
    fp: u64,
    hash: u64,
}

impl<W: AsRef<[u64]>> Core<W> {
    /// The current generation's tag.
    fn tag(&self) -> u64 {
        self.generation & self.shape.tag_mask()
    }

    #[inline(always)]
    fn locate(&self, hash: u64) -> Staged {
        let s = &self.shape;
        let b1 = fast_range(hash, s.buckets);
        let fp = (((hash & 0xFFFF_FFFF) * ((1 << s.fingerprint_bits) - 1)) >> 32) + 1;
        Staged {
            b1,
            b2: alternate(b1, fp, s.buckets),
            fp,
            hash,
        }
    }

    #[inline(always)]
    fn bucket<B: Lanes>(&self, b: u64) -> B {
        let off = b * self.shape.bucket_bits();
        B::load(self.words.as_ref(), (off / 64) as usize, (off % 64) as u32)
    }

    /// Lanes of bucket bits `x` holding fingerprint pattern `fp`, marked at their top bit.
    #[inline(always)]
    fn matches<B: Lanes>(&self, x: B, fp: B) -> B {
        let m = &self.shape.masks;
        let (top, lanes) = (B::cut(m.top), B::cut(m.lanes));
        let v = (x ^ fp) & B::cut(m.fingerprints);
        let nonzero = (((v & !top & lanes) + (!top & lanes)) | v) & top;
        top ^ nonzero
    }

    /// Lanes of `x` alive with at most `live` generations of age, marked at their top bit.
    #[inline(always)]
    fn alive<B: Lanes>(&self, x: B, live: u64) -> B {
        let m = &self.shape.masks;
        let t = self.shape.tag_bits;
        let (low, tags) = (B::cut(m.low), B::cut(m.tags));
        let now = B::cut(u128::from(self.tag() | 1 << t)) * low;
        let age = (now - (x & tags)) & tags;
        let margin = B::cut(u128::from(self.shape.tag_mask() - live)) * low;
        let dead = ((age + margin) >> t) & low;
        (low ^ dead) << (self.shape.slot_bits() - 1)
    }

    /// Fingerprint `fp` in every lane, at the lanes' fingerprint bits.
    #[inline(always)]
    fn pattern<B: Lanes>(&self, fp: u64) -> B {
        B::cut(u128::from(fp << self.shape.tag_bits)) * B::cut(self.shape.masks.low)
    }

    /// Lanes of `x` holding an entry (not 0), marked at their top bit.
    #[inline(always)]
    fn occupied<B: Lanes>(&self, x: B) -> B {
        let m = &self.shape.masks;
        let (top, lanes) = (B::cut(m.top), B::cut(m.lanes));
        (((x & !top & lanes) + (!top & lanes)) | x) & top
    }

    /// Lanes of `x` free for an entry (empty, or dead), marked at their top bit.
    #[inline(always)]
    fn free_lanes<B: Lanes>(&self, x: B) -> B {
        let alive = self.alive(x, u64::from(self.shape.generations));
        B::cut(self.shape.masks.top) ^ (self.occupied(x) & alive)
    }

    /// The slot of the lowest lane marked in `z` (marks at lanes' top bits).
    #[inline(always)]
    fn lane<B: Lanes>(&self, z: B) -> u32 {
        z.trailing_zeros() / self.shape.slot_bits()
    }

    /// Whether the key of `s` has an entry alive within `live` generations (`live <= L`).
    #[inline(always)]
    fn holds_in<B: Lanes>(&self, s: &Staged, live: u64) -> bool {
        let pattern = self.pattern::<B>(s.fp);
        let (x1, x2) = (self.bucket::<B>(s.b1), self.bucket::<B>(s.b2));
        let (z1, z2) = (self.matches(x1, pattern), self.matches(x2, pattern));
        let hit = (z1 | z2) != B::ZERO
            && ((z1 & self.alive(x1, live)) | (z2 & self.alive(x2, live))) != B::ZERO;
        hit || (!self.stash.is_empty() && self.stash_holds(s, live).is_some())
    }

    #[inline]
    fn holds(&self, s: &Staged, live: u64) -> bool {
        if self.shape.bucket_bits() <= 64 {
            self.holds_in::<u64>(s, live)
        } else {
            self.holds_in::<u128>(s, live)
        }
    }

    /// The stash entry of the key of `s` alive within `live` generations: its index.
    fn stash_holds(&self, s: &Staged, live: u64) -> Option<usize> {
        let t = self.shape.tag_bits;
        self.stash.chunks_exact(2).position(|e| {
            (e[0] == s.b1 || e[0] == s.b2) && e[1] >> t == s.fp && self.age(e[1]) <= live
        })
    }

    /// Generations since the entry `slot` was last written (its tag's distance from now).
    fn age(&self, slot: u64) -> u64 {
        self.tag().wrapping_sub(slot) & self.shape.tag_mask()
    }

    /// Slot `j` of bucket `b`.
    fn slot(&self, b: u64, j: u32) -> u64 {
        let w = self.shape.slot_bits();
        let off = b * self.shape.bucket_bits() + u64::from(j * w);
        let words = self.words.as_ref();
        let (q, r) = ((off / 64) as usize, off % 64);
        let x = u128::from(word(words, q)) | u128::from(word(words, q + 1)) << 64;
        (x >> r) as u64 & ((1 << w) - 1)
    }

    /// Whether slot value `v` is free: empty, or dead.
    fn free(&self, v: u64) -> bool {
        v == 0 || self.age(v) > u64::from(self.shape.generations)
    }

    /// Generations alive at time `t`: `L`, less the shifts `t` would make; `None` when it
    /// would shift every generation out.
    fn live_at(&self, t: u64) -> Option<u64> {
        let l = u64::from(self.shape.generations);
        if self.shape.span == 0 || t <= self.now {
            return Some(l);
        }
        let shifts = (t - self.gen_start) / self.shape.span;
        l.checked_sub(shifts)
    }

    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        self.holds(&self.locate(hash), u64::from(self.shape.generations))
    }

    pub(crate) fn contains_hash_at(&self, hash: u64, t: u64) -> bool {
        self.live_at(t)
            .is_some_and(|live| self.holds(&self.locate(hash), live))
    }

    /// Inserts whose keys are all still answered: the current generation's and the `L`
    /// before it.
    pub(crate) fn len(&self) -> u64 {
        let mask = self.shape.tag_mask();
        (0..=u64::from(self.shape.generations))
            .filter_map(|age| {
                self.counts
                    .get((self.tag().wrapping_sub(age) & mask) as usize)
            })
            .fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// The rate's bound for the entries alive now (at most [`len`](Self::len) of them).
    pub(crate) fn estimated_fpr(&self) -> f64 {
        let slots = self.shape.buckets as f64 * f64::from(sizing::SLOTS);
        sizing::fpr_bound(self.shape.fingerprint_bits, self.len() as f64 / slots)
    }

    fn stage(&self, hash: u64) -> Staged {
        let s = self.locate(hash);
        let words = self.words.as_ref();
        let bits = self.shape.bucket_bits();
        for b in [s.b1, s.b2] {
            let off = b * bits;
            for at in [off / 64, (off + bits - 1) / 64] {
                if let Some(w) = words.get(at as usize) {
                    prefetch(w);
                }
            }
        }
        s
    }

    fn heap_bytes(&self) -> usize {
        (self.counts.len() + self.stash.len()) * 8
    }
}

impl Core<Vec<u64>> {
    fn set_slot(&mut self, b: u64, j: u32, v: u64) {
        let w = self.shape.slot_bits();
        let off = b * self.shape.bucket_bits() + u64::from(j * w);
        let (q, r) = ((off / 64) as usize, off % 64);
        let (Some(&lo), Some(&hi)) = (self.words.get(q), self.words.get(q + 1)) else {
            return;
        };
        let mask = ((1u128 << w) - 1) << r;
        let x = (u128::from(lo) | u128::from(hi) << 64) & !mask | u128::from(v) << r;
        self.words[q] = x as u64;
        self.words[q + 1] = (x >> 64) as u64;
    }

    /// A free slot of bucket `b`.
    fn free_slot(&self, b: u64) -> Option<u32> {
        fn find<B: Lanes>(core: &Core<Vec<u64>>, b: u64) -> Option<u32> {
            let z = core.free_lanes(core.bucket::<B>(b));
            (z != B::ZERO).then(|| core.lane(z))
        }
        if self.shape.bucket_bits() <= 64 {
            find::<u64>(self, b)
        } else {
            find::<u128>(self, b)
        }
    }

    /// The slots of bucket `b` holding a dead entry, as bits `0..SLOTS`.
    fn dead_lanes(&self, b: u64) -> u32 {
        fn find<B: Lanes>(core: &Core<Vec<u64>>, b: u64) -> u32 {
            let x = core.bucket::<B>(b);
            // Occupied and free: dead. Gather the lanes' marks into bits 0..SLOTS.
            let marks = core.occupied(x) & core.free_lanes(x);
            let w = core.shape.slot_bits();
            (0..sizing::SLOTS).fold(0, |acc, j| {
                acc | u32::from(marks >> (j * w + w - 1) & B::cut(1) != B::ZERO) << j
            })
        }
        if self.shape.bucket_bits() <= 64 {
            find::<u64>(self, b)
        } else {
            find::<u128>(self, b)
        }
    }

    /// The slot of the key of `s` alive now.
    fn alive_slot(&self, s: &Staged) -> Option<(u64, u32)> {
        fn find<B: Lanes>(core: &Core<Vec<u64>>, s: &Staged) -> Option<(u64, u32)> {
            let pattern = core.pattern::<B>(s.fp);
            let live = u64::from(core.shape.generations);
            [s.b1, s.b2].into_iter().find_map(|b| {
                let x = core.bucket::<B>(b);
                let z = core.matches(x, pattern) & core.alive(x, live);
                (z != B::ZERO).then(|| (b, core.lane(z)))
            })
        }
        if self.shape.bucket_bits() <= 64 {
            find::<u64>(self, s)
        } else {
            find::<u128>(self, s)
        }
    }

    /// Puts entry `v` (whose buckets are `b1` and `b2`) in a free slot of either, moving
    /// other entries to their other bucket to make one (cuckoo hashing; the moves are
    /// drawn from `seed`), or in the stash after [`MAX_KICKS`] moves.
    fn place(&mut self, b1: u64, b2: u64, v: u64, seed: u64) {
        for b in [b1, b2] {
            if let Some(j) = self.free_slot(b) {
                self.set_slot(b, j, v);
                return;
            }
        }
        let t = self.shape.tag_bits;
        let (mut b, mut v, mut r) = (if seed >> 63 == 0 { b1 } else { b2 }, v, seed);
        for _ in 0..MAX_KICKS {
            r = r.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let j = ((r ^ r >> 29).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 62) as u32;
            let out = self.slot(b, j);
            self.set_slot(b, j, v);
            v = out;
            b = alternate(b, v >> t, self.shape.buckets);
            if let Some(j) = self.free_slot(b) {
                self.set_slot(b, j, v);
                return;
            }
        }
        self.stash.extend([b, v]);
    }

    /// Starts the next generation: its count from 0, and a share of the buckets cleared of
    /// dead entries, so every dead entry is cleared before its tag comes round again.
    fn shift(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        let tag = self.tag() as usize;
        if let Some(c) = self.counts.get_mut(tag) {
            *c = 0;
        }
        let m = self.shape.buckets;
        let spare = self.shape.tag_mask() - u64::from(self.shape.generations);
        let chunk = m.div_ceil(spare.max(1));
        for _ in 0..chunk.min(m) {
            let b = self.sweep;
            let mut dead = self.dead_lanes(b);
            while dead != 0 {
                self.set_slot(b, dead.trailing_zeros(), 0);
                dead &= dead - 1;
            }
            self.sweep = if b + 1 >= m { 0 } else { b + 1 };
        }
        if !self.stash.is_empty() {
            // Dead entries leave; the rest try the table again.
            let stash = core::mem::take(&mut self.stash);
            for e in stash.chunks_exact(2) {
                if !self.free(e[1]) {
                    let b2 = alternate(e[0], e[1] >> self.shape.tag_bits, m);
                    self.place(e[0], b2, e[1], e[0] ^ e[1]);
                }
            }
        }
    }

    /// Moves the clock to `t` (never backwards), shifting a generation for each span
    /// passed.
    fn advance(&mut self, t: u64) {
        if self.shape.span == 0 || t <= self.now {
            return;
        }
        self.now = t;
        let elapsed = t - self.gen_start;
        let shifts = elapsed / self.shape.span;
        if shifts == 0 {
            return;
        }
        self.gen_start = t - elapsed % self.shape.span;
        if shifts > u64::from(self.shape.generations) {
            // Every entry is dead: forget them at once.
            self.generation = self.generation.wrapping_add(shifts);
            self.words.fill(0);
            self.counts.fill(0);
            self.stash.clear();
        } else {
            for _ in 0..shifts {
                self.shift();
            }
        }
    }

    /// Makes room in the current generation: a window over inserts shifts when it is
    /// full, a window over time refuses.
    fn room(&mut self) -> Result<(), Error> {
        if self.counts[self.tag() as usize] < self.shape.per_generation {
            return Ok(());
        }
        if self.shape.span == 0 {
            self.shift();
            Ok(())
        } else {
            Err(Error::WindowFull {
                limit: self.shape.per_generation,
                span: self.shape.span,
            })
        }
    }

    fn insert_staged(&mut self, s: Staged) -> Result<bool, Error> {
        self.room()?;
        let tag = self.tag();
        let v = s.fp << self.shape.tag_bits | tag;
        if let Some((b, j)) = self.alive_slot(&s) {
            self.set_slot(b, j, v);
        } else if let Some(i) = self.stash_holds(&s, u64::from(self.shape.generations)) {
            self.stash[2 * i + 1] = v;
        } else if self.stash.len() >= 2 * MAX_STASH {
            // Only a decoded table far fuller than its sizing gets here: refuse rather
            // than grow past what the format takes.
            return Err(Error::Full {
                items: self.len(),
                slots: self.shape.buckets.saturating_mul(u64::from(sizing::SLOTS)),
            });
        } else {
            self.counts[tag as usize] += 1;
            self.place(s.b1, s.b2, v, s.hash);
            return Ok(true);
        }
        self.counts[tag as usize] += 1;
        Ok(false)
    }

    fn clear(&mut self) {
        self.words.fill(0);
        self.counts.fill(0);
        self.stash.clear();
        self.generation = 0;
        self.sweep = 0;
        self.gen_start = 0;
        self.now = 0;
    }
}

/// The methods that read (the filter's and its view's).
macro_rules! read_side {
    ([$($lt:lifetime)?] $ty:ident) => {
        impl<$($lt,)? K: ?Sized, S> $ty<$($lt,)? K, S> {
            /// The hasher keys are hashed with.
            pub fn hasher(&self) -> &S {
                &self.hasher
            }

            /// Inserts whose keys are all still answered: those of the current generation
            /// and the `l` before it (between the window and one generation more; repeats
            /// count each time).
            pub fn len(&self) -> u64 {
                self.core.len()
            }

            /// Whether no insert of the last `L + 1` generations is counted (in a filter this
            /// crate wrote, every key then answers as a key never inserted).
            pub fn is_empty(&self) -> bool {
                self.core.len() == 0
            }

            /// Inserts every one of which is answered: `L * g`, at least the window asked
            /// for (for a window over time: what its `L` generations take, at most `g`
            /// each).
            pub fn window(&self) -> u64 {
                self.core.shape.window()
            }

            /// Inserts after which a key's entry is dead (`(L + 1) * g`): an older key
            /// answers "present" only as often as one never inserted. For a window over
            /// time, the same in spans: [`time_forgotten_after`](Self::time_forgotten_after).
            pub fn forgotten_after(&self) -> u64 {
                self.core.shape.forgotten_after()
            }

            /// For a window over time: the time units after which a key's entry is dead,
            /// `L + 1` generations of `span / L`; `None` for a window over inserts.
            pub fn time_forgotten_after(&self) -> Option<u64> {
                let s = &self.core.shape;
                (s.span != 0).then(|| s.span.saturating_mul(u64::from(s.generations) + 1))
            }

            /// For a window over time: the time units each generation spans (the window
            /// is `L` of them); `None` for a window over inserts.
            pub fn generation_span(&self) -> Option<u64> {
                let s = self.core.shape.span;
                (s != 0).then_some(s)
            }

            /// The latest time an insert or [`advance_to`](WindowFilter::advance_to) moved
            /// the clock to (0 for a window over inserts).
            pub fn now(&self) -> u64 {
                self.core.now
            }

            /// `L`: generations a key is kept alive for after its own.
            pub fn generations(&self) -> u32 {
                self.core.shape.generations
            }

            /// Inserts a generation takes (`g`).
            pub fn per_generation(&self) -> u64 {
                self.core.shape.per_generation
            }

            /// `f`: bits of a key's fingerprint.
            pub fn fingerprint_bits(&self) -> u32 {
                self.core.shape.fingerprint_bits
            }

            /// `t`: bits of an entry's generation tag.
            pub fn tag_bits(&self) -> u32 {
                self.core.shape.tag_bits
            }

            /// Buckets of the table (each of four slots).
            pub fn num_buckets(&self) -> u64 {
                self.core.shape.buckets
            }

            /// The rate's bound for what the filter holds now (`bloomkit_core::sizing::window`'s
            /// union bound at the load of the inserts still alive).
            pub fn estimated_fpr(&self) -> f64 {
                self.core.estimated_fpr()
            }

            /// Whether the key of `hash` may have been inserted within the window (at the
            /// latest time seen).
            #[inline]
            pub fn contains_hash(&self, hash: u64) -> bool {
                self.core.contains_hash(hash)
            }

            /// Whether the key of `hash` may have been inserted within the window as it will
            /// be at time `t` (generations that `t` would shift out are not read; nothing
            /// changes). A time at or before the latest one seen answers as
            /// [`contains_hash`](Self::contains_hash). A window over inserts ignores `t`.
            #[inline]
            pub fn contains_hash_at(&self, hash: u64, t: u64) -> bool {
                self.core.contains_hash_at(hash, t)
            }
        }

        impl<$($lt,)? K: ::core::hash::Hash + ?Sized, S: ::core::hash::BuildHasher> $ty<$($lt,)? K, S> {
            /// Whether `key` may have been inserted within the window: never `false` for a
            /// key inserted within it.
            #[inline]
            pub fn contains(&self, key: &K) -> bool {
                self.core.contains_hash(self.hasher.hash_one(key))
            }

            /// Whether `key` may have been inserted within the window as it will be at
            /// time `t`; see [`contains_hash_at`](Self::contains_hash_at).
            #[inline]
            pub fn contains_at(&self, key: &K, t: u64) -> bool {
                self.core.contains_hash_at(self.hasher.hash_one(key), t)
            }

            /// Whether `key` may have been inserted within the window as it is now on the
            /// system clock (microseconds since the Unix epoch: for a filter built with
            /// a window in microseconds).
            pub fn contains_now(&self, key: &K) -> bool {
                self.contains_at(key, $crate::now_micros())
            }

            /// Appends to `out` whether each key may have been inserted within the window,
            /// hashing and prefetching a group of keys before reading their blocks.
            pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
            where
                I: IntoIterator,
                I::Item: ::std::borrow::Borrow<K>,
            {
                let live = u64::from(self.core.shape.generations);
                ::bloomkit_core::batch::pipeline(
                    out,
                    keys,
                    |_, key| self.core.stage(self.hasher.hash_one(::std::borrow::Borrow::borrow(&key))),
                    |out, s| out.push(self.core.holds(&s, live)),
                );
            }

            /// Heap memory: the table (the view borrows it), the generations' counts and the
            /// stash.
            pub fn heap_bytes(&self) -> usize {
                self.words_bytes() + self.core.heap_bytes()
            }
        }

        impl<$($lt,)? K: ?Sized, S: ::core::fmt::Debug> ::core::fmt::Debug for $ty<$($lt,)? K, S> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                let s = &self.core.shape;
                f.debug_struct(stringify!($ty))
                    .field("len", &self.core.len())
                    .field("generations", &s.generations)
                    .field("per_generation", &s.per_generation)
                    .field("fingerprint_bits", &s.fingerprint_bits)
                    .field("tag_bits", &s.tag_bits)
                    .field("buckets", &s.buckets)
                    .field("span", &s.span)
                    .field("now", &self.core.now)
                    .field("hasher", &self.hasher)
                    .finish()
            }
        }

        bloomkit_core::impl_lookup!([$($lt,)? S: ::core::hash::BuildHasher] $ty<$($lt,)? K, S>, key = K,
            exact_len, target_fpr = |f| f.core.shape.target_fpr);
    };
}
#[cfg(feature = "serde")]
pub(crate) use read_side;

read_side!([] WindowFilter);

/// Microseconds since the Unix epoch on the system clock (0 before it).
fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

// `new(window, fpr)` (the last `window` inserts, forgotten by 1.1 windows) and
// `builder(items, fpr)`, which takes `over_time`, `slack`, a seed or hasher and `max_bytes`.
bloomkit_core::impl_builder_entry!(WindowFilter, "bloomkit_window", hasher);

impl<K: ?Sized, S: BuildHasher> FromSettings for WindowFilter<K, S> {
    type Hasher = S;

    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        let slack = settings.slack.unwrap_or(sizing::DEFAULT_SLACK);
        let layout = sizing::layout(settings.items, settings.fpr, slack)?;
        let span = match settings.span {
            None => 0,
            Some(0) => return Err(Error::ZeroSpan),
            Some(window) => window.div_ceil(u64::from(layout.generations)),
        };
        settings.check_bytes(layout.bytes())?;
        let shape = Shape::new(Fixed {
            fingerprint_bits: layout.fingerprint_bits,
            tag_bits: layout.tag_bits,
            generations: layout.generations,
            per_generation: layout.per_generation,
            buckets: layout.buckets,
            target_fpr: settings.fpr,
            span,
        });
        Ok(WindowFilter {
            core: Core {
                words: filled_vec(layout.words(), || 0)?,
                counts: filled_vec(1 << layout.tag_bits, || 0)?,
                stash: Vec::new(),
                shape,
                generation: 0,
                sweep: 0,
                gen_start: 0,
                now: 0,
            },
            hasher,
            key: PhantomData,
        })
    }
}

impl<K: ?Sized, S: BuildHasher> Windowed for WindowFilter<K, S> {}

impl<K: ?Sized, S> WindowFilter<K, S> {
    fn words_bytes(&self) -> usize {
        self.core.words.len() * 8
    }

    /// Inserts the key of `hash` at the latest time seen. Returns whether it was certainly
    /// not within the window before (a repeat is written again: it is now as young as the
    /// newest key).
    ///
    /// # Errors
    /// [`Error::WindowFull`] for a window over time whose current generation is full;
    /// nothing is changed. [`Error::Full`] for a new key when the stash is full (only a
    /// decoded table far fuller than its sizing gets there); a window over inserts built by
    /// this crate never refuses.
    pub fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        self.core.insert_staged(self.core.locate(hash))
    }

    /// Inserts the key of `hash` at time `t`: the clock moves to `t` first (never back: a
    /// time before the latest one seen counts as the latest, so the key lives longer, never
    /// shorter). A window over inserts ignores `t`.
    ///
    /// # Errors
    /// As [`try_insert_hash`](Self::try_insert_hash); the clock has then still moved to `t`
    /// (the generations that passed are forgotten), but the key is not inserted.
    pub fn try_insert_hash_at(&mut self, hash: u64, t: u64) -> Result<bool, Error> {
        self.core.advance(t);
        self.try_insert_hash(hash)
    }

    /// Moves the clock to `t` (never back), forgetting the generations that passed.
    pub fn advance_to(&mut self, t: u64) {
        self.core.advance(t);
    }

    /// Forgets every key (and, for a window over time, the clock).
    pub fn clear(&mut self) {
        self.core.clear();
    }
}

impl<K: Hash + ?Sized, S: BuildHasher> WindowFilter<K, S> {
    /// Inserts `key` (at the latest time seen, for a window over time). Returns whether it
    /// was certainly not within the window before; a repeat is written again, so the
    /// window counts from its latest insert ("seen in the last N").
    ///
    /// # Errors
    /// As [`try_insert_hash`](Self::try_insert_hash): [`Error::WindowFull`] for a window over
    /// time whose current generation is full.
    pub fn try_insert(&mut self, key: &K) -> Result<bool, Error> {
        self.try_insert_hash(self.hasher.hash_one(key))
    }

    /// Inserts `key` at time `t` (the caller's unit, the one the window was built in).
    ///
    /// # Errors
    /// As [`try_insert`](Self::try_insert).
    pub fn try_insert_at(&mut self, key: &K, t: u64) -> Result<bool, Error> {
        self.try_insert_hash_at(self.hasher.hash_one(key), t)
    }

    /// Inserts `key` now on the system clock (microseconds since the Unix epoch: for a
    /// filter built with a window in microseconds).
    ///
    /// # Errors
    /// As [`try_insert`](Self::try_insert).
    pub fn try_insert_now(&mut self, key: &K) -> Result<bool, Error> {
        self.try_insert_at(key, now_micros())
    }

    /// Inserts `keys` in order, hashing and prefetching a group ahead; returns how many
    /// were certainly not within the window before.
    ///
    /// # Errors
    /// The first error of [`try_insert`](Self::try_insert) ([`Error::WindowFull`] at the
    /// first key a window over time cannot take): the keys before it are in, it and the
    /// rest are not.
    pub fn try_insert_batch<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        let hasher = &self.hasher;
        batch::try_insert_counting(
            &mut self.core,
            keys,
            |core, key| core.stage(hasher.hash_one(key.borrow())),
            Core::insert_staged,
        )
    }
}

bloomkit_core::impl_fallible_filter!([S: BuildHasher] WindowFilter<K, S>, key = K);

#[cfg(test)]
mod tests {
    use super::*;

    /// A table far too small for its window (16 slots for up to 40 alive entries): kicks
    /// fail and the stash takes the rest, and still every key of the window answers, and
    /// the stash drains as its entries die.
    #[test]
    fn an_overfull_table_stashes_and_never_drops_a_key() {
        let mut core = Core {
            words: vec![0; sizing::words_for(4, 12) as usize],
            counts: vec![0; 8],
            stash: Vec::new(),
            shape: Shape::new(Fixed {
                fingerprint_bits: 9,
                tag_bits: 3,
                generations: 3,
                per_generation: 10,
                buckets: 4,
                target_fpr: 0.5,
                span: 0,
            }),
            generation: 0,
            sweep: 0,
            gen_start: 0,
            now: 0,
        };
        let mut recent: Vec<u64> = Vec::new();
        let mut most = 0;
        for i in 0..2_000u64 {
            let hash = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i >> 7;
            core.insert_staged(core.locate(hash)).unwrap();
            recent.push(hash);
            let window = (core.shape.window() as usize).min(recent.len());
            for &h in &recent[recent.len() - window..] {
                assert!(core.contains_hash(h), "insert {i}: {h:#x} lost");
            }
            most = most.max(core.stash.len() / 2);
        }
        assert!(most > 5, "the stash was never used: {most}");
        // Keys stop coming: after L + 1 empty generations nothing is alive.
        for _ in 0..=core.shape.generations {
            core.shift();
        }
        assert!(core.stash.is_empty(), "{:?}", core.stash);
        assert!(recent.iter().all(|&h| !core.contains_hash(h)));
    }
}
