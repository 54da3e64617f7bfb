//! The tokio front end: the same operations, scripts and errors as the synchronous one, on a
//! multiplexed connection and on an async cluster connection.

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{AsyncRedisFilter, Error, Options, RedisFilter};
use bloomkit_testkit::redis_server::{RedisCluster, RedisServer};

type Local = BlockedBloomFilter<str>;

#[tokio::test]
async fn async_filters_answer_as_the_sync_one_and_the_local_one() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let options = Options::new(20_000, 0.01).shards(3);
    let mut f: AsyncRedisFilter<Local, _> = AsyncRedisFilter::open_or_create(
        client.get_multiplexed_async_connection().await.unwrap(),
        "async",
        &options,
    )
    .await
    .unwrap();
    let keys: Vec<String> = (0..10_000).map(|i| format!("k{i}")).collect();
    let mut local = Local::new(20_000, 0.01).unwrap();
    let new = f
        .try_insert_batch(keys.iter().map(String::as_str))
        .await
        .unwrap();
    assert!(new > 9_900, "{new}");
    for k in &keys {
        local.insert(k);
    }
    assert!(f.try_insert("k0").await.is_ok_and(|new| !new));
    let probes: Vec<String> = (0..20_000).map(|i| format!("k{i}")).collect();
    let mut out = Vec::new();
    f.try_contains_batch(probes.iter().map(String::as_str), &mut out)
        .await
        .unwrap();
    for (k, got) in probes.iter().zip(&out) {
        assert_eq!(*got, local.contains(k.as_str()), "{k}");
    }
    assert!(f.download().await.unwrap() == local);

    // The sync front end sees the same filter.
    let mut s: RedisFilter<Local> =
        RedisFilter::connect_or_create(&server.url(), "async", &options).unwrap();
    assert!(s.try_contains("k42").unwrap());
    s.delete().unwrap();
    let err = f.try_contains("k1").await.unwrap_err();
    assert!(matches!(err, Error::Missing { .. }), "{err:?}");
}

#[tokio::test]
async fn async_cluster_filters_work_across_nodes() {
    let Some(cluster) = RedisCluster::start(3) else {
        return;
    };
    let client = redis::cluster::ClusterClient::new(cluster.urls()).unwrap();
    let mut f: AsyncRedisFilter<Local, _> = AsyncRedisFilter::open_or_create(
        client.get_async_connection().await.unwrap(),
        "async-cluster",
        &Options::new(30_000, 0.01).shards(6),
    )
    .await
    .unwrap();
    let keys: Vec<String> = (0..30_000).map(|i| format!("k{i}")).collect();
    f.try_insert_batch(keys.iter().map(String::as_str))
        .await
        .unwrap();
    let mut out = Vec::new();
    f.try_contains_batch(keys.iter().map(String::as_str), &mut out)
        .await
        .unwrap();
    assert!(out.iter().all(|&b| b));
    let mut local = Local::new(30_000, 0.01).unwrap();
    for k in &keys {
        local.insert(k);
    }
    assert!(f.download().await.unwrap() == local);

    // The same filter through the crate's own cluster connection on tokio.
    let con = bloomkit_redis::RespCluster::open_async(
        cluster.urls(),
        Some(std::time::Duration::from_secs(2)),
    )
    .await
    .unwrap();
    let mut g: AsyncRedisFilter<Local, _> =
        AsyncRedisFilter::open(con, "async-cluster").await.unwrap();
    out.clear();
    g.try_contains_batch(keys.iter().map(String::as_str), &mut out)
        .await
        .unwrap();
    assert!(out.len() == keys.len() && out.iter().all(|&b| b));
    g.try_insert("more").await.unwrap();
    assert!(f.try_contains("more").await.unwrap());
    assert!(g.download().await.unwrap() == f.download().await.unwrap());
}

#[tokio::test]
async fn a_stalled_server_ends_an_async_call_at_its_deadline() {
    use std::time::Duration;
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let limit = Duration::from_millis(300);
    let con = client.get_multiplexed_async_connection().await.unwrap();
    let Stalled {
        mut f,
        keys,
        took,
        mut out,
    } = stalled_batch(&server, con, "stalled", limit).await;
    assert!(took <= limit + limit / 10, "took {took:?}");
    assert!(out.is_empty());
    // The multiplexed connection drops the late replies itself: the next call's answers
    // are its own.
    f.try_contains_batch(keys.iter().map(String::as_str), &mut out)
        .await
        .unwrap();
    assert!(out.iter().all(|&x| x));
}

#[tokio::test]
async fn async_calls_on_both_layouts_load_flushed_scripts_again() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let con = || client.get_multiplexed_async_connection();
    let keys: Vec<String> = (0..500).map(|i| format!("k{i}")).collect();
    let options = Options::new(5_000, 0.01);
    let mut blocked: AsyncRedisFilter<Local, _> =
        AsyncRedisFilter::open_or_create(con().await.unwrap(), "flush-b", &options)
            .await
            .unwrap();
    let mut classic: AsyncRedisFilter<bloomkit_classic::BloomFilter<str>, _> =
        AsyncRedisFilter::open_or_create(con().await.unwrap(), "flush-c", &options)
            .await
            .unwrap();
    let flush = || assert_eq!(server.command(&["SCRIPT", "FLUSH"]), "+OK");
    flush();
    blocked
        .try_insert_batch(keys.iter().map(String::as_str))
        .await
        .unwrap();
    flush();
    classic
        .try_insert_batch(keys.iter().map(String::as_str))
        .await
        .unwrap();
    let mut out = Vec::new();
    flush();
    blocked
        .try_contains_batch(keys.iter().map(String::as_str), &mut out)
        .await
        .unwrap();
    flush();
    classic
        .try_contains_batch(keys.iter().map(String::as_str), &mut out)
        .await
        .unwrap();
    assert_eq!(out.len(), 1_000);
    assert!(out.iter().all(|&x| x));
    flush();
    assert!(classic.info().await.unwrap().ones > 0);
}

#[tokio::test]
async fn the_async_redisbloom_filter_answers_as_the_sync_one_and_a_local_chain() {
    use bloomkit_redis::{AsyncRedisBloomFilter, Limits, RedisBloomChain, RedisBloomOptions};
    let Some(server) = RedisServer::start_with_redisbloom(&[]) else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let con = || client.get_multiplexed_async_connection();
    let mut f = AsyncRedisBloomFilter::reserve(
        con().await.unwrap(),
        "async-rb",
        &RedisBloomOptions::new(2_000, 0.01),
    )
    .await
    .unwrap();
    let keys: Vec<String> = (0..10_000).map(|i| format!("k{i}")).collect();
    let mut local = RedisBloomChain::new(2_000, 0.01, Some(2)).unwrap();
    let mut news = Vec::new();
    f.try_insert_batch_reporting(&keys, &mut news)
        .await
        .unwrap();
    let local_news: Vec<bool> = keys.iter().map(|k| local.insert(k).unwrap()).collect();
    assert_eq!(news, local_news);
    let probes: Vec<String> = (0..30_000).map(|i| format!("k{i}")).collect();
    let mut out = Vec::new();
    f.try_contains_batch(&probes, &mut out).await.unwrap();
    let local_says: Vec<bool> = probes.iter().map(|k| local.contains(k)).collect();
    assert_eq!(out, local_says);
    assert_eq!(f.download().await.unwrap(), local);
    assert_eq!(f.info().await.unwrap(), local.info());
    assert_eq!(f.count().await.unwrap(), local.len());

    let mut loaded = AsyncRedisBloomFilter::load(
        con().await.unwrap(),
        "async-loaded",
        &local,
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(loaded.download().await.unwrap(), local);
    assert_eq!(server.command(&["FLUSHALL"]), "+OK");
    let err = f
        .try_contains_batch(&probes, &mut Vec::new())
        .await
        .unwrap_err();
    assert!(err.is_missing(), "{err:?}");
    let err = loaded.try_insert_batch(&probes).await.unwrap_err();
    assert!(err.is_missing(), "{err:?}");
}

/// Lying-network row 8: a stalled server and a 1 s deadline on tokio end in `Timeout` at the
/// caller's deadline (the redis crate's multiplexed connection gives up at its own 500 ms
/// response timeout, whatever the caller asked), for both backends' connection.
#[tokio::test]
async fn an_async_resp_connection_ends_at_the_callers_deadline() {
    use bloomkit_redis::AsyncRespConnection;
    use std::time::Duration;
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let limit = Duration::from_secs(1);
    let con = AsyncRespConnection::open(server.url(), Some(limit))
        .await
        .unwrap();
    let Stalled {
        mut f,
        keys,
        took,
        mut out,
    } = stalled_batch(&server, con, "stalled-resp", limit).await;
    assert!(took >= limit && took <= limit + limit / 10, "took {took:?}");
    // The late replies are passed over: the next call's answers are its own.
    f.try_contains_batch(keys.iter().map(String::as_str), &mut out)
        .await
        .unwrap();
    assert!(out.len() == keys.len() && out.iter().all(|&x| x));
}

/// Rows 1 and 3 on tokio: a replayed reply is `Corrupt` (and retires the connection), an
/// endless reply is `ReplyTooLarge`, never a growing client.
#[tokio::test]
async fn an_async_resp_connection_refuses_replayed_and_endless_replies() {
    use bloomkit_redis::AsyncRespConnection;
    use bloomkit_testkit::resp_proxy::{Tamper, TamperingProxy};
    use bloomkit_testkit::resp_server::{default_reply, LyingServer, Reply};
    use std::time::Duration;
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let limit = Some(Duration::from_secs(2));
    let keys: Vec<String> = (0..4_000).map(|i| format!("k{i}")).collect();
    let direct = AsyncRespConnection::open(server.url(), limit)
        .await
        .unwrap();
    let mut f: AsyncRedisFilter<Local, _> =
        AsyncRedisFilter::open_or_create(direct, "replayed", &Options::new(10_000, 0.01))
            .await
            .unwrap();
    f.try_insert_batch(keys.iter().map(String::as_str))
        .await
        .unwrap();
    let proxy = TamperingProxy::start(server.port(), Tamper::Replay, 1);
    f.replace_connection(AsyncRespConnection::open(proxy.url(), limit).await.unwrap());
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for _ in 0..3 {
        match f
            .try_contains_batch(keys.iter().map(String::as_str), &mut out)
            .await
        {
            Ok(()) => assert!(out.iter().all(|&b| b), "a false negative"),
            Err(e) => errors.push(e),
        }
    }
    assert!(
        matches!(errors.first(), Some(Error::Corrupt { .. })),
        "{errors:?}"
    );
    assert!(errors[1..]
        .iter()
        .all(|e| matches!(e, Error::Retired { .. })));

    let liar = LyingServer::start(|args: &[Vec<u8>]| match args[0].as_slice() {
        b"PING" | b"CLIENT" | b"SELECT" | b"AUTH" | b"SCRIPT" => {
            default_reply(args).unwrap_or_else(|| Reply::error("ERR"))
        }
        _ => Reply::Endless {
            head: b"$400000000\r\n".to_vec(),
            fill: b"x".to_vec(),
        },
    });
    let mut con = AsyncRespConnection::open(liar.url(), limit).await.unwrap();
    con.set_max_reply_bytes(64 << 20);
    let err = AsyncRedisFilter::<Local, _>::open(con, "endless")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ReplyTooLarge { .. }), "{err:?}");
}

/// A filter of 1,000 keys whose server was stopped (`SIGSTOP`) during a batched lookup, and
/// what the lookup did: it failed with `Timeout` (asserted here) after `took`, leaving
/// `out`; the server runs again.
struct Stalled<C> {
    f: AsyncRedisFilter<Local, C>,
    keys: Vec<String>,
    took: std::time::Duration,
    out: Vec<bool>,
}

/// [`Stalled`] for filter `name` on `con`, whose calls have the deadline `limit`.
async fn stalled_batch<C: bloomkit_redis::Connection>(
    server: &RedisServer,
    con: C,
    name: &str,
    limit: std::time::Duration,
) -> Stalled<C> {
    let mut f: AsyncRedisFilter<Local, C> = AsyncRedisFilter::open_or_create(
        con,
        name,
        &Options::new(20_000, 0.01).timeout(Some(limit)),
    )
    .await
    .unwrap();
    let keys: Vec<String> = (0..1_000).map(|i| format!("k{i}")).collect();
    f.try_insert_batch(keys.iter().map(String::as_str))
        .await
        .unwrap();
    let signal = |s: &str| {
        std::process::Command::new("kill")
            .args([s, &server.pid().to_string()])
            .status()
            .unwrap()
    };
    signal("-STOP");
    let started = std::time::Instant::now();
    let mut out = Vec::new();
    let err = f
        .try_contains_batch(keys.iter().map(String::as_str), &mut out)
        .await
        .unwrap_err();
    let took = started.elapsed();
    signal("-CONT");
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    Stalled { f, keys, took, out }
}
