//! Faults on a real `redis-server`, and what the caller sees: always a typed error, never a
//! panic, never "absent" for a key that was inserted.

use std::time::Duration;

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{Error, Options, RedisFilter};
use bloomkit_testkit::redis_server::RedisServer;

type Shared = RedisFilter<BlockedBloomFilter<str>>;

fn open(server: &RedisServer, name: &str, options: &Options) -> Result<Shared, Error> {
    RedisFilter::connect_or_create(&server.url(), name, options)
}

fn keys(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("url:{i}")).collect()
}

#[test]
fn server_stopped_mid_batch_is_an_error_and_a_restart_and_re_create_works() {
    let Some(mut server) = RedisServer::start(&[]) else {
        return;
    };
    let options = Options::new(2_000_000, 0.01);
    let mut f = open(&server, "stopped", &options).unwrap();
    let bits = f.keys()[0].1.to_owned();
    let big = keys(0..1_000_000);
    let inserting = std::thread::spawn(move || {
        let out = f.insert_batch(big.iter().map(String::as_str));
        (f, out)
    });
    // Stopped once the first script calls of the batch have set bits, before the last.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while server.command(&["BITCOUNT", &bits]) == ":0" {
        assert!(
            std::time::Instant::now() < deadline,
            "the batch never started"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    server.stop();
    let (mut f, out) = inserting.join().expect("no panic");
    let err = out.expect_err("the server was stopped mid-batch");
    assert!(matches!(err, Error::Redis(_)), "{err:?}");
    let err = f.contains("url:1").expect_err("the server is gone");
    assert!(matches!(err, Error::Redis(_)), "{err:?}");

    // Restarted empty: the old filter is gone, which is an error, not "absent".
    server.restart();
    match RedisFilter::<BlockedBloomFilter<str>>::open(
        redis::Client::open(server.url())
            .unwrap()
            .get_connection()
            .unwrap(),
        "stopped",
    ) {
        Err(Error::NotFound { .. }) => {}
        other => panic!("{other:?}"),
    }
    let mut f = open(&server, "stopped", &options).unwrap();
    f.insert("url:1").unwrap();
    assert!(f.contains("url:1").unwrap());
}

#[test]
fn a_filter_re_created_under_a_running_client_is_a_typed_error() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let mut a = open(&server, "recreated", &Options::new(10_000, 0.01)).unwrap();
    a.insert_batch(keys(0..100).iter().map(String::as_str))
        .unwrap();

    let old_bits = a.keys()[0].1.to_owned();
    let b = open(&server, "recreated", &Options::new(10_000, 0.01)).unwrap();
    b.delete().unwrap();
    let b = open(&server, "recreated", &Options::new(50_000, 0.001)).unwrap();

    for err in [
        a.insert("url:1").unwrap_err(),
        a.insert_batch(keys(0..1000).iter().map(String::as_str))
            .unwrap_err(),
        a.contains("url:1").unwrap_err(),
        a.info().unwrap_err(),
    ] {
        assert!(matches!(err, Error::Recreated { .. }), "{err:?}");
    }
    // The old client's refused inserts left nothing: the new filter's bits (under the same
    // key: a shard's bits have one name) are all 0.
    assert_eq!(old_bits, b.keys()[0].1);
    assert_eq!(server.command(&["BITCOUNT", b.keys()[0].1]), ":0");
    // Opening it again with the old parameters names the first field that differs.
    match open(&server, "recreated", &Options::new(10_000, 0.01)) {
        Err(Error::Mismatch {
            field,
            expected,
            found,
            ..
        }) => {
            assert_eq!(field, "bits", "{expected} vs {found}");
        }
        other => panic!("{other:?}"),
    }
    // Same bits and k, another seed: still refused.
    match open(&server, "recreated", &Options::new(50_000, 0.001).seed(9)) {
        Err(Error::Mismatch { field: "seed", .. }) => {}
        other => panic!("{other:?}"),
    }
    // A filter of the previous key layout (format 1) is refused by name, not misread.
    server.command(&["HSET", b.keys()[0].0, "format", "1"]);
    match open(&server, "recreated", &Options::new(50_000, 0.001)) {
        Err(Error::Mismatch {
            field: "format", ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn flushed_keys_are_an_error_on_lookup_not_absent() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    for shards in [1, 3] {
        let name = format!("flushed{shards}");
        let mut f = open(&server, &name, &Options::new(10_000, 0.01).shards(shards)).unwrap();
        f.insert("url:1").unwrap();
        assert_eq!(server.command(&["FLUSHALL"]), "+OK");
        for err in [
            f.contains("url:1").unwrap_err(),
            f.insert("url:2").unwrap_err(),
        ] {
            assert!(matches!(err, Error::Missing { .. }), "{err:?}");
        }
    }
    // Only the bits gone (an eviction of one key): also an error.
    let mut f = open(&server, "evicted", &Options::new(10_000, 0.01)).unwrap();
    f.insert("url:1").unwrap();
    server.command(&["DEL", f.keys()[0].1]);
    let err = f.contains("url:1").unwrap_err();
    assert!(
        matches!(err, Error::Missing { .. }) && err.is_missing(),
        "{err:?}"
    );
    // One shard of three gone: opening does not re-create it empty.
    let f = open(&server, "sharded", &Options::new(10_000, 0.01).shards(3)).unwrap();
    let (cfg, bits) = f.keys()[2];
    server.command(&["DEL", cfg, bits]);
    let err = open(&server, "sharded", &Options::new(10_000, 0.01).shards(3)).unwrap_err();
    assert!(matches!(err, Error::Missing { .. }), "{err:?}");
}

#[test]
fn a_wrong_password_is_an_auth_error() {
    let Some(server) = RedisServer::start(&["--requirepass", "s3cret"]) else {
        return;
    };
    let url = format!("redis://:wrong@127.0.0.1:{}/", server.port());
    let err = Shared::connect_or_create(&url, "auth", &Options::new(1_000, 0.01)).unwrap_err();
    assert!(matches!(err, Error::Auth(_)), "{err:?}");
    let url = format!("redis://:s3cret@127.0.0.1:{}/", server.port());
    let mut f = Shared::connect_or_create(&url, "auth", &Options::new(1_000, 0.01)).unwrap();
    f.insert("k").unwrap();
    assert!(f.contains("k").unwrap());
    // No password at all: refused by the server on the first command.
    let err =
        Shared::connect_or_create(&server.url(), "auth", &Options::new(1_000, 0.01)).unwrap_err();
    assert!(matches!(err, Error::Auth(_) | Error::Redis(_)), "{err:?}");
}

#[test]
fn maxmemory_reached_refuses_writes_with_a_typed_error_and_lookups_go_on() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let mut f = open(&server, "oom", &Options::new(10_000, 0.01)).unwrap();
    f.insert("before").unwrap();
    assert_eq!(server.command(&["CONFIG", "SET", "maxmemory", "1"]), "+OK");
    let err = f.insert("during").unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    assert!(
        f.contains("before").unwrap(),
        "lookups still run under maxmemory"
    );
    let err = open(&server, "oom-new", &Options::new(10_000, 0.01)).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    assert_eq!(server.command(&["CONFIG", "SET", "maxmemory", "0"]), "+OK");
    f.insert("after").unwrap();
    assert!(f.contains("after").unwrap());
}

#[test]
fn a_key_of_another_type_at_the_filters_name_is_a_typed_error() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    server.command(&["SET", "bloomkit:{taken#0}:cfg", "not a hash"]);
    let err = open(&server, "taken", &Options::new(1_000, 0.01)).unwrap_err();
    assert!(matches!(err, Error::WrongType { .. }), "{err:?}");
    // Replaced under a running client.
    let mut f = open(&server, "replaced", &Options::new(1_000, 0.01)).unwrap();
    let bits = f.keys()[0].1.to_owned();
    server.command(&["DEL", &bits]);
    server.command(&["SADD", &bits, "x"]);
    let err = f.contains("k").unwrap_err();
    assert!(matches!(err, Error::WrongType { .. }), "{err:?}");
    // A configuration edited by hand: a k no filter has is corrupt, not a panic.
    open(&server, "edited", &Options::new(1_000, 0.01)).unwrap();
    server.command(&["HSET", "bloomkit:{edited#0}:cfg", "hashes", "0"]);
    let con = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let err = RedisFilter::<BlockedBloomFilter<str>>::open(con, "edited").unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err:?}");
    // Bits of the wrong length.
    let mut f = open(&server, "short", &Options::new(1_000, 0.01)).unwrap();
    server.command(&["SET", f.keys()[0].1, "abc"]);
    let err = f.contains("k").unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err:?}");
}

#[test]
fn bad_names_and_options_are_refused_before_any_command() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    for name in ["", "a b", "x{y}", "a#1", &"n".repeat(201)] {
        let err = open(&server, name, &Options::new(1_000, 0.01)).unwrap_err();
        assert!(
            matches!(err, Error::InvalidName { .. }),
            "{name:?}: {err:?}"
        );
    }
    for (items, fpr) in [(0, 0.01), (1_000, 0.0), (1_000, 1.0), (1_000, f64::NAN)] {
        let err = open(&server, "bad", &Options::new(items, fpr)).unwrap_err();
        assert!(matches!(err, Error::Filter(_)), "{items} {fpr}: {err:?}");
    }
    let err = open(&server, "bad", &Options::new(1_000, 0.01).shards(0)).unwrap_err();
    assert!(matches!(err, Error::InvalidShards { .. }), "{err:?}");
    let err = open(&server, "bad", &Options::new(1_000, 0.01).shards(100_000)).unwrap_err();
    assert!(matches!(err, Error::InvalidShards { .. }), "{err:?}");
    let err = open(
        &server,
        "bad",
        &Options::new(u64::MAX / 4096, 0.01).shards(u32::MAX),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidShards { .. }), "{err:?}");
    let err = RedisFilter::<bloomkit_classic::BloomFilter<str>>::connect_or_create(
        &server.url(),
        "bad",
        &Options::new(1_000, 0.01).shards(2),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidShards { .. }), "{err:?}");
    // A layout other than the filter's: named.
    open(&server, "blocked", &Options::new(1_000, 0.01)).unwrap();
    let con = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    match RedisFilter::<bloomkit_classic::BloomFilter<str>>::open(con, "blocked") {
        Err(Error::Mismatch {
            field: "layout", ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // Nothing was written for the refused ones.
    assert_eq!(server.command(&["EXISTS", "bloomkit:{bad#0}:cfg"]), ":0");
}

/// A connection that deletes the filter's bits right after the first command of every
/// pipeline group of several commands: the guard of a lookup has passed, the reads have not
/// run. What a `DEL`, an eviction or a `FLUSHALL` from elsewhere does at the worst moment.
struct DeleteAfterGuard {
    con: redis::Connection,
    bits: String,
}

impl bloomkit_redis::Connection for DeleteAfterGuard {
    async fn run(
        &mut self,
        batch: &bloomkit_redis::Batch,
        round: &mut bloomkit_redis::Round,
    ) -> redis::RedisResult<bloomkit_redis::Replies> {
        let mut injected = Vec::new();
        let groups = batch
            .to_cmds()
            .into_iter()
            .map(|mut group| {
                let inject = group.len() > 1;
                if inject {
                    let mut del = redis::cmd("DEL");
                    del.arg(&self.bits);
                    group.insert(1, del);
                }
                injected.push(inject);
                group
            })
            .collect();
        let mut out = self
            .con
            .run(&bloomkit_redis::Batch::from_cmds(groups), round)
            .await?;
        for (values, inject) in out.groups.iter_mut().zip(injected) {
            if inject {
                values.remove(1);
            }
        }
        Ok(out)
    }
}

#[test]
fn bits_gone_between_the_guard_and_the_reads_are_an_error_not_absent() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let keys = keys(0..100);
    let mut blocked = open(&server, "raced", &Options::new(1_000, 0.01)).unwrap();
    let mut classic: RedisFilter<bloomkit_classic::BloomFilter<str>> =
        RedisFilter::connect_or_create(&server.url(), "raced-classic", &Options::new(1_000, 0.01))
            .unwrap();
    blocked
        .insert_batch(keys.iter().map(String::as_str))
        .unwrap();
    classic
        .insert_batch(keys.iter().map(String::as_str))
        .unwrap();
    let raced = |bits: &str| DeleteAfterGuard {
        con: client.get_connection().unwrap(),
        bits: bits.to_owned(),
    };

    let mut f: RedisFilter<BlockedBloomFilter<str>, _> =
        RedisFilter::open(raced(blocked.keys()[0].1), "raced").unwrap();
    let mut out = Vec::new();
    let err = f
        .contains_batch(keys.iter().map(String::as_str), &mut out)
        .unwrap_err();
    assert!(matches!(err, Error::Missing { .. }), "{err:?}");
    assert!(out.is_empty(), "no answers on an error");

    let mut f: RedisFilter<bloomkit_classic::BloomFilter<str>, _> =
        RedisFilter::open(raced(classic.keys()[0].1), "raced-classic").unwrap();
    let err = f
        .contains_batch(keys.iter().map(String::as_str), &mut out)
        .unwrap_err();
    assert!(matches!(err, Error::Missing { .. }), "{err:?}");
    assert!(out.is_empty(), "no answers on an error");
}

#[test]
fn flushed_scripts_are_loaded_again_and_every_call_goes_on() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let mut f = open(&server, "reload", &Options::new(10_000, 0.01)).unwrap();
    let keys = keys(0..500);
    f.insert_batch(keys.iter().map(String::as_str)).unwrap();
    for _ in 0..2 {
        assert_eq!(server.command(&["SCRIPT", "FLUSH"]), "+OK");
        let mut out = Vec::new();
        f.contains_batch(keys.iter().map(String::as_str), &mut out)
            .unwrap();
        assert!(out.iter().all(|&found| found), "every inserted key found");
        assert_eq!(server.command(&["SCRIPT", "FLUSH"]), "+OK");
        assert!(f.info().unwrap().ones > 0);
        assert_eq!(server.command(&["SCRIPT", "FLUSH"]), "+OK");
        f.insert("after a flush").unwrap();
        assert!(f.contains("after a flush").unwrap());
    }
}
