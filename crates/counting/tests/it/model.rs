//! Model-based: any sequence of inserts and removes of items the model holds (a multiset,
//! `HashMap<key, count>`) leaves no false negative, for every counter width; refused
//! removes change nothing; the classic filter it converts to answers identically.

use std::collections::HashMap;

use bloomkit_core::{Codec, Xxh3Builder};
use bloomkit_counting::{Counter, CountingBloomFilter, U4};
use bloomkit_testkit::{ensure, forall, non_member, Outcome};
use quickcheck::{Arbitrary, Gen};

#[derive(Debug, Clone)]
pub(crate) enum Op {
    Insert(u64),
    /// Remove the i-th (mod len) key the model holds.
    RemoveHeld(usize),
    /// Try to remove a key that was never inserted.
    RemoveStranger(u64),
    Clear,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        match u8::arbitrary(g) % 20 {
            0 => Op::Clear,
            1..=10 => Op::Insert(u64::arbitrary(g) % 24), // few keys: many repeats
            11..=17 => Op::RemoveHeld(usize::arbitrary(g)),
            _ => Op::RemoveStranger(u64::arbitrary(g)),
        }
    }
}

/// The multiset the filter should hold: each key and how many times it is held.
#[derive(Default)]
pub(crate) struct Model(pub(crate) HashMap<u64, u64>);

impl Model {
    pub(crate) fn insert(&mut self, k: u64) {
        *self.0.entry(k).or_default() += 1;
    }

    /// The `i`-th (mod len) key held, in key order; `None` when nothing is.
    pub(crate) fn held(&self, i: usize) -> Option<u64> {
        let mut held: Vec<u64> = self.0.keys().copied().collect();
        held.sort_unstable();
        (!held.is_empty()).then(|| held[i % held.len()])
    }

    /// One copy of a held `k` removed.
    pub(crate) fn remove(&mut self, k: u64) {
        let c = self.0.get_mut(&k).expect("a held key");
        *c -= 1;
        if *c == 0 {
            self.0.remove(&k);
        }
    }
}

fn run<C: Counter>(ops: &[Op], make: impl Fn() -> CountingBloomFilter<u64, C>) -> Outcome {
    let mut f = make();
    let mut model = Model::default();
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert(k) => {
                f.insert(&k);
                model.insert(k);
            }
            Op::RemoveHeld(i) => {
                let Some(k) = model.held(i) else { continue };
                f.remove(&k)
                    .map_err(|e| format!("step {step}: removing held {k}: {e}"))?;
                model.remove(k);
            }
            Op::RemoveStranger(s) => {
                let k = non_member(s % (1 << 62));
                let before = f.to_bytes();
                if f.remove(&k).is_err() {
                    ensure(f.to_bytes() == before, || {
                        format!("step {step}: refused remove changed bytes")
                    })?;
                } else {
                    // A false positive was removed: this is the caller error the docs warn
                    // about; undo it so the model stays meaningful.
                    f = <CountingBloomFilter<u64, C> as Codec>::from_bytes(&before).unwrap();
                }
            }
            Op::Clear => {
                f.clear();
                model.0.clear();
            }
        }
        for (k, &n) in &model.0 {
            ensure(f.contains(k), || {
                format!("step {step}: false negative {k} (count {n})")
            })?;
            ensure(f.count(k) >= n.min(C::MAX), || {
                format!("step {step}: count of {k} below {n}")
            })?;
        }
    }
    let classic = f.to_classic().map_err(|e| e.to_string())?;
    for k in (0..24).chain((0..500).map(non_member)) {
        ensure(classic.contains(&k) == f.contains(&k), || {
            format!("to_classic differs on {k}")
        })?;
    }
    Ok(())
}

fn widths(ops: &[Op]) -> Outcome {
    // Small filters, so counters are shared and (for 4 bits) saturate.
    run::<U4>(ops, || {
        CountingBloomFilter::<u64>::builder(20, 0.05)
            .counter::<U4>()
            .seed(1)
            .build()
            .unwrap()
    })?;
    run::<u8>(ops, || {
        CountingBloomFilter::<u64>::builder(20, 0.05)
            .counter::<u8>()
            .seed(1)
            .build()
            .unwrap()
    })?;
    run::<u16>(ops, || {
        CountingBloomFilter::<u64>::builder(20, 0.05)
            .counter::<u16>()
            .seed(1)
            .build()
            .unwrap()
    })?;
    run::<u32>(ops, || {
        CountingBloomFilter::<u64>::builder(20, 0.05)
            .counter::<u32>()
            .seed(1)
            .build()
            .unwrap()
    })?;
    // A tiny filter whose keys' probes coincide: removal must lower a counter as often as
    // insertion raised it.
    run::<U4>(ops, || {
        CountingBloomFilter::<u64, U4>::with_counters_and_hasher(5, 7, Xxh3Builder::default())
            .unwrap()
    })?;
    run::<u8>(ops, || {
        CountingBloomFilter::<u64, u8>::with_counters_and_hasher(3, 12, Xxh3Builder::default())
            .unwrap()
    })
}

#[test]
fn no_false_negatives_against_a_multiset() {
    forall(300, |ops: &Vec<Op>| widths(ops));
}
