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

/// Regression dumps (found on 7f262d2, `tests/data/regressions/`): each decodes to a chain
/// whose next steps stay within its memory limit, or is refused before allocating.
mod regressions {
    use super::*;

    /// A valid dump at the 65,536-sub-filter maximum (3.5 MB): `from_dump` took 3.6 s (5.1 s
    /// in 1-byte chunks) against 16 ms for `from_bytes`, each chunk searching the sub-filters
    /// from the first. Now each chunk finds its sub-filter by binary search; the chunks,
    /// in any size, read back to the same chain. (`cargo test -p bloomkit-redis --test it
    /// --release -- chain::regressions --nocapture` prints the times.)
    #[test]
    fn a_dump_of_the_most_links_loads_in_linear_time() {
        let bytes = include_bytes!("../data/regressions/redis-65536-links-3.5MB.dump");
        let started = std::time::Instant::now();
        let whole = RedisBloomChain::from_bytes(bytes).unwrap();
        let from_bytes = started.elapsed();
        assert_eq!(whole.links().len(), 65_536);
        // As `BF.SCANDUMP` sends them (a sub-filter a chunk here), and a byte at a time.
        let started = std::time::Instant::now();
        let chain = RedisBloomChain::from_dump(whole.chunks()).unwrap();
        let in_chunks = started.elapsed();
        assert_eq!(chain, whole);
        let header = whole.header();
        let mut pieces = vec![(1u64, &header[..])];
        let mut at = 0u64;
        pieces.extend(bytes[header.len()..].chunks(1).map(|c| {
            at += 1;
            (at + 1, c)
        }));
        let started = std::time::Instant::now();
        let chain = RedisBloomChain::from_dump(pieces).unwrap();
        println!(
            "65,536 sub-filters: from_bytes {from_bytes:?}, from_dump {in_chunks:?} in its \
             chunks, {:?} in 1-byte chunks",
            started.elapsed()
        );
        assert_eq!(chain, whole);
    }

    /// Growth `u32::MAX` with a full last sub-filter (89 bytes): the first insert asked the
    /// allocator for 59 GB (2^61 bytes for the other file). Now the new sub-filter's size is
    /// checked against the chain's limit first: `TooLarge`, and nothing changed.
    #[test]
    fn a_growth_past_the_limit_is_refused_before_allocating() {
        for bytes in [
            &include_bytes!("../data/regressions/redis-growth-umax-full-89B.dump")[..],
            &include_bytes!("../data/regressions/redis-growth-umax-cap1e9-full-89B.dump")[..],
        ] {
            let mut chain = RedisBloomChain::from_bytes(bytes).unwrap();
            assert_eq!(chain.max_bytes(), bloomkit_redis::DEFAULT_MAX_BYTES);
            let before = chain.clone();
            let refused = (0..1_000)
                .map(|i| chain.insert(format!("new key {i}")))
                .find_map(Result::err);
            match refused {
                Some(Error::TooLarge {
                    bits, max_bytes, ..
                }) => {
                    assert_eq!(max_bytes, bloomkit_redis::DEFAULT_MAX_BYTES);
                    assert!(bits / 8 > max_bytes, "{bits} bits");
                }
                other => panic!("expected TooLarge, got {other:?}"),
            }
            assert_eq!(chain.links().len(), before.links().len());
            // A smaller limit is honoured the same way.
            let mut small = RedisBloomChain::from_bytes(bytes)
                .unwrap()
                .with_max_bytes(1 << 10);
            let refused = (0..1_000)
                .map(|i| small.insert(format!("new key {i}")))
                .find_map(Result::err);
            assert!(
                matches!(
                    refused,
                    Some(Error::TooLarge {
                        max_bytes: 1024,
                        ..
                    })
                ),
                "{refused:?}"
            );
        }
    }

    /// A 73-byte header that declares 2^40 bytes: `from_header` asked for 1 TiB before any
    /// chunk arrived. Now a header past the limit is refused, the message naming it.
    #[test]
    fn a_header_past_the_limit_is_refused() {
        let header = include_bytes!("../data/regressions/redis-header-declares-2pow40-73B.bin");
        assert_eq!(RedisBloomChain::declared_bytes(header), Some(1 << 40));
        let e = RedisBloomChain::from_header(header).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            format!(
                "filter local RedisBloom chain: 1099511627776 bytes (8796093022208 bits) is \
                 over the limit of {} bytes",
                bloomkit_redis::DEFAULT_MAX_BYTES
            )
        );
        let e = RedisBloomChain::from_header_within(header, 1 << 20).unwrap_err();
        assert!(
            matches!(
                e,
                Error::TooLarge {
                    max_bytes: 1_048_576,
                    ..
                }
            ),
            "{e}"
        );
        // A new chain too: its first sub-filter within the limit it is given.
        assert!(matches!(
            RedisBloomChain::new_within(1_000_000, 0.01, Some(2), 1 << 10),
            Err(Error::TooLarge {
                max_bytes: 1024,
                ..
            })
        ));
        let chain = RedisBloomChain::new_within(1_000, 0.01, Some(2), 1 << 20).unwrap();
        assert_eq!(chain.max_bytes(), 1 << 20);
    }
}
