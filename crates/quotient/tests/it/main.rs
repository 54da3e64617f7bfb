//! bloomkit-quotient's integration tests.

use std::collections::HashMap;

use bloomkit_core::{Error, LookupCore, Remove};
use bloomkit_quotient::QuotientFilter;
use bloomkit_testkit::{check_filter, ensure, forall, measure_fpr, member};

#[test]
fn conformance() {
    check_filter(|| QuotientFilter::<u64>::new(4_000, 0.01).unwrap());
    check_filter(|| QuotientFilter::<u64>::new(4_000, 0.001).unwrap());
}

/// Any sequence of inserts and removes of inserted keys: every key's count is at least the
/// model's (no false negative), and the length is the model's exactly.
#[test]
fn follows_a_counting_model() {
    forall(300, |ops: &Vec<(u8, u16)>| {
        let mut f = QuotientFilter::<u64>::new(2_000, 0.05).unwrap();
        let mut model: HashMap<u64, u64> = HashMap::new();
        for &(op, k) in ops {
            let key = u64::from(k % 512);
            if op % 3 == 0 {
                if let Some(c) = model.get_mut(&key) {
                    f.remove(&key)
                        .map_err(|e| format!("remove of an inserted key: {e}"))?;
                    *c -= 1;
                    if *c == 0 {
                        model.remove(&key);
                    }
                }
            } else {
                f.insert(&key).map_err(|e| format!("insert: {e}"))?;
                *model.entry(key).or_default() += 1;
            }
            for (&k, &c) in &model {
                ensure(f.count(&k) >= c, || {
                    format!("count of {k}: {} < {c}", f.count(&k))
                })?;
            }
            ensure(f.len() == model.values().sum::<u64>(), || "length".into())?;
        }
        Ok(())
    });
}

/// At 95% load the measured rate is at most the target, within a statistical tolerance;
/// after removing half the keys, the survivors' rate is as if the removed keys were never
/// inserted (and no survivor is lost).
#[test]
fn rate_at_full_load_and_after_removes() {
    for p in [0.01, 0.001] {
        let mut f = QuotientFilter::<u64>::new(200_000, p).unwrap();
        let n = f.max_items();
        for i in 0..n {
            f.insert(&member(i)).unwrap();
        }
        let full = measure_fpr(&f, 1_000_000);
        println!(
            "p = {p}: {n} keys, load {:.3}, rate {}",
            f.load_factor(),
            full.rate()
        );
        assert!(full.rate() <= full.upper(4.0).max(p) && full.within(f.estimated_fpr(), 4.5));
        assert!(full.false_positives as f64 <= p * 1.05 * 1e6 + 4.0 * (p * 1e6).sqrt());
        for i in (0..n).step_by(2) {
            f.remove(&member(i)).unwrap();
        }
        assert!((1..n).step_by(2).all(|i| f.contains(&member(i))));
        let half = measure_fpr(&f, 1_000_000);
        assert!(
            half.within(f.estimated_fpr(), 4.5),
            "{} vs {}",
            half.rate(),
            f.estimated_fpr()
        );
    }
}

#[test]
fn a_full_filter_refuses_and_changes_nothing() {
    let mut f = QuotientFilter::<u64>::new(100, 0.01).unwrap();
    let n = f.max_items();
    for i in 0..n {
        f.insert(&i).unwrap();
    }
    let before = f.clone();
    match f.insert(&u64::MAX) {
        Err(Error::Full { items, slots }) => assert_eq!((items, slots), (n, f.capacity())),
        other => panic!("{other:?}"),
    }
    assert!(f == before);
    let message = Error::Full {
        items: 95,
        slots: 100,
    }
    .to_string();
    assert!(message.contains("95.0%"), "{message}");
}

#[test]
fn removing_a_key_never_inserted_is_a_typed_error() {
    let mut f = QuotientFilter::<u64>::new(1_000, 0.0001).unwrap();
    for i in 0..500u64 {
        f.insert(&i).unwrap();
    }
    let before = f.clone();
    // Keys never inserted: almost all certainly absent (an error, nothing changes).
    let refused = (10_000..11_000u64)
        .filter(|k| Remove::remove(&mut f, k) == Err(Error::NotPresent))
        .count();
    assert!(refused >= 990, "{refused}");
    if refused == 1_000 {
        assert!(f == before);
    }
    assert!((0..500u64).all(|k| f.contains(&k)) || refused < 1_000);
}

#[test]
fn bad_parameters_are_typed_errors() {
    assert_eq!(
        QuotientFilter::<u64>::new(0, 0.01).unwrap_err(),
        Error::ZeroItems
    );
    assert!(matches!(
        QuotientFilter::<u64>::new(10, 1.5),
        Err(Error::InvalidFpr(_))
    ));
    assert!(matches!(
        QuotientFilter::<u64>::new(u64::MAX, 0.01),
        Err(Error::TooLarge { .. })
    ));
    let f = QuotientFilter::<u64>::new(1_000_000, 0.01).unwrap();
    assert_eq!(f.remainder_bits(), 7);
    assert!(f.heap_bytes() as f64 * 8.0 / f.max_items() as f64 <= 11.0);
    assert!(f.is_empty() && LookupCore::is_empty(&f));
}
