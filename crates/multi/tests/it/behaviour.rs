//! Errors, refusals and the promises that are not about random sequences: typed errors for
//! bad parameters and records, the hash entry points, contradictory queries, predicted rates,
//! and hostile bytes.

use bloomkit_core::{DecodeError, Error, Filter, FilterCore, Lookup, LookupCore, Parameter, Union};
use bloomkit_multi::{MultiFilter, QueryFpr, MAX_ATTRIBUTES};

type Rec = (u32, String, u16);

fn rec(a: u32, b: &str, c: u16) -> Rec {
    (a, b.to_string(), c)
}

#[test]
fn bad_parameters_are_typed_errors() {
    let b = || MultiFilter::<Rec>::builder(1_000, 0.01);
    assert_eq!(
        b().attribute(3, 10, 0.01).unwrap_err(),
        Error::NoSuchAttribute { index: 3, arity: 3 }
    );
    assert_eq!(
        MultiFilter::<Rec>::new(0, 0.01).unwrap_err(),
        Error::ZeroItems
    );
    assert!(matches!(
        MultiFilter::<Rec>::new(10, f64::NAN),
        Err(Error::InvalidFpr(_))
    ));
    assert!(matches!(
        b().attribute(1, 10, 1.5).unwrap().build(),
        Err(Error::InvalidFpr(_))
    ));
    assert!(matches!(
        b().subset(&[1]),
        Err(Error::InvalidSubset { ref subset, .. }) if subset == &[1]
    ));
    assert!(matches!(b().subset(&[]), Err(Error::InvalidSubset { .. })));
    assert!(matches!(
        b().subset(&[0, 0]),
        Err(Error::InvalidSubset { .. })
    ));
    assert_eq!(
        b().subset(&[0, 5]).unwrap_err(),
        Error::NoSuchAttribute { index: 5, arity: 3 }
    );
    let twice = b().subset(&[0, 2]).unwrap().subset(&[2, 0]);
    assert!(matches!(twice, Err(Error::InvalidSubset { reason, .. }) if reason.contains("twice")));
    assert_eq!(
        b().arity(2).unwrap_err(),
        Error::WrongArity {
            expected: 3,
            found: 2
        }
    );
    // Dynamic records: the arity comes from the builder, within bounds.
    assert_eq!(
        MultiFilter::<Vec<u8>>::new(10, 0.01).unwrap_err(),
        Error::InvalidArity {
            arity: 0,
            max: MAX_ATTRIBUTES
        }
    );
    assert_eq!(
        MultiFilter::<Vec<u8>>::builder(10, 0.01)
            .arity(17)
            .unwrap_err(),
        Error::InvalidArity {
            arity: 17,
            max: MAX_ATTRIBUTES
        }
    );
    let msg = Error::NoSuchAttribute { index: 3, arity: 3 }.to_string();
    assert_eq!(msg, "there is no attribute 3: records have 3 (0..3)");
}

/// Sizing the record-level filter (a subset over every attribute) sizes it alone: the
/// attributes and other subsets keep the filter's records and rate.
#[test]
fn sizing_the_record_filter_leaves_the_rest() {
    let f = MultiFilter::<Rec>::builder(1_000, 0.01)
        .subset_sized(&[0, 1, 2], 50_000, 0.001)
        .unwrap()
        .subset(&[0, 1])
        .unwrap()
        .build()
        .unwrap();
    let parts = f.parts();
    let sized: Vec<(u64, f64)> = parts.iter().map(|p| (p.capacity, p.fpr)).collect();
    assert_eq!(
        sized,
        [
            (1_000, 0.01),
            (1_000, 0.01),
            (1_000, 0.01),
            (1_000, 0.01),
            (50_000, 0.001)
        ]
    );
    assert_eq!(f.target_fpr(), Some(0.001));
}

#[test]
fn wrong_arity_records_are_refused_and_change_nothing() {
    let mut f = MultiFilter::<[u64]>::builder(100, 0.01)
        .arity(3)
        .unwrap()
        .build()
        .unwrap();
    f.try_insert(&[1, 2, 3][..]).unwrap();
    let before = f.clone();
    assert_eq!(
        f.try_insert(&[1, 2][..]),
        Err(Error::WrongArity {
            expected: 3,
            found: 2
        })
    );
    assert_eq!(
        Filter::try_insert(&mut f, &[1, 2, 3, 4][..]),
        Err(Error::WrongArity {
            expected: 3,
            found: 4
        })
    );
    assert!(f == before);
    assert!(f.contains(&[1, 2, 3][..]));
    assert!(
        !f.contains(&[1, 2][..]),
        "a record of another arity was never inserted"
    );
    assert_eq!(
        f.query().try_attr(3, &1u64).unwrap_err(),
        Error::NoSuchAttribute { index: 3, arity: 3 }
    );
}

#[test]
fn queries_by_attribute_subset_and_record() {
    let mut f = MultiFilter::<Rec>::builder(1_000, 0.001)
        .subset(&[0, 2])
        .unwrap()
        .build()
        .unwrap();
    assert!(f.is_empty() && !f.query().contains());
    assert!(f.try_insert(&rec(1, "a", 10)).unwrap());
    assert!(
        !f.try_insert(&rec(1, "a", 10)).unwrap(),
        "a repeat is not new"
    );
    assert!(f.try_insert(&rec(2, "b", 20)).unwrap());
    assert!(f.query().contains(), "no value given: any record?");
    assert!(f.query().attr::<1>("a").contains());
    assert!(f.contains_attr::<2>(&20));
    // One attribute given two values: no record has both.
    assert!(!f.query().attr::<0>(&1).attr::<0>(&2).contains());
    assert!(f.query().attr::<0>(&1).attr::<0>(&1).contains());
    // Recombinations: (1, _, 20) and (1, "b", 10) are made of stored values. The declared
    // pair and the record-level filter refuse them (at 0.1%, fixed seed: no false
    // positive here); the undeclared pair (0, 1) cannot tell.
    assert!(!f.query().attr::<0>(&1).attr::<2>(&20).contains());
    assert!(!f.contains(&rec(1, "b", 10)));
    assert!(f.query().attr::<0>(&1).attr::<1>("b").contains());
}

#[test]
fn predicted_rates_name_each_query_kind() {
    let f = MultiFilter::<Rec>::builder(1_000, 0.01)
        .attribute(1, 50, 0.05)
        .unwrap()
        .subset_sized(&[0, 2], 800, 0.02)
        .unwrap()
        .build()
        .unwrap();
    let near = |x: f64, y: f64| (x - y).abs() <= 0.1 * y;
    let one = f.predicted_fpr(&[1]).unwrap();
    assert!(
        one.recombined.is_none() && near(one.new_values, 0.05),
        "{one:?}"
    );
    let alone = |i: usize| f.predicted_fpr(&[i]).unwrap().new_values;
    // New values must pass every part a query consults: the rates multiply.
    let pair = f.predicted_fpr(&[0, 2]).unwrap();
    assert!(
        near(pair.new_values, 0.02 * alone(0) * alone(2)) && near(pair.recombined.unwrap(), 0.02),
        "{pair:?}"
    );
    let open = f.predicted_fpr(&[0, 1]).unwrap();
    assert_eq!(
        open.recombined,
        Some(1.0),
        "no filter over (0, 1): recombinations pass"
    );
    assert!(near(open.new_values, 0.01 * 0.05), "{open:?}");
    let whole = f.predicted_fpr(&[0, 1, 2]).unwrap();
    let product = 0.01 * alone(0) * alone(1) * alone(2) * 0.02;
    assert!(near(whole.new_values, product), "{whole:?} vs {product}");
    assert!(near(whole.recombined.unwrap(), 0.01), "{whole:?}");
    assert_eq!(f.target_fpr(), Some(0.01));
    assert_eq!(
        f.estimated_fpr_of(&[2]).unwrap(),
        QueryFpr {
            new_values: 0.0,
            recombined: None
        }
    );
    assert!(matches!(
        f.predicted_fpr(&[]),
        Err(Error::InvalidSubset { .. })
    ));
    assert_eq!(
        f.predicted_fpr(&[4]).unwrap_err(),
        Error::NoSuchAttribute { index: 4, arity: 3 }
    );
    let parts = f.parts();
    assert_eq!(parts.len(), 5);
    assert_eq!(parts[4].attributes, [0, 1, 2]);
    assert_eq!(f.subsets(), [vec![0, 2]]);
}

#[test]
fn hash_entry_points_address_the_record_level_filter() {
    // A record must reach every part a whole-record query consults; one hash reaches only
    // the record-level filter, so an insert by hash is refused and changes nothing.
    let mut f = MultiFilter::<Rec>::new(1_000, 0.01).unwrap();
    let r = rec(1, "a", 2);
    let h = f.hash_key(&r);
    let before = f.clone();
    assert!(matches!(f.try_insert_hash(h), Err(Error::Unsupported(_))));
    assert!(f == before);
    assert!(f.try_insert(&r).unwrap());
    assert!(
        f.contains_hash(h),
        "the record-level filter answers the hash"
    );
    assert!(f.contains(&r));
    let mut off = MultiFilter::<Rec>::builder(1_000, 0.01)
        .record_filter(false)
        .build()
        .unwrap();
    let before = off.clone();
    assert!(matches!(off.try_insert_hash(h), Err(Error::Unsupported(_))));
    assert!(off == before);
    assert!(
        off.contains_hash(h),
        "without the record-level filter it cannot tell: maybe"
    );
    assert_eq!(off.target_fpr(), None);
    // A record of one attribute has one part: its hash reaches all of it.
    let mut single = MultiFilter::<(u64,)>::new(1_000, 0.01).unwrap();
    let h = single.hash_key(&(7,));
    assert_eq!(single.try_insert_hash(h), Ok(true));
    assert!(single.contains(&(7,)) && single.contains_attr::<0>(&7));
}

#[test]
fn incompatible_filters_name_what_differs() {
    let a = MultiFilter::<Rec>::new(100, 0.01).unwrap();
    let mut b = a.clone();
    let c = MultiFilter::<Rec>::builder(100, 0.01)
        .subset(&[0, 1])
        .unwrap()
        .build()
        .unwrap();
    assert!(matches!(
        b.union_with(&c),
        Err(Error::Incompatible {
            what: Parameter::Subsets,
            ..
        })
    ));
    let d = MultiFilter::<Rec>::builder(100, 0.01)
        .attribute(0, 5, 0.01)
        .unwrap()
        .build()
        .unwrap();
    assert!(matches!(
        b.union_with(&d),
        Err(Error::Incompatible {
            what: Parameter::Bits,
            ..
        })
    ));
    assert!(b == a);
}

#[test]
fn bytes_of_another_arity_or_shape_are_refused() {
    let mut f = MultiFilter::<Rec>::new(100, 0.01).unwrap();
    f.try_insert(&rec(1, "a", 2)).unwrap();
    let bytes = f.to_bytes();
    let err = MultiFilter::<(u32, String)>::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(err, Error::Decode(DecodeError::Invalid(ref m)) if m.contains("3 attributes")),
        "{err}"
    );
    // Dynamic records take any arity from the bytes.
    assert_eq!(
        MultiFilter::<Vec<u64>>::from_bytes(&bytes).unwrap().arity(),
        3
    );
    // Serde carries the same checks.
    let config = bincode::config::standard();
    let enc = bincode::serde::encode_to_vec(&f, config).unwrap();
    let (g, _): (MultiFilter<Rec>, _) = bincode::serde::decode_from_slice(&enc, config).unwrap();
    assert!(g == f && g.contains(&rec(1, "a", 2)));
    assert!(
        bincode::serde::decode_from_slice::<MultiFilter<(u32, String)>, _>(&enc, config).is_err()
    );
}

/// Every part hashes under a key derived from the filter's secret key; the bytes need the
/// key to be read, and answer as before with it.
#[test]
fn a_keyed_multi_filter_reads_back_only_with_its_key() {
    use bloomkit_core::hash::{HashKey, KeyedHasher};
    use bloomkit_core::{Codec, DecodeError};
    let key = HashKey::random();
    let mut f = MultiFilter::<Rec>::builder(1_000, 0.01)
        .hasher(KeyedHasher::new(key))
        .build()
        .unwrap();
    for i in 0..200u32 {
        f.try_insert(&rec(i, "x", (i % 7) as u16)).unwrap();
    }
    let bytes = f.to_bytes();
    let g = MultiFilter::<Rec, KeyedHasher>::from_bytes_with_key(&bytes, &key).unwrap();
    assert!(g == f);
    assert!((0..200u32).all(|i| g.contains(&rec(i, "x", (i % 7) as u16))));
    assert!(g.query().attr::<0>(&5).contains());
    assert_eq!(
        MultiFilter::<Rec, KeyedHasher>::from_bytes(&bytes).unwrap_err(),
        Error::Decode(DecodeError::KeyRequired)
    );
}

/// The builder's memory limit covers every part together and is exact: a limit of the
/// filter's heap builds it, one byte less is refused before anything is allocated.
#[test]
fn a_byte_limit_covers_every_part_exactly() {
    let make = || {
        MultiFilter::<Rec>::builder(5_000, 0.01)
            .attribute(1, 40, 0.02)
            .unwrap()
            .subset(&[0, 2])
            .unwrap()
    };
    let free = make().build().unwrap();
    let heap = free.heap_bytes() as u64;
    let at = make().max_bytes(heap).build().unwrap();
    assert_eq!(at.heap_bytes() as u64, heap);
    assert!(at == free);
    assert_eq!(
        make().max_bytes(heap - 1).build().unwrap_err(),
        Error::OverLimit {
            what: bloomkit_core::Limit::Bytes,
            needed: heap,
            limit: heap - 1
        }
    );
    // Bad parameters are still named as such under a limit.
    assert!(matches!(
        MultiFilter::<Rec>::builder(0, 0.01).max_bytes(1).build(),
        Err(Error::ZeroItems)
    ));
}

/// `extend` inserts every record of a tuple type (owned or borrowed) into every part, as
/// `try_insert` does one by one: the same filter, every record and attribute found.
#[test]
fn extend_inserts_every_record_as_try_insert_does() {
    let records: Vec<Rec> = (0..2_000u32)
        .map(|i| rec(i, &format!("host-{}", i % 97), (i % 7) as u16))
        .collect();
    let mut by_extend = MultiFilter::<Rec>::new(2_000, 0.01).unwrap();
    by_extend.extend(&records[..1_000]);
    by_extend.extend(records[1_000..].iter().cloned());
    let mut one_by_one = MultiFilter::<Rec>::new(2_000, 0.01).unwrap();
    for r in &records {
        one_by_one.try_insert(r).unwrap();
    }
    assert_eq!(by_extend, one_by_one);
    for r in &records {
        assert!(by_extend.contains(r));
        assert!(by_extend
            .query()
            .attr::<1>(r.1.as_str())
            .attr::<2>(&r.2)
            .contains());
    }
}
