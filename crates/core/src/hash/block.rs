//! Block layouts: a key's k positions inside one 512-bit block (a cache line).

use super::probe::{reduce, splitmix};

/// The word whose seven 9-bit chunks (from the low end) are positions `7 * round ..
/// 7 * round + 7` of a key in its block (see [`block_positions`]).
#[inline(always)]
pub(crate) const fn block_word(hash: u64, round: u64) -> u64 {
    if round == 0 {
        hash.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    } else {
        splitmix(hash.wrapping_add(round.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    }
}

/// Bits in one block of a blocked Bloom filter: a 64-byte cache line.
pub const BLOCK_BITS: u64 = 512;

/// Where a key goes in a blocked Bloom filter (Putze, Sanders & Singler 2007): one 512-bit
/// block, chosen from the high bits of the key's hash by [`reduce`], and k bit positions in
/// it, as a mask of eight words (what an insert ORs into the block; lookups test the
/// positions one at a time with [`block_contains`], stopping early).
///
/// The positions are 9-bit chunks of a stream derived from the hash (seven per 64-bit
/// word, the stream refilled by a multiplicative mix), drawn uniformly and independently
/// with replacement, which is what [`crate::sizing::blocked_fpr_model`] assumes.
///
/// # Examples
///
/// ```
/// use bloomkit_core::hash::BlockProbe;
///
/// let probe = BlockProbe::new(0x0123_4567_89ab_cdef, 1_000, 7);
/// assert!(probe.block < 1_000);
/// let bits: u32 = probe.mask.iter().map(|w| w.count_ones()).sum();
/// assert!((1..=7).contains(&bits)); // 7 positions, a few may coincide
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockProbe {
    /// The block, in `[0, blocks)`.
    pub block: u64,
    /// The key's bits in that block, word by word.
    pub mask: [u64; 8],
}

impl BlockProbe {
    /// The block among `blocks` and the `k` positions of the key whose hash is `hash`.
    ///
    /// # Panics
    /// If `blocks` is 0 (no block to choose).
    #[inline]
    pub fn new(hash: u64, blocks: u64, k: u32) -> BlockProbe {
        assert!(blocks > 0, "a blocked filter needs at least one block");
        let mut mask = [0u64; 8];
        for position in block_positions(hash, k) {
            mask[(position >> 6) as usize] |= 1 << (position & 63);
        }
        BlockProbe {
            block: reduce(hash, blocks),
            mask,
        }
    }
}

/// The `k` bit positions in `[0, 512)` of the key whose hash is `hash`, inside its block
/// (see [`BlockProbe`]), one at a time, so a lookup can stop at the first clear bit.
///
/// The first word is the hash times an odd constant: its low 63 bits are a bijection of the
/// hash's, so its seven 9-bit chunks are uniform and independent. Each further word is a
/// splitmix64 round of the whole hash (not of the shifted-out remainder, which by then holds
/// a single bit).
#[inline]
pub fn block_positions(hash: u64, k: u32) -> impl Iterator<Item = u64> {
    let mut word = block_word(hash, 0);
    let mut left_in_word = 7;
    let mut round = 0u64;
    (0..k).map(move |_| {
        if left_in_word == 0 {
            round += 1;
            word = block_word(hash, round);
            left_in_word = 7;
        }
        let position = word & (BLOCK_BITS - 1);
        word >>= 9;
        left_in_word -= 1;
        position
    })
}

/// The eight words of one block, read one at a time: what [`block_contains`] and
/// [`block_contains_all`] test. A plain block reads its words; a block of atomics (a filter
/// that threads insert into through `&self`) loads each word it needs, in place, with no
/// copy of the block.
pub trait BlockWords {
    /// Word `i` of the block, `i < 8`.
    fn word(&self, i: usize) -> u64;
}

impl BlockWords for [u64; 8] {
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        self[i]
    }
}

#[cfg(target_has_atomic = "64")]
impl BlockWords for [core::sync::atomic::AtomicU64; 8] {
    /// A `Relaxed` load: bits only go from 0 to 1 while threads insert, so any value read
    /// holds every bit set by an insert that happened before the read.
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        self[i].load(core::sync::atomic::Ordering::Relaxed)
    }
}

/// Whether all `k` positions of the key whose hash is `hash` are set in `block`, testing
/// every position without a branch on any of them.
///
/// For blocks already in L1, as batched lookups have them after their prefetch: there, what
/// costs is a mispredicted branch on an absent key, and this has none. (On a warm filter of
/// 10^6 keys, one lookup at a time: absent keys 7.9 ns against 13.8 for [`block_contains`],
/// members 8.2 against 7.2; on cold lines the early exit won, see `docs/performance.md`.)
#[inline]
pub fn block_contains_all<B: BlockWords + ?Sized>(block: &B, hash: u64, k: u32) -> bool {
    let has = |p: u64| block.word((p >> 6) as usize) & (1 << (p & 63)) != 0;
    // The first seven positions straight from one word (as `block_positions` draws them),
    // without the iterator's refill bookkeeping; the rest, for k > 7, through it.
    let mut word = hash.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut all = true;
    for _ in 0..k.min(7) {
        all &= has(word & (BLOCK_BITS - 1));
        word >>= 9;
    }
    if k > 7 {
        all &= block_positions(hash, k)
            .skip(7)
            .fold(true, |all, p| all & has(p));
    }
    all
}

/// Whether all `k` positions of the key whose hash is `hash` are set in `block` (its block
/// of a blocked filter), testing them one at a time and stopping at the first clear one.
/// The first seven positions come from one multiplication, so testing one block costs one
/// cache line and, for an absent key, usually one or two bit tests.
#[inline]
pub fn block_contains<B: BlockWords + ?Sized>(block: &B, hash: u64, k: u32) -> bool {
    let has = |p: u64| block.word((p >> 6) as usize) & (1 << (p & 63)) != 0;
    let mut word = hash.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // The first two positions together, with one branch: an absent key fails it three
    // times in four, and one hard-to-predict branch costs less than two. With k = 1 the
    // loop below tests the one position (it once tested none, and every key was found).
    let mut tested = 0;
    if k >= 2 {
        if !(has(word & (BLOCK_BITS - 1)) & has((word >> 9) & (BLOCK_BITS - 1))) {
            return false;
        }
        word >>= 18;
        tested = 2;
    }
    for _ in tested..k.min(7) {
        if !has(word & (BLOCK_BITS - 1)) {
            return false;
        }
        word >>= 9;
    }
    k <= 7 || block_positions(hash, k).skip(7).all(has)
}
