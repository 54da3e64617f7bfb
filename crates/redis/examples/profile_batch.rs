//! Where a batch's time goes: client and server (`INFO commandstats`), bloomkit-redis
//! against pipelined SETBIT/GETBIT. `cargo run --release -p bloomkit-redis --example profile_batch`

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{Options, RedisFilter};
use bloomkit_testkit::redis_server::RedisServer;
use std::time::Instant;

fn main() {
    let server = RedisServer::start(&[]).expect("redis-server");
    let mut f: RedisFilter<BlockedBloomFilter<str>> =
        RedisFilter::connect(&server.url(), "p", &Options::new(1_000_000, 0.01)).unwrap();
    let keys: Vec<String> = (0..1000)
        .map(|i| format!("https://example.com/{i}"))
        .collect();
    for (name, contains) in [("insert", false), ("lookup", true)] {
        server.command(&["CONFIG", "RESETSTAT"]);
        let t = Instant::now();
        let mut out = Vec::new();
        for _ in 0..200 {
            out.clear();
            if contains {
                f.contains_batch(keys.iter().map(String::as_str), &mut out)
                    .unwrap();
            } else {
                f.insert_batch_reporting(keys.iter().map(String::as_str), &mut out)
                    .unwrap();
            }
        }
        let per_key = t.elapsed().as_secs_f64() / 200_000.0 * 1e9;
        let stats = server.command(&["INFO", "commandstats"]);
        let evalsha = stats
            .lines()
            .find(|l| l.contains("evalsha"))
            .unwrap_or("")
            .to_owned();
        println!("{name}: {per_key:.0} ns/key in all; server: {evalsha}");
    }
}
