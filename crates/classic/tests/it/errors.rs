//! Every bad parameter gets a typed error that names the bad value; nothing panics.

use bloomkit_classic::BloomFilter;
use bloomkit_core::{DecodeError, Error};

#[test]
fn constructor_parameters() {
    assert_eq!(
        BloomFilter::<u64>::new(0, 0.01).unwrap_err(),
        Error::ZeroItems
    );
    for p in [
        0.0,
        1.0,
        -1.0,
        1.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE / 4.0,
    ] {
        match BloomFilter::<u64>::new(100, p) {
            Err(Error::InvalidFpr(_)) => {}
            // A subnormal p is in (0, 1) but no filter of 100 items can reach it.
            Err(Error::UnreachableFpr { .. } | Error::TooLarge { .. }) if p > 0.0 && p < 1.0 => {}
            other => panic!("p = {p}: {other:?}"),
        }
    }
    assert_eq!(
        BloomFilter::<u64>::new(10, 1.5).unwrap_err().to_string(),
        "false-positive rate must be in (0, 1), got 1.5"
    );
    assert_eq!(
        BloomFilter::<u64>::with_bits(0, 3).unwrap_err(),
        Error::ZeroBits
    );
    assert_eq!(
        BloomFilter::<u64>::with_bits(100, 0)
            .unwrap_err()
            .to_string(),
        "number of hash functions must be in 1..=64, got 0"
    );
    assert!(matches!(
        BloomFilter::<u64>::with_bits(100, 65),
        Err(Error::InvalidHashCount { got: 65, .. })
    ));
    assert!(matches!(
        BloomFilter::<u64>::with_bits(u64::MAX, 3),
        Err(Error::TooLarge { .. })
    ));
    // Within the arithmetic limit, beyond what any allocator gives.
    assert!(matches!(
        BloomFilter::<u64>::with_bits(1 << 62, 3),
        Err(Error::AllocationFailed { .. })
    ));
    // 2^62 items at 30%: reachable in principle (floor 0.25), but needs more than 2^63 bits.
    assert!(matches!(
        BloomFilter::<u64>::new(1 << 62, 0.3),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        BloomFilter::<u64>::new(u64::MAX, 1e-3),
        Err(Error::UnreachableFpr { .. })
    ));
    assert!(matches!(
        BloomFilter::<u64>::builder(0, 0.1).seed(3).build(),
        Err(Error::ZeroItems)
    ));
}

#[test]
fn decode_errors_name_the_problem() {
    let f = BloomFilter::<u64>::new(10, 0.1).unwrap();
    let bytes = f.to_bytes();
    let err = BloomFilter::<u64>::from_bytes(&bytes[..10]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Decode(DecodeError::Truncated {
                needed: 32,
                available: 10
            })
        ),
        "{err:?}"
    );
    let err = BloomFilter::<u64>::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("serialized filter is truncated"),
        "{err}"
    );
    let mut bad = bytes.clone();
    bad[40] ^= 4;
    assert!(BloomFilter::<u64>::from_bytes(&bad)
        .unwrap_err()
        .to_string()
        .contains("corrupted"));
    let mut other_hasher = bytes.clone();
    other_hasher[7] = 200;
    bloomkit_testkit::reseal(&mut other_hasher);
    assert_eq!(
        BloomFilter::<u64>::from_bytes(&other_hasher).unwrap_err(),
        Error::Decode(DecodeError::HasherMismatch {
            expected: 4,
            found: 200
        })
    );
}

#[test]
fn hostile_parameters_behind_a_valid_checksum() {
    let f = BloomFilter::<u64>::new(100, 0.01).unwrap();
    let good = f.to_bytes();
    // Parameter block starts at byte 32 (format version 2): bits (u64), hashes (u32), design tag (u8), ...
    let patch = |at: usize, with: &[u8]| {
        let mut b = good.clone();
        b[at..at + with.len()].copy_from_slice(with);
        bloomkit_testkit::reseal(&mut b);
        BloomFilter::<u64>::from_bytes(&b).unwrap_err().to_string()
    };
    assert!(patch(32, &0u64.to_le_bytes()).contains("number of bits must be at least 1"));
    assert!(patch(32, &u64::MAX.to_le_bytes()).contains("larger than the maximum"));
    assert!(patch(32, &1_000_000u64.to_le_bytes()).contains("words"));
    assert!(patch(40, &0u32.to_le_bytes()).contains("hash functions must be in 1..=64, got 0"));
    assert!(patch(40, &1000u32.to_le_bytes()).contains("got 1000"));
    assert!(patch(44, &[9]).contains("invalid"));
    // design.capacity = 0, design.fpr = 2.0
    assert!(patch(45, &0u64.to_le_bytes()).contains("at least 1, got 0"));
    assert!(patch(53, &2.0f64.to_le_bytes()).contains("got 2"));
    assert!(patch(53, &f64::NAN.to_le_bytes()).contains("got NaN"));
}

/// `merge_all`: an empty list and a filter of another shape are typed errors naming what
/// and where; the inputs are borrowed, so nothing is lost.
#[test]
fn merge_all_errors_name_the_filter() {
    use bloomkit_classic::BlockedBloomFilter;
    use bloomkit_core::{Parameter, Union};

    assert_eq!(
        BloomFilter::<u64>::merge_all([]).unwrap_err(),
        Error::NoFilters
    );
    let mut parts: Vec<BlockedBloomFilter<u64>> = (0..3u64)
        .map(|p| {
            let mut f = BlockedBloomFilter::new(10_000, 0.01).unwrap();
            f.insert_batch(p * 100..(p + 1) * 100);
            f
        })
        .collect();
    let all = BlockedBloomFilter::merge_all(&parts).unwrap();
    assert!((0..300u64).all(|k| all.contains(&k)));
    // One partition sized differently: refused, naming its position and the parameter.
    parts.push(BlockedBloomFilter::new(20_000, 0.01).unwrap());
    let before = parts.clone();
    let err = BlockedBloomFilter::merge_all(&parts).unwrap_err();
    match &err {
        Error::MergeFailed { index: 3, source } => assert!(matches!(
            **source,
            Error::Incompatible {
                what: Parameter::Blocks,
                ..
            }
        )),
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().starts_with("cannot merge filter 3"));
    assert_eq!(parts, before);
}
