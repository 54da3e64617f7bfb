//! `RedisBloomChain` against a model (`HashSet`), without a server: no false negative after
//! any sequence of inserts (single, batched, through growth, into a full non-scaling chain),
//! a count that is the number of keys it called new, a dump that reads back equal, and a
//! compounded rate under the target.

use std::collections::HashSet;

use bloomkit_redis::{Error, RedisBloomChain};
use bloomkit_testkit::{ensure, forall, Outcome};
use quickcheck::{Arbitrary, Gen};

#[derive(Debug, Clone)]
enum Op {
    Insert(u16),
    InsertBatch(Vec<u16>),
    Contains(u16),
    RoundTrip,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        match u8::arbitrary(g) % 10 {
            0..=4 => Op::Insert(u16::arbitrary(g)),
            5..=6 => Op::InsertBatch(Vec::arbitrary(g)),
            7..=8 => Op::Contains(u16::arbitrary(g)),
            _ => Op::RoundTrip,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Op>> {
        match self {
            Op::InsertBatch(v) => Box::new(v.shrink().map(Op::InsertBatch)),
            Op::Insert(k) => Box::new(k.shrink().map(Op::Insert)),
            Op::Contains(k) => Box::new(k.shrink().map(Op::Contains)),
            Op::RoundTrip => Box::new(std::iter::empty()),
        }
    }
}

#[derive(Debug, Clone)]
struct Case {
    capacity: u64,
    error_rate: f64,
    expansion: Option<u32>,
    ops: Vec<Op>,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        Case {
            capacity: 1 + u64::from(u8::arbitrary(g) % 40),
            error_rate: *g.choose(&[0.5, 0.1, 0.01, 0.0001]).expect("rates"),
            expansion: *g
                .choose(&[None, Some(1), Some(2), Some(4)])
                .expect("factors"),
            ops: Vec::arbitrary(g),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Case>> {
        let c = self.clone();
        Box::new(self.ops.shrink().map(move |ops| Case { ops, ..c.clone() }))
    }
}

fn key(k: u16) -> String {
    format!("key:{k}")
}

/// Inserts `k` singly into `chain` and the model; returns whether the chain refused it
/// (full, non-scaling).
fn insert_one(
    case: &Case,
    chain: &mut RedisBloomChain,
    model: &mut HashSet<u16>,
    new_count: &mut u64,
    k: u16,
) -> Result<bool, String> {
    match chain.insert(key(k)) {
        Ok(new) => {
            *new_count += u64::from(new);
            model.insert(k);
            Ok(false)
        }
        Err(Error::Full { .. }) if case.expansion.is_none() => {
            ensure(
                chain.len() == case.capacity && !chain.contains(key(k)),
                || format!("refused {k} with {} of {} in", chain.len(), case.capacity),
            )?;
            Ok(true)
        }
        Err(e) => Err(format!("insert {k}: {e}")),
    }
}

fn run(case: &Case) -> Outcome {
    let mut chain = RedisBloomChain::new(case.capacity, case.error_rate, case.expansion)
        .map_err(|e| e.to_string())?;
    let mut model = HashSet::new();
    let mut new_count = 0u64;
    for op in &case.ops {
        match op {
            Op::Insert(k) => {
                insert_one(case, &mut chain, &mut model, &mut new_count, *k)?;
            }
            Op::InsertBatch(ks) => {
                // The batched insert against single inserts on a copy: the same bits and
                // count, refused (a full non-scaling chain) exactly when a single one is.
                let mut single = chain.clone();
                let mut refused = false;
                for &k in ks {
                    if insert_one(case, &mut single, &mut model, &mut new_count, k)? {
                        refused = true;
                        break;
                    }
                }
                let batched = chain.insert_batch(ks.iter().map(|&k| key(k)));
                ensure(batched.is_err() == refused, || {
                    format!("batch refused: {}, singly: {refused}", batched.is_err())
                })?;
                ensure(chain == single, || "the batch left other bits".into())?;
            }
            Op::Contains(k) => {
                if model.contains(k) {
                    ensure(chain.contains(key(*k)), || format!("lost {k}"))?;
                }
            }
            Op::RoundTrip => {
                let chunks: Vec<(u64, Vec<u8>)> =
                    chain.chunks().map(|(i, c)| (i, c.to_vec())).collect();
                let copy = RedisBloomChain::from_dump(chunks).map_err(|e| e.to_string())?;
                ensure(copy == chain, || "the dump read back differently".into())?;
                chain = copy;
            }
        }
        ensure(chain.len() == new_count, || {
            format!("len {} after {new_count} new", chain.len())
        })?;
    }
    for &k in &model {
        ensure(chain.contains(key(k)), || format!("lost {k} at the end"))?;
    }
    let mut answers = Vec::new();
    chain.contains_batch(model.iter().map(|&k| key(k)), &mut answers);
    ensure(answers.iter().all(|&a| a), || {
        "a batched lookup lost a key".into()
    })
}

#[test]
fn no_false_negative_after_any_sequence_of_inserts() {
    forall(300, run);
}

#[test]
fn the_compounded_rate_stays_under_the_target() {
    // 100x the first sub-filter's capacity: seven growths.
    for (capacity, rate) in [(1_000u32, 0.01), (2_000, 0.001)] {
        let mut chain = RedisBloomChain::new(u64::from(capacity), rate, Some(2)).unwrap();
        chain
            .insert_batch((0..capacity * 100).map(|i| format!("in:{i}")))
            .unwrap();
        let probes = 1_000_000;
        let mut answers = Vec::new();
        chain.contains_batch((0..probes).map(|i| format!("out:{i}")), &mut answers);
        let hits = answers.iter().filter(|&&a| a).count() as f64;
        // The bound is what the sub-filters' rates sum to (each at or under its target:
        // rate / 2, rate / 4, ...); the measured rate may exceed that sum only by noise: 4
        // standard deviations of a binomial count.
        let bound: f64 = chain
            .links()
            .iter()
            .map(bloomkit_redis::RedisBloomLink::error_rate)
            .sum();
        let limit = bound * f64::from(probes) + 4.0 * (bound * f64::from(probes)).sqrt();
        assert!(bound <= rate, "the sub-filters' targets sum to {bound}");
        assert!(
            hits <= limit,
            "{hits} false positives, at most {limit} allowed"
        );
    }
}

#[test]
fn a_dump_of_the_real_module_reads_and_equals_a_local_build() {
    // `BF.RESERVE g 0.01 100 EXPANSION 2`, `BF.ADD g key:0` .. `key:999`, then every
    // `BF.SCANDUMP` chunk concatenated, from RedisBloom 2.8.2 (its `BF.INFO`: capacity 1500,
    // size 2976, 4 filters, 992 items, expansion 2).
    let golden = include_bytes!("../data/redisbloom-2.8.2.dump");
    let chain = RedisBloomChain::from_bytes(golden).unwrap();
    let info = chain.info();
    assert_eq!(
        (
            info.capacity,
            info.size,
            info.filters,
            info.items,
            info.expansion
        ),
        (1500, 2976, 4, 992, Some(2))
    );
    assert!((0..1000).all(|i| chain.contains(format!("key:{i}"))));
    assert_eq!(chain.to_bytes(), golden);
    let mut local = RedisBloomChain::new(100, 0.01, Some(2)).unwrap();
    local
        .insert_batch((0..1000).map(|i| format!("key:{i}")))
        .unwrap();
    assert_eq!(
        local.to_bytes(),
        golden,
        "a local build is the module's dump, byte for byte"
    );
    // Every truncation and every extension is refused.
    for cut in 0..golden.len() {
        assert!(
            RedisBloomChain::from_bytes(&golden[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    let mut longer = golden.to_vec();
    longer.push(0);
    assert!(RedisBloomChain::from_bytes(&longer).is_err());
}
