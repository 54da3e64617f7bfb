//! The shared conformance suite and a model check, run on the split-block filter; its
//! sizing; its bad inputs. (Byte compatibility with parquet-rs is in `tests/parquet.rs`,
//! its rate in `tests/fpr.rs`.)

use std::collections::HashSet;

use quickcheck::Arbitrary;

use bloomkit_classic::{ParquetValue, SplitBlockFilter, MAX_SPLIT_BLOCKS};
use bloomkit_core::sizing::split_block_fpr_model;
use bloomkit_core::{Error, Filter, Intersection, LookupCore, Union};
use bloomkit_testkit::{self as kit, ensure, forall, Outcome};

fn make() -> SplitBlockFilter<u64> {
    SplitBlockFilter::new(2_000, 0.01).unwrap()
}

#[test]
fn filter_promises() {
    kit::check_filter(make);
    kit::check_filter(|| SplitBlockFilter::<u64>::new(5_000, 0.0001).unwrap());
    kit::check_filter(|| SplitBlockFilter::<u64>::with_blocks(64).unwrap());
    kit::check_union(make);
    kit::check_intersection(make);
}

#[test]
fn byte_format_round_trips_and_refuses_bad_bytes() {
    let foreign = bloomkit_classic::BloomFilter::<u64>::new(100, 0.01)
        .unwrap()
        .to_bytes();
    kit::check_codec(make, &foreign);
    kit::check_codec(
        || SplitBlockFilter::<u64>::with_blocks(1).unwrap(),
        &foreign,
    );
}

#[test]
fn byte_format_and_parquet_bytes_hold_the_same_bits() {
    let mut f = SplitBlockFilter::<str>::new(1_000, 0.01).unwrap();
    for i in 0..1_000 {
        f.insert(&format!("key-{i}"));
    }
    let bytes = f.to_bytes();
    let header = bloomkit_core::format::peek(&bytes).unwrap();
    assert_eq!(header.variant, bloomkit_core::Variant::SplitBlock);
    assert_eq!(
        header.hasher,
        bloomkit_core::hash::HasherSpec::PARQUET_XXH64
    );
    let back = SplitBlockFilter::<str>::from_bytes(&bytes).unwrap();
    assert!(back == f);
    assert_eq!(back.design(), f.design());
    let parquet = SplitBlockFilter::<str>::from_parquet_bytes(&back.to_parquet_bytes()).unwrap();
    assert_eq!(parquet.to_bitset(), f.to_bitset());
    // Another hasher id in the header (a SIMD block filter's bytes re-tagged) is refused.
    let mut other = bytes.clone();
    other[7] = 4;
    bloomkit_testkit::reseal(&mut other);
    assert!(matches!(
        SplitBlockFilter::<str>::from_bytes(&other),
        Err(Error::Decode(bloomkit_core::DecodeError::HasherMismatch {
            expected: 5,
            found: 4
        }))
    ));
}

#[test]
fn incompatible_filters_are_refused_and_left_unchanged() {
    let mut a = make();
    a.insert(&1);
    let b = SplitBlockFilter::<u64>::with_blocks(a.num_blocks() + 1).unwrap();
    let before = a.clone();
    assert!(matches!(a.union_with(&b), Err(Error::Incompatible { .. })));
    assert!(matches!(
        a.intersect_with(&b),
        Err(Error::Incompatible { .. })
    ));
    assert!(matches!(a.union(&b), Err(Error::Incompatible { .. })));
    assert_eq!(a, before, "a refused combination changes nothing");
    assert_eq!(a.to_parquet_bytes(), before.to_parquet_bytes());
}

/// An operation on a filter and on the model of what was inserted.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Insert(u64),
    Contains(u64),
    InsertBatch(Vec<u64>),
    UnionWithCopyOf(Vec<u64>),
    IntersectWithSuperset,
    Reload,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut quickcheck::Gen) -> Op {
        // Keys from a small range, so that inserts repeat and lookups hit.
        let key = |g: &mut quickcheck::Gen| u64::arbitrary(g) % 300;
        match u8::arbitrary(g) % 12 {
            0..=4 => Op::Insert(key(g)),
            5..=7 => Op::Contains(key(g)),
            8 => Op::InsertBatch((0..u8::arbitrary(g) % 40).map(|_| key(g)).collect()),
            9 => Op::UnionWithCopyOf((0..u8::arbitrary(g) % 20).map(|_| key(g)).collect()),
            10 => Op::IntersectWithSuperset,
            _ => Op::Reload,
        }
    }
}

/// What the model check needs of a filter of split blocks beyond [`Filter`]: an empty one
/// of `blocks` blocks, a trip through its bytes, and its set bits counted two ways.
pub(crate) trait SplitBlocks:
    Filter<Key = u64, InsertError = std::convert::Infallible> + Union + Intersection + Clone + Sized
{
    fn with_blocks(blocks: u64) -> Self;
    fn reload(&self) -> Self;
    /// The running count of ones, and the count from the words.
    fn ones(&self) -> (u64, u64);
}

impl SplitBlocks for SplitBlockFilter<u64> {
    fn with_blocks(blocks: u64) -> Self {
        SplitBlockFilter::with_blocks(blocks).unwrap()
    }
    fn reload(&self) -> Self {
        SplitBlockFilter::from_parquet_bytes(&self.to_parquet_bytes()).unwrap()
    }
    fn ones(&self) -> (u64, u64) {
        let words = self.words().iter().map(|w| u64::from(w.count_ones()));
        (self.count_ones(), words.sum())
    }
}

pub(crate) fn follows_the_model<F: SplitBlocks>(ops: &[Op], blocks: u64) -> Outcome {
    let mut f = F::with_blocks(blocks);
    let mut model = HashSet::new();
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Insert(k) => {
                let new = f.insert(k);
                ensure(!new || !model.contains(k), || {
                    format!("op {i}: {k} new twice")
                })?;
                model.insert(*k);
            }
            Op::Contains(k) => {
                ensure(!model.contains(k) || f.contains(k), || {
                    format!("op {i}: false negative for {k}")
                })?;
            }
            Op::InsertBatch(keys) => {
                f.insert_batch(keys);
                model.extend(keys.iter().copied());
            }
            Op::UnionWithCopyOf(keys) => {
                let mut other = F::with_blocks(blocks);
                other.insert_batch(keys);
                f.union_with(&other).unwrap();
                model.extend(keys.iter().copied());
            }
            Op::IntersectWithSuperset => {
                let mut superset = f.clone();
                superset.insert(&u64::MAX);
                f.intersect_with(&superset).unwrap();
            }
            Op::Reload => f = f.reload(),
        }
        let (running, counted) = f.ones();
        ensure(running == counted, || {
            format!("op {i}: count of ones drifted")
        })?;
    }
    let mut answers = Vec::new();
    f.contains_batch(model.iter(), &mut answers);
    ensure(answers.iter().all(|&a| a), || {
        "batched false negative".into()
    })?;
    ensure(model.iter().all(|k| f.contains(k)), || {
        "false negative at the end".into()
    })
}

/// No false negative after any sequence of inserts, batches, unions, intersections and
/// reloads, on filters from one block (nearly full) to many.
#[test]
fn no_false_negatives_against_a_hash_set() {
    forall(300, |ops: &Vec<Op>| {
        follows_the_model::<SplitBlockFilter<u64>>(ops, 1)
    });
    forall(300, |ops: &Vec<Op>| {
        follows_the_model::<SplitBlockFilter<u64>>(ops, 37)
    });
}

#[test]
fn sized_with_the_block_load_model() {
    for (n, p) in [(1, 0.5), (1_000, 0.01), (1_000_000, 0.01), (100_000, 1e-4)] {
        let f = SplitBlockFilter::<u64>::new(n, p).unwrap();
        assert!(f.fpr_at(n) <= p, "n {n} p {p}");
        assert!(
            split_block_fpr_model(n, f.num_blocks() - 1).unwrap_or(1.0) > p || f.num_blocks() == 1
        );
        assert_eq!(f.target_fpr(), Some(p));
    }
    let bits_per_key = SplitBlockFilter::<u64>::new(1_000_000, 0.01)
        .unwrap()
        .num_bits() as f64
        / 1e6;
    assert!((10.3..10.9).contains(&bits_per_key), "{bits_per_key}");
}

#[test]
fn bad_parameters_are_errors() {
    assert!(matches!(
        SplitBlockFilter::<u64>::new(0, 0.01),
        Err(Error::ZeroItems)
    ));
    for p in [0.0, 1.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                SplitBlockFilter::<u64>::new(10, p),
                Err(Error::InvalidFpr(_))
            ),
            "{p}"
        );
    }
    assert!(matches!(
        SplitBlockFilter::<u64>::with_blocks(0),
        Err(Error::ZeroBits)
    ));
    assert!(matches!(
        SplitBlockFilter::<u64>::with_blocks(MAX_SPLIT_BLOCKS + 1),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        SplitBlockFilter::<u64>::new(u64::MAX, 1e-9),
        Err(Error::TooLarge { .. } | Error::UnreachableFpr { .. })
    ));
    assert!(matches!(
        SplitBlockFilter::<u64>::with_parquet_sizing(0, 0.01),
        Err(Error::ZeroItems)
    ));
}

/// The hash Parquet defines: XXH64, seed 0, of the plain encoding. Golden values from the
/// spec (the empty string) and from parquet-rs (checked in `tests/parquet.rs` by comparing
/// bitsets; pinned here so that a change of ours shows without parquet).
#[test]
fn parquet_hashes_are_pinned() {
    assert_eq!("".parquet_hash(), 17_241_709_254_077_376_921);
    // XXH64("hello", 0), the reference implementation's value.
    assert_eq!("hello".parquet_hash(), 2_794_345_569_481_354_659);
    assert_eq!(42i64.parquet_hash(), 13_066_772_586_158_965_587);
    assert_eq!(42i32.parquet_hash(), 15_516_826_743_637_085_169);
    assert_eq!(0.5f64.parquet_hash(), 5_245_389_620_263_901_762);
    assert_eq!(b"".as_slice().parquet_hash(), "".parquet_hash());
    assert_eq!(
        String::from("bloomkit").parquet_hash(),
        "bloomkit".parquet_hash()
    );
    assert_eq!(1u8.parquet_hash(), 1i32.parquet_hash());
    assert_eq!(u16::MAX.parquet_hash(), 65_535i32.parquet_hash());
    assert_eq!((-2i16).parquet_hash(), (-2i32).parquet_hash());
    assert_eq!(3u64.parquet_hash(), 3i64.parquet_hash());
    assert_eq!(1.5f64.parquet_hash(), 1.5f64.to_bits().parquet_hash());
    assert_eq!(1.5f32.parquet_hash(), 1.5f32.to_bits().parquet_hash());
    assert_eq!([1u8, 2, 3].parquet_hash(), vec![1u8, 2, 3].parquet_hash());
    // And where the filter puts a key, for a fixed block count.
    let mut f = SplitBlockFilter::<str>::with_blocks(1024).unwrap();
    f.insert("hello");
    let set: Vec<(usize, u32)> = f
        .words()
        .iter()
        .enumerate()
        .filter(|(_, w)| **w != 0)
        .map(|(i, w)| (i, *w))
        .collect();
    assert_eq!(
        set.len(),
        8,
        "one bit in each of one block's words: {set:?}"
    );
    assert_eq!(set[0].0 % 8, 0);
    assert_eq!(f.hash_key("hello"), "hello".parquet_hash());
}

/// The zero-copy view answers every key as the owned filter does (one at a time and in
/// batches), gives it back whole, and refuses what it cannot use in place with a typed
/// error: another variant, truncated bytes, a misaligned buffer.
#[test]
fn the_view_answers_as_the_owned_filter_and_refuses_what_it_cannot_use() {
    use bloomkit_classic::{SimdBlockFilter, SplitBlockFilterRef};
    use bloomkit_core::format::{AlignedBytes, Verify};
    use bloomkit_core::{DecodeError, Lookup};

    let mut f = SplitBlockFilter::<u64>::new(20_000, 0.01).unwrap();
    f.insert_batch(0..20_000u64);
    let bytes = AlignedBytes::copy_from(&f.to_bytes());
    let view = SplitBlockFilterRef::<u64>::from_bytes(&bytes).unwrap();
    let probes: Vec<u64> = (10_000..60_000).collect();
    kit::check_view_answers(&f, &view, &probes);
    assert!(probes[..10_000].iter().all(|k| view.contains(k)));
    assert_eq!(view.to_filter(), f);
    assert_eq!(view.count_ones(), f.count_ones());
    assert_eq!(view.hash_key(&7), f.hash_key(&7));
    assert_eq!(LookupCore::estimated_len(&view), f.estimated_len());

    let simd = SimdBlockFilter::<u64>::new(100, 0.01).unwrap().to_bytes();
    assert!(matches!(
        SplitBlockFilterRef::<u64>::from_bytes(&AlignedBytes::copy_from(&simd)),
        Err(Error::Decode(DecodeError::WrongVariant { .. }))
    ));
    for cut in [0, 10, 40, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            SplitBlockFilterRef::<u64>::from_bytes(&bytes[..cut]).is_err(),
            "{cut}"
        );
    }
    let (shifted, at) = kit::misaligned_copy(&bytes);
    assert!(matches!(
        SplitBlockFilterRef::<u64>::from_bytes(&shifted[at..]),
        Err(Error::Decode(DecodeError::NotViewable(_)))
    ));
    let mut corrupt = bytes.as_bytes().to_vec();
    let last = corrupt.len() - 9;
    corrupt[last] ^= 0x10;
    let corrupt = AlignedBytes::copy_from(&corrupt);
    assert!(SplitBlockFilterRef::<u64>::from_bytes(&corrupt).is_err());
    assert!(SplitBlockFilterRef::<u64>::with_verify(&corrupt, Verify::SkipPayloadChecksum).is_ok());
}
