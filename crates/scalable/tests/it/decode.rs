//! Hostile bytes: decoded filters are checked against their own configuration, so nothing
//! decoded can make its next operations hang, overflow or allocate without bound.
//!
//! The four `data/regressions/*.bin` inputs carry valid headers and checksums and describe
//! filters no configuration produces (a growth bomb, a hang, two overflows); each must be
//! refused.

use bloomkit_core::{DecodeError, Error, Setting};
use bloomkit_scalable::ScalableBloomFilter;
use bloomkit_testkit::{member, reseal};

/// Decoding `bytes` is refused with a structural error whose message contains `needle`.
fn refused(bytes: &[u8], needle: &str) {
    match ScalableBloomFilter::<u64>::from_bytes(bytes) {
        Err(Error::Decode(DecodeError::Invalid(msg))) => {
            assert!(msg.contains(needle), "{msg:?} does not say {needle:?}");
        }
        other => panic!("expected a refusal naming {needle:?}, got {other:?}"),
    }
}

/// Decoding `bytes` is refused because a setting is one no filter can have: the error that
/// building a filter with it gives, kept whole.
fn refused_setting(bytes: &[u8], setting: Setting, value: f64, message: &str) {
    match ScalableBloomFilter::<u64>::from_bytes(bytes) {
        Err(Error::Decode(DecodeError::Parameter(cause))) => {
            assert!(
                matches!(*cause, Error::InvalidGrowth { what, got, .. } if what == setting && got == value),
                "{cause:?}"
            );
            assert_eq!(cause.to_string(), message);
        }
        other => panic!("expected {setting:?} {value} refused, got {other:?}"),
    }
}

#[test]
fn the_shared_regression_inputs_are_refused() {
    // Growth 2^31: the first insert allocated about 4 GB.
    refused_setting(
        include_bytes!("../data/regressions/scalable-growth-bomb.bin"),
        Setting::Growth,
        2_147_483_648.0,
        "growth must be in 2..=16, got 2147483648",
    );
    // Growth 3.5e9 and a target of 0.999: the first insert never returned.
    refused_setting(
        include_bytes!("../data/regressions/scalable-hang.bin"),
        Setting::Growth,
        3_500_000_000.0,
        "growth must be in 2..=16, got 3500000000",
    );
    // Two slices of 2^63 items: an overflow panic in debug, len 0 in release.
    refused(
        include_bytes!("../data/regressions/scalable-items-overflow.bin"),
        "slice 0 (9223372036854775808 items at rate 0.01) does not follow",
    );
    // Two slices of u64::MAX items: `capacity()` overflowed.
    refused(
        include_bytes!("../data/regressions/scalable-capacity-overflow.bin"),
        "slice 0 (18446744073709551615 items at rate 0.01) does not follow",
    );
}

/// A filter of three slices (capacities 10, 20, 40) with default settings and no limits.
fn grown() -> ScalableBloomFilter<u64> {
    let mut f = ScalableBloomFilter::new(10, 0.01).unwrap();
    let mut i = 0;
    while f.num_slices() < 3 {
        f.try_insert(&member(i)).unwrap();
        i += 1;
    }
    f
}

// Offsets in the byte format (docs/format.md): the parameter block starts at 32 (version 2).
const GROWTH: usize = 48;
const TIGHTENING: usize = 52;
const NEXT: usize = 62; // after two absent options (one byte each)
const FIRST_SLICE: usize = 82;
const SLICE_HASHES: usize = FIRST_SLICE + 8;
const SLICE_CAPACITY: usize = FIRST_SLICE + 12;

fn patched(at: usize, value: &[u8]) -> Vec<u8> {
    let mut bytes = grown().to_bytes();
    bytes[at..at + value.len()].copy_from_slice(value);
    reseal(&mut bytes);
    bytes
}

#[test]
fn decoded_slices_must_follow_the_configuration() {
    let f = grown();
    assert_eq!(ScalableBloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
    assert_eq!(f.to_bytes()[NEXT..NEXT + 4], 3u32.to_le_bytes());
    // The filter says it made more slices than it holds: its next insert would skip ahead
    // to a slice far larger than anything in the input.
    refused(
        &patched(NEXT, &30u32.to_le_bytes()),
        "own slices are 3, it says it made 30",
    );
    // Settings the slices do not follow.
    refused(&patched(GROWTH, &3u32.to_le_bytes()), "does not follow");
    refused_setting(
        &patched(TIGHTENING, &0.3f64.to_le_bytes()),
        Setting::Tightening,
        0.3,
        "tightening ratio must be in [0.5, 0.95], got 0.3",
    );
    refused(
        &patched(SLICE_CAPACITY, &11u64.to_le_bytes()),
        "slice 0 (11 items",
    );
    // A slice too small for its rate: one probe instead of the planned count.
    refused(
        &patched(SLICE_HASHES, &1u32.to_le_bytes()),
        "too small for its rate",
    );
}

/// The zero-copy view answers as the owned filter across growth, takes every check the
/// owned decoder takes (the hostile inputs above are refused by both), and refuses a
/// buffer it cannot use in place with `NotViewable`.
#[test]
fn the_view_answers_as_the_owned_filter_and_checks_what_it_checks() {
    use bloomkit_core::format::AlignedBytes;
    use bloomkit_core::{Codec, DecodeError, Error};
    use bloomkit_scalable::ScalableBloomFilterRef;

    let mut f = ScalableBloomFilter::<u64>::new(100, 0.01).unwrap();
    f.try_insert_batch(0..20_000u64).unwrap();
    assert!(f.num_slices() >= 6);
    let bytes = AlignedBytes::copy_from(&f.to_bytes());
    let view = ScalableBloomFilterRef::<u64>::from_bytes(&bytes).unwrap();
    let probes: Vec<u64> = (0..100_000).collect();
    bloomkit_testkit::check_view_answers(&f, &view, &probes);
    assert_eq!(view.len(), f.len());
    assert_eq!(view.num_slices(), f.num_slices());
    assert_eq!(view.estimated_fpr(), f.estimated_fpr());
    assert_eq!(view.hash_key(&3), f.hash_key(&3));
    for cut in [0, 20, 64, bytes.len() / 2, bytes.len() - 1] {
        let owned = ScalableBloomFilter::<u64>::from_bytes(&bytes[..cut]);
        let viewed = ScalableBloomFilterRef::<u64>::from_bytes(&bytes[..cut]);
        assert!(owned.is_err() && viewed.is_err(), "{cut}");
    }
    let (shifted, at) = bloomkit_testkit::misaligned_copy(&bytes);
    assert!(matches!(
        ScalableBloomFilterRef::<u64>::from_bytes(&shifted[at..]),
        Err(Error::Decode(DecodeError::NotViewable(_)))
    ));
    let _ = <ScalableBloomFilter<u64> as Codec>::from_bytes(&shifted[at..])
        .expect("the owned decoder reads any alignment");
}
