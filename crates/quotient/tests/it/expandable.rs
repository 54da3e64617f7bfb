//! The expandable filter: the trait's promises, a counting model through doublings and void
//! entries, and the rate at every point of a thousandfold growth.

use std::collections::HashMap;

use bloomkit_core::{Error, Remove};
use bloomkit_quotient::ExpandableFilter;
use bloomkit_testkit::{check_filter, ensure, forall, measure_fpr, member, non_member};

#[test]
fn conformance() {
    check_filter(|| ExpandableFilter::<u64>::new(100, 0.01).unwrap());
    check_filter(|| ExpandableFilter::<u64>::new(4_000, 0.001).unwrap());
}

/// Any sequence of inserts and removes of inserted keys, from a filter made for 64 keys
/// that grows through several doublings: every key's count is at least the model's (no
/// false negative), and the length is the model's exactly. At a 50% target (4-bit
/// fingerprints) the first entries run out of fingerprint bits within the sequence, so
/// void entries and their copies are removed too.
#[test]
fn follows_a_counting_model() {
    forall(300, |ops: &Vec<(u8, u16)>| {
        follows_model_at(ops, 0.05)?;
        follows_model_at(ops, 0.5)
    });
}

fn follows_model_at(ops: &[(u8, u16)], fpr: f64) -> Result<(), String> {
    let mut f = ExpandableFilter::<u64>::new(64, fpr).unwrap();
    // Most steps insert a run of new keys, so the filter doubles along the way.
    let model = crate::Model {
        keys: 1024,
        remove_every: 4,
        fresh_runs: true,
    };
    model.check(&mut f, ops, ExpandableFilter::count, ExpandableFilter::len)
}

/// Short fingerprints (a rate target of 50% gives 4 bits) run out after four doublings:
/// the entries of the first generation become void and are copied on every doubling after.
/// Through 256x growth, every key stays found, each removal of an inserted key succeeds,
/// and the rate stays under the target.
#[test]
fn void_entries_keep_every_key() {
    let mut f = ExpandableFilter::<u64>::new(60, 0.5).unwrap();
    assert_eq!(f.fingerprint_bits(), 4);
    let n = 60 * 256;
    for i in 0..n {
        f.try_insert(&member(i)).unwrap();
    }
    assert!(f.doublings() >= 8, "{} doublings", f.doublings());
    assert!((0..n).all(|i| f.contains(&member(i))), "a key was lost");
    assert!(f.estimated_fpr() <= 0.5, "{}", f.estimated_fpr());
    let rate = measure_fpr(&f, 200_000);
    assert!(
        rate.within(f.estimated_fpr(), 4.5),
        "{} vs {}",
        rate.rate(),
        f.estimated_fpr()
    );
    // Remove every other key (the oldest first), then the survivors are all found.
    for i in (0..n).step_by(2) {
        f.remove(&member(i)).unwrap();
    }
    assert_eq!(f.len(), n / 2);
    assert!(
        (1..n).step_by(2).all(|i| f.contains(&member(i))),
        "a survivor was lost"
    );
}

/// From 1,000 keys to a million at 1% and 0.1%: at 10x, 100x and 1000x the rate measured
/// on absent keys is under the target (and agrees with the model), and no key is lost.
#[test]
fn rate_stays_under_target_through_a_thousandfold_growth() {
    for p in [0.01, 0.001] {
        let mut f = ExpandableFilter::<u64>::new(1_000, p).unwrap();
        let mut inserted = 0u64;
        for growth in [10u64, 100, 1_000] {
            while inserted < 1_000 * growth {
                f.try_insert(&member(inserted)).unwrap();
                inserted += 1;
            }
            let rate = measure_fpr(&f, 1_000_000);
            let bits = f.heap_bytes() as f64 * 8.0 / inserted as f64;
            println!(
                "p = {p}, {growth}x: rate {:.4}% (model {:.4}%), {bits:.2} bits/key, \
                 load {:.3}, {} fingerprint bits, {} doublings",
                100.0 * rate.rate(),
                100.0 * f.estimated_fpr(),
                f.load_factor(),
                f.fingerprint_bits(),
                f.doublings()
            );
            assert!(
                f.estimated_fpr() <= p,
                "model {} over {p}",
                f.estimated_fpr()
            );
            assert!(
                rate.false_positives as f64 <= p * 1e6 + 4.0 * (p * 1e6).sqrt(),
                "{growth}x: measured {} over {p}",
                rate.rate()
            );
            assert!(
                rate.within(f.estimated_fpr(), 4.5),
                "{} vs {}",
                rate.rate(),
                f.estimated_fpr()
            );
        }
        assert!(
            (0..inserted).all(|i| f.contains(&member(i))),
            "a key was lost"
        );
    }
}

#[test]
fn removing_a_key_never_inserted_is_a_typed_error() {
    let mut f = ExpandableFilter::<u64>::new(100, 0.0001).unwrap();
    for i in 0..5_000u64 {
        f.try_insert(&member(i)).unwrap();
    }
    let before = f.clone();
    let refused = (0..1_000u64)
        .filter(|&i| Remove::remove(&mut f, &non_member(i)) == Err(Error::NotPresent))
        .count();
    assert!(refused >= 990, "{refused}");
    if refused == 1_000 {
        assert!(f == before);
    }
}

#[test]
fn bad_parameters_are_typed_errors() {
    assert!(matches!(
        ExpandableFilter::<u64>::new(0, 0.01),
        Err(Error::ZeroItems)
    ));
    assert!(ExpandableFilter::<u64>::new(10, 0.0).is_err());
    assert!(ExpandableFilter::<u64>::new(10, f64::NAN).is_err());
    assert!(matches!(
        ExpandableFilter::<u64>::new(10, 1e-30),
        Err(Error::FprBelowMinimum { .. })
    ));
    // Rates whose fingerprint length overflows (regression: an add overflow in debug, a
    // filter with 0-bit slots that panicked on its first insert in release).
    for fpr in [5e-324, f64::MIN_POSITIVE / 4.0, f64::MIN_POSITIVE, 1e-300] {
        let e = ExpandableFilter::<u64>::new(10, fpr).unwrap_err();
        assert!(matches!(e, Error::FprBelowMinimum { .. }), "{fpr}: {e}");
        assert!(e.to_string().contains("below the minimum"), "{e}");
    }
}

/// Many copies of one key, or of the hashes at the table's two ends, are kept: the table
/// grows (regression: `Full` at 81-93% load, since the copies' run reached the last slot).
#[test]
fn repeated_keys_make_it_grow_never_full() {
    let mut f = ExpandableFilter::<str>::new(10, 0.01).unwrap();
    for _ in 0..2_000 {
        f.try_insert("same").unwrap();
    }
    assert_eq!(f.len(), 2_000);
    assert!(f.count("same") >= 2_000);
    let g = ExpandableFilter::<str>::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(f, g);
    let mut f = ExpandableFilter::<u64>::new(1_000, 0.01).unwrap();
    for i in 0..5_000u64 {
        assert!(f.try_insert_hash(u64::MAX).is_ok(), "copy {i} of u64::MAX");
        assert!(f.try_insert_hash(0).is_ok(), "copy {i} of 0");
        f.try_insert(&member(i)).unwrap();
    }
    assert_eq!((f.count_hash(0), f.count_hash(u64::MAX)), (5_000, 5_000));
    let mut g = ExpandableFilter::<u64>::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(f, g);
    for _ in 0..5_000 {
        g.remove_hash(u64::MAX).unwrap();
        g.remove_hash(0).unwrap();
    }
    assert!((0..5_000).all(|i| g.contains(&member(i))));
    assert_eq!(g.len(), 5_000);
}

/// Any sequence of inserts and removes over a handful of keys and the extreme hashes: the
/// counts never fall below the model's, and no insert fails.
#[test]
fn follows_a_model_with_heavy_repeats() {
    forall(200, |ops: &Vec<(u8, u8)>| {
        let mut f = ExpandableFilter::<u64>::new(1, 0.01).unwrap();
        let mut model: HashMap<u64, u64> = HashMap::new();
        for (i, &(op, k)) in ops.iter().cycle().take(ops.len() * 20).enumerate() {
            let hash = match k % 4 {
                0 => 0,
                1 => u64::MAX,
                2 => u64::MAX / 2,
                _ => u64::from(k),
            };
            if op % 5 == 0 && model.get(&hash).is_some_and(|&c| c > 0) {
                f.remove_hash(hash)
                    .map_err(|e| format!("step {i}: remove: {e}"))?;
                *model.get_mut(&hash).unwrap() -= 1;
            } else {
                f.try_insert_hash(hash)
                    .map_err(|e| format!("step {i}: insert of {hash:#x}: {e}"))?;
                *model.entry(hash).or_default() += 1;
            }
            for (&h, &c) in &model {
                ensure(f.count_hash(h) >= c, || {
                    format!("step {i}: {h:#x} counted {} < {c}", f.count_hash(h))
                })?;
            }
        }
        let g = ExpandableFilter::<u64>::from_bytes(&f.to_bytes())
            .map_err(|e| format!("round trip: {e}"))?;
        ensure(g == f, || "round trip changed the filter".into())
    });
}

/// The builder's byte limit holds through growth (regression: 233,048 bytes after 10^5
/// inserts under a limit of 4,096): the doubling that would pass it is `LimitReached`, and
/// every key inserted before is kept.
#[test]
fn a_byte_limit_bounds_every_doubling() {
    let limit = 4_096;
    let mut f = ExpandableFilter::<u64>::builder(10, 0.01)
        .max_bytes(limit)
        .build()
        .unwrap();
    assert_eq!(f.max_bytes(), Some(limit));
    let mut inserted = 0;
    for i in 0..100_000u64 {
        match f.try_insert(&i) {
            Ok(_) => inserted = i + 1,
            Err(e) => {
                assert_eq!(
                    e,
                    Error::LimitReached {
                        what: bloomkit_core::Limit::Bytes,
                        limit
                    }
                );
                break;
            }
        }
        assert!(f.heap_bytes() as u64 <= limit, "{} bytes", f.heap_bytes());
    }
    assert!(inserted > 100 && inserted < 100_000, "{inserted}");
    assert!((0..inserted).all(|i| f.contains(&i)));
    // Copies of one key under a limit: the same bound, while the run grows the tail.
    let mut f = ExpandableFilter::<str>::builder(10, 0.01)
        .max_bytes(limit)
        .build()
        .unwrap();
    let refused = (0..100_000).find_map(|_| f.try_insert("same").err());
    assert!(
        matches!(refused, Some(Error::LimitReached { .. })),
        "{refused:?}"
    );
    assert!(f.heap_bytes() as u64 <= limit && f.contains("same"));
    // A decoded filter has no limit until one is set.
    let mut g = ExpandableFilter::<str>::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(g.max_bytes(), None);
    g.set_max_bytes(Some(limit));
    assert!(matches!(
        g.try_insert("same"),
        Err(Error::LimitReached { .. })
    ));
}

/// The byte format: round trips (through doublings, as the keys outgrow a filter made for
/// 64), every truncation and single-byte corruption refused or decoded to a usable filter,
/// serde through the same bytes.
#[test]
fn codec() {
    use bloomkit_testkit::check_codec;
    let foreign = {
        let f = ExpandableFilter::<u64>::new(100, 0.5).unwrap();
        let mut b = f.to_bytes();
        b[6] = bloomkit_core::Variant::Classic.tag();
        bloomkit_testkit::reseal(&mut b);
        b
    };
    check_codec(|| ExpandableFilter::<u64>::new(64, 0.01).unwrap(), &foreign);
}

/// A filter with void entries and removals decodes to itself, and keeps growing after.
#[test]
fn decoded_filters_keep_every_key_and_grow() {
    let mut f = ExpandableFilter::<u64>::new(60, 0.5).unwrap();
    for i in 0..5_000 {
        f.try_insert(&member(i)).unwrap();
    }
    for i in (0..5_000).step_by(3) {
        f.remove(&member(i)).unwrap();
    }
    let mut g = ExpandableFilter::<u64>::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(f, g);
    assert_eq!(g.estimated_fpr(), f.estimated_fpr());
    for i in 5_000..20_000 {
        g.try_insert(&member(i)).unwrap();
    }
    let kept = (0..20_000).filter(|i| i >= &5_000 || i % 3 != 0);
    assert!(kept.into_iter().all(|i| g.contains(&member(i))));
    assert!(g.doublings() > f.doublings());
}

/// The zero-copy view answers and counts as the owned filter after growth and removals,
/// gives it back whole, takes the owned decoder's checks, and refuses a buffer it cannot
/// use in place with `NotViewable`.
#[test]
fn the_view_answers_as_the_owned_filter_and_refuses_what_it_cannot_use() {
    use bloomkit_core::format::AlignedBytes;
    use bloomkit_core::{Codec, DecodeError};
    use bloomkit_quotient::ExpandableFilterRef;

    let mut f = ExpandableFilter::<u64>::new(100, 0.01).unwrap();
    f.try_insert_batch(0..30_000u64).unwrap();
    for k in 0..50u64 {
        f.try_insert(&k).unwrap(); // a second copy
    }
    for k in 20_000..21_000u64 {
        f.remove(&k).unwrap();
    }
    assert!(f.doublings() >= 5);
    let bytes = AlignedBytes::copy_from(&f.to_bytes());
    let view = ExpandableFilterRef::<u64>::from_bytes(&bytes).unwrap();
    let probes: Vec<u64> = (0..100_000).collect();
    bloomkit_testkit::check_view_answers(&f, &view, &probes);
    assert!((0..50u64).all(|k| view.count(&k) == f.count(&k) && view.count(&k) >= 2));
    assert_eq!(view.to_filter(), f);
    assert_eq!(view.len(), f.len());
    assert_eq!(view.estimated_fpr(), f.estimated_fpr());
    assert_eq!(view.hash_key(&5), f.hash_key(&5));
    for cut in [0, 20, 64, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            ExpandableFilterRef::<u64>::from_bytes(&bytes[..cut]).is_err(),
            "{cut}"
        );
    }
    let (shifted, at) = bloomkit_testkit::misaligned_copy(&bytes);
    let misaligned = &shifted[at..];
    assert!(matches!(
        ExpandableFilterRef::<u64>::from_bytes(misaligned),
        Err(Error::Decode(DecodeError::NotViewable(_)))
    ));
    assert_eq!(
        <ExpandableFilter<u64> as Codec>::from_bytes(misaligned).unwrap(),
        f
    );
}
