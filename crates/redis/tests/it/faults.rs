//! Faults on a real `redis-server`, and what the caller sees: always a typed error, never a
//! panic, never "absent" for a key that was inserted.

use std::time::Duration;

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{Error, Options, RedisFilter, RespConnection};
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
        let out = f.try_insert_batch(big.iter().map(String::as_str));
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
    // The connection failed part way: it is retired, never read again.
    let err = f.try_contains("url:1").expect_err("the server is gone");
    assert!(matches!(err, Error::Retired { .. }), "{err:?}");

    // Restarted empty: the old filter is gone, which is an error, not "absent".
    server.restart();
    match RedisFilter::<BlockedBloomFilter<str>>::open(
        RespConnection::open(server.url(), None).unwrap(),
        "stopped",
    ) {
        Err(Error::NotFound { .. }) => {}
        other => panic!("{other:?}"),
    }
    let mut f = open(&server, "stopped", &options).unwrap();
    f.try_insert("url:1").unwrap();
    assert!(f.try_contains("url:1").unwrap());
}

#[test]
fn a_filter_re_created_under_a_running_client_is_a_typed_error() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let mut a = open(&server, "recreated", &Options::new(10_000, 0.01)).unwrap();
    a.try_insert_batch(keys(0..100).iter().map(String::as_str))
        .unwrap();

    let old_bits = a.keys()[0].1.to_owned();
    let b = open(&server, "recreated", &Options::new(10_000, 0.01)).unwrap();
    b.delete().unwrap();
    let b = open(&server, "recreated", &Options::new(50_000, 0.001)).unwrap();

    for err in [
        a.try_insert("url:1").unwrap_err(),
        a.try_insert_batch(keys(0..1000).iter().map(String::as_str))
            .unwrap_err(),
        a.try_contains("url:1").unwrap_err(),
        a.info().unwrap_err(),
    ] {
        assert!(matches!(err, Error::Recreated { .. }), "{err:?}");
    }
    // The old client's refused inserts left nothing: the new filter's bits (under the same
    // key: a shard's bits have one name) are all 0.
    assert_eq!(old_bits, b.keys()[0].1);
    assert_eq!(server.command(&["BITCOUNT", b.keys()[0].1]), ":0");
    // ... and nothing of the refusal stays: the bits are the new filter's string, in place.
    assert_eq!(server.command(&["TYPE", b.keys()[0].1]), "+string");
    assert_eq!(server.command(&["DBSIZE"]), ":2");
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
        f.try_insert("url:1").unwrap();
        assert_eq!(server.command(&["FLUSHALL"]), "+OK");
        for err in [
            f.try_contains("url:1").unwrap_err(),
            f.try_insert("url:2").unwrap_err(),
        ] {
            assert!(matches!(err, Error::Missing { .. }), "{err:?}");
        }
    }
    // Only the bits gone (an eviction of one key): also an error.
    let mut f = open(&server, "evicted", &Options::new(10_000, 0.01)).unwrap();
    f.try_insert("url:1").unwrap();
    server.command(&["DEL", f.keys()[0].1]);
    let err = f.try_contains("url:1").unwrap_err();
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
    f.try_insert("k").unwrap();
    assert!(f.try_contains("k").unwrap());
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
    f.try_insert("before").unwrap();
    assert_eq!(server.command(&["CONFIG", "SET", "maxmemory", "1"]), "+OK");
    let err = f.try_insert("during").unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    assert!(
        f.try_contains("before").unwrap(),
        "lookups still run under maxmemory"
    );
    let err = open(&server, "oom-new", &Options::new(10_000, 0.01)).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    assert_eq!(server.command(&["CONFIG", "SET", "maxmemory", "0"]), "+OK");
    f.try_insert("after").unwrap();
    assert!(f.try_contains("after").unwrap());
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
    let err = f.try_contains("k").unwrap_err();
    assert!(matches!(err, Error::WrongType { .. }), "{err:?}");
    // A configuration edited by hand: a k no filter has is corrupt, not a panic.
    open(&server, "edited", &Options::new(1_000, 0.01)).unwrap();
    server.command(&["HSET", "bloomkit:{edited#0}:cfg", "hashes", "0"]);
    let con = RespConnection::open(server.url(), None).unwrap();
    let err = RedisFilter::<BlockedBloomFilter<str>>::open(con, "edited").unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err:?}");
    // Bits of the wrong length.
    let mut f = open(&server, "short", &Options::new(1_000, 0.01)).unwrap();
    server.command(&["SET", f.keys()[0].1, "abc"]);
    let err = f.try_contains("k").unwrap_err();
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
    let con = RespConnection::open(server.url(), None).unwrap();
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
/// pipeline group of several commands (past the `ECHO` of the filter's marker that ends
/// each group): the guard of a lookup has passed, the reads have not run. What a `DEL`, an eviction or a `FLUSHALL` from elsewhere does at the worst moment.
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
                let inject = group.len() > 2;
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
        .try_insert_batch(keys.iter().map(String::as_str))
        .unwrap();
    classic
        .try_insert_batch(keys.iter().map(String::as_str))
        .unwrap();
    let raced = |bits: &str| DeleteAfterGuard {
        con: client.get_connection().unwrap(),
        bits: bits.to_owned(),
    };

    let mut f: RedisFilter<BlockedBloomFilter<str>, _> =
        RedisFilter::open(raced(blocked.keys()[0].1), "raced").unwrap();
    let mut out = Vec::new();
    let err = f
        .try_contains_batch(keys.iter().map(String::as_str), &mut out)
        .unwrap_err();
    assert!(matches!(err, Error::Missing { .. }), "{err:?}");
    assert!(out.is_empty(), "no answers on an error");

    let mut f: RedisFilter<bloomkit_classic::BloomFilter<str>, _> =
        RedisFilter::open(raced(classic.keys()[0].1), "raced-classic").unwrap();
    let err = f
        .try_contains_batch(keys.iter().map(String::as_str), &mut out)
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
    f.try_insert_batch(keys.iter().map(String::as_str)).unwrap();
    for _ in 0..2 {
        assert_eq!(server.command(&["SCRIPT", "FLUSH"]), "+OK");
        let mut out = Vec::new();
        f.try_contains_batch(keys.iter().map(String::as_str), &mut out)
            .unwrap();
        assert!(out.iter().all(|&found| found), "every inserted key found");
        assert_eq!(server.command(&["SCRIPT", "FLUSH"]), "+OK");
        assert!(f.info().unwrap().ones > 0);
        assert_eq!(server.command(&["SCRIPT", "FLUSH"]), "+OK");
        f.try_insert("after a flush").unwrap();
        assert!(f.try_contains("after a flush").unwrap());
    }
}

/// Sends `signal` (`STOP`, `CONT`) to the process `pid`.
fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{signal} {pid}");
}

#[test]
fn a_stalled_server_ends_every_call_at_its_deadline_and_the_filter_goes_on_after() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let limit = Duration::from_secs(1);
    let mut f = open(
        &server,
        "stalled",
        &Options::new(100_000, 0.01).timeout(Some(limit)),
    )
    .unwrap();
    let keys = keys(0..1_000);
    f.try_insert_batch(keys.iter().map(String::as_str)).unwrap();
    let absent = self::keys(1_000_000..1_001_000);

    signal(server.pid(), "STOP");
    let mut out = Vec::new();
    let started = std::time::Instant::now();
    let lookup = f.try_contains_batch(keys.iter().map(String::as_str), &mut out);
    let lookup_took = started.elapsed();
    let started = std::time::Instant::now();
    let insert = f.try_insert_batch(absent.iter().map(String::as_str));
    let insert_took = started.elapsed();
    signal(server.pid(), "CONT");

    match lookup {
        Err(Error::Timeout {
            limit: l, inserted, ..
        }) => {
            assert_eq!(l, limit);
            assert!(inserted.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert!(out.is_empty(), "no answers on an error");
    assert!(matches!(insert, Err(Error::Timeout { .. })), "{insert:?}");
    for took in [lookup_took, insert_took] {
        assert!(
            took <= limit + limit / 10,
            "a call took {took:?} with a deadline of {limit:?}"
        );
    }

    // Once the server runs again, the replies the cut calls left unread are read first and
    // dropped: every answer is this call's own.
    for _ in 0..3 {
        f.try_contains_batch(keys.iter().map(String::as_str), &mut out)
            .unwrap();
        assert!(out.iter().all(|&found| found), "no false negative");
        out.clear();
    }
    // The cut insert may or may not have run: inserted again, every key is in.
    f.try_insert_batch(absent.iter().map(String::as_str))
        .unwrap();
    f.try_contains_batch(absent.iter().map(String::as_str), &mut out)
        .unwrap();
    assert!(out.iter().all(|&found| found), "no false negative");
}

#[test]
fn a_server_that_answers_slowly_cannot_stretch_a_call_past_its_deadline() {
    use bloomkit_testkit::resp_server::{default_reply, LyingServer, Reply};
    // A server that answers every command right, but each range read a quarter second late:
    // with a timeout per reply, a 100-key lookup (a range read per key: the filter is large
    // enough that no two keys' blocks are near) would take 25 s.
    let real = match RedisServer::start(&[]) {
        Some(s) => s,
        None => return,
    };
    let port = real.port();
    let proxy = LyingServer::start(move |args| {
        if let Some(reply) = default_reply(args) {
            return reply;
        }
        use std::io::Write;
        let mut con = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        con.write_all(&bloomkit_testkit::resp::encode_command(args))
            .unwrap();
        let value = bloomkit_testkit::resp::read_value(&mut std::io::BufReader::new(con))
            .unwrap()
            .unwrap();
        let reply = Reply::value(&value);
        if args[0] == b"GETRANGE" {
            reply.after(Duration::from_millis(250))
        } else {
            reply
        }
    });
    let limit = Duration::from_secs(1);
    let mut f = open(&real, "slow", &Options::new(10_000_000, 0.01)).unwrap();
    f.try_insert_batch(keys(0..100).iter().map(String::as_str))
        .unwrap();
    let con = RespConnection::open(proxy.url(), None).unwrap();
    let mut slow: Shared = RedisFilter::open_with(
        con,
        "slow",
        &bloomkit_redis::Limits::new().timeout(Some(limit)),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let mut out = Vec::new();
    let err = slow
        .try_contains_batch(keys(0..100).iter().map(String::as_str), &mut out)
        .unwrap_err();
    let took = started.elapsed();
    assert!(err.is_timeout(), "{err:?}");
    assert!(took <= limit + limit / 10, "took {took:?}");
}

#[test]
fn lost_bits_are_a_typed_error_at_open_and_clear_delete_and_destroy_get_out() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let options = Options::new(10_000, 0.01).shards(4);
    for how in ["DEL", "PEXPIRE"] {
        let name = format!("lost-{how}");
        let mut f = open(&server, &name, &options).unwrap();
        f.try_insert_batch(keys(0..1_000).iter().map(String::as_str))
            .unwrap();
        let bits = f.keys()[2].1.to_owned();
        match how {
            "DEL" => server.command(&["DEL", &bits]),
            _ => server.command(&["PEXPIRE", &bits, "1"]),
        };
        std::thread::sleep(Duration::from_millis(20));
        // Neither open nor open_or_create answers Ok over lost bits: the error names them.
        for err in [
            open(&server, &name, &options).unwrap_err(),
            Shared::connect(&server.url(), &name).unwrap_err(),
        ] {
            match err {
                Error::Missing { detail, .. } => assert!(detail.contains(&bits), "{detail}"),
                other => panic!("{other:?}"),
            }
        }
        // The handle that was open says so on every call; clear() makes it whole (and
        // empty, which is what clearing asks for).
        let err = f
            .try_insert_batch(keys(0..1_000).iter().map(String::as_str))
            .unwrap_err();
        assert!(err.is_missing(), "{err:?}");
        // The refused writes left nothing where the bits were (no stray string, no marker).
        assert_eq!(server.command(&["EXISTS", &bits]), ":0");
        f.try_clear().unwrap();
        f.try_insert("url:1").unwrap();
        assert!(f.try_contains("url:1").unwrap());
        assert!(open(&server, &name, &options).is_ok());
        // Lost again: delete() works too.
        server.command(&["DEL", &bits]);
        f.delete().unwrap();
        assert_eq!(server.command(&["DBSIZE"]), ":0");
    }
    // Without a handle: destroy() removes whatever is left, and the name is free again.
    let f = open(&server, "orphaned", &options).unwrap();
    let bits = f.keys()[1].1.to_owned();
    server.command(&["DEL", &bits]);
    let mut con = RespConnection::open(server.url(), None).unwrap();
    assert_eq!(Shared::destroy(&mut con, "orphaned", None).unwrap(), 7);
    assert_eq!(server.command(&["DBSIZE"]), ":0");
    assert_eq!(Shared::destroy(&mut con, "orphaned", None).unwrap(), 0);
    open(&server, "orphaned", &options).unwrap();
}

#[test]
fn a_lost_configuration_leaves_no_stray_bits_and_no_raw_error() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let options = Options::new(10_000, 0.01);
    let mut old = open(&server, "config-lost", &options).unwrap();
    old.try_insert("url:1").unwrap();
    let (cfg, bits) = (old.keys()[0].0.to_owned(), old.keys()[0].1.to_owned());
    server.command(&["DEL", &cfg]);
    // The running client: a typed error, never a raw WRONGTYPE or an answer.
    for err in [
        old.try_contains("url:1").unwrap_err(),
        old.try_insert("url:2").unwrap_err(),
    ] {
        assert!(err.is_missing(), "{err:?}");
    }
    // Re-creating does not quietly leave the old bits behind: it says what is there.
    match open(&server, "config-lost", &options) {
        Err(Error::Missing { detail, .. }) => {
            assert!(
                detail.contains("configuration") && detail.contains(&bits),
                "{detail}"
            )
        }
        other => panic!("{other:?}"),
    }
    let mut con = RespConnection::open(server.url(), None).unwrap();
    assert_eq!(Shared::destroy(&mut con, "config-lost", None).unwrap(), 1);
    let mut new = open(&server, "config-lost", &options).unwrap();
    assert_eq!(
        server.command(&["DBSIZE"]),
        ":2",
        "one configuration, one bits key"
    );
    assert!(!new.try_contains("url:1").unwrap());
}

#[test]
fn a_creation_the_server_refuses_leaves_nothing_behind() {
    let Some(server) = RedisServer::start(&["--proto-max-bulk-len", "1mb"]) else {
        return;
    };
    let options = Options::new(1_000_000, 0.01);
    for _ in 0..2 {
        match open(&server, "refused", &options) {
            Err(Error::Refused { detail, .. }) => {
                assert!(detail.contains("proto-max-bulk-len"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(server.command(&["DBSIZE"]), ":0", "nothing written");
    }
    // Sharded so each string fits: created whole.
    let f = open(&server, "refused", &options.clone().shards(4)).unwrap();
    assert_eq!(f.shards(), 4);
    // A creation refused on its third shard takes back the two it made.
    server.command(&["CONFIG", "SET", "proto-max-bulk-len", "512mb"]);
    let mut big = open(&server, "half", &Options::new(1_000_000, 0.01).shards(4)).unwrap();
    big.try_insert("url:1").unwrap();
    assert!(open(&server, "half", &Options::new(1_000_000, 0.01).shards(4)).is_ok());
    big.delete().unwrap();
    server.command(&["SET", "bloomkit:{half2#2}:bits", "in the way"]);
    let err = open(&server, "half2", &Options::new(1_000_000, 0.01).shards(4)).unwrap_err();
    assert!(
        err.is_missing() || matches!(err, Error::WrongType { .. }),
        "{err:?}"
    );
    assert_eq!(
        server.command(&["EXISTS", "bloomkit:{half2#0}:cfg", "bloomkit:{half2#1}:cfg"]),
        ":0",
        "the shards made before the refusal are gone"
    );
}

#[test]
fn after_a_restart_without_persistence_connect_does_not_create_an_empty_filter() {
    let Some(mut server) = RedisServer::start(&[]) else {
        return;
    };
    let mut f = open(&server, "volatile", &Options::new(10_000, 0.01)).unwrap();
    f.try_insert("url:1").unwrap();
    server.restart();
    match Shared::connect(&server.url(), "volatile") {
        Err(Error::NotFound { .. }) => {}
        other => panic!("{other:?}"),
    }
    let con = RespConnection::open(server.url(), None).unwrap();
    match Shared::open(con, "volatile") {
        Err(Error::NotFound { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(server.command(&["DBSIZE"]), ":0", "nothing created");
    // create() makes it on purpose, and refuses a second time.
    let con = || RespConnection::open(server.url(), None).unwrap();
    Shared::create(con(), "volatile", &Options::new(10_000, 0.01)).unwrap();
    match Shared::create(con(), "volatile", &Options::new(10_000, 0.01)) {
        Err(Error::AlreadyExists { .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_filter_of_the_previous_key_format_opens_and_works() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let options = Options::new(10_000, 0.01);
    let mut f = open(&server, "format2", &options).unwrap();
    f.try_insert_batch(keys(0..500).iter().map(String::as_str))
        .unwrap();
    // What the previous release wrote: format 2, the bits named after the creation id.
    let (cfg, bits) = (f.keys()[0].0.to_owned(), f.keys()[0].1.to_owned());
    let id = server.command(&["HGET", &cfg, "id"]);
    server.command(&["HSET", &cfg, "format", "2"]);
    server.command(&["RENAME", &bits, &format!("{bits}:{id}")]);
    for mut g in [
        open(&server, "format2", &options).unwrap(),
        Shared::connect(&server.url(), "format2").unwrap(),
    ] {
        assert!(g.keys()[0].1.ends_with(&id));
        let mut out = Vec::new();
        g.try_contains_batch(keys(0..500).iter().map(String::as_str), &mut out)
            .unwrap();
        assert!(out.iter().all(|&x| x));
        g.try_insert("url:new").unwrap();
    }
}

/// A server that speaks the protocol but lies: it reports the configuration `config` for any
/// filter, passes every guard, and answers reads with `read`.
fn liar(
    config: &'static [(&'static str, &'static str)],
    read: fn(&[Vec<u8>]) -> bloomkit_testkit::resp_server::Reply,
) -> bloomkit_testkit::resp_server::LyingServer {
    use bloomkit_testkit::resp_server::{default_reply, LyingServer, Reply};
    LyingServer::start(move |args| {
        if let Some(reply) = default_reply(args) {
            return reply;
        }
        match args[0].as_slice() {
            // One key: the configuration is read; two: a guard or a check.
            b"EVALSHA" | b"EVAL" if args.get(2).is_some_and(|n| n == b"1") => Reply::array(
                config
                    .iter()
                    .flat_map(|(f, v)| [Reply::bulk(f.as_bytes()), Reply::bulk(v.as_bytes())])
                    .collect(),
            ),
            b"EVALSHA" | b"EVAL" => Reply::int(1),
            _ => read(args),
        }
    })
}

const HUGE: &[(&str, &str)] = &[
    ("format", "3"),
    ("layout", "blocked"),
    ("bits", "70368744177664"),
    ("hashes", "7"),
    ("hasher", "2"),
    ("seed", "0"),
    ("items", "7000000000000"),
    ("fpr", "0.01"),
    ("shards", "16384"),
    ("shard", "0"),
    ("id", "abc123"),
    ("complete", "1"),
];

#[test]
fn a_server_reporting_an_8_tib_filter_cannot_make_the_client_allocate_it() {
    use bloomkit_testkit::resp_server::Reply;
    let server = liar(HUGE, |_| Reply::error("ERR no"));
    let con = || RespConnection::open(server.url(), None).unwrap();
    match Shared::open(con(), "huge") {
        Err(Error::TooLarge {
            bits, max_bytes, ..
        }) => {
            assert_eq!(bits, 70_368_744_177_664);
            assert_eq!(max_bytes, bloomkit_redis::DEFAULT_MAX_BYTES);
        }
        other => panic!("{other:?}"),
    }
    // A client's own, lower limit is honoured the same way.
    let limits = bloomkit_redis::Limits::new().max_bytes(1 << 20);
    let err = Shared::open_with(con(), "huge", &limits).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooLarge {
                max_bytes: 1_048_576,
                ..
            }
        ),
        "{err:?}"
    );
}

const CLASSIC: &[(&str, &str)] = &[
    ("format", "3"),
    ("layout", "classic"),
    ("bits", "9592"),
    ("hashes", "7"),
    ("hasher", "2"),
    ("seed", "0"),
    ("items", "1000"),
    ("fpr", "0.01"),
    ("probes", "2"),
    ("shards", "1"),
    ("shard", "0"),
    ("id", "abc123"),
    ("complete", "1"),
];

#[test]
fn a_range_read_as_the_number_7_or_a_short_block_is_corrupt_not_an_answer() {
    use bloomkit_testkit::resp_server::Reply;
    let bits_of_seven = liar(CLASSIC, |_| Reply::int(7));
    let con = RespConnection::open(bits_of_seven.url(), None).unwrap();
    let mut f = RedisFilter::<bloomkit_classic::BloomFilter<str>>::open(con, "seven").unwrap();
    match f.try_contains("url:1") {
        Err(Error::Corrupt { detail, .. }) => assert!(detail.contains('7'), "{detail}"),
        other => panic!("{other:?}"),
    }

    let mut blocked = HUGE.to_vec();
    blocked[2] = ("bits", "1024");
    blocked[6] = ("items", "100");
    blocked[8] = ("shards", "1");
    let blocked: &'static [(&str, &str)] = Vec::leak(blocked);
    let short_blocks = liar(blocked, |_| Reply::bulk(&[0xff; 63]));
    let con = RespConnection::open(short_blocks.url(), None).unwrap();
    let mut f = Shared::open(con, "short").unwrap();
    let mut out = Vec::new();
    let err = f.try_contains_batch(["a", "b"], &mut out).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err:?}");
    assert!(out.is_empty());
}

#[test]
fn keys_evicted_under_maxmemory_are_a_typed_error_never_absent_or_a_raw_reply() {
    let Some(server) =
        RedisServer::start(&["--maxmemory", "4mb", "--maxmemory-policy", "allkeys-random"])
    else {
        return;
    };
    let mut f = open(&server, "evicted", &Options::new(10_000, 0.01)).unwrap();
    f.try_insert_batch(keys(0..1_000).iter().map(String::as_str))
        .unwrap();
    let (cfg, bits) = (f.keys()[0].0.to_owned(), f.keys()[0].1.to_owned());
    let junk = "x".repeat(10_000);
    let mut written = 0;
    while server.command(&["EXISTS", &cfg, &bits]) == ":2" {
        assert!(written < 100_000, "nothing of the filter was evicted");
        server.command(&["SET", &format!("junk:{written}"), &junk]);
        written += 1;
    }
    // One of its keys was evicted (by Redis, not by a test's DEL): every call says so.
    let mut out = Vec::new();
    for err in [
        f.try_contains_batch(keys(0..1_000).iter().map(String::as_str), &mut out)
            .unwrap_err(),
        f.try_insert("url:new").unwrap_err(),
        // `connect`, which never creates: by now random eviction may have taken both keys,
        // and `connect_or_create` would then (as documented) make the filter again.
        Shared::connect(&server.url(), "evicted").unwrap_err(),
    ] {
        assert!(err.is_missing(), "{err:?}");
    }
    assert!(out.is_empty());
}

#[test]
fn a_write_cut_by_the_deadline_retires_the_connection_instead_of_misreading_it() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let limit = Duration::from_secs(1);
    let mut f = open(
        &server,
        "cut",
        &Options::new(2_000_000, 0.01).timeout(Some(limit)),
    )
    .unwrap();
    let before = keys(0..1_000);
    f.try_insert_batch(before.iter().map(String::as_str))
        .unwrap();
    // A batch of about 20 MB to a paused server: the socket buffers fill and the write itself
    // runs out of time, half sent.
    let big = keys(0..100_000);
    signal(server.pid(), "STOP");
    let started = std::time::Instant::now();
    let err = f
        .try_insert_batch(big.iter().map(String::as_str))
        .unwrap_err();
    let took = started.elapsed();
    signal(server.pid(), "CONT");
    assert!(err.is_timeout(), "{err:?}");
    assert!(took <= limit + limit / 10, "took {took:?}");
    // The connection is retired: an error, never answers read from another command.
    let mut out = Vec::new();
    let err = f
        .try_contains_batch(before.iter().map(String::as_str), &mut out)
        .unwrap_err();
    assert!(err.to_string().contains("new connection"), "{err}");
    assert!(out.is_empty());
    // A new connection sees every key inserted before.
    let mut g = Shared::connect(&server.url(), "cut").unwrap();
    g.try_contains_batch(before.iter().map(String::as_str), &mut out)
        .unwrap();
    assert!(out.iter().all(|&x| x));
}

#[test]
fn push_messages_between_replies_are_not_taken_for_answers() {
    use bloomkit_testkit::resp_server::Reply;
    // Every GETRANGE reply (all bits set) is preceded by a RESP3 push frame (what client
    // tracking sends).
    let server = liar(CLASSIC, |args| {
        let number = |a: &[u8]| std::str::from_utf8(a).unwrap().parse::<usize>().unwrap();
        let len = number(&args[3]) - number(&args[2]) + 1;
        let mut bytes = b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nx\r\n".to_vec();
        bytes.extend(Reply::bulk(&vec![0xff; len]).to_bytes());
        Reply::Raw(bytes)
    });
    let con = RespConnection::open(server.url(), None).unwrap();
    let mut f = RedisFilter::<bloomkit_classic::BloomFilter<str>>::open(con, "pushed").unwrap();
    let mut out = Vec::new();
    f.try_contains_batch(["a", "b", "c"], &mut out).unwrap();
    assert_eq!(out, [true, true, true]);
}
