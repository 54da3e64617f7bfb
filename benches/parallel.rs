//! Parallel builds (issue 15): 10^8 keys into one filter, sequentially and from a rayon
//! parallel iterator in the two ways a parallel build can go, side by side in one run:
//!
//! - `atomic`: every thread inserts into one shared atomic filter (`fetch_or`), and the
//!   result is copied back into a plain filter;
//! - `par_extend (merge)`: bloomkit's `par_extend`, one plain filter per rayon thread, ORed
//!   together at the end (the per-partition reduce of a distributed engine).
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench parallel -- --warm-up-time 1 --measurement-time 20
//! ```
//!
//! The keys come from a range through a mixing function, so no 800 MB key vector competes
//! with the filter for memory bandwidth. Ratios, not absolute times.

use std::hint::black_box;

use bloomkit::{AtomicBlockedBloomFilter, AtomicBloomFilter, BlockedBloomFilter, BloomFilter};
use bloomkit_benches::smoke;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rayon::prelude::*;

const P: f64 = 0.01;

/// Key `i`: distinct for distinct `i` (an odd multiplier is a bijection).
fn key(i: u64) -> u64 {
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555
}

/// Keys go to the atomic filter `CHUNK` at a time through `insert_batch`, as `par_extend`
/// does, whose prefetching is what makes a build of a filter larger than the caches fast.
const CHUNK: usize = bloomkit::parallel::CHUNK;

/// Fills a shared atomic filter from every rayon job, a chunk at a time through the atomic
/// filter's `insert_batch` (the strategy `par_extend` did not take).
fn atomic_build<F: Sync>(n: u64, filter: &F, insert: impl Fn(&F, &mut Vec<u64>) + Sync) {
    struct Chunk<'a, F, G: Fn(&F, &mut Vec<u64>)> {
        keys: Vec<u64>,
        filter: &'a F,
        insert: &'a G,
    }
    impl<F, G: Fn(&F, &mut Vec<u64>)> Drop for Chunk<'_, F, G> {
        fn drop(&mut self) {
            (self.insert)(self.filter, &mut self.keys);
        }
    }
    (0..n).into_par_iter().map(key).for_each_init(
        || Chunk {
            keys: Vec::with_capacity(CHUNK),
            filter,
            insert: &insert,
        },
        |chunk, k| {
            chunk.keys.push(k);
            if chunk.keys.len() == CHUNK {
                (chunk.insert)(chunk.filter, &mut chunk.keys);
            }
        },
    );
}

fn builds(c: &mut Criterion) {
    let n: u64 = if smoke() { 10_000 } else { 100_000_000 };
    let mut group = c.benchmark_group("parallel build");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n));
    let id = |name: &str| BenchmarkId::new(name, n);

    group.bench_function(id("classic sequential"), |b| {
        b.iter(|| {
            let mut f = BloomFilter::<u64>::new(n, P).unwrap();
            f.insert_batch((0..n).map(key));
            black_box(f)
        })
    });
    group.bench_function(id("classic atomic"), |b| {
        b.iter(|| {
            let f = AtomicBloomFilter::<u64>::new(n, P).unwrap();
            atomic_build(n, &f, |f, keys| {
                f.insert_batch(keys.drain(..));
            });
            black_box(f.to_filter().unwrap())
        })
    });
    group.bench_function(id("classic par_extend (merge)"), |b| {
        b.iter(|| {
            let mut f = BloomFilter::<u64>::new(n, P).unwrap();
            f.par_extend((0..n).into_par_iter().map(key));
            black_box(f)
        })
    });
    group.bench_function(id("blocked sequential"), |b| {
        b.iter(|| {
            let mut f = BlockedBloomFilter::<u64>::new(n, P).unwrap();
            f.insert_batch((0..n).map(key));
            black_box(f)
        })
    });
    group.bench_function(id("blocked atomic"), |b| {
        b.iter(|| {
            let f = AtomicBlockedBloomFilter::<u64>::new(n, P).unwrap();
            atomic_build(n, &f, |f, keys| {
                f.insert_batch(keys.drain(..));
            });
            black_box(f.to_filter().unwrap())
        })
    });
    group.bench_function(id("blocked par_extend (merge)"), |b| {
        b.iter(|| {
            let mut f = BlockedBloomFilter::<u64>::new(n, P).unwrap();
            f.par_extend((0..n).into_par_iter().map(key));
            black_box(f)
        })
    });
    group.finish();
}

criterion_group!(benches, builds);
criterion_main!(benches);
