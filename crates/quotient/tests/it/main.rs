//! bloomkit-quotient's integration tests.

mod expandable;
mod extend;

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
        let model = Model {
            keys: 512,
            remove_every: 3,
            fresh_runs: false,
        };
        model.check(&mut f, ops, QuotientFilter::count, QuotientFilter::len)
    });
}

/// A run of inserts and removes of inserted keys against a model of counts: every key's
/// count is at least the model's (no false negative) and the length is the model's exactly,
/// after every step (the quotient and expandable filters' model tests).
pub(crate) struct Model {
    /// Keys are `k % keys`.
    pub(crate) keys: u64,
    /// One step in `remove_every` removes (a key the model holds), the others insert.
    pub(crate) remove_every: u8,
    /// Whether an insert step first inserts a run of `op % 16` new keys (so that a growing
    /// filter doubles along the way).
    pub(crate) fresh_runs: bool,
}

impl Model {
    pub(crate) fn check<F: Remove<Key = u64>>(
        &self,
        f: &mut F,
        ops: &[(u8, u16)],
        count: impl Fn(&F, &u64) -> u64,
        len: impl Fn(&F) -> u64,
    ) -> Result<(), String>
    where
        F::InsertError: std::fmt::Display,
    {
        let mut model: HashMap<u64, u64> = HashMap::new();
        for (i, &(op, k)) in ops.iter().enumerate() {
            let key = u64::from(k) % self.keys;
            if op % self.remove_every == 0 {
                if let Some(c) = model.get_mut(&key) {
                    f.remove(&key)
                        .map_err(|e| format!("remove of an inserted key: {e}"))?;
                    *c -= 1;
                    if *c == 0 {
                        model.remove(&key);
                    }
                }
            } else {
                let fresh = if self.fresh_runs {
                    u64::from(op % 16)
                } else {
                    0
                };
                for j in 0..fresh {
                    let new = 10_000 + (i as u64) * 16 + j;
                    f.try_insert(&new).map_err(|e| format!("insert: {e}"))?;
                    *model.entry(new).or_default() += 1;
                }
                f.try_insert(&key).map_err(|e| format!("insert: {e}"))?;
                *model.entry(key).or_default() += 1;
            }
            for (&k, &c) in &model {
                ensure(count(f, &k) >= c, || {
                    format!("count of {k}: {} < {c}", count(f, &k))
                })?;
            }
            ensure(len(f) == model.values().sum::<u64>(), || "length".into())?;
        }
        Ok(())
    }
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
            f.try_insert(&member(i)).unwrap();
        }
        let full = measure_fpr(&f, 1_000_000);
        println!(
            "p = {p}: {n} keys, load {:.3}, rate {}",
            f.load_factor(),
            full.rate()
        );
        assert!(
            full.within(f.estimated_fpr(), 4.5),
            "{} vs model {}",
            full.rate(),
            f.estimated_fpr()
        );
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
        f.try_insert(&i).unwrap();
    }
    let before = f.clone();
    match f.try_insert(&u64::MAX) {
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

/// Copies are counted inside a key's run: ten thousand copies of a key take a handful of
/// slots (a filter for a hundred keys holds them), every count is exact on the way up and
/// down, and a full filter still takes a copy that needs no new slot.
#[test]
fn many_copies_take_few_slots() {
    let mut f = QuotientFilter::<u64>::new(100, 0.01).unwrap();
    // Keys whose remainder is not one of the two largest (those keep a slot a copy).
    let top = (1u64 << f.remainder_bits()) - 1;
    let rem = |f: &QuotientFilter<u64>, k: &u64| {
        (f.hash_key(k) << f.capacity().trailing_zeros()) >> (64 - f.remainder_bits())
    };
    let keys: Vec<u64> = (0..).filter(|k| rem(&f, k) < top - 1).take(3).collect();
    for i in 1..=10_000u64 {
        for k in &keys {
            f.try_insert(k).unwrap();
            assert_eq!(f.count(k), i);
        }
    }
    assert_eq!(f.len(), 30_000);
    let slots = (f.load_factor() * f.capacity() as f64).round() as u64;
    assert!(
        slots <= 3 * 6,
        "{slots} slots for three keys' 10,000 copies"
    );
    // Fill the other slots with distinct keys, then one more copy of a counted key fits.
    let mut next = 1_000_000u64;
    loop {
        match f.try_insert(&next) {
            Ok(_) => next += 1,
            Err(Error::Full { items, .. }) => {
                assert_eq!(items, f.max_items());
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    // 10,001 copies: the same digits as 10,000 (no base below 128 has a power at 9,998).
    f.try_insert(&keys[0]).unwrap();
    let held = f.count(&keys[0]);
    for i in (0..held).rev() {
        f.remove(&keys[0]).unwrap();
        assert_eq!(f.count(&keys[0]), i);
    }
    assert_eq!(f.remove(&keys[0]), Err(Error::NotPresent));
    assert!(keys[1..].iter().all(|k| f.count(k) == 10_000));
    assert!((1_000_000..next).all(|k| f.contains(&k)));
}

/// Counted copies may need more slots with a bit less of remainder: a key held 300 times
/// whose 6-bit remainder would be the largest (a slot a copy) cannot be resized into a
/// table of 256 home slots; the error is `Full` and the filter is unchanged.
#[test]
fn a_resize_that_cannot_hold_the_counted_copies_is_refused() {
    let mut f = QuotientFilter::<u64>::new(100, 0.01).unwrap();
    assert_eq!((f.capacity(), f.remainder_bits()), (128, 7));
    let rem = |f: &QuotientFilter<u64>, k: &u64| (f.hash_key(k) << 7) >> 57;
    let key = (0..).find(|k| rem(&f, k) == 63).unwrap();
    for _ in 0..300 {
        f.try_insert(&key).unwrap();
    }
    let before = f.clone();
    assert!(matches!(f.resize(), Err(Error::Full { .. })));
    assert!(f == before);
    assert_eq!(f.count(&key), 300);
}

#[test]
fn removing_a_key_never_inserted_is_a_typed_error() {
    let mut f = QuotientFilter::<u64>::new(1_000, 0.0001).unwrap();
    for i in 0..500u64 {
        f.try_insert(&i).unwrap();
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

/// Resizing, shrinking and merging keep every copy: checked against a counting model on
/// random multisets, through a chain of each.
#[test]
fn resize_shrink_and_union_keep_every_copy() {
    forall(200, |(a, b): &(Vec<u16>, Vec<u16>)| {
        let build = |keys: &[u16]| {
            let mut f = QuotientFilter::<u64>::new(300, 0.01).unwrap();
            for &k in keys {
                f.try_insert(&u64::from(k % 200)).unwrap();
            }
            f
        };
        let (mut fa, fb) = (build(a), build(b));
        let mut model: HashMap<u64, u64> = HashMap::new();
        for &k in a.iter().chain(b) {
            *model.entry(u64::from(k % 200)).or_default() += 1;
        }
        fa.union_with(&fb).map_err(|e| format!("union: {e}"))?;
        let holds = |f: &QuotientFilter<u64>, what: &str| -> Result<(), String> {
            ensure(f.len() == model.values().sum::<u64>(), || {
                format!("{what}: length")
            })?;
            for (&k, &c) in &model {
                ensure(f.count(&k) >= c, || format!("{what}: count of {k}"))?;
            }
            Ok(())
        };
        holds(&fa, "union")?;
        let before = fa.capacity();
        fa.resize().map_err(|e| format!("resize: {e}"))?;
        ensure(fa.capacity() == 2 * before, || "resize doubles".into())?;
        holds(&fa, "resize")?;
        fa.shrink().map_err(|e| format!("shrink: {e}"))?;
        ensure(fa.capacity() == before, || "shrink halves".into())?;
        holds(&fa, "shrink")
    });
}

#[test]
fn resize_doubles_room_and_rate() {
    let mut f = QuotientFilter::<u64>::new(20_000, 0.01).unwrap();
    let n = f.max_items();
    for i in 0..n {
        f.try_insert(&member(i)).unwrap();
    }
    assert!(matches!(f.try_insert(&u64::MAX), Err(Error::Full { .. })));
    let bits = f.remainder_bits();
    f.resize().unwrap();
    assert_eq!(f.remainder_bits(), bits - 1);
    for i in n..2 * n {
        f.try_insert(&member(i)).unwrap();
    }
    assert!((0..2 * n).all(|i| f.contains(&member(i))));
    let m = measure_fpr(&f, 400_000);
    // Twice the copies on the same fingerprint bits: about twice the rate of a full
    // filter before resizing.
    assert!(
        m.within(f.estimated_fpr(), 4.5),
        "{} vs {}",
        m.rate(),
        f.estimated_fpr()
    );
    assert!(
        f.estimated_fpr() > 0.0135 && f.estimated_fpr() < 0.016,
        "{}",
        f.estimated_fpr()
    );
    // Too many keys to shrink back: refused, nothing changed.
    let before = f.clone();
    assert!(matches!(f.shrink(), Err(Error::Full { .. })));
    assert!(f == before);
}

/// Resizes the layout cannot make say why, with the limit (found: "8192 bits ... maximum of
/// 1099511627776", for a resize refused at 2-bit remainders).
#[test]
fn impossible_resizes_say_why() {
    let mut f = QuotientFilter::<u64>::new(100, 0.5).unwrap();
    assert_eq!(f.remainder_bits(), 2);
    let before = f.clone();
    let e = f.resize().unwrap_err();
    assert!(matches!(e, Error::CannotResize { op: "resize", .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "cannot resize the filter: its remainders have 2 bits, the fewest a quotient filter \
         keeps (a resize gives one to the home slot)"
    );
    assert!(f == before);
    f.shrink().unwrap(); // 128 home slots to 64, the fewest
    let e = f.shrink().unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot shrink the filter: it has 64 home slots: half of them is not a multiple of 64"
    );
    // Home slots of any multiple of 64 halve while the half is one.
    let mut g = QuotientFilter::<u64>::new(3 * 64 * 19 / 20, 0.01).unwrap();
    assert_eq!(g.capacity(), 192);
    assert!(matches!(
        g.shrink(),
        Err(Error::CannotResize { op: "shrink", .. })
    ));
    g.resize().unwrap();
    g.shrink().unwrap();
    assert_eq!(g.capacity(), 192);
}

#[test]
fn unions_of_different_filters_are_refused() {
    let mut a = QuotientFilter::<u64>::new(1_000, 0.01).unwrap();
    let b = QuotientFilter::<u64>::new(1_000, 0.001).unwrap();
    let c = QuotientFilter::<u64>::new(100_000, 0.01).unwrap();
    let d = QuotientFilter::<u64>::builder(1_000, 0.01)
        .seed(9)
        .build()
        .unwrap();
    assert!(matches!(a.union_with(&b), Err(Error::Incompatible { .. })));
    assert!(matches!(a.union_with(&c), Err(Error::Incompatible { .. })));
    assert!(matches!(a.union_with(&d), Err(Error::Incompatible { .. })));
}

#[cfg(feature = "serde")]
#[test]
fn codec() {
    use bloomkit_testkit::check_codec;
    let foreign = {
        let f = QuotientFilter::<u64>::new(100, 0.5).unwrap();
        let mut b = f.to_bytes();
        b[6] = bloomkit_core::Variant::Classic.tag();
        bloomkit_testkit::reseal(&mut b);
        b
    };
    check_codec(
        || QuotientFilter::<u64>::new(3_000, 0.01).unwrap(),
        &foreign,
    );
}

/// `contains_batch` answers as `contains`, on random multisets and group-boundary lengths.
#[test]
fn contains_batch_answers_as_contains() {
    bloomkit_testkit::check_contains_batch(|| QuotientFilter::<u64>::new(3_000, 0.01).unwrap());
}

/// `try_insert_batch` leaves the filter `insert` leaves key by key and counts the same new
/// keys; past the room it stops at the first key that does not fit, with every key before
/// it in and none after.
#[test]
fn try_insert_batch_matches_insert_and_stops_when_full() {
    forall(200, |keys: &Vec<u16>| {
        let keys: Vec<u64> = keys.iter().map(|&k| u64::from(k % 700)).collect();
        let mut one = QuotientFilter::<u64>::new(1_000, 0.01).unwrap();
        let mut single_new = 0;
        for k in &keys {
            if one.try_insert(k).map_err(|e| e.to_string())? {
                single_new += 1;
            }
        }
        let mut batched = QuotientFilter::<u64>::new(1_000, 0.01).unwrap();
        let batch_new = batched.try_insert_batch(&keys).map_err(|e| e.to_string())?;
        ensure(batch_new == single_new, || {
            format!("{batch_new} new by batch, {single_new} one by one")
        })?;
        ensure(one == batched, || "a different filter".into())
    });
    let mut f = QuotientFilter::<u64>::new(1_000, 0.01).unwrap();
    let room = f.max_items();
    let keys: Vec<u64> = (0..room + 300).map(member).collect();
    match f.try_insert_batch(&keys) {
        Err(Error::Full { items, .. }) => assert_eq!(items, room),
        other => panic!("{other:?}"),
    }
    assert_eq!(f.len(), room);
    assert!(keys[..room as usize].iter().all(|k| f.contains(k)));
    let mut after = Vec::new();
    f.contains_batch(&keys[room as usize..], &mut after);
    assert!(
        after.iter().filter(|&&b| b).count() < 30,
        "keys past the refusal went in"
    );
}

/// The shared builder: seed, memory limit checked before allocating, and a rate the
/// remainders cannot reach refused with its minimum.
#[test]
fn builder_settings() {
    let f = QuotientFilter::<u64>::builder(10_000, 0.01)
        .max_bytes(1 << 20)
        .build()
        .unwrap();
    assert!(f.heap_bytes() <= 1 << 20);
    match QuotientFilter::<u64>::builder(10_000_000, 0.01)
        .max_bytes(1 << 20)
        .build()
    {
        Err(Error::OverLimit { needed, limit, .. }) => assert!(needed > limit),
        other => panic!("{other:?}"),
    }
    let seeded = QuotientFilter::<u64>::builder(1_000, 0.01)
        .seed(3)
        .build()
        .unwrap();
    assert_eq!(*seeded.hasher(), bloomkit_core::Xxh3Builder::with_seed(3));
    match QuotientFilter::<u64>::new(1 << 20, 1e-15) {
        Err(Error::FprBelowMinimum { fpr, min, .. }) => assert!(fpr < min, "{fpr} {min}"),
        other => panic!("{other:?}"),
    }
    assert!(QuotientFilter::<u64>::new(1 << 20, 1e-12).is_ok());
    assert!(matches!(
        QuotientFilter::<u64>::new(10, f64::NAN),
        Err(Error::InvalidFpr(_))
    ));
}

/// The view over the bytes answers as the filter (lookups one at a time and batched,
/// counts, estimates), holds no heap, copies back to the same filter, and refuses exactly
/// the bytes the filter's decoder refuses, flipped byte by byte (checksums resealed, so the
/// table's own checks are what refuse).
#[cfg(feature = "serde")]
#[test]
fn view_answers_as_the_filter_and_refuses_what_it_refuses() {
    use bloomkit_core::format::{AlignedBytes, Verify};
    use bloomkit_quotient::QuotientFilterRef;
    forall(200, |keys: &Vec<u16>| {
        let mut f = QuotientFilter::<u64>::new(300, 0.01).unwrap();
        for &k in keys {
            f.try_insert(&u64::from(k % 250))
                .map_err(|e| e.to_string())?;
        }
        let bytes = AlignedBytes::copy_from(&f.to_bytes());
        let v = QuotientFilterRef::<u64>::from_bytes(bytes.as_bytes())
            .map_err(|e| format!("view: {e}"))?;
        let probes: Vec<u64> = (0..600).collect();
        let mut batch = Vec::new();
        v.contains_batch(&probes, &mut batch);
        for (&k, &b) in probes.iter().zip(&batch) {
            ensure(
                v.contains(&k) == f.contains(&k) && b == f.contains(&k),
                || format!("answers differ on {k}"),
            )?;
            ensure(v.count(&k) == f.count(&k), || {
                format!("counts differ on {k}")
            })?;
        }
        ensure(
            v.len() == f.len()
                && v.estimated_fpr() == f.estimated_fpr()
                && LookupCore::heap_bytes(&v) == 0
                && v.to_filter() == f,
            || "estimates, heap or copy".into(),
        )
    });
    let mut f = QuotientFilter::<u64>::new(200, 0.01).unwrap();
    for k in 0..150u64 {
        f.try_insert(&(k % 97)).unwrap();
    }
    let good = f.to_bytes();
    let mut refused = 0;
    for i in 0..good.len() {
        for bit in [0x01u8, 0x80] {
            let mut b = good.clone();
            b[i] ^= bit;
            bloomkit_testkit::reseal(&mut b);
            let owned = QuotientFilter::<u64>::from_bytes(&b);
            let aligned = AlignedBytes::copy_from(&b);
            let view = QuotientFilterRef::<u64, bloomkit_core::Xxh3Builder>::with_hasher(
                aligned.as_bytes(),
                Verify::All,
            );
            assert_eq!(owned.is_ok(), view.is_ok(), "byte {i} bit {bit:#x}");
            if let (Ok(o), Ok(v)) = (&owned, &view) {
                assert!((0..300u64).all(|k| o.contains(&k) == v.contains(&k)));
            } else {
                refused += 1;
            }
        }
    }
    assert!(
        refused > good.len(),
        "{refused} of {} flips refused",
        2 * good.len()
    );
}

/// `extend_growing` doubles as a `Vec` grows and loses no key; the batched insert stops at
/// the first refusal with the keys before it in.
#[test]
fn extend_growing_doubles_and_keeps_every_key() {
    let mut f = QuotientFilter::<u64>::new(1_000, 0.01).unwrap();
    let start = f.capacity();
    let doublings = f.extend_growing(0..20_000u64).unwrap();
    assert!(doublings >= 4, "{doublings}");
    assert_eq!(f.capacity(), start << doublings);
    assert!((0..20_000u64).all(|k| f.contains(&k)));
    assert_eq!(f.len(), 20_000);

    let mut g = QuotientFilter::<u64>::new(1_000, 0.01).unwrap();
    let err = g.try_insert_batch(0..20_000u64).unwrap_err();
    assert!(matches!(err, Error::Full { .. }), "{err}");
    let held = g.len();
    assert!((0..held).all(|k| g.contains(&k)));
}

/// A filter sized for `n` keys takes home slots for `n` at 95% load (any multiple of 64,
/// not the next power of two): at 1%, at most 11.5 bits a key from 12,000 keys on (below
/// that the 64-slot blocks and the slots kept past the last home slot weigh more), and it
/// holds its `n` distinct keys.
#[test]
fn sized_for_n_takes_at_most_11_5_bits_a_key_and_holds_n() {
    for n in [12_000u64, 50_000, 100_000, 333_333, 1_000_000] {
        let mut f = QuotientFilter::<u64>::new(n, 0.01).unwrap();
        let bits = f.heap_bytes() as f64 * 8.0 / n as f64;
        assert!(bits <= 11.5, "{n} keys: {bits:.2} bits a key");
        assert!(f.max_items() >= n && f.capacity() % 64 == 0);
        f.try_insert_batch((0..n).map(member)).unwrap();
        assert_eq!(f.len(), n);
        assert!((0..n).all(|i| f.contains(&member(i))));
        assert!(f.estimated_fpr() <= 0.01, "{}", f.estimated_fpr());
    }
    for n in [1u64, 60, 61, 1_000, 4_096] {
        let mut f = QuotientFilter::<u64>::new(n, 0.01).unwrap();
        assert!(f.try_insert_batch((0..n).map(member)).is_ok(), "{n}");
    }
}

/// The home-slot field of the parameter block: `q` for `2^q` (6 to 40), or bit 31 and a
/// count of 64-slot blocks that is not a power of two; anything else is refused by the
/// decoder and the view alike, never read as another size.
#[cfg(feature = "serde")]
#[test]
fn the_home_slot_field_takes_one_form_per_size() {
    use bloomkit_core::format::AlignedBytes;
    use bloomkit_quotient::QuotientFilterRef;

    let mut f = QuotientFilter::<u64>::new(150, 0.01).unwrap();
    assert_eq!(f.capacity(), 192);
    f.try_insert_batch(0..150u64).unwrap();
    let bytes = f.to_bytes();
    assert_eq!(bytes[32..36], (3u32 | 1 << 31).to_le_bytes());
    let back = QuotientFilter::<u64>::from_bytes(&bytes).unwrap();
    assert_eq!(back, f);
    let flag = 1u32 << 31;
    for home in [
        0,
        5,
        41,
        63,
        u32::MAX,
        flag,
        flag | 1,
        flag | 2,
        flag | 4,
        flag | 6,
        flag | 0x7fff_ffff,
        7,
    ] {
        let mut b = bytes.clone();
        b[32..36].copy_from_slice(&home.to_le_bytes());
        bloomkit_testkit::reseal(&mut b);
        assert!(
            QuotientFilter::<u64>::from_bytes(&b).is_err(),
            "home field {home:#x} accepted"
        );
        let aligned = AlignedBytes::copy_from(&b);
        assert!(QuotientFilterRef::<u64>::from_bytes(&aligned).is_err());
    }
    // A power-of-two table keeps the exponent form (the files written before this form);
    // the same size in blocks is refused though its words are right, and a table of 6
    // blocks reads back.
    let g = QuotientFilter::<u64>::new(1_945, 0.01).unwrap();
    assert_eq!(g.capacity(), 2_048);
    assert_eq!(g.to_bytes()[32..36], 11u32.to_le_bytes());
    for (items, blocks, exponent) in [(121, 2u32, 7u32), (243, 4, 8)] {
        let f = QuotientFilter::<u64>::new(items, 0.01).unwrap();
        assert_eq!(f.capacity(), u64::from(blocks) * 64);
        let mut b = f.to_bytes();
        assert_eq!(b[32..36], exponent.to_le_bytes());
        b[32..36].copy_from_slice(&(flag | blocks).to_le_bytes());
        bloomkit_testkit::reseal(&mut b);
        assert!(
            QuotientFilter::<u64>::from_bytes(&b).is_err(),
            "{blocks} blocks"
        );
    }
    let mut six = QuotientFilter::<u64>::new(364, 0.01).unwrap();
    assert_eq!(six.capacity(), 384);
    six.try_insert_batch(0..364u64).unwrap();
    let b = six.to_bytes();
    assert_eq!(b[32..36], (flag | 6).to_le_bytes());
    assert_eq!(QuotientFilter::<u64>::from_bytes(&b).unwrap(), six);
}
