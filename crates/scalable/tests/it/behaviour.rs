//! Growth, limits, union and bad parameters.

use bloomkit_core::hash::BlockProbe;
use bloomkit_core::{Error, Limit, Union};
use bloomkit_scalable::ScalableBloomFilter;
use bloomkit_testkit::{ensure, forall, member, non_member, Outcome};

#[test]
fn no_false_negatives_across_growth() {
    forall(300, |keys: &Vec<u64>| -> Outcome {
        let mut f = ScalableBloomFilter::builder(2, 0.01)
            .growth(2)
            .build()
            .unwrap();
        for k in keys {
            f.try_insert(k).map_err(|e| e.to_string())?;
        }
        let lost: Vec<_> = keys.iter().filter(|k| !f.contains(*k)).collect();
        ensure(lost.is_empty(), || {
            format!("lost {lost:?} across {} slices", f.num_slices())
        })?;
        ensure(f.fpr_bound() <= 0.01, || format!("bound {}", f.fpr_bound()))
    });
}

#[test]
fn repeats_use_no_capacity_and_slices_grow_geometrically() {
    let mut f = ScalableBloomFilter::new(100, 0.01).unwrap();
    for _ in 0..10 {
        for i in 0..100 {
            f.try_insert(&member(i)).unwrap();
        }
    }
    assert_eq!(
        (f.len(), f.num_slices()),
        (100, 1),
        "repeats filled a slice"
    );
    for i in 100..1_500 {
        f.try_insert(&member(i)).unwrap();
    }
    // 100 + 200 + 400 + 800 = 1,500, less the few keys suppressed as false positives.
    assert_eq!(f.num_slices(), 4);
    assert_eq!(f.capacity(), 1_500);
    let caps: Vec<u64> = f.slices().map(|s| s.design().unwrap().capacity).collect();
    assert_eq!(caps, [100, 200, 400, 800]);
    let rates: Vec<f64> = f.slices().map(|s| s.design().unwrap().fpr).collect();
    assert!(
        (rates[0] - 0.01 * 0.15).abs() < 1e-12,
        "p0 must be p * (1 - r)"
    );
    assert!((rates[3] - 0.0015 * 0.85f64.powi(3)).abs() < 1e-12);
}

#[test]
fn item_limit_refuses_and_changes_nothing() {
    let mut f = ScalableBloomFilter::builder(10, 0.01)
        .max_items(25)
        .build()
        .unwrap();
    let mut accepted = 0;
    for i in 0..25 {
        if f.try_insert(&member(i)).unwrap() {
            accepted += 1; // not `u64::from(flag)`: rust-lang/rust#158206
        }
    }
    while f.len() < 25 {
        // A key suppressed as a false positive does not count; top up.
        if f.try_insert(&non_member(accepted)).unwrap() {
            accepted += 1;
        }
    }
    let before = f.to_bytes();
    let err = f.try_insert(&non_member(999_999)).unwrap_err();
    assert_eq!(
        err,
        Error::LimitReached {
            what: Limit::Items,
            limit: 25
        }
    );
    assert_eq!(
        err.to_string(),
        "the filter is at its limit of 25 items; nothing was inserted"
    );
    assert_eq!(f.to_bytes(), before);
    // A key already present is not an error at the limit: nothing needs adding.
    assert_eq!(f.try_insert(&member(3)), Ok(false));
}

#[test]
fn byte_limit_refuses_the_slice_that_would_cross_it() {
    let mut f = ScalableBloomFilter::builder(1_000, 0.01)
        .max_bytes(8_000)
        .build()
        .unwrap();
    let first = f.heap_bytes();
    let mut i = 0;
    let err = loop {
        match f.try_insert(&member(i)) {
            Ok(_) => i += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(
        err,
        Error::LimitReached {
            what: Limit::Bytes,
            limit: 8_000
        }
    );
    assert!(f.heap_bytes() <= 8_000 && f.heap_bytes() > first);
    let before = f.to_bytes();
    assert!(f.try_insert(&member(i)).is_err());
    assert_eq!(f.to_bytes(), before);
    // A limit the first slice already exceeds is refused at build time, saying so.
    assert!(matches!(
        ScalableBloomFilter::<u64>::builder(1_000_000, 0.01)
            .max_bytes(1_000)
            .build(),
        Err(Error::OverLimit {
            what: Limit::Bytes,
            limit: 1_000,
            ..
        })
    ));
}

#[test]
fn bad_parameters_are_typed_errors() {
    assert_eq!(
        ScalableBloomFilter::<u64>::new(0, 0.01).unwrap_err(),
        Error::ZeroItems
    );
    for p in [0.0, 1.0, f64::NAN, -0.5] {
        assert!(
            matches!(
                ScalableBloomFilter::<u64>::new(10, p),
                Err(Error::InvalidFpr(_))
            ),
            "{p}"
        );
    }
    // Regression: growth up to u32::MAX was accepted, and `builder(1, 0.01).growth(u32::MAX)`
    // asked for 8 GB on its second insert.
    for g in [0, 1, 17, 1 << 31, u32::MAX] {
        let err = ScalableBloomFilter::<u64>::builder(10, 0.01)
            .growth(g)
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("growth must be in 2..=16, got {g}")
        );
    }
    for r in [0.0, 0.1, 0.49, 0.96, 1.0, 1.5, -0.1, f64::NAN] {
        let err = ScalableBloomFilter::<u64>::builder(10, 0.01)
            .tightening(r)
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("tightening ratio must be in [0.5, 0.95], got {r}")
        );
    }
    for (g, r) in [(2, 0.5), (16, 0.95), (4, 0.9)] {
        let mut f = ScalableBloomFilter::builder(10, 0.01)
            .growth(g)
            .tightening(r)
            .build()
            .unwrap();
        for i in 0..1_000 {
            f.try_insert(&member(i)).unwrap();
        }
        assert!((0..1_000).all(|i| f.contains(&member(i))));
    }
}

/// A filter that cannot add a slice says which slice and why, in its own terms, and the
/// filter is unchanged. Regression: growth stopped with "false-positive rate
/// 0.0000000000000009000000000000014 is unreachable", a rate the user never set.
#[test]
fn growth_that_cannot_continue_names_the_slice() {
    // Slice i holds 16^i items at 1e-12 * 0.5 * 0.5^i: slice 5, 2^20 items at 1.6e-14, is
    // below what a 64-bit hash can tell apart (2^20 / 2^64 = 5.7e-14).
    let mut f = ScalableBloomFilter::builder(1, 1e-12)
        .growth(16)
        .tightening(0.5)
        .build()
        .unwrap();
    let mut i = 0;
    let err = loop {
        let before = (f.len(), f.num_slices());
        match f.try_insert(&member(i)) {
            Ok(_) => i += 1,
            Err(e) => {
                assert_eq!((f.len(), f.num_slices()), before);
                assert!(!f.contains(&member(i)), "a refused key was added");
                break e;
            }
        }
        assert!(i < 200_000, "never stopped");
    };
    assert_eq!(f.len(), 1 + 16 + 256 + 4_096 + 65_536);
    let Error::GrowthStopped {
        slice,
        capacity,
        fpr,
        ref source,
    } = err
    else {
        panic!("{err:?}");
    };
    assert_eq!((slice, capacity), (5, 1 << 20));
    assert!((fpr - 1e-12 * 0.5f64.powi(6)).abs() < 1e-24, "{fpr}");
    assert!(matches!(**source, Error::UnreachableFpr { .. }));
    assert_eq!(
        err.to_string(),
        "the scalable filter cannot grow: its slice 5 would hold 1048576 items at a \
         false-positive rate of 1.5625e-14; false-positive rate 1.5625e-14 is unreachable \
         for 1048576 items: a 64-bit hash alone gives at least 5.684341886080802e-14"
    );
    assert!((0..i).all(|k| f.contains(&member(k))));
}

/// Unions need the same settings (limits aside), and never overflow a count or report a
/// bound above 1. Regression: unions of filters with other targets or growth were accepted
/// silently, and repeated self-unions reported `fpr_bound() > 1`.
#[test]
fn union_checks_settings_and_bounds() {
    let base = ScalableBloomFilter::<u64>::new(100, 0.01).unwrap();
    let others = [
        (
            ScalableBloomFilter::new(100, 0.02).unwrap(),
            "target false-positive rates differ (0.01 vs 0.02)",
        ),
        (
            ScalableBloomFilter::new(200, 0.01).unwrap(),
            "initial capacities differ (100 vs 200)",
        ),
        (
            ScalableBloomFilter::builder(100, 0.01)
                .growth(4)
                .build()
                .unwrap(),
            "growth factors differ (2 vs 4)",
        ),
        (
            ScalableBloomFilter::builder(100, 0.01)
                .tightening(0.9)
                .build()
                .unwrap(),
            "tightening ratios differ (0.85 vs 0.9)",
        ),
    ];
    for (other, message) in others {
        let mut a = base.clone();
        let err = a.union_with(&other).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("cannot combine filters: {message}")
        );
        assert_eq!(a, base);
    }
    let capped = ScalableBloomFilter::builder(100, 0.01)
        .max_items(10)
        .build()
        .unwrap();
    assert!(base.union(&capped).is_ok(), "limits may differ");
    let mut f = ScalableBloomFilter::new(10, 0.3).unwrap();
    for i in 0..100 {
        f.try_insert(&member(i)).unwrap();
    }
    for _ in 0..8 {
        let g = f.clone();
        f.union_with(&g).unwrap();
        assert!(f.fpr_bound() <= 1.0, "{}", f.fpr_bound());
    }
    assert_eq!(f.fpr_bound(), 1.0);
    // The union of unions decodes: its slices are runs of the sequence.
    let back = ScalableBloomFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(back, f);
    assert!((0..100).all(|i| back.contains(&member(i))));
}

#[test]
fn union_sums_the_bounds_and_keeps_growing() {
    let mut a = ScalableBloomFilter::new(50, 0.01).unwrap();
    let mut b = ScalableBloomFilter::new(50, 0.01).unwrap();
    for i in 0..300 {
        a.try_insert(&member(i)).unwrap();
        b.try_insert(&non_member(i)).unwrap();
    }
    let (bound_a, bound_b) = (a.fpr_bound(), b.fpr_bound());
    let u = a.union(&b).unwrap();
    assert!((u.fpr_bound() - (bound_a + bound_b)).abs() < 1e-12);
    assert_eq!(u.num_slices(), a.num_slices() + b.num_slices());
    assert!((0..300).all(|i| u.contains(&member(i)) && u.contains(&non_member(i))));
    let mut u = u;
    for i in 300..2_000 {
        u.try_insert(&member(i)).unwrap();
    }
    assert!((0..2_000).all(|i| u.contains(&member(i))));
    // Limits hold across a union.
    let mut capped = ScalableBloomFilter::builder(50, 0.01)
        .max_items(400)
        .build()
        .unwrap();
    for i in 0..300 {
        capped.try_insert(&member(i)).unwrap();
    }
    let before = capped.to_bytes();
    assert!(matches!(
        capped.union_with(&b),
        Err(Error::LimitReached { .. })
    ));
    assert_eq!(capped.to_bytes(), before);
}

#[test]
fn clear_keeps_the_slices() {
    let mut f = ScalableBloomFilter::new(10, 0.01).unwrap();
    for i in 0..100 {
        f.try_insert(&member(i)).unwrap();
    }
    let (slices, bound) = (f.num_slices(), f.fpr_bound());
    f.clear();
    assert!(f.is_empty() && (0..100).all(|i| !f.contains(&member(i))));
    assert_eq!((f.num_slices(), f.fpr_bound()), (slices, bound));
    for i in 0..1_000 {
        f.try_insert(&member(i)).unwrap();
    }
    assert!((0..1_000).all(|i| f.contains(&member(i))));
}

/// Whether any slice has all the bits of the key whose hash is `hash`, from first
/// principles: each slice's `BlockProbe` mask against the key's block in it.
fn reference(f: &ScalableBloomFilter<u64>, hash: u64) -> bool {
    f.slices().any(|s| {
        let mask = BlockProbe::new(hash, s.num_blocks(), s.num_hashes()).mask;
        mask.iter().zip(s.block_of(hash)).all(|(m, b)| m & b == *m)
    })
}

/// Slices with one probe per key (loose targets) answer like the reference, one at a time
/// and batched, and an insert says "new" exactly when the reference had not found the key.
/// Regression: with k = 1 every lookup answered `true`, so every insert returned
/// `Ok(false)` (a de-duplicating caller dropped every item) and `len` stayed 0.
#[test]
fn one_probe_slices_answer_like_the_reference() {
    let mut f = ScalableBloomFilter::builder(1_000, 0.9)
        .tightening(0.5)
        .build()
        .unwrap();
    assert_eq!(f.slices().next().unwrap().num_hashes(), 1);
    let mut new = 0u64;
    for i in 0..20_000 {
        let key = member(i);
        let before = reference(&f, f.hash_key(&key));
        let said_new = f.try_insert(&key).unwrap();
        assert_eq!(said_new, !before, "key {key}");
        if said_new {
            new += 1;
        }
    }
    assert_eq!(f.len(), new);
    assert!(f.slices().any(|s| s.num_hashes() == 1) && f.num_slices() >= 3);
    let keys: Vec<u64> = (0..20_000)
        .map(member)
        .chain((0..20_000).map(non_member))
        .collect();
    let mut batched = Vec::new();
    f.contains_batch(&keys, &mut batched);
    let mut positives = 0;
    for (key, &in_batch) in keys.iter().zip(&batched) {
        let expected = reference(&f, f.hash_key(key));
        assert_eq!(f.contains(key), expected, "key {key}");
        assert_eq!(in_batch, expected, "key {key}");
        if *key < 20_000 {
            assert!(expected, "false negative {key}");
        } else if expected {
            positives += 1;
        }
    }
    // Far from "every key": the guarantee is the sum of the slices' rates.
    let rate = f64::from(positives) / 20_000.0;
    assert!(rate <= f.fpr_bound() + 0.02, "{rate} > {}", f.fpr_bound());
}

/// `extend` past a byte limit keeps every key (no false negative), never grows past the
/// limit, and says so through the rate; `try_insert_batch` stops at the refused key.
#[test]
fn extend_past_its_limits_keeps_every_key_within_the_memory() {
    let build = || {
        ScalableBloomFilter::<u64>::builder(1_000, 0.01)
            .max_bytes(8_000)
            .build()
            .unwrap()
    };
    let keys: Vec<u64> = (0..20_000).map(member).collect();
    let mut f = build();
    f.extend(&keys);
    assert!(
        keys.iter().all(|k| f.contains(k)),
        "a key extend could not count was lost"
    );
    assert!(f.heap_bytes() <= 8_000);
    assert!(
        f.estimated_fpr() > 0.01,
        "the overfull slice shows in the rate"
    );

    let mut g = build();
    let err = g.try_insert_batch(&keys).unwrap_err();
    assert_eq!(
        err,
        Error::LimitReached {
            what: Limit::Bytes,
            limit: 8_000
        }
    );
    let held = g.len() as usize;
    assert!(held < keys.len());
    // The keys before the refusal are in (a key suppressed as a likely repeat is not
    // counted, so `len` is at most the position of the refused key).
    let refused = keys.iter().position(|k| !g.contains(k)).unwrap();
    assert!(held <= refused);
    assert!(keys[..refused].iter().all(|k| g.contains(k)));
}
