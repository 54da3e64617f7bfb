//! bloomkit-redis against the naive client-side baseline, side by side in one run, on a
//! `redis-server` started here on loopback: keys per second for batches of 1, 100, 1,000 and
//! 10,000, inserts and lookups. The baseline computes the same positions on the client and
//! sends one pipelined `SETBIT` / `GETBIT` per position (one pipeline per batch), what
//! Redisson and most hand-rolled clients do.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench redis
//! ```

use std::hint::black_box;

use bloomkit::redis::{Options, RedisFilter};
use bloomkit::BlockedBloomFilter;
use bloomkit_testkit::redis_server::RedisServer;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hash::BuildHasher;

const ITEMS: u64 = 1_000_000;

/// The naive client: the blocked filter's positions, one `SETBIT`/`GETBIT` each, pipelined.
struct Naive {
    con: redis::Connection,
    key: String,
    local: BlockedBloomFilter<str>,
}

impl Naive {
    fn offsets(&self, key: &str, out: &mut Vec<u64>) {
        let hash = self.local.hasher().hash_one(key);
        let blocks = self.local.num_blocks();
        let base = bloomkit::core::hash::reduce(hash, blocks) * 512;
        out.extend(
            bloomkit::core::hash::block_positions(hash, self.local.num_hashes())
                .map(|p| (base + p) ^ 7),
        );
    }

    /// One pipeline with a command per position of every key, written by `command`.
    fn pipeline(
        &self,
        keys: &[String],
        command: impl Fn(&mut redis::Pipeline, u64),
    ) -> redis::Pipeline {
        let mut pipe = redis::pipe();
        let mut offsets = Vec::new();
        for k in keys {
            offsets.clear();
            self.offsets(k, &mut offsets);
            for &o in &offsets {
                command(&mut pipe, o);
            }
        }
        pipe
    }

    fn insert_batch(&mut self, keys: &[String]) {
        let pipe = self.pipeline(keys, |pipe, o| {
            pipe.cmd("SETBIT").arg(&self.key).arg(o).arg(1).ignore();
        });
        pipe.exec(&mut self.con).expect("SETBIT");
    }

    fn contains_batch(&mut self, keys: &[String]) -> Vec<bool> {
        let pipe = self.pipeline(keys, |pipe, o| {
            pipe.cmd("GETBIT").arg(&self.key).arg(o);
        });
        let bits: Vec<u8> = pipe.query(&mut self.con).expect("GETBIT");
        let k = self.local.num_hashes() as usize;
        bits.chunks(k).map(|c| c.iter().all(|&b| b == 1)).collect()
    }
}

fn bench(c: &mut Criterion) {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let client = redis::Client::open(server.url()).expect("url");
    let mut shared: RedisFilter<BlockedBloomFilter<str>> = RedisFilter::open_or_create(
        bloomkit::redis::RespConnection::open(server.url(), None).expect("connection"),
        "bench",
        &Options::new(ITEMS, 0.01),
    )
    .expect("filter");
    let mut naive = Naive {
        con: client.get_connection().expect("connection"),
        key: "naive:bits".into(),
        local: BlockedBloomFilter::new(ITEMS, 0.01).expect("local"),
    };
    // Half full, so lookups meet a realistic mix of set and clear bits.
    let fill: Vec<String> = (0..ITEMS / 2).map(|i| format!("member:{i}")).collect();
    for chunk in fill.chunks(10_000) {
        shared
            .try_insert_batch(chunk.iter().map(String::as_str))
            .expect("fill");
        naive.insert_batch(chunk);
    }

    let sizes: &[usize] = if bloomkit_benches::smoke() {
        &[1, 100]
    } else {
        &[1, 100, 1_000, 10_000]
    };
    for op in ["insert", "lookup"] {
        let mut group = c.benchmark_group(format!("redis/{op}"));
        for &n in sizes {
            let keys: Vec<String> = (0..n)
                .map(|i| format!("https://example.com/{op}/{i}"))
                .collect();
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(BenchmarkId::new("bloomkit-redis", n), &keys, |b, keys| {
                let mut out = Vec::with_capacity(keys.len());
                b.iter(|| {
                    if op == "insert" {
                        black_box(
                            shared
                                .try_insert_batch(keys.iter().map(String::as_str))
                                .expect("insert"),
                        );
                    } else {
                        out.clear();
                        shared
                            .try_contains_batch(keys.iter().map(String::as_str), &mut out)
                            .expect("lookup");
                        black_box(&out);
                    }
                });
            });
            group.bench_with_input(
                BenchmarkId::new("naive-setbit-getbit", n),
                &keys,
                |b, keys| {
                    b.iter(|| {
                        if op == "insert" {
                            naive.insert_batch(keys);
                        } else {
                            black_box(naive.contains_batch(keys));
                        }
                    });
                },
            );
        }
        group.finish();
    }
    // Same positions, same bits: the two clients agree.
    assert!(shared.download().expect("download").words() == naive_words(&mut naive).as_slice());
}

/// The naive client's bits as words.
fn naive_words(naive: &mut Naive) -> Vec<u64> {
    let bytes: Vec<u8> = redis::cmd("GET")
        .arg(&naive.key)
        .query(&mut naive.con)
        .expect("GET");
    let mut bytes = bytes;
    bytes.resize(naive.local.words().len() * 8, 0);
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

criterion_group!(benches, bench);
criterion_main!(benches);
