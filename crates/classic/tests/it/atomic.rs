//! The atomic filters (issue 15): the shared conformance suite, no false negatives after
//! concurrent inserts, bits identical to a sequential build, conversions both ways, and a
//! stress test that would catch a lost update.

use std::thread;

use bloomkit_classic::{
    AtomicBlockedBloomFilter, AtomicBloomFilter, BlockedBloomFilter, BloomFilter,
};
use bloomkit_testkit::{self as kit, ensure, forall, Outcome};

#[test]
fn filter_promises() {
    kit::check_filter(|| AtomicBloomFilter::<u64>::new(1_000, 0.01).unwrap());
    kit::check_filter(|| AtomicBlockedBloomFilter::<u64>::new(1_000, 0.01).unwrap());
    kit::check_batch(|| AtomicBloomFilter::new(2_000, 0.01).unwrap());
    kit::check_batch(|| AtomicBlockedBloomFilter::new(2_000, 0.01).unwrap());
    kit::check_contains_batch(|| AtomicBloomFilter::new(2_000, 0.01).unwrap());
    kit::check_contains_batch(|| AtomicBlockedBloomFilter::new(2_000, 0.01).unwrap());
}

#[test]
fn same_sizing_as_the_twins() {
    for (n, p) in [(1, 0.5), (1_000, 0.01), (123_456, 1e-5)] {
        let (a, b) = (
            AtomicBloomFilter::<u64>::new(n, p).unwrap(),
            BloomFilter::<u64>::new(n, p).unwrap(),
        );
        assert_eq!(
            (a.num_bits(), a.num_hashes()),
            (b.num_bits(), b.num_hashes())
        );
        assert_eq!(a.heap_bytes(), b.heap_bytes());
        let (a, b) = (
            AtomicBlockedBloomFilter::<u64>::new(n, p).unwrap(),
            BlockedBloomFilter::<u64>::new(n, p).unwrap(),
        );
        assert_eq!(
            (a.num_blocks(), a.num_hashes()),
            (b.num_blocks(), b.num_hashes())
        );
    }
    assert!(AtomicBloomFilter::<u64>::new(0, 0.01).is_err());
    assert!(AtomicBlockedBloomFilter::<u64>::new(10, f64::NAN).is_err());
}

/// Inserts `parts[t]` from thread `t`, all at once.
fn insert_from_threads<F: Sync>(filter: &F, parts: &[Vec<u64>], insert: fn(&F, &[u64])) {
    thread::scope(|s| {
        for part in parts {
            s.spawn(move || insert(filter, part));
        }
    });
}

/// After threads insert their parts (overlapping or not), every key is found and the
/// filter equals one built by one thread from the same keys.
fn check_concurrent(parts: &[Vec<u64>], seed: u64) -> Outcome {
    let all: Vec<u64> = parts.iter().flatten().copied().collect();
    let n = (all.len() as u64).max(1);

    let shared = AtomicBloomFilter::<u64>::builder(n, 0.01)
        .seed(seed)
        .build()
        .unwrap();
    insert_from_threads(&shared, parts, |f, keys| {
        for k in keys {
            f.insert(k);
        }
    });
    let mut one = BloomFilter::builder(n, 0.01).seed(seed).build().unwrap();
    one.insert_batch(&all);
    ensure(all.iter().all(|k| shared.contains(k)), || {
        "classic: a key was lost".into()
    })?;
    ensure(shared.to_filter().unwrap() == one, || {
        "classic: bits differ".into()
    })?;

    let shared = AtomicBlockedBloomFilter::<u64>::builder(n, 0.01)
        .seed(seed)
        .build()
        .unwrap();
    insert_from_threads(&shared, parts, |f, keys| {
        f.insert_batch(keys);
    });
    let mut one = BlockedBloomFilter::builder(n, 0.01)
        .seed(seed)
        .build()
        .unwrap();
    one.insert_batch(&all);
    ensure(all.iter().all(|k| shared.contains(k)), || {
        "blocked: a key was lost".into()
    })?;
    ensure(shared.to_filter().unwrap() == one, || {
        "blocked: bits differ".into()
    })
}

#[test]
fn concurrent_inserts_lose_nothing_and_match_a_sequential_build() {
    forall(30, |(parts, seed): &(Vec<Vec<u64>>, u64)| {
        let parts: Vec<Vec<u64>> = parts.iter().take(6).cloned().collect();
        check_concurrent(&parts, *seed)
    });
    // Disjoint and overlapping halves, large enough for real interleaving.
    let disjoint: Vec<Vec<u64>> = (0..4u64)
        .map(|t| (t * 50_000..(t + 1) * 50_000).collect())
        .collect();
    check_concurrent(&disjoint, 1).unwrap();
    let overlapping: Vec<Vec<u64>> = (0..4u64)
        .map(|t| (t * 25_000..t * 25_000 + 100_000).collect())
        .collect();
    check_concurrent(&overlapping, 2).unwrap();
}

/// Many threads setting bits in the same few words at once: a lost update (a `load` then
/// `store` where a `fetch_or` belongs) shows up as a missing bit within a few rounds.
#[test]
fn no_lost_updates_under_contention() {
    for round in 0..200u64 {
        // 64 bits (one word) and 1 block: every insert hits the same cache line.
        let tiny = AtomicBloomFilter::<u64>::builder(8, 0.5)
            .seed(round)
            .build()
            .unwrap();
        let block = AtomicBlockedBloomFilter::<u64>::builder(8, 0.5)
            .seed(round)
            .build()
            .unwrap();
        let keys: Vec<Vec<u64>> = (0..4u64)
            .map(|t| (t * 16..(t + 1) * 16).map(|i| i + round * 64).collect())
            .collect();
        thread::scope(|s| {
            for part in &keys {
                let (tiny, block) = (&tiny, &block);
                s.spawn(move || {
                    for k in part {
                        tiny.insert(k);
                        block.insert(k);
                    }
                });
            }
        });
        let all: Vec<u64> = keys.concat();
        let mut one = BloomFilter::<u64>::builder(8, 0.5)
            .seed(round)
            .build()
            .unwrap();
        let mut one_block = BlockedBloomFilter::<u64>::builder(8, 0.5)
            .seed(round)
            .build()
            .unwrap();
        one.insert_batch(&all);
        one_block.insert_batch(&all);
        assert_eq!(tiny.to_filter().unwrap(), one, "round {round}");
        assert_eq!(block.to_filter().unwrap(), one_block, "round {round}");
    }
}

#[test]
fn conversions_round_trip_without_rehashing() {
    let mut plain = BloomFilter::<str>::builder(1_000, 0.01)
        .seed(3)
        .build()
        .unwrap();
    plain.insert_batch(["a", "b", "c"]);
    let atomic = AtomicBloomFilter::from_filter(plain.clone()).unwrap();
    assert!(atomic.contains("a") && atomic.contains("c"));
    atomic.insert("d");
    let back = atomic.to_filter().unwrap();
    plain.insert("d");
    assert_eq!(back, plain);
    assert_eq!(back.to_bytes(), plain.to_bytes(), "the same byte format");

    let mut plain = BlockedBloomFilter::<str>::builder(1_000, 0.01)
        .seed(3)
        .build()
        .unwrap();
    plain.insert_batch(["a", "b", "c"]);
    let atomic = AtomicBlockedBloomFilter::from_filter(plain.clone()).unwrap();
    atomic.insert("d");
    plain.insert("d");
    assert_eq!(atomic.to_filter().unwrap(), plain);
    assert_eq!(atomic.estimated_len(), plain.estimated_len());
    assert_eq!(atomic.estimated_fpr(), plain.estimated_fpr());
}

#[test]
fn partitions_merge_into_a_shared_filter_from_many_threads() {
    let shared = AtomicBlockedBloomFilter::<u64>::new(40_000, 0.01).unwrap();
    let parts: Vec<BlockedBloomFilter<u64>> = (0..4u64)
        .map(|t| {
            let mut f = BlockedBloomFilter::new(40_000, 0.01).unwrap();
            f.insert_batch(t * 10_000..(t + 1) * 10_000);
            f
        })
        .collect();
    thread::scope(|s| {
        for part in &parts {
            let shared = &shared;
            s.spawn(move || shared.union_with(part).unwrap());
        }
    });
    let mut one = BlockedBloomFilter::new(40_000, 0.01).unwrap();
    one.insert_batch(0..40_000u64);
    assert_eq!(shared.to_filter().unwrap(), one);
    // Another shape: refused, nothing changed.
    let other = BlockedBloomFilter::<u64>::new(1_000, 0.01).unwrap();
    assert!(shared.union_with(&other).is_err());
    assert_eq!(shared.to_filter().unwrap(), one);

    let shared = AtomicBloomFilter::<u64>::new(1_000, 0.01).unwrap();
    let mut part = BloomFilter::new(1_000, 0.01).unwrap();
    part.insert_batch(0..500u64);
    shared.union_with(&part).unwrap();
    assert_eq!(shared.to_filter().unwrap(), part);
}

#[test]
fn measured_fpr_honours_the_target() {
    let f = AtomicBlockedBloomFilter::<u64>::new(100_000, 0.01).unwrap();
    f.insert_batch((0..100_000u64).map(kit::member));
    let m = kit::measure_fpr(&f, 200_000);
    assert!(m.within(0.01, 5.0), "{m:?}");
    let f = AtomicBloomFilter::<u64>::new(100_000, 0.01).unwrap();
    f.insert_batch((0..100_000u64).map(kit::member));
    let m = kit::measure_fpr(&f, 200_000);
    assert!(m.within(0.01, 5.0), "{m:?}");
}

/// Equality compares every field, the probe scheme included: two atomic filters with the
/// same (empty) bits and different schemes answer differently once keys go in, so they are
/// not equal. A clone is a snapshot equal to its source.
#[test]
fn atomic_equality_sees_every_field() {
    use bloomkit_core::hash::ProbeScheme;
    let wide = AtomicBloomFilter::<u64>::builder(1_000, 0.01)
        .build()
        .unwrap();
    let enhanced = AtomicBloomFilter::<u64>::builder(1_000, 0.01)
        .probe_scheme(ProbeScheme::Enhanced)
        .build()
        .unwrap();
    assert!(wide != enhanced);
    wide.insert(&7);
    let copy = wide.clone();
    assert!(copy == wide);
    wide.insert(&8);
    assert!(copy != wide);
}
