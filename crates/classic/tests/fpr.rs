//! Accuracy is measured, not assumed: insert n keys, probe many keys never inserted, and
//! compare the measured false-positive rate with the filter's own prediction
//! (`fpr_at(n)`, bloomkit's sizing model) within a binomial tolerance, and with the target.
//!
//! Keys and seeds are fixed, so every run measures the same numbers; the tolerance is
//! there so that a model or hashing defect, not chance, is what fails a test. Run with
//! `--nocapture` to print the table:
//!
//! ```text
//! cargo test --release -p bloomkit-classic --test fpr -- --nocapture --include-ignored
//! ```

use bloomkit_classic::BloomFilter;
use bloomkit_core::sizing::hashing_floor;
use bloomkit_testkit::{member, non_member, FprMeasurement};

/// Standard deviations allowed between measured and predicted counts.
const Z: f64 = 4.0;

struct Row {
    n: u64,
    p: f64,
    bits: u64,
    k: u32,
    /// The a-priori model, averaged over key sets: what sizing promises.
    predicted: f64,
    /// For a single filter, the rate its actual fill implies: `(X/m)^k` combined with the
    /// hashing floor. A single filter's rate differs from `predicted` by the luck of its
    /// fill (about 4% at n = 1,000), and is compared with this instead.
    conditional: Option<f64>,
    m: FprMeasurement,
}

impl Row {
    fn print(&self) {
        println!(
            "| {:>11} | {:>7} | {:>10} | {:>7.2} | {:>2} | {:>10.4e} | {:>10} | {:>10.4e} | {:>6.3} | {:>11} |",
            self.n,
            self.p,
            self.bits,
            self.bits as f64 / self.n as f64,
            self.k,
            self.predicted,
            self.conditional.map_or("(avg)".into(), |c| format!("{c:.4e}")),
            self.m.rate(),
            self.m.rate() / self.p,
            self.m.probes
        );
    }

    /// The model within the target, and the measurement within Z sd of what this filter
    /// (or, for averages over many filters, the model) predicts.
    fn check(&self) {
        self.print();
        assert!(
            self.predicted <= self.p,
            "n={} p={}: model {}",
            self.n,
            self.p,
            self.predicted
        );
        let expected = self.conditional.unwrap_or(self.predicted);
        if self.bits < 1_000 {
            // At a few hundred bits the model's two terms overlap and it is only an upper
            // bound (one item in 7 bits at 10%: 8.0% measured, 9.8% modelled), give or take
            // the last few percent of pattern coincidences (m = 101: 2.9% over). Check that
            // side, and the target.
            assert!(
                self.m.rate() <= 1.05 * expected + Z * (expected / self.m.probes as f64).sqrt(),
                "n={} p={}: measured {} above model {expected}",
                self.n,
                self.p,
                self.m.rate()
            );
            return;
        }
        assert!(
            self.m.within(expected, Z),
            "n={} p={}: measured {} ({} of {}), expected {expected}",
            self.n,
            self.p,
            self.m.rate(),
            self.m.false_positives,
            self.m.probes,
        );
    }

    /// Also no more than 1.1x the target.
    fn check_target(&self) {
        self.check();
        assert!(
            self.m.rate() <= 1.1 * self.p,
            "n={} p={}: measured {} is above 1.1x target",
            self.n,
            self.p,
            self.m.rate()
        );
    }
}

/// One filter of n keys, probed with `probes` non-members.
fn one_filter(n: u64, p: f64, probes: u64) -> Row {
    let mut f = BloomFilter::new(n, p).unwrap();
    for i in 0..n {
        f.insert(&member(i));
    }
    assert!((0..n).all(|i| f.contains(&member(i))), "false negative");
    let floor = hashing_floor(n, f.num_bits(), f.num_hashes()).unwrap();
    let conditional = 1.0 - (1.0 - f.estimated_fpr()) * (1.0 - floor);
    Row {
        n,
        p,
        bits: f.num_bits(),
        k: f.num_hashes(),
        predicted: f.fpr_at(n),
        conditional: Some(conditional),
        m: bloomkit_testkit::measure_fpr(&f, probes),
    }
}

/// `instances` filters of n keys each, every one with its own seed and keys, each probed
/// with `probes_each` non-members: the average FPR over filters, which is what the model
/// predicts (one filter of a handful of keys is all luck).
fn many_filters(n: u64, p: f64, instances: u64, probes_each: u64) -> Row {
    let threads = 2;
    let (bits, k, predicted) = {
        let f = BloomFilter::new(n, p).unwrap();
        (f.num_bits(), f.num_hashes(), f.fpr_at(n))
    };
    let false_positives: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut fp = 0;
                    for j in (t..instances).step_by(threads as usize) {
                        let mut f = BloomFilter::with_seed(n, p, j).unwrap();
                        for i in 0..n {
                            f.insert(&member(j << 32 | i));
                        }
                        fp += (0..probes_each)
                            .filter(|&i| f.contains(&non_member(j << 32 | i)))
                            .count() as u64;
                    }
                    fp
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    Row {
        n,
        p,
        bits,
        k,
        predicted,
        conditional: None,
        m: FprMeasurement {
            false_positives,
            probes: instances * probes_each,
        },
    }
}

fn header() {
    println!(
        "|           n |       p |   bits (m) | bits/key |  k |  predicted | this filter |  measured | meas/p |      probes |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
}

/// The grid the design promises: p in {0.1, 0.01, 0.001}, n in {1e3, 1e5, 1e6}, with
/// about 2000 expected false positives per row (so 1.1x the target is > 4 sd away). Each
/// single filter must match the rate its own fill implies; and the rate averaged over
/// filters (one filter at n = 1e3 is a few percent lucky or unlucky) must match the model
/// and stay within 1.1x the target.
#[test]
fn fpr_grid_honours_target() {
    header();
    for p in [0.1, 0.01, 0.001] {
        let probes = (2_000.0 / p) as u64;
        many_filters(1_000, p, 400, probes / 100).check_target();
        for n in [1_000, 100_000, 1_000_000] {
            let row = one_filter(n, p, probes);
            if n >= 100_000 {
                row.check_target();
            } else {
                row.check();
            }
        }
    }
}

/// The ends where peers fail: a single item and ten items at p = 1e-6 (Guava #2767 is the
/// small-n end), plus a sweep of p at tiny n.
#[test]
fn fpr_at_tiny_n() {
    header();
    many_filters(1, 1e-6, 20_000, 5_000).check();
    many_filters(10, 1e-6, 10_000, 10_000).check();
    for p in [0.5, 0.1, 0.01, 1e-3] {
        many_filters(1, p, 10_000, 200).check_target();
        many_filters(10, p, 2_000, 1_000).check_target();
    }
}

/// p from 0.5 down to 1e-7 at moderate n.
#[test]
fn fpr_across_p() {
    header();
    one_filter(100_000, 0.5, 200_000).check_target();
    one_filter(100_000, 1e-4, 20_000_000).check_target();
    one_filter(10_000, 1e-5, 100_000_000).check();
    one_filter(1_000, 1e-7, 300_000_000).check();
}

/// Ten million keys: where 32-bit hashing and modulo bias show up in peers.
#[test]
fn fpr_at_ten_million() {
    header();
    one_filter(10_000_000, 0.01, 2_000_000).check_target();
}

/// 10^8 keys (1.1 GiB of hashing, ~120 MB of filter): run explicitly, with
/// `--include-ignored`, for the record.
#[test]
#[ignore = "about 30 s; run with --include-ignored"]
fn fpr_at_hundred_million() {
    header();
    one_filter(100_000_000, 0.01, 10_000_000).check_target();
    one_filter(100_000_000, 0.001, 10_000_000).check_target();
}
