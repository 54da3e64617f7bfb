//! Bad parameters and bad bytes get typed errors; nothing panics.

use bloomkit_core::Xxh3Builder;
use bloomkit_core::{Codec, DecodeError, Error};
use bloomkit_counting::{CountingBloomFilter, U4};

#[test]
fn constructor_parameters() {
    assert_eq!(
        CountingBloomFilter::<u64>::new(0, 0.01).unwrap_err(),
        Error::ZeroItems
    );
    for p in [0.0, 1.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                CountingBloomFilter::<u64>::new(10, p),
                Err(Error::InvalidFpr(_))
            ),
            "{p}"
        );
    }
    assert_eq!(
        CountingBloomFilter::<u64, U4>::with_counters_and_hasher(0, 3, Xxh3Builder::default())
            .unwrap_err(),
        Error::ZeroBits
    );
    assert!(matches!(
        CountingBloomFilter::<u64, u8>::with_counters_and_hasher(10, 0, Xxh3Builder::default()),
        Err(Error::InvalidHashCount { got: 0, .. })
    ));
    assert!(matches!(
        CountingBloomFilter::<u64, u32>::with_counters_and_hasher(
            u64::MAX,
            3,
            Xxh3Builder::default()
        ),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        CountingBloomFilter::<u64, u32>::with_counters_and_hasher(
            1 << 60,
            3,
            Xxh3Builder::default()
        ),
        Err(Error::AllocationFailed { .. } | Error::TooLarge { .. })
    ));
}

#[test]
fn bytes_of_another_width_or_with_bad_padding() {
    let mut f = CountingBloomFilter::builder(10, 0.1)
        .seed(0)
        .build()
        .unwrap();
    f.insert(&1u64);
    let bytes = f.to_bytes();
    let err = <CountingBloomFilter<u64, u16> as Codec>::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        err.to_string(),
        "serialized filter is invalid: filter of 4-bit counters, expected 16-bit counters"
    );
    // An odd number of 4-bit counters leaves a padding nibble, which must be zero.
    assert_eq!(
        f.num_counters() % 2,
        1,
        "the test needs an odd counter count"
    );
    let mut hostile = bytes.clone();
    let last = hostile.len() - 9; // the last counter byte, before the checksum
    hostile[last] |= 0xf0;
    bloomkit_testkit::reseal(&mut hostile);
    let err = CountingBloomFilter::<u64>::from_bytes(&hostile).unwrap_err();
    assert!(
        matches!(err, Error::Decode(DecodeError::Invalid(_))),
        "{err:?}"
    );
    assert!(err.to_string().contains("padding"), "{err}");
}

/// Regression: `counter(i)` panicked past the end, with no `# Panics` section.
#[test]
fn counter_past_the_end_is_none() {
    let mut f =
        CountingBloomFilter::<u64, u8>::with_counters_and_hasher(7, 2, Xxh3Builder::default())
            .unwrap();
    f.insert(&1u64);
    let m = f.num_counters();
    assert_eq!((0..m).filter_map(|i| f.counter(i)).sum::<u64>(), 2);
    for i in [m, m + 1, u64::MAX] {
        assert_eq!(f.counter(i), None);
    }
}
