//! The shared conformance suite, run on the counting filter at every counter width.

use bloomkit_classic::BloomFilter;
use bloomkit_core::Union;
use bloomkit_counting::{Counter, CountingBloomFilter, U4};
use bloomkit_testkit as kit;

fn suite<C: Counter>() {
    let make = || {
        CountingBloomFilter::<u64>::builder(2_000, 0.01)
            .counter::<C>()
            .seed(3)
            .build()
            .unwrap()
    };
    kit::check_filter(make);
    kit::check_union(make);
    let foreign = BloomFilter::<u64>::new(100, 0.01).unwrap().to_bytes();
    kit::check_codec(make, &foreign);
    let other = CountingBloomFilter::<u64>::builder(2_000, 0.01)
        .counter::<C>()
        .seed(4)
        .build()
        .unwrap();
    kit::check_incompatible(&make(), &other, Union::union_with);
}

#[test]
fn four_bit_counters() {
    suite::<U4>();
}

#[test]
fn eight_bit_counters() {
    suite::<u8>();
}

#[test]
fn sixteen_bit_counters() {
    suite::<u16>();
}

#[test]
fn thirty_two_bit_counters() {
    suite::<u32>();
}

/// One probe per key, where a lookup tests a single counter.
#[test]
fn one_probe_per_key() {
    kit::check_filter(|| CountingBloomFilter::<u64>::with_counters(20_000, 1).unwrap());
    kit::check_union(|| CountingBloomFilter::<u64>::with_counters(2_000, 1).unwrap());
}
