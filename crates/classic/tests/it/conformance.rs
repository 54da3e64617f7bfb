//! The shared conformance suite, run on the classic filter.

use bloomkit_classic::BloomFilter;
use bloomkit_core::format::Writer;
use bloomkit_core::{Codec, Intersection, LookupCore, PortableHasher, Union, Variant, Xxh3Builder};
use bloomkit_testkit as kit;

fn make() -> BloomFilter<u64> {
    BloomFilter::new(1_000, 0.01).unwrap()
}

#[test]
fn filter_promises() {
    kit::check_filter(make);
    kit::check_filter(|| {
        BloomFilter::<u64>::builder(5_000, 0.001)
            .seed(99)
            .build()
            .unwrap()
    });
    kit::check_filter(|| BloomFilter::<u64>::with_bits(20_000, 5).unwrap());
    // One probe per key: the case blocked lookups once got wrong.
    kit::check_filter(|| BloomFilter::<u64>::with_bits(20_000, 1).unwrap());
}

#[test]
fn union_and_intersection_keep_their_keys() {
    kit::check_union(make);
    kit::check_intersection(make);
}

#[test]
fn codec_round_trips_and_rejects_damage() {
    let foreign = {
        Writer::new(Variant::Counting, Xxh3Builder::default().spec())
            .params(&(1u64, 2u32))
            .words(&[0])
            .to_vec()
    };
    kit::check_codec(make, &foreign);
    kit::check_codec(|| BloomFilter::<u64>::with_bits(1, 1).unwrap(), &foreign);
}

#[test]
fn incompatible_filters_are_refused_and_left_unchanged() {
    let mut a = make();
    a.insert(&1u64);
    let others = [
        BloomFilter::new(2_000, 0.01).unwrap(),
        BloomFilter::builder(1_000, 0.01).seed(1).build().unwrap(),
        BloomFilter::with_bits(a.num_bits(), a.num_hashes() + 1).unwrap(),
    ];
    for b in &others {
        kit::check_incompatible(&a, b, Union::union_with);
        kit::check_incompatible(&a, b, Intersection::intersect_with);
        assert!(a.union(b).is_err() && a.intersection(b).is_err());
        assert!(a.estimated_union_len(b).is_err());
    }
    let err = a.union_with(&others[1]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot combine filters: seeds differ (0 vs 1)"
    );
}

#[test]
fn union_and_intersection_cardinality_estimates() {
    let (mut a, mut b) = (
        BloomFilter::new(20_000, 0.01).unwrap(),
        BloomFilter::new(20_000, 0.01).unwrap(),
    );
    for i in 0..10_000u64 {
        a.insert(&i);
        b.insert(&(i + 6_000)); // 4,000 in common, 16,000 in the union
    }
    let union = a.estimated_union_len(&b).unwrap();
    let common = a.estimated_intersection_len(&b).unwrap();
    assert!((union - 16_000.0).abs() < 320.0, "union {union}");
    assert!((common - 4_000.0).abs() < 320.0, "intersection {common}");
    // The union filter estimates the union's size too.
    let u = a.union(&b).unwrap();
    assert!((u.estimated_len() - union).abs() < 1e-6);
}

#[test]
fn serde_with_bincode_round_trips_and_validates() {
    let config = bincode::config::standard();
    let mut f = make();
    f.extend(0..500u64);
    let bytes = bincode::serde::encode_to_vec(&f, config).unwrap();
    let (g, _): (BloomFilter<u64>, usize) =
        bincode::serde::decode_from_slice(&bytes, config).unwrap();
    assert_eq!(f, g);
    // Damage that bincode cannot see is caught by the filter's own validation.
    let mut hostile = f.clone().to_bytes();
    hostile.truncate(0);
    assert!(BloomFilter::<u64>::from_bytes(&hostile).is_err());
    for cut in 0..bytes.len() {
        let r: Result<(BloomFilter<u64>, usize), _> =
            bincode::serde::decode_from_slice(&bytes[..cut], config);
        assert!(r.is_err(), "prefix {cut}");
    }
}

#[test]
fn the_trait_and_the_inherent_api_agree() {
    use bloomkit_core::{unified, Error, Filter};
    fn via_trait<F: Filter<Key = str, InsertError = std::convert::Infallible>>(f: &mut F) -> bool {
        f.insert("x")
    }
    let mut words = BloomFilter::<str>::new(1_000, 0.01).unwrap();
    assert!(via_trait(&mut words));
    assert!(words.contains("x"));
    assert!(!via_trait(&mut words));
    // `&mut F` is a filter too: generic code can take a filter by reference.
    assert!(!via_trait(&mut &mut words));
    // What does not depend on the key needs no annotation (it once failed with E0283).
    let f = {
        let mut f = make();
        f.extend(0..100u64);
        f
    };
    assert!(LookupCore::estimated_len(&f) > 90.0 && LookupCore::heap_bytes(&f) > 0);
    assert_eq!(LookupCore::target_fpr(&f), Some(0.01));
    assert_eq!(
        LookupCore::target_fpr(&BloomFilter::<u64>::with_bits(64, 2).unwrap()),
        None
    );
    // A boxed trait object is a filter.
    let mut boxed: Box<dyn Filter<Key = u64, InsertError = std::convert::Infallible>> =
        Box::new(make());
    assert!(boxed.try_insert(&3).unwrap());
    assert!(boxed.contains(&3));
    fn count_present<F: Filter<Key = u64>>(f: &F, keys: &[u64]) -> usize {
        keys.iter().filter(|k| f.contains(k)).count()
    }
    assert_eq!(count_present(&boxed, &[3]), 1);
    // Variants with different insert errors in one collection, through `unified`.
    let mut mixed: Vec<Box<dyn Filter<Key = u64, InsertError = Error>>> = vec![
        unified(make()),
        unified(bloomkit_classic::BlockedBloomFilter::<u64>::new(1_000, 0.01).unwrap()),
    ];
    for f in &mut mixed {
        assert!(f.try_insert(&42).unwrap());
    }
    assert!(mixed.iter().all(|f| f.contains(&42)));
    let _ = <BloomFilter<u64> as Codec>::from_bytes(&f.to_bytes()).unwrap();
}
