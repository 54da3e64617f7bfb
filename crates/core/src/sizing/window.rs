//! Sizing a sliding-window filter: a cuckoo table of fingerprints, each tagged with the
//! generation that last inserted its key.
//!
//! # The structure
//!
//! A key's 64-bit hash gives a *fingerprint* of `f` bits (never 0) and two candidate
//! *buckets* of [`SLOTS`] slots each (partial-key cuckoo hashing: Fan, Andersen, Kaminsky
//! & Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014; the second
//! bucket is `(H(fp) - b1) mod m`, an involution, so a slot's entry can move between its
//! two buckets without its key). A slot holds the fingerprint and a *tag* of `t` bits: the
//! generation number, modulo `2^t`, of the latest insert of its key.
//!
//! Inserts are counted in *generations* of `g` (a window over time: a generation per span,
//! at most `g` inserts in it). An entry is *alive* while its tag is at most `L` generations
//! old; a dead slot is free. So a key inserted within the last `L * g` inserts is always
//! answered (no false negative: an insert of a key already held refreshes the tag of its
//! entry, and entries only move, never drop), and a key is dead `(L + 1) * g` inserts after
//! its last insert at the latest: older keys answer "present" only as often as keys never
//! inserted. With a *slack* `s`, `L = ceil(1 / s)`: keys are forgotten by `(1 + s)` windows.
//!
//! Tags wrap: `t` is the least leaving `2^t - L - 1` spare values, at least one and at least
//! `(L + 1) / 4` ([`tag_bits_for`]), and every generation shift clears the dead entries of
//! `ceil(m / (2^t - L - 1))` buckets in turn, so a dead entry is cleared before its tag comes
//! round again, at a cost of about a bucket per insert.
//!
//! # The rate
//!
//! An absent key is a false positive when an alive entry of one of its `2 * SLOTS` slots
//! holds its fingerprint. At the worst moment (`L + 1` full generations of distinct keys,
//! `(L + 1) g` alive entries in `4 m` slots, a load `a`), by the union bound the rate is at
//! most `2 * SLOTS * a / (2^f - 1)` (the cuckoo filter paper's section 5, with fingerprint
//! 0 kept for an empty slot). [`layout`] takes the `f` and the load (at most [`MAX_LOAD`],
//! where partial-key cuckoo inserts succeed; the paper measures 95% for buckets of four)
//! that meet the rate with the fewest bits. At 1% and the default slack: `f = 10`, `t = 4`,
//! load 0.9: 17.1 bits per window item and a rate of 0.70% at the worst moment (two
//! rotating Bloom filters giving the same promise take 22.0 classic or 23.0 blocked, and
//! keep keys up to `2 N`).

use crate::{check_fpr, Error};

/// Slots in a bucket.
pub const SLOTS: u32 = 4;
/// The largest fraction of the slots alive at the worst moment (the sizing's load).
pub const MAX_LOAD: f64 = 0.9;
/// The most bits a slot takes (fingerprint and tag): a bucket fits in 128 bits.
pub const MAX_SLOT_BITS: u32 = 32;
/// The most generations a key is kept alive for after its own (`L`).
pub const MAX_GENERATIONS: u32 = 4096;
/// The default slack: a key is forgotten by 1.1 windows.
pub const DEFAULT_SLACK: f64 = 0.1;
/// The most words a filter may have (2^40 bytes).
pub const MAX_WORDS: u64 = 1 << 37;

/// A window filter's shape; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Layout {
    /// `f`: fingerprint bits.
    pub fingerprint_bits: u32,
    /// `t`: tag bits (the generation modulo `2^t`).
    pub tag_bits: u32,
    /// `L`: generations a key is kept alive for after its own.
    pub generations: u32,
    /// `g`: inserts a generation holds.
    pub per_generation: u64,
    /// `m`: buckets of [`SLOTS`] slots.
    pub buckets: u64,
    /// The rate's bound at the worst moment.
    pub fpr: f64,
}

impl Layout {
    /// Bits of a slot: `f + t`.
    pub const fn slot_bits(&self) -> u32 {
        self.fingerprint_bits + self.tag_bits
    }

    /// Words of the table: the buckets' bits, packed, and two words that let a bucket be
    /// read with whole-word loads at the end.
    pub const fn words(&self) -> u64 {
        words_for(self.buckets, self.slot_bits())
    }

    /// Bytes of the table and of the generations' counts.
    pub const fn bytes(&self) -> u64 {
        (self.words() + (1u64 << self.tag_bits)) * 8
    }

    /// Inserts every one of which is answered: `L * g` (at least the window asked for).
    pub const fn window(&self) -> u64 {
        self.generations as u64 * self.per_generation
    }

    /// Inserts after which a key is dead: `(L + 1) * g`; older keys answer "present" only
    /// as often as keys never inserted.
    pub const fn forgotten_after(&self) -> u64 {
        (self.generations as u64 + 1) * self.per_generation
    }
}

/// Words of a table of `buckets` buckets of `SLOTS` slots of `slot_bits` bits, with the
/// two words of padding every bucket read may touch.
pub const fn words_for(buckets: u64, slot_bits: u32) -> u64 {
    (buckets * (SLOTS * slot_bits) as u64).div_ceil(64) + 2
}

/// The union bound of the rate of a table whose slots are a fraction `load` alive, with
/// `f`-bit fingerprints: `2 * SLOTS * load / (2^f - 1)`, at most 1.
///
/// # Examples
///
/// ```
/// use bloomkit_core::sizing::window::fpr_bound;
///
/// assert!((fpr_bound(10, 0.9) - 7.2 / 1023.0).abs() < 1e-12);
/// assert_eq!(fpr_bound(1, 0.5), 1.0);
/// ```
pub fn fpr_bound(fingerprint_bits: u32, load: f64) -> f64 {
    if load.is_nan() {
        return 1.0;
    }
    let values = (2f64).powi(fingerprint_bits.min(63) as i32) - 1.0;
    (2.0 * f64::from(SLOTS) * load.max(0.0) / values).min(1.0)
}

/// Tag bits for `L` generations: the least `t` whose spare values `2^t - L - 1` are at least
/// one and at least `(L + 1) / 4`. The sweep clears the dead before their tag comes round in
/// that many shifts, so it reads at most about a bucket per insert, and a jump of the clock
/// across `L` generations at most four tables' worth.
pub fn tag_bits_for(generations: u32) -> u32 {
    let l = u64::from(generations);
    let mut t = 1;
    while (1u64 << t) < l + 2 || 4 * ((1u64 << t) - l - 1) < l + 1 {
        t += 1;
    }
    t
}

/// `L` for a slack: `ceil(1 / slack)`, at least 1, at most the window (a generation holds
/// at least one insert) and [`MAX_GENERATIONS`].
pub fn generations_for(slack: f64, window: u64) -> u32 {
    let l = (1.0 / slack).ceil();
    let cap = window.clamp(1, u64::from(MAX_GENERATIONS)) as f64;
    if l.is_nan() {
        1
    } else {
        l.clamp(1.0, cap) as u32
    }
}

/// The smallest table for a window of `window` inserts at rate `fpr`, forgetting keys by
/// `(1 + slack)` windows (about; [`Layout::forgotten_after`] says exactly); see the module
/// docs.
///
/// # Errors
/// [`Error::ZeroItems`] for `window == 0`; [`Error::InvalidFpr`]; [`Error::InvalidSlack`]
/// for a slack that is not a positive number; [`Error::UnreachableFpr`] below what a 64-bit
/// hash can tell apart (`window / 2^64`) or what [`MAX_SLOT_BITS`] can; [`Error::TooLarge`]
/// when the filter would pass 2^40 bytes.
///
/// # Examples
///
/// ```
/// use bloomkit_core::sizing::window::layout;
///
/// let l = layout(1_000_000, 0.01, 0.1)?;
/// assert!(l.window() >= 1_000_000);
/// assert!(l.forgotten_after() as f64 <= 1.11e6);
/// assert!(l.fpr <= 0.01);
/// let bits_per_item = l.bytes() as f64 * 8.0 / 1e6;
/// assert!(bits_per_item < 17.5, "{bits_per_item}");
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub fn layout(window: u64, fpr: f64, slack: f64) -> Result<Layout, Error> {
    if window == 0 {
        return Err(Error::ZeroItems);
    }
    check_fpr(fpr)?;
    if !(slack > 0.0 && slack.is_finite()) {
        return Err(Error::InvalidSlack(slack));
    }
    let generations = generations_for(slack, window);
    let tag_bits = tag_bits_for(generations);
    let per_generation = window.div_ceil(u64::from(generations));
    let alive = (u64::from(generations) + 1).saturating_mul(per_generation);
    // A key whose 64-bit hash equals a held key's is always a false positive, and a
    // fingerprint of the widest slot holds the rest.
    let floor = (window as f64 / 2f64.powi(64)).max(fpr_bound(MAX_SLOT_BITS - tag_bits, 1e-9));
    let mut best: Option<(u64, Layout)> = None;
    for f in 1..=MAX_SLOT_BITS - tag_bits {
        let values = (2f64).powi(f as i32) - 1.0;
        let load = (fpr * values / (2.0 * f64::from(SLOTS))).min(MAX_LOAD);
        if load < 1e-9 {
            continue;
        }
        let buckets = (alive as f64 / (f64::from(SLOTS) * load)).ceil().max(1.0);
        if buckets * f64::from(SLOTS * (f + tag_bits)) / 64.0 > MAX_WORDS as f64 {
            continue;
        }
        let buckets = buckets as u64;
        let bits = buckets * u64::from(SLOTS * (f + tag_bits));
        let fpr_at = fpr_bound(f, alive as f64 / (buckets * u64::from(SLOTS)) as f64);
        if fpr_at > fpr {
            continue;
        }
        if best.is_none_or(|(b, _)| bits < b) {
            best = Some((
                bits,
                Layout {
                    fingerprint_bits: f,
                    tag_bits,
                    generations,
                    per_generation,
                    buckets,
                    fpr: fpr_at,
                },
            ));
        }
    }
    match best {
        Some((_, l)) => Ok(l),
        None if fpr < floor => Err(Error::UnreachableFpr {
            fpr,
            items: window,
            floor,
        }),
        None => Err(Error::TooLarge {
            what: crate::Unit::Bytes,
            size: alive as f64 * f64::from(MAX_SLOT_BITS) / 8.0 / MAX_LOAD,
            max: MAX_WORDS * 8,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_bits_leave_spare_generations() {
        let spare = |t: u32, l: u32| (1i64 << t) - i64::from(l) - 1;
        for l in 1..=MAX_GENERATIONS {
            let t = tag_bits_for(l);
            assert!(spare(t, l) >= 1 && 4 * spare(t, l) > i64::from(l), "{l}");
            let fewer = spare(t - 1, l);
            assert!(t == 1 || fewer < 1 || 4 * fewer < i64::from(l) + 1, "{l}");
        }
        assert_eq!(tag_bits_for(1), 2);
        assert_eq!(tag_bits_for(2), 2);
        assert_eq!(tag_bits_for(10), 4);
        assert_eq!(tag_bits_for(11), 4);
        assert_eq!(tag_bits_for(12), 5);
        assert_eq!(tag_bits_for(13), 5);
        assert_eq!(tag_bits_for(20), 5);
        assert!(tag_bits_for(MAX_GENERATIONS) <= 13);
    }

    #[test]
    fn the_default_at_one_percent() {
        let l = layout(1_000_000, 0.01, DEFAULT_SLACK).unwrap();
        assert_eq!((l.fingerprint_bits, l.tag_bits, l.generations), (10, 4, 10));
        assert_eq!(l.per_generation, 100_000);
        assert!(l.fpr <= 0.01 && l.fpr > 0.006, "{}", l.fpr);
        let bits = l.bytes() as f64 * 8.0 / 1e6;
        assert!(bits < 17.2, "{bits}");
    }

    /// The public helpers at their edges: no panic.
    #[test]
    fn helpers_answer_at_their_edges() {
        assert_eq!(generations_for(0.1, 0), 1);
        assert_eq!(generations_for(f64::NAN, 10), 1);
        assert_eq!(generations_for(1e-9, u64::MAX), MAX_GENERATIONS);
        assert_eq!(fpr_bound(0, 0.5), 1.0);
        assert_eq!(fpr_bound(200, 0.5), fpr_bound(63, 0.5));
        assert_eq!(fpr_bound(8, f64::NAN), 1.0);
        assert_eq!(fpr_bound(8, -1.0), 0.0);
    }

    #[test]
    fn layouts_keep_their_promises_at_every_edge() {
        for (window, fpr, slack) in [
            (1, 0.5, 0.1),
            (1, 0.01, 0.1),
            (7, 0.01, 1.0),
            (1000, 0.001, 0.25),
            (1000, 1e-6, 0.1),
            (1_000_000, 0.01, 0.1),
            (1_000_000, 0.01, 1e-6),
            (u64::MAX / 2, 0.5, 0.1),
        ] {
            match layout(window, fpr, slack) {
                Ok(l) => {
                    assert!(l.window() >= window, "{window}");
                    assert!(l.fpr <= fpr, "{window} {fpr}: {}", l.fpr);
                    assert!(l.buckets >= 1);
                    assert!(l.slot_bits() <= MAX_SLOT_BITS);
                    assert!(1u64 << l.tag_bits >= u64::from(l.generations) + 2);
                }
                Err(e) => assert!(matches!(e, Error::TooLarge { .. }), "{window}: {e}"),
            }
        }
        assert_eq!(layout(0, 0.01, 0.1), Err(Error::ZeroItems));
        assert!(matches!(
            layout(10, f64::NAN, 0.1),
            Err(Error::InvalidFpr(_))
        ));
        for slack in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                layout(10, 0.01, slack),
                Err(Error::InvalidSlack(_))
            ));
        }
        assert!(matches!(
            layout(1_000_000, f64::MIN_POSITIVE, 0.1),
            Err(Error::UnreachableFpr { .. })
        ));
    }
}
