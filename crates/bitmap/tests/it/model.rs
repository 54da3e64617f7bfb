//! Model-based: every operation on a bitmap answers as a `BTreeSet` does, for unsigned and
//! signed keys, over ranges at the ends of their types, with keys at and just outside the
//! bounds.

use std::collections::BTreeSet;

use bloomkit_bitmap::{Bitmap, Key};
use bloomkit_core::{Error, Lookup, Remove};
use bloomkit_testkit::{ensure, forall, Outcome};
use quickcheck::{Arbitrary, Gen};

/// An operation on a key given as an offset from the range's low end, from 3 below it to 3
/// above its high end (so the bounds and their neighbours come up often).
#[derive(Debug, Clone)]
enum Op {
    Insert(i64),
    Remove(i64),
    Contains(i64),
    Rank(i64),
    Select(u8),
    Extend(Vec<i64>),
    Clear,
}

/// Offsets cluster at both ends of a range of `span` keys.
fn offset(g: &mut Gen, span: i64) -> i64 {
    let near = i64::from(u8::arbitrary(g) % 7) - 3;
    match u8::arbitrary(g) % 3 {
        0 => near,
        1 => span - 1 + near,
        _ => i64::from(u16::arbitrary(g)) % (span + 6) - 3,
    }
}

#[derive(Debug, Clone)]
struct Ops(Vec<Op>);

/// The span generated offsets are drawn from (see [`run`]).
const SPAN: i64 = 300;

impl Arbitrary for Ops {
    fn arbitrary(g: &mut Gen) -> Ops {
        let len = usize::arbitrary(g) % 80;
        Ops((0..len)
            .map(|_| match u8::arbitrary(g) % 16 {
                0 => Op::Clear,
                1..=6 => Op::Insert(offset(g, SPAN)),
                7..=8 => Op::Remove(offset(g, SPAN)),
                9..=10 => Op::Contains(offset(g, SPAN)),
                11 => Op::Rank(offset(g, SPAN)),
                12 => Op::Select(u8::arbitrary(g)),
                _ => Op::Extend((0..u8::arbitrary(g) % 8).map(|_| offset(g, SPAN)).collect()),
            })
            .collect())
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Ops>> {
        let v = self.0.clone();
        Box::new((0..v.len()).map(move |i| {
            let mut w = v.clone();
            w.remove(i);
            Ops(w)
        }))
    }
}

/// Runs `ops` on a bitmap over `lo..=hi`. Offsets in the lower half of the generated span
/// count from `lo`, those in the upper half back from `hi`, so both bounds and their
/// neighbours come up whatever the range's length.
fn run<K: Key>(lo: K, hi: K, ops: &Ops) -> Outcome {
    let (lo_wide, hi_wide) = (lo.to_i128().unwrap(), hi.to_i128().unwrap());
    let key = |off: i64| {
        let wide = if off < SPAN / 2 {
            lo_wide + i128::from(off)
        } else {
            hi_wide - i128::from(SPAN - 1 - off)
        };
        K::from_i128(wide)
    };
    let mut b = Bitmap::new(lo..=hi).map_err(|e| e.to_string())?;
    let mut model = BTreeSet::new();
    let in_range = |k: K| lo <= k && k <= hi;
    for (step, op) in ops.0.iter().enumerate() {
        let at = |what: &str| format!("step {step} ({op:?}): {what}");
        match op {
            Op::Insert(off) => {
                let Some(k) = key(*off) else { continue };
                match b.try_insert(&k) {
                    Ok(new) => ensure(in_range(k) && new == model.insert(k), || at("insert"))?,
                    Err(Error::KeyOutOfRange { .. }) => ensure(!in_range(k), || at("refused"))?,
                    Err(e) => return Err(at(&e.to_string())),
                }
            }
            Op::Remove(off) => {
                let Some(k) = key(*off) else { continue };
                let mut via_trait = b.clone();
                let removed = b.remove(&k);
                ensure(removed.is_ok() == model.remove(&k), || at("remove"))?;
                ensure(removed.is_ok() || removed == Err(Error::NotPresent), || {
                    at("remove error")
                })?;
                // The inherent and the trait method: one contract.
                let trait_says = Remove::remove(&mut via_trait, &k);
                ensure(trait_says == removed && via_trait == b, || {
                    at("Remove trait")
                })?;
            }
            Op::Contains(off) => {
                let Some(k) = key(*off) else { continue };
                ensure(b.contains(&k) == model.contains(&k), || at("contains"))?;
                ensure(Lookup::contains(&b, &k) == model.contains(&k), || {
                    at("Lookup::contains")
                })?;
            }
            Op::Rank(off) => {
                let Some(k) = key(*off) else { continue };
                let expected = model.range(..=k).count() as u64;
                ensure(b.rank(k) == expected, || {
                    at(&format!("rank {} != {expected}", b.rank(k)))
                })?;
            }
            Op::Select(n) => {
                let expected = model.iter().nth(usize::from(*n)).copied();
                ensure(b.select(u64::from(*n)) == expected, || at("select"))?;
            }
            Op::Extend(offs) => {
                let keys: Vec<K> = offs.iter().filter_map(|&o| key(o)).collect();
                let before = b.clone();
                match b.extend_checked(keys.iter().copied()) {
                    Ok(added) => {
                        let new = keys.iter().filter(|k| model.insert(**k)).count() as u64;
                        ensure(added == new && keys.iter().all(|&k| in_range(k)), || {
                            at("extend")
                        })?;
                    }
                    Err(_) => {
                        ensure(keys.iter().any(|&k| !in_range(k)), || at("extend refused"))?;
                        ensure(b == before, || at("a refused extend changed the bitmap"))?;
                    }
                }
            }
            Op::Clear => {
                b.clear();
                model.clear();
            }
        }
        ensure(b.len() == model.len() as u64, || at("len"))?;
        ensure(b.is_empty() == model.is_empty(), || at("is_empty"))?;
    }
    ensure(b.iter().eq(model.iter().copied()), || {
        "iteration order".into()
    })?;
    ensure(b.iter().len() == model.len(), || "iterator length".into())?;
    ensure(b.min() == model.first().copied(), || "min".into())?;
    ensure(b.max() == model.last().copied(), || "max".into())?;
    Ok(())
}

#[test]
fn unsigned_keys_match_the_model() {
    forall(300, |ops: &Ops| run::<u8>(0, u8::MAX, ops));
    forall(300, |ops: &Ops| run::<u8>(100, 101, ops));
    forall(300, |ops: &Ops| run::<u16>(0, 299, ops));
    forall(300, |ops: &Ops| run::<u32>(u32::MAX - 1_000, u32::MAX, ops));
    forall(300, |ops: &Ops| run::<u64>(1 << 40, (1 << 40) + 5_000, ops));
    forall(300, |ops: &Ops| run::<usize>(17, 17, ops));
}

#[test]
fn signed_keys_match_the_model() {
    forall(300, |ops: &Ops| run::<i8>(i8::MIN, i8::MAX, ops));
    forall(300, |ops: &Ops| run::<i16>(-150, 149, ops));
    forall(300, |ops: &Ops| run::<i32>(i32::MIN, i32::MIN + 299, ops));
    forall(300, |ops: &Ops| run::<i64>(i64::MAX - 299, i64::MAX, ops));
    forall(300, |ops: &Ops| run::<i64>(-1_000_000, 1_000_000, ops));
    forall(300, |ops: &Ops| run::<i128>(-3, 3, ops));
}

#[test]
fn full_range_of_a_small_type() {
    let mut b = Bitmap::new(i8::MIN..=i8::MAX).unwrap();
    for k in i8::MIN..=i8::MAX {
        assert!(b.try_insert(&k).unwrap());
    }
    assert_eq!(b.len(), 256);
    assert_eq!((b.min(), b.max()), (Some(-128), Some(127)));
    assert_eq!(b.rank(0), 129);
    assert_eq!(b.select(128), Some(0));
    assert_eq!(b.heap_bytes(), 32);
}
