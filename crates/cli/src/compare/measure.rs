//! Build each structure on the workload, time it, and check its answers.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};
use std::hint::black_box;
use std::time::Instant;

use bloomkit::classic::ParquetValue;
use bloomkit::jvm::guava::{funnel, Funnel, GuavaBloomFilter};
use bloomkit::jvm::murmur3::Hash128;
use bloomkit::jvm::spark::{SparkBloomFilter, SparkHash};
use bloomkit::{
    BinaryFuse16, BinaryFuse32, BinaryFuse8, Bitmap, BlockedBloomFilter, BloomFilter,
    CountingBloomFilter, ExpandableFilter, Filter, Lookup, QuotientFilter, Remove, RibbonFilter,
    ScalableBloomFilter, SimdBlockFilter, SplitBlockFilter, Xxh3Builder,
};
use serde::Serialize;

use super::workload::Data;

/// One structure's measurements on the workload (or why it cannot serve it).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    /// The structure.
    pub structure: String,
    /// Why it cannot serve this workload, if it cannot.
    pub cannot_serve: Option<String>,
    /// Heap bytes after building.
    pub bytes: u64,
    /// Bits of memory per key.
    pub bits_per_key: f64,
    /// Nanoseconds per insert while building.
    pub build_ns: f64,
    /// Nanoseconds per lookup of a member.
    pub member_ns: f64,
    /// Nanoseconds per lookup of a non-member.
    pub non_member_ns: f64,
    /// Non-members reported present, as a share of non-member queries.
    pub measured_fpr: f64,
    /// Members reported absent: must be 0; anything else is a defect.
    pub false_negatives: u64,
    /// Whether the measured rate is above the target by more than chance explains
    /// ([`super::recommend::misses_target`]): such a structure is never recommended.
    pub misses_target: bool,
    /// Whether it supports removal.
    pub deletes: bool,
    /// Whether it grows past its initial size.
    pub grows: bool,
    /// Whether it is exact (no false positives by construction).
    pub exact: bool,
}

impl Row {
    /// A row for a structure that cannot serve the workload.
    pub fn cannot(
        structure: &str,
        reason: impl Into<String>,
        deletes: bool,
        grows: bool,
        exact: bool,
    ) -> Row {
        Row {
            structure: structure.into(),
            cannot_serve: Some(reason.into()),
            bytes: 0,
            bits_per_key: 0.0,
            build_ns: 0.0,
            member_ns: 0.0,
            non_member_ns: 0.0,
            measured_fpr: 0.0,
            false_negatives: 0,
            misses_target: false,
            deletes,
            grows,
            exact,
        }
    }

    /// Whether it serves the workload.
    pub fn serves(&self) -> bool {
        self.cannot_serve.is_none()
    }

    /// A row for a structure that served: `bytes` over the `kept` keys it holds, `build_ns`
    /// per insert, and its `answers` (a member answered absent is a false negative).
    /// Whether it misses the target is judged by the caller, who knows it.
    pub fn served(
        structure: &str,
        flags: (bool, bool, bool),
        bytes: u64,
        kept: usize,
        build_ns: f64,
        answers: Answers,
    ) -> Row {
        let (deletes, grows, exact) = flags;
        let Answers {
            members,
            non_members,
        } = answers;
        Row {
            structure: structure.into(),
            cannot_serve: None,
            bytes,
            bits_per_key: bytes as f64 * 8.0 / kept.max(1) as f64,
            build_ns,
            member_ns: members.ns,
            non_member_ns: non_members.ns,
            measured_fpr: if non_members.queries == 0 {
                0.0
            } else {
                non_members.present as f64 / non_members.queries as f64
            },
            false_negatives: (members.queries - members.present) as u64,
            misses_target: false,
            deletes,
            grows,
            exact,
        }
    }
}

/// Queries of one kind (members, or non-members) asked of a structure, timed.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    /// How many were asked.
    pub queries: usize,
    /// How many it answered present.
    pub present: usize,
    /// Nanoseconds per query.
    pub ns: f64,
}

impl Asked {
    /// Times `present` over every query, one at a time.
    pub fn each<Q>(queries: &[Q], mut present: impl FnMut(&Q) -> bool) -> Asked {
        let start = Instant::now();
        let found = queries.iter().filter(|q| present(q)).count();
        Asked {
            queries: queries.len(),
            present: found,
            ns: per(start.elapsed(), queries.len()),
        }
    }
}

/// A structure's answers to the member queries and to the non-member ones, each timed.
#[derive(Debug, Clone, Copy)]
pub struct Answers {
    /// The member queries.
    pub members: Asked,
    /// The non-member queries.
    pub non_members: Asked,
}

impl Answers {
    /// Times `present` over every member query, then every non-member one, one at a time.
    pub fn each<Q>(members: &[Q], non_members: &[Q], mut present: impl FnMut(&Q) -> bool) -> Self {
        Answers {
            members: Asked::each(members, &mut present),
            non_members: Asked::each(non_members, present),
        }
    }
}

/// What the measurement needs of a structure.
pub trait Structure<K> {
    /// Inserts a key.
    ///
    /// # Errors
    /// When the structure refuses the key.
    fn put(&mut self, key: &K) -> Result<(), String>;
    /// Whether the key may be present.
    fn has(&self, key: &K) -> bool;
    /// Removes a key; `None` when the structure cannot remove.
    fn take(&mut self, key: &K) -> Option<Result<(), String>>;
    /// Heap bytes.
    fn bytes(&self) -> u64;
    /// Builds what `put` gathered (static filters), inside the timed build; a no-op for
    /// structures that insert as they go.
    ///
    /// # Errors
    /// When the structure cannot be built from the keys.
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Gives back what deletes left unused, so that bytes describe the set that remains
    /// (a `HashSet` keeps its peak capacity otherwise); a no-op for fixed-size filters.
    fn settle(&mut self) {}
}

/// A key as Parquet hashes it: XXH64 of its plain encoding (`ParquetValue`), for the
/// split-block filter, which cannot take bloomkit's hasher.
pub trait AsParquet {
    /// The key's Parquet hash.
    fn parquet_hash(&self) -> u64;
}
impl AsParquet for u64 {
    fn parquet_hash(&self) -> u64 {
        ParquetValue::parquet_hash(self)
    }
}
impl AsParquet for super::workload::Str {
    fn parquet_hash(&self) -> u64 {
        ParquetValue::parquet_hash(&**self)
    }
}

/// Parquet's split-block filter, fed each key's Parquet hash.
#[derive(Debug)]
pub struct Parquet(pub SplitBlockFilter<str>);

impl<K: AsParquet> Structure<K> for Parquet {
    fn put(&mut self, key: &K) -> Result<(), String> {
        self.0.insert_hash(key.parquet_hash());
        Ok(())
    }
    fn has(&self, key: &K) -> bool {
        self.0.contains_hash(key.parquet_hash())
    }
    fn take(&mut self, _: &K) -> Option<Result<(), String>> {
        None
    }
    fn bytes(&self) -> u64 {
        self.0.heap_bytes() as u64
    }
}

/// A key as the JVM's filters take it: a `u64` as Guava's `longFunnel()` and Spark's
/// `putLong` (the same 64 bits as a Java `long`), a string as their UTF-8 string keys.
pub trait AsJvm {
    /// The key's Guava hash (MurmurHash3_x64_128 of its funnel's bytes).
    fn guava_hash(&self) -> Hash128;
    /// The key's hashes in `filter` (Spark's depend on its seed).
    fn spark_hash(&self, filter: &SparkBloomFilter) -> SparkHash;
}
impl AsJvm for u64 {
    fn guava_hash(&self) -> Hash128 {
        funnel::Long::hash(&(*self as i64))
    }
    fn spark_hash(&self, filter: &SparkBloomFilter) -> SparkHash {
        filter.hash_key(&(*self as i64))
    }
}
impl AsJvm for super::workload::Str {
    fn guava_hash(&self) -> Hash128 {
        funnel::Utf8String::hash(self)
    }
    fn spark_hash(&self, filter: &SparkBloomFilter) -> SparkHash {
        filter.hash_key(&**self)
    }
}

/// Guava's `BloomFilter` (Guava's own sizing and hashing), fed each key's Guava hash.
#[derive(Debug)]
pub struct Guava(pub GuavaBloomFilter<funnel::ByteArray>);

impl<K: AsJvm> Structure<K> for Guava {
    fn put(&mut self, key: &K) -> Result<(), String> {
        self.0.put_hash(key.guava_hash());
        Ok(())
    }
    fn has(&self, key: &K) -> bool {
        self.0.might_contain_hash(key.guava_hash())
    }
    fn take(&mut self, _: &K) -> Option<Result<(), String>> {
        None
    }
    fn bytes(&self) -> u64 {
        self.0.heap_bytes() as u64
    }
}

/// Spark's sketch `BloomFilter` (version 2, Spark's sizing and hashing).
#[derive(Debug)]
pub struct Spark(pub SparkBloomFilter);

impl<K: AsJvm> Structure<K> for Spark {
    fn put(&mut self, key: &K) -> Result<(), String> {
        self.0.put_hash(key.spark_hash(&self.0));
        Ok(())
    }
    fn has(&self, key: &K) -> bool {
        self.0.might_contain_hash(key.spark_hash(&self.0))
    }
    fn take(&mut self, _: &K) -> Option<Result<(), String>> {
        None
    }
    fn bytes(&self) -> u64 {
        self.0.heap_bytes() as u64
    }
}

/// A bloomkit filter without removal.
#[derive(Debug)]
pub struct Approx<F>(pub F);
/// A bloomkit filter with removal.
#[derive(Debug)]
pub struct Deletable<F>(pub F);
/// How a static filter is made from its keys' hashes.
type BuildStatic<F> = dyn Fn(Vec<u64>, Xxh3Builder) -> Result<F, bloomkit::Error>;

/// A static filter: `put` gathers each key's hash, `finish` builds the filter from them.
pub struct Static<K: ?Sized, F> {
    hashes: Vec<u64>,
    hasher: Xxh3Builder,
    build: Box<BuildStatic<F>>,
    filter: Option<F>,
    key: std::marker::PhantomData<fn(&K)>,
}

impl<K: ?Sized, F> std::fmt::Debug for Static<K, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Static")
            .field("hashes", &self.hashes.len())
            .field("built", &self.filter.is_some())
            .finish()
    }
}

impl<K: ?Sized, F> Static<K, F> {
    /// Gathers keys hashed by `hasher`, for `build` to make the filter of.
    pub fn new(
        hasher: Xxh3Builder,
        build: impl Fn(Vec<u64>, Xxh3Builder) -> Result<F, bloomkit::Error> + 'static,
    ) -> Self {
        Static {
            hashes: Vec::new(),
            hasher,
            build: Box::new(build),
            filter: None,
            key: std::marker::PhantomData,
        }
    }
}

impl<K: Hash, F: Lookup<Key = K>> Structure<K> for Static<K, F> {
    fn put(&mut self, key: &K) -> Result<(), String> {
        self.hashes.push(self.hasher.hash_one(key));
        Ok(())
    }
    fn finish(&mut self) -> Result<(), String> {
        let hashes = std::mem::take(&mut self.hashes);
        self.filter = Some((self.build)(hashes, self.hasher).map_err(|e| e.to_string())?);
        Ok(())
    }
    fn has(&self, key: &K) -> bool {
        self.filter.as_ref().is_some_and(|f| f.contains(key))
    }
    fn take(&mut self, _: &K) -> Option<Result<(), String>> {
        None
    }
    fn bytes(&self) -> u64 {
        self.filter.as_ref().map_or(0, |f| f.heap_bytes() as u64)
    }
}

/// The exact baseline: `std::collections::HashSet`.
#[derive(Debug)]
pub struct Exact<K>(pub HashSet<K>);

impl<K, F: Filter<Key = K>> Structure<K> for Approx<F> {
    fn put(&mut self, key: &K) -> Result<(), String> {
        self.0.try_insert(key).map(drop).map_err(|e| e.to_string())
    }
    fn has(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn take(&mut self, _: &K) -> Option<Result<(), String>> {
        None
    }
    fn bytes(&self) -> u64 {
        self.0.heap_bytes() as u64
    }
}

impl<K, F: Filter<Key = K> + Remove> Structure<K> for Deletable<F> {
    fn put(&mut self, key: &K) -> Result<(), String> {
        self.0.try_insert(key).map(drop).map_err(|e| e.to_string())
    }
    fn has(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn take(&mut self, key: &K) -> Option<Result<(), String>> {
        Some(self.0.remove(key).map_err(|e| e.to_string()))
    }
    fn bytes(&self) -> u64 {
        self.0.heap_bytes() as u64
    }
}

/// Heap bytes of a key (beyond its inline size).
pub trait HeapSize {
    /// Bytes the key owns on the heap.
    fn heap(&self) -> usize;
}
impl HeapSize for u64 {
    fn heap(&self) -> usize {
        0
    }
}
impl HeapSize for super::workload::Str {
    /// The string and its reference counts: what the set holds per key (a user's
    /// `HashSet<String>` would hold about the same).
    fn heap(&self) -> usize {
        self.len() + 16
    }
}

impl<K: Hash + Eq + Clone + HeapSize> Structure<K> for Exact<K> {
    fn put(&mut self, key: &K) -> Result<(), String> {
        self.0.insert(key.clone());
        Ok(())
    }
    fn has(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn take(&mut self, key: &K) -> Option<Result<(), String>> {
        Some(if self.0.remove(key) {
            Ok(())
        } else {
            Err("not present".into())
        })
    }
    fn settle(&mut self) {
        self.0.shrink_to_fit();
    }
    fn bytes(&self) -> u64 {
        // hashbrown: a power-of-two bucket count at 7/8 load, one control byte per bucket.
        let buckets = (self.0.capacity() * 8 / 7).next_power_of_two();
        let table = buckets * (std::mem::size_of::<K>() + 1);
        (table + self.0.iter().map(HeapSize::heap).sum::<usize>()) as u64
    }
}

/// Nanoseconds per operation.
pub fn per(elapsed: std::time::Duration, ops: usize) -> f64 {
    if ops == 0 {
        0.0
    } else {
        elapsed.as_nanos() as f64 / ops as f64
    }
}

/// Builds, deletes, queries and checks one structure. `make` may fail (a bitmap over an
/// impossible range); the row then says why.
pub fn measure<K, S: Structure<K>>(
    name: &str,
    flags: (bool, bool, bool),
    make: impl FnOnce() -> Result<S, String>,
    data: &Data<K>,
) -> Row {
    measure_built(name, flags, data, make, |mut s, data| {
        for k in &data.keys {
            s.put(k).map_err(|e| format!("refused a key: {e}"))?;
        }
        s.finish().map_err(|e| format!("cannot be built: {e}"))?;
        Ok(s)
    })
}

/// As [`measure`], with what `make` gives (an empty structure, a thread pool: not timed)
/// filled with every key by `fill` (timed as a whole: one writer or many).
pub fn measure_built<K, T, S: Structure<K>>(
    name: &str,
    flags: (bool, bool, bool),
    data: &Data<K>,
    make: impl FnOnce() -> Result<T, String>,
    fill: impl FnOnce(T, &Data<K>) -> Result<S, String>,
) -> Row {
    let (deletes, grows, exact) = flags;
    let made = match make() {
        Ok(made) => made,
        Err(e) => return Row::cannot(name, e, deletes, grows, exact),
    };
    let start = Instant::now();
    let mut s = match fill(made, data) {
        Ok(s) => s,
        Err(e) => return Row::cannot(name, e, deletes, grows, exact),
    };
    let build_ns = per(start.elapsed(), data.keys.len());
    let mut false_negatives = 0;
    for k in &data.keys[..data.deleted] {
        match s.take(k) {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                // Removing a key that was inserted must work: a refusal is a defect.
                false_negatives += 1;
                eprintln!("DEFECT: {name} refused to remove an inserted key: {e}");
            }
            None => return Row::cannot(name, "cannot remove items", deletes, grows, exact),
        }
    }
    s.settle();
    let bytes = s.bytes();
    // Every key still held must be found.
    false_negatives += data.keys[data.deleted..]
        .iter()
        .filter(|k| !s.has(k))
        .count() as u64;

    // Warm up (caches, branch predictors, clock) on a slice of each kind of query.
    let warm = data
        .members
        .iter()
        .take(10_000)
        .chain(data.non_members.iter().take(10_000));
    black_box(warm.filter(|k| s.has(k)).count());

    let answers = Answers::each(&data.members, &data.non_members, |k| s.has(black_box(k)));
    let kept = data.keys.len() - data.deleted;
    let row = Row::served(name, flags, bytes, kept, build_ns, answers);
    // The members answered absent, and the defects found before the queries.
    Row {
        false_negatives: row.false_negatives + false_negatives,
        ..row
    }
}

/// Why a structure of a fixed size (`deletes`: whether it removes) cannot serve, if it
/// cannot: an unknown item count, or deletes it cannot make.
pub fn fixed_size_refusal(
    name: &str,
    deletes: bool,
    sizing: Sizing,
    want_deletes: bool,
) -> Option<Row> {
    let why = if sizing.unknown_size {
        "needs the item count up front (--unknown-size)"
    } else if want_deletes && !deletes {
        "cannot remove items (--deletes)"
    } else {
        return None;
    };
    Some(Row::cannot(name, why, deletes, false, false))
}

/// How the approximate structures are sized.
#[derive(Debug, Clone, Copy)]
pub struct Sizing {
    /// Target false-positive rate.
    pub fpr: f64,
    /// Whether the item count is unknown up front.
    pub unknown_size: bool,
    /// Seed for the hashers.
    pub seed: u64,
    /// Whether the set is fixed once built (static filters serve only then).
    pub static_set: bool,
    /// Concurrent writers (`--threads`): 0 or 1 for one.
    pub threads: usize,
}

/// The names of the structures, in report order.
pub const STRUCTURES: [&str; 16] = [
    "HashSet (exact)",
    "BloomFilter",
    "BlockedBloomFilter",
    "CountingBloomFilter (4-bit)",
    "ScalableBloomFilter",
    "Bitmap",
    "BinaryFuse8 (static)",
    "BinaryFuse16 (static)",
    "RibbonFilter (static)",
    "QuotientFilter",
    "ExpandableFilter",
    "SimdBlockFilter",
    "SplitBlockFilter (Parquet)",
    "BinaryFuse32 (static)",
    "GuavaBloomFilter (JVM)",
    "SparkBloomFilter (JVM)",
];

/// Measures every in-process structure that applies to keys of type `K` (the shared ones
/// are [`super::shared::measure_shared`]'s); `progress` is told each name.
pub fn measure_all<K>(
    data: &Data<K>,
    sizing: Sizing,
    bitmap: Option<Row>,
    mut progress: impl FnMut(&str),
) -> Vec<Row>
where
    K: Hash + Eq + Clone + HeapSize + AsParquet + AsJvm + Send + Sync,
{
    let n = (data.keys.len() as u64).max(1);
    let want_deletes = data.deleted > 0;
    let fixed_size =
        |name: &str, deletes: bool| fixed_size_refusal(name, deletes, sizing, want_deletes);
    let err = |e: bloomkit::Error| e.to_string();
    let mut rows = Vec::new();

    progress(STRUCTURES[0]);
    rows.push(measure(
        STRUCTURES[0],
        (true, true, true),
        || Ok(Exact(HashSet::new())),
        data,
    ));

    progress(STRUCTURES[1]);
    rows.push(fixed_size(STRUCTURES[1], false).unwrap_or_else(|| {
        measure(
            STRUCTURES[1],
            (false, false, false),
            || {
                BloomFilter::builder(n, sizing.fpr)
                    .seed(sizing.seed)
                    .build()
                    .map(Approx)
                    .map_err(err)
            },
            data,
        )
    }));

    progress(STRUCTURES[2]);
    rows.push(fixed_size(STRUCTURES[2], false).unwrap_or_else(|| {
        measure(
            STRUCTURES[2],
            (false, false, false),
            || {
                BlockedBloomFilter::builder(n, sizing.fpr)
                    .seed(sizing.seed)
                    .build()
                    .map(Approx)
                    .map_err(err)
            },
            data,
        )
    }));

    progress(STRUCTURES[3]);
    rows.push(fixed_size(STRUCTURES[3], true).unwrap_or_else(|| {
        measure(
            STRUCTURES[3],
            (true, false, false),
            || {
                CountingBloomFilter::builder(n, sizing.fpr)
                    .seed(sizing.seed)
                    .build()
                    .map(Deletable)
                    .map_err(err)
            },
            data,
        )
    }));

    progress(STRUCTURES[4]);
    rows.push(if want_deletes {
        Row::cannot(
            STRUCTURES[4],
            "cannot remove items (--deletes)",
            false,
            true,
            false,
        )
    } else {
        // With an unknown size it starts from a guess a thousand times too small.
        let start = if sizing.unknown_size {
            (n / 1_000).max(1)
        } else {
            n
        };
        measure(
            STRUCTURES[4],
            (false, true, false),
            || {
                ScalableBloomFilter::builder(start, sizing.fpr)
                    .seed(sizing.seed)
                    .build()
                    .map(Approx)
                    .map_err(err)
            },
            data,
        )
    });

    progress(STRUCTURES[5]);
    rows.push(bitmap.unwrap_or_else(|| {
        Row::cannot(
            STRUCTURES[5],
            "keys are not dense integers (--keys dense)",
            true,
            false,
            true,
        )
    }));

    // The static filters: built once from every key, so only for a set fixed once built.
    let hasher = Xxh3Builder::with_seed(sizing.seed);
    let fpr = sizing.fpr;
    let static_row = |name: &str, floor: Option<f64>| -> Option<Row> {
        let no = |why: String| Some(Row::cannot(name, why, false, false, false));
        if !sizing.static_set {
            no("built once from every key: no insert after the build (--static when the set is fixed)".into())
        } else if want_deletes {
            no("cannot remove items (--deletes)".into())
        } else if sizing.unknown_size {
            no("needs every key before the first lookup (--unknown-size)".into())
        } else if let Some(rate) = floor.filter(|&r| r > fpr) {
            no(format!(
                "its rate is {:.4}%, above the target",
                rate * 100.0
            ))
        } else {
            None
        }
    };
    let flags = (false, false, false);
    progress(STRUCTURES[6]);
    rows.push(
        static_row(STRUCTURES[6], Some(1.0 / 256.0)).unwrap_or_else(|| {
            measure(
                STRUCTURES[6],
                flags,
                || {
                    Ok(Static::<K, BinaryFuse8<K>>::new(hasher, |h, s| {
                        BinaryFuse8::from_hashes_with_hasher(h, s)
                    }))
                },
                data,
            )
        }),
    );
    progress(STRUCTURES[7]);
    rows.push(
        static_row(STRUCTURES[7], Some(1.0 / 65536.0)).unwrap_or_else(|| {
            measure(
                STRUCTURES[7],
                flags,
                || {
                    Ok(Static::<K, BinaryFuse16<K>>::new(hasher, |h, s| {
                        BinaryFuse16::from_hashes_with_hasher(h, s)
                    }))
                },
                data,
            )
        }),
    );
    progress(STRUCTURES[8]);
    rows.push(static_row(STRUCTURES[8], None).unwrap_or_else(|| {
        measure(
            STRUCTURES[8],
            flags,
            || {
                Ok(Static::<K, RibbonFilter<K>>::new(hasher, move |h, s| {
                    RibbonFilter::from_hashes_with_hasher(h, fpr, s)
                }))
            },
            data,
        )
    }));

    progress(STRUCTURES[9]);
    rows.push(fixed_size(STRUCTURES[9], true).unwrap_or_else(|| {
        measure(
            STRUCTURES[9],
            (true, false, false),
            || {
                QuotientFilter::builder(n, fpr)
                    .seed(sizing.seed)
                    .build()
                    .map(Deletable)
                    .map_err(err)
            },
            data,
        )
    }));

    // Grows and deletes: with an unknown size it starts, as the scalable filter, from a
    // guess a thousand times too small.
    progress(STRUCTURES[10]);
    let start = if sizing.unknown_size {
        (n / 1_000).max(1)
    } else {
        n
    };
    rows.push(measure(
        STRUCTURES[10],
        (true, true, false),
        || {
            ExpandableFilter::builder(start, fpr)
                .seed(sizing.seed)
                .build()
                .map(Deletable)
                .map_err(err)
        },
        data,
    ));

    progress(STRUCTURES[11]);
    rows.push(fixed_size(STRUCTURES[11], false).unwrap_or_else(|| {
        measure(
            STRUCTURES[11],
            (false, false, false),
            || {
                SimdBlockFilter::builder(n, fpr)
                    .seed(sizing.seed)
                    .build()
                    .map(Approx)
                    .map_err(err)
            },
            data,
        )
    }));

    // Parquet's hash has no seed: --seed does not change it.
    progress(STRUCTURES[12]);
    rows.push(fixed_size(STRUCTURES[12], false).unwrap_or_else(|| {
        measure(
            STRUCTURES[12],
            (false, false, false),
            || {
                SplitBlockFilter::<str>::builder(n, fpr)
                    .build()
                    .map(Parquet)
                    .map_err(err)
            },
            data,
        )
    }));

    progress(STRUCTURES[13]);
    rows.push(
        static_row(STRUCTURES[13], Some(1.0 / 4_294_967_296.0)).unwrap_or_else(|| {
            measure(
                STRUCTURES[13],
                flags,
                || {
                    Ok(Static::<K, BinaryFuse32<K>>::new(hasher, |h, s| {
                        BinaryFuse32::from_hashes_with_hasher(h, s)
                    }))
                },
                data,
            )
        }),
    );
    // The JVM's filters, for a service that shares its filters with Java: their own
    // sizing and hashing (no seed).
    progress(STRUCTURES[14]);
    rows.push(fixed_size(STRUCTURES[14], false).unwrap_or_else(|| {
        measure(
            STRUCTURES[14],
            (false, false, false),
            || {
                GuavaBloomFilter::create(n, fpr)
                    .map(Guava)
                    .map_err(|e| e.to_string())
            },
            data,
        )
    }));
    progress(STRUCTURES[15]);
    rows.push(fixed_size(STRUCTURES[15], false).unwrap_or_else(|| {
        measure(
            STRUCTURES[15],
            (false, false, false),
            || {
                SparkBloomFilter::create(n, fpr)
                    .map(Spark)
                    .map_err(|e| e.to_string())
            },
            data,
        )
    }));
    rows.extend(measure_threads(data, sizing, n, &mut progress));
    rows
}

/// The name of the rows of concurrent writers when there are none.
pub const THREADS_ROW: &str = "Atomic filters, par_extend (threads)";

/// A filter shared by writer threads: `insert` on `&self`.
pub trait Shared<K>: Sync {
    /// Inserts a key (from any thread).
    fn put_shared(&self, key: &K);
    /// Whether the key may be present.
    fn has_shared(&self, key: &K) -> bool;
    /// Removes a key, where the structure can (from any thread).
    fn take_shared(&self, key: &K) -> Option<Result<(), String>>;
    /// Heap bytes.
    fn bytes_shared(&self) -> u64;
    /// As [`Structure::settle`].
    fn settle_shared(&mut self) {}
}

/// A [`Shared`] structure, measured as any other once built.
#[derive(Debug)]
pub struct Concurrent<F>(pub F);

impl<K, F: Shared<K>> Structure<K> for Concurrent<F> {
    fn put(&mut self, key: &K) -> Result<(), String> {
        self.0.put_shared(key);
        Ok(())
    }
    fn has(&self, key: &K) -> bool {
        self.0.has_shared(key)
    }
    fn take(&mut self, key: &K) -> Option<Result<(), String>> {
        self.0.take_shared(key)
    }
    fn bytes(&self) -> u64 {
        self.0.bytes_shared()
    }
    fn settle(&mut self) {
        self.0.settle_shared();
    }
}

macro_rules! shared_filter {
    ($($ty:ident),*) => {$(
        impl<K: Hash> Shared<K> for bloomkit::$ty<K> {
            fn put_shared(&self, key: &K) {
                self.insert_hash(self.hash_key(key));
            }
            fn has_shared(&self, key: &K) -> bool {
                self.contains_hash(self.hash_key(key))
            }
            fn take_shared(&self, _: &K) -> Option<Result<(), String>> {
                None
            }
            fn bytes_shared(&self) -> u64 {
                self.heap_bytes() as u64
            }
        }
    )*};
}
shared_filter!(AtomicBloomFilter, AtomicBlockedBloomFilter);

impl<K: Hash> Shared<K> for bloomkit::AtomicCountingBloomFilter<K> {
    fn put_shared(&self, key: &K) {
        self.insert_hash(self.hash_key(key));
    }
    fn has_shared(&self, key: &K) -> bool {
        self.contains_hash(self.hash_key(key))
    }
    fn take_shared(&self, key: &K) -> Option<Result<(), String>> {
        Some(self.remove(key).map_err(|e| e.to_string()))
    }
    fn bytes_shared(&self) -> u64 {
        self.heap_bytes() as u64
    }
}

/// The exact baseline for many writers: a `HashSet` behind a `Mutex`.
#[derive(Debug)]
pub struct Locked<K>(pub std::sync::Mutex<Exact<K>>);

impl<K: Hash + Eq + Clone + HeapSize + Send> Shared<K> for Locked<K> {
    fn put_shared(&self, key: &K) {
        let mut set = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = set.put(key);
    }
    fn has_shared(&self, key: &K) -> bool {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .has(key)
    }
    fn take_shared(&self, key: &K) -> Option<Result<(), String>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take(key)
    }
    fn bytes_shared(&self) -> u64 {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .bytes()
    }
    fn settle_shared(&mut self) {
        self.0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .settle();
    }
}

/// Every key put by `threads` scoped threads, each a slice of the keys.
fn put_from_threads<K: Sync, F: Shared<K>>(f: F, keys: &[K], threads: usize) -> F {
    let per = keys.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        for part in keys.chunks(per) {
            let f = &f;
            scope.spawn(move || {
                for k in part {
                    f.put_shared(k);
                }
            });
        }
    });
    f
}

/// The structures for concurrent writers (`--threads N`): the atomic filters, inserted into
/// by N threads at once, `par_extend` on an N-thread pool, and a `Mutex<HashSet>`; build
/// times are wall clock per key. Without `--threads`, one row that says how to measure them.
fn measure_threads<K>(
    data: &Data<K>,
    sizing: Sizing,
    n: u64,
    progress: &mut impl FnMut(&str),
) -> Vec<Row>
where
    K: Hash + Eq + Clone + HeapSize + Send + Sync,
{
    let threads = sizing.threads;
    if threads < 2 {
        return vec![Row::cannot(
            THREADS_ROW,
            "for concurrent writers: measured with --threads N",
            false,
            false,
            false,
        )];
    }
    let fpr = sizing.fpr;
    let err = |e: bloomkit::Error| e.to_string();
    let want_deletes = data.deleted > 0;
    let mut rows = Vec::new();
    let named = |base: &str| format!("{base} ({threads} threads)");
    let refuse =
        |name: &str, deletes: bool| fixed_size_refusal(name, deletes, sizing, want_deletes);

    // One atomic filter: made, then filled by the writer threads.
    fn atomic<K, F: Shared<K> + Sync>(
        name: &str,
        deletes: bool,
        data: &Data<K>,
        threads: usize,
        make: impl FnOnce() -> Result<F, bloomkit::Error>,
    ) -> Row
    where
        K: Sync,
    {
        measure_built(
            name,
            (deletes, false, false),
            data,
            || make().map_err(|e| e.to_string()),
            |f, data| Ok(Concurrent(put_from_threads(f, &data.keys, threads))),
        )
    }
    macro_rules! atomic_row {
        ($ty:ident, $label:literal, $deletes:literal) => {{
            let name = named($label);
            progress(&name);
            rows.push(refuse(&name, $deletes).unwrap_or_else(|| {
                atomic(&name, $deletes, data, threads, || {
                    bloomkit::$ty::builder(n, fpr).seed(sizing.seed).build()
                })
            }));
        }};
    }
    atomic_row!(AtomicBloomFilter, "AtomicBloomFilter", false);
    atomic_row!(AtomicBlockedBloomFilter, "AtomicBlockedBloomFilter", false);
    atomic_row!(
        AtomicCountingBloomFilter,
        "AtomicCountingBloomFilter (4-bit)",
        true
    );
    let name = named("BlockedBloomFilter par_extend");
    progress(&name);
    rows.push(refuse(&name, false).unwrap_or_else(|| {
        measure_built(
            &name,
            (false, false, false),
            data,
            || {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| e.to_string())?;
                let f = BlockedBloomFilter::builder(n, fpr)
                    .seed(sizing.seed)
                    .build()
                    .map_err(err)?;
                Ok((pool, f))
            },
            |(pool, mut f), data| {
                use rayon::prelude::*;
                pool.install(|| f.par_extend(data.keys.par_iter()));
                Ok(Approx(f))
            },
        )
    }));
    let name = named("Mutex<HashSet> (exact)");
    progress(&name);
    rows.push(measure_built(
        &name,
        (true, true, true),
        data,
        || Ok(Locked(std::sync::Mutex::new(Exact(HashSet::new())))),
        |set, data| Ok(Concurrent(put_from_threads(set, &data.keys, threads))),
    ));
    rows
}

/// The bitmap's row, for integer keys in `lo..=hi`.
pub fn measure_bitmap(data: &Data<u64>, lo: u64, hi: u64) -> Row {
    measure(
        STRUCTURES[5],
        (true, false, true),
        || {
            Bitmap::new(lo..=hi)
                .map(Deletable)
                .map_err(|e| e.to_string())
        },
        data,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After deletes a `HashSet` keeps its peak capacity; settled, its bytes describe the
    /// keys it still holds, as its bits per key do.
    #[test]
    fn a_hash_set_settles_to_the_keys_it_keeps() {
        let mut set = Exact(HashSet::new());
        for k in 0..10_000u64 {
            set.put(&k).unwrap();
        }
        let peak = Structure::<u64>::bytes(&set);
        for k in 0..9_000u64 {
            set.take(&k).unwrap().unwrap();
        }
        assert_eq!(Structure::<u64>::bytes(&set), peak);
        Structure::<u64>::settle(&mut set);
        // 1,000 keys: 2,048 buckets of 9 bytes, against 16,384 at the peak.
        assert_eq!(Structure::<u64>::bytes(&set), 2_048 * 9);
        assert_eq!(peak, 16_384 * 9);
    }
}
