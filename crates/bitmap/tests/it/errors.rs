//! Bad ranges and keys get typed errors that name them; nothing panics or aborts.

use bloomkit_bitmap::Bitmap;
use bloomkit_core::{DecodeError, Error};

#[test]
fn ranges_that_cannot_be_stored() {
    // 2^64 keys: past the bit limit.
    assert!(matches!(
        Bitmap::new(u64::MIN..=u64::MAX),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        Bitmap::new(i64::MIN..=i64::MAX),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        Bitmap::new(0u128..=u128::MAX),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        Bitmap::new(i128::MIN..=0),
        Err(Error::TooLarge { .. })
    ));
    // 2^62 keys (512 PiB): within the limit, refused by the allocator.
    assert!(matches!(
        Bitmap::new(0u64..=(1 << 62)),
        Err(Error::AllocationFailed { .. })
    ));
    let (lo, hi) = (5u8, 3u8); // deliberately reversed
    let err = Bitmap::new(lo..=hi).unwrap_err();
    assert_eq!(err.to_string(), "key range 5..=3 is empty");
    // One-key ranges and the full range of small types are fine.
    assert_eq!(Bitmap::new(9i64..=9).unwrap().capacity(), 1);
    assert_eq!(Bitmap::new(u16::MIN..=u16::MAX).unwrap().capacity(), 65_536);
    assert_eq!(Bitmap::new(0u128..=99).unwrap().capacity(), 100);
}

#[test]
fn keys_outside_the_range() {
    let mut b = Bitmap::new(-10i32..=10).unwrap();
    let err = b.try_insert(&11).unwrap_err();
    assert_eq!(
        err.to_string(),
        "key 11 is outside the bitmap's range -10..=10"
    );
    assert!(matches!(
        b.try_insert(&i32::MIN),
        Err(Error::KeyOutOfRange { .. })
    ));
    assert!(!b.contains(&11));
    assert_eq!(b.remove(&-11), Err(Error::NotPresent));
    assert!(b.is_empty());
    let err = b.extend_checked([1, 2, 3, 99]).unwrap_err();
    assert!(err.to_string().contains("key 99"));
    assert!(b.is_empty(), "a refused extend must undo its inserts");
    assert!(matches!(
        Bitmap::from_keys(0u8..=9, [1, 10]),
        Err(Error::KeyOutOfRange { .. })
    ));
}

#[test]
fn decoding_checks_the_key_type_and_range() {
    let b = Bitmap::from_keys(-5i32..=5, [-5, 5]).unwrap();
    let bytes = b.to_bytes();
    for wrong in [
        Bitmap::<u32>::from_bytes(&bytes).unwrap_err(),
        Bitmap::<i64>::from_bytes(&bytes).unwrap_err(),
    ] {
        assert!(wrong.to_string().contains("bitmap of i32 keys"), "{wrong}");
    }
    // A range that does not fit the key type, behind a valid checksum.
    let mut hostile = Bitmap::from_keys(0i64..=9, [1]).unwrap().to_bytes();
    let hi_at = 32 + 4 + 1 + 16; // header, key_bits, key_signed, lo, then hi
    hostile[hi_at..hi_at + 16].copy_from_slice(&i128::MAX.to_le_bytes());
    bloomkit_testkit::reseal(&mut hostile);
    let err = Bitmap::<i64>::from_bytes(&hostile).unwrap_err();
    assert!(
        matches!(err, Error::Decode(DecodeError::Invalid(_))),
        "{err:?}"
    );
    // lo > hi
    let mut hostile = Bitmap::from_keys(0i64..=9, [1]).unwrap().to_bytes();
    hostile[hi_at..hi_at + 16].copy_from_slice(&(-1i128).to_le_bytes());
    bloomkit_testkit::reseal(&mut hostile);
    assert!(Bitmap::<i64>::from_bytes(&hostile)
        .unwrap_err()
        .to_string()
        .contains("empty"));
}

/// Ranges at the very ends of the widest key types work, encode and decode. Regression:
/// `Bitmap<i128>` ending at `i128::MAX` overflowed in `to_bytes` (`base + len - 1`), and
/// `Bitmap::new(u128::MAX..=u128::MAX)`, one bit, was "larger than the maximum".
#[test]
fn ranges_at_the_ends_of_the_widest_types() {
    fn round_trip<K: bloomkit_bitmap::Key>(range: std::ops::RangeInclusive<K>, keys: &[K]) {
        let mut b = Bitmap::new(range.clone()).unwrap();
        for &k in keys {
            assert!(b.try_insert(&k).unwrap(), "{k}");
            assert!(b.contains(&k));
        }
        assert_eq!(b.len(), keys.len() as u64);
        assert_eq!(b.iter().collect::<Vec<_>>(), keys);
        assert_eq!(
            (b.min(), b.max()),
            (keys.first().copied(), keys.last().copied())
        );
        assert_eq!(b.range(), range);
        let back = Bitmap::<K>::from_bytes(&b.to_bytes()).unwrap();
        assert_eq!(back, b);
        let via_serde: Bitmap<K> = bincode::serde::decode_from_slice(
            &bincode::serde::encode_to_vec(&b, bincode::config::standard()).unwrap(),
            bincode::config::standard(),
        )
        .unwrap()
        .0;
        assert_eq!(via_serde, b);
    }
    round_trip(
        i128::MAX - 10..=i128::MAX,
        &[i128::MAX - 10, i128::MAX - 1, i128::MAX],
    );
    round_trip(i128::MIN..=i128::MIN + 3, &[i128::MIN, i128::MIN + 3]);
    round_trip(u128::MAX..=u128::MAX, &[u128::MAX]);
    round_trip(u128::MAX - 10..=u128::MAX, &[u128::MAX - 10, u128::MAX]);
    round_trip(
        i128::MAX as u128 - 2..=i128::MAX as u128 + 2,
        &[i128::MAX as u128, i128::MAX as u128 + 1],
    );
    round_trip(i64::MAX - 1..=i64::MAX, &[i64::MAX]);
    round_trip(u64::MAX - 1..=u64::MAX, &[u64::MAX - 1, u64::MAX]);
    round_trip(i8::MIN..=i8::MAX, &[-128, -1, 0, 127]);
    assert!(matches!(
        Bitmap::new(0u128..=u128::MAX),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        Bitmap::new(i128::MIN..=i128::MAX),
        Err(Error::TooLarge { .. })
    ));
    // A u128 bitmap's bytes are the ones earlier versions wrote, where they could.
    let small = Bitmap::from_keys(5u128..=9, [6]).unwrap();
    let bytes = small.to_bytes();
    assert_eq!(bytes[37..53], 5i128.to_le_bytes());
    assert_eq!(bytes[53..69], 9i128.to_le_bytes());
}
