//! The only `unsafe` code in bloomkit: a software prefetch, fenced in this module.
//!
//! Batched lookups ([`crate::batch`]) hash a group of keys, ask the memory system for each
//! key's cache lines, then probe: the misses overlap instead of being paid one after another.
//! On x86-64 the request is SSE's `prefetcht0`; a plain load in its place was measured and
//! does not do the job (see `docs/performance.md`). On other targets this is a no-op, and
//! batched calls still give the right answers.
//!
//! Tested under miri (`cargo +nightly miri test -p bloomkit-core --lib`).
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

#[cfg(test)]
mod tests {
    use super::prefetch;

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
