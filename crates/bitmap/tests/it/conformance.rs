//! The shared conformance suite, run on the bitmap.

use bloomkit_bitmap::Bitmap;
use bloomkit_core::format::Writer;
use bloomkit_core::{Intersection, PortableHasher, Union, Variant, Xxh3Builder};
use bloomkit_testkit as kit;

fn make() -> Bitmap<u64> {
    Bitmap::new(0..=4_095).unwrap()
}

#[test]
fn filter_promises() {
    kit::check_filter(make);
    kit::check_filter(|| Bitmap::<u64>::new(0..=2_000).unwrap());
}

#[test]
fn union_and_intersection() {
    kit::check_union(make);
    kit::check_intersection(make);
}

#[test]
fn codec_round_trips_and_rejects_damage() {
    let foreign = {
        Writer::new(Variant::Classic, Xxh3Builder::default().spec())
            .params(&(64u64, 3u32, 0u8))
            .words(&[0])
            .to_vec()
    };
    kit::check_codec(make, &foreign);
    kit::check_codec(|| Bitmap::<u64>::new(7..=7).unwrap(), &foreign);
}

#[test]
fn ranges_must_match_to_combine() {
    let a = Bitmap::<u64>::from_keys(0..=4_095, [1, 2]).unwrap();
    let b = Bitmap::<u64>::new(0..=4_096).unwrap();
    for op in [
        Bitmap::union_with,
        Bitmap::intersect_with,
        Bitmap::difference_with,
        Bitmap::symmetric_difference_with,
    ] {
        let mut left = a.clone();
        let err = op(&mut left, &b).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot combine bitmaps over different key ranges: 0..=4095 vs 0..=4096"
        );
        assert_eq!(left, a);
    }
    assert!(Union::union(&a, &b).is_err() && Intersection::intersection(&a, &b).is_err());
}
