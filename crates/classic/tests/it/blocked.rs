//! The shared conformance suite, run on the blocked filter; and its bad inputs.

use bloomkit_classic::{BlockedBloomFilter, BloomFilter, BRANCH_FREE_MAX_BYTES};
use bloomkit_core::hash::BlockProbe;
use bloomkit_core::{Error, Intersection, Union};
use bloomkit_testkit as kit;

fn make() -> BlockedBloomFilter<u64> {
    BlockedBloomFilter::new(2_000, 0.01).unwrap()
}

#[test]
fn filter_promises() {
    kit::check_filter(make);
    kit::check_filter(|| {
        BlockedBloomFilter::<u64>::builder(5_000, 0.0001)
            .seed(7)
            .build()
            .unwrap()
    });
    // One probe per key: every lookup once answered `true` (see below).
    kit::check_filter(|| BlockedBloomFilter::<u64>::with_blocks(64, 1).unwrap());
    kit::check_union(make);
    kit::check_intersection(make);
}

#[test]
fn codec_and_incompatibility() {
    let foreign = BloomFilter::<u64>::new(100, 0.01).unwrap().to_bytes();
    kit::check_codec(make, &foreign);
    kit::check_codec(
        || BlockedBloomFilter::<u64>::with_blocks(1, 3).unwrap(),
        &foreign,
    );
    for other in [
        BlockedBloomFilter::builder(2_000, 0.01)
            .seed(1)
            .build()
            .unwrap(),
        BlockedBloomFilter::new(4_000, 0.01).unwrap(),
    ] {
        kit::check_incompatible(&make(), &other, Union::union_with);
        kit::check_incompatible(&make(), &other, Intersection::intersect_with);
    }
    // A classic filter's bytes are not a blocked filter, and vice versa.
    assert!(BloomFilter::<u64>::from_bytes(&make().to_bytes()).is_err());
}

#[test]
fn bad_parameters() {
    assert_eq!(
        BlockedBloomFilter::<u64>::new(0, 0.01).unwrap_err(),
        Error::ZeroItems
    );
    assert!(matches!(
        BlockedBloomFilter::<u64>::new(10, 1.0),
        Err(Error::InvalidFpr(_))
    ));
    assert_eq!(
        BlockedBloomFilter::<u64>::with_blocks(0, 3).unwrap_err(),
        Error::ZeroBits
    );
    assert!(matches!(
        BlockedBloomFilter::<u64>::with_blocks(10, 0),
        Err(Error::InvalidHashCount { .. })
    ));
    assert!(matches!(
        BlockedBloomFilter::<u64>::with_blocks(u64::MAX, 3),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        BlockedBloomFilter::<u64>::with_blocks(1 << 52, 3),
        Err(Error::AllocationFailed { .. })
    ));
    // Words for a filter are an argument, not bytes being decoded.
    let hasher = bloomkit_core::Xxh3Builder::default();
    let err = BlockedBloomFilter::<u64>::from_words(&[0; 12], 3, hasher, None).unwrap_err();
    assert_eq!(err, Error::PartialBlock { words: 12 });
}

#[test]
fn sized_with_the_blocked_model() {
    // About 3% more bits than the classic filter at 1%, 8% at 0.1%.
    for (p, lo, hi) in [(0.01, 1.02, 1.05), (0.001, 1.06, 1.10)] {
        let b = BlockedBloomFilter::<u64>::new(1_000_000, p).unwrap();
        let c = BloomFilter::<u64>::new(1_000_000, p).unwrap();
        let ratio = b.num_bits() as f64 / c.num_bits() as f64;
        assert!((lo..hi).contains(&ratio), "{p}: {ratio}");
        assert!(b.fpr_at(1_000_000) <= p);
    }
}

/// Whether the key whose hash is `hash` has all its bits set, from first principles: its
/// `BlockProbe` mask against its block.
fn reference(f: &BlockedBloomFilter<u64>, hash: u64) -> bool {
    let probe = BlockProbe::new(hash, f.num_blocks(), f.num_hashes());
    let block = f.block_of(hash);
    probe.mask.iter().zip(block).all(|(m, b)| m & b == *m)
}

/// Every lookup path (one at a time, by hash, batched) answers as the reference for every
/// k, on both sides of the branch-free/early-exit switch, with no false negatives, and the
/// measured rate of keys never inserted matches the rate the filter's fill implies.
/// Regression: with k = 1, filters above 8 MiB answered `true` for every key.
#[test]
fn every_lookup_path_agrees_for_every_k() {
    let above = (BRANCH_FREE_MAX_BYTES / 64) as u64 + 1;
    let ks: Vec<u32> = (1..=12).chain([16, 24, 33, 64]).collect();
    for (blocks, items) in [(8u64, 400u64), (above, 2 * above)] {
        for &k in &ks {
            let mut f = BlockedBloomFilter::with_blocks(blocks, k).unwrap();
            let members: Vec<u64> = (0..items).map(kit::member).collect();
            f.insert_batch(&members);
            let probes: Vec<u64> = (0..20_000).map(kit::non_member).collect();
            let mut batched = Vec::new();
            f.contains_batch(members.iter().chain(&probes), &mut batched);
            let mut positives = 0u64;
            for (key, &in_batch) in members.iter().chain(&probes).zip(&batched) {
                let one = f.contains(key);
                let expected = reference(&f, f.hash_key(key));
                assert_eq!(one, expected, "k = {k}, {blocks} blocks, key {key}");
                assert_eq!(in_batch, expected, "k = {k}, {blocks} blocks, key {key}");
                if expected && *key >= 1 << 63 {
                    positives += 1;
                }
            }
            assert!(batched[..members.len()].iter().all(|&b| b), "k = {k}");
            // The fill-implied rate is exact in expectation for keys never inserted.
            let expected = f.estimated_fpr() * probes.len() as f64;
            let sd = expected.sqrt().max(1.0);
            assert!(
                (positives as f64 - expected).abs() <= 5.0 * sd + 2.0,
                "k = {k}, {blocks} blocks: {positives} positives, expected {expected:.1}"
            );
        }
    }
}

/// Huge loads: errors or answers, never a hang. Regression: `new(5e18, 0.5)` and
/// `fpr_at(u64::MAX)` never returned, and a one-block filter's `fpr_at(1e13)` was 0.98.
#[test]
fn huge_loads_answer() {
    assert!(matches!(
        BlockedBloomFilter::<u64>::new(5_000_000_000_000_000_000, 0.5),
        Err(Error::AllocationFailed { .. } | Error::TooLarge { .. })
    ));
    let one = BlockedBloomFilter::<u64>::with_blocks(1, 7).unwrap();
    assert!(one.fpr_at(10_000_000_000_000) > 1.0 - 1e-9);
    assert_eq!(one.fpr_at(u64::MAX), 1.0);
    let big = BlockedBloomFilter::<u64>::new(1_000_000, 0.01).unwrap();
    assert_eq!(big.fpr_at(u64::MAX), 1.0);
    assert!(big.fpr_at(1_000_000) <= 0.01);
}

#[test]
fn an_empty_filter_filled_by_or_words_equals_the_one_it_came_from() {
    let mut built = BlockedBloomFilter::<u64>::new(10_000, 0.01).unwrap();
    for k in 0..5_000u64 {
        built.insert(&k);
    }
    let words = built.words();
    let mut loaded = BlockedBloomFilter::<u64>::empty(
        built.num_blocks(),
        built.num_hashes(),
        *built.hasher(),
        built.design(),
    )
    .unwrap();
    for (at, piece) in (0..).step_by(24).zip(words.chunks(24)) {
        loaded.or_words(at, piece).unwrap();
    }
    assert!(loaded == built);
    assert_eq!(loaded.count_ones(), built.count_ones());
    assert!((0..5_000u64).all(|k| loaded.contains(&k)));
    // Past the end: refused, nothing changed.
    let len = words.len();
    assert!(matches!(
        loaded.or_words(len - 1, &[1, 1]),
        Err(bloomkit_core::Error::WordCount { .. })
    ));
    assert!(loaded == built);
    assert!(matches!(
        loaded.or_words(usize::MAX, &[1]),
        Err(bloomkit_core::Error::WordCount { .. })
    ));
}
