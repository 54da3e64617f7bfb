//! The standard ribbon filter (Dillinger & Walzer, "Ribbon filter: practically smaller than
//! Bloom and Xor", 2021), with 128-bit coefficient rows and interleaved column-major
//! solution storage, as RocksDB's `Standard128Ribbon`.
//!
//! Each key is one equation over GF(2): a start row `s`, a 128-bit coefficient `c` (bit 0
//! set) covering rows `s..s+128`, and an `r`-bit result. The filter is a solution `Z` (one
//! `r`-bit value per row) with `c . Z[s..s+128] = result` for every key; a key never
//! inserted matches its own random result with probability `2^-r`. Building is Gaussian
//! elimination on a band (each equation reduced against the rows it meets until it finds an
//! empty row: "banding"), then back-substitution.
//!
//! **Fractional bits per key.** The rows are stored by blocks of 128; the first blocks keep
//! `r - 1` result bits per row and the rest `r` ("upper" blocks). A key compares as many
//! bits as the block its start row is in, so its rate is `2^-(r-1)` or `2^-r`; the share
//! of upper blocks is chosen so the average over start rows meets the target:
//!
//! ```text
//! fpr = u * 2^-r + (1 - u) * 2^-(r-1),   u = start rows in upper blocks / all start rows
//! ```
//!
//! That is [`RibbonFilter::estimated_fpr`]'s formula, with `u` counted from the layout.

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;

use bloomkit_core::batch::{pipeline_groups, prefetch, with_popcnt};
use bloomkit_core::{check_fpr, Error, Variant, Xxh3Builder};
use derive_where::derive_where;

use crate::common::{self, mix, mul_high, Seeds, MAX_ATTEMPTS};

/// Rows per block, and the width of a coefficient.
const W: u64 = 128;

/// The most result bits a key compares: a rate of `2^-32`.
pub(crate) const MAX_COLUMNS: u32 = 32;

/// Extra rows over keys: 128-bit ribbons band `n` keys into `(1 + OVERHEAD) n` rows with a
/// failure rate per seed of about 1% or less from 10^4 keys up (measured:
/// `cargo test --release -p bloomkit-static -- --ignored ribbon_failure_rates --nocapture`).
const OVERHEAD: f64 = 0.05;

/// Attempts at one size before the rows grow by [`GROWTH`] (for inputs where the band is
/// unusually crowded: small sets, or many keys of equal hash prefix).
const ATTEMPTS_PER_SIZE: u32 = 4;
const GROWTH: f64 = 1.03;

/// Where a ribbon filter's rows are and how many result bits each block keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct RibbonLayout {
    /// The seed mixed into every key's hash by the successful attempt.
    pub(crate) seed: u64,
    /// Blocks of 128 rows (0 only for an empty filter).
    pub(crate) blocks: u64,
    /// Result bits of the upper blocks, `1..=32`; the lower blocks keep one fewer.
    pub(crate) upper_columns: u32,
    /// The first upper block.
    pub(crate) upper_start: u64,
    /// Distinct keys (by 64-bit hash) in the filter.
    pub(crate) items: u64,
    /// The rate the filter was sized for.
    pub(crate) target_fpr: f64,
}

impl RibbonLayout {
    /// The layout for `n` keys at rate `fpr` with `rows_per_key` rows per key.
    fn sized(n: usize, fpr: f64, rows_per_key: f64) -> Result<RibbonLayout, Error> {
        let fpr = check_fpr(fpr)?;
        let min = (-f64::from(MAX_COLUMNS)).exp2();
        if fpr < min {
            return Err(Error::FprBelowMinimum {
                fpr,
                min,
                variant: Variant::Ribbon,
            });
        }
        let bits = -fpr.log2();
        let upper = (bits.ceil() as u32).clamp(1, MAX_COLUMNS);
        let blocks = if n == 0 {
            0
        } else {
            let rows = (n as f64 * rows_per_key).ceil().max(W as f64);
            let blocks = (rows / W as f64).ceil();
            // A build holds 20 bytes a row (a 128-bit coefficient and a 32-bit result),
            // addressed in one allocation: at most `isize::MAX / 20` rows.
            let max_rows = (isize::MAX as u64) / 20;
            if blocks * W as f64 > max_rows as f64 {
                return Err(Error::TooLarge {
                    what: bloomkit_core::Unit::Bits,
                    size: blocks * W as f64 * f64::from(upper),
                    max: max_rows * u64::from(upper),
                });
            }
            blocks as u64
        };
        let mut layout = RibbonLayout {
            seed: 0,
            blocks,
            upper_columns: upper,
            upper_start: 0,
            items: 0,
            target_fpr: fpr,
        };
        if blocks > 0 {
            // Start rows in upper blocks needed, as a share `u` of all start rows.
            let hi = (-f64::from(upper)).exp2();
            let lo = (-f64::from(upper - 1)).exp2();
            let u = if lo <= fpr {
                0.0
            } else {
                ((lo - fpr) / (lo - hi)).clamp(0.0, 1.0)
            };
            let starts = layout.starts() as f64;
            // Upper blocks from the last one down: the last holds one start row, the others 128.
            let needed = (u * starts - 1.0).max(0.0);
            let upper_blocks = if u == 0.0 {
                0
            } else {
                1 + (needed / W as f64).ceil() as u64
            };
            layout.upper_start = blocks - upper_blocks.min(blocks);
        }
        Ok(layout)
    }

    /// Rows.
    #[inline(always)]
    fn rows(&self) -> u64 {
        self.blocks * W
    }

    /// Possible start rows: `0..=rows - 128`.
    #[inline(always)]
    fn starts(&self) -> u64 {
        self.rows().saturating_sub(W - 1)
    }

    /// Start rows in upper blocks.
    fn upper_starts(&self) -> u64 {
        if self.blocks == 0 || self.upper_start >= self.blocks {
            0
        } else {
            (self.blocks - 1 - self.upper_start) * W + 1
        }
    }

    /// Result bits kept by `block`.
    #[inline(always)]
    fn columns(&self, block: u64) -> u32 {
        self.upper_columns - u32::from(block < self.upper_start)
    }

    /// Where `block`'s column words start (in `u64`s; two per column).
    #[inline(always)]
    fn offset(&self, block: u64) -> usize {
        let lower = u64::from(self.upper_columns - 1);
        let upper = u64::from(self.upper_columns);
        let off = if block < self.upper_start {
            block * lower
        } else {
            self.upper_start * lower + (block - self.upper_start) * upper
        };
        (off * 2) as usize
    }

    /// The number of `u64` words of the solution: the blocks' columns, and one zero column
    /// after them, so that a lookup may read a lower block's columns as if it kept as many
    /// as an upper block (the extra bits are masked off) without leaving the words.
    pub(crate) fn words(&self) -> usize {
        if self.blocks == 0 {
            0
        } else {
            self.offset(self.blocks) + 2
        }
    }

    /// The model rate: start rows in upper blocks at `2^-r`, the others at `2^-(r-1)`.
    pub(crate) fn fpr(&self) -> f64 {
        if self.items == 0 {
            return 0.0;
        }
        let u = self.upper_starts() as f64 / self.starts() as f64;
        let hi = (-f64::from(self.upper_columns)).exp2();
        let lo = (-f64::from(self.upper_columns - 1)).exp2();
        u * hi + (1.0 - u) * lo
    }

    /// Checks a decoded layout, so that lookups stay in bounds.
    #[cfg(feature = "serde")]
    pub(crate) fn check(&self, words: usize) -> Result<(), Error> {
        let bad = |what: String| {
            Err(Error::Decode(bloomkit_core::DecodeError::Invalid(format!(
                "ribbon: {what}"
            ))))
        };
        if !(1..=MAX_COLUMNS).contains(&self.upper_columns) {
            return bad(format!("{} result bits (1..=32)", self.upper_columns));
        }
        if self.upper_start > self.blocks {
            return bad("the first upper block is past the last".into());
        }
        if self.blocks > (isize::MAX as u64) / (W * 20) {
            return bad(format!("{} blocks", self.blocks));
        }
        if (self.blocks == 0) != (self.items == 0) || self.items > self.rows() {
            return bad(format!("{} keys in {} rows", self.items, self.rows()));
        }
        if check_fpr(self.target_fpr).is_err() {
            return bad(format!("target rate {}", self.target_fpr));
        }
        if self.words() != words {
            return bad(format!("{words} words for a layout of {}", self.words()));
        }
        Ok(())
    }

    /// A key's equation: start row, coefficients (bit 0 set) and result bits.
    #[inline(always)]
    fn equation(&self, hash: u64) -> (u64, u128, u32) {
        self.equation_mixed(mix(hash, self.seed))
    }

    /// [`equation`](Self::equation) of the hash whose mix with the seed is `x`; the start
    /// row grows with `x`.
    #[inline(always)]
    fn equation_mixed(&self, x: u64) -> (u64, u128, u32) {
        let start = mul_high(x, self.starts());
        let y = mix(x, 0x9e37_79b9_7f4a_7c15);
        let coefficients =
            (u128::from(y) << 64) | u128::from(x.wrapping_mul(0xa076_1d64_78bd_642f) | 1);
        let result = mix(y, 0xe703_7ed1_a0b4_28db) as u32;
        (start, coefficients, result)
    }
}

/// The lookup of a ribbon filter over its solution words, owned or borrowed.
#[derive(Clone, Copy)]
pub(crate) struct RibbonLookup<'a> {
    pub(crate) layout: RibbonLayout,
    pub(crate) words: &'a [u64],
}

impl RibbonLookup<'_> {
    #[inline(always)]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        if self.layout.items == 0 {
            return false;
        }
        let (start, c, result) = self.layout.equation(hash);
        with_popcnt(
            #[inline(always)]
            || self.check(start, c, result),
        )
    }

    /// Whether the solution gives `result` (in as many bits as the start block keeps).
    ///
    /// The key's 128 rows are rows `shift..128` of its block and `0..shift` of the next:
    /// the coefficients are split the same way (`c << shift`, `c >> (128 - shift)`), so
    /// each column's parity is that of four word ANDs, with no shift of the solution.
    #[inline(always)]
    fn check(&self, start: u64, c: u128, result: u32) -> bool {
        let block = start / W;
        let shift = (start % W) as u32;
        // Every block is read as if it kept the upper count of columns (a lower block's
        // last one is the next block's first, or the padding): one unrolled loop per filter,
        // so the branch below is always predicted; the block's own count masks the result.
        let this = &self.words[self.layout.offset(block)..];
        let low = c << shift;
        let (next, high) = if shift == 0 {
            // No row in the next block (which may not exist): its mask is empty.
            (this, 0)
        } else {
            (
                &self.words[self.layout.offset(block + 1)..],
                c >> (128 - shift),
            )
        };
        let masks = [
            low as u64,
            (low >> 64) as u64,
            high as u64,
            (high >> 64) as u64,
        ];
        let got = match self.layout.upper_columns {
            1 => parities::<1>(this, next, masks),
            2 => parities::<2>(this, next, masks),
            3 => parities::<3>(this, next, masks),
            4 => parities::<4>(this, next, masks),
            5 => parities::<5>(this, next, masks),
            6 => parities::<6>(this, next, masks),
            7 => parities::<7>(this, next, masks),
            8 => parities::<8>(this, next, masks),
            9 => parities::<9>(this, next, masks),
            10 => parities::<10>(this, next, masks),
            11 => parities::<11>(this, next, masks),
            12 => parities::<12>(this, next, masks),
            13 => parities::<13>(this, next, masks),
            14 => parities::<14>(this, next, masks),
            15 => parities::<15>(this, next, masks),
            16 => parities::<16>(this, next, masks),
            17 => parities::<17>(this, next, masks),
            18 => parities::<18>(this, next, masks),
            19 => parities::<19>(this, next, masks),
            20 => parities::<20>(this, next, masks),
            21 => parities::<21>(this, next, masks),
            22 => parities::<22>(this, next, masks),
            23 => parities::<23>(this, next, masks),
            24 => parities::<24>(this, next, masks),
            25 => parities::<25>(this, next, masks),
            26 => parities::<26>(this, next, masks),
            27 => parities::<27>(this, next, masks),
            28 => parities::<28>(this, next, masks),
            29 => parities::<29>(this, next, masks),
            30 => parities::<30>(this, next, masks),
            31 => parities::<31>(this, next, masks),
            32 => parities::<32>(this, next, masks),
            _ => 0,
        };
        let columns = self.layout.columns(block);
        let mask = if columns == 32 {
            u32::MAX
        } else {
            (1u32 << columns) - 1
        };
        (got ^ result) & mask == 0
    }

    #[inline]
    pub(crate) fn contains_batch(&self, hashes: impl Iterator<Item = u64>, out: &mut Vec<bool>) {
        out.reserve(hashes.size_hint().0);
        pipeline_groups(
            out,
            hashes,
            |_, hash| {
                if self.layout.items == 0 {
                    return (u64::MAX, 0, 0);
                }
                let (start, c, result) = self.layout.equation(hash);
                let at = self.layout.offset(start / W);
                prefetch(&self.words[at]);
                if start % W != 0 {
                    prefetch(&self.words[self.layout.offset(start / W + 1)]);
                }
                (start, c, result)
            },
            |out, group| {
                with_popcnt(
                    #[inline(always)]
                    || {
                        for &(start, c, result) in group {
                            out.push(start != u64::MAX && self.check(start, c, result));
                        }
                    },
                );
            },
        );
    }
}

/// The parities of `N` columns, each over the key's rows: `this` and `next` are the start
/// block's and the next block's column words (two per column, at least `2 N` each), `masks`
/// the coefficients split between them. A constant `N`, so the loop unrolls with one bounds
/// check per block.
#[inline(always)]
fn parities<const N: usize>(this: &[u64], next: &[u64], masks: [u64; 4]) -> u32 {
    let (this, next) = (&this[..2 * N], &next[..2 * N]);
    let mut got = 0u32;
    for j in 0..N {
        let v = (this[2 * j] & masks[0])
            ^ (this[2 * j + 1] & masks[1])
            ^ (next[2 * j] & masks[2])
            ^ (next[2 * j + 1] & masks[3]);
        got |= (v.count_ones() & 1) << j;
    }
    got
}

/// Builds the solution words for `hashes` at `fpr`: banding, then back-substitution, for the
/// first seed that bands every key (growing the rows after every few failures).
fn build(mut hashes: Vec<u64>, fpr: f64) -> Result<(RibbonLayout, Vec<u64>), Error> {
    let given = hashes.len() as u64;
    let mut rows_per_key = 1.0 + OVERHEAD;
    let mut layout = RibbonLayout::sized(hashes.len(), fpr, rows_per_key)?;
    if hashes.is_empty() {
        return Ok((layout, Vec::new()));
    }
    let mut band = Band::new(layout.rows() as usize)?;
    let mut order: Vec<u64> = common::zeroed(hashes.len())?;
    let mut deduplicated = false;
    for (attempt, seed) in Seeds::new().take(MAX_ATTEMPTS as usize).enumerate() {
        let attempt = attempt as u32;
        if attempt > 0 && attempt % ATTEMPTS_PER_SIZE == 0 {
            rows_per_key *= GROWTH;
            layout = RibbonLayout::sized(hashes.len(), fpr, rows_per_key)?;
            band = Band::new(layout.rows() as usize)?;
        }
        layout.seed = seed;
        if let Some(items) = band.add_all(&layout, &hashes, &mut order[..hashes.len()]) {
            // More than one key in eight repeated: the rows were sized for keys that are
            // not there. Build again for the distinct keys (a sort, paid only by such
            // inputs).
            if !deduplicated && (given - items) * 8 > given {
                hashes.sort_unstable();
                hashes.dedup();
                deduplicated = true;
                layout = RibbonLayout::sized(hashes.len(), fpr, rows_per_key)?;
                band = Band::new(layout.rows() as usize)?;
                continue;
            }
            layout.items = items;
            return Ok((layout, band.solve(&layout)?));
        }
        band.clear();
    }
    Err(Error::ConstructionFailed {
        variant: Variant::Ribbon,
        items: given,
        attempts: MAX_ATTEMPTS,
    })
}

/// The banded system: per row, the equation whose first coefficient is there (or none).
struct Band {
    coefficients: Vec<u128>,
    results: Vec<u32>,
}

impl Band {
    fn new(rows: usize) -> Result<Band, Error> {
        Ok(Band {
            coefficients: common::zeroed(rows)?,
            results: common::zeroed(rows)?,
        })
    }

    fn clear(&mut self) {
        self.coefficients.fill(0);
        self.results.fill(0);
    }

    /// Adds every key's equation; the number of independent ones, or `None` when one
    /// contradicts the others (the seed fails). The keys go in by start row (bucketed by
    /// their mixed hashes' top bits into `order`, scratch as long as `hashes`), so the band
    /// is walked in order rather than at random: the same solution (the pivot rows, and the
    /// solution with every free row 0, do not depend on the order equations arrive in),
    /// a cache line reused by the next keys instead of a miss a key.
    fn add_all(&mut self, layout: &RibbonLayout, hashes: &[u64], order: &mut [u64]) -> Option<u64> {
        // About 64 rows a bucket.
        let bits = (layout.rows() / 64)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(1, 20);
        common::mixed_by_top_bits(hashes, layout.seed, bits, order);
        let mut independent = 0u64;
        for &x in order.iter() {
            let (start, c, result) = layout.equation_mixed(x);
            match self.add(start as usize, c, result) {
                Some(true) => independent += 1,
                Some(false) => {}
                None => return None,
            }
        }
        Some(independent)
    }

    /// Reduces one equation against the band until it finds an empty row: `Some(true)`
    /// when it was stored, `Some(false)` when it reduced to `0 = 0` (a duplicate, or implied
    /// by the others), `None` when it reduced to `0 = 1`.
    #[inline(always)]
    fn add(&mut self, mut row: usize, mut c: u128, mut result: u32) -> Option<bool> {
        loop {
            let existing = self.coefficients[row];
            if existing == 0 {
                self.coefficients[row] = c;
                self.results[row] = result;
                return Some(true);
            }
            c ^= existing;
            result ^= self.results[row];
            if c == 0 {
                return if result == 0 { Some(false) } else { None };
            }
            let skip = c.trailing_zeros();
            row += skip as usize;
            c >>= skip;
        }
    }

    /// Back-substitution, from the last row up; a row without an equation gets 0. Each
    /// column's last 128 solved rows live in one `u128` window, which is, at each block's
    /// first row, that block's column word.
    fn solve(&self, layout: &RibbonLayout) -> Result<Vec<u64>, Error> {
        let mut words: Vec<u64> = common::zeroed(layout.words())?;
        let columns = layout.upper_columns as usize;
        let mut window = [0u128; MAX_COLUMNS as usize];
        for row in (0..layout.rows() as usize).rev() {
            let c = self.coefficients[row];
            let result = self.results[row];
            for (j, w) in window[..columns].iter_mut().enumerate() {
                let shifted = *w << 1;
                let z = if c == 0 {
                    0
                } else {
                    ((c & shifted).count_ones() ^ (result >> j)) & 1
                };
                *w = shifted | u128::from(z);
            }
            if row as u64 % W == 0 {
                let block = row as u64 / W;
                let at = layout.offset(block);
                for (j, w) in window[..layout.columns(block) as usize].iter().enumerate() {
                    words[at + 2 * j] = *w as u64;
                    words[at + 2 * j + 1] = (*w >> 64) as u64;
                }
            }
        }
        Ok(words)
    }
}

/// A standard ribbon filter over keys `K`: a static filter, built once from its keys
/// ([`from_keys_with_fpr`](Self::from_keys_with_fpr)) or their 64-bit hashes, then
/// read-only, about 30% smaller than a Bloom filter at the same rate.
///
/// Any rate from 0.5 down to 2^-32, with fractional bits per key: at 1% about 7.0 bits
/// per key, at 0.1% about 10.5 (a Bloom filter needs 9.6 and 14.4). A lookup reads one or
/// two adjacent blocks of the solution; building costs more CPU than a binary fuse filter.
/// See the module docs of the crate for the rate model.
///
/// # Examples
///
/// ```
/// use bloomkit_static::RibbonFilter;
///
/// let urls = ["https://a.example/", "https://b.example/"];
/// let filter = RibbonFilter::<str>::from_keys_with_fpr(urls, 0.01)?;
/// assert!(filter.contains("https://a.example/"));
/// assert!(filter.estimated_fpr() <= 0.01);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[derive_where(Clone, PartialEq; S)]
pub struct RibbonFilter<K: ?Sized, S = Xxh3Builder> {
    pub(crate) layout: RibbonLayout,
    pub(crate) words: Vec<u64>,
    pub(crate) hasher: S,
    pub(crate) key: PhantomData<fn(&K)>,
}

/// The rate [`RibbonFilter::from_keys`] sizes for.
pub const DEFAULT_RIBBON_FPR: f64 = 0.01;

impl<K: Hash + ?Sized> RibbonFilter<K> {
    /// A filter of `keys` (duplicates allowed) at a 1% false-positive rate
    /// ([`DEFAULT_RIBBON_FPR`]).
    ///
    /// # Errors
    /// As [`from_keys_with_fpr`](Self::from_keys_with_fpr).
    pub fn from_keys<I>(keys: I) -> Result<Self, Error>
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        Self::from_keys_with_fpr(keys, DEFAULT_RIBBON_FPR)
    }

    /// A filter of `keys` (duplicates allowed) whose false-positive rate is at most `fpr`,
    /// hashed with bloomkit's default hasher.
    ///
    /// Memory while building: about 38 bytes per key at its peak (measured at 10^7 keys), the result included (the hashes,
    /// as given and mixed in start-row order, and per row a 128-bit coefficient and a 32-bit
    /// result).
    ///
    /// # Errors
    /// [`Error::InvalidFpr`] outside (0, 1); [`Error::FprBelowMinimum`] below 2^-32;
    /// [`Error::ConstructionFailed`] when 64 attempts fail (with distinct keys this does
    /// not happen: the rows grow by 3% every 4 failed seeds); [`Error::AllocationFailed`].
    pub fn from_keys_with_fpr<I>(keys: I, fpr: f64) -> Result<Self, Error>
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        Self::from_keys_with_hasher(keys, fpr, Xxh3Builder::default())
    }

    /// A filter of the keys whose hashes are `hashes` (as
    /// [`hash_key`](bloomkit_core::Lookup::hash_key) gives them with the default hasher).
    ///
    /// # Errors
    /// As [`from_keys_with_fpr`](Self::from_keys_with_fpr).
    pub fn from_hashes(hashes: impl IntoIterator<Item = u64>, fpr: f64) -> Result<Self, Error> {
        Self::from_hashes_with_hasher(hashes, fpr, Xxh3Builder::default())
    }
}

impl<K: ?Sized, S: BuildHasher> RibbonFilter<K, S> {
    /// A filter of `keys` at rate `fpr`, hashed with `hasher`.
    ///
    /// # Errors
    /// As [`from_keys_with_fpr`](RibbonFilter::from_keys_with_fpr).
    pub fn from_keys_with_hasher<I>(keys: I, fpr: f64, hasher: S) -> Result<Self, Error>
    where
        K: Hash,
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        check_fpr(fpr)?;
        let hashes = common::hash_keys::<K, _, _>(keys, &hasher)?;
        Self::from_hash_vec(hashes, fpr, hasher)
    }

    /// A filter of the keys whose hashes under `hasher` are `hashes`, at rate `fpr`.
    ///
    /// # Errors
    /// As [`from_keys_with_fpr`](RibbonFilter::from_keys_with_fpr).
    pub fn from_hashes_with_hasher(
        hashes: impl IntoIterator<Item = u64>,
        fpr: f64,
        hasher: S,
    ) -> Result<Self, Error> {
        check_fpr(fpr)?;
        let hashes = common::collect(hashes.into_iter())?;
        Self::from_hash_vec(hashes, fpr, hasher)
    }

    fn from_hash_vec(hashes: Vec<u64>, fpr: f64, hasher: S) -> Result<Self, Error> {
        let (layout, words) = build(hashes, fpr)?;
        Ok(RibbonFilter {
            layout,
            words,
            hasher,
            key: PhantomData,
        })
    }
}

/// The read side of a ribbon filter and its view (`$ty` has `layout`, `words` and
/// `hasher`): one definition for both.
macro_rules! ribbon_read_side {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<$($lt,)? K: ?Sized, S: ::core::hash::BuildHasher> $ty<$($lt,)? K, S> {
            $crate::key_lookups!();
        }

        impl<$($lt,)? K: ?Sized, S> $ty<$($lt,)? K, S> {
            #[inline(always)]
            pub(crate) fn lookup(&self) -> $crate::ribbon::RibbonLookup<'_> {
                $crate::ribbon::RibbonLookup {
                    layout: self.layout,
                    words: self.words.as_ref(),
        }
            }

            $crate::hash_lookups!();

            /// The number of distinct keys the filter holds (equations that were independent of
            /// the others: every distinct key, unless two share their 64-bit hash).
            pub fn len(&self) -> u64 {
                self.layout.items
            }

            /// Bits of solution per distinct key.
            pub fn bits_per_key(&self) -> f64 {
                (self.layout.words() * 64) as f64 / self.layout.items.max(1) as f64
            }

            /// The model false-positive rate (see the crate docs): at most the target.
            pub fn estimated_fpr(&self) -> f64 {
                self.layout.fpr()
            }

            pub(crate) fn target(&self) -> Option<f64> {
                Some(self.layout.target_fpr)
            }
        }
    };
}
#[cfg(feature = "serde")]
pub(crate) use ribbon_read_side;

ribbon_read_side!(RibbonFilter);

impl<K: ?Sized, S> RibbonFilter<K, S> {
    /// Heap memory held: the solution.
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

impl<K: ?Sized, S: fmt::Debug> fmt::Debug for RibbonFilter<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RibbonFilter")
            .field("items", &self.layout.items)
            .field("blocks", &self.layout.blocks)
            .field("upper_columns", &self.layout.upper_columns)
            .field("upper_start", &self.layout.upper_start)
            .field("target_fpr", &self.layout.target_fpr)
            .field("seed", &self.layout.seed)
            .field("hasher", &self.hasher)
            .finish()
    }
}

crate::impl_static_lookup!([S: BuildHasher] RibbonFilter<K, S>, key = K);

#[cfg(test)]
mod tests {
    use super::*;

    /// Banding by start row (the build) and in the keys' own order (at random rows) give
    /// the same solution, word for word: the order only decides which memory is touched
    /// when. Keys with duplicates (few, and enough to resize), several sizes and rates.
    #[test]
    fn banding_in_start_order_gives_the_solution_of_any_order() {
        // (keys, rate, repeated keys): a third repeated takes the build's path that sizes
        // again for the distinct keys.
        for &(n, fpr, repeated) in &[
            (1_000usize, 0.01, 100usize),
            (30_000, 0.001, 3_000),
            (100_000, 0.2, 10_000),
            (20_000, 0.01, 7_000),
        ] {
            let mut hashes: Vec<u64> = (0..n as u64).map(|i| mix(i, 99)).collect();
            hashes.extend_from_within(..repeated);
            let (layout, words) = build(hashes.clone(), fpr).unwrap();
            let mut band = Band::new(layout.rows() as usize).unwrap();
            let mut independent = 0;
            for &h in &hashes {
                let (start, c, result) = layout.equation(h);
                if band
                    .add(start as usize, c, result)
                    .expect("the build's seed bands")
                {
                    independent += 1;
                }
            }
            assert_eq!(independent, layout.items, "n = {n}");
            assert_eq!(band.solve(&layout).unwrap(), words, "n = {n}, fpr = {fpr}");
        }
    }

    #[test]
    fn layout_meets_the_target_with_fractional_bits() {
        for &(p, max_bits) in &[(0.01, 7.3), (0.001, 10.7), (0.05, 4.8), (0.5, 1.2)] {
            let l = RibbonLayout::sized(1_000_000, p, 1.0 + OVERHEAD).unwrap();
            let l = RibbonLayout { items: 1, ..l };
            assert!(l.fpr() <= p * (1.0 + 1e-9), "{p}: {}", l.fpr());
            assert!(l.fpr() >= p * 0.98, "{p}: {}", l.fpr());
            let bits = l.words() as f64 * 64.0 / 1e6;
            assert!(bits <= max_bits, "{p}: {bits}");
        }
    }

    #[test]
    fn many_duplicates_do_not_inflate_the_rows() {
        let keys: Vec<u64> = (0..100_000u64).flat_map(|k| [k; 10]).collect();
        let f = RibbonFilter::<u64>::from_keys(&keys).unwrap();
        assert_eq!(f.len(), 100_000);
        assert!(f.bits_per_key() < 7.3, "{}", f.bits_per_key());
        assert!(keys.iter().all(|k| f.contains(k)));
    }

    #[test]
    fn tiny_and_duplicate_sets_build() {
        for n in 0..300u64 {
            let keys: Vec<u64> = (0..n).chain(0..n / 2).collect();
            let f = RibbonFilter::<u64>::from_keys(&keys).unwrap();
            assert_eq!(f.len(), n);
            assert!(keys.iter().all(|k| f.contains(k)), "n = {n}");
        }
    }

    /// Failure rate of one seed by size, at the chosen overhead (not run by default).
    #[test]
    #[ignore]
    fn ribbon_failure_rates() {
        for &n in &[1_000usize, 10_000, 100_000, 1_000_000] {
            for &p in &[0.01, 0.001] {
                let mut failed = 0;
                let trials = if n >= 1_000_000 { 10 } else { 100 };
                for t in 0..trials as u64 {
                    let hashes: Vec<u64> = (0..n as u64).map(|i| mix(i, t)).collect();
                    let mut layout = RibbonLayout::sized(n, p, 1.0 + OVERHEAD).unwrap();
                    layout.seed = t;
                    let mut band = Band::new(layout.rows() as usize).unwrap();
                    let mut order = vec![0; n];
                    if band.add_all(&layout, &hashes, &mut order).is_none() {
                        failed += 1;
                    }
                }
                println!("n = {n}, p = {p}: {failed}/{trials} seeds failed");
            }
        }
    }
}
