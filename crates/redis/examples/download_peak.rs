//! The client's memory while [`RedisFilter::download`] moves a large filter: its peak
//! resident size before and after, against the filter's size. Starts its own `redis-server`.
//!
//! `cargo run --release -p bloomkit-redis --example download_peak [ITEMS]` (default
//! 820,000,000 items at 1%: a blocked filter of about 1.07 GB, three shards).

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{Options, RedisFilter};
use bloomkit_testkit::redis_server::RedisServer;
use std::time::Instant;

/// This process's peak resident set (`VmHWM`) in bytes, from `/proc/self/status`.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("a VmHWM line");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("a number of kB");
    kb * 1024
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let items: u64 = std::env::args()
        .nth(1)
        .map_or(Ok(820_000_000), |a| a.parse())?;
    let server = RedisServer::start(&[]).ok_or("redis-server is not installed")?;
    let options = Options::new(items, 0.01).timeout(None);
    let mut shared: RedisFilter<BlockedBloomFilter<str>> =
        RedisFilter::connect_or_create(&server.url(), "big", &options)?;
    let keys: Vec<String> = (0..100_000).map(|i| format!("key:{i}")).collect();
    shared.try_insert_batch(keys.iter().map(String::as_str))?;
    drop(keys);
    let info = shared.info()?;
    let before = peak_rss();
    let started = Instant::now();
    let local = shared.download()?;
    let took = started.elapsed();
    let after = peak_rss();
    assert!(local.contains("key:7"));
    let filter = local.heap_bytes() as f64;
    println!(
        "filter: {} bytes in {} shards; download {:.2} s ({:.0} MB/s)",
        info.bytes,
        info.shards,
        took.as_secs_f64(),
        info.bytes as f64 / took.as_secs_f64() / 1e6
    );
    println!(
        "peak resident: {:.1} MB before, {:.1} MB after: the download added {:.1} MB, {:.3}x the filter",
        before as f64 / 1e6,
        after as f64 / 1e6,
        (after - before) as f64 / 1e6,
        (after - before) as f64 / filter
    );
    Ok(())
}
