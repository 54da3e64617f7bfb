//! A fixed-size array of bits in `u64` words, with its count of set bits kept up to date.
//!
//! The storage behind the Bloom-style filters and the bitmap. It allocates fallibly (a size
//! the allocator refuses is an [`Error`], not an abort) and keeps the number of set bits in
//! O(1), which the cardinality and fill-based FPR estimates read.

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::Error;

/// The largest number of bits any bloomkit structure may hold on this platform: `2^63`,
/// or fewer where the address space is smaller (`isize::MAX` bytes of words).
pub const MAX_BITS: u64 = {
    let by_address_space = (isize::MAX as u64 / 8).saturating_mul(64);
    let by_arithmetic = 1 << 63;
    if by_address_space < by_arithmetic {
        by_address_space
    } else {
        by_arithmetic
    }
};

/// How many `u64` words hold `bits` bits.
#[inline]
pub const fn words_for(bits: u64) -> u64 {
    bits.div_ceil(64)
}

/// `len` bits, all zero, or the reason they cannot be had.
///
/// # Errors
/// [`Error::TooLarge`] past [`MAX_BITS`]; [`Error::AllocationFailed`] when the allocator
/// refuses.
pub fn zeroed_words(bits: u64) -> Result<Vec<u64>, Error> {
    if bits > MAX_BITS {
        return Err(Error::TooLarge {
            what: crate::Unit::Bits,
            size: bits as f64,
            max: MAX_BITS,
        });
    }
    filled_vec(words_for(bits), || 0)
}

/// Whether filters allocated from now on, in this process, ask Linux for transparent huge
/// pages (on by default): memory of two 2 MiB pages or more is advised
/// (`madvise(MADV_HUGEPAGE)`) before its first write, so that lookups in a filter larger than
/// the TLB's reach skip most page walks (10-35% less time a lookup at 10^7 keys:
/// `docs/performance.md`, "Huge pages"). Turn it off where huge pages are unwelcome (a
/// process that forks often, an allocator told to avoid them, a memory budget counted in
/// 4 KiB pages); filters already allocated keep their pages. Off Linux it changes nothing.
///
/// # Examples
///
/// ```
/// bloomkit_core::bits::set_huge_pages(false);
/// assert!(!bloomkit_core::bits::huge_pages());
/// bloomkit_core::bits::set_huge_pages(true);
/// ```
pub fn set_huge_pages(enabled: bool) {
    crate::arch::HUGE_PAGES.store(enabled, core::sync::atomic::Ordering::Relaxed);
}

/// Whether filters allocated now ask for huge pages ([`set_huge_pages`]).
pub fn huge_pages() -> bool {
    crate::arch::HUGE_PAGES.load(core::sync::atomic::Ordering::Relaxed)
}

/// `len` values made by `fill`, in memory asked of the allocator fallibly: how every filter
/// allocates its bits, blocks or counters.
///
/// # Errors
/// [`Error::AllocationFailed`] when the allocator refuses (including a `len` past `usize`).
pub fn filled_vec<T>(len: u64, fill: impl FnMut() -> T) -> Result<Vec<T>, Error> {
    let failed = || Error::AllocationFailed {
        bytes: len.saturating_mul(core::mem::size_of::<T>() as u64),
    };
    let n = usize::try_from(len).map_err(|_| failed())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| failed())?;
    // Before the first write, so that a large filter's pages are huge from their first
    // fault (a lookup in it then misses the TLB far less often).
    crate::arch::advise_huge_pages(&mut v.spare_capacity_mut()[..n]);
    v.resize_with(n, fill);
    Ok(v)
}

/// Borrowed bits: `len` bits in `u64` words, least significant bit first, laid out as
/// [`BitArray`]'s (for example in place in a memory-mapped file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitSlice<'a> {
    words: &'a [u64],
    len: u64,
}

impl<'a> BitSlice<'a> {
    /// `len` bits held by `words`, checked as [`BitArray::from_words`] checks them (exactly
    /// enough words, no bit set at or past `len`) in O(1).
    ///
    /// # Errors
    /// As [`BitArray::from_words`].
    pub fn new(words: &'a [u64], len: u64) -> Result<BitSlice<'a>, Error> {
        if len > MAX_BITS {
            return Err(Error::TooLarge {
                what: crate::Unit::Bits,
                size: len as f64,
                max: MAX_BITS,
            });
        }
        if words.len() as u64 != words_for(len) {
            return Err(Error::WordCount {
                bits: len,
                expected: words_for(len),
                found: words.len() as u64,
            });
        }
        let tail = len % 64;
        if let (Some(&last), true) = (words.last(), tail != 0) {
            if last >> tail != 0 {
                return Err(Error::StrayBits { bits: len });
            }
        }
        Ok(BitSlice { words, len })
    }

    /// The number of bits.
    #[inline]
    pub fn len(self) -> u64 {
        self.len
    }

    /// Whether there are no bits at all.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// Bit `i`.
    ///
    /// # Panics
    /// If `i` is not below [`len`](Self::len)'s word count.
    #[inline]
    pub fn get(self, i: u64) -> bool {
        debug_assert!(i < self.len);
        self.words[(i >> 6) as usize] & (1 << (i & 63)) != 0
    }

    /// Requests the cache line holding bit `i` ([`crate::batch::prefetch`]).
    #[inline]
    pub fn prefetch(self, i: u64) {
        crate::batch::prefetch(&self.words[(i >> 6) as usize]);
    }

    /// The number of set bits, counted (O(len)).
    pub fn count_ones(self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The words.
    #[inline]
    pub fn words(self) -> &'a [u64] {
        self.words
    }
}

/// A fixed number of bits, stored in `u64` words, least significant bit first.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BitArray {
    words: Vec<u64>,
    len: u64,
    ones: u64,
}

impl BitArray {
    /// `len` zero bits.
    ///
    /// # Errors
    /// As [`zeroed_words`].
    pub fn new(len: u64) -> Result<BitArray, Error> {
        Ok(BitArray {
            words: zeroed_words(len)?,
            len,
            ones: 0,
        })
    }

    /// Rebuilds an array from its words, checking that there are exactly enough of them and
    /// that no bit at or past `len` is set.
    ///
    /// # Errors
    /// [`Error::WordCount`] on a length mismatch, [`Error::StrayBits`] for bits set past
    /// `len`, [`Error::TooLarge`] past [`MAX_BITS`].
    pub fn from_words(words: Vec<u64>, len: u64) -> Result<BitArray, Error> {
        BitSlice::new(&words, len)?;
        let ones = words.iter().map(|w| u64::from(w.count_ones())).sum();
        Ok(BitArray { words, len, ones })
    }

    /// The bits, borrowed.
    #[inline]
    pub fn as_slice(&self) -> BitSlice<'_> {
        BitSlice {
            words: &self.words,
            len: self.len,
        }
    }

    /// The number of bits.
    #[inline]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the array has no bits at all.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of set bits, in O(1).
    #[inline]
    pub fn count_ones(&self) -> u64 {
        self.ones
    }

    /// Whether bit `i` is set.
    ///
    /// # Panics
    /// If `i` is not below [`len`](Self::len) (filters only pass positions from
    /// [`crate::hash::Probes`], which are).
    #[inline]
    pub fn get(&self, i: u64) -> bool {
        self.as_slice().get(i)
    }

    /// Requests the cache line holding bit `i` ([`crate::batch::prefetch`]): a hint that
    /// changes nothing.
    ///
    /// # Panics
    /// If `i` is not below [`len`](Self::len).
    #[inline]
    pub fn prefetch(&self, i: u64) {
        self.as_slice().prefetch(i);
    }

    /// Sets bit `i`; returns `true` if it was clear before.
    ///
    /// # Panics
    /// If `i` is not below [`len`](Self::len).
    #[inline]
    pub fn set(&mut self, i: u64) -> bool {
        debug_assert!(i < self.len);
        let word = &mut self.words[(i >> 6) as usize];
        let shift = i & 63;
        let old = *word;
        *word = old | (1 << shift);
        // The count comes from the word's bit, and the flag from the count: no bool is cast
        // to an integer. `ones += u64::from(was_clear); was_clear` is miscompiled in release
        // builds by rustc 1.95 and nightly 1.97 (rust-lang/rust#158206, a MIR optimisation:
        // the increment is dropped when the caller branches on the flag). Do not
        // "simplify" this back; `count_survives_callers_that_branch_on_the_flag` tests it.
        let added = !(old >> shift) & 1;
        self.ones += added;
        added != 0
    }

    /// Clears bit `i`; returns `true` if it was set before.
    ///
    /// # Panics
    /// If `i` is not below [`len`](Self::len).
    #[inline]
    pub fn unset(&mut self, i: u64) -> bool {
        debug_assert!(i < self.len);
        let word = &mut self.words[(i >> 6) as usize];
        let shift = i & 63;
        let old = *word;
        *word = old & !(1 << shift);
        // As in `set`: no bool-to-integer cast next to the returned flag
        // (rust-lang/rust#158206).
        let removed = (old >> shift) & 1;
        self.ones -= removed;
        removed != 0
    }

    /// Clears every bit, keeping the allocation.
    pub fn clear(&mut self) {
        self.words.fill(0);
        self.ones = 0;
    }

    /// The words, least significant bit first; bits past [`len`](Self::len) are zero.
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Bytes of heap memory held.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    /// ORs `words` into the array's words from word `at` on: a union with part of an array
    /// of the same length, for loading one piece at a time (bytes streamed from a network
    /// or a file) without a second copy of the whole.
    ///
    /// # Errors
    /// [`Error::WordCount`] when the words run past the array's end, [`Error::StrayBits`]
    /// when they set a bit at or past `len`; `self` is then unchanged.
    pub fn or_words(&mut self, at: usize, words: &[u64]) -> Result<(), Error> {
        let end = at
            .checked_add(words.len())
            .filter(|&end| end <= self.words.len())
            .ok_or(Error::WordCount {
                bits: self.len,
                expected: self.words.len() as u64,
                found: (at as u64).saturating_add(words.len() as u64),
            })?;
        let tail = self.len % 64;
        if tail != 0 && end == self.words.len() {
            if let Some(&last) = words.last() {
                if last >> tail != 0 {
                    return Err(Error::StrayBits { bits: self.len });
                }
            }
        }
        for (w, &o) in self.words[at..end].iter_mut().zip(words) {
            let before = w.count_ones();
            *w |= o;
            self.ones += u64::from(w.count_ones() - before);
        }
        Ok(())
    }

    /// `self |= other`, word by word.
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the arrays differ in length; `self` is then unchanged.
    pub fn union_with(&mut self, other: &BitArray) -> Result<(), Error> {
        self.combine(other, |a, b| a | b)
    }

    /// `self &= other`, word by word.
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the arrays differ in length; `self` is then unchanged.
    pub fn intersect_with(&mut self, other: &BitArray) -> Result<(), Error> {
        self.combine(other, |a, b| a & b)
    }

    /// `self &= !other`, word by word.
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the arrays differ in length; `self` is then unchanged.
    pub fn difference_with(&mut self, other: &BitArray) -> Result<(), Error> {
        self.combine(other, |a, b| a & !b)
    }

    /// `self ^= other`, word by word.
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the arrays differ in length; `self` is then unchanged.
    pub fn symmetric_difference_with(&mut self, other: &BitArray) -> Result<(), Error> {
        self.combine(other, |a, b| a ^ b)
    }

    /// The number of bits set in `self | other`, without building it (over the shorter
    /// length, if they differ).
    pub fn count_union(&self, other: &BitArray) -> u64 {
        let pairs = self.words.iter().zip(&other.words);
        pairs.map(|(a, b)| u64::from((a | b).count_ones())).sum()
    }

    /// The number of set bits below position `i` (all of them if `i >= len`), word by word:
    /// O(i / 64).
    pub fn rank(&self, i: u64) -> u64 {
        let i = i.min(self.len);
        let (whole, part) = ((i / 64) as usize, i % 64);
        let below: u64 = self.words[..whole]
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum();
        let partial = match part {
            0 => 0,
            _ => u64::from((self.words[whole] & ((1 << part) - 1)).count_ones()),
        };
        below + partial
    }

    /// The position of the `n`-th set bit (0-based), if there are more than `n`: O(len / 64).
    pub fn select(&self, n: u64) -> Option<u64> {
        let mut left = n;
        for (w, &word) in self.words.iter().enumerate() {
            let ones = u64::from(word.count_ones());
            if left < ones {
                let mut word = word;
                for _ in 0..left {
                    word &= word - 1; // clear the lowest set bit
                }
                return Some(w as u64 * 64 + u64::from(word.trailing_zeros()));
            }
            left -= ones;
        }
        None
    }

    /// The position of the lowest set bit.
    pub fn first_one(&self) -> Option<u64> {
        let (w, word) = self.words.iter().enumerate().find(|&(_, &w)| w != 0)?;
        Some(w as u64 * 64 + u64::from(word.trailing_zeros()))
    }

    /// The position of the highest set bit.
    pub fn last_one(&self) -> Option<u64> {
        let (w, word) = self
            .words
            .iter()
            .enumerate()
            .rev()
            .find(|&(_, &w)| w != 0)?;
        Some(w as u64 * 64 + 63 - u64::from(word.leading_zeros()))
    }

    /// The positions of the set bits, in ascending order.
    pub fn ones(&self) -> Ones<'_> {
        Ones {
            words: self.words.iter(),
            base: 0,
            current: 0,
            left: self.ones,
        }
    }

    fn combine(&mut self, other: &BitArray, op: impl Fn(u64, u64) -> u64) -> Result<(), Error> {
        if self.len != other.len {
            return Err(Error::Incompatible {
                what: crate::Parameter::Bits,
                left: self.len,
                right: other.len,
            });
        }
        let mut ones = 0;
        for (a, &b) in self.words.iter_mut().zip(&other.words) {
            *a = op(*a, b);
            ones += u64::from(a.count_ones());
        }
        self.ones = ones;
        Ok(())
    }
}

/// The positions of the set bits of a [`BitArray`], ascending; from [`BitArray::ones`].
#[derive(Debug, Clone)]
pub struct Ones<'a> {
    words: core::slice::Iter<'a, u64>,
    /// Position of bit 0 of `current`.
    base: u64,
    current: u64,
    left: u64,
}

impl Iterator for Ones<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        while self.current == 0 {
            self.current = *self.words.next()?;
            self.base += 64;
        }
        let bit = u64::from(self.current.trailing_zeros());
        self.current &= self.current - 1;
        self.left -= 1;
        Some(self.base - 64 + bit)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.left).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Ones<'_> {}

/// Words that threads update at once (the atomic filters' bits and counters): a boxed slice
/// of `AtomicU64`, allocated fallibly, whose `Clone` is a snapshot (each word as read now)
/// and whose `==` compares lengths and each word as read now.
#[derive(Debug, Default)]
pub struct AtomicWords(Box<[AtomicU64]>);

impl AtomicWords {
    /// `len` zeroed words.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when they cannot be had (including a `len` past `usize`).
    pub fn zeroed(len: u64) -> Result<Self, Error> {
        Ok(AtomicWords(
            filled_vec(len, AtomicU64::default)?.into_boxed_slice(),
        ))
    }

    /// The words `values` hold, made atomic.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when they cannot be had.
    pub fn from_values(values: &[u64]) -> Result<Self, Error> {
        let words = AtomicWords::zeroed(values.len() as u64)?;
        for (atomic, &v) in words.0.iter().zip(values) {
            atomic.store(v, Relaxed);
        }
        Ok(words)
    }
}

impl core::ops::Deref for AtomicWords {
    type Target = [AtomicU64];

    fn deref(&self) -> &[AtomicU64] {
        &self.0
    }
}

impl core::ops::DerefMut for AtomicWords {
    fn deref_mut(&mut self) -> &mut [AtomicU64] {
        &mut self.0
    }
}

/// A copy of the words as they are now (an update running meanwhile may or may not be in it).
impl Clone for AtomicWords {
    fn clone(&self) -> Self {
        AtomicWords(
            self.0
                .iter()
                .map(|w| AtomicU64::new(w.load(Relaxed)))
                .collect(),
        )
    }
}

/// The same length and the same words as read now.
impl PartialEq for AtomicWords {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(other.0.iter())
                .all(|(a, b)| a.load(Relaxed) == b.load(Relaxed))
    }
}

impl core::fmt::Debug for BitArray {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BitArray")
            .field("len", &self.len)
            .field("ones", &self.ones)
            .finish_non_exhaustive()
    }
}

/// For each byte value and `k < 8`: the position of its `k`-th set bit (8 past its ones).
const SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[8u8; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if byte >> bit & 1 == 1 {
                table[byte][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        byte += 1;
    }
    table
};

/// The position of the `k`-th set bit of `word` (0-based `k`), 64 when the word has no
/// `k`-th set bit (`k` not below its ones), in constant time: one `pdep` and one `tzcnt` where the CPU runs BMI2's `pdep` fast and
/// the caller is compiled with BMI2 (inside [`with_popcnt`](crate::batch::with_popcnt));
/// elsewhere, the byte that holds it from the bytes' running counts of ones (one multiply),
/// then a table within the byte. The same answer either way.
///
/// # Examples
///
/// ```
/// use bloomkit_core::bits::select;
///
/// assert_eq!(select(0b1011_0100, 0), 2);
/// assert_eq!(select(0b1011_0100, 3), 7);
/// ```
#[inline(always)]
pub fn select(word: u64, k: u32) -> u32 {
    if k >= 64 {
        return 64;
    }
    if let Some(at) = crate::arch::select_pdep(word, k) {
        return at;
    }
    select_broadword(word, k)
}

/// [`select`] without BMI2: the running counts of ones byte by byte, then a table (64 when
/// the word has no `k`-th set bit).
#[inline(always)]
pub fn select_broadword(word: u64, k: u32) -> u32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut s = word - ((word >> 1) & 0x5555_5555_5555_5555);
    s = (s & 0x3333_3333_3333_3333) + ((s >> 2) & 0x3333_3333_3333_3333);
    s = (s + (s >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte i: the ones in bytes 0..=i (at most 64, so no byte overflows).
    let running = s.wrapping_mul(ONES);
    // Not below the word's ones (the last byte's running count): no such bit.
    if k >= (running >> 56) as u32 {
        return 64;
    }
    // A high bit for every byte whose running count is <= k: those before the target.
    let before_bytes = (((u64::from(k) * ONES) | HIGHS) - running) & HIGHS;
    let byte = before_bytes.count_ones();
    let ones_before = (running << 8 >> (8 * byte)) as u32 & 0xff;
    let in_byte = (word >> (8 * byte)) as usize & 0xff;
    8 * byte + u32::from(SELECT_IN_BYTE[in_byte][(k - ones_before) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mapping of `/proc/self/smaps` that holds `address`: its `VmFlags` line.
    #[cfg(target_os = "linux")]
    fn vm_flags_at(address: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line
                .split_whitespace()
                .next()
                .and_then(|r| r.split_once('-'));
            if let Some((lo, hi)) = range {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&address);
                    continue;
                }
            }
            if inside && line.starts_with("VmFlags:") {
                return Some(line.to_string());
            }
        }
        None
    }

    /// A filter's memory of two huge pages or more is advised to be backed by them (the
    /// mapping's flags say `hg`), from the first allocation, on a Linux kernel that has
    /// transparent huge pages.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_filters_ask_for_huge_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            eprintln!("no transparent huge pages in this kernel: nothing to check");
            return;
        }
        let advised = |words: &[u64]| {
            let page = (words.as_ptr() as usize).next_multiple_of(crate::arch::HUGE_PAGE);
            let flags = vm_flags_at(page).expect("the vector's pages are mapped");
            flags.split_whitespace().any(|f| f == "hg")
        };
        let words = filled_vec(3 * crate::arch::HUGE_PAGE as u64 / 8, || 0u64).unwrap();
        assert!(advised(&words));
        assert!(words.iter().all(|&w| w == 0));
        // Turned off, a new filter's memory is not advised; the old keeps its advice.
        set_huge_pages(false);
        let plain = filled_vec(3 * crate::arch::HUGE_PAGE as u64 / 8, || 0u64).unwrap();
        set_huge_pages(true);
        assert!(!advised(&plain) && advised(&words));
    }

    /// The constant-time select finds the bit a loop finds, for every rank of random words
    /// and of words with runs of ones.
    #[test]
    fn select_matches_a_loop() {
        let mut x = 3u64;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let z = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z ^ (z >> 31)
        };
        for i in 0..20_000u64 {
            let word = match i % 4 {
                0 => next(),
                1 => next() & next() & next(),
                2 => u64::MAX << (next() % 64),
                _ => next() | next(),
            };
            let mut w = word;
            for k in 0..word.count_ones() {
                assert_eq!(select(word, k), w.trailing_zeros(), "{word:#x} k {k}");
                assert_eq!(
                    select_broadword(word, k),
                    w.trailing_zeros(),
                    "{word:#x} k {k}"
                );
                // Inside the scope that enables BMI2 (the pdep path, where the CPU runs it
                // fast).
                let scoped = crate::arch::with_popcnt(|| select(word, k));
                assert_eq!(scoped, w.trailing_zeros(), "{word:#x} k {k} in scope");
                w &= w - 1;
            }
            // Past the word's ones, up to u32::MAX: 64 on every path, never a panic.
            for k in [
                word.count_ones(),
                word.count_ones() + 1,
                63,
                64,
                65,
                u32::MAX,
            ] {
                if k < word.count_ones() {
                    continue;
                }
                assert_eq!(select(word, k), 64, "{word:#x} k {k}");
                assert_eq!(select_broadword(word, k), 64, "{word:#x} k {k}");
                let scoped = crate::arch::with_popcnt(|| select(word, k));
                assert_eq!(scoped, 64, "{word:#x} k {k} in scope");
            }
        }
    }

    #[test]
    fn or_words_is_a_union_in_pieces_and_refuses_what_does_not_fit() {
        let mut whole = BitArray::new(200).unwrap();
        let mut other = BitArray::new(200).unwrap();
        for i in [0, 63, 64, 130, 199] {
            other.set(i);
        }
        whole.set(5);
        whole.set(64);
        // In two pieces, as a download brings them.
        whole.or_words(0, &other.words()[..2]).unwrap();
        whole.or_words(2, &other.words()[2..]).unwrap();
        let mut expected = BitArray::new(200).unwrap();
        for i in [0, 5, 63, 64, 130, 199] {
            expected.set(i);
        }
        assert_eq!(whole.words(), expected.words());
        assert_eq!(whole.count_ones(), 6);

        let before = whole.clone();
        assert!(matches!(
            whole.or_words(3, &[1, 1]),
            Err(Error::WordCount {
                expected: 4,
                found: 5,
                ..
            })
        ));
        assert!(matches!(
            whole.or_words(usize::MAX, &[1]),
            Err(Error::WordCount { .. })
        ));
        // Bit 200 is past the end of a 200-bit array.
        assert!(matches!(
            whole.or_words(3, &[1 << 8]),
            Err(Error::StrayBits { bits: 200 })
        ));
        assert_eq!(whole, before, "unchanged on an error");
    }

    #[test]
    fn set_get_count() {
        let mut b = BitArray::new(130).unwrap();
        assert_eq!(b.words().len(), 3);
        assert!(b.set(0));
        assert!(!b.set(0));
        assert!(b.set(129));
        assert!(b.get(129) && b.get(0) && !b.get(64));
        assert_eq!(b.count_ones(), 2);
        assert!(b.unset(0));
        assert!(!b.unset(0));
        assert_eq!(b.count_ones(), 1);
        b.clear();
        assert_eq!(b.count_ones(), 0);
    }

    /// Regression for rust-lang/rust#158206: in release builds (no overflow checks), a
    /// `set` of the shape `ones += u64::from(was_clear); was_clear`, inlined into a caller
    /// that branches on the flag, lost the increment, so `count_ones` stayed 0. The callers
    /// here are `#[inline(never)]` loops that branch on the result, the shape that triggered
    /// it; run the suite with `--release` to test what users build.
    #[test]
    fn count_survives_callers_that_branch_on_the_flag() {
        #[inline(never)]
        fn set_all(b: &mut BitArray, n: u64) -> u64 {
            let mut new = 0;
            for i in 0..n {
                if b.set(std::hint::black_box(i)) {
                    new += 1;
                }
            }
            new
        }
        #[inline(never)]
        fn unset_all(b: &mut BitArray, n: u64) -> u64 {
            let mut gone = 0;
            for i in 0..n {
                if b.unset(std::hint::black_box(i)) {
                    gone += 1;
                }
            }
            gone
        }
        let mut b = BitArray::new(1_000).unwrap();
        assert_eq!(set_all(&mut b, 1_000), 1_000);
        assert_eq!(b.count_ones(), 1_000);
        assert_eq!(set_all(&mut b, 1_000), 0);
        assert_eq!(b.count_ones(), 1_000);
        assert_eq!(unset_all(&mut b, 500), 500);
        assert_eq!(b.count_ones(), 500);
        let popcount: u64 = b.words().iter().map(|w| u64::from(w.count_ones())).sum();
        assert_eq!(popcount, 500);
    }

    #[test]
    fn from_words_rejects_stray_bits_and_bad_lengths() {
        // Parameter errors, not decode errors: this is an API call, not a decoder.
        assert!(BitArray::from_words(vec![0, 0], 65).is_ok());
        assert_eq!(
            BitArray::from_words(vec![0, 2], 65),
            Err(Error::StrayBits { bits: 65 })
        );
        let short = Error::WordCount {
            bits: 65,
            expected: 2,
            found: 1,
        };
        assert_eq!(BitArray::from_words(vec![0], 65), Err(short));
        assert_eq!(
            BitArray::from_words(vec![0; 3], 65)
                .unwrap_err()
                .to_string(),
            "65 bits need 2 words, got 3"
        );
        let b = BitArray::from_words(vec![u64::MAX, 1], 65).unwrap();
        assert_eq!(b.count_ones(), 65);
    }

    #[test]
    fn impossible_sizes_are_errors() {
        assert!(matches!(
            BitArray::new(u64::MAX),
            Err(Error::TooLarge { .. })
        ));
        // 2^62 bits = 512 PiB: within MAX_BITS on 64-bit, refused by the allocator.
        assert!(matches!(
            BitArray::new(1 << 62),
            Err(Error::AllocationFailed { .. })
        ));
    }

    #[test]
    fn rank_select_iterate() {
        let mut b = BitArray::new(200).unwrap();
        let set = [0u64, 5, 63, 64, 127, 128, 199];
        for &i in &set {
            b.set(i);
        }
        assert_eq!(b.ones().collect::<Vec<_>>(), set);
        assert_eq!(b.ones().len(), set.len());
        for (n, &i) in set.iter().enumerate() {
            assert_eq!(b.select(n as u64), Some(i));
            assert_eq!(b.rank(i), n as u64);
            assert_eq!(b.rank(i + 1), n as u64 + 1);
        }
        assert_eq!(b.select(set.len() as u64), None);
        assert_eq!(b.rank(10_000), set.len() as u64);
        assert_eq!((b.first_one(), b.last_one()), (Some(0), Some(199)));
        let empty = BitArray::new(70).unwrap();
        assert_eq!(
            (empty.first_one(), empty.last_one(), empty.ones().next()),
            (None, None, None)
        );
    }

    #[test]
    fn algebra() {
        let mut a = BitArray::from_words(vec![0b1100], 4).unwrap();
        let b = BitArray::from_words(vec![0b1010], 4).unwrap();
        assert_eq!(a.count_union(&b), 3);
        let mut u = a.clone();
        u.union_with(&b).unwrap();
        assert_eq!((u.words()[0], u.count_ones()), (0b1110, 3));
        let mut x = a.clone();
        x.symmetric_difference_with(&b).unwrap();
        assert_eq!(x.words()[0], 0b0110);
        let mut d = a.clone();
        d.difference_with(&b).unwrap();
        assert_eq!(d.words()[0], 0b0100);
        a.intersect_with(&b).unwrap();
        assert_eq!((a.words()[0], a.count_ones()), (0b1000, 1));
        let longer = BitArray::new(5).unwrap();
        assert!(matches!(
            a.union_with(&longer),
            Err(Error::Incompatible {
                what: crate::Parameter::Bits,
                ..
            })
        ));
        assert_eq!(a.words()[0], 0b1000);
    }
}
