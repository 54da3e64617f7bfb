//! The shared filter against a model (`HashSet`) and against a local filter with the same
//! parameters, on a real `redis-server`: no false negatives, the same answer as the local
//! filter for every key asked, and `download()` bytes equal to the local filter's bytes.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkit_classic::{BlockedBloomFilter, BloomFilter};
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::PortableHasher;
use bloomkit_redis::{Error, Options, RedisFilter, RespConnection, SharedLayout};
use bloomkit_testkit::redis_server::RedisServer;
use bloomkit_testkit::{ensure, forall, Outcome};
use quickcheck::{Arbitrary, Gen};

#[derive(Debug, Clone)]
enum Op {
    Insert(u16),
    InsertBatch(Vec<u16>),
    Contains(u16),
    ContainsBatch(Vec<u16>),
    Clear,
    Reopen,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        match u8::arbitrary(g) % 20 {
            0..=5 => Op::Insert(u16::arbitrary(g)),
            6..=10 => Op::InsertBatch(Vec::arbitrary(g)),
            11..=13 => Op::Contains(u16::arbitrary(g)),
            14..=17 => Op::ContainsBatch(Vec::arbitrary(g)),
            18 => Op::Reopen,
            _ => Op::Clear,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Op>> {
        match self {
            Op::InsertBatch(v) => Box::new(v.shrink().map(Op::InsertBatch)),
            Op::ContainsBatch(v) => Box::new(v.shrink().map(Op::ContainsBatch)),
            _ => Box::new(std::iter::empty()),
        }
    }
}

fn key(k: u16) -> String {
    format!("user:{k}")
}

static NAMES: AtomicU64 = AtomicU64::new(0);

fn fresh_name() -> String {
    format!("conformance:{}", NAMES.fetch_add(1, Ordering::Relaxed))
}

fn connect(server: &RedisServer) -> RespConnection {
    RespConnection::open(server.url(), None).expect("a connection")
}

/// Runs `ops` on a shared filter and a local one of the same parameters (built with
/// `local`), checking after each step.
fn run<F>(
    server: &RedisServer,
    options: &Options,
    local: impl Fn() -> F,
    contains: impl Fn(&F, &str) -> bool,
    insert: impl Fn(&mut F, &str) -> bool,
    ops: &[Op],
) -> Outcome
where
    F: SharedLayout<Key = str>,
{
    let name = fresh_name();
    let mut shared: RedisFilter<F> =
        RedisFilter::open_or_create(connect(server), &name, options).map_err(|e| e.to_string())?;
    let mut local = local();
    let mut model = HashSet::new();
    for op in ops {
        match op {
            Op::Insert(k) => {
                let new = shared.try_insert(&key(*k)).map_err(|e| e.to_string())?;
                let new_locally = insert(&mut local, &key(*k));
                ensure(new == new_locally, || {
                    format!("{k}: new {new}, locally {new_locally}")
                })?;
                model.insert(*k);
                ensure(!shared.try_is_empty().map_err(|e| e.to_string())?, || {
                    format!("empty after inserting {k}")
                })?;
            }
            Op::InsertBatch(ks) => {
                let keys: Vec<String> = ks.iter().map(|&k| key(k)).collect();
                let mut new = Vec::new();
                shared
                    .try_insert_batch_reporting(keys.iter().map(String::as_str), &mut new)
                    .map_err(|e| e.to_string())?;
                ensure(new.len() == keys.len(), || "answer count".into())?;
                for (k, new) in keys.iter().zip(new) {
                    let new_locally = insert(&mut local, k);
                    ensure(new == new_locally, || {
                        format!("{k}: new {new}, locally {new_locally}")
                    })?;
                }
                model.extend(ks);
            }
            Op::Contains(k) => {
                let got = shared.try_contains(&key(*k)).map_err(|e| e.to_string())?;
                ensure(got == contains(&local, &key(*k)), || {
                    format!("{k}: differs")
                })?;
            }
            Op::ContainsBatch(ks) => {
                let keys: Vec<String> = ks.iter().map(|&k| key(k)).collect();
                let mut out = vec![true]; // appended to, not replaced
                shared
                    .try_contains_batch(keys.iter().map(String::as_str), &mut out)
                    .map_err(|e| e.to_string())?;
                ensure(out.len() == keys.len() + 1, || "answer count".into())?;
                for (k, got) in keys.iter().zip(&out[1..]) {
                    ensure(*got == contains(&local, k), || format!("{k}: differs"))?;
                }
            }
            Op::Clear => {
                shared.try_clear().map_err(|e| e.to_string())?;
                local = empty_like(&local);
                model.clear();
                ensure(shared.try_is_empty().map_err(|e| e.to_string())?, || {
                    "not empty after clear".into()
                })?;
            }
            Op::Reopen => {
                shared = RedisFilter::open(connect(server), &name).map_err(|e| e.to_string())?;
            }
        }
    }
    // Every member is found, in one batch and one at a time.
    let members: Vec<String> = model.iter().map(|&k| key(k)).collect();
    let mut out = Vec::new();
    shared
        .try_contains_batch(members.iter().map(String::as_str), &mut out)
        .map_err(|e| e.to_string())?;
    ensure(out.iter().all(|&b| b), || "a false negative".into())?;
    let downloaded = shared.download().map_err(|e| e.to_string())?;
    ensure(downloaded.words() == local.words(), || {
        "download() differs from the local filter".into()
    })?;
    shared.delete().map_err(|e| e.to_string())?;
    Ok(())
}

/// An empty filter of the same shape as `f`.
fn empty_like<F: SharedLayout>(f: &F) -> F {
    let shape = f.shape();
    let spec = bloomkit_core::HasherSpec {
        id: shape.hasher_id,
        seed: shape.seed,
    };
    let hasher = F::Hasher::from_spec(spec).expect("the shape's hasher");
    F::zeroed(&shape, hasher).expect("same shape")
}

#[test]
fn blocked_filters_agree_with_the_model_and_the_local_filter() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    for shards in [1, 3] {
        let options = Options::new(500, 0.01).seed(7).shards(shards);
        forall(30, |ops: &Vec<Op>| {
            run(
                &server,
                &options,
                || {
                    BlockedBloomFilter::<str>::builder(500, 0.01)
                        .seed(7)
                        .build()
                        .unwrap()
                },
                BlockedBloomFilter::contains::<str>,
                BlockedBloomFilter::insert,
                ops,
            )
        });
    }
}

#[test]
fn classic_filters_agree_with_the_model_and_the_local_filter() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let options = Options::new(300, 0.02);
    forall(30, |ops: &Vec<Op>| {
        run(
            &server,
            &options,
            || BloomFilter::<str>::new(300, 0.02).unwrap(),
            BloomFilter::contains::<str>,
            BloomFilter::insert,
            ops,
        )
    });
}

#[test]
fn a_filter_built_offline_uploads_merges_and_downloads_bit_for_bit() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let build = |range: std::ops::Range<u32>| {
        let mut f = BlockedBloomFilter::<str>::new(20_000, 0.01).unwrap();
        for i in range {
            f.insert(&format!("k{i}"));
        }
        f
    };
    let mut shared: RedisFilter<BlockedBloomFilter<str>> = RedisFilter::open_or_create(
        connect(&server),
        "offline",
        &Options::new(20_000, 0.01).shards(4),
    )
    .unwrap();
    let first = build(0..10_000);
    shared.upload(&first).unwrap();
    assert!(shared.download().unwrap() == first);
    let second = build(10_000..20_000);
    shared.union_with(&second).unwrap();
    let mut both = first.clone();
    bloomkit_core::Union::union_with(&mut both, &second).unwrap();
    let downloaded = shared.download().unwrap();
    assert_eq!(downloaded.words(), both.words());
    let info = shared.info().unwrap();
    assert_eq!(info.ones, both.count_ones());
    assert!(
        (info.estimated_items - 20_000.0).abs() < 1_000.0,
        "{info:?}"
    );
    // Another shape is refused, naming the field.
    let other = BlockedBloomFilter::<str>::builder(20_000, 0.01)
        .seed(1)
        .build()
        .unwrap();
    match shared.union_with(&other) {
        Err(Error::Mismatch { field: "seed", .. }) => {}
        other => panic!("{other:?}"),
    }
}

/// A classic filter created before the probe scheme was recorded in Redis (no `probes`
/// field: the enhanced scheme) is opened as it is, by `open` and by `open_or_create` with
/// today's options, and answers as a local filter of that scheme; a local filter of the
/// other scheme is refused by name, not merged into the wrong bits.
#[test]
fn a_classic_filter_from_before_the_probe_scheme_keeps_its_positions() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let options = Options::new(300, 0.02);
    let name = fresh_name();
    let created: RedisFilter<BloomFilter<str>> =
        RedisFilter::open_or_create(connect(&server), &name, &options).unwrap();
    assert_eq!(created.shape().probes, Some(ProbeScheme::Wide));
    let cfg = created.keys()[0].0.to_owned();
    // As an earlier release left it.
    assert_eq!(server.command(&["HDEL", &cfg, "probes"]), ":1");
    let mut old = BloomFilter::<str>::builder(300, 0.02)
        .probe_scheme(ProbeScheme::Enhanced)
        .build()
        .unwrap();
    let members: Vec<String> = (0..300).map(key).collect();
    for k in &members {
        old.insert(k);
    }
    let reopened: Vec<RedisFilter<BloomFilter<str>>> = vec![
        RedisFilter::open_or_create(connect(&server), &name, &options).unwrap(),
        RedisFilter::open(connect(&server), &name).unwrap(),
    ];
    for mut shared in reopened {
        assert_eq!(shared.shape().probes, Some(ProbeScheme::Enhanced));
        shared.upload(&old).unwrap();
        for k in &members {
            assert!(shared.try_contains(k).unwrap(), "{k}");
        }
        shared.try_insert("one more").unwrap();
        let mut expected = old.clone();
        expected.insert("one more");
        assert_eq!(shared.download().unwrap(), expected);
        let wide = BloomFilter::<str>::new(300, 0.02).unwrap();
        match shared.upload(&wide) {
            Err(Error::Mismatch {
                field: "probes",
                expected,
                found,
                ..
            }) => assert_eq!((expected.as_str(), found.as_str()), ("2", "1")),
            other => panic!("{other:?}"),
        }
        shared.try_clear().unwrap();
    }
    // Nothing rewrote the configuration: it still has no `probes` field.
    assert_eq!(server.command(&["HEXISTS", &cfg, "probes"]), ":0");
    // An id no build knows is refused when opening.
    server.command(&["HSET", &cfg, "probes", "9"]);
    match RedisFilter::<BloomFilter<str>>::open(connect(&server), &name) {
        Err(Error::Mismatch {
            field: "probes", ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

/// A filter created while hasher id 2 (`Xxh3Scheme::Chained`) was the default is opened as it
/// is by `open_or_create` with today's options (whose hasher is id 4): it keeps hashing its
/// string keys as id 2, so every key inserted then is still found, and it answers as a local
/// filter of id 2.
#[test]
fn a_filter_from_before_the_one_shot_hasher_keeps_its_hashes() {
    use bloomkit_core::{Xxh3Builder, Xxh3Scheme};
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let name = fresh_name();
    let options = Options::new(500, 0.01);
    let chained = Xxh3Builder::with_scheme(0, Xxh3Scheme::Chained);
    let mut old = BlockedBloomFilter::<str>::builder(500, 0.01)
        .hasher(chained)
        .build()
        .unwrap();
    // Keys past 16 bytes: the two schemes hash them differently.
    let members: Vec<String> = (0..500)
        .map(|i| format!("https://example.com/some/longer/path/{i}"))
        .collect();
    for k in &members {
        old.insert(k);
    }
    let created: RedisFilter<BlockedBloomFilter<str>> =
        RedisFilter::open_or_create(connect(&server), &name, &options).unwrap();
    let cfg = created.keys()[0].0.to_owned();
    drop(created);
    // As a release with id 2 as its default left it.
    server.command(&["HSET", &cfg, "hasher", "2"]);
    let mut shared: RedisFilter<BlockedBloomFilter<str>> =
        RedisFilter::open_or_create(connect(&server), &name, &options).unwrap();
    assert_eq!(shared.shape().hasher_id, 2);
    shared.upload(&old).unwrap();
    for k in &members {
        assert!(shared.try_contains(k).unwrap(), "{k}");
    }
    assert!(shared.download().unwrap() == old);
    // A local filter of today's hasher is another filter: refused by name.
    let today = BlockedBloomFilter::<str>::new(500, 0.01).unwrap();
    match shared.upload(&today) {
        Err(Error::Mismatch {
            field: "hasher", ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

/// Lookups read merged byte ranges: on filters large enough that a batch's keys lie far
/// apart (one range each) and in batches dense enough to read a shard whole, every answer is
/// the local filter's, and every inserted key is found.
fn ranges_answer_as_the_local_filter<F>(items: u64, shards: u32, contains: fn(&F, &str) -> bool)
where
    F: SharedLayout<Key = str>,
{
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let mut f: RedisFilter<F> = RedisFilter::create(
        connect(&server),
        &fresh_name(),
        &Options::new(items, 0.01).shards(shards),
    )
    .unwrap();
    let keys: Vec<String> = (0..20_000).map(|i| format!("range:{i}")).collect();
    f.try_insert_batch(keys.iter().map(String::as_str)).unwrap();
    let local = f.download().unwrap();
    let probes: Vec<String> = (0..60_000).map(|i| format!("range:{i}")).collect();
    for batch in [1, 7, 100, 4_096, 4_097, 60_000] {
        for chunk in probes.chunks(batch).take(20) {
            let mut out = Vec::new();
            f.try_contains_batch(chunk.iter().map(String::as_str), &mut out)
                .unwrap();
            for (k, got) in chunk.iter().zip(out) {
                let expected = contains(&local, k);
                assert_eq!(got, expected, "{k} in a batch of {batch}");
                if k.trim_start_matches("range:").parse::<u32>().unwrap() < 20_000 {
                    assert!(got, "{k} was inserted");
                }
            }
        }
    }
}

#[test]
fn lookups_of_sparse_and_dense_batches_answer_as_the_local_filter() {
    let blocked = |f: &BlockedBloomFilter<str>, k: &str| f.contains(k);
    ranges_answer_as_the_local_filter(10_000_000, 1, blocked);
    ranges_answer_as_the_local_filter(200_000, 3, blocked);
    ranges_answer_as_the_local_filter(2_000_000, 1, |f: &BloomFilter<str>, k| f.contains(k));
}
