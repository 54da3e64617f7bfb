//! The trap issue 12 removed: a filter of `u64` finds the `1` it was given, whatever type the
//! literal would have defaulted to, in every variant; and lookups take borrowed forms.

use bloomkit::prelude::*;

#[test]
fn a_u64_filter_finds_the_literal_it_was_given() {
    let mut classic = BloomFilter::new(1_000, 0.01).unwrap();
    classic.insert(&1u64);
    assert!(classic.contains(&1)); // the literal is inferred as u64, not i32
    let mut blocked = BlockedBloomFilter::new(1_000, 0.01).unwrap();
    blocked.insert(&1u64);
    assert!(blocked.contains(&1));
    let mut counting = CountingBloomFilter::new(1_000, 0.01).unwrap();
    counting.insert(&1u64);
    assert!(counting.contains(&1));
    assert_eq!(counting.count(&1), 1);
    counting.remove(&1).unwrap();
    let mut scalable = ScalableBloomFilter::new(10, 0.01).unwrap();
    scalable.try_insert(&1u64).unwrap();
    assert!(scalable.contains(&1));
    let mut bitmap = Bitmap::new(0u64..=10).unwrap();
    bitmap.try_insert(&1).unwrap();
    assert!(bitmap.contains(&1));
}

#[test]
fn lookups_take_borrowed_forms_as_hashset_does() {
    let mut owned = BloomFilter::<String>::new(1_000, 0.01).unwrap();
    owned.insert(&"a".to_string());
    assert!(owned.contains("a")); // &str for a String key
    let mut same = BloomFilter::<str>::new(1_000, 0.01).unwrap();
    same.insert("a");
    // A String key and a str key hash alike: the two filters hold the same bits.
    assert_eq!(owned.to_bytes(), same.to_bytes());
    // Batches take keys or references to them.
    let mut f = BloomFilter::<u64>::new(1_000, 0.01).unwrap();
    assert_eq!(f.insert_batch(0..100u64), 100);
    let again = [1u64, 2];
    assert_eq!(f.insert_batch(again.iter()), 0); // references to keys
    f.extend(100..200u64);
    let mut found = Vec::new();
    f.contains_batch(vec![5u64, 150], &mut found);
    assert_eq!(found, [true, true]);
}
