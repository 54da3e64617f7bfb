//! The zero-copy view, `MultiFilterRef`: it answers every query as the owned filter whose
//! bytes it reads (records, each attribute, every subset, the rates), and refuses what the
//! owned decoder refuses, plus bytes it cannot use in place.

use std::collections::HashSet;

use bloomkit_classic::BloomFilter;
use bloomkit_core::format::AlignedBytes;
use bloomkit_core::{DecodeError, Error, Lookup, LookupCore};
use bloomkit_multi::{MultiFilter, MultiFilterRef};
use bloomkit_testkit::{ensure, forall};

use crate::model::configurations;

type Rec = crate::model::Rec;

/// Every kind of answer a filter (owned or view) gives about record `r`: whole, each
/// attribute, each pair, all three by query, no value, and `contains_attr`.
macro_rules! answers {
    ($f:expr, $r:expr) => {{
        let f = &$f;
        let (a, b, c) = $r;
        [
            f.contains(&$r),
            f.query().attr::<0>(&a).contains(),
            f.query().attr::<1>(&b).contains(),
            f.query().attr::<2>(&c).contains(),
            f.query().attr::<0>(&a).attr::<1>(&b).contains(),
            f.query().attr::<0>(&a).attr::<2>(&c).contains(),
            f.query().attr::<1>(&b).attr::<2>(&c).contains(),
            f.query()
                .attr::<0>(&a)
                .attr::<1>(&b)
                .attr::<2>(&c)
                .contains(),
            f.query()
                .attr::<0>(&a)
                .attr::<0>(&a.wrapping_add(1))
                .contains(),
            f.query().contains(),
            f.contains_attr::<1>(&b),
        ]
    }};
}

/// The attribute lists whose rates are compared.
const SUBSETS: [&[usize]; 7] = [&[0], &[1], &[2], &[0, 1], &[0, 2], &[1, 2], &[0, 1, 2]];

#[test]
fn a_view_answers_every_query_as_the_filter_does() {
    forall(120, |records: &Vec<(u8, u8, u16)>| {
        for (name, empty) in configurations() {
            let mut f = empty.clone();
            let model: HashSet<Rec> = records.iter().map(|&(a, b, c)| (a % 6, b % 5, c)).collect();
            for r in &model {
                f.try_insert(r).map_err(|e| e.to_string())?;
            }
            let bytes = AlignedBytes::copy_from(&f.to_bytes());
            let view = MultiFilterRef::<Rec>::from_bytes(&bytes).map_err(|e| e.to_string())?;
            // Members (which must all pass) and records of other values and recombinations.
            let others = (0..200u16).map(|i| ((i % 7) as u8, (i % 6) as u8, i.wrapping_mul(31)));
            for r in model.iter().copied().chain(others) {
                let (v, o) = (answers!(view, r), answers!(f, r));
                ensure(v == o, || {
                    format!("{name}: {r:?}: view {v:?}, filter {o:?}")
                })?;
                if model.contains(&r) {
                    // Every answer but the contradiction's (index 8) must be yes.
                    let lost = v.iter().enumerate().any(|(i, &x)| i != 8 && !x);
                    ensure(!lost && !v[8], || {
                        format!("{name}: the view lost {r:?}: {v:?}")
                    })?;
                }
                ensure(view.hash_key(&r) == f.hash_key(&r), || {
                    format!("{name}: hash_key")
                })?;
            }
            for s in SUBSETS {
                ensure(view.predicted_fpr(s) == f.predicted_fpr(s), || {
                    format!("{name}: predicted rate of {s:?}")
                })?;
                ensure(view.estimated_fpr_of(s) == f.estimated_fpr_of(s), || {
                    format!("{name}: estimated rate of {s:?}")
                })?;
            }
            let same = view.parts() == f.parts()
                && view.subsets() == f.subsets()
                && view.has_record_filter() == f.has_record_filter()
                && view.arity() == f.arity()
                && view.is_empty() == f.is_empty()
                && view.probe_scheme() == f.probe_scheme()
                && LookupCore::target_fpr(&view) == LookupCore::target_fpr(&f)
                && LookupCore::estimated_len(&view).to_bits()
                    == LookupCore::estimated_len(&f).to_bits()
                && LookupCore::estimated_fpr(&view) == LookupCore::estimated_fpr(&f);
            ensure(same, || {
                format!("{name}: the view describes itself otherwise")
            })?;
            ensure(view.to_filter() == f, || format!("{name}: to_filter"))?;
        }
        Ok(())
    });
}

#[test]
fn a_view_holds_no_copy_of_the_bits() {
    let mut f = MultiFilter::<Rec>::new(100_000, 0.01).unwrap();
    f.try_insert(&(1, 2, 3)).unwrap();
    let bytes = AlignedBytes::copy_from(&f.to_bytes());
    let view = MultiFilterRef::<Rec>::from_bytes_unverified_payload(&bytes).unwrap();
    // Four parts of about 120 KB each in the filter; the view holds their descriptions.
    assert!(f.heap_bytes() > 400_000, "{}", f.heap_bytes());
    assert!(view.heap_bytes() < 1_000, "{}", view.heap_bytes());
    assert!(view.contains(&(1, 2, 3)));
    let shown = format!("{view:?}");
    assert!(
        shown.starts_with("MultiFilterRef") && shown.contains("arity: 3"),
        "{shown}"
    );
}

#[test]
fn a_view_refuses_what_the_decoder_refuses_and_bytes_out_of_place() {
    let mut f = MultiFilter::<Rec>::builder(500, 0.01)
        .subset(&[0, 2])
        .unwrap()
        .build()
        .unwrap();
    for i in 0..100u16 {
        f.try_insert(&((i % 6) as u8, (i % 5) as u8, i)).unwrap();
    }
    let raw = f.to_bytes();
    let bytes = AlignedBytes::copy_from(&raw);
    MultiFilterRef::<Rec>::from_bytes(&bytes).unwrap();

    // Out of place: one byte past an aligned start.
    let mut shifted = vec![0u8];
    shifted.extend_from_slice(&raw);
    let shifted = AlignedBytes::copy_from(&shifted);
    assert!(matches!(
        MultiFilterRef::<Rec>::from_bytes(&shifted[1..]),
        Err(Error::Decode(DecodeError::NotViewable(_)))
    ));
    assert_eq!(MultiFilter::<Rec>::from_bytes(&shifted[1..]).unwrap(), f);

    // Records of another arity, and another variant's bytes.
    assert!(MultiFilterRef::<(u8, u8)>::from_bytes(&bytes).is_err());
    let other = AlignedBytes::copy_from(&BloomFilter::<u64>::new(100, 0.01).unwrap().to_bytes());
    assert!(MultiFilterRef::<Rec>::from_bytes(&other).is_err());

    // Every truncation, refused by both; every byte flipped, refused by both when checked,
    // and never a panic when the payload is not (the answers may then be anything).
    for len in 0..raw.len() {
        let cut = AlignedBytes::copy_from(&raw[..len]);
        assert!(
            MultiFilterRef::<Rec>::from_bytes(&cut).is_err(),
            "length {len}"
        );
        assert!(
            MultiFilter::<Rec>::from_bytes(&raw[..len]).is_err(),
            "length {len}"
        );
    }
    for at in (0..raw.len()).step_by(7) {
        let mut bad = raw.clone();
        bad[at] ^= 0x5a;
        let bad = AlignedBytes::copy_from(&bad);
        assert!(
            MultiFilterRef::<Rec>::from_bytes(&bad).is_err(),
            "byte {at}"
        );
        assert!(MultiFilter::<Rec>::from_bytes(&bad).is_err(), "byte {at}");
        if let Ok(view) = MultiFilterRef::<Rec>::from_bytes_unverified_payload(&bad) {
            let _ = answers!(view, (1u8, 2u8, 3u16));
            let _ = (view.parts(), view.predicted_fpr(&[0, 2]), view.to_filter());
        }
    }
}
