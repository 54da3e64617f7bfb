//! The multi-attribute filter against what a user builds by hand without it: one
//! `BloomFilter` per attribute plus one over whole records (the naive way), same sizes, same
//! run. Records (address: u32, user agent: String, path: String), 10^6 records at 1%; each
//! attribute sized for its distinct values (10^5 addresses, 50 agents, 10^3 paths).
//! Per record: insert; whole-record lookup of members and of non-members; a lookup by one
//! attribute; a lookup by (address, path), which both answer from the attribute filters.
//!
//! ```text
//! cargo bench -p bloomkit-benches --bench multi
//! ```

use std::hint::black_box;

use bloomkit::multi::MultiBuilder;
use bloomkit::{BloomFilter, MultiFilter};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

type Rec = (u32, String, String);

const P: f64 = 0.01;
const DISTINCT: (u64, u64, u64) = (100_000, 50, 1_000);
/// Records per measured batch.
const BATCH: u64 = 4_096;

/// `n`, or a hundredth of it for a smoke run.
fn records(n: u64) -> u64 {
    if bloomkit_benches::smoke() {
        n / 100
    } else {
        n
    }
}

fn record(i: u64) -> Rec {
    let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (
        (h % DISTINCT.0) as u32,
        format!("Mozilla/5.0 agent-{}", (h >> 20) % DISTINCT.1),
        format!("/shop/items/{}/view", (h >> 40) % DISTINCT.2),
    )
}

/// The naive build: one filter per attribute, one over whole records.
struct ByHand {
    address: BloomFilter<u32>,
    agent: BloomFilter<String>,
    path: BloomFilter<String>,
    record: BloomFilter<Rec>,
}

impl ByHand {
    fn new(n: u64) -> ByHand {
        ByHand {
            address: BloomFilter::new(DISTINCT.0, P).expect("valid"),
            agent: BloomFilter::new(DISTINCT.1, P).expect("valid"),
            path: BloomFilter::new(DISTINCT.2, P).expect("valid"),
            record: BloomFilter::new(n, P).expect("valid"),
        }
    }
    fn insert(&mut self, r: &Rec) -> bool {
        self.address.insert(&r.0);
        self.agent.insert(&r.1);
        self.path.insert(&r.2);
        self.record.insert(r)
    }
}

fn multi(n: u64) -> MultiFilter<Rec> {
    MultiFilter::<Rec>::builder(n, P)
        .attribute(0, DISTINCT.0, P)
        .and_then(|b| b.attribute(1, DISTINCT.1, P))
        .and_then(|b| b.attribute(2, DISTINCT.2, P))
        .and_then(MultiBuilder::build)
        .expect("valid")
}

fn bench(c: &mut Criterion) {
    let n = records(1_000_000);
    let mut hand = ByHand::new(n);
    let mut mine = multi(n);
    for i in 0..n {
        let r = record(i);
        hand.insert(&r);
        mine.try_insert(&r)
            .expect("typed records are never refused");
    }
    let members: Vec<Rec> = (0..BATCH).map(|i| record(i * (n / BATCH).max(1))).collect();
    // Stored values, recombined: the record filters answer.
    let others: Vec<Rec> = (0..BATCH).map(|i| record(n + i)).collect();
    println!(
        "bytes: by hand {}, MultiFilter {}",
        hand.address.heap_bytes()
            + hand.agent.heap_bytes()
            + hand.path.heap_bytes()
            + hand.record.heap_bytes(),
        mine.heap_bytes()
    );

    let mut g = c.benchmark_group("multi-attribute, 3 attributes, 1e6 records, 1%");
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function(BenchmarkId::new("insert", "by hand"), |b| {
        b.iter(|| members.iter().filter(|r| hand.insert(black_box(r))).count());
    });
    g.bench_function(BenchmarkId::new("insert", "MultiFilter"), |b| {
        b.iter(|| {
            members
                .iter()
                .filter(|r| mine.try_insert(black_box(r)).expect("never refused"))
                .count()
        });
    });
    for (name, probe) in [("record, members", &members), ("record, others", &others)] {
        g.bench_function(BenchmarkId::new(name, "by hand"), |b| {
            b.iter(|| {
                probe
                    .iter()
                    .filter(|r| hand.record.contains(black_box(*r)))
                    .count()
            });
        });
        g.bench_function(BenchmarkId::new(name, "MultiFilter"), |b| {
            b.iter(|| {
                probe
                    .iter()
                    .filter(|r| mine.contains(black_box(*r)))
                    .count()
            });
        });
    }
    g.bench_function(BenchmarkId::new("attribute path", "by hand"), |b| {
        b.iter(|| {
            others
                .iter()
                .filter(|r| hand.path.contains(black_box(&r.2)))
                .count()
        });
    });
    g.bench_function(BenchmarkId::new("attribute path", "MultiFilter"), |b| {
        b.iter(|| {
            others
                .iter()
                .filter(|r| mine.contains_attr::<2>(black_box(&r.2)))
                .count()
        });
    });
    g.bench_function(BenchmarkId::new("pair (address, path)", "by hand"), |b| {
        b.iter(|| {
            others
                .iter()
                .filter(|r| hand.address.contains(black_box(&r.0)) && hand.path.contains(&r.2))
                .count()
        });
    });
    g.bench_function(
        BenchmarkId::new("pair (address, path)", "MultiFilter"),
        |b| {
            b.iter(|| {
                others
                    .iter()
                    .filter(|r| {
                        mine.query()
                            .attr::<0>(black_box(&r.0))
                            .attr::<2>(&r.2)
                            .contains()
                    })
                    .count()
            });
        },
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
