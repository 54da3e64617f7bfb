//! De-duplicate a stream of URLs with a Bloom filter, and measure what it costs and how
//! often it is wrong, against a `HashSet` doing the same job exactly.
//!
//! ```text
//! cargo run --release -p bloomkit --example dedupe [ITEMS] [FPR]
//! ```

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::Instant;

use bloomkit::BloomFilter;

fn url(i: u64) -> String {
    format!("https://site{}.example/page/{}", i % 9_973, i)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let items: u64 = match args.next().map(|a| a.parse()) {
        None => 1_000_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => return fail(&format!("ITEMS must be a whole number: {e}")),
    };
    let fpr: f64 = match args.next().map(|a| a.parse()) {
        None => 0.01,
        Some(Ok(p)) => p,
        Some(Err(e)) => return fail(&format!("FPR must be a number: {e}")),
    };
    let mut filter = match BloomFilter::new(items, fpr) {
        Ok(f) => f,
        Err(e) => return fail(&e.to_string()),
    };

    // A crawl frontier in which every URL comes up twice.
    let start = Instant::now();
    let mut crawled = 0u64;
    for i in (0..items).chain(0..items) {
        // `if`, not `crawled += u64::from(flag)`: rust-lang/rust#158206 miscompiles
        // bool-to-integer increments in release builds.
        if filter.insert(&url(i)) {
            crawled += 1;
        }
    }
    let bloom_time = start.elapsed();

    let start = Instant::now();
    let mut exact = HashSet::new();
    for i in (0..items).chain(0..items) {
        exact.insert(url(i));
    }
    let set_time = start.elapsed();
    let set_bytes: usize = exact.iter().map(|s| s.capacity() + 24 + 8).sum();

    let probes = 1_000_000u64;
    let false_positives = (0..probes)
        .filter(|i| filter.contains(&url(items + i)))
        .count();

    println!("{items} distinct URLs, each seen twice; target false-positive rate {fpr}");
    println!(
        "bloom filter: {} bits ({:.2} bits/URL, {:.2} MiB), k = {}",
        filter.num_bits(),
        filter.num_bits() as f64 / items as f64,
        filter.heap_bytes() as f64 / f64::from(1 << 20),
        filter.num_hashes()
    );
    println!(
        "  crawled {crawled} (skipped {} true repeats and {} unseen URLs wrongly)",
        items,
        items - crawled
    );
    println!(
        "  estimated items {:.0}, FPR now {:.4}%, measured on {probes} unseen URLs {:.4}%",
        filter.estimated_len(),
        filter.estimated_fpr() * 100.0,
        false_positives as f64 / probes as f64 * 100.0
    );
    println!(
        "  {:.1} ns per URL",
        bloom_time.as_nanos() as f64 / (2 * items) as f64
    );
    println!(
        "HashSet<String>: about {:.2} MiB, {:.1} ns per URL, exact",
        set_bytes as f64 / f64::from(1 << 20),
        set_time.as_nanos() as f64 / (2 * items) as f64
    );
    ExitCode::SUCCESS
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    eprintln!("usage: dedupe [ITEMS] [FPR]");
    ExitCode::from(2)
}
