//! The window filter's lookups and inserts beside the blocked Bloom filter given the same
//! memory, in one run (the window issue's target: lookups within 2x, one at a time and
//! batched).
//!
//! ```text
//! cargo run --release -p bloomkit-benches --example window
//! BLOOMKIT_WINDOW_SIZES=1000000 cargo run --release -p bloomkit-benches --example window
//! BLOOMKIT_WINDOW_SLACK=0.5 cargo run --release -p bloomkit-benches --example window
//! ```
//!
//! For each window `N` (10^6 and 10^7 by default) at 1%: a `WindowFilter::new(N, 0.01)`
//! fed a stream of `3N` distinct u64 keys (so it is in its steady state, its table
//! holding `1.1 N` alive entries at the worst moment), and a `BlockedBloomFilter` of the same bytes holding the last `N` of them. Times
//! are ns per key, the median of 7 rounds, each round timing both back to back in a
//! rotating order; ratio = the window filter's time / the blocked filter's (below 2 meets
//! the target). Members are keys of the last `N`, absent keys never inserted.

use bloomkit::{BlockedBloomFilter, WindowFilter};
use bloomkit_benches::{key, race, timed};

const ROUNDS: usize = 7;
const PROBES: usize = 1 << 20;

enum Row {
    Window(WindowFilter<u64>),
    Blocked(BlockedBloomFilter<u64>),
}

impl Row {
    fn contains(&self, k: &u64) -> bool {
        match self {
            Row::Window(f) => f.contains(k),
            Row::Blocked(f) => f.contains(k),
        }
    }

    fn contains_batch(&self, keys: &[u64], out: &mut Vec<bool>) {
        match self {
            Row::Window(f) => f.contains_batch(keys, out),
            Row::Blocked(f) => f.contains_batch(keys, out),
        }
    }
}

fn main() {
    let sizes: Vec<u64> = std::env::var("BLOOMKIT_WINDOW_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000_000, 10_000_000]);
    println!("| N | structure | bytes | insert ns | insert batch ns | members ns | absent ns | members batch ns | absent batch ns |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        run(n);
    }
}

/// The window filter of the run: `BLOOMKIT_WINDOW_SLACK` sets its slack (default 0.1).
fn window_filter(n: u64) -> WindowFilter<u64> {
    let mut b = WindowFilter::<u64>::builder(n, 0.01);
    if let Some(slack) = std::env::var("BLOOMKIT_WINDOW_SLACK")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        b = b.slack(slack);
    }
    b.build().unwrap()
}

fn run(n: u64) {
    let mut w = window_filter(n);
    let stream: Vec<u64> = (0..3 * n).map(key).collect();
    let insert_single = timed(stream.len(), || {
        let mut fresh = 0;
        for k in &stream {
            if w.try_insert(k).unwrap() {
                fresh += 1;
            }
        }
        fresh
    });
    let mut w2 = window_filter(n);
    let insert_batch = timed(stream.len(), || w2.try_insert_batch(&stream).unwrap());
    assert!(w == w2, "batched inserts left another filter");
    let bytes = w.heap_bytes();
    eprintln!(
        "f = {}, t = {}, L = {}, buckets = {}",
        w.fingerprint_bits(),
        w.tag_bits(),
        w.generations(),
        w.num_buckets()
    );
    let blocks = (bytes as u64 / 64).max(1);
    let mut b = BlockedBloomFilter::<u64>::with_blocks(blocks, 8).unwrap();
    let recent = &stream[stream.len() - n as usize..];
    let b_single = timed(recent.len(), || {
        recent.iter().filter(|k| b.insert(k)).count()
    });
    let mut b2 = BlockedBloomFilter::<u64>::with_blocks(blocks, 8).unwrap();
    let b_batch = timed(recent.len(), || b2.insert_batch(recent));

    let members: Vec<u64> = (0..PROBES)
        .map(|i| recent[(i as u64).wrapping_mul(0x9E37_79B9) as usize % recent.len()])
        .collect();
    let absent: Vec<u64> = (0..PROBES as u64).map(|i| key(10 * n + i)).collect();
    let rows = [Row::Window(w), Row::Blocked(b)];
    let one = |keys: &[u64]| {
        race(&rows, ROUNDS, |r| {
            Some(timed(keys.len(), || {
                keys.iter().filter(|k| r.contains(k)).count()
            }))
        })
    };
    let batch = |keys: &[u64]| {
        race(&rows, ROUNDS, |r| {
            let mut out = Vec::with_capacity(keys.len());
            Some(timed(keys.len(), || {
                r.contains_batch(keys, &mut out);
                out.iter().filter(|&&x| x).count()
            }))
        })
    };
    let (m1, a1, mb, ab) = (one(&members), one(&absent), batch(&members), batch(&absent));
    let f = |x: Option<f64>| x.unwrap_or(f64::NAN);
    for (i, (name, ins, insb)) in [
        ("WindowFilter", insert_single, insert_batch),
        ("BlockedBloomFilter, same bytes", b_single, b_batch),
    ]
    .into_iter()
    .enumerate()
    {
        println!(
            "| {n} | {name} | {bytes} | {ins:.1} | {insb:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            f(m1[i]),
            f(a1[i]),
            f(mb[i]),
            f(ab[i])
        );
    }
    println!(
        "| {n} | ratio (window / blocked) | | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
        insert_single / b_single,
        insert_batch / b_batch,
        f(m1[0]) / f(m1[1]),
        f(a1[0]) / f(a1[1]),
        f(mb[0]) / f(mb[1]),
        f(ab[0]) / f(ab[1]),
    );
}
