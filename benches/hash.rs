//! The cost of hashing a key through `Xxh3Builder` (the `Hash` trait, a buffering hasher,
//! XXH3's one-shot routine) against calling the one-shot routine on the key's bytes
//! directly: what the buffering costs.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench hash
//! ```

use std::hash::BuildHasher;
use std::hint::black_box;

use bloomkit::Xxh3Builder;
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
    group.bench_function("36-byte str via XXH3 one-shot on its bytes", |b| {
        b.iter(|| {
            words.iter().fold(0u64, |acc, w| {
                acc ^ twox_hash::XxHash3_64::oneshot_with_seed(7, black_box(w.as_bytes()))
            })
        });
    });
    group.finish();
}

criterion_group!(benches, hashing);
criterion_main!(benches);
