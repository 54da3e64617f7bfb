//! The shared filters against a network that lies: a tampering proxy in front of a real
//! server (replayed, dropped, duplicated, truncated, reordered and injected replies), and a
//! lying server for replies that never end, trickle, or come from a stopped process. No
//! false negative, a typed error, and every call within its deadline (+10%).

use std::time::{Duration, Instant};

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{
    Error, Limits, Options, RedisBloomFilter, RedisBloomOptions, RedisFilter, RespConnection,
};
use bloomkit_testkit::redis_server::RedisServer;
use bloomkit_testkit::resp_proxy::{Tamper, TamperingProxy};
use bloomkit_testkit::resp_server::{default_reply, LyingServer, Reply};

type Shared = RedisFilter<BlockedBloomFilter<str>>;

fn keys(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("url:{i}")).collect()
}

/// The two backends behind one set of calls.
enum Under {
    Free(Shared),
    Module(RedisBloomFilter),
}

impl Under {
    fn insert(&mut self, keys: &[String]) -> Result<usize, Error> {
        match self {
            Under::Free(f) => f.try_insert_batch(keys.iter().map(String::as_str)),
            Under::Module(f) => f.try_insert_batch(keys),
        }
    }

    fn contains(&mut self, keys: &[String], out: &mut Vec<bool>) -> Result<(), Error> {
        match self {
            Under::Free(f) => f.try_contains_batch(keys.iter().map(String::as_str), out),
            Under::Module(f) => f.try_contains_batch(keys, out),
        }
    }

    fn replace(&mut self, con: RespConnection) {
        match self {
            Under::Free(f) => drop(f.replace_connection(con)),
            Under::Module(f) => drop(f.replace_connection(con)),
        }
    }
}

/// An error a lying network may cause: typed, about the replies or the deadline.
fn expected(e: &Error) -> bool {
    matches!(
        e,
        Error::Corrupt { .. }
            | Error::Retired { .. }
            | Error::Timeout { .. }
            | Error::ReplyTooLarge { .. }
    )
}

/// One case: a filter opened through a proxy that tampers with reply `at`, keys inserted and
/// looked up in batches and one by one; after an error the filter gets a new connection
/// (the proxy tampers once). Every key whose insert was acknowledged is present in every
/// lookup answered, and every error is typed.
fn tampered_case(server: &RedisServer, module: bool, tamper: &Tamper, at: u64, case: u64) {
    let proxy = TamperingProxy::start(server.port(), tamper.clone(), at);
    let limit = Duration::from_millis(300);
    let con = || RespConnection::open(proxy.url(), Some(limit)).expect("a connection");
    let name = format!("tamper{case}");
    let limits = Limits::new().timeout(Some(limit));
    let opened = if module {
        RedisBloomFilter::reserve(
            con(),
            &name,
            &RedisBloomOptions::new(10_000, 0.01).limits(limits),
        )
        .map(Under::Module)
    } else {
        Shared::open_or_create(con(), &name, &Options::new(10_000, 0.01).limits(limits))
            .map(Under::Free)
    };
    let mut f = match opened {
        Ok(f) => f,
        Err(e) => {
            assert!(expected(&e), "{tamper:?} at {at}: {e:?}");
            return;
        }
    };
    let mut acked: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut errors = 0;
    let batches = [keys(0..50), keys(50..51), keys(51..120), keys(120..121)];
    for (i, batch) in batches.iter().enumerate() {
        match f.insert(batch) {
            Ok(_) => acked.extend(batch.iter().cloned()),
            Err(e) => {
                assert!(expected(&e), "{tamper:?} at {at}, insert {i}: {e:?}");
                errors += 1;
                f.replace(con());
            }
        }
        let mut probe = acked.clone();
        probe.extend(keys(1000..1000 + 20 * (i as u32 + 1)));
        for chunk in [&probe[..], &probe[probe.len() / 2..probe.len() / 2 + 1]] {
            out.clear();
            match f.contains(chunk, &mut out) {
                Ok(()) => {
                    assert_eq!(out.len(), chunk.len());
                    for (key, &present) in chunk.iter().zip(&out) {
                        assert!(
                            present || !acked.contains(key),
                            "{tamper:?} at {at} ({}): a false negative for {key}",
                            if module { "RedisBloom" } else { "module-free" }
                        );
                    }
                }
                Err(e) => {
                    assert!(expected(&e), "{tamper:?} at {at}, lookup: {e:?}");
                    assert!(out.is_empty(), "no answers with an error");
                    errors += 1;
                    f.replace(con());
                }
            }
        }
    }
    assert!(
        errors <= 2,
        "{tamper:?} at {at}: {errors} errors from one tampered reply"
    );
}

/// Row 1-2 of the lying-network issue, as a property: every kind of tampering at every
/// reply of a workload (`BLOOMKIT_QC_CASES` cases, 48 unless set; `BLOOMKIT_QC_SEED`
/// replays), both backends.
#[test]
fn a_tampering_proxy_causes_no_false_negative_only_typed_errors() {
    let Some(server) = RedisServer::start_with_redisbloom(&[]) else {
        return;
    };
    let mut rng = bloomkit_testkit::seeded_rng("tampering proxy");
    let cases = std::env::var("BLOOMKIT_QC_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48u64);
    for case in 0..cases {
        let r = rng.next_u64();
        let kinds = Tamper::all((r >> 8) as usize);
        let tamper = kinds[(r % kinds.len() as u64) as usize].clone();
        let at = (r >> 32) % 24;
        let module = (r >> 16) & 1 == 1;
        tampered_case(&server, module, &tamper, at, case);
    }
}

/// Row 1 as the issue found it: a lookup's replies delivered again. RedisBloom's filter
/// answered 4,000 false negatives of 4,000 on the next lookup.
#[test]
fn replayed_replies_are_corrupt_and_retire_the_connection() {
    let Some(server) = RedisServer::start_with_redisbloom(&[]) else {
        return;
    };
    let keys = keys(0..4000);
    let limit = Some(Duration::from_secs(2));
    for module in [true, false] {
        let name = if module { "replayed-rb" } else { "replayed-mf" };
        // The filter is made and filled directly; its lookups go through the proxy.
        let direct = RespConnection::open(server.url(), limit).unwrap();
        let mut f = if module {
            Under::Module(
                RedisBloomFilter::reserve(direct, name, &RedisBloomOptions::new(10_000, 0.01))
                    .unwrap(),
            )
        } else {
            Under::Free(Shared::open_or_create(direct, name, &Options::new(10_000, 0.01)).unwrap())
        };
        f.insert(&keys).unwrap();
        // Reply 1 of the proxied connection: the lookup's first reply, delivered with the
        // ones before it again.
        let proxy = TamperingProxy::start(server.port(), Tamper::Replay, 1);
        f.replace(RespConnection::open(proxy.url(), limit).unwrap());
        let mut out = Vec::new();
        let mut outcomes = Vec::new();
        for _ in 0..3 {
            outcomes.push(f.contains(&keys, &mut out));
            if let Ok(()) = outcomes.last().unwrap() {
                assert!(out.iter().all(|&b| b), "a false negative");
            }
        }
        assert!(proxy.tampered());
        let errs: Vec<_> = outcomes.into_iter().filter_map(Result::err).collect();
        assert!(
            matches!(errs.first(), Some(Error::Corrupt { .. })),
            "{errs:?}"
        );
        // Retired from then on, until a new connection.
        assert!(
            errs[1..].iter().all(|e| matches!(e, Error::Retired { .. })),
            "{errs:?}"
        );
        f.replace(RespConnection::open(server.url(), limit).unwrap());
        f.contains(&keys, &mut out).unwrap();
        assert!(out.iter().all(|&b| b));
    }
}

fn liar(handler: impl Fn(&[Vec<u8>]) -> Option<Reply> + Send + Sync + 'static) -> LyingServer {
    LyingServer::start(move |args: &[Vec<u8>]| {
        handler(args)
            .or_else(|| default_reply(args))
            .unwrap_or_else(|| Reply::error("ERR unexpected"))
    })
}

/// Rows 3-4: replies that never end, and replies that trickle, end in `ReplyTooLarge` or
/// `Timeout` within the deadline + 10%, the client's memory bounded by its limit.
#[test]
fn endless_and_trickled_replies_end_within_the_deadline() {
    let limit = Duration::from_millis(600);
    let cases: Vec<(&str, Reply)> = vec![
        (
            "an endless bulk string",
            Reply::Endless {
                head: b"$999999999999\r\n".to_vec(),
                fill: b"x".to_vec(),
            },
        ),
        (
            "an endless bulk string of a plausible length",
            Reply::Endless {
                head: b"$400000000\r\n".to_vec(),
                fill: b"x".to_vec(),
            },
        ),
        (
            "an endless array",
            Reply::Endless {
                head: b"*2147483647\r\n".to_vec(),
                fill: b":1\r\n".to_vec(),
            },
        ),
        (
            "an endless array of a plausible length",
            Reply::Endless {
                head: b"*1000000\r\n".to_vec(),
                fill: b"*1\r\n".to_vec(),
            },
        ),
        (
            "an endless status line",
            Reply::Endless {
                head: b"+".to_vec(),
                fill: b"O".to_vec(),
            },
        ),
        (
            "a reply trickled a byte every 100 ms",
            Reply::bulk(b"bloomkit").trickled(Duration::from_millis(100)),
        ),
    ];
    for (what, reply) in cases {
        // Every reply to the filter's commands misbehaves, configuration reads included.
        let server = liar(move |args| match args[0].as_slice() {
            b"PING" | b"CLIENT" | b"SELECT" | b"AUTH" | b"SCRIPT" => None,
            _ => Some(reply.clone()),
        });
        let started = Instant::now();
        let mut con = RespConnection::open(server.url(), Some(limit)).unwrap();
        con.set_max_reply_bytes(64 << 20);
        let err =
            Shared::open_with(con, "endless", &Limits::new().timeout(Some(limit))).expect_err(what);
        let took = started.elapsed();
        assert!(
            matches!(
                err,
                Error::ReplyTooLarge { .. } | Error::Timeout { .. } | Error::Corrupt { .. }
            ),
            "{what}: {err:?}"
        );
        assert!(took <= limit + limit / 10, "{what}: {took:?}");
        drop(server);
    }
}

/// Rows 3-4 in front of a real server: the proxy turns one reply of a lookup into one that
/// never ends, or trickles it a byte every 250 ms; the call ends in `ReplyTooLarge` or
/// `Timeout` within the deadline + 10%, both backends.
#[test]
fn a_proxy_that_never_stops_talking_or_trickles_is_bounded() {
    let Some(server) = RedisServer::start_with_redisbloom(&[]) else {
        return;
    };
    let limit = Duration::from_millis(600);
    let keys = keys(0..1_000);
    let cases = [
        Tamper::Endless(b"$999999999999\r\n".to_vec()),
        Tamper::Endless(b"$400000000\r\n".to_vec()),
        Tamper::Endless(b"*2147483647\r\n".to_vec()),
        Tamper::Trickle(Duration::from_millis(250)),
    ];
    for module in [false, true] {
        for (i, tamper) in cases.iter().enumerate() {
            let name = format!("bounded-{module}-{i}");
            let direct = RespConnection::open(server.url(), Some(limit)).unwrap();
            let mut f = if module {
                Under::Module(
                    RedisBloomFilter::reserve(
                        direct,
                        &name,
                        &RedisBloomOptions::new(10_000, 0.01)
                            .limits(Limits::new().timeout(Some(limit))),
                    )
                    .unwrap(),
                )
            } else {
                Under::Free(
                    Shared::open_or_create(
                        direct,
                        &name,
                        &Options::new(10_000, 0.01).timeout(Some(limit)),
                    )
                    .unwrap(),
                )
            };
            f.insert(&keys).unwrap();
            // Reply 0 of the proxied connection: the lookup's first.
            let proxy = TamperingProxy::start(server.port(), tamper.clone(), 0);
            let mut con = RespConnection::open(proxy.url(), Some(limit)).unwrap();
            con.set_max_reply_bytes(64 << 20);
            f.replace(con);
            let started = Instant::now();
            let mut out = Vec::new();
            let err = f.contains(&keys, &mut out).unwrap_err();
            let took = started.elapsed();
            assert!(
                matches!(err, Error::ReplyTooLarge { .. } | Error::Timeout { .. }),
                "{tamper:?}: {err:?}"
            );
            assert!(took <= limit + limit / 10, "{tamper:?}: {took:?}");
            assert!(out.is_empty());
        }
    }
}

/// Row 5: connecting to a stopped server obeys the deadline: `connect_or_create` (the
/// kernel completes the handshake for a stopped process; the first call waits) and a
/// connection that must authenticate.
#[test]
fn connecting_to_a_stopped_server_obeys_the_deadline() {
    let Some(server) = RedisServer::start(&["--requirepass", "sesame"]) else {
        return;
    };
    let url = format!("redis://:sesame@127.0.0.1:{}/", server.port());
    let limit = Duration::from_millis(500);
    let options = Options::new(1_000, 0.01).timeout(Some(limit));
    Shared::connect_or_create(&url, "stopped", &options).unwrap();
    signal(server.pid(), "STOP");
    let started = Instant::now();
    let err = Shared::connect_or_create(&url, "stopped", &options).unwrap_err();
    let took = started.elapsed();
    let started = Instant::now();
    let refused = RespConnection::open(url.as_str(), Some(limit)).unwrap_err();
    let took_auth = started.elapsed();
    signal(server.pid(), "CONT");
    assert!(
        matches!(err, Error::Redis(_) | Error::Timeout { .. }),
        "{err:?}"
    );
    assert!(
        took <= limit + limit / 10,
        "connect_or_create took {took:?}"
    );
    assert!(refused.is_timeout(), "{refused:?}");
    assert!(took_auth <= limit + limit / 10, "AUTH took {took_auth:?}");
    // Wrong credentials are Error::Auth.
    let wrong = format!("redis://:nope@127.0.0.1:{}/", server.port());
    let err = Shared::connect(&wrong, "stopped").unwrap_err();
    assert!(matches!(err, Error::Auth(_)), "{err:?}");
}

/// Row 2: an `EXEC` reply one element short (a dense insert's transaction) is `Corrupt`,
/// never an insert accepted.
#[test]
fn an_exec_reply_one_short_is_corrupt() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let limit = Some(Duration::from_secs(2));
    let direct = RespConnection::open(server.url(), limit).unwrap();
    let mut f = Shared::open_or_create(direct, "exec-short", &Options::new(1_000, 0.01)).unwrap();
    let batch = keys(0..50);
    // The same dense insert through a proxy that changes nothing tells where its EXEC reply
    // is: last but one (the marker's echo is last).
    let clean = TamperingProxy::start(server.port(), Tamper::Drop, u64::MAX);
    f.replace_connection(RespConnection::open(clean.url(), limit).unwrap());
    f.try_insert_batch(batch.iter().map(String::as_str))
        .unwrap();
    let replies = clean.replies();
    assert!(replies >= 4, "{replies} replies");
    let short = TamperingProxy::start(server.port(), Tamper::Truncate, replies - 2);
    f.replace_connection(RespConnection::open(short.url(), limit).unwrap());
    let err = f
        .try_insert_batch(batch.iter().map(String::as_str))
        .unwrap_err();
    assert!(short.tampered());
    assert!(
        matches!(&err, Error::Corrupt { detail, .. } if detail.contains("EXEC answered")),
        "{err:?}"
    );
}

/// Row 7: a signal delivered to the process during a call (a handler with `SA_RESTART`, as
/// most servers install) is retried, not an error.
#[test]
fn signals_during_calls_are_retried() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    install_handler();
    let mut f = Shared::connect_or_create(&server.url(), "signalled", &Options::new(100_000, 0.01))
        .unwrap();
    let keys = keys(0..20_000);
    f.try_insert_batch(keys.iter().map(String::as_str)).unwrap();
    let me = unsafe_pthread_self();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pinger = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut sent = 0u32;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                kill_thread(me);
                sent += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            sent
        })
    };
    let mut out = Vec::new();
    for _ in 0..20 {
        f.try_contains_batch(keys.iter().map(String::as_str), &mut out)
            .unwrap();
        assert!(out.iter().all(|&b| b));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let sent = pinger.join().unwrap();
    assert!(sent > 10, "{sent} signals");
}

/// Row 9: a connection assigned through `connection()` after a call cut by its deadline.
#[test]
fn a_connection_swapped_in_after_a_timeout_works() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let limit = Duration::from_millis(300);
    let mut f = Shared::connect_or_create(
        &server.url(),
        "swapped",
        &Options::new(1_000, 0.01).timeout(Some(limit)),
    )
    .unwrap();
    f.try_insert("a").unwrap();
    signal(server.pid(), "STOP");
    let err = f.try_contains("a").unwrap_err();
    signal(server.pid(), "CONT");
    assert!(err.is_timeout(), "{err:?}");
    *f.connection() = RespConnection::open(server.url(), Some(limit)).unwrap();
    for _ in 0..3 {
        assert!(f.try_contains("a").unwrap());
        f.try_insert("b").unwrap();
    }
    // The old connection, had it stayed, would also work: its late reply is passed over.
    let mut g = Shared::connect_or_create(
        &server.url(),
        "swapped",
        &Options::new(1_000, 0.01).timeout(Some(limit)),
    )
    .unwrap();
    signal(server.pid(), "STOP");
    assert!(g.try_contains("a").unwrap_err().is_timeout());
    signal(server.pid(), "CONT");
    std::thread::sleep(Duration::from_millis(50));
    assert!(g.try_contains("b").unwrap());
}

/// Row 12: a stopped server and a 300 ms deadline: `Timeout` within 10% (5% asserted).
#[test]
fn a_short_deadline_holds_within_ten_percent() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let limit = Duration::from_millis(300);
    let mut f = Shared::connect_or_create(
        &server.url(),
        "short",
        &Options::new(100_000, 0.01).timeout(Some(limit)),
    )
    .unwrap();
    let keys = keys(0..10_000);
    for round in 0..8 {
        f.replace_connection(RespConnection::open(server.url(), Some(limit)).unwrap());
        signal(server.pid(), "STOP");
        let started = Instant::now();
        let err = if round % 2 == 0 {
            f.try_contains("a").unwrap_err()
        } else {
            f.try_insert_batch(keys.iter().map(String::as_str))
                .unwrap_err()
        };
        let took = started.elapsed();
        signal(server.pid(), "CONT");
        assert!(err.is_timeout(), "{err:?}");
        println!("round {round}: {took:?}");
        // 10% is the promise; 5% is what the library keeps (a socket timeout of 300 ms set
        // in one piece fired up to 32 ms late: Linux's timer wheel), so a return of that
        // fails here on most runs rather than one in five.
        assert!(took <= limit + limit / 20, "round {round}: {took:?}");
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

extern "C" fn on_signal(_: libc::c_int) {}

/// A SIGUSR1 handler installed with `SA_RESTART`, as most servers install theirs.
#[allow(unsafe_code)]
fn install_handler() {
    // SAFETY: a zeroed sigaction is valid (empty mask, no flags); the handler does nothing,
    // for a signal nothing else in this test binary uses.
    let rc = unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        act.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGUSR1, &act, std::ptr::null_mut())
    };
    assert_eq!(rc, 0);
}

#[allow(unsafe_code)]
fn unsafe_pthread_self() -> libc::pthread_t {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() }
}

#[allow(unsafe_code)]
fn kill_thread(thread: libc::pthread_t) {
    // SAFETY: the thread is alive (it stops this loop before it ends) and SIGUSR1 has a
    // handler.
    unsafe {
        libc::pthread_kill(thread, libc::SIGUSR1);
    }
}

/// Row 11: an expiry the user set on a filter's keys outlives every write: sparse and dense
/// inserts, `upload`, `union_with` and `clear`.
#[test]
fn an_expiry_on_the_keys_is_kept_by_every_write() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let mut f =
        Shared::connect_or_create(&server.url(), "expiring", &Options::new(1_000_000, 0.01))
            .unwrap();
    let (cfg, bits) = {
        let keys = f.keys();
        (keys[0].0.to_owned(), keys[0].1.to_owned())
    };
    for key in [&cfg, &bits] {
        assert_eq!(server.command(&["PEXPIRE", key, "600000"]), ":1");
    }
    let kept = |what: &str| {
        for key in [&cfg, &bits] {
            let ttl: i64 = server.command(&["PTTL", key])[1..].parse().unwrap();
            assert!(ttl > 500_000, "{what}: {key} has PTTL {ttl}");
        }
    };
    f.try_insert("one").unwrap();
    kept("a sparse insert");
    let many = keys(0..20_000);
    f.try_insert_batch(many.iter().map(String::as_str)).unwrap();
    kept("a dense insert");
    let mut local = f.download().unwrap();
    local.insert("local");
    f.union_with(&local).unwrap();
    kept("union_with");
    f.upload(&local).unwrap();
    kept("upload");
    assert!(f.try_contains("local").unwrap() && f.try_contains("url:7").unwrap());
    f.try_clear().unwrap();
    kept("clear");
    assert!(!f.try_contains("url:7").unwrap());
}

/// Deadlines at their edges: a timeout too long to add to the clock (`Duration::MAX`) is no
/// deadline, never a panic; a zero timeout ends every call at once with `Timeout`.
#[test]
fn timeouts_at_their_edges_are_no_deadline_or_an_immediate_timeout() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let con = RespConnection::open(server.url(), Some(Duration::MAX)).unwrap();
    let options = Options::new(1_000, 0.01).timeout(Some(Duration::MAX));
    let mut f = Shared::open_or_create(con, "edges", &options).unwrap();
    f.try_insert("a").unwrap();
    assert!(f.try_contains("a").unwrap());
    f.set_timeout(Some(Duration::ZERO));
    assert!(f.try_contains("a").unwrap_err().is_timeout());
    f.set_timeout(Some(Duration::MAX));
    assert!(f.try_contains("a").unwrap());
    let err = RespConnection::open(server.url(), Some(Duration::ZERO)).unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
}
