//! The zero-copy view answers as the bitmap its bytes encode, and refuses what the owned
//! decoder refuses (and misaligned words).

use bloomkit_bitmap::{Bitmap, BitmapRef, Key};
use bloomkit_core::format::{AlignedBytes, Verify};
use bloomkit_core::{DecodeError, Error, Lookup, LookupCore};

/// The view of `b`'s bytes answers every key of the range and around it as `b` does, one at
/// a time, batched and through the trait; its counts and range are `b`'s; its copy is `b`.
fn agrees<K: Key>(b: &Bitmap<K>, probes: impl Iterator<Item = K> + Clone) {
    let bytes = AlignedBytes::copy_from(&b.to_bytes());
    let view = BitmapRef::<K>::from_bytes(bytes.as_bytes()).unwrap();
    for k in probes.clone() {
        assert_eq!(view.contains(&k), b.contains(&k), "{k}");
        assert_eq!(Lookup::contains(&view, &k), b.contains(&k), "{k}");
        assert_eq!(view.hash_key(&k), b.hash_key(&k), "{k}");
    }
    let keys: Vec<K> = probes.collect();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    view.contains_batch(&keys, &mut ours);
    b.contains_batch(&keys, &mut theirs);
    assert_eq!(ours, theirs);
    assert_eq!(view.len(), b.len());
    assert_eq!(view.range(), b.range());
    assert_eq!(view.estimated_len(), b.estimated_len());
    assert_eq!((view.target_fpr(), view.estimated_fpr()), (Some(0.0), 0.0));
    assert_eq!(view.heap_bytes(), 0);
    assert_eq!(&view.to_bitmap().unwrap(), b);
    assert!(format!("{view:?}").contains("BitmapRef"));
}

#[test]
fn the_view_answers_as_the_bitmap() {
    let b = Bitmap::from_keys(-300i32..=300, (-300..=300).filter(|k| k % 7 == 0)).unwrap();
    agrees(&b, -400..=400);
    let b = Bitmap::from_keys(0u8..=255, [0, 1, 64, 127, 128, 255]).unwrap();
    agrees(&b, 0..=255);
    // A range near the top of u64 and one key per word boundary.
    let lo = u64::MAX - 1_000;
    let b = Bitmap::from_keys(lo..=u64::MAX, (lo..=u64::MAX).step_by(64)).unwrap();
    agrees(&b, lo - 10..=u64::MAX);
    let b = Bitmap::<i128>::new(i128::MIN..=i128::MIN + 70).unwrap();
    agrees(&b, i128::MIN..=i128::MIN + 80);
    // A one-key range.
    let b = Bitmap::from_keys(5u16..=5, [5]).unwrap();
    agrees(&b, 0..=10);
}

#[test]
fn the_view_refuses_what_the_bitmap_refuses() {
    let b = Bitmap::from_keys(0u32..=1_000, [3, 500, 999]).unwrap();
    let bytes = b.to_bytes();
    for len in 0..bytes.len() {
        let cut = AlignedBytes::copy_from(&bytes[..len]);
        assert!(
            BitmapRef::<u32>::from_bytes(cut.as_bytes()).is_err(),
            "{len}"
        );
        assert!(Bitmap::<u32>::from_bytes(&bytes[..len]).is_err(), "{len}");
    }
    // Another key type.
    let aligned = AlignedBytes::copy_from(&bytes);
    assert!(BitmapRef::<u64>::from_bytes(aligned.as_bytes()).is_err());
    assert!(BitmapRef::<i32>::from_bytes(aligned.as_bytes()).is_err());
    // A flipped payload bit: the checksum, unless told not to check it.
    let mut flipped = bytes.clone();
    let last = flipped.len() - 9;
    flipped[last] ^= 1;
    let flipped = AlignedBytes::copy_from(&flipped);
    assert!(BitmapRef::<u32>::from_bytes(flipped.as_bytes()).is_err());
    assert!(Bitmap::<u32>::from_bytes(flipped.as_bytes()).is_err());
    // Misaligned words: a typed refusal, not a copy.
    let mut shifted = vec![0u8; bytes.len() + 1];
    shifted[1..].copy_from_slice(&bytes);
    let shifted = AlignedBytes::copy_from(&shifted);
    match BitmapRef::<u32>::with_verify(&shifted.as_bytes()[1..], Verify::All) {
        Err(Error::Decode(DecodeError::NotViewable(_))) => {}
        other => panic!("{other:?}"),
    }
}
