//! The counting filter's false-positive rate, measured with the shared harness; it is sized
//! and hashed like the classic filter, so it must honour the same grid.
//!
//! ```text
//! cargo test --release -p bloomkit-counting --test it -- fpr:: --nocapture
//! ```

use bloomkit_counting::{CountingBloomFilter, U4};
use bloomkit_testkit::fpr::{check_grid, classic_conditional, Subject};

#[test]
fn fpr_grid_honours_target() {
    check_grid(&Subject::<CountingBloomFilter<u64, U4>> {
        make: |n, p, seed| {
            CountingBloomFilter::builder(n, p)
                .seed(seed)
                .build()
                .expect("valid parameters")
        },
        shape: |f| (f.num_counters(), f.num_hashes()),
        model: |f, n| f.fpr_at(n),
        conditional: |f, n| {
            classic_conditional(f, n, f.num_counters(), f.num_hashes(), f.probe_scheme())
        },
    });
}
