//! Probe schemes: the k positions of a key in a flat bit array, from its one hash.

/// Maps a 64-bit value to `[0, n)` with Lemire's multiply-shift ("fastrange"): the high 64
/// bits of the 128-bit product. Unbiased to within `n / 2^64`, correct for every `n`
/// (including `n > 2^32`), and cheaper than `%`.
#[inline]
pub const fn reduce(hash: u64, n: u64) -> u64 {
    ((hash as u128 * n as u128) >> 64) as u64
}

/// The second hash of the double-hashing pair, derived from the first by a multiplicative
/// mix so that its high bits (the ones [`reduce`] keeps) depend on all 64 bits of the key's
/// hash, not on the same bits that place the first probe.
#[inline]
pub const fn second_hash(hash: u64) -> u64 {
    (hash ^ (hash >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

/// The k probe positions in `[0, m)` of one key, by enhanced double hashing.
///
/// With `a = reduce(h1, m)` and `b = reduce(h2, m)` (`h1` the key's hash, `h2` from
/// [`second_hash`]), the i-th position is
///
/// ```text
/// g(i) = a + i*b + (i^3 - i)/6   (mod m)
/// ```
///
/// computed incrementally with additions and conditional subtractions only (Dillinger &
/// Manolios 2004, "Bloom filters in probabilistic verification", Fig. 4). The cubic term is
/// what "enhanced" adds to Kirsch–Mitzenmacher double hashing: even when `b` is 0 or has a
/// small order modulo `m`, the positions keep moving, so the k positions of a key stay
/// (nearly) distinct and the filter's false-positive rate stays close to that of k
/// independent hashes, also at small `m`.
///
/// Filters choose `m` with no prime factor below `k` ([`crate::sizing::coprime_bits`]):
/// then every step `1..k` is invertible mod `m`, and two probes coincide no more often than
/// independent probes would. (With `m` a power of two they coincide far more often.)
///
/// The pair `(a, b)` takes at most `m^2` values, so two keys share all their positions with
/// probability about `1/m^2`; [`crate::sizing::fpr_model`] accounts for that floor, which
/// only matters for tiny filters.
///
/// # Examples
///
/// ```
/// use bloomkit_core::hash::Probes;
///
/// let positions: Vec<u64> = Probes::new(0x0123_4567_89ab_cdef, 1000, 7).collect();
/// assert_eq!(positions.len(), 7);
/// assert!(positions.iter().all(|&p| p < 1000));
/// ```
#[derive(Debug, Clone)]
pub struct Probes {
    x: u64,
    y: u64,
    /// `i mod m`, the increment of `y` for the next step.
    step: u64,
    m: u64,
    left: u32,
}

impl Probes {
    /// The `k` positions in `[0, m)` for a key whose hash is `hash`; `k = 0` gives none.
    ///
    /// # Panics
    /// If `m` is 0 or above `2^63` (filters never pass such a size: see
    /// [`crate::bits::MAX_BITS`]); [`try_new`](Probes::try_new) returns an error instead.
    #[inline]
    pub fn new(hash: u64, m: u64, k: u32) -> Probes {
        Probes::with_second_hash(hash, second_hash(hash), m, k)
    }

    /// As [`new`](Probes::new), or [`Error::ZeroBits`](crate::Error::ZeroBits) /
    /// [`Error::TooLarge`](crate::Error::TooLarge) for an `m` no filter can have.
    ///
    /// # Errors
    /// As said.
    pub fn try_new(hash: u64, m: u64, k: u32) -> Result<Probes, crate::Error> {
        match m {
            0 => Err(crate::Error::ZeroBits),
            m if m > 1 << 63 => Err(crate::Error::TooLarge {
                what: crate::Unit::Bits,
                size: m as f64,
                max: 1 << 63,
            }),
            m => Ok(Probes::new(hash, m, k)),
        }
    }

    /// As [`new`](Probes::new), with `second_hash(hash)` computed by the caller once for
    /// several filters of different sizes. `second` must be `second_hash(hash)` (checked in
    /// debug builds only, since computing it is what this saves): another value gives the
    /// positions of another key.
    ///
    /// # Panics
    /// As [`new`](Probes::new).
    #[inline]
    pub fn with_second_hash(hash: u64, second: u64, m: u64, k: u32) -> Probes {
        check_probe_bits(m);
        debug_assert_eq!(second, second_hash(hash));
        Probes {
            x: reduce(hash, m),
            y: reduce(second, m),
            step: 0,
            m,
            left: k,
        }
    }
}

/// Panics unless `m` is in `1..=2^63`, the sizes a filter can have. Checked in release too:
/// past 2^63, `add_mod` would overflow and give positions outside [0, m). Free where it
/// matters: callgrind counted the same instructions per classic and counting lookup with and
/// without it (the check leaves the loop).
#[inline]
fn check_probe_bits(m: u64) {
    assert!(
        m.wrapping_sub(1) < 1 << 63,
        "a filter of {m} bits: probes need 1..=2^63"
    );
}

/// `(a + b) mod m` for `a, b < m <= 2^63`.
#[inline]
fn add_mod(a: u64, b: u64, m: u64) -> u64 {
    let s = a + b;
    // Below m, `s - m` wraps above s; otherwise it is the reduced value and below s.
    s.min(s.wrapping_sub(m))
}

/// `Iterator` and `ExactSizeIterator` for a probe sequence that counts down the positions
/// it has `left` to give; `$next` (given the sequence as `$s`) gives the next one.
macro_rules! counted_positions {
    ($ty:ident, |$s:ident| $next:block) => {
        impl Iterator for $ty {
            type Item = u64;

            #[inline]
            fn next(&mut self) -> Option<u64> {
                if self.left == 0 {
                    return None;
                }
                self.left -= 1;
                let $s = self;
                Some($next)
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.left as usize, Some(self.left as usize))
            }
        }

        impl ExactSizeIterator for $ty {}
    };
}

counted_positions!(Probes, |p| {
    let out = p.x;
    // x(i+1) = x(i) + y(i);  y(i+1) = y(i) + (i + 1).
    p.x = add_mod(p.x, p.y, p.m);
    p.step += 1;
    if p.step == p.m {
        p.step = 0;
    }
    p.y = add_mod(p.y, p.step, p.m);
    out
});

/// How a filter of `m` bits derives the k positions of a key from its hash: recorded in the
/// filter (and in its bytes from format version 3 on), since the same hash gives other
/// positions under another scheme.
///
/// Both are enhanced double hashing (Dillinger & Manolios 2004) from the key's hash `h1` and
/// `h2 =` [`second_hash`]`(h1)`, `g(i) = h1 + i*h2 + (i^3 - i)/6 * c`; they differ in
/// where the arithmetic happens:
///
/// - [`Wide`](ProbeScheme::Wide) (id 2, the default): `g(i)` in 64-bit wrapping arithmetic
///   (`c` a fixed odd constant), each reduced to `[0, m)` by [`reduce`] on its own
///   ([`WideProbes`]). From one probe to the next the only serial steps are additions of
///   one cycle, so the k positions, and the k memory reads, are ready almost at once
///   (measured against `Enhanced` in `docs/performance.md`). Without the cubic term a key
///   whose `h2` is near 0 (or near a fraction of 2^64 with a small denominator) would put
///   all its probes on one or a few bits: the filter of one key at `p = 1e-6` measured
///   1.6e-6 so; with it, the rate is the model's.
/// - [`Enhanced`](ProbeScheme::Enhanced) (id 1): enhanced double hashing mod m
///   ([`Probes`]), each position computed from the previous with modular additions: a
///   chain of about three cycles per probe that every lookup waits on. Every filter
///   written before format version 3 (and every Redis filter created before it) uses it,
///   and keeps using it when loaded.
///
/// # Examples
///
/// ```
/// use bloomkit_core::hash::ProbeScheme;
///
/// let wide: Vec<u64> = ProbeScheme::Wide.positions(0x0123_4567_89ab_cdef, 1000, 7).collect();
/// assert_eq!(wide.len(), 7);
/// assert!(wide.iter().all(|&p| p < 1000));
/// assert_eq!(ProbeScheme::default(), ProbeScheme::Wide);
/// assert_eq!(ProbeScheme::from_id(1), Some(ProbeScheme::Enhanced));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProbeScheme {
    /// Enhanced double hashing mod m ([`Probes`]): filters of format versions 1 and 2.
    Enhanced,
    /// Double hashing over 64 bits, each probe reduced on its own ([`WideProbes`]).
    #[default]
    Wide,
}

impl ProbeScheme {
    /// The id recorded in the byte format, serde and Redis: 1 for
    /// [`Enhanced`](ProbeScheme::Enhanced), 2 for [`Wide`](ProbeScheme::Wide).
    pub const fn id(self) -> u8 {
        match self {
            ProbeScheme::Enhanced => 1,
            ProbeScheme::Wide => 2,
        }
    }

    /// The scheme with this id, or `None` for an id this build does not know.
    pub const fn from_id(id: u8) -> Option<ProbeScheme> {
        match id {
            1 => Some(ProbeScheme::Enhanced),
            2 => Some(ProbeScheme::Wide),
            _ => None,
        }
    }

    /// The k positions in `[0, m)` of the key whose hash is `hash`.
    ///
    /// # Panics
    /// If `m` is 0 or above `2^63`, as [`Probes::new`].
    #[inline]
    pub fn positions(self, hash: u64, m: u64, k: u32) -> Positions {
        match self {
            ProbeScheme::Enhanced => Positions::Enhanced(Probes::new(hash, m, k)),
            ProbeScheme::Wide => Positions::Wide(WideProbes::new(hash, m, k)),
        }
    }

    /// Whether `f` holds for every position of the key, stopping at the first that fails:
    /// the scheme is matched once, and each arm runs its own loop with `f` inlined.
    ///
    /// # Panics
    /// As [`positions`](Self::positions).
    #[inline(always)]
    pub fn all(self, hash: u64, m: u64, k: u32, f: impl FnMut(u64) -> bool) -> bool {
        match self {
            ProbeScheme::Enhanced => Probes::new(hash, m, k).all(f),
            ProbeScheme::Wide => WideProbes::new(hash, m, k).all(f),
        }
    }

    /// Calls `f` with every position of the key, in probe order (the scheme matched once).
    ///
    /// # Panics
    /// As [`positions`](Self::positions).
    #[inline(always)]
    pub fn for_each(self, hash: u64, m: u64, k: u32, f: impl FnMut(u64)) {
        match self {
            ProbeScheme::Enhanced => Probes::new(hash, m, k).for_each(f),
            ProbeScheme::Wide => WideProbes::new(hash, m, k).for_each(f),
        }
    }
}

impl core::fmt::Display for ProbeScheme {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            ProbeScheme::Enhanced => "enhanced double hashing mod m (id 1)",
            ProbeScheme::Wide => "64-bit double hashing (id 2)",
        })
    }
}

/// The positions of one key under [`ProbeScheme::Wide`]: `reduce(g(i), m)` for `i = 0..k`,
/// with `g(i) = h1 + i*h2 + (i^3 - i)/6 * WIDE_CUBIC` in wrapping 64-bit arithmetic and
/// `h2 =` [`second_hash`]`(h1)`, computed with three additions per probe.
///
/// # Examples
///
/// ```
/// use bloomkit_core::hash::{reduce, second_hash, WideProbes, WIDE_CUBIC};
///
/// let h = 0x0123_4567_89ab_cdef_u64;
/// let positions: Vec<u64> = WideProbes::new(h, 1000, 4).collect();
/// let g = |i: u64| {
///     let cubic = (i * i * i - i) / 6;
///     h.wrapping_add(i.wrapping_mul(second_hash(h)))
///         .wrapping_add(cubic.wrapping_mul(WIDE_CUBIC))
/// };
/// assert_eq!(positions, [0, 1, 2, 3].map(|i| reduce(g(i), 1000)));
/// ```
#[derive(Debug, Clone)]
pub struct WideProbes {
    /// `g(i)`.
    next: u64,
    /// `g(i + 1) - g(i) = h2 + i(i+1)/2 * c`.
    step: u64,
    /// `step(i + 1) - step(i) = (i + 1) * c`.
    accel: u64,
    m: u64,
    left: u32,
}

/// The constant `c` of [`WideProbes`]' cubic term: splitmix64's first multiplier (odd, its
/// bits well mixed), a fixed part of [`ProbeScheme::Wide`].
pub const WIDE_CUBIC: u64 = 0xbf58_476d_1ce4_e5b9;

impl WideProbes {
    /// The `k` positions in `[0, m)` for a key whose hash is `hash`; `k = 0` gives none.
    ///
    /// # Panics
    /// If `m` is 0 or above `2^63`, as [`Probes::new`] (no filter has such a size; the
    /// positions themselves would be right up to `2^64 - 1`).
    #[inline]
    pub fn new(hash: u64, m: u64, k: u32) -> WideProbes {
        WideProbes::with_second_hash(hash, second_hash(hash), m, k)
    }

    /// As [`new`](WideProbes::new), with `second_hash(hash)` computed by the caller (see
    /// [`Probes::with_second_hash`]).
    ///
    /// # Panics
    /// As [`new`](WideProbes::new).
    #[inline]
    pub fn with_second_hash(hash: u64, second: u64, m: u64, k: u32) -> WideProbes {
        check_probe_bits(m);
        debug_assert_eq!(second, second_hash(hash));
        WideProbes {
            next: hash,
            step: second,
            accel: WIDE_CUBIC,
            m,
            left: k,
        }
    }
}

counted_positions!(WideProbes, |p| {
    let out = reduce(p.next, p.m);
    p.next = p.next.wrapping_add(p.step);
    p.step = p.step.wrapping_add(p.accel);
    p.accel = p.accel.wrapping_add(WIDE_CUBIC);
    out
});

/// The positions of one key under either [`ProbeScheme`] ([`ProbeScheme::positions`]).
#[derive(Debug, Clone)]
pub enum Positions {
    /// [`ProbeScheme::Enhanced`].
    Enhanced(Probes),
    /// [`ProbeScheme::Wide`].
    Wide(WideProbes),
}

impl Iterator for Positions {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        match self {
            Positions::Enhanced(p) => p.next(),
            Positions::Wide(p) => p.next(),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Positions::Enhanced(p) => p.size_hint(),
            Positions::Wide(p) => p.size_hint(),
        }
    }
}

impl ExactSizeIterator for Positions {}

/// The splitmix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mix.
#[inline]
pub(crate) const fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
