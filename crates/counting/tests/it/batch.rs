//! Batched calls against single ones on small counting filters built from raw parameters,
//! small enough to run under miri, which checks the prefetches they make:
//!
//! ```text
//! MIRIFLAGS=-Zmiri-env-forward=BLOOMKIT_QC_CASES BLOOMKIT_QC_CASES=4 \
//!     cargo +nightly miri test -p bloomkit-counting --test it -- batch::
//! ```

use bloomkit_core::Xxh3Builder;
use bloomkit_counting::CountingBloomFilter;
use bloomkit_testkit as kit;

#[test]
fn batched_calls_answer_as_single_ones() {
    kit::check_batch(|| CountingBloomFilter::with_counters(2_000, 4).unwrap());
    kit::check_batch(|| {
        CountingBloomFilter::<u64, u16>::with_counters_and_hasher(3, 2, Xxh3Builder::with_seed(1))
            .unwrap()
    });
}
