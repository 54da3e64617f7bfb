//! bloomkit side by side with the peers a user would pick instead, in one run: lookups of
//! members and of non-members, u64 keys at 1%, at 10^6 keys (cache-resident) and 10^7 (DRAM);
//! the bitmap against roaring on dense ids; the scalable filter against growable-bloom-filter
//! after 1000x growth. Before the timings, each structure's bytes and measured FPR (10^6
//! absent keys) are printed, so speed is compared at known memory and accuracy. Ratios, not
//! absolute times: the machines are shared.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench peers -- --warm-up-time 1 --measurement-time 3
//! ```

use std::collections::HashSet;
use std::hint::black_box;

use bloomkit::{Bitmap, BlockedBloomFilter, BloomFilter, CountingBloomFilter, ScalableBloomFilter};
use bloomkit_benches::{members, non_members, sample, BATCH};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const P: f64 = 0.01;

/// A structure under test: a name and a membership test.
struct Subject {
    name: &'static str,
    bytes: Option<usize>,
    contains: Box<dyn Fn(u64) -> bool>,
}

fn subjects(n: u64, keys: &[u64]) -> Vec<Subject> {
    let mut classic = BloomFilter::new(n, P).expect("valid");
    let mut blocked = BlockedBloomFilter::new(n, P).expect("valid");
    let mut counting = CountingBloomFilter::new(n, P).expect("valid");
    let mut fast = fastbloom::BloomFilter::with_false_pos(P).expected_items(n as usize);
    let mut peer = bloomfilter::Bloom::new_for_fp_rate(n as usize, P).expect("valid");
    let mut set = HashSet::with_capacity(keys.len());
    for k in keys {
        classic.insert(k);
        blocked.insert(k);
        counting.insert(k);
        fast.insert(k);
        peer.set(k);
        set.insert(*k);
    }
    let set_bytes = set.capacity() * 8 / 7 * 9;
    vec![
        Subject {
            name: "bloomkit BloomFilter",
            bytes: Some(classic.heap_bytes()),
            contains: Box::new(move |k| classic.contains(&k)),
        },
        Subject {
            name: "bloomkit BlockedBloomFilter",
            bytes: Some(blocked.heap_bytes()),
            contains: Box::new(move |k| blocked.contains(&k)),
        },
        Subject {
            name: "bloomkit CountingBloomFilter",
            bytes: Some(counting.heap_bytes()),
            contains: Box::new(move |k| counting.contains(&k)),
        },
        Subject {
            name: "fastbloom 0.17",
            bytes: Some(fast.num_bits() / 8),
            contains: Box::new(move |k| fast.contains(&k)),
        },
        Subject {
            name: "bloomfilter 3",
            bytes: Some(peer.as_slice().len()),
            contains: Box::new(move |k| peer.check(&k)),
        },
        Subject {
            name: "std HashSet",
            bytes: Some(set_bytes),
            contains: Box::new(move |k| set.contains(&k)),
        },
    ]
}

fn describe(title: &str, subjects: &[Subject], keys_kept: u64) {
    let absent = non_members(1_000_000);
    println!("\n{title}: bytes and measured FPR (10^6 absent keys)");
    for s in subjects {
        let fp = absent.iter().filter(|&&k| (s.contains)(k)).count();
        let bytes = s.bytes.map_or("n/a".into(), |b| b.to_string());
        let bpk = s.bytes.map_or("n/a".into(), |b| {
            format!("{:.2}", b as f64 * 8.0 / keys_kept as f64)
        });
        println!(
            "  {:<30} {:>12} bytes {:>7} bits/key  FPR {:.4}%",
            s.name,
            bytes,
            bpk,
            fp as f64 / 1e4
        );
    }
}

fn lookups(c: &mut Criterion) {
    for n in [1_000_000u64, 10_000_000] {
        let keys = members(n);
        let subjects = subjects(n, &keys);
        describe(&format!("u64 keys, n = {n}, p = 1%"), &subjects, n);
        let hits = sample(&keys);
        let misses = non_members(BATCH as u64);
        for (kind, probe) in [("members", &hits), ("non-members", &misses)] {
            let mut group = c.benchmark_group(format!("contains {kind}, u64, n={n}, 1%"));
            group.throughput(Throughput::Elements(BATCH as u64));
            for s in &subjects {
                group.bench_function(BenchmarkId::from_parameter(s.name), |b| {
                    b.iter(|| {
                        probe
                            .iter()
                            .filter(|&&k| (s.contains)(black_box(k)))
                            .count()
                    });
                });
            }
            group.finish();
        }
    }
}

fn dense(c: &mut Criterion) {
    // 10^7 ids of a range of 1.25 * 10^7.
    let range = 12_500_000u32;
    let ids: Vec<u32> = (0..range)
        .filter(|&i| bloomkit_benches::key(u64::from(i)) % 5 != 0)
        .collect();
    let mut bitmap = Bitmap::new(0..=range - 1).expect("valid");
    let mut roaring = roaring::RoaringBitmap::new();
    for &i in &ids {
        bitmap.insert(i).expect("in range");
        roaring.insert(i);
    }
    println!(
        "\ndense ids: {} of 0..{range}: Bitmap {} bytes, roaring {} bytes (serialized)",
        ids.len(),
        bitmap.heap_bytes(),
        roaring.serialized_size()
    );
    let queries: Vec<u32> = (0..BATCH as u64)
        .map(|i| (bloomkit_benches::key(i ^ 0xd1) % u64::from(range)) as u32)
        .collect();
    let mut group = c.benchmark_group("contains, dense u32 ids, 1e7 of 1.25e7");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("bloomkit Bitmap", |b| {
        b.iter(|| {
            queries
                .iter()
                .filter(|&&q| bitmap.contains(black_box(q)))
                .count()
        })
    });
    group.bench_function("roaring 0.12", |b| {
        b.iter(|| {
            queries
                .iter()
                .filter(|&&q| roaring.contains(black_box(q)))
                .count()
        })
    });
    group.finish();
}

fn scalable(c: &mut Criterion) {
    let n = 1_000_000u64;
    let keys = members(n);
    let mut ours = ScalableBloomFilter::new(1_000, P).expect("valid");
    let mut theirs = growable_bloom_filter::GrowableBloom::new(P, 1_000);
    for k in &keys {
        ours.insert(k).expect("no limit");
        theirs.insert(k);
    }
    let absent = non_members(1_000_000);
    let fpr = |f: &dyn Fn(u64) -> bool| absent.iter().filter(|&&k| f(k)).count() as f64 / 1e4;
    println!(
        "\nscalable, grown 1e3 -> 1e6 at 1%: bloomkit {} bytes, FPR {:.4}%; growable-bloom-filter FPR {:.4}%",
        ours.heap_bytes(),
        fpr(&|k| ours.contains(&k)),
        fpr(&|k| theirs.contains(k)),
    );
    let hits = sample(&keys);
    let misses = non_members(BATCH as u64);
    for (kind, probe) in [("members", &hits), ("non-members", &misses)] {
        let mut group = c.benchmark_group(format!("contains {kind}, scalable grown 1000x"));
        group.throughput(Throughput::Elements(BATCH as u64));
        group.bench_function("bloomkit ScalableBloomFilter", |b| {
            b.iter(|| {
                probe
                    .iter()
                    .filter(|k| ours.contains(black_box(*k)))
                    .count()
            })
        });
        group.bench_function("growable-bloom-filter 2", |b| {
            b.iter(|| {
                probe
                    .iter()
                    .filter(|k| theirs.contains(black_box(*k)))
                    .count()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, lookups, dense, scalable);
criterion_main!(benches);
