//! The SIMD block filter: the shared conformance suite, the model check, its layout
//! against first principles, its sizing, its view and its bad inputs. (Its rate is in
//! `tests/fpr.rs`.)

use bloomkit_classic::{
    BlockedBloomFilter, SimdBlockFilter, SimdBlockFilterRef, SplitBlockFilter, MAX_SPLIT_BLOCKS,
};
use bloomkit_core::format::AlignedBytes;
use bloomkit_core::hash::SPLIT_BLOCK_SALT;
use bloomkit_core::{DecodeError, Error, Intersection, LookupCore, Union, Xxh3Builder};
use bloomkit_testkit::{self as kit, forall};

use crate::split_block::{follows_the_model, Op, SplitBlocks};

fn make() -> SimdBlockFilter<u64> {
    SimdBlockFilter::new(2_000, 0.01).unwrap()
}

impl SplitBlocks for SimdBlockFilter<u64> {
    fn with_blocks(blocks: u64) -> Self {
        SimdBlockFilter::with_blocks(blocks).unwrap()
    }
    fn reload(&self) -> Self {
        SimdBlockFilter::from_bytes(&self.to_bytes()).unwrap()
    }
    fn ones(&self) -> (u64, u64) {
        let words = self.words().iter().map(|w| u64::from(w.count_ones()));
        (self.count_ones(), words.sum())
    }
}

#[test]
fn filter_promises() {
    kit::check_filter(make);
    kit::check_filter(|| {
        SimdBlockFilter::<u64>::builder(5_000, 0.0001)
            .seed(7)
            .build()
            .unwrap()
    });
    kit::check_filter(|| SimdBlockFilter::<u64>::with_blocks(64).unwrap());
    kit::check_union(make);
    kit::check_intersection(make);
    kit::check_batch(make);
    kit::check_contains_batch(make);
}

/// No false negative after any sequence of inserts, batches, unions, intersections and
/// trips through the byte format, on filters from one block (nearly full) to many.
#[test]
fn no_false_negatives_against_a_hash_set() {
    forall(300, |ops: &Vec<Op>| {
        follows_the_model::<SimdBlockFilter<u64>>(ops, 1)
    });
    forall(300, |ops: &Vec<Op>| {
        follows_the_model::<SimdBlockFilter<u64>>(ops, 37)
    });
}

#[test]
fn codec_and_incompatibility() {
    let foreign = BlockedBloomFilter::<u64>::new(100, 0.01)
        .unwrap()
        .to_bytes();
    kit::check_codec(make, &foreign);
    kit::check_codec(|| SimdBlockFilter::<u64>::with_blocks(1).unwrap(), &foreign);
    for other in [
        SimdBlockFilter::builder(2_000, 0.01)
            .seed(1)
            .build()
            .unwrap(),
        SimdBlockFilter::new(4_000, 0.01).unwrap(),
    ] {
        kit::check_incompatible(&make(), &other, Union::union_with);
        kit::check_incompatible(&make(), &other, Intersection::intersect_with);
    }
    // A blocked filter's bytes are not a SIMD block filter's, and vice versa.
    assert!(BlockedBloomFilter::<u64>::from_bytes(&make().to_bytes()).is_err());
    assert!(SimdBlockFilter::<u64>::from_bytes(&foreign).is_err());
}

/// Where a key's bits go, from first principles: its hash (the filter's hasher) picks the
/// block with its upper 32 bits, scaled to the block count, and bit `(x * SALT[i]) >> 27` of
/// word `i`, `x` its lower 32 bits; every lookup path agrees with that, and with the
/// split-block filter given the same hashes.
#[test]
fn layout_from_first_principles() {
    let mut f = SimdBlockFilter::<str>::with_blocks(1_000).unwrap();
    let mut parquet = SplitBlockFilter::<str>::with_blocks(1_000).unwrap();
    let keys: Vec<String> = (0..3_000).map(|i| format!("key-{i}")).collect();
    for k in &keys[..1_500] {
        f.insert(k);
        parquet.insert_hash(f.hash_key(k.as_str()));
    }
    let words32: Vec<u32> = f
        .words()
        .iter()
        .flat_map(|w| [*w as u32, (*w >> 32) as u32])
        .collect();
    assert_eq!(
        words32,
        parquet.words(),
        "same bits as the split-block filter"
    );
    let mut batched = Vec::new();
    f.contains_batch(keys.iter().map(String::as_str), &mut batched);
    for (k, &in_batch) in keys.iter().zip(&batched) {
        let hash = f.hash_key(k.as_str());
        let block = (((hash >> 32) * 1_000) >> 32) as usize;
        let expected = SPLIT_BLOCK_SALT.iter().enumerate().all(|(i, salt)| {
            let bit = (hash as u32).wrapping_mul(*salt) >> 27;
            words32[8 * block + i] >> bit & 1 == 1
        });
        assert_eq!(f.contains(k.as_str()), expected, "{k}");
        assert_eq!(in_batch, expected, "{k}, batched");
        assert_eq!(f.contains_hash(hash), expected, "{k}, by hash");
    }
    // The hash is the shared one-shot hasher's: XXH3-64 of the bytes (pinned in core).
    assert_eq!(
        f.hash_key("key-1"),
        std::hash::BuildHasher::hash_one(&Xxh3Builder::default(), "key-1")
    );
}

#[test]
fn sized_with_the_block_load_model() {
    for (n, p) in [(1, 0.5), (1_000, 0.01), (1_000_000, 0.01), (100_000, 1e-4)] {
        let f = SimdBlockFilter::<u64>::new(n, p).unwrap();
        let parquet = SplitBlockFilter::<u64>::new(n, p).unwrap();
        assert_eq!(f.num_blocks(), parquet.num_blocks(), "n {n} p {p}");
        assert!(f.fpr_at(n) <= p, "n {n} p {p}");
        assert_eq!(f.target_fpr(), Some(p));
    }
}

#[test]
fn the_view_answers_as_the_filter() {
    let mut f = SimdBlockFilter::<u64>::new(10_000, 0.01).unwrap();
    f.insert_batch((0..5_000u64).map(kit::member));
    let bytes = AlignedBytes::copy_from(&f.to_bytes());
    let view = SimdBlockFilterRef::<u64>::from_bytes(&bytes).unwrap();
    let probes: Vec<u64> = (0..5_000)
        .map(kit::member)
        .chain((0..20_000).map(kit::non_member))
        .collect();
    let mut batched = Vec::new();
    view.contains_batch(&probes, &mut batched);
    for (k, b) in probes.iter().zip(batched) {
        assert_eq!(view.contains(k), f.contains(k), "{k}");
        assert_eq!(b, f.contains(k), "{k}, batched");
    }
    assert_eq!(view.count_ones(), f.count_ones());
    assert_eq!(view.estimated_len(), f.estimated_len());
    assert_eq!(view.estimated_fpr(), f.estimated_fpr());
    assert_eq!(view.to_filter(), f);
    // Bytes one off an 8-byte boundary cannot be used in place, and say so.
    let padded = AlignedBytes::copy_from(&[&[0u8][..], &bytes[..]].concat());
    assert!(matches!(
        SimdBlockFilterRef::<u64>::from_bytes(&padded[1..]),
        Err(Error::Decode(DecodeError::NotViewable(_)))
    ));
}

#[test]
fn bad_parameters_are_errors() {
    assert!(matches!(
        SimdBlockFilter::<u64>::new(0, 0.01),
        Err(Error::ZeroItems)
    ));
    for p in [0.0, 1.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                SimdBlockFilter::<u64>::new(10, p),
                Err(Error::InvalidFpr(_))
            ),
            "{p}"
        );
    }
    assert!(matches!(
        SimdBlockFilter::<u64>::with_blocks(0),
        Err(Error::ZeroBits)
    ));
    assert!(matches!(
        SimdBlockFilter::<u64>::with_blocks(MAX_SPLIT_BLOCKS + 1),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        SimdBlockFilter::<u64>::new(u64::MAX, 1e-9),
        Err(Error::TooLarge { .. } | Error::UnreachableFpr { .. })
    ));
    let hasher = Xxh3Builder::default();
    assert_eq!(
        SimdBlockFilter::<u64>::from_words(&[0; 6], hasher, None).unwrap_err(),
        Error::PartialBlock { words: 6 }
    );
    assert_eq!(
        SimdBlockFilter::<u64>::from_words(&[], hasher, None).unwrap_err(),
        Error::ZeroBits
    );
}
