//! The atomic filters against their single-threaded twins and fastbloom's
//! `AtomicBloomFilter`, side by side in one run (issue 15). u64 keys, p = 1%.
//!
//! - `atomic insert`: building from empty to n keys, one thread (the atomic filters pay for
//!   their `fetch_or`s here) and, for the atomic ones, two threads inserting half each;
//! - `atomic counting insert`: the atomic counting filter per counter width (4, 8, 16 bits),
//!   1 and 2 threads, next to the single-threaded counting filter;
//! - `atomic contains`: single-threaded lookups of members and non-members, `BATCH` keys per
//!   iteration, cycling over a probe set.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench atomic -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! Ratios, not absolute times: the machines are shared and noisy.

use std::hint::black_box;
use std::thread;

use bloomkit::counting::{Counter, U4};
use bloomkit::{
    AtomicBlockedBloomFilter, AtomicBloomFilter, AtomicCountingBloomFilter, BlockedBloomFilter,
    BloomFilter, CountingBloomFilter,
};
use bloomkit_benches::{members, non_members, smoke, Cycle};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const P: f64 = 0.01;

fn sizes() -> Vec<u64> {
    if smoke() {
        vec![1_000]
    } else {
        vec![1_000_000, 10_000_000]
    }
}

/// Inserts `keys` with `insert`, split over `threads` scoped threads.
fn split<F: Sync>(filter: &F, keys: &[u64], threads: usize, insert: fn(&F, &[u64])) {
    let chunk = keys.len().div_ceil(threads);
    thread::scope(|s| {
        for part in keys.chunks(chunk) {
            s.spawn(move || insert(filter, part));
        }
    });
}

fn inserts(c: &mut Criterion) {
    let mut group = c.benchmark_group("atomic insert");
    group.sample_size(10);
    for n in sizes() {
        let keys = members(n);
        group.throughput(Throughput::Elements(n));
        let id = |name: &str| BenchmarkId::new(name, n);
        group.bench_function(id("bloomkit classic"), |b| {
            b.iter(|| {
                let mut f = BloomFilter::<u64>::new(n, P).unwrap();
                keys.iter().for_each(|k| {
                    f.insert(k);
                });
                black_box(f)
            })
        });
        group.bench_function(id("bloomkit blocked"), |b| {
            b.iter(|| {
                let mut f = BlockedBloomFilter::<u64>::new(n, P).unwrap();
                keys.iter().for_each(|k| {
                    f.insert(k);
                });
                black_box(f)
            })
        });
        group.bench_function(id("fastbloom"), |b| {
            b.iter(|| {
                let mut f = fastbloom::BloomFilter::with_false_pos(P).expected_items(n as usize);
                keys.iter().for_each(|k| {
                    f.insert(k);
                });
                black_box(f)
            })
        });
        for threads in [1, 2] {
            let t = format!("{threads} thread{}", if threads > 1 { "s" } else { "" });
            group.bench_function(id(&format!("bloomkit atomic classic, {t}")), |b| {
                b.iter(|| {
                    let f = AtomicBloomFilter::<u64>::new(n, P).unwrap();
                    split(&f, &keys, threads, |f, keys| {
                        keys.iter().for_each(|k| {
                            f.insert(k);
                        })
                    });
                    black_box(f)
                })
            });
            group.bench_function(id(&format!("bloomkit atomic blocked, {t}")), |b| {
                b.iter(|| {
                    let f = AtomicBlockedBloomFilter::<u64>::new(n, P).unwrap();
                    split(&f, &keys, threads, |f, keys| {
                        keys.iter().for_each(|k| {
                            f.insert(k);
                        })
                    });
                    black_box(f)
                })
            });
            group.bench_function(id(&format!("fastbloom atomic, {t}")), |b| {
                b.iter(|| {
                    let f =
                        fastbloom::AtomicBloomFilter::with_false_pos(P).expected_items(n as usize);
                    split(&f, &keys, threads, |f, keys| {
                        keys.iter().for_each(|k| {
                            f.insert(k);
                        })
                    });
                    black_box(f)
                })
            });
        }
    }
    group.finish();
}

fn lookups(c: &mut Criterion) {
    for (what, absent) in [("members", false), ("non-members", true)] {
        let mut group = c.benchmark_group(format!("atomic contains {what}"));
        for n in sizes() {
            let keys = members(n);
            let probes = if absent {
                non_members(1 << 20)
            } else {
                keys.clone()
            };
            let mut blocked = BlockedBloomFilter::<u64>::new(n, P).unwrap();
            blocked.insert_batch(&keys);
            let atomic = AtomicBlockedBloomFilter::from_filter(blocked.clone()).unwrap();
            let fast = fastbloom::AtomicBloomFilter::with_false_pos(P).expected_items(n as usize);
            keys.iter().for_each(|k| {
                fast.insert(k);
            });
            group.throughput(Throughput::Elements(bloomkit_benches::BATCH as u64));
            let id = |name: &str| BenchmarkId::new(name, n);
            let mut cycle = Cycle::new(&probes);
            group.bench_function(id("bloomkit blocked"), |b| {
                b.iter(|| {
                    cycle
                        .next_batch()
                        .iter()
                        .filter(|k| blocked.contains(*k))
                        .count()
                })
            });
            let mut cycle = Cycle::new(&probes);
            group.bench_function(id("bloomkit atomic blocked"), |b| {
                b.iter(|| {
                    cycle
                        .next_batch()
                        .iter()
                        .filter(|k| atomic.contains(*k))
                        .count()
                })
            });
            let mut cycle = Cycle::new(&probes);
            group.bench_function(id("fastbloom atomic"), |b| {
                b.iter(|| {
                    cycle
                        .next_batch()
                        .iter()
                        .filter(|k| fast.contains(*k))
                        .count()
                })
            });
        }
        group.finish();
    }
}

/// Inserts into one atomic counting filter, per counter width, 1 and 2 threads, next to the
/// single-threaded counting filter: what the compare-and-swap costs, and whether 16
/// four-bit counters to a word collide enough between threads to matter.
fn counting(c: &mut Criterion) {
    fn width<C: Counter>(
        group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        n: u64,
        keys: &[u64],
        name: &str,
    ) {
        let id = |what: &str| BenchmarkId::new(format!("{what} {name}"), n);
        group.bench_function(id("counting"), |b| {
            b.iter(|| {
                let mut f = CountingBloomFilter::<u64>::builder(n, P)
                    .counter::<C>()
                    .build()
                    .unwrap();
                keys.iter().for_each(|k| {
                    f.insert(k);
                });
                black_box(f)
            })
        });
        for threads in [1, 2] {
            group.bench_function(id(&format!("atomic counting, {threads} thr.")), |b| {
                b.iter(|| {
                    let f = AtomicCountingBloomFilter::<u64>::builder(n, P)
                        .counter::<C>()
                        .build()
                        .unwrap();
                    split(&f, keys, threads, |f, keys| {
                        keys.iter().for_each(|k| {
                            f.insert(k);
                        })
                    });
                    black_box(f)
                })
            });
        }
    }
    let mut group = c.benchmark_group("atomic counting insert");
    group.sample_size(10);
    for n in sizes() {
        let keys = members(n);
        group.throughput(Throughput::Elements(n));
        width::<U4>(&mut group, n, &keys, "u4");
        width::<u8>(&mut group, n, &keys, "u8");
        width::<u16>(&mut group, n, &keys, "u16");
    }
    group.finish();
}

criterion_group!(benches, inserts, lookups, counting);
criterion_main!(benches);
