//! Growth keeps the promise: start at 1,000 items, insert 1,000,000 distinct keys (1000x
//! growth), probe 2,000,000 keys never inserted, and the measured rate is at most the
//! target, for p = 1% and 0.1%, growth 2 and 4, tightening 0.85 and 0.9. Prints the table:
//!
//! ```text
//! cargo test --release -p bloomkit-scalable --test it -- growth:: --nocapture
//! ```

use bloomkit_classic::BloomFilter;
use bloomkit_scalable::ScalableBloomFilter;
use bloomkit_testkit::{measure_fpr, member};

fn row(p: f64, growth: u32, tightening: f64) {
    let (start, n, probes) = (1_000, 1_000_000, 2_000_000);
    let mut f = ScalableBloomFilter::builder(start, p)
        .growth(growth)
        .tightening(tightening)
        .build()
        .unwrap();
    for i in 0..n {
        f.try_insert(&member(i)).unwrap();
    }
    assert!(
        (0..n).all(|i| f.contains(&member(i))),
        "false negative after growth"
    );
    let classic = BloomFilter::<u64>::new(n, p).unwrap();
    let measured = measure_fpr(&f, probes);
    println!(
        "| {p:>5} | {growth} | {tightening:>4} | {:>2} | {:>9} | {:>5.2} | {:>5.2} | {:.3}% | {:.3}% | {:.2} |",
        f.num_slices(),
        f.len(),
        f.heap_bytes() as f64 / n as f64,
        f.heap_bytes() as f64 / classic.heap_bytes() as f64,
        f.fpr_bound() * 100.0,
        measured.rate() * 100.0,
        measured.rate() / p,
    );
    assert!(
        f.fpr_bound() <= p,
        "bound {} above target {p}",
        f.fpr_bound()
    );
    // The measured rate is at most the target, allowing 4 sd of sampling noise.
    assert!(
        measured.rate() <= p + 4.0 * (p / probes as f64).sqrt(),
        "p={p} growth={growth} r={tightening}: measured {} ({} of {probes})",
        measured.rate(),
        measured.false_positives
    );
}

#[test]
fn thousandfold_growth_honours_the_target() {
    println!("|     p | s |    r | slices |     items | bytes/item | vs classic | bound | measured | meas/p |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in [0.01, 0.001] {
        for (growth, tightening) in [(2, 0.85), (2, 0.9), (4, 0.85), (4, 0.9)] {
            row(p, growth, tightening);
        }
    }
}
