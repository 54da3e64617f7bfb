//! A filter that forgets: "was this key inserted in the last N inserts?" or "in the last
//! T?", in memory fixed before the first insert.
//!
//! [`WindowFilter`] is an age-partitioned Bloom filter (Shtul, Baquero & Almeida, "Age-
//! Partitioned Bloom Filters", 2020): `k + l` slices in a ring; a key is written into the
//! `k` newest (one bit each), and every generation (`g` inserts, or a span of time) the
//! oldest slice is cleared and becomes the newest. A key is answered while some `k` slices
//! in a row hold it. Its promises:
//!
//! - **no false negative within the window**: every key of the last
//!   [`window`](WindowFilter::window) inserts (or the last `T` time units of a window over
//!   time) answers "present", whatever came before or after it;
//! - **the false-positive rate at most the target at every moment** of an endless stream
//!   (sized for the worst moment: the last insert before a shift);
//! - **forgotten within a stated slack**: a key older than
//!   [`forgotten_after`](WindowFilter::forgotten_after) inserts (1.1 windows by default, for
//!   windows of more than about 100 inserts: a generation holds at least one) is in no slice,
//!   so it answers "present" only as often as a key never inserted;
//! - memory fixed by the window and the rate ([`WindowFilter::heap_bytes`] before the first
//!   insert; the builder's `max_bytes` is honoured).
//!
//! One key's bits sit in one block (a word per slice, side by side), so a lookup reads one
//! stretch of memory. Sizing, its model and its source: `bloomkit_core::sizing::window`.
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
//! The builder's other settings: a slack (keys live up to `1 + slack` windows; fewer slices,
//! faster lookups), a seed or hasher, a memory limit:
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

/// What a window filter and its view both read: the blocks, the ring and the clock.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Core<W> {
    /// `blocks * slices` words: block `b`'s word for physical slice `p` at `b * slices + p`.
    pub(crate) words: W,
    /// Inserts of each physical slice's own generation (the one during which it was the
    /// newest), `slices` of them.
    pub(crate) counts: Vec<u64>,
    pub(crate) shape: Shape,
    /// The physical slice at logical position 0 (the newest).
    pub(crate) head: u32,
    /// When the current generation started (time windows; 0 otherwise).
    pub(crate) gen_start: u64,
    /// The latest time seen (time windows; 0 otherwise).
    pub(crate) now: u64,
}

/// The fixed parameters of a window filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shape {
    /// `k`.
    pub(crate) hashes: u32,
    /// `l`.
    pub(crate) generations: u32,
    /// `g`: inserts a generation takes.
    pub(crate) per_generation: u64,
    pub(crate) blocks: u64,
    pub(crate) target_fpr: f64,
    /// Time units a generation spans; 0 for a window over inserts.
    pub(crate) span: u64,
}

impl Shape {
    pub(crate) const fn slices(&self) -> usize {
        (self.hashes + self.generations) as usize
    }

    /// Inserts every one of which is answered: `l * g`.
    /// (Saturating: decoded parameters are checked for consistency, not for size.)
    const fn window(&self) -> u64 {
        (self.generations as u64).saturating_mul(self.per_generation)
    }

    /// Inserts after which a key is in no slice: `(l + k) * g`.
    const fn forgotten_after(&self) -> u64 {
        (self.slices() as u64).saturating_mul(self.per_generation)
    }
}

/// The block of a hash: its high bits scaled to the blocks (Lemire's fast range).
#[inline]
fn block_of(hash: u64, blocks: u64) -> usize {
    ((u128::from(hash) * u128::from(blocks)) >> 64) as usize
}

/// The bit of a key (its `hash`) in physical slice `p`: a different pseudo-random position
/// in each slice, `((hash ^ (p + 1) * G) * M) >> 58`. The salt makes the multiplier see
/// other bits in every slice, so two keys that share one slice's position share another's
/// only by chance (a linear `hash + p * step` would make keys with nearby hashes and steps
/// collide in every slice at once).
#[inline(always)]
fn bit_of(hash: u64, p: usize) -> u32 {
    let salted = hash ^ (p as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (salted.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 58) as u32
}

/// Cache lines of a block a batched call asks for ahead, from the newest slice on.
const LINES_AHEAD: usize = 4;

/// A staged key of a batch: its hash and its block's first word.
#[derive(Clone, Copy, Default)]
struct Staged {
    hash: u64,
    base: usize,
}

impl<W: AsRef<[u64]>> Core<W> {
    /// Whether the key of `hash` is held by `k` slices in a row among the `live` newest
    /// logical positions.
    #[inline]
    fn has_run(&self, hash: u64, base: usize, live: usize) -> bool {
        let n = self.shape.slices();
        let Some(block) = self.words.as_ref().get(base..base + n) else {
            return true;
        };
        self.has_run_scan(hash, block, live)
    }

    /// Slice by slice, newest first: each position read at most once (a window that fails
    /// at `j` moves on to start at `j + 1`, keeping the positions it already found set), so
    /// an absent key costs about `2 (k + l) / k` reads.
    fn has_run_scan(&self, hash: u64, block: &[u64], live: usize) -> bool {
        let n = block.len();
        let k = self.shape.hashes as usize;
        let head = self.head as usize;
        let set = |pos: usize| {
            let mut p = head + pos;
            if p >= n {
                p -= n;
            }
            block.get(p).is_none_or(|w| w >> bit_of(hash, p) & 1 != 0)
        };
        // Positions lo..known are known to be set.
        let (mut lo, mut known) = (0usize, 0usize);
        while lo + k <= live {
            let end = lo + k - 1;
            let mut j = end + 1;
            let mut failed = None;
            while j > known {
                j -= 1;
                if !set(j) {
                    failed = Some(j);
                    break;
                }
            }
            match failed {
                None => return true,
                Some(at) => {
                    known = end + 1;
                    lo = at + 1;
                }
            }
        }
        false
    }

    fn base_of(&self, hash: u64) -> usize {
        block_of(hash, self.shape.blocks) * self.shape.slices()
    }

    /// Logical positions alive at time `t` (all of them for a window over inserts, or at
    /// or before the latest time seen).
    fn live_at(&self, t: u64) -> usize {
        let n = self.shape.slices();
        if self.shape.span == 0 || t <= self.now {
            return n;
        }
        let shifts = (t - self.gen_start) / self.shape.span;
        n - shifts.min(n as u64) as usize
    }

    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        self.has_run(hash, self.base_of(hash), self.shape.slices())
    }

    pub(crate) fn contains_hash_at(&self, hash: u64, t: u64) -> bool {
        self.has_run(hash, self.base_of(hash), self.live_at(t))
    }

    /// The physical slice at logical position `pos`.
    fn physical(&self, pos: usize) -> usize {
        (self.head as usize + pos) % self.shape.slices()
    }

    /// Inserts whose keys are all still answered: the current generation's and the `l`
    /// before it.
    pub(crate) fn len(&self) -> u64 {
        (0..=self.shape.generations as usize)
            .map(|pos| self.counts[self.physical(pos)])
            .fold(0u64, u64::saturating_add)
    }

    /// The model's rate for the generations held now ([`sizing::fpr_model_sampled`] over
    /// the counts, 128 draws: a cheaper, noisier estimate than the 1,024 the sizing takes).
    pub(crate) fn estimated_fpr(&self) -> f64 {
        let blocks = self.shape.blocks as f64;
        let loads: Vec<f64> = (0..self.shape.slices())
            .map(|pos| self.counts[self.physical(pos)] as f64 / blocks)
            .collect();
        sizing::fpr_model_sampled(self.shape.hashes, &loads, 128)
    }

    fn stage(&self, hash: u64) -> Staged {
        let base = self.base_of(hash);
        let words = self.words.as_ref();
        let n = self.shape.slices();
        let head = self.head as usize;
        // The scan reads from the newest slice on: the first lines from there.
        for line in 0..LINES_AHEAD {
            let at = base + (head + 8 * line) % n;
            if let Some(w) = words.get(at) {
                prefetch(w);
            }
        }
        Staged { hash, base }
    }

    fn heap_bytes(&self) -> usize {
        self.counts.len() * 8
    }
}

impl Core<Vec<u64>> {
    /// Clears the oldest slice and makes it the newest.
    fn shift(&mut self) {
        let n = self.shape.slices();
        let head = if self.head == 0 {
            n - 1
        } else {
            self.head as usize - 1
        };
        for w in self.words.iter_mut().skip(head).step_by(n) {
            *w = 0;
        }
        self.counts[head] = 0;
        self.head = head as u32;
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
        if shifts >= self.shape.slices() as u64 {
            if self.counts.iter().any(|&c| c != 0) {
                self.words.fill(0);
                self.counts.fill(0);
            }
        } else {
            for _ in 0..shifts {
                self.shift();
            }
        }
    }

    /// Makes room in the current generation: a window over inserts shifts when it is
    /// full, a window over time refuses.
    fn room(&mut self) -> Result<(), Error> {
        if self.counts[self.head as usize] < self.shape.per_generation {
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
        let n = self.shape.slices();
        let present = self.has_run(s.hash, s.base, n);
        let head = self.head as usize;
        let block = &mut self.words[s.base..s.base + n];
        for pos in 0..self.shape.hashes as usize {
            let mut p = head + pos;
            if p >= n {
                p -= n;
            }
            block[p] |= 1 << bit_of(s.hash, p);
        }
        self.counts[head] += 1;
        Ok(!present)
    }

    fn clear(&mut self) {
        self.words.fill(0);
        self.counts.fill(0);
        self.head = 0;
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

            /// Whether no insert is held.
            pub fn is_empty(&self) -> bool {
                self.core.counts.iter().all(|&c| c == 0)
            }

            /// Inserts every one of which is answered: `l * g`, at least the window asked
            /// for (for a window over time: what its `l` generations take, at most `g`
            /// each).
            pub fn window(&self) -> u64 {
                self.core.shape.window()
            }

            /// Inserts after which a key is in no slice (`(l + k) * g`): an older key
            /// answers "present" only as often as one never inserted. For a window over
            /// time, the same in spans: [`time_forgotten_after`](Self::time_forgotten_after).
            pub fn forgotten_after(&self) -> u64 {
                self.core.shape.forgotten_after()
            }

            /// For a window over time: the time units after which a key is in no slice,
            /// `(l + k)` generations of `span / l`; `None` for a window over inserts.
            pub fn time_forgotten_after(&self) -> Option<u64> {
                let s = &self.core.shape;
                (s.span != 0).then(|| s.span.saturating_mul(s.slices() as u64))
            }

            /// For a window over time: the time units each generation spans (the window
            /// is `l` of them); `None` for a window over inserts.
            pub fn generation_span(&self) -> Option<u64> {
                let s = self.core.shape.span;
                (s != 0).then_some(s)
            }

            /// The latest time an insert or [`advance_to`](WindowFilter::advance_to) moved
            /// the clock to (0 for a window over inserts).
            pub fn now(&self) -> u64 {
                self.core.now
            }

            /// `k`: slices a key is written to.
            pub fn num_hashes(&self) -> u32 {
                self.core.shape.hashes
            }

            /// `l`: generations a key is kept whole after its own.
            pub fn generations(&self) -> u32 {
                self.core.shape.generations
            }

            /// Blocks (each a word per slice).
            pub fn num_blocks(&self) -> u64 {
                self.core.shape.blocks
            }

            /// The model's rate for what the filter holds now (the blocked model of
            /// `bloomkit_core::sizing::window` over the generations' counts).
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
                let live = self.core.shape.slices();
                ::bloomkit_core::batch::pipeline(
                    out,
                    keys,
                    |_, key| self.core.stage(self.hasher.hash_one(::std::borrow::Borrow::borrow(&key))),
                    |out, s| out.push(self.core.has_run(s.hash, s.base, live)),
                );
            }

            /// Heap memory: the blocks (the view borrows them) and the generations' counts.
            pub fn heap_bytes(&self) -> usize {
                self.words_bytes() + self.core.heap_bytes()
            }
        }

        impl<$($lt,)? K: ?Sized, S: ::core::fmt::Debug> ::core::fmt::Debug for $ty<$($lt,)? K, S> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                let s = &self.core.shape;
                f.debug_struct(stringify!($ty))
                    .field("len", &self.core.len())
                    .field("hashes", &s.hashes)
                    .field("generations", &s.generations)
                    .field("per_generation", &s.per_generation)
                    .field("blocks", &s.blocks)
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
        let slices = u64::from(layout.slices());
        settings.check_bytes(layout.bytes() + slices * 8)?;
        let shape = Shape {
            hashes: layout.hashes,
            generations: layout.generations,
            per_generation: layout.per_generation,
            blocks: layout.blocks,
            target_fpr: settings.fpr,
            span,
        };
        Ok(WindowFilter {
            core: Core {
                words: filled_vec(layout.words(), || 0)?,
                counts: filled_vec(slices, || 0)?,
                shape,
                head: 0,
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
    /// nothing is changed. A window over inserts never refuses.
    pub fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        let base = self.core.base_of(hash);
        self.core.insert_staged(Staged { hash, base })
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
    /// [`Error::WindowFull`] for a window over time whose current generation is full.
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
    /// [`Error::WindowFull`] at the first key a window over time cannot take: the keys
    /// before it are in, it and the rest are not.
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
