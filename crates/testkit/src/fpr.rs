//! The statistical false-positive-rate harness every Bloom-style variant runs: insert n
//! keys, probe keys never inserted, and compare the measured rate with the model
//! (`sizing::fpr_model`) within a binomial tolerance, and with the target.
//!
//! Keys and seeds are fixed, so every run measures the same numbers; the tolerance is there
//! so that a model or hashing defect, not chance, is what fails a test.

use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::sizing::{fpr_model, hashing_floor_with};
use bloomkit_core::Filter;

use crate::{measure_fpr, member, non_member, FprMeasurement};

/// Standard deviations allowed between measured and predicted counts.
pub const Z: f64 = 4.0;

/// How the harness builds and inspects a variant: `make(n, p, seed)` builds a filter for
/// n items at rate p with a seed, `shape` reports its bits (or counters) and probes,
/// `model(f, n)` is the rate the variant's sizing model predicts for it at n items, and
/// `conditional(f, n)` the rate its current fill implies.
#[derive(Debug)]
pub struct Subject<F> {
    /// Builds a filter for `(n, p, seed)`.
    pub make: fn(u64, f64, u64) -> F,
    /// `(m, k)` of a filter.
    pub shape: fn(&F) -> (u64, u32),
    /// The model's rate for this filter at n items.
    pub model: fn(&F, u64) -> f64,
    /// The rate this filter's fill implies, at n items.
    pub conditional: fn(&F, u64) -> f64,
}

/// The fill-implied rate of a classic-layout filter (m bits or counters, k probes spread
/// over all of them, placed by `probes`): `(X/m)^k` from `estimated_fpr`, combined with the
/// scheme's hashing floor.
pub fn classic_conditional<F: Filter<Key = u64>>(
    f: &F,
    n: u64,
    m: u64,
    k: u32,
    probes: ProbeScheme,
) -> f64 {
    let floor = hashing_floor_with(n, m, k, probes).expect("valid shape");
    1.0 - (1.0 - f.estimated_fpr()) * (1.0 - floor)
}

/// The classic model for a classic-layout filter of shape `(m, k)`.
pub fn classic_model(n: u64, m: u64, k: u32) -> f64 {
    fpr_model(n, m, k).expect("valid shape")
}

/// One measured row of the FPR table.
#[derive(Debug, Clone)]
pub struct Row {
    /// Items inserted.
    pub n: u64,
    /// Target rate.
    pub p: f64,
    /// m.
    pub bits: u64,
    /// k.
    pub k: u32,
    /// The a-priori model, averaged over key sets: what sizing promises.
    pub predicted: f64,
    /// For a single filter, the rate its actual fill implies: `(X/m)^k` combined with the
    /// hashing floor. A single filter's rate differs from `predicted` by the luck of its
    /// fill (about 4% at n = 1,000), and is compared with this instead.
    pub conditional: Option<f64>,
    /// What was measured.
    pub m: FprMeasurement,
}

/// Prints the header of the table [`Row::print`] writes.
pub fn header() {
    println!(
        "|           n |       p |   bits (m) | bits/key |  k |  predicted | this filter |  measured | meas/p |      probes |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
}

impl Row {
    /// Prints the row as Markdown.
    pub fn print(&self) {
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

    /// Prints the row; checks the model is within the target, and the measurement within
    /// [`Z`] sd of what this filter (or, for averages over many filters, the model)
    /// predicts.
    pub fn check(&self) {
        assert!(
            self.predicted <= self.p,
            "n={} p={}: model {}",
            self.n,
            self.p,
            self.predicted
        );
        self.check_model();
    }

    /// Prints the row; checks the measurement within [`Z`] sd of what this filter (or, for
    /// averages over many filters, the model) predicts, whatever the target (for filters
    /// sized by someone else's formula).
    pub fn check_model(&self) {
        self.print();
        let expected = self.conditional.unwrap_or(self.predicted);
        if self.bits < 1_000 {
            // At a few hundred bits the model's two terms overlap and it is only an upper
            // bound (one item in 7 bits at 10%: 8.0% measured, 9.8% modelled), give or take
            // the last few percent of pattern coincidences (m = 101: 2.9% over). Check that
            // side.
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

    /// [`check`](Self::check), and no more than 1.1x the target.
    pub fn check_target(&self) {
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

/// One filter of n keys (seed 0), probed with `probes` non-members.
pub fn one_filter<F: Filter<Key = u64> + Sync>(
    subject: &Subject<F>,
    n: u64,
    p: f64,
    probes: u64,
) -> Row {
    let mut f = (subject.make)(n, p, 0);
    for i in 0..n {
        f.try_insert(&member(i)).expect("insert");
    }
    assert!((0..n).all(|i| f.contains(&member(i))), "false negative");
    let (bits, k) = (subject.shape)(&f);
    Row {
        n,
        p,
        bits,
        k,
        predicted: (subject.model)(&f, n),
        conditional: Some((subject.conditional)(&f, n)),
        m: measure_fpr(&f, probes),
    }
}

/// `instances` filters of n keys each, every one with its own seed and keys, each probed
/// with `probes_each` non-members: the average FPR over filters, which is what the model
/// predicts (one filter of a handful of keys is all luck).
pub fn many_filters<F: Filter<Key = u64>>(
    subject: &Subject<F>,
    n: u64,
    p: f64,
    instances: u64,
    probes_each: u64,
) -> Row {
    let first = (subject.make)(n, p, 0);
    let (bits, k) = (subject.shape)(&first);
    let predicted = (subject.model)(&first, n);
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get() as u64);
    let make = subject.make;
    let false_positives: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut fp = 0;
                    for j in (t..instances).step_by(threads as usize) {
                        let mut f = make(n, p, j);
                        for i in 0..n {
                            f.try_insert(&member(j << 32 | i)).expect("insert");
                        }
                        fp += (0..probes_each)
                            .filter(|&i| f.contains(&non_member(j << 32 | i)))
                            .count() as u64;
                    }
                    fp
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("probe thread"))
            .sum()
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

/// The grid every Bloom-style variant must honour: p in {0.1, 0.01, 0.001}, n in {1e3, 1e5,
/// 1e6}, with about 2000 expected false positives per row (so 1.1x the target is > 4 sd
/// away). Each single filter must match the rate its own fill implies; the rate averaged
/// over 400 filters of 1,000 keys (one filter that small is a few percent lucky or unlucky)
/// must match the model and stay within 1.1x the target.
pub fn check_grid<F: Filter<Key = u64> + Sync>(subject: &Subject<F>) {
    header();
    for p in [0.1, 0.01, 0.001] {
        let probes = (2_000.0 / p) as u64;
        many_filters(subject, 1_000, p, 400, probes / 100).check_target();
        for n in [1_000, 100_000, 1_000_000] {
            let row = one_filter(subject, n, p, probes);
            if n >= 100_000 {
                row.check_target();
            } else {
                row.check();
            }
        }
    }
}
