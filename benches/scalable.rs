//! A scalable filter grown 1000x against a classic filter sized for the final n, at 1%:
//! lookups of members and of non-members. The target is at most 3x the classic filter's
//! time per lookup, for members and non-members alike.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench scalable
//! ```

use std::hint::black_box;

use bloomkit::{BloomFilter, ScalableBloomFilter};
use bloomkit_benches::{members, non_members, sample, BATCH};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const N: u64 = 1_000_000;
const START: u64 = 1_000;
const P: f64 = 0.01;

fn lookups(c: &mut Criterion) {
    let keys = members(N);
    let hits = sample(&keys);
    let misses = non_members(BATCH as u64);

    let mut classic = BloomFilter::new(N, P).expect("valid");
    let mut grown = ScalableBloomFilter::new(START, P).expect("valid");
    let mut grown4 = ScalableBloomFilter::builder(START, P)
        .growth(4)
        .build()
        .expect("valid");
    for k in &keys {
        classic.insert(k);
        grown.try_insert(k).expect("no limit");
        grown4.try_insert(k).expect("no limit");
    }

    for (name, probe) in [("members", &hits), ("non-members", &misses)] {
        let mut group = c.benchmark_group(format!("lookup 1e6 keys, 1%, {name}"));
        group.throughput(Throughput::Elements(BATCH as u64));
        group.bench_function(BenchmarkId::new("classic sized for 1e6", ""), |b| {
            b.iter(|| {
                probe
                    .iter()
                    .filter(|k| classic.contains(black_box(*k)))
                    .count()
            });
        });
        group.bench_function(BenchmarkId::new("scalable 1e3 -> 1e6, s=2", ""), |b| {
            b.iter(|| {
                probe
                    .iter()
                    .filter(|k| grown.contains(black_box(*k)))
                    .count()
            });
        });
        group.bench_function(BenchmarkId::new("scalable 1e3 -> 1e6, s=4", ""), |b| {
            b.iter(|| {
                probe
                    .iter()
                    .filter(|k| grown4.contains(black_box(*k)))
                    .count()
            });
        });
        group.finish();
    }
}

criterion_group!(benches, lookups);
criterion_main!(benches);
