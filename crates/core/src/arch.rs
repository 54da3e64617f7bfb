//! The only `unsafe` code in bloomkit, fenced in this module: a software prefetch, and the
//! AVX2 test of a split-block filter's block, chosen at run time.
//!
//! Batched lookups ([`crate::batch`]) hash a group of keys, ask the memory system for each
//! key's cache lines, then probe: the misses overlap instead of being paid one after another.
//! On x86-64 the request is SSE's `prefetcht0`; a plain load in its place was measured and
//! does not do the job (see `docs/performance.md`). On other targets this is a no-op, and
//! batched calls still give the right answers.
//!
//! A split-block filter's block test ([`split_block_contains`], [`split_block_insert`]) is
//! eight multiplications, shifts and bit tests: one AVX2 instruction each for all eight
//! lanes. The build targets baseline x86-64 (no `target-cpu=native` needed): the AVX2 path
//! is taken when the CPU has it (`is_x86_feature_detected!`, a cached flag), or always when
//! the crate is built with AVX2 enabled; elsewhere, and under miri, the portable path runs.
//! Both give the same answers, bit for bit (tested here, on every key of a sweep).
//!
//! Tested under miri (`cargo +nightly miri test -p bloomkit-core --lib -- arch batch`).
#![allow(unsafe_code)]

/// Asks for the cache line holding `value` to be brought into every cache level, without
/// waiting for it. A hint only: it changes no value and never faults.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (value as *const T).cast::<i8>();
        // SAFETY: `_mm_prefetch` needs SSE, part of every x86-64 target's baseline features
        // (it is unsafe only because of `#[target_feature(enable = "sse")]`); it reads and
        // writes nothing the program can observe, and `p` comes from a live reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The eight odd constants of Parquet's split-block Bloom filter (and Impala's and Kudu's
/// before it): a key's bit in word `i` of its block is `(x * SALT[i]) >> 27`, `x` the low
/// 32 bits of its hash.
pub const SPLIT_BLOCK_SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// The key's bit in each of the eight words of its split block, `x` being the low 32 bits
/// of its hash: one bit per word.
#[inline(always)]
pub fn split_block_mask(x: u32) -> [u32; 8] {
    let mut mask = [0u32; 8];
    for (m, salt) in mask.iter_mut().zip(SPLIT_BLOCK_SALT) {
        *m = 1 << (x.wrapping_mul(salt) >> 27);
    }
    mask
}

/// Whether every bit of `x`'s mask is set in `block`, with no branch on any of them.
#[inline]
pub fn split_block_contains(block: &[u32; 8], x: u32) -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 (just checked), all the function needs.
        return unsafe { avx2::split_block_contains(block, x) };
    }
    portable_split_block_contains(block, x)
}

/// Sets `x`'s bits in `block`; returns the number of them that were clear before (0 when the
/// key was already "maybe").
#[inline]
pub fn split_block_insert(block: &mut [u32; 8], x: u32) -> u32 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 (just checked), all the function needs.
        return unsafe { avx2::split_block_insert(block, x) };
    }
    portable_split_block_insert(block, x)
}

/// [`split_block_contains`] without SIMD: what runs without AVX2, and under miri.
#[inline(always)]
pub fn portable_split_block_contains(block: &[u32; 8], x: u32) -> bool {
    let mask = split_block_mask(x);
    let mut missing = 0;
    for (word, m) in block.iter().zip(mask) {
        missing |= m & !word;
    }
    missing == 0
}

/// [`split_block_insert`] without SIMD.
#[inline(always)]
pub fn portable_split_block_insert(block: &mut [u32; 8], x: u32) -> u32 {
    let mask = split_block_mask(x);
    let mut added = 0;
    for (word, m) in block.iter_mut().zip(mask) {
        added += (m & !*word).count_ones();
        *word |= m;
    }
    added
}

// Since Rust 1.87 register-only intrinsics are safe to call inside a function that enables
// their feature, and their `unsafe` blocks are "unnecessary"; the workspace's MSRV (1.80)
// still needs them.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[allow(unused_unsafe)]
mod avx2 {
    use core::arch::x86_64::{
        __m256i, _mm256_andnot_si256, _mm256_loadu_si256, _mm256_mullo_epi32, _mm256_or_si256,
        _mm256_set1_epi32, _mm256_setr_epi32, _mm256_sllv_epi32, _mm256_srli_epi32,
        _mm256_storeu_si256, _mm256_testc_si256,
    };

    use super::SPLIT_BLOCK_SALT as SALT;

    /// Whether the CPU has AVX2: fixed at compile time when the build enables it, otherwise
    /// asked once and cached by the standard library (a load and a bit test per call).
    #[inline(always)]
    pub(super) fn available() -> bool {
        #[cfg(target_feature = "avx2")]
        {
            true
        }
        #[cfg(not(target_feature = "avx2"))]
        {
            std::arch::is_x86_feature_detected!("avx2")
        }
    }

    /// The key's mask in one register: lane i is `1 << ((x * SALT[i]) >> 27)`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn mask(x: u32) -> __m256i {
        // SAFETY: register-only AVX2 arithmetic on constants and `x`; the caller guarantees
        // AVX2. (The salts are a constant the compiler loads from read-only data.)
        unsafe {
            let salt = _mm256_setr_epi32(
                SALT[0] as i32,
                SALT[1] as i32,
                SALT[2] as i32,
                SALT[3] as i32,
                SALT[4] as i32,
                SALT[5] as i32,
                SALT[6] as i32,
                SALT[7] as i32,
            );
            let product = _mm256_mullo_epi32(salt, _mm256_set1_epi32(x as i32));
            _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32::<27>(product))
        }
    }

    /// [`super::split_block_contains`] in AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn split_block_contains(block: &[u32; 8], x: u32) -> bool {
        // SAFETY: `block` is 32 readable bytes (a `&[u32; 8]`); `loadu` needs no alignment.
        let words = unsafe { _mm256_loadu_si256(block.as_ptr().cast::<__m256i>()) };
        // SAFETY: AVX2 arithmetic on registers; the caller guarantees AVX2.
        unsafe { _mm256_testc_si256(words, mask(x)) != 0 }
    }

    /// [`super::split_block_insert`] in AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn split_block_insert(block: &mut [u32; 8], x: u32) -> u32 {
        let ptr = block.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `block` is 32 readable bytes; `loadu` needs no alignment.
        let words = unsafe { _mm256_loadu_si256(ptr) };
        // SAFETY: register arithmetic; the caller guarantees AVX2.
        let (m, new) = unsafe {
            let m = mask(x);
            (m, _mm256_andnot_si256(words, m))
        };
        // SAFETY: `block` is 32 writable bytes, borrowed mutably; no alignment needed.
        unsafe { _mm256_storeu_si256(ptr, _mm256_or_si256(words, m)) };
        let mut lanes = [0u32; 8];
        // SAFETY: `lanes` is 32 writable bytes on the stack.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), new) };
        lanes.iter().map(|l| l.count_ones()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream of well-mixed words for the tests.
    fn stream(seed: u64) -> impl FnMut() -> u64 {
        let mut state = seed;
        move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    /// The dispatched block tests (AVX2 where the CPU has it) agree with the portable ones
    /// on blocks from empty to full, and an inserted key is always found. Under miri both
    /// sides are portable; the test still checks insert-then-contains.
    #[test]
    fn arch_split_block_paths_agree() {
        let mut next = stream(7);
        let cases = if cfg!(miri) { 200 } else { 20_000 };
        let (mut yes, mut no) = (0, 0);
        for round in 0..cases {
            let mut block = [0u32; 8];
            for w in &mut block {
                let mut word = next() as u32;
                for _ in 0..round % 4 {
                    word &= next() as u32;
                }
                if round % 9 == 0 {
                    word |= next() as u32;
                }
                *w = word;
            }
            let x = next() as u32;
            if round % 4 == 0 {
                // Every fourth block holds the key already: both answers occur, also in
                // miri's 200 cases.
                for (w, m) in block.iter_mut().zip(split_block_mask(x)) {
                    *w |= m;
                }
            }
            let expected = portable_split_block_contains(&block, x);
            assert_eq!(
                split_block_contains(&block, x),
                expected,
                "{block:x?} {x:#x}"
            );
            if expected {
                yes += 1;
            } else {
                no += 1;
            }
            let (mut a, mut b) = (block, block);
            assert_eq!(
                split_block_insert(&mut a, x),
                portable_split_block_insert(&mut b, x)
            );
            assert_eq!(a, b);
            assert!(split_block_contains(&a, x) && portable_split_block_contains(&a, x));
            assert_eq!(
                split_block_insert(&mut a, x),
                0,
                "a second insert adds nothing"
            );
        }
        assert!(yes > 0 && no > 0, "{yes} / {no}");
    }

    /// One bit per word, at the position Parquet's spec gives.
    #[test]
    fn arch_split_block_mask_is_one_bit_per_word() {
        let mut next = stream(11);
        for _ in 0..1_000 {
            let x = next() as u32;
            let mask = split_block_mask(x);
            for (i, m) in mask.iter().enumerate() {
                assert_eq!(*m, 1 << (x.wrapping_mul(SPLIT_BLOCK_SALT[i]) >> 27));
                assert!(m.is_power_of_two());
            }
        }
        // x = 0: every product is 0, so bit 0 of every word.
        assert_eq!(split_block_mask(0), [1; 8]);
    }

    /// A prefetch of any live value, at any alignment, leaves every value as it was.
    #[test]
    fn prefetch_changes_nothing() {
        let words: Vec<u64> = (0..64).collect();
        let bytes = [7u8; 100];
        for w in &words {
            prefetch(w);
        }
        for b in &bytes[1..] {
            prefetch(b);
        }
        prefetch(&words);
        prefetch(&());
        assert_eq!(words, (0..64).collect::<Vec<u64>>());
        assert!(bytes.iter().all(|&b| b == 7));
    }
}
