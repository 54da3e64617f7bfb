//! The error-rate table of the course report the multi-attribute filter comes from: the
//! false-positive rate of one attribute's bit array (a classic Bloom filter, the array every
//! attribute of a `MultiFilter` keeps) for k = 1..5 probes and m/n = 1..5 bits per value,
//! measured, next to the model: the usual approximation `(1 - e^(-kn/m))^k` and the exact
//! form `(1 - (1 - 1/m)^(kn))^k`.
//!
//! Each cell: 20 filters (seeds) of n = 10,000 values, 50,000 probes of values never
//! inserted each, so 10^6 probes per cell; `±` is the 95% interval of the mean over the 20
//! filters (1.96 standard errors). The last column is one small run of the kind a course
//! experiment makes (one filter of n = 100 values, 1,000 probes), to show how far from the
//! model such a run lands.
//!
//! ```text
//! cargo run --release -p bloomkit-multi --example fpr_table
//! ```

use bloomkit_classic::BloomFilter;
use bloomkit_core::sizing::{fpr_approx, fpr_exact};
use bloomkit_core::Xxh3Builder;

/// The rate one filter of `n` values at `ratio` bits per value and `k` probes measures on
/// `probes` never-inserted values, and its number of bits.
fn one_run(n: u64, ratio: u64, k: u32, seed: u64, probes: u64) -> (f64, u64) {
    let mut f =
        BloomFilter::<u64>::with_bits_and_hasher(n * ratio, k, Xxh3Builder::with_seed(seed))
            .expect("valid parameters");
    f.insert_batch(0..n);
    let positives = (0..probes)
        .filter(|&i| f.contains(&((1 << 63) | i)))
        .count();
    (positives as f64 / probes as f64, f.num_bits())
}

fn main() {
    const N: u64 = 10_000;
    const FILTERS: u64 = 20;
    const PROBES: u64 = 50_000;
    println!(
        "{:>2} {:>4} {:>10} {:>8} {:>10} {:>10} {:>8} {:>12}",
        "k", "m/n", "measured", "±95%", "approx", "exact", "z", "small run"
    );
    for k in 1..=5u32 {
        for ratio in 1..=5u64 {
            let runs: Vec<(f64, u64)> = (0..FILTERS)
                .map(|seed| one_run(N, ratio, k, seed, PROBES))
                .collect();
            let mean = runs.iter().map(|r| r.0).sum::<f64>() / FILTERS as f64;
            let var = runs.iter().map(|r| (r.0 - mean).powi(2)).sum::<f64>() / (FILTERS - 1) as f64;
            let se = (var / FILTERS as f64).sqrt();
            let m = runs[0].1; // coprime rounding: the same for every seed
            let approx = fpr_approx(N, m, k).expect("valid");
            let exact = fpr_exact(N, m, k).expect("valid");
            let (small, _) = one_run(100, ratio, k, 1_000 + u64::from(k) * 10 + ratio, 1_000);
            println!(
                "{k:>2} {ratio:>4} {:>9.4}% {:>7.4}% {:>9.4}% {:>9.4}% {:>8.2} {:>11.2}%",
                mean * 100.0,
                1.96 * se * 100.0,
                approx * 100.0,
                exact * 100.0,
                (mean - exact) / se,
                small * 100.0
            );
        }
    }
}
