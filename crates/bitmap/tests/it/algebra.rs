//! Set algebra laws, checked against `BTreeSet` on random sets over one range.

use std::collections::BTreeSet;

use bloomkit_bitmap::Bitmap;
use bloomkit_testkit::{ensure, forall, Outcome};

const HI: u16 = 700;

fn bitmap(keys: &[u16]) -> Bitmap<u16> {
    Bitmap::from_keys(0..=HI, keys.iter().map(|k| k % (HI + 1))).unwrap()
}

fn set(keys: &[u16]) -> BTreeSet<u16> {
    keys.iter().map(|k| k % (HI + 1)).collect()
}

fn same(b: &Bitmap<u16>, s: &BTreeSet<u16>) -> bool {
    b.len() == s.len() as u64 && b.iter().eq(s.iter().copied())
}

#[test]
fn operations_match_the_model() {
    forall(300, |(x, y): &(Vec<u16>, Vec<u16>)| -> Outcome {
        let (a, b) = (bitmap(x), bitmap(y));
        let (sa, sb) = (set(x), set(y));
        let u = a.union(&b).unwrap();
        let i = a.intersection(&b).unwrap();
        let d = a.difference(&b).unwrap();
        let s = a.symmetric_difference(&b).unwrap();
        ensure(same(&u, &sa.union(&sb).copied().collect()), || {
            "union".into()
        })?;
        ensure(same(&i, &sa.intersection(&sb).copied().collect()), || {
            "intersection".into()
        })?;
        ensure(same(&d, &sa.difference(&sb).copied().collect()), || {
            "difference".into()
        })?;
        ensure(
            same(&s, &sa.symmetric_difference(&sb).copied().collect()),
            || "symmetric".into(),
        )?;
        // In place agrees with by value.
        let mut in_place = a.clone();
        in_place.union_with(&b).unwrap();
        ensure(in_place == u, || "union_with".into())?;
        let mut in_place = a.clone();
        in_place.symmetric_difference_with(&b).unwrap();
        ensure(in_place == s, || "symmetric_difference_with".into())
    });
}

#[test]
fn laws() {
    forall(
        300,
        |(x, y, z): &(Vec<u16>, Vec<u16>, Vec<u16>)| -> Outcome {
            let (a, b, c) = (bitmap(x), bitmap(y), bitmap(z));
            let u = |p: &Bitmap<u16>, q: &Bitmap<u16>| p.union(q).unwrap();
            let i = |p: &Bitmap<u16>, q: &Bitmap<u16>| p.intersection(q).unwrap();
            ensure(u(&a, &b) == u(&b, &a), || "union commutes".into())?;
            ensure(i(&a, &b) == i(&b, &a), || "intersection commutes".into())?;
            ensure(u(&u(&a, &b), &c) == u(&a, &u(&b, &c)), || {
                "union associates".into()
            })?;
            ensure(i(&i(&a, &b), &c) == i(&a, &i(&b, &c)), || {
                "intersection associates".into()
            })?;
            ensure(i(&a, &u(&b, &c)) == u(&i(&a, &b), &i(&a, &c)), || {
                "distributes".into()
            })?;
            ensure(
                u(&a, &b).len() == a.len() + b.len() - i(&a, &b).len(),
                || "inclusion-exclusion".into(),
            )?;
            let s = a.symmetric_difference(&b).unwrap();
            ensure(
                s == a
                    .difference(&b)
                    .unwrap()
                    .union(&b.difference(&a).unwrap())
                    .unwrap(),
                || "a ^ b = (a - b) | (b - a)".into(),
            )
        },
    );
}
