//! Batched calls against single ones, on filters built from raw parameters (no sizing
//! search), small enough to run under miri, which checks the prefetches they make:
//!
//! ```text
//! MIRIFLAGS=-Zmiri-env-forward=BLOOMKIT_QC_CASES BLOOMKIT_QC_CASES=4 \
//!     cargo +nightly miri test -p bloomkit-classic --test it -- batch::
//! ```
//!
//! (Miri hides the environment from the program unless told to forward a variable: without
//! `MIRIFLAGS`, each property runs its 200 default cases, minutes each interpreted.)

use bloomkit_classic::{BlockedBloomFilter, BloomFilter, SplitBlockFilter};
use bloomkit_testkit as kit;

#[test]
fn classic_batched_calls_answer_as_single_ones() {
    kit::check_batch(|| BloomFilter::with_bits(2_000, 4).unwrap());
    kit::check_batch(|| BloomFilter::with_bits(1, 1).unwrap());
}

#[test]
fn blocked_batched_calls_answer_as_single_ones() {
    kit::check_batch(|| BlockedBloomFilter::with_blocks(4, 7).unwrap());
    kit::check_batch(|| BlockedBloomFilter::with_blocks(1, 12).unwrap());
    kit::check_batch(|| BlockedBloomFilter::with_blocks(3, 1).unwrap());
}

#[test]
fn split_block_batched_calls_answer_as_single_ones() {
    kit::check_batch(|| SplitBlockFilter::with_blocks(8).unwrap());
    kit::check_batch(|| SplitBlockFilter::with_blocks(1).unwrap());
}
