//! The shared conformance suite, run on the scalable filter (started small, so it grows
//! during the checks).

use bloomkit_classic::BloomFilter;
use bloomkit_core::Union;
use bloomkit_scalable::ScalableBloomFilter;
use bloomkit_testkit as kit;

#[test]
fn filter_promises() {
    kit::check_filter(|| ScalableBloomFilter::<u64>::new(100, 0.01).unwrap());
    kit::check_filter(|| {
        ScalableBloomFilter::<u64>::builder(10, 0.001)
            .growth(4)
            .tightening(0.5)
            .build()
            .unwrap()
    });
}

#[test]
fn union_keeps_both_sides() {
    kit::check_union(|| ScalableBloomFilter::<u64>::new(4, 0.01).unwrap());
}

#[test]
fn codec_round_trips_across_slices_and_rejects_damage() {
    let foreign = BloomFilter::<u64>::new(100, 0.01).unwrap().to_bytes();
    kit::check_codec(
        || ScalableBloomFilter::<u64>::new(8, 0.01).unwrap(),
        &foreign,
    );
    let other = ScalableBloomFilter::<u64>::builder(8, 0.01)
        .seed(1)
        .build()
        .unwrap();
    kit::check_incompatible(
        &ScalableBloomFilter::new(8, 0.01).unwrap(),
        &other,
        Union::union_with,
    );
}

#[test]
fn batched_lookups_answer_as_single_ones() {
    // Started at 4 items so the random key lists grow it through several slices.
    kit::check_contains_batch(|| ScalableBloomFilter::new(4, 0.01).unwrap());
}
