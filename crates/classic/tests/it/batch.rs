//! Batched calls against single ones, on filters built from raw parameters (no sizing
//! search), small enough to run under miri, which checks the prefetches they make:
//!
//! ```text
//! BLOOMKIT_QC_CASES=4 cargo +nightly miri test -p bloomkit-classic --test it -- batch::
//! ```

use bloomkit_classic::{BlockedBloomFilter, BloomFilter, SplitBlockFilter};
use bloomkit_testkit as kit;

#[test]
fn classic_batched_calls_answer_as_single_ones() {
    kit::check_batch(|| BloomFilter::with_bits(2_000, 4).unwrap());
    if cfg!(miri) {
        return; // as in the blocked test below
    }
    kit::check_batch(|| BloomFilter::with_bits(1, 1).unwrap());
}

#[test]
fn blocked_batched_calls_answer_as_single_ones() {
    kit::check_batch(|| BlockedBloomFilter::with_blocks(4, 7).unwrap());
    // Under miri one shape checks the prefetches (each shape takes minutes interpreted);
    // the others differ in arithmetic that the native runs cover.
    if cfg!(miri) {
        return;
    }
    kit::check_batch(|| BlockedBloomFilter::with_blocks(1, 12).unwrap());
    kit::check_batch(|| BlockedBloomFilter::with_blocks(3, 1).unwrap());
}

// Under miri this takes over 8 minutes (XXH64 per key, interpreted); the split block's
// portable test runs under miri in core's `arch` tests, and the same pipeline and prefetch
// under miri in the two tests above.
#[test]
#[cfg_attr(miri, ignore)]
fn split_block_batched_calls_answer_as_single_ones() {
    kit::check_batch(|| SplitBlockFilter::with_blocks(8).unwrap());
    kit::check_batch(|| SplitBlockFilter::with_blocks(1).unwrap());
}
