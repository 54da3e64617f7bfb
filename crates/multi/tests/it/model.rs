//! Model-based tests: random operation sequences on records whose fields take few values
//! (so records share values and recombinations are common), against a `HashSet` of the
//! records. Whatever the configuration, every query whose values some inserted record
//! holds must answer `true`: by one attribute, by any subset, whole.

use std::collections::HashSet;

use bloomkit_core::{Intersection, Union};
use bloomkit_multi::MultiFilter;
use bloomkit_testkit::{ensure, forall, Outcome};
use quickcheck::{Arbitrary, Gen};

pub(crate) type Rec = (u8, u8, u16);

#[derive(Debug, Clone)]
enum Op {
    Insert(Rec),
    Clear,
    RoundTrip,
}

fn field(g: &mut Gen, values: u8) -> u8 {
    u8::arbitrary(g) % values
}

fn record(g: &mut Gen) -> Rec {
    (field(g, 5), field(g, 4), u16::from(field(g, 200)))
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        match u8::arbitrary(g) % 40 {
            0 => Op::Clear,
            1 => Op::RoundTrip,
            _ => Op::Insert(record(g)),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Op>> {
        match *self {
            Op::Insert(r) => Box::new(r.shrink().map(Op::Insert)),
            _ => Box::new(std::iter::empty()),
        }
    }
}

/// The configurations every sequence runs on (and the view's tests, `view.rs`).
pub(crate) fn configurations() -> Vec<(&'static str, MultiFilter<Rec>)> {
    let b = || MultiFilter::<Rec>::builder(200, 0.05);
    vec![
        ("default", b().build().unwrap()),
        (
            "subsets",
            b().attribute(0, 5, 0.05)
                .unwrap()
                .attribute(1, 4, 0.1)
                .unwrap()
                .subset(&[0, 2])
                .unwrap()
                .subset_sized(&[1, 2], 150, 0.02)
                .unwrap()
                .seed(3)
                .build()
                .unwrap(),
        ),
        (
            "no record filter",
            b().record_filter(false).build().unwrap(),
        ),
        (
            "no record filter, subsets",
            b().record_filter(false)
                .subset(&[0, 1])
                .unwrap()
                .build()
                .unwrap(),
        ),
    ]
}

/// Every query a member of `model` must pass: each attribute, each subset, whole.
fn check_members(f: &MultiFilter<Rec>, model: &HashSet<Rec>) -> Outcome {
    for &r in model {
        let (a, b, c) = r;
        ensure(f.contains(&r), || format!("lost record {r:?}"))?;
        let q = f.query();
        let answers = [
            ("0", q.attr::<0>(&a).contains()),
            ("1", f.query().attr::<1>(&b).contains()),
            ("2", f.query().attr::<2>(&c).contains()),
            ("01", f.query().attr::<0>(&a).attr::<1>(&b).contains()),
            ("02", f.query().attr::<0>(&a).attr::<2>(&c).contains()),
            ("12", f.query().attr::<1>(&b).attr::<2>(&c).contains()),
            (
                "012",
                f.query()
                    .attr::<2>(&c)
                    .attr::<0>(&a)
                    .attr::<1>(&b)
                    .contains(),
            ),
            ("none", f.query().contains()),
            ("contains_attr", f.contains_attr::<1>(&b)),
        ];
        for (what, found) in answers {
            ensure(found, || format!("query {what} lost {r:?}"))?;
        }
    }
    Ok(())
}

#[test]
fn no_false_negatives_after_any_sequence() {
    forall(200, |ops: &Vec<Op>| {
        for (name, empty) in configurations() {
            let mut f = empty.clone();
            let mut model = HashSet::new();
            for op in ops {
                match *op {
                    Op::Insert(r) => {
                        let before = f.contains(&r);
                        let new = f.try_insert(&r).map_err(|e| e.to_string())?;
                        ensure(!(new && before), || {
                            format!("{name}: insert of {r:?} said new, contains said present")
                        })?;
                        ensure(new || before, || {
                            format!("{name}: insert of {r:?} said present, contains said absent")
                        })?;
                        model.insert(r);
                    }
                    Op::Clear => {
                        f.clear();
                        model.clear();
                        ensure(f.is_empty() && !f.query().contains(), || {
                            format!("{name}: a cleared filter is not empty")
                        })?;
                    }
                    Op::RoundTrip => {
                        let g = MultiFilter::<Rec>::from_bytes(&f.to_bytes())
                            .map_err(|e| format!("{name}: {e}"))?;
                        ensure(g == f, || format!("{name}: round trip changed the filter"))?;
                        f = g;
                    }
                }
            }
            check_members(&f, &model).map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    });
}

#[test]
fn unions_and_intersections_keep_their_records() {
    forall(150, |(a, b, common): &(Vec<u16>, Vec<u16>, Vec<u16>)| {
        let rec = |x: &u16| -> Rec { ((*x % 5) as u8, (*x % 4) as u8, *x % 200) };
        for (name, empty) in configurations() {
            let fill = |keys: &[u16]| {
                let mut f = empty.clone();
                for r in keys.iter().chain(common).map(rec) {
                    f.try_insert(&r).unwrap();
                }
                f
            };
            let (fa, fb) = (fill(a), fill(b));
            let union = fa.union(&fb).map_err(|e| e.to_string())?;
            let both = fa.intersection(&fb).map_err(|e| e.to_string())?;
            let all: HashSet<Rec> = a.iter().chain(b).chain(common).map(rec).collect();
            let shared: HashSet<Rec> = common.iter().map(rec).collect();
            check_members(&union, &all).map_err(|e| format!("{name} union: {e}"))?;
            check_members(&both, &shared).map_err(|e| format!("{name} intersection: {e}"))?;
        }
        Ok(())
    });
}

/// Dynamic records: a `Vec<String>` per record, arity checked on every call.
#[test]
fn dynamic_records_against_the_model() {
    forall(150, |records: &Vec<(u8, u8)>| {
        let mut f = MultiFilter::<Vec<String>>::builder(100, 0.05)
            .arity(2)
            .and_then(|b| b.subset(&[0, 1]))
            .and_then(bloomkit_multi::MultiBuilder::build)
            .map_err(|e| e.to_string())?;
        let mut model = HashSet::new();
        for &(a, b) in records {
            let r = vec![format!("a{}", a % 7), format!("b{}", b % 5)];
            f.try_insert(&r).map_err(|e| e.to_string())?;
            model.insert(r);
        }
        let before = f.clone();
        let wrong = vec!["only one".to_string()];
        ensure(f.try_insert(&wrong).is_err() && f == before, || {
            "a record of the wrong arity was taken".into()
        })?;
        for r in &model {
            ensure(f.contains(r), || format!("lost {r:?}"))?;
            for (i, v) in r.iter().enumerate() {
                let found = f.query().try_attr(i, v.as_str()).map(|q| q.contains());
                ensure(found == Ok(true), || {
                    format!("attribute {i} of {r:?}: {found:?}")
                })?;
            }
        }
        Ok(())
    });
}
