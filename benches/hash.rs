//! The cost of hashing a key through `Xxh3Builder` (the `Hash` trait, a buffering hasher,
//! XXH3's one-shot routine) against calling the one-shot routine on the key's bytes
//! directly: what the buffering costs. And the keyed hasher (SipHash-1-3 under a secret
//! key) beside XXH3, per key and inside a filter's insert and lookup.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench hash
//! ```

use std::hash::BuildHasher;
use std::hint::black_box;

use bloomkit::{BloomFilter, HashKey, KeyedHasher, Xxh3Builder};
use bloomkit_benches::{members, BATCH};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn hashing(c: &mut Criterion) {
    let keys = members(BATCH as u64);
    let words: Vec<String> = keys
        .iter()
        .map(|k| format!("https://example.com/{k:x}"))
        .collect();
    let builder = Xxh3Builder::with_seed(7);
    let mut group = c.benchmark_group("hash one key");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("u64 via Xxh3Builder::hash_one", |b| {
        b.iter(|| {
            keys.iter()
                .fold(0u64, |acc, k| acc ^ builder.hash_one(black_box(k)))
        });
    });
    group.bench_function("u64 via XXH3 one-shot on its bytes", |b| {
        b.iter(|| {
            keys.iter().fold(0u64, |acc, k| {
                acc ^ twox_hash::XxHash3_64::oneshot_with_seed(7, &black_box(k).to_le_bytes())
            })
        });
    });
    group.bench_function("36-byte str via Xxh3Builder::hash_one", |b| {
        b.iter(|| {
            words
                .iter()
                .fold(0u64, |acc, w| acc ^ builder.hash_one(black_box(w.as_str())))
        });
    });
    let keyed = KeyedHasher::new(HashKey::new([7; 16]));
    group.bench_function("u64 via KeyedHasher::hash_one", |b| {
        b.iter(|| {
            keys.iter()
                .fold(0u64, |acc, k| acc ^ keyed.hash_one(black_box(k)))
        });
    });
    group.bench_function("36-byte str via KeyedHasher::hash_one", |b| {
        b.iter(|| {
            words
                .iter()
                .fold(0u64, |acc, w| acc ^ keyed.hash_one(black_box(w.as_str())))
        });
    });
    group.bench_function("36-byte str via XXH3 one-shot on its bytes", |b| {
        b.iter(|| {
            words.iter().fold(0u64, |acc, w| {
                acc ^ twox_hash::XxHash3_64::oneshot_with_seed(7, black_box(w.as_bytes()))
            })
        });
    });
    group.finish();
}

/// A classic filter of 10^6 keys at 1%, hashing with XXH3 or keyed: inserts and lookups of
/// members, side by side.
fn keyed_filter(c: &mut Criterion) {
    const N: u64 = 1_000_000;
    let keys = members(BATCH as u64);
    let mut plain = BloomFilter::<u64>::new(N, 0.01).expect("valid");
    let mut keyed = BloomFilter::<u64>::builder(N, 0.01)
        .hasher(KeyedHasher::new(HashKey::new([7; 16])))
        .build()
        .expect("valid");
    plain.extend(members(N).iter().copied());
    keyed.extend(members(N).iter().copied());
    let mut group = c.benchmark_group("keyed filter, 10^6 u64 keys");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("contains, XXH3", |b| {
        b.iter(|| keys.iter().filter(|k| plain.contains(black_box(k))).count());
    });
    group.bench_function("contains, keyed SipHash-1-3", |b| {
        b.iter(|| keys.iter().filter(|k| keyed.contains(black_box(k))).count());
    });
    group.bench_function("insert, XXH3", |b| {
        b.iter(|| keys.iter().filter(|k| plain.insert(black_box(k))).count());
    });
    group.bench_function("insert, keyed SipHash-1-3", |b| {
        b.iter(|| keys.iter().filter(|k| keyed.insert(black_box(k))).count());
    });
    group.finish();
}

criterion_group!(benches, hashing, keyed_filter);
criterion_main!(benches);
