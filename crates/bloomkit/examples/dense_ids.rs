//! Dense integer keys: a bitmap against a 1% Bloom filter on the same ids. Prints memory,
//! build time and ns per `contains` (random members and non-members), single-threaded.
//!
//! ```text
//! cargo run --release -p bloomkit --example dense_ids [IDS] [RANGE] [QUERIES]
//! ```
//!
//! Defaults: 100,000,000 ids drawn from a range of 125,000,000, 10,000,000 queries.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use bloomkit::{Bitmap, BloomFilter};

/// splitmix64: a fixed, fast stream of pseudo-random numbers.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn arg(i: usize, default: u64) -> Result<u64, String> {
    match std::env::args().nth(i) {
        None => Ok(default),
        Some(a) => a
            .parse()
            .map_err(|_| format!("argument {i} ({a:?}) must be a whole number")),
    }
}

fn per_op(start: Instant, ops: u64) -> f64 {
    start.elapsed().as_nanos() as f64 / ops as f64
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let (ids, range, queries) = (
        arg(1, 100_000_000)?,
        arg(2, 125_000_000)?,
        arg(3, 10_000_000)?,
    );
    if ids > range || range == 0 {
        return Err(format!("need 0 < IDS <= RANGE, got {ids} and {range}"));
    }
    // Member i is the i-th id kept when each id of the range is kept with probability
    // ids/range; queries are uniform over the range.
    let keep = |id: u64| mix(id) % range < ids;
    let query = |i: u64| mix(i ^ 0xdead_beef) % range;

    let start = Instant::now();
    let mut bitmap = Bitmap::new(0..=range - 1).map_err(|e| e.to_string())?;
    let mut members = 0u64;
    for id in (0..range).filter(|&id| keep(id)) {
        bitmap.try_insert(&id).map_err(|e| e.to_string())?;
        members += 1;
    }
    let bitmap_build = per_op(start, members);

    let start = Instant::now();
    let mut bloom = BloomFilter::new(members, 0.01).map_err(|e| e.to_string())?;
    for id in (0..range).filter(|&id| keep(id)) {
        bloom.insert(&id);
    }
    let bloom_build = per_op(start, members);

    let start = Instant::now();
    let hits = (0..queries)
        .filter(|&i| bitmap.contains(&black_box(query(i))))
        .count();
    let bitmap_ns = per_op(start, queries);
    let start = Instant::now();
    let bloom_hits = (0..queries)
        .filter(|&i| bloom.contains(&black_box(query(i))))
        .count();
    let bloom_ns = per_op(start, queries);
    let start = Instant::now();
    let baseline = (0..queries)
        .filter(|&i| black_box(query(i)) & 1 == 0)
        .count();
    let loop_ns = per_op(start, queries);
    black_box(baseline);

    let mib = |b: usize| b as f64 / f64::from(1 << 20);
    println!(
        "{members} ids in 0..{range}; {queries} random queries ({:.1}% members)",
        hits as f64 / queries as f64 * 100.0
    );
    println!("| structure | bytes | MiB | bits/id | build ns/id | contains ns | false positives |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    println!(
        "| Bitmap<u64> | {} | {:.1} | {:.2} | {bitmap_build:.1} | {:.1} | 0 (exact) |",
        bitmap.heap_bytes(),
        mib(bitmap.heap_bytes()),
        bitmap.heap_bytes() as f64 * 8.0 / members as f64,
        bitmap_ns - loop_ns
    );
    println!(
        "| BloomFilter 1% | {} | {:.1} | {:.2} | {bloom_build:.1} | {:.1} | {:.3}% of non-members |",
        bloom.heap_bytes(),
        mib(bloom.heap_bytes()),
        bloom.heap_bytes() as f64 * 8.0 / members as f64,
        bloom_ns - loop_ns,
        (bloom_hits - hits) as f64 / (queries - hits as u64) as f64 * 100.0
    );
    println!("(query generation, {loop_ns:.1} ns, is subtracted from the contains times)");
    Ok(())
}
