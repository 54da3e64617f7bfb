//! bloomkit side by side with the peers a user would pick instead, in one run, one criterion
//! group per operation and key type, one `BenchmarkId` per structure and size:
//!
//! - `contains members` / `contains non-members` (u64 keys, and strings of 16-32 bytes), at
//!   10^4 keys (L1/L2), 10^6 (L2/L3) and 10^7 (on this machine's 32 MiB L3, still L3); u64
//!   keys also at 10^8 (DRAM) for the bloomkit Bloom filters, sbbf-rs and fastbloom. Each iteration
//!   asks the next 1,024 keys of a probe set of up to 2^20 (cycling), so a large filter's
//!   lines are not all left in the cache by the previous iteration;
//! - `insert`: building the structure from empty to n keys;
//! - `union`: of two structures of n keys each;
//! - `serialize` / `deserialize`: to bytes and back, through each library's own format
//!   (bloomkit's; fastbloom and `HashSet` through serde + bincode; roaring's; bloomfilter's);
//! - the bitmap against roaring on dense ids (80% of a range), and the scalable filter against
//!   growable-bloom-filter after 1000x growth.
//!
//! Every structure is built for the same n at p = 1%; its bytes and its FPR measured on 10^6
//! absent keys are printed before the timings, so speed is compared at known memory and
//! accuracy. Ratios, not absolute times: the machines are shared.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench peers -- --warm-up-time 1 --measurement-time 2
//! ```
//!
//! `cargo bench -p bloomkit-benches --bench peers -- --test` (CI) runs every benchmark once
//! on small structures.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};
use std::hint::black_box;

use bloomkit::core::Xxh3Builder;
use bloomkit::prelude::*;
use bloomkit::{
    Bitmap, BlockedBloomFilter, BloomFilter, CountingBloomFilter, ScalableBloomFilter,
    SplitBlockFilter,
};
use bloomkit_benches::{key, smoke, string_key, Cycle, BATCH};
use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};

const P: f64 = 0.01;

/// The sizes every group runs at, and the DRAM size for u64 lookups.
fn sizes() -> (Vec<u64>, u64) {
    if smoke() {
        (vec![1_000], 10_000)
    } else {
        (vec![10_000, 1_000_000, 10_000_000], 100_000_000)
    }
}

/// What the benches need of a structure holding keys of type `K`.
trait Structure<K>: Sized {
    const NAME: &'static str;
    /// Empty, sized for `n` keys at `P`.
    fn build(n: u64) -> Self;
    fn insert(&mut self, key: &K);
    fn contains(&self, key: &K) -> bool;
    fn bytes(&self) -> usize;
    /// Batched lookups, for the structures that have them.
    fn contains_batch(&self, _keys: &[K], _out: &mut Vec<bool>) -> bool {
        false
    }
    /// Called once every key is in: a static structure is built here.
    fn finish(&mut self) {}
}

macro_rules! bloomkit_structure {
    ($ty:ty, $name:literal, $build:expr) => {
        impl<K: Hash> Structure<K> for $ty {
            const NAME: &'static str = $name;
            fn build(n: u64) -> Self {
                $build(n)
            }
            fn insert(&mut self, key: &K) {
                <$ty>::insert(self, key);
            }
            fn contains(&self, key: &K) -> bool {
                <$ty>::contains(self, key)
            }
            fn bytes(&self) -> usize {
                self.heap_bytes()
            }
            fn contains_batch(&self, keys: &[K], out: &mut Vec<bool>) -> bool {
                <$ty>::contains_batch(self, keys, out);
                true
            }
        }
    };
}

bloomkit_structure!(BloomFilter<K>, "bloomkit BloomFilter", |n| {
    BloomFilter::new(n, P).expect("valid")
});
bloomkit_structure!(BlockedBloomFilter<K>, "bloomkit BlockedBloomFilter", |n| {
    BlockedBloomFilter::new(n, P).expect("valid")
});
bloomkit_structure!(
    CountingBloomFilter<K>,
    "bloomkit CountingBloomFilter",
    |n| { CountingBloomFilter::new(n, P).expect("valid") }
);

/// bloomkit's scalable filter, started at n / 1000 and grown to n.
struct Scalable<K>(ScalableBloomFilter<K>);

impl<K: Hash> Structure<K> for Scalable<K> {
    const NAME: &'static str = "bloomkit ScalableBloomFilter (grown 1000x)";
    fn build(n: u64) -> Self {
        Scalable(ScalableBloomFilter::new((n / 1000).max(1), P).expect("valid"))
    }
    fn insert(&mut self, key: &K) {
        self.0.try_insert(key).expect("no limit set");
    }
    fn contains(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

impl<K: bloomkit::ParquetValue> Structure<K> for SplitBlockFilter<K> {
    const NAME: &'static str = "bloomkit SplitBlockFilter";
    fn build(n: u64) -> Self {
        SplitBlockFilter::new(n, P).expect("valid")
    }
    fn insert(&mut self, key: &K) {
        SplitBlockFilter::insert(self, key);
    }
    fn contains(&self, key: &K) -> bool {
        SplitBlockFilter::contains(self, key)
    }
    fn bytes(&self) -> usize {
        self.heap_bytes()
    }
    fn contains_batch(&self, keys: &[K], out: &mut Vec<bool>) -> bool {
        SplitBlockFilter::contains_batch(self, keys, out);
        true
    }
}

/// sbbf-rs (split-block, SIMD with runtime dispatch) at 10 bits/key, the size its docs
/// suggest (it has no rate-based sizing); keys hashed with bloomkit's XXH3, as a user
/// brings their own hash.
struct Sbbf(sbbf_rs_safe::Filter);

impl<K: Hash> Structure<K> for Sbbf {
    const NAME: &'static str = "sbbf-rs-safe 0.3 (10 bits/key)";
    fn build(n: u64) -> Self {
        Sbbf(sbbf_rs_safe::Filter::new(10, n as usize))
    }
    fn insert(&mut self, key: &K) {
        self.0.insert_hash(Xxh3Builder::default().hash_one(key));
    }
    fn contains(&self, key: &K) -> bool {
        self.0.contains_hash(Xxh3Builder::default().hash_one(key))
    }
    fn bytes(&self) -> usize {
        self.0.as_bytes().len()
    }
}

/// xorf's binary fuse filter (8-bit fingerprints): static, built once from every key's
/// XXH3 hash (deduplicated, as it needs).
struct Fuse {
    hashes: Vec<u64>,
    filter: Option<xorf::BinaryFuse8>,
}

impl<K: Hash> Structure<K> for Fuse {
    const NAME: &'static str = "xorf 0.13 BinaryFuse8 (static)";
    fn build(_n: u64) -> Self {
        Fuse {
            hashes: Vec::new(),
            filter: None,
        }
    }
    fn insert(&mut self, key: &K) {
        self.hashes.push(Xxh3Builder::default().hash_one(key));
    }
    fn finish(&mut self) {
        self.hashes.sort_unstable();
        self.hashes.dedup();
        self.filter = Some(xorf::BinaryFuse8::try_from(&self.hashes).expect("distinct hashes"));
        self.hashes = Vec::new();
    }
    fn contains(&self, key: &K) -> bool {
        use xorf::Filter as _;
        let hash = Xxh3Builder::default().hash_one(key);
        self.filter.as_ref().is_some_and(|f| f.contains(&hash))
    }
    fn bytes(&self) -> usize {
        self.filter.as_ref().map_or(0, |f| f.fingerprints.len())
    }
}

/// bloomkit's static filters: built once from every key's hash (duplicates handled by the
/// build), like xorf's above.
struct Static<F> {
    hashes: Vec<u64>,
    filter: Option<F>,
}

macro_rules! bloomkit_static {
    ($ty:ident, $name:literal, $make:expr) => {
        impl<K: Hash> Structure<K> for Static<bloomkit::$ty<K>> {
            const NAME: &'static str = $name;
            fn build(_n: u64) -> Self {
                Static {
                    hashes: Vec::new(),
                    filter: None,
                }
            }
            fn insert(&mut self, key: &K) {
                self.hashes.push(Xxh3Builder::default().hash_one(key));
            }
            fn finish(&mut self) {
                let hashes = std::mem::take(&mut self.hashes);
                self.filter = Some($make(hashes).expect("builds"));
            }
            fn contains(&self, key: &K) -> bool {
                self.filter.as_ref().is_some_and(|f| f.contains(key))
            }
            fn bytes(&self) -> usize {
                self.filter.as_ref().map_or(0, |f| f.heap_bytes())
            }
            fn contains_batch(&self, keys: &[K], out: &mut Vec<bool>) -> bool {
                if let Some(f) = &self.filter {
                    f.contains_batch(keys, out);
                }
                true
            }
        }
    };
}
bloomkit_static!(BinaryFuse8, "bloomkit BinaryFuse8 (static)", |h: Vec<
    u64,
>| {
    bloomkit::BinaryFuse8::<K>::from_hashes(h)
});
bloomkit_static!(RibbonFilter, "bloomkit RibbonFilter (static)", |h: Vec<
    u64,
>| {
    bloomkit::RibbonFilter::<K>::from_hashes(h, P)
});

impl<K: Hash> Structure<K> for fastbloom::BloomFilter {
    const NAME: &'static str = "fastbloom 0.17";
    fn build(n: u64) -> Self {
        fastbloom::BloomFilter::with_false_pos(P).expected_items(n as usize)
    }
    fn insert(&mut self, key: &K) {
        fastbloom::BloomFilter::insert(self, key);
    }
    fn contains(&self, key: &K) -> bool {
        fastbloom::BloomFilter::contains(self, key)
    }
    fn bytes(&self) -> usize {
        self.num_bits() / 8
    }
}

impl<K: Hash> Structure<K> for bloomfilter::Bloom<K> {
    const NAME: &'static str = "bloomfilter 3";
    fn build(n: u64) -> Self {
        bloomfilter::Bloom::new_for_fp_rate(n as usize, P).expect("valid")
    }
    fn insert(&mut self, key: &K) {
        self.set(key);
    }
    fn contains(&self, key: &K) -> bool {
        self.check(key)
    }
    fn bytes(&self) -> usize {
        self.as_slice().len()
    }
}

/// growable-bloom-filter, started at n / 1000 and grown to n, as the scalable filter.
struct Growable(growable_bloom_filter::GrowableBloom);

impl<K: Hash> Structure<K> for Growable {
    const NAME: &'static str = "growable-bloom-filter 2 (grown 1000x)";
    fn build(n: u64) -> Self {
        Growable(growable_bloom_filter::GrowableBloom::new(
            P,
            (n / 1000).max(1) as usize,
        ))
    }
    fn insert(&mut self, key: &K) {
        self.0.insert(key);
    }
    fn contains(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn bytes(&self) -> usize {
        // Not exposed; its serde form is the closest measure.
        bincode::serde::encode_to_vec(&self.0, bincode::config::standard()).map_or(0, |v| v.len())
    }
}

/// Heap bytes a key owns outside the table (a `String`'s buffer).
trait KeyBytes {
    fn heap(&self) -> usize;
}

impl KeyBytes for u64 {
    fn heap(&self) -> usize {
        0
    }
}

impl KeyBytes for String {
    fn heap(&self) -> usize {
        self.capacity()
    }
}

impl<K: Hash + Eq + Clone + KeyBytes> Structure<K> for HashSet<K> {
    const NAME: &'static str = "std HashSet";
    fn build(n: u64) -> Self {
        HashSet::with_capacity(n as usize)
    }
    fn insert(&mut self, key: &K) {
        HashSet::insert(self, key.clone());
    }
    fn contains(&self, key: &K) -> bool {
        HashSet::contains(self, key)
    }
    fn bytes(&self) -> usize {
        // hashbrown: one control byte per bucket plus the key, buckets = capacity * 8 / 7.
        self.capacity() * 8 / 7 * (size_of::<K>() + 1) + self.iter().map(K::heap).sum::<usize>()
    }
}

/// A batched lookup: keys in, answers appended.
type BatchFn<K> = Box<dyn Fn(&[K], &mut Vec<bool>)>;

/// One built structure, type-erased for the lookup groups.
struct Built<K> {
    name: &'static str,
    bytes: usize,
    contains: Box<dyn Fn(&K) -> bool>,
    batch: Option<BatchFn<K>>,
}

fn build<K: 'static, S: Structure<K> + 'static>(n: u64, keys: &[K]) -> Built<K> {
    let mut s = S::build(n);
    for k in keys {
        s.insert(k);
    }
    s.finish();
    let s = std::rc::Rc::new(s);
    let batched = s.contains_batch(&[], &mut Vec::new());
    let for_batch = std::rc::Rc::clone(&s);
    Built {
        name: S::NAME,
        bytes: s.bytes(),
        contains: Box::new(move |k| s.contains(k)),
        batch: batched.then(|| {
            Box::new(move |keys: &[K], out: &mut Vec<bool>| {
                for_batch.contains_batch(keys, out);
            }) as BatchFn<K>
        }),
    }
}

/// Prints each structure's bytes and its FPR measured on `absent`.
fn describe<K>(title: &str, built: &[Built<K>], n: u64, absent: &[K]) {
    println!(
        "\n{title}: bytes and measured FPR ({} absent keys)",
        absent.len()
    );
    for s in built {
        let fp = absent.iter().filter(|k| (s.contains)(k)).count();
        println!(
            "  {:<42} {:>12} bytes {:>8.2} bits/key  FPR {:.4}%",
            s.name,
            s.bytes,
            s.bytes as f64 * 8.0 / n as f64,
            100.0 * fp as f64 / absent.len() as f64
        );
    }
}

/// The lookup groups for one key type and size: members and non-members, each structure one
/// at a time and, where it has them, batched.
fn lookups<K: 'static>(
    c: &mut Criterion,
    kind: &str,
    n: u64,
    built: &[Built<K>],
    members: &[K],
    absent: &[K],
) {
    for (what, probes) in [("members", members), ("non-members", absent)] {
        let mut group = c.benchmark_group(format!("contains {what}, {kind}"));
        group.throughput(Throughput::Elements(BATCH as u64));
        for s in built {
            let mut cycle = Cycle::new(probes);
            group.bench_function(BenchmarkId::new(s.name, n), |b| {
                b.iter(|| {
                    cycle
                        .next_batch()
                        .iter()
                        .filter(|k| (s.contains)(k))
                        .count()
                })
            });
            if let Some(batch) = &s.batch {
                let mut out = Vec::with_capacity(BATCH);
                group.bench_function(BenchmarkId::new(format!("{} batch", s.name), n), |b| {
                    b.iter(|| {
                        out.clear();
                        batch(cycle.next_batch(), &mut out);
                        out.iter().filter(|&&x| x).count()
                    })
                });
            }
        }
        group.finish();
    }
}

/// Probe sets: up to 2^20 members spread over the whole key set, and as many absent keys.
fn probe_sets<K: Clone>(keys: &[K], absent: impl Fn(u64) -> K) -> (Vec<K>, Vec<K>) {
    let count = keys.len().min(1 << 20);
    let step = keys.len() / count;
    let members = keys.iter().step_by(step).take(count).cloned().collect();
    (members, (0..count as u64).map(absent).collect())
}

fn all_structures<K>(n: u64, keys: &[K]) -> Vec<Built<K>>
where
    K: Hash + Eq + Clone + KeyBytes + bloomkit::ParquetValue + 'static,
    bloomfilter::Bloom<K>: Structure<K>,
{
    vec![
        build::<K, BloomFilter<K>>(n, keys),
        build::<K, BlockedBloomFilter<K>>(n, keys),
        build::<K, SplitBlockFilter<K>>(n, keys),
        build::<K, Sbbf>(n, keys),
        build::<K, Fuse>(n, keys),
        build::<K, Static<bloomkit::BinaryFuse8<K>>>(n, keys),
        build::<K, Static<bloomkit::RibbonFilter<K>>>(n, keys),
        build::<K, CountingBloomFilter<K>>(n, keys),
        build::<K, Scalable<K>>(n, keys),
        build::<K, fastbloom::BloomFilter>(n, keys),
        build::<K, bloomfilter::Bloom<K>>(n, keys),
        build::<K, Growable>(n, keys),
        build::<K, HashSet<K>>(n, keys),
    ]
}

/// Prints the structures' bytes and FPR for u64 keys at size `n`, then runs the lookups.
fn measure_u64(c: &mut Criterion, n: u64, built: &[Built<u64>], keys: &[u64]) {
    let (members, absent) = probe_sets(keys, |i| key((1 << 62) | i));
    let fpr_probes: Vec<u64> = (0..1_000_000).map(|i| key((1 << 61) | i)).collect();
    describe(&format!("u64 keys, n = {n}, p = 1%"), built, n, &fpr_probes);
    lookups(c, "u64", n, built, &members, &absent);
}

fn contains_u64(c: &mut Criterion) {
    let (sizes, dram) = sizes();
    for n in sizes {
        let keys: Vec<u64> = (0..n).map(key).collect();
        measure_u64(c, n, &all_structures(n, &keys), &keys);
    }
    // DRAM: the Bloom filters a user would pick for speed.
    let n = dram;
    let keys: Vec<u64> = (0..n).map(key).collect();
    let built = vec![
        build::<u64, BloomFilter<u64>>(n, &keys),
        build::<u64, BlockedBloomFilter<u64>>(n, &keys),
        build::<u64, SplitBlockFilter<u64>>(n, &keys),
        build::<u64, Sbbf>(n, &keys),
        build::<u64, fastbloom::BloomFilter>(n, &keys),
    ];
    measure_u64(c, n, &built, &keys);
}

fn contains_str(c: &mut Criterion) {
    for n in sizes().0 {
        let keys: Vec<String> = (0..n).map(string_key).collect();
        let built = all_structures(n, &keys);
        let (members, absent) = probe_sets(&keys, |i| string_key((1 << 62) | i));
        let fpr_probes: Vec<String> = (0..1_000_000).map(|i| string_key((1 << 61) | i)).collect();
        describe(
            &format!("string keys (16-32 bytes), n = {n}, p = 1%"),
            &built,
            n,
            &fpr_probes,
        );
        lookups(c, "16-32 byte strings", n, &built, &members, &absent);
    }
}

/// Building a structure from empty to `keys.len()` keys.
fn insert_one<K, S: Structure<K>>(group: &mut BenchmarkGroup<'_, WallTime>, n: u64, keys: &[K]) {
    group.bench_function(BenchmarkId::new(S::NAME, n), |b| {
        b.iter_batched_ref(
            || S::build(n),
            |s| {
                for k in keys {
                    s.insert(black_box(k));
                }
            },
            BatchSize::PerIteration,
        )
    });
}

/// As [`insert_one`], through `insert_batch`.
fn insert_batched<K: Hash, F>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    n: u64,
    keys: &[K],
    make: impl Fn(u64) -> F,
) where
    F: Filter<Key = K, InsertError = std::convert::Infallible>,
{
    group.bench_function(BenchmarkId::new(format!("{name} batch"), n), |b| {
        b.iter_batched_ref(
            || make(n),
            |f| f.insert_batch(black_box(keys)),
            BatchSize::PerIteration,
        )
    });
}

fn insert_group<K: Hash + Eq + Clone + KeyBytes>(
    c: &mut Criterion,
    kind: &str,
    keys_of: impl Fn(u64) -> K,
) where
    bloomfilter::Bloom<K>: Structure<K>,
{
    let mut group = c.benchmark_group(format!("insert, {kind}"));
    group.sample_size(10);
    for n in sizes().0 {
        let keys: Vec<K> = (0..n).map(&keys_of).collect();
        group.throughput(Throughput::Elements(n));
        insert_one::<K, BloomFilter<K>>(&mut group, n, &keys);
        insert_batched(&mut group, "bloomkit BloomFilter", n, &keys, |n| {
            BloomFilter::<K>::new(n, P).expect("valid")
        });
        insert_one::<K, BlockedBloomFilter<K>>(&mut group, n, &keys);
        insert_batched(&mut group, "bloomkit BlockedBloomFilter", n, &keys, |n| {
            BlockedBloomFilter::<K>::new(n, P).expect("valid")
        });
        insert_one::<K, CountingBloomFilter<K>>(&mut group, n, &keys);
        insert_one::<K, Scalable<K>>(&mut group, n, &keys);
        insert_one::<K, fastbloom::BloomFilter>(&mut group, n, &keys);
        insert_one::<K, bloomfilter::Bloom<K>>(&mut group, n, &keys);
        insert_one::<K, Growable>(&mut group, n, &keys);
        insert_one::<K, HashSet<K>>(&mut group, n, &keys);
    }
    group.finish();
}

fn insert(c: &mut Criterion) {
    insert_group(c, "u64", key);
    insert_group(c, "16-32 byte strings", string_key);
}

/// Two structures of `n` keys each (disjoint halves of the key stream).
fn pair<S: Structure<u64>>(n: u64) -> (S, S) {
    let mut a = S::build(n);
    let mut b = S::build(n);
    for i in 0..n {
        a.insert(&key(i));
        b.insert(&key(n + i));
    }
    (a, b)
}

fn union(c: &mut Criterion) {
    let mut group = c.benchmark_group("union, u64");
    // A union of two 10^7-key HashSets takes over a second: ten samples, as for inserts.
    group.sample_size(10);
    for n in sizes().0 {
        group.throughput(Throughput::Elements(n));
        macro_rules! bench_union {
            ($ty:ty, $op:expr) => {{
                let (a, b) = pair::<$ty>(n);
                group.bench_function(
                    BenchmarkId::new(<$ty as Structure<u64>>::NAME, n),
                    |bench| {
                        bench.iter_batched_ref(|| a.clone(), |a| $op(a, &b), BatchSize::LargeInput)
                    },
                );
            }};
        }
        bench_union!(BloomFilter<u64>, |a: &mut BloomFilter<u64>, b| a
            .union_with(b)
            .expect("compatible"));
        bench_union!(
            BlockedBloomFilter<u64>,
            |a: &mut BlockedBloomFilter<u64>, b| a.union_with(b).expect("compatible")
        );
        bench_union!(
            CountingBloomFilter<u64>,
            |a: &mut CountingBloomFilter<u64>, b| a.union_with(b).expect("compatible")
        );
        bench_union!(
            fastbloom::BloomFilter,
            |a: &mut fastbloom::BloomFilter, b| a.union(b)
        );
        bench_union!(HashSet<u64>, |a: &mut HashSet<u64>, b: &HashSet<u64>| a
            .extend(b.iter().copied()));
    }
    group.finish();
}

fn serialize(c: &mut Criterion) {
    let config = bincode::config::standard();
    for n in sizes().0 {
        let (classic, _) = pair::<BloomFilter<u64>>(n);
        let (blocked, _) = pair::<BlockedBloomFilter<u64>>(n);
        let (counting, _) = pair::<CountingBloomFilter<u64>>(n);
        let (fast, _) = pair::<fastbloom::BloomFilter>(n);
        let (peer, _) = pair::<bloomfilter::Bloom<u64>>(n);
        let (set, _) = pair::<HashSet<u64>>(n);
        let mut scalable = ScalableBloomFilter::new((n / 1000).max(1), P).expect("valid");
        for i in 0..n {
            scalable.try_insert(&key(i)).expect("no limit");
        }

        let mut group = c.benchmark_group("serialize, u64");
        group.sample_size(10);
        group.throughput(Throughput::Elements(n));
        let id = |name: &str| BenchmarkId::new(name, n);
        group.bench_function(id("bloomkit BloomFilter"), |b| {
            b.iter(|| classic.to_bytes())
        });
        group.bench_function(id("bloomkit BlockedBloomFilter"), |b| {
            b.iter(|| blocked.to_bytes())
        });
        group.bench_function(id("bloomkit CountingBloomFilter"), |b| {
            b.iter(|| counting.to_bytes())
        });
        group.bench_function(id("bloomkit ScalableBloomFilter (grown 1000x)"), |b| {
            b.iter(|| scalable.to_bytes())
        });
        group.bench_function(id("fastbloom 0.17 (serde + bincode)"), |b| {
            b.iter(|| bincode::serde::encode_to_vec(&fast, config).expect("encodes"))
        });
        group.bench_function(id("bloomfilter 3"), |b| b.iter(|| peer.to_bytes()));
        group.bench_function(id("std HashSet (serde + bincode)"), |b| {
            b.iter(|| bincode::serde::encode_to_vec(&set, config).expect("encodes"))
        });
        group.finish();

        let mut group = c.benchmark_group("deserialize, u64");
        group.sample_size(10);
        group.throughput(Throughput::Elements(n));
        let bytes = classic.to_bytes();
        group.bench_function(id("bloomkit BloomFilter"), |b| {
            b.iter(|| BloomFilter::<u64>::from_bytes(&bytes).expect("valid"))
        });
        let bytes = blocked.to_bytes();
        group.bench_function(id("bloomkit BlockedBloomFilter"), |b| {
            b.iter(|| BlockedBloomFilter::<u64>::from_bytes(&bytes).expect("valid"))
        });
        let bytes = counting.to_bytes();
        group.bench_function(id("bloomkit CountingBloomFilter"), |b| {
            b.iter(|| CountingBloomFilter::<u64>::from_bytes(&bytes).expect("valid"))
        });
        let bytes = scalable.to_bytes();
        group.bench_function(id("bloomkit ScalableBloomFilter (grown 1000x)"), |b| {
            b.iter(|| ScalableBloomFilter::<u64>::from_bytes(&bytes).expect("valid"))
        });
        let bytes = bincode::serde::encode_to_vec(&fast, config).expect("encodes");
        group.bench_function(id("fastbloom 0.17 (serde + bincode)"), |b| {
            b.iter(|| {
                bincode::serde::decode_from_slice::<fastbloom::BloomFilter, _>(&bytes, config)
                    .expect("valid")
            })
        });
        let bytes = peer.to_bytes();
        group.bench_function(id("bloomfilter 3"), |b| {
            b.iter(|| bloomfilter::Bloom::<u64>::from_bytes(bytes.clone()).expect("valid"))
        });
        let bytes = bincode::serde::encode_to_vec(&set, config).expect("encodes");
        group.bench_function(id("std HashSet (serde + bincode)"), |b| {
            b.iter(|| {
                bincode::serde::decode_from_slice::<HashSet<u64>, _>(&bytes, config).expect("valid")
            })
        });
        group.finish();
    }
}

/// Dense ids: 80% of the range `0..n * 5 / 4`, bitmap against roaring, for every operation.
fn dense(c: &mut Criterion) {
    for n in sizes().0 {
        let range = (n * 5 / 4) as u32;
        let ids: Vec<u32> = (0..range).filter(|&i| key(u64::from(i)) % 5 != 0).collect();
        let other: Vec<u32> = (0..range)
            .filter(|&i| key(u64::from(i) << 32) % 5 != 0)
            .collect();
        let build_bitmap = |ids: &[u32]| {
            let mut b = Bitmap::new(0..=range - 1).expect("valid");
            for &i in ids {
                b.try_insert(&i).expect("in range");
            }
            b
        };
        let build_roaring = |ids: &[u32]| ids.iter().copied().collect::<roaring::RoaringBitmap>();
        let (bitmap, roaring) = (build_bitmap(&ids), build_roaring(&ids));
        let (bitmap2, roaring2) = (build_bitmap(&other), build_roaring(&other));
        println!(
            "\ndense ids: {} of 0..{range}: Bitmap {} bytes, roaring {} bytes (serialized)",
            ids.len(),
            bitmap.heap_bytes(),
            roaring.serialized_size()
        );
        let queries: Vec<u32> = (0..(1u64 << 20).min(u64::from(range)))
            .map(|i| (key(i ^ 0xd1) % u64::from(range)) as u32)
            .collect();
        let id = |name: &str| BenchmarkId::new(name, n);

        let mut group = c.benchmark_group("dense u32 ids: contains (80% members)");
        group.throughput(Throughput::Elements(BATCH as u64));
        let mut cycle = Cycle::new(&queries);
        group.bench_function(id("bloomkit Bitmap"), |b| {
            b.iter(|| {
                cycle
                    .next_batch()
                    .iter()
                    .filter(|&&q| bitmap.contains(&q))
                    .count()
            })
        });
        group.bench_function(id("roaring 0.12"), |b| {
            b.iter(|| {
                cycle
                    .next_batch()
                    .iter()
                    .filter(|&&q| roaring.contains(q))
                    .count()
            })
        });
        group.finish();

        let mut group = c.benchmark_group("dense u32 ids: insert");
        group.throughput(Throughput::Elements(ids.len() as u64));
        group.sample_size(10);
        group.bench_function(id("bloomkit Bitmap"), |b| b.iter(|| build_bitmap(&ids)));
        group.bench_function(id("roaring 0.12"), |b| {
            b.iter(|| {
                let mut r = roaring::RoaringBitmap::new();
                for &i in &ids {
                    r.insert(black_box(i));
                }
                r
            })
        });
        group.finish();

        let mut group = c.benchmark_group("dense u32 ids: union");
        group.sample_size(10);
        group.throughput(Throughput::Elements(ids.len() as u64));
        group.bench_function(id("bloomkit Bitmap"), |b| {
            b.iter_batched_ref(
                || bitmap.clone(),
                |a| a.union_with(&bitmap2).expect("same range"),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(id("roaring 0.12"), |b| {
            b.iter_batched_ref(
                || roaring.clone(),
                |a| *a |= &roaring2,
                BatchSize::LargeInput,
            )
        });
        group.finish();

        let mut group = c.benchmark_group("dense u32 ids: serialize + deserialize");
        group.sample_size(10);
        group.throughput(Throughput::Elements(ids.len() as u64));
        group.bench_function(id("bloomkit Bitmap"), |b| {
            b.iter(|| Bitmap::<u32>::from_bytes(&bitmap.to_bytes()).expect("valid"))
        });
        group.bench_function(id("roaring 0.12"), |b| {
            b.iter(|| {
                let mut bytes = Vec::with_capacity(roaring.serialized_size());
                roaring.serialize_into(&mut bytes).expect("writes");
                roaring::RoaringBitmap::deserialize_from(&bytes[..]).expect("valid")
            })
        });
        group.finish();
    }
}

criterion_group!(
    benches,
    contains_u64,
    contains_str,
    insert,
    union,
    serialize,
    dense
);
criterion_main!(benches);
