//! Where a batch's time goes: client and server (`INFO commandstats`), bloomkit-redis
//! against pipelined SETBIT/GETBIT. `cargo run --release -p bloomkit-redis --example profile_batch`

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{Options, RedisFilter};
use bloomkit_testkit::redis_server::RedisServer;
use std::time::Instant;

fn main() {
    let server = RedisServer::start(&[]).expect("redis-server");
    let mut f: RedisFilter<BlockedBloomFilter<str>> =
        RedisFilter::connect_or_create(&server.url(), "p", &Options::new(1_000_000, 0.01)).unwrap();
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
                f.try_contains_batch(keys.iter().map(String::as_str), &mut out)
                    .unwrap();
            } else {
                f.try_insert_batch_reporting(keys.iter().map(String::as_str), &mut out)
                    .unwrap();
            }
        }
        let per_key = t.elapsed().as_secs_f64() / 200_000.0 * 1e9;
        let stats = server.command(&["INFO", "commandstats"]);
        // Server time per key, all commands together (`usec=` of each command's line).
        let server_usec: f64 = stats
            .lines()
            .filter_map(|l| l.split("usec=").nth(1))
            .filter_map(|rest| rest.split(',').next()?.parse::<f64>().ok())
            .sum();
        let server_ns = server_usec / 200_000.0 * 1e3;
        let commands: Vec<&str> = stats
            .lines()
            .filter(|l| l.starts_with("cmdstat_"))
            .filter_map(|l| l.split(",usec_per_call").next())
            .collect();
        println!(
            "{name}: {per_key:.0} ns/key in all, {server_ns:.0} of them in the server ({})",
            commands.join(" ")
        );
    }
}
