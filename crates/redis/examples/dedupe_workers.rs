//! Several worker processes de-duplicating URLs through one shared filter.
//!
//! Each worker crawls a stream of URLs in which many repeat (the same links found on many
//! pages, and found by other workers): it inserts each batch into the shared filter in one
//! round trip, learning for each URL whether it was new (an atomic test-and-set), and
//! fetches only the new ones. Between them, the workers fetch each URL once, but for the
//! few the filter wrongly takes for seen (false positives).
//!
//! ```text
//! redis-server --port 6379 --save '' &
//! cargo run --release -p bloomkit-redis --example dedupe_workers -- redis://127.0.0.1:6379/ 4
//! ```
//!
//! Without a URL the example starts its own `redis-server` on a free port.

use std::collections::HashSet;
use std::process::Command;

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{Options, RedisFilter};
use bloomkit_testkit::redis_server::RedisServer;

/// Distinct URLs in the crawl; each worker sees `PER_WORKER` links drawn from them.
const DISTINCT: u64 = 200_000;
const PER_WORKER: u64 = 150_000;
const BATCH: usize = 1_000;

fn options() -> Options {
    Options::new(DISTINCT, 0.001)
}

/// The links worker `w` finds: a deterministic stream with repeats within and across
/// workers.
fn links(w: u64) -> impl Iterator<Item = String> {
    let mut rng = bloomkit_testkit::SplitMix64(w + 1);
    (0..PER_WORKER).map(move |_| format!("https://example.com/page/{}", rng.next_u64() % DISTINCT))
}

/// One worker: returns the URLs it fetched.
fn work(url: &str, w: u64) -> Result<Vec<String>, bloomkit_redis::Error> {
    let mut seen: RedisFilter<BlockedBloomFilter<str>> =
        RedisFilter::connect_or_create(url, "crawler:seen", &options())?;
    let mut fetched = Vec::new();
    let mut new = Vec::with_capacity(BATCH);
    let links: Vec<String> = links(w).collect();
    for batch in links.chunks(BATCH) {
        // Test-and-set in one round trip: of all workers inserting a URL, one is told it is
        // new, and only that one fetches it.
        new.clear();
        seen.try_insert_batch_reporting(batch.iter().map(String::as_str), &mut new)?;
        for (link, &is_new) in batch.iter().zip(&new) {
            if is_new {
                fetched.push(link.clone()); // "fetch"
            }
        }
    }
    Ok(fetched)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let (Some(url), Some(w)) = (args.get(2), std::env::var_os("DEDUPE_WORKER")) {
        let fetched = work(url, w.to_string_lossy().parse()?)?;
        for u in fetched {
            println!("{u}");
        }
        return Ok(());
    }
    let server;
    let url = match args.get(1) {
        Some(url) => url.clone(),
        None => {
            server = RedisServer::start(&[]).ok_or("redis-server is not installed")?;
            server.url()
        }
    };
    let workers: u64 = args.get(2).map_or(Ok(4), |w| w.parse())?;
    // A fresh filter for this run.
    let mut con = redis::Client::open(url.as_str())?.get_connection()?;
    RedisFilter::<BlockedBloomFilter<str>, _>::destroy(&mut con, "crawler:seen", None)?;
    let started = std::time::Instant::now();
    let children: Vec<_> = (0..workers)
        .map(|w| {
            Command::new(std::env::current_exe()?)
                .args(["worker", &url])
                .env("DEDUPE_WORKER", w.to_string())
                .stdout(std::process::Stdio::piped())
                .spawn()
        })
        .collect::<Result<_, _>>()?;
    let mut total = 0usize;
    let mut distinct = HashSet::new();
    for child in children {
        let out = child.wait_with_output()?;
        let text = String::from_utf8(out.stdout)?;
        total += text.lines().count();
        distinct.extend(text.lines().map(str::to_owned));
    }
    let links: HashSet<String> = (0..workers).flat_map(links).collect();
    let mut seen: RedisFilter<BlockedBloomFilter<str>> =
        RedisFilter::connect_or_create(&url, "crawler:seen", &options())?;
    let info = seen.info()?;
    println!(
        "{workers} workers, {} links, {} distinct: fetched {total} ({} twice), skipped {} \
         as false positives; filter: {} bytes, ~{:.0} items, estimated rate {:.4}%; {:.2?}",
        workers * PER_WORKER,
        links.len(),
        total - distinct.len(),
        links.len() - distinct.len(),
        info.bytes,
        info.estimated_items,
        info.estimated_fpr * 100.0,
        started.elapsed()
    );
    seen.try_clear()?;
    Ok(())
}
