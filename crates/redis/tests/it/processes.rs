//! Four OS processes insert disjoint key sets into one shared filter at once; afterwards every
//! key is found and the bytes equal a local filter built from all the keys.

use std::process::Command;

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{Options, RedisFilter};
use bloomkit_testkit::redis_server::RedisServer;

const WORKERS: u32 = 4;
const PER_WORKER: u32 = 25_000;

fn options() -> Options {
    Options::new(u64::from(WORKERS * PER_WORKER), 0.01).shards(2)
}

fn key(worker: u32, i: u32) -> String {
    format!("https://example.com/{worker}/{i}")
}

/// The body of one worker process (this test binary run again with `BLOOMKIT_REDIS_WORKER`
/// set): batches of 1,000 and, every 100th key, a single insert.
#[test]
fn worker() {
    let (Ok(worker), Ok(url)) = (
        std::env::var("BLOOMKIT_REDIS_WORKER"),
        std::env::var("BLOOMKIT_REDIS_URL"),
    ) else {
        return; // not a worker: nothing to do
    };
    let worker: u32 = worker.parse().unwrap();
    let mut f: RedisFilter<BlockedBloomFilter<str>> =
        RedisFilter::connect_or_create(&url, "workers", &options()).unwrap();
    let keys: Vec<String> = (0..PER_WORKER).map(|i| key(worker, i)).collect();
    for batch in keys.chunks(1_000) {
        f.try_insert_batch(batch[..990].iter().map(String::as_str))
            .unwrap();
        for k in &batch[990..] {
            f.try_insert(k).unwrap();
        }
    }
}

#[test]
fn four_processes_insert_at_once_and_every_key_is_found() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let children: Vec<_> = (0..WORKERS)
        .map(|w| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "processes::worker",
                    "--nocapture",
                    "--test-threads",
                    "1",
                ])
                .env("BLOOMKIT_REDIS_WORKER", w.to_string())
                .env("BLOOMKIT_REDIS_URL", server.url())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a worker failed");
    }
    let mut f: RedisFilter<BlockedBloomFilter<str>> =
        RedisFilter::connect_or_create(&server.url(), "workers", &options()).unwrap();
    let all: Vec<String> = (0..WORKERS)
        .flat_map(|w| (0..PER_WORKER).map(move |i| key(w, i)))
        .collect();
    let mut found = Vec::new();
    f.try_contains_batch(all.iter().map(String::as_str), &mut found)
        .unwrap();
    assert!(
        found.iter().all(|&b| b),
        "{} keys missing",
        found.iter().filter(|&&b| !b).count()
    );

    let mut local = BlockedBloomFilter::<str>::new(u64::from(WORKERS * PER_WORKER), 0.01).unwrap();
    for k in &all {
        local.insert(k);
    }
    assert!(
        f.download().unwrap() == local,
        "the shared bits differ from the local filter's"
    );
    let info = f.info().unwrap();
    assert!(
        (info.estimated_items / f64::from(WORKERS * PER_WORKER) - 1.0).abs() < 0.05,
        "{info:?}"
    );
}
