//! Measured false-positive rates against each filter's model: `2^-bits` for binary fuse,
//! the fractional-columns model for ribbon (`estimated_fpr`), on keys never inserted.

use bloomkit_core::Lookup;
use bloomkit_static::{BinaryFuse16, BinaryFuse8, RibbonFilter};
use bloomkit_testkit::{measure_fpr, member};

/// Probes per filter: in debug builds a tenth (the tolerance widens with fewer probes).
fn probes() -> u64 {
    if cfg!(debug_assertions) {
        200_000
    } else {
        2_000_000
    }
}

fn check<F: Lookup<Key = u64> + Sync>(what: &str, f: &F) {
    let model = f.estimated_fpr();
    let m = measure_fpr(f, probes());
    println!(
        "{what}: measured {:.5}% model {:.5}%",
        m.rate() * 100.0,
        model * 100.0
    );
    assert!(
        m.within(model, 4.5),
        "{what}: measured {} ({} of {}) against a model of {model}",
        m.rate(),
        m.false_positives,
        m.probes
    );
}

#[test]
fn binary_fuse_rates_are_two_to_the_minus_bits() {
    let keys: Vec<u64> = (0..100_000).map(member).collect();
    check("fuse8", &BinaryFuse8::<u64>::from_keys(&keys).unwrap());
    check("fuse16", &BinaryFuse16::<u64>::from_keys(&keys).unwrap());
}

#[test]
fn ribbon_rates_follow_the_model() {
    let keys: Vec<u64> = (0..100_000).map(member).collect();
    for p in [0.2, 0.05, 0.01, 0.007, 0.001] {
        let f = RibbonFilter::<u64>::from_keys_with_fpr(&keys, p).unwrap();
        assert!(f.estimated_fpr() <= p && f.estimated_fpr() >= 0.97 * p);
        check(&format!("ribbon at {p}"), &f);
    }
}
