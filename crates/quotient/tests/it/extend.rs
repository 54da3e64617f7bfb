//! `Extend` on both tables: it grows as the filter fills and, when it cannot grow, saturates
//! (every key "present") instead of dropping a key or panicking; the state survives bytes,
//! views, unions and resizes, and ends with `clear`.

use std::collections::HashMap;

use bloomkit_core::format::AlignedBytes;
use bloomkit_core::{Error, Remove};
use bloomkit_quotient::{ExpandableFilter, ExpandableFilterRef, QuotientFilter, QuotientFilterRef};
use bloomkit_testkit::{ensure, forall, member};

/// What the model test needs of a filter whose `extend` can saturate.
trait Saturating: Remove<Key = u64> + Extend<u64> + Clone + PartialEq + std::fmt::Debug {
    fn saturated(&self) -> bool;
    fn counted(&self, key: &u64) -> u64;
    fn rate(&self) -> f64;
    fn roundtrip(&self) -> Self;
}

impl Saturating for QuotientFilter<u64> {
    fn saturated(&self) -> bool {
        QuotientFilter::is_saturated(self)
    }
    fn counted(&self, key: &u64) -> u64 {
        QuotientFilter::count(self, key)
    }
    fn rate(&self) -> f64 {
        QuotientFilter::estimated_fpr(self)
    }
    fn roundtrip(&self) -> Self {
        let bytes = AlignedBytes::copy_from(&self.to_bytes());
        let view = QuotientFilterRef::<u64>::from_bytes(&bytes).unwrap();
        assert_eq!(view.is_saturated(), self.is_saturated());
        assert_eq!(&view.to_filter(), self);
        QuotientFilter::from_bytes(&bytes).unwrap()
    }
}

impl Saturating for ExpandableFilter<u64> {
    fn saturated(&self) -> bool {
        ExpandableFilter::is_saturated(self)
    }
    fn counted(&self, key: &u64) -> u64 {
        ExpandableFilter::count(self, key)
    }
    fn rate(&self) -> f64 {
        ExpandableFilter::estimated_fpr(self)
    }
    fn roundtrip(&self) -> Self {
        let bytes = AlignedBytes::copy_from(&self.to_bytes());
        let view = ExpandableFilterRef::<u64>::from_bytes(&bytes).unwrap();
        assert_eq!(view.is_saturated(), self.is_saturated());
        let mut back = view.to_filter();
        // The byte limit is not part of the format.
        back.set_max_bytes(self.max_bytes());
        back
    }
}

/// Runs of `extend` (of new keys and of keys held), removes of keys held and round trips
/// through bytes: after every step every key held answers "present" with at least its
/// count, and a saturated filter answers "present" for every key and counts `u64::MAX`.
fn follows_model<F: Saturating>(mut f: F, ops: &[(u8, u16)]) -> Result<bool, String> {
    let mut model: HashMap<u64, u64> = HashMap::new();
    let mut next = 1_000_000u64;
    for &(op, k) in ops {
        match op % 4 {
            0 => {
                let held: Vec<u64> = model.keys().copied().collect();
                if let Some(&key) = held.get(usize::from(k) % held.len().max(1)) {
                    if f.remove(&key).is_ok() {
                        let c = model.get_mut(&key).unwrap();
                        *c -= 1;
                        if *c == 0 {
                            model.remove(&key);
                        }
                    } else {
                        // Only a saturated filter may not hold a key it answers for.
                        ensure(f.saturated(), || format!("remove of held {key} refused"))?;
                    }
                }
            }
            1 => f = f.roundtrip(),
            _ => {
                let fresh = u64::from(k) % 200;
                let keys: Vec<u64> = (next..next + fresh).chain([u64::from(k) % 50]).collect();
                next += fresh;
                f.extend(keys.iter().copied());
                for key in keys {
                    *model.entry(key).or_default() += 1;
                }
            }
        }
        for (&key, &c) in &model {
            ensure(f.contains(&key) && f.counted(&key) >= c, || {
                format!("{key} held {c} times, counted {}", f.counted(&key))
            })?;
        }
        if f.saturated() {
            ensure(
                f.contains(&u64::MAX) && f.counted(&member(7)) == u64::MAX,
                || "a saturated filter answered absent".into(),
            )?;
            ensure(f.rate() == 1.0, || "rate of a saturated filter".into())?;
        }
    }
    Ok(f.saturated())
}

/// A quotient filter with 3-bit remainders grows once, then saturates; an expandable filter
/// under a byte limit saturates at it. No key is ever lost, before or after.
#[test]
fn extend_grows_then_saturates_and_never_loses_a_key() {
    let saturated = std::cell::Cell::new(0u32);
    forall(200, |ops: &Vec<(u8, u16)>| {
        let q = QuotientFilter::<u64>::new(60, 0.2).unwrap();
        saturated.set(saturated.get() + u32::from(follows_model(q, ops)?));
        let e = ExpandableFilter::<u64>::builder(60, 0.05)
            .max_bytes(2_048)
            .build()
            .unwrap();
        saturated.set(saturated.get() + u32::from(follows_model(e, ops)?));
        Ok(())
    });
    // The test reaches the state it is about.
    assert!(saturated.get() > 10, "{} runs saturated", saturated.get());
}

/// Saturation: reached only when growth is impossible, kept by unions, resizes, bytes and
/// views, ended by `clear`; a written saturated filter is refused by a reader that takes its
/// rate at face value (its rate is negative), and damage to that field is refused.
#[test]
fn saturation_is_kept_and_ended_only_by_clear() {
    let mut f = QuotientFilter::<u64>::new(1_000, 0.01).unwrap();
    f.extend(0..30_000u64); // five doublings: 2-bit remainders
    assert!(!f.is_saturated());
    assert_eq!(f.remainder_bits(), 2);
    assert!(matches!(f.resize(), Err(Error::CannotResize { .. })));
    let held = f.len();
    f.extend(30_000..150_000u64);
    assert!(f.is_saturated());
    assert!(f.len() >= held);
    assert!(f.contains(&u64::MAX) && f.count(&u64::MAX) == u64::MAX);
    let mut probes = Vec::new();
    f.contains_batch((0..1_000u64).map(|i| i << 40), &mut probes);
    assert!(probes.iter().all(|&p| p));

    // A union with a saturated filter is saturated, whichever side it is.
    let mut empty = f.clone();
    empty.clear();
    assert!(!empty.is_saturated());
    let mut left = empty.clone();
    left.union_with(&f).unwrap();
    assert!(left.is_saturated());
    let mut right = f.clone();
    right.union_with(&empty).unwrap();
    assert!(right.is_saturated() && right == f);
    // Bytes: the state round trips; the rate field holds the target, negated.
    let bytes = f.to_bytes();
    let back = QuotientFilter::<u64>::from_bytes(&bytes).unwrap();
    assert_eq!(back, f);
    assert!(back.is_saturated());
    let rate_at = 32 + 8; // the parameter block: home slots, remainder bits, then the rate
    let rate = f64::from_le_bytes(bytes[rate_at..rate_at + 8].try_into().unwrap());
    assert_eq!(rate, -0.01);
    for bad in [
        f64::NAN,
        -f64::NAN,
        -0.0,
        0.0,
        -1.0,
        -1.5,
        f64::NEG_INFINITY,
    ] {
        let mut b = bytes.clone();
        b[rate_at..rate_at + 8].copy_from_slice(&bad.to_le_bytes());
        bloomkit_testkit::reseal(&mut b);
        assert!(
            matches!(QuotientFilter::<u64>::from_bytes(&b), Err(Error::Decode(_))),
            "rate {bad} accepted"
        );
    }
    // `clear` ends it; the filter is usable again.
    let mut f = back;
    f.clear();
    assert!(!f.is_saturated() && f.is_empty() && !f.contains(&u64::MAX));
    f.try_insert(&1).unwrap();
    assert_eq!(f.count(&1), 1);

    // The expandable filter: saturated at its byte limit, not before.
    let mut e = ExpandableFilter::<u64>::builder(100, 0.01)
        .max_bytes(4_096)
        .build()
        .unwrap();
    e.extend(0..100u64);
    assert!(!e.is_saturated());
    e.extend(100..100_000u64);
    assert!(e.is_saturated() && e.heap_bytes() <= 4_096);
    assert!((0..100_000u64).all(|k| e.contains(&k)) && e.contains(&u64::MAX));
    let back = ExpandableFilter::<u64>::from_bytes(&e.to_bytes()).unwrap();
    assert!(back.is_saturated() && back.count(&u64::MAX) == u64::MAX);
    e.clear();
    assert!(!e.is_saturated() && !e.contains(&5));
    // Without a limit it grows instead.
    let mut e = ExpandableFilter::<u64>::new(100, 0.01).unwrap();
    e.extend(0..100_000u64);
    assert!(!e.is_saturated() && e.estimated_fpr() <= 0.01);
    assert_eq!(e.len(), 100_000);
}

/// A saturated filter with remainder bits to spare (read from bytes whose rate field says
/// so) stays saturated through `resize`, `shrink`, `union_growing` (either side) and the
/// view; its keys are kept by each.
#[test]
fn saturation_survives_resizes_and_growing_unions() {
    let mut f = QuotientFilter::<u64>::new(243, 0.01).unwrap(); // 256 home slots
    f.try_insert_batch(0..200u64).unwrap();
    let mut bytes = f.to_bytes();
    let rate_at = 32 + 8;
    bytes[rate_at..rate_at + 8].copy_from_slice(&(-0.01f64).to_le_bytes());
    bloomkit_testkit::reseal(&mut bytes);
    let saturated = QuotientFilter::<u64>::from_bytes(&bytes).unwrap();
    assert!(saturated.is_saturated() && saturated.remainder_bits() == 7);
    let kept = |g: &QuotientFilter<u64>| g.is_saturated() && (0..200u64).all(|k| g.count(&k) >= 1);

    let mut g = saturated.clone();
    g.resize().unwrap();
    assert!(kept(&g) && g.capacity() == 512);
    g.shrink().unwrap();
    assert!(kept(&g) && g.capacity() == 256);

    // A smaller unsaturated filter of the same fingerprint range grows into it.
    let mut small = QuotientFilter::<u64>::new(60, 0.003).unwrap();
    assert_eq!((small.capacity(), small.remainder_bits()), (64, 9));
    small.try_insert(&7).unwrap();
    let mut left = small.clone();
    assert!(left.union_growing(&saturated).unwrap() >= 2);
    assert!(kept(&left) && left.contains(&7));
    let mut right = saturated.clone();
    right.union_growing(&small).unwrap();
    assert!(kept(&right));
}
