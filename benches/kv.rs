//! A redb store behind a counting filter (p = 1%) against the same store read directly,
//! side by side in one run: lookups of absent keys and of present keys. The store (10^6
//! keys of 100-byte values, about 180 MiB) is warm in memory here, the case least
//! favourable to the filter: every read it spares is a B-tree walk through cached pages,
//! not a disk read. The cold case (a store larger than the page cache) is measured by
//! the `mixed_workload` example; `docs/performance.md` has both.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench kv
//! ```

use std::hint::black_box;

use bloomkit::kv::{FilteredStore, Op, Options, RedbStore, Store};
use bloomkit::BlockedBloomFilter;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// Lookups per measured batch.
const BATCH: u64 = 1_024;

fn keys() -> u64 {
    if bloomkit_benches::smoke() {
        10_000
    } else {
        1_000_000
    }
}

fn key(tag: u8, i: u64) -> [u8; 16] {
    let mut k = [tag; 16];
    k[1..9].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
    k
}

fn bench(c: &mut Criterion) {
    let n = keys();
    let dir = std::env::temp_dir().join(format!("bloomkit-bench-kv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let store: FilteredStore<RedbStore> = FilteredStore::open(
        RedbStore::open(dir.join("bench.redb")).expect("redb"),
        Options::new(n, 0.01),
    )
    .expect("store");
    let value = [7u8; 100];
    for start in (0..n).step_by(50_000) {
        let batch: Vec<[u8; 16]> = (start..(start + 50_000).min(n))
            .map(|i| key(b'k', i))
            .collect();
        let ops: Vec<Op<'_>> = batch
            .iter()
            .map(|k| Op::Put {
                key: k,
                value: &value,
            })
            .collect();
        store.write(&ops).expect("write");
    }

    // The filter's own share: the same lookups answered by the counting filter alone, and
    // by a blocked filter (one cache line per key) of the same keys, for comparison.
    let counting = store.filter();
    let mut blocked = BlockedBloomFilter::<[u8]>::new(n, 0.01).expect("valid");
    for i in 0..n {
        blocked.insert(&key(b'k', i));
    }

    for (name, tag) in [("absent", b'a'), ("present", b'k')] {
        let mut group = c.benchmark_group(format!("kv/{name}"));
        group.throughput(Throughput::Elements(BATCH));
        let mut at = 0u64;
        let mut next = move || {
            at = (at + 1) % n;
            key(tag, at.wrapping_mul(0x2545_f491_4f6c_dd1d) % n)
        };
        group.bench_function("without filter", |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    black_box(store.store().get(&next()).expect("get"));
                }
            })
        });
        group.bench_function("with filter", |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    black_box(store.get(&next()).expect("get"));
                }
            })
        });
        group.bench_function("counting filter alone", |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    black_box(counting.contains(&next()[..]));
                }
            })
        });
        group.bench_function("blocked filter alone", |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    black_box(blocked.contains(&next()[..]));
                }
            })
        });
        group.finish();
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
