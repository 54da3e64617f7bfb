//! The RedisBloom backend and RedisBloom's format, against the real module (RedisBloom 2.8
//! from Redis Stack's wheel, loaded into `redis-server`): the server's answers and a local
//! copy's are the same, a filter built offline loads and answers, and the faults of the
//! module-free filter are typed errors here too.

use std::time::Duration;

use bloomkit_redis::{Error, Limits, RedisBloomChain, RedisBloomFilter, RedisBloomOptions};
use bloomkit_testkit::redis_server::RedisServer;
use bloomkit_testkit::resp::Value;

fn server() -> Option<RedisServer> {
    RedisServer::start_with_redisbloom(&[])
}

fn con(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

fn keys(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("url:{i}")).collect()
}

/// `BF.MEXISTS` through a plain connection, unguarded: what any other client sees.
fn raw_mexists(con: &mut redis::Connection, name: &str, keys: &[String]) -> Vec<bool> {
    let mut out = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(10_000) {
        let got: Vec<i64> = redis::cmd("BF.MEXISTS")
            .arg(name)
            .arg(chunk)
            .query(con)
            .unwrap();
        out.extend(got.into_iter().map(|b| b == 1));
    }
    out
}

#[test]
fn the_servers_answers_and_a_downloaded_copys_are_the_same_and_equal_a_local_build() {
    let Some(server) = server() else {
        return;
    };
    // 10^6 keys into a filter reserved for 10^5: it grows four times on the server, as the
    // local chain must.
    let n = 1_000_000;
    let mut f =
        RedisBloomFilter::reserve(con(&server), "seen", &RedisBloomOptions::new(100_000, 0.01))
            .unwrap();
    let present = keys(0..n);
    let mut local = RedisBloomChain::new(100_000, 0.01, Some(2)).unwrap();
    let mut news = Vec::new();
    let mut local_news = Vec::new();
    for chunk in present.chunks(10_000) {
        f.try_insert_batch_reporting(chunk, &mut news).unwrap();
        for k in chunk {
            local_news.push(local.insert(k).unwrap());
        }
    }
    assert_eq!(
        news, local_news,
        "the server and the local chain call the same keys new"
    );

    let copy = f.download().unwrap();
    assert_eq!(copy, local, "the dump is the local build, byte for byte");
    assert_eq!(f.info().unwrap(), local.info());
    assert_eq!(f.count().unwrap(), local.len());
    assert_eq!(copy.links().len(), 4); // 100k, 200k, 400k, 800k

    let absent = keys(n..2 * n);
    let mut raw = con(&server);
    for (which, set) in [("present", &present), ("absent", &absent)] {
        let mut server_says = Vec::new();
        f.try_contains_batch(set, &mut server_says).unwrap();
        assert_eq!(server_says, raw_mexists(&mut raw, "seen", set), "{which}");
        let local_says: Vec<bool> = set.iter().map(|k| copy.contains(k)).collect();
        assert_eq!(
            server_says, local_says,
            "{which}: the copy answers as the server"
        );
        if which == "present" {
            assert!(server_says.iter().all(|&b| b), "no false negative");
        } else {
            let rate = server_says.iter().filter(|&&b| b).count() as f64 / f64::from(n);
            assert!(
                rate < 0.01,
                "the compounded rate {rate} stays under the target"
            );
        }
    }
}

#[test]
fn a_filter_built_offline_loads_and_the_server_answers_for_it() {
    let Some(server) = server() else {
        return;
    };
    let n = 1_000_000;
    let present = keys(0..n);
    let mut chain = RedisBloomChain::new(300_000, 0.001, Some(4)).unwrap();
    for k in &present {
        chain.insert(k).unwrap();
    }
    let mut f = RedisBloomFilter::load(con(&server), "built", &chain, &Limits::default()).unwrap();
    assert_eq!(f.info().unwrap(), chain.info(), "BF.INFO after the load");
    let mut raw = con(&server);
    assert!(
        raw_mexists(&mut raw, "built", &present).iter().all(|&b| b),
        "BF.MEXISTS finds every key built offline"
    );
    let absent = keys(n..n + 200_000);
    let server_says = raw_mexists(&mut raw, "built", &absent);
    let local_says: Vec<bool> = absent.iter().map(|k| chain.contains(k)).collect();
    assert_eq!(server_says, local_says);
    // The server goes on from the loaded filter as from one it built.
    let more = keys(2 * n..2 * n + 1_000);
    let mut news = Vec::new();
    f.try_insert_batch_reporting(&more, &mut news).unwrap();
    let local_news: Vec<bool> = more.iter().map(|k| chain.insert(k).unwrap()).collect();
    assert_eq!(news, local_news);
    assert_eq!(f.download().unwrap(), chain);
    // A second load on the same name is refused, and changes nothing.
    let again = RedisBloomFilter::load(con(&server), "built", &chain, &Limits::default());
    assert!(
        matches!(again, Err(Error::AlreadyExists { .. })),
        "{again:?}"
    );
}

/// A dump header of one sub-filter, written by hand: what old RedisBloom versions made
/// (32-bit hashes without the 64-bit option; a power-of-two size with `n2`).
fn header(options: u32, bytes: u64, n2: u8, bpe: f64) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&0u64.to_le_bytes()); // items
    h.extend_from_slice(&1u32.to_le_bytes()); // sub-filters
    h.extend_from_slice(&options.to_le_bytes());
    h.extend_from_slice(&2u32.to_le_bytes()); // growth
    h.extend_from_slice(&bytes.to_le_bytes());
    h.extend_from_slice(&(bytes * 8).to_le_bytes());
    h.extend_from_slice(&0u64.to_le_bytes()); // items in it
    h.extend_from_slice(&0.01f64.to_le_bytes());
    h.extend_from_slice(&bpe.to_le_bytes());
    // The module's truncated ln 2.
    #[allow(clippy::approx_constant)]
    let hashes = (0.693147180559945 * bpe).ceil() as u32;
    h.extend_from_slice(&hashes.to_le_bytes());
    h.extend_from_slice(&1000u64.to_le_bytes()); // capacity
    h.push(n2);
    h
}

#[test]
fn dumps_of_older_filters_hash_and_place_bits_as_the_module() {
    let Some(server) = server() else {
        return;
    };
    let mut raw = con(&server);
    // Each kind: 32-bit MurmurHash2 with a size modulo (options 1), 32-bit with a
    // power-of-two size (n2 = 13, 32-bit arithmetic), 64-bit with a power-of-two size.
    for (name, options, n2) in [("old32", 1u32, 0u8), ("pow2-32", 0, 13), ("pow2-64", 4, 13)] {
        let bytes = 1024;
        let mut dump = vec![(1u64, header(options, bytes, n2, 9.585))];
        // Bits a quarter full, from a fixed generator: lookups that pass and that fail.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let body: Vec<u8> = (0..bytes)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x & 0xff) as u8) & ((x >> 8) as u8) | ((x >> 20) as u8 & (x >> 30) as u8)
            })
            .collect();
        dump.push((bytes + 1, body));
        let chain = RedisBloomChain::from_dump(dump.clone()).unwrap();
        let _: () = redis::cmd("BF.LOADCHUNK")
            .arg(name)
            .arg(1)
            .arg(&dump[0].1)
            .query(&mut raw)
            .unwrap();
        let _: () = redis::cmd("BF.LOADCHUNK")
            .arg(name)
            .arg(dump[1].0)
            .arg(&dump[1].1)
            .query(&mut raw)
            .unwrap();
        let probes = keys(0..50_000);
        let server_says = raw_mexists(&mut raw, name, &probes);
        let local_says: Vec<bool> = probes.iter().map(|k| chain.contains(k)).collect();
        let hits = server_says.iter().filter(|&&b| b).count();
        assert!(hits > 0 && hits < probes.len(), "{name}: {hits} hits");
        assert_eq!(server_says, local_says, "{name}");
    }
}

#[test]
fn a_lost_or_re_created_filter_is_a_typed_error_and_an_insert_never_creates_one() {
    let Some(server) = server() else {
        return;
    };
    let options = RedisBloomOptions::new(10_000, 0.01);
    let mut f = RedisBloomFilter::reserve(con(&server), "lost", &options).unwrap();
    f.try_insert_batch(keys(0..100)).unwrap();
    assert_eq!(server.command(&["FLUSHALL"]), "+OK");
    let err = f.try_contains("url:1").expect_err("the filter is gone");
    assert!(err.is_missing(), "{err:?}");
    let err = f.try_insert("url:1").expect_err("the filter is gone");
    assert!(err.is_missing(), "{err:?}");
    assert_eq!(
        server.command(&["TYPE", "lost"]),
        "+none",
        "no filter created"
    );
    assert_eq!(server.command(&["DBSIZE"]), ":0", "no tombstone left");
    assert!(f.info().expect_err("gone").is_missing());
    assert!(f.download().expect_err("gone").is_missing());

    // Re-created through this crate by someone else: a new creation id.
    let _other = RedisBloomFilter::reserve(con(&server), "lost", &options).unwrap();
    let err = f.try_contains("url:1").expect_err("another filter now");
    assert!(matches!(err, Error::Recreated { .. }), "{err:?}");
    let err = f.try_insert("url:1").expect_err("another filter now");
    assert!(matches!(err, Error::Recreated { .. }), "{err:?}");
    assert_eq!(
        server.command(&["BF.CARD", "lost"]),
        ":0",
        "nothing written into the other filter"
    );

    // Opened again, it works; a filter made by another client (no id) opens too.
    let mut f = RedisBloomFilter::open(con(&server), "lost").unwrap();
    assert!(f.try_insert("x").unwrap());
    assert!(f.try_contains("x").unwrap());
    assert_eq!(
        server.command(&["BF.RESERVE", "plain", "0.01", "100"]),
        "+OK"
    );
    let mut plain = RedisBloomFilter::open(con(&server), "plain").unwrap();
    assert!(plain.try_insert("y").unwrap());
    assert!(plain.try_contains("y").unwrap());

    // Existing names, other types, missing filters.
    let err = RedisBloomFilter::reserve(con(&server), "lost", &options).unwrap_err();
    assert!(matches!(err, Error::AlreadyExists { .. }), "{err:?}");
    server.command(&["SET", "str", "v"]);
    let err = RedisBloomFilter::open(con(&server), "str").unwrap_err();
    assert!(matches!(err, Error::WrongType { .. }), "{err:?}");
    let err = RedisBloomFilter::open(con(&server), "nothing").unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    let err = RedisBloomFilter::reserve(con(&server), "a{}b", &options).unwrap_err();
    assert!(matches!(err, Error::InvalidName { .. }), "{err:?}");

    // Lost alone (the id key stays) and made again by a plain client's BF.ADD, which
    // creates a default filter: it holds fewer keys than this client saw, so it is another.
    f.try_insert_batch(keys(0..100)).unwrap();
    assert!(f.try_contains("url:5").unwrap());
    server.command(&["DEL", "lost"]);
    server.command(&["BF.ADD", "lost", "intruder"]);
    let err = f.try_contains("url:5").expect_err("another filter now");
    assert!(matches!(err, Error::Recreated { .. }), "{err:?}");
    let err = f.try_insert("url:5").expect_err("another filter now");
    assert!(matches!(err, Error::Recreated { .. }), "{err:?}");
    assert_eq!(
        server.command(&["BF.CARD", "lost"]),
        ":1",
        "nothing written into it"
    );
    let mut f = RedisBloomFilter::open(con(&server), "lost").unwrap();

    // Names of the keys kept next to a filter are refused.
    let err = RedisBloomFilter::open(con(&server), "x:bloomkit-id").unwrap_err();
    assert!(matches!(err, Error::InvalidName { .. }), "{err:?}");
    // And the module-free filters' keys (found: a RedisBloom filter named
    // `bloomkit:{mf3#0}:delta` was deleted by an insert into the module-free filter `mf3`).
    for name in [
        "bloomkit:{mf3#0}:delta",
        "bloomkit:{mf3#0}:shelter",
        "bloomkit:{x}",
    ] {
        let err = RedisBloomFilter::reserve(con(&server), name, &options).unwrap_err();
        assert!(matches!(err, Error::InvalidName { .. }), "{name}: {err:?}");
    }

    // Deleted: both keys go.
    f.try_insert("y").unwrap();
    f.delete().unwrap();
    assert_eq!(
        server.command(&["EXISTS", "lost", "{lost}:bloomkit-untagged-id"]),
        ":0"
    );
}

#[test]
fn a_load_is_seen_whole_or_not_at_all() {
    let Some(server) = server() else {
        return;
    };
    let mut chain = RedisBloomChain::new(1_000, 0.01, Some(2)).unwrap();
    chain.insert_batch(keys(0..5_000)).unwrap();
    let f = RedisBloomFilter::load(con(&server), "{tagged}:loaded", &chain, &Limits::default())
        .unwrap();
    // The staged copy became the filter: only the filter and its id remain.
    let mut all = match server.query(&["KEYS", "*"]) {
        Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                Value::Bulk(b) => String::from_utf8(b).unwrap(),
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    all.sort();
    assert_eq!(all, ["{tagged}:loaded", "{tagged}:loaded:bloomkit-id"]);
    assert_eq!(
        server.command(&["TTL", "{tagged}:loaded"]),
        ":-1",
        "no expiry left"
    );
    drop(f);
    // Loading over an existing name is refused and leaves no staged copy behind.
    let err = RedisBloomFilter::load(con(&server), "{tagged}:loaded", &chain, &Limits::default())
        .unwrap_err();
    assert!(matches!(err, Error::AlreadyExists { .. }), "{err:?}");
    assert_eq!(server.command(&["DBSIZE"]), ":2");
}

#[test]
fn bad_options_a_full_filter_and_a_server_without_the_module_are_typed_errors() {
    let Some(server) = server() else {
        return;
    };
    for (capacity, rate, expansion) in [
        (0, 0.01, Some(2)),
        (10, 0.0, Some(2)),
        (10, 1.0, None),
        (10, f64::NAN, None),
        (10, 0.01, Some(0)),
    ] {
        let err = RedisBloomFilter::reserve(
            con(&server),
            "bad",
            &RedisBloomOptions::new(capacity, rate).expansion(expansion),
        )
        .unwrap_err();
        assert!(matches!(err, Error::Filter(_)), "{err:?}");
        assert!(RedisBloomChain::new(capacity, rate, expansion).is_err());
    }
    assert_eq!(server.command(&["DBSIZE"]), ":0");

    let mut f = RedisBloomFilter::reserve(
        con(&server),
        "small",
        &RedisBloomOptions::new(50, 0.01).expansion(None),
    )
    .unwrap();
    let err = f.try_insert_batch(keys(0..1_000)).unwrap_err();
    assert!(matches!(err, Error::Full { .. }), "{err:?}");
    let mut local = RedisBloomChain::new(50, 0.01, None).unwrap();
    let local_err = keys(0..1_000).iter().find_map(|k| local.insert(k).err());
    assert!(matches!(local_err, Some(Error::Full { .. })));
    assert_eq!(
        f.count().unwrap(),
        local.len(),
        "the same keys went in before it filled"
    );
    assert_eq!(f.info().unwrap().expansion, None);

    let Some(plain) = RedisServer::start(&[]) else {
        return;
    };
    let err = RedisBloomFilter::open(con(&plain), "x").unwrap_err();
    assert!(matches!(err, Error::NoModule { .. }), "{err:?}");
    let err =
        RedisBloomFilter::reserve(con(&plain), "x", &RedisBloomOptions::new(10, 0.01)).unwrap_err();
    assert!(matches!(err, Error::NoModule { .. }), "{err:?}");
}

#[test]
fn a_stalled_or_stopped_server_is_a_timeout_or_a_connection_error() {
    let Some(mut server) = server() else {
        return;
    };
    let limit = Duration::from_millis(500);
    let mut f = RedisBloomFilter::reserve(
        con(&server),
        "stall",
        &RedisBloomOptions::new(10_000, 0.01).limits(Limits::new().timeout(Some(limit))),
    )
    .unwrap();
    f.try_insert_batch(keys(0..100)).unwrap();
    let pid = server.pid().to_string();
    let kill = |sig: &str| {
        assert!(std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success());
    };
    kill("-STOP");
    let started = std::time::Instant::now();
    let lookup = f.try_contains_batch(keys(0..100), &mut Vec::new());
    let insert = f.try_insert_batch(keys(100..200));
    let took = started.elapsed();
    kill("-CONT");
    assert!(matches!(lookup, Err(Error::Timeout { .. })), "{lookup:?}");
    assert!(matches!(insert, Err(Error::Timeout { .. })), "{insert:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The filter goes on after the stall (a new connection: the old one was retired).
    let mut f = RedisBloomFilter::open(con(&server), "stall").unwrap();
    let mut out = Vec::new();
    f.try_contains_batch(keys(0..100), &mut out).unwrap();
    assert!(out.iter().all(|&b| b));

    server.stop();
    let err = f.try_contains("url:1").unwrap_err();
    assert!(matches!(err, Error::Redis(_)), "{err:?}");
}

#[test]
fn the_header_chunk_matches_the_modules_dump() {
    let Some(server) = server() else {
        return;
    };
    assert_eq!(
        server.command(&["BF.RESERVE", "f", "0.001", "5000", "EXPANSION", "3"]),
        "+OK"
    );
    for k in keys(0..20_000) {
        server.command(&["BF.ADD", "f", &k]);
    }
    let mut f = RedisBloomFilter::open(con(&server), "f").unwrap();
    let copy = f.download().unwrap();
    let mut local = RedisBloomChain::new(5000, 0.001, Some(3)).unwrap();
    for k in keys(0..20_000) {
        local.insert(k).unwrap();
    }
    assert_eq!(copy, local);
    match server.query(&["BF.SCANDUMP", "f", "0"]) {
        Value::Array(items) => match &items[1] {
            Value::Bulk(header) => assert_eq!(header, &local.header()),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}
