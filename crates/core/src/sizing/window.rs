//! Sizing a sliding-window filter: the age-partitioned Bloom filter (Shtul, Baquero &
//! Almeida, "Age-Partitioned Bloom Filters", 2020, arXiv 2001.03147), laid out in blocks.
//!
//! # The structure
//!
//! `k + l` slices in a ring. A key is written into the `k` newest slices (one bit each);
//! every `g` inserts (a *generation*) the oldest slice is cleared and becomes the newest.
//! A key is present when some `k` slices in a row all hold its bit. A key inserted in the
//! current generation sits in slices `0..k`; after `a` shifts in `a..a + k`, whole while
//! `a <= l`. So every key of the last `l * g` inserts is answered (no false negative), and
//! a key is out of every slice `l + k` generations after its own: older than
//! `(l + k) * g` inserts it answers "present" only as often as a key never inserted.
//!
//! # The rate
//!
//! Just before a shift (the worst moment) the slice at position `i` holds the keys of
//! `min(i + 1, k)` generations. With bits set independently, slice `i` has a fraction
//! `q_i = 1 - (1 - 1/w)^(n_i)` of its bits set, and an absent key is a false positive when
//! some `k` consecutive slices all have its bit: [`run_probability`] of the `q_i` (the
//! paper's exact rate, section 4, computed here by a short recurrence on the current run's
//! length).
//!
//! bloomkit keeps one key's bits in one *block*: a 64-bit word in each slice, the `k + l`
//! words side by side, so a lookup reads one contiguous stretch of memory instead of
//! `k + l` scattered lines. Blocks' loads are Poisson, and one block's slices share their
//! generations' loads, so a heavy block is heavy in every slice: the rate is the mean of
//! the run probability over the block's loads, which [`fpr_model`] estimates by averaging
//! it over [`SAMPLES`] load vectors drawn from a fixed seed (the same draws at every size,
//! so the estimate falls as the filter grows), plus two standard errors. At 1% with the
//! default slack this costs about 5% more memory than independent bits would (21.1 bits per
//! window item against 20.1).
//!
//! # Choosing k and l
//!
//! [`layout`] takes a window `N`, a rate and a *slack* `s` (how far past the window a key
//! may be remembered, as a fraction of it): `l = ceil(k / s)` keeps `(l + k) g <= (1 + s) N`
//! (about), and for each `k` the smallest slices meeting the rate give the memory; the
//! smallest wins. At 1% and `s = 0.1`: `k = 12`, `l = 120`, 21.1 bits per window item (two
//! rotating Bloom filters giving the same promise take 22.0 classic or 23.0 blocked, and keep
//! keys up to `2 N`).

use crate::{check_fpr, Error};

/// Bits in one slice of one block (a `u64`).
pub const WORD_BITS: u64 = 64;
/// The most slices a key is written to.
pub const MAX_HASHES: u32 = 48;
/// The most generations a key is kept whole for (`l`).
pub const MAX_GENERATIONS: u32 = 4096;
/// Load vectors [`fpr_model`] averages over.
pub const SAMPLES: usize = 1024;
/// The default slack: a key is out of the filter by 1.1 windows.
pub const DEFAULT_SLACK: f64 = 0.1;
/// The most words a filter may have (2^40 bytes).
const MAX_WORDS: u64 = 1 << 37;

/// A window filter's shape; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Layout {
    /// `k`: slices a key is written to (and must be found in, in a row).
    pub hashes: u32,
    /// `l`: generations a key is kept whole after its own.
    pub generations: u32,
    /// `g`: inserts a generation holds.
    pub per_generation: u64,
    /// Blocks: each `k + l` words, one a slice.
    pub blocks: u64,
    /// The model's rate at the worst moment ([`fpr_model`]).
    pub fpr: f64,
}

impl Layout {
    /// Slices in the ring: `k + l`.
    pub const fn slices(&self) -> u32 {
        self.hashes + self.generations
    }

    /// Words of the filter: blocks times slices.
    pub const fn words(&self) -> u64 {
        self.blocks * self.slices() as u64
    }

    /// Bytes of the filter's bit array.
    pub const fn bytes(&self) -> u64 {
        self.words() * 8
    }

    /// Inserts every one of which is answered: `l * g` (at least the window asked for).
    pub const fn window(&self) -> u64 {
        self.generations as u64 * self.per_generation
    }

    /// Inserts after which a key is in no slice: `(l + k) * g`; older keys answer
    /// "present" only as often as keys never inserted.
    pub const fn forgotten_after(&self) -> u64 {
        self.slices() as u64 * self.per_generation
    }
}

/// The probability that some `k` consecutive of independent events with probabilities
/// `q` all happen (a run of `k` successes), by a recurrence on the current run's length
/// (`O(len * k)`). `k = 0` is certain.
///
/// # Examples
///
/// ```
/// use bloomkit_core::sizing::window::run_probability;
///
/// assert_eq!(run_probability(&[0.5, 0.5], 2), 0.25);
/// // Three chances at a run of two: 1 - P(no two in a row) = 1 - 5/8.
/// assert_eq!(run_probability(&[0.5; 3], 2), 0.375);
/// ```
pub fn run_probability(q: &[f64], k: usize) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > q.len() {
        return 0.0;
    }
    // state[r]: probability of no run yet and a current run of exactly r.
    let mut state = vec![0.0f64; k];
    state[0] = 1.0;
    let mut hit = 0.0;
    for &p in q {
        let p = p.clamp(0.0, 1.0);
        let mut carry = 0.0;
        for r in (0..k).rev() {
            let v = state[r];
            if r + 1 == k {
                hit += v * p;
            } else {
                state[r + 1] = v * p;
            }
            carry += v * (1.0 - p);
        }
        // state[1..] was written above from the old values, high to low.
        state[0] = carry;
    }
    hit.min(1.0)
}

/// The fraction of a `w`-bit slice's bits set by `keys` keys, independent bits:
/// `1 - (1 - 1/w)^keys`.
fn fill(keys: f64, bits: f64) -> f64 {
    -(keys * (-1.0 / bits).ln_1p()).exp_m1()
}

/// The rate at the worst moment with every bit independent (no blocks): slices of `bits`
/// bits, `g` keys a generation. The paper's exact formula; a lower bound of
/// [`fpr_model`].
pub fn fpr_independent(k: u32, l: u32, g: u64, bits: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    let q: Vec<f64> = (0..u64::from(k) + u64::from(l))
        .map(|i| fill((i.min(u64::from(k) - 1) + 1) as f64 * g as f64, bits))
        .collect();
    run_probability(&q, k as usize)
}

/// The rate of a blocked window filter whose generations hold, position by position
/// (newest first), `loads[j]` keys on average *per block*: the mean over [`SAMPLES`]
/// Poisson draws of the blocks' loads (a fixed seed) of the run probability, plus two
/// standard errors of that mean. Monotone in the loads (common draws).
pub fn fpr_model(k: u32, loads: &[f64]) -> f64 {
    fpr_model_sampled(k, loads, SAMPLES)
}

/// [`fpr_model`] over the first `samples` of its draws (at least one): a cheaper, noisier
/// estimate (a filter's `estimated_fpr` takes 128).
pub fn fpr_model_sampled(k: u32, loads: &[f64], samples: usize) -> f64 {
    let samples = samples.max(1);
    let n = loads.len();
    let k = k as usize;
    if k == 0 || n < k {
        return if k == 0 { 1.0 } else { 0.0 };
    }
    let ln_clear = (-1.0 / WORD_BITS as f64).ln_1p();
    let mut rng = SplitMix(0x005E_ED0F_A9BF);
    let (mut sum, mut sum_sq) = (0.0f64, 0.0f64);
    let mut draws = vec![0u64; n];
    let mut q = vec![0.0f64; n];
    for _ in 0..samples {
        for (j, g) in draws.iter_mut().enumerate() {
            *g = poisson_inverse(loads[j], rng.next_f64());
        }
        // Slice i holds generations i, i - 1, ..., i - k + 1 (those that exist).
        // Sums in f64: loads read from a file may be anything.
        let mut window = 0.0f64;
        for i in 0..n {
            window += draws[i] as f64;
            if i >= k {
                window -= draws[i - k] as f64;
            }
            q[i] = -(window.max(0.0) * ln_clear).exp_m1();
        }
        let p = run_probability(&q, k);
        sum += p;
        sum_sq += p * p;
    }
    let samples = samples as f64;
    let mean = sum / samples;
    let var = (sum_sq / samples - mean * mean).max(0.0);
    (mean + 2.0 * (var / samples).sqrt()).min(1.0)
}

/// [`fpr_model`] at the worst moment of a filter of `blocks` blocks, `g` keys a
/// generation: every generation full.
pub fn fpr_full(k: u32, l: u32, g: u64, blocks: u64) -> f64 {
    let lambda = g as f64 / blocks as f64;
    fpr_model(k, &vec![lambda; k as usize + l as usize])
}

/// The smallest `k + l`-slice layout for a window of `window` inserts at rate `fpr`,
/// forgetting keys by `(1 + slack)` windows (about; [`Layout::forgotten_after`] says
/// exactly); see the module docs.
///
/// # Errors
/// [`Error::ZeroItems`] for `window == 0`; [`Error::InvalidFpr`]; [`Error::InvalidSlack`]
/// for a slack that is not a positive number; [`Error::UnreachableFpr`] below what a 64-bit
/// hash can tell apart (`window / 2^64`); [`Error::TooLarge`] when the filter would pass
/// 2^40 bytes.
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
/// assert!(bits_per_item < 22.0, "{bits_per_item}");
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub fn layout(window: u64, fpr: f64, slack: f64) -> Result<Layout, Error> {
    // The search takes tens of milliseconds (the blocked model's draws); a program that
    // builds many filters of one shape (and the tests) asks for the same layouts again.
    /// Layouts found, by (window, rate bits, slack bits).
    type Found = Vec<((u64, u64, u64), Layout)>;
    static CACHE: std::sync::Mutex<Found> = std::sync::Mutex::new(Vec::new());
    let key = (window, fpr.to_bits(), slack.to_bits());
    if let Some(hit) = CACHE
        .lock()
        .ok()
        .and_then(|c| c.iter().find(|(k, _)| *k == key).map(|(_, l)| *l))
    {
        return Ok(hit);
    }
    let found = search(window, fpr, slack)?;
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= 64 {
            cache.remove(0);
        }
        cache.push((key, found));
    }
    Ok(found)
}

fn search(window: u64, fpr: f64, slack: f64) -> Result<Layout, Error> {
    if window == 0 {
        return Err(Error::ZeroItems);
    }
    check_fpr(fpr)?;
    if !(slack > 0.0 && slack.is_finite()) {
        return Err(Error::InvalidSlack(slack));
    }
    // A key whose 64-bit hash equals a held key's is always a false positive.
    let floor = window as f64 / 2f64.powi(64);
    if fpr < floor {
        return Err(Error::UnreachableFpr {
            fpr,
            items: window,
            floor,
        });
    }
    // The best k with independent bits (cheap), then the blocks that k needs.
    let mut best: Option<(f64, u32, u32, u64)> = None;
    let mut worse = 0;
    for k in 1..=MAX_HASHES {
        let l = generations_for(k, slack, window);
        let g = window.div_ceil(u64::from(l));
        let Some(bits) = smallest(|bits| fpr_independent(k, l, g, bits) <= fpr) else {
            continue;
        };
        let total = bits * f64::from(k + l);
        if best.is_none_or(|b| total < b.0) {
            best = Some((total, k, l, g));
            worse = 0;
        } else {
            worse += 1;
            if worse >= 3 {
                break;
            }
        }
    }
    let Some((total, k, l, g)) = best else {
        return Err(too_large(f64::INFINITY));
    };
    let slices = u64::from(k + l);
    let ideal_blocks = ((total / slices as f64) / WORD_BITS as f64).ceil().max(1.0) as u64;
    let max_blocks = MAX_WORDS / slices;
    if ideal_blocks > max_blocks {
        return Err(too_large(ideal_blocks as f64 * slices as f64 * 8.0));
    }
    // Grow until the blocked model holds, then bisect down.
    let ok = |blocks: u64| fpr_full(k, l, g, blocks) <= fpr;
    let (mut lo, mut hi) = (ideal_blocks - 1, ideal_blocks);
    while !ok(hi) {
        if hi >= max_blocks {
            return Err(too_large(hi as f64 * 2.0 * slices as f64 * 8.0));
        }
        lo = hi;
        hi = (hi + hi / 4 + 1).min(max_blocks);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Layout {
        hashes: k,
        generations: l,
        per_generation: g,
        blocks: hi,
        fpr: fpr_full(k, l, g, hi),
    })
}

/// `l` for `k` and a slack: `ceil(k / slack)`, at least 1, at most the window (a
/// generation holds at least one insert) and [`MAX_GENERATIONS`].
pub fn generations_for(k: u32, slack: f64, window: u64) -> u32 {
    let l = (f64::from(k) / slack).ceil();
    let cap = window.clamp(1, u64::from(MAX_GENERATIONS)) as f64;
    if l.is_nan() {
        1
    } else {
        l.clamp(1.0, cap) as u32
    }
}

fn too_large(bytes: f64) -> Error {
    Error::TooLarge {
        what: crate::Unit::Bytes,
        size: bytes,
        max: MAX_WORDS * 8,
    }
}

/// The smallest slice size in bits (to 0.1%) for which `ok` holds, if one up to the
/// largest filter does.
fn smallest(ok: impl Fn(f64) -> bool) -> Option<f64> {
    let max = (MAX_WORDS * WORD_BITS) as f64;
    let mut hi = 64.0;
    while !ok(hi) {
        hi *= 2.0;
        if hi > max {
            return None;
        }
    }
    let mut lo = hi / 2.0;
    while hi - lo > hi * 1e-3 {
        let mid = (lo + hi) / 2.0;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The smallest `j` with `P(X <= j) >= u` for `X ~ Poisson(lambda)`.
fn poisson_inverse(lambda: f64, u: f64) -> u64 {
    if lambda <= 0.0 {
        return 0;
    }
    if lambda > 500.0 {
        // Normal approximation, far past any load a sized filter sees.
        let z = normal_quantile(u);
        return (lambda + z * lambda.sqrt()).round().max(0.0) as u64;
    }
    let mut p = (-lambda).exp();
    let mut cdf = p;
    let mut j = 0u64;
    while cdf < u && j < 10_000 {
        j += 1;
        p *= lambda / j as f64;
        cdf += p;
    }
    j
}

/// The standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9).
fn normal_quantile(u: f64) -> f64 {
    let u = u.clamp(1e-300, 1.0 - 1e-16);
    let a = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    let b = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    let c = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    let d = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
            / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0)
    };
    if u < 0.02425 {
        tail((-2.0 * u.ln()).sqrt())
    } else if u > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - u).ln()).sqrt())
    } else {
        let q = u - 0.5;
        let r = q * q;
        (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0)
    }
}

/// SplitMix64: the fixed draws of [`fpr_model`].
struct SplitMix(u64);

impl SplitMix {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recurrence against counting every outcome of short sequences.
    #[test]
    fn run_probability_matches_enumeration() {
        let q = [0.3, 0.9, 0.5, 0.7, 0.2, 0.8, 0.6];
        for k in 1..=q.len() {
            let mut exact = 0.0;
            for mask in 0u32..1 << q.len() {
                let mut p = 1.0;
                for (i, &qi) in q.iter().enumerate() {
                    p *= if mask >> i & 1 == 1 { qi } else { 1.0 - qi };
                }
                let mut run = 0;
                let mut hit = false;
                for i in 0..q.len() {
                    run = if mask >> i & 1 == 1 { run + 1 } else { 0 };
                    hit |= run >= k;
                }
                if hit {
                    exact += p;
                }
            }
            let got = run_probability(&q, k);
            assert!((got - exact).abs() < 1e-12, "k = {k}: {got} vs {exact}");
        }
    }

    #[test]
    fn the_blocked_model_is_above_the_independent_one_and_falls_with_size() {
        let (k, l, g) = (8, 40, 1000);
        let bits = 8.0 * 1000.0 * 1.6;
        let blocks = (bits / 64.0) as u64;
        let ideal = fpr_independent(k, l, g, blocks as f64 * 64.0);
        let blocked = fpr_full(k, l, g, blocks);
        assert!(blocked > ideal, "{blocked} vs {ideal}");
        assert!(blocked < 2.0 * ideal, "{blocked} vs {ideal}");
        assert!(fpr_full(k, l, g, blocks + 50) < blocked);
    }

    /// Loads read from a file may be anything: the model answers a rate, never panics.
    #[test]
    fn the_model_takes_any_loads() {
        for loads in [
            vec![f64::MAX; 4],
            vec![f64::NAN, -1.0, f64::INFINITY, 1e300],
            vec![0.0; 4],
            vec![1e18; 4],
        ] {
            let p = fpr_model_sampled(2, &loads, 16);
            assert!((0.0..=1.0).contains(&p), "{loads:?}: {p}");
        }
        assert_eq!(fpr_model(3, &[1.0, 2.0]), 0.0); // fewer slices than a run
                                                    // The public helpers at their edges: no panic, no huge allocation.
        assert_eq!(generations_for(5, 0.1, 0), 1);
        assert_eq!(generations_for(5, f64::NAN, 10), 1);
        assert_eq!(fpr_independent(0, 3, 10, 64.0), 1.0);
        assert_eq!(run_probability(&[1.0; 3], usize::MAX), 0.0);
        assert!(fpr_independent(2, 8, 1, 1e6) < 1e-6);
    }

    #[test]
    fn layouts_keep_their_promises_at_every_edge() {
        for (window, fpr, slack) in [
            (1, 0.5, 0.1),
            (1, 0.01, 0.1),
            (7, 0.01, 1.0),
            (1000, 0.001, 0.25),
            (1_000_000, 0.01, 0.1),
            (u64::MAX / 2, 0.5, 0.1),
        ] {
            match layout(window, fpr, slack) {
                Ok(l) => {
                    assert!(l.window() >= window, "{window}");
                    assert!(l.fpr <= fpr, "{window} {fpr}: {}", l.fpr);
                    assert!(l.blocks >= 1);
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
