//! The conformance suite every bloomkit variant runs, on records of three attributes
//! (`TestKey` for `(u64, u64, u64)`: an index and two fields with 13 and 7 values, so that
//! records share values and recombinations are common).

use bloomkit_classic::BloomFilter;
use bloomkit_core::{Intersection, Union};
use bloomkit_multi::MultiFilter;
use bloomkit_testkit as kit;

type Rec = (u64, u64, u64);

fn make() -> MultiFilter<Rec> {
    MultiFilter::builder(3_000, 0.01)
        .attribute(1, 13, 0.01)
        .unwrap()
        .attribute(2, 7, 0.01)
        .unwrap()
        .subset(&[0, 2])
        .unwrap()
        .build()
        .unwrap()
}

#[test]
fn filter_promises() {
    kit::check_filter(make);
    kit::check_filter(|| MultiFilter::<Rec>::new(2_000, 0.001).unwrap());
    // Records of one attribute: its filter is the record-level filter.
    kit::check_filter(|| MultiFilter::<(u64,)>::new(2_000, 0.01).unwrap());
}

// Without the record-level filter the hash entry points have nothing to address
// (`behaviour.rs`), so `check_filter` runs with it; its model checks without it run in
// `model.rs`, and `check_codec` below covers that configuration's bytes.

#[test]
fn union_and_intersection_keep_their_keys() {
    kit::check_union(make);
    kit::check_intersection(make);
}

#[test]
fn codec_round_trips_and_rejects_damage() {
    let foreign = BloomFilter::<u64>::new(100, 0.01).unwrap().to_bytes();
    kit::check_codec(make, &foreign);
    kit::check_codec(
        || {
            MultiFilter::<Rec>::builder(50, 0.1)
                .record_filter(false)
                .build()
                .unwrap()
        },
        &foreign,
    );
}

#[test]
fn incompatible_filters_are_refused_and_left_unchanged() {
    let a = make();
    let others = [
        MultiFilter::<Rec>::builder(3_000, 0.01)
            .seed(1)
            .build()
            .unwrap(),
        MultiFilter::<Rec>::builder(3_000, 0.01).build().unwrap(),
        MultiFilter::<Rec>::builder(3_000, 0.01)
            .record_filter(false)
            .build()
            .unwrap(),
    ];
    for b in &others {
        kit::check_incompatible(&a, b, Union::union_with);
        kit::check_incompatible(&a, b, Intersection::intersect_with);
    }
}
