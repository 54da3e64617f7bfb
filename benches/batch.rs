//! Batched lookups against one key at a time, in a blocked filter far larger than the
//! last-level cache (10^8 keys at 1%: 124 MB), and in classic and counting filters.
//!
//! Every iteration asks the next 1,024 keys of a probe set of 2^20 (cycling), so the lines
//! a batch needs are not the ones the previous batch loaded.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench batch
//! ```

use std::hint::black_box;

use bloomkit::BlockedBloomFilter;
use bloomkit_benches::{key, smoke, Cycle, BATCH};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn blocked(c: &mut Criterion) {
    let n: u64 = if smoke() { 100_000 } else { 100_000_000 };
    let mut filter = BlockedBloomFilter::<u64>::new(n, 0.01).expect("valid");
    let keys: Vec<u64> = (0..n).map(key).collect();
    filter.insert_batch(&keys);
    drop(keys);
    println!("\nblocked filter: {n} keys, {} bytes", filter.heap_bytes());
    let probes = 1u64 << 20;
    let members: Vec<u64> = (0..probes)
        .map(|i| key(i * (n / probes).max(1) % n))
        .collect();
    let absent: Vec<u64> = (0..probes).map(|i| key((1 << 62) | i)).collect();
    for (kind, set) in [("members", &members), ("non-members", &absent)] {
        let mut group = c.benchmark_group(format!("batched contains {kind}, u64, blocked, n={n}"));
        group.throughput(Throughput::Elements(BATCH as u64));
        let mut cycle = Cycle::new(set);
        group.bench_function(BenchmarkId::from_parameter("one at a time"), |b| {
            b.iter(|| {
                cycle
                    .next_batch()
                    .iter()
                    .filter(|k| filter.contains(*k))
                    .count()
            })
        });
        let mut out = Vec::with_capacity(BATCH);
        group.bench_function(BenchmarkId::from_parameter("contains_batch"), |b| {
            b.iter(|| {
                out.clear();
                filter.contains_batch(cycle.next_batch(), &mut out);
                out.iter().filter(|&&x| x).count()
            })
        });
        group.bench_function(
            BenchmarkId::from_parameter("plain loads, no prefetch"),
            |b| {
                b.iter(|| {
                    let batch = cycle.next_batch();
                    let mut found = 0;
                    for chunk in batch.chunks(16) {
                        let mut hashes = [0u64; 16];
                        let mut touch = 0u64;
                        for (h, k) in hashes.iter_mut().zip(chunk) {
                            *h = filter.hash_key(k);
                            touch ^= filter.block_of(*h)[0];
                        }
                        black_box(touch);
                        for h in &hashes[..chunk.len()] {
                            // not `usize::from(flag)`: rust-lang/rust#158206
                            if filter.contains_hash(*h) {
                                found += 1;
                            }
                        }
                    }
                    found
                })
            },
        );
        group.finish();
    }
}

criterion_group!(benches, blocked);
criterion_main!(benches);
