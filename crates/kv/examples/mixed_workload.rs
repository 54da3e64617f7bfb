//! A redb store of 10^6 keys (by default) behind a counting filter: lookups of absent keys,
//! of present keys, and a 50/50 mix, each with and without the filter, in one run.
//!
//! ```text
//! cargo run --release -p bloomkit-kv --example mixed_workload -- \
//!     [--keys 1000000] [--value-bytes 100] [--lookups 200000] [--fpr 0.01] \
//!     [--dir DIR] [--redb-cache-mb 16] [--rounds 3] [--drop-caches]
//! ```
//!
//! Each round measures every workload without and with the filter, in alternating order,
//! on fresh lookups; the table sums the rounds. The store is built once in `DIR` (default: a temporary directory, removed at the end)
//! and reused by later runs with the same `--dir`. `--drop-caches` empties the kernel's
//! page cache before every phase (root only), so each phase starts cold; run it inside a
//! memory cgroup to keep the page cache smaller than the store for the whole phase (the
//! command used for `docs/performance.md` is there).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use bloomkit_kv::{FilteredStore, Op, Options, RedbStore, Store};
use bloomkit_testkit::SplitMix64;

struct Args {
    keys: u64,
    value_bytes: usize,
    lookups: u64,
    fpr: f64,
    dir: Option<PathBuf>,
    redb_cache_mb: usize,
    drop_caches: bool,
    rounds: u32,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        keys: 1_000_000,
        value_bytes: 100,
        lookups: 200_000,
        fpr: 0.01,
        dir: None,
        redb_cache_mb: 16,
        drop_caches: false,
        rounds: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--drop-caches" {
            args.drop_caches = true;
            continue;
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--keys" => args.keys = value.parse().map_err(|e| bad(&e))?,
            "--value-bytes" => args.value_bytes = value.parse().map_err(|e| bad(&e))?,
            "--lookups" => args.lookups = value.parse().map_err(|e| bad(&e))?,
            "--fpr" => args.fpr = value.parse().map_err(|e| bad(&e))?,
            "--dir" => args.dir = Some(PathBuf::from(value)),
            "--redb-cache-mb" => args.redb_cache_mb = value.parse().map_err(|e| bad(&e))?,
            "--rounds" => args.rounds = value.parse().map_err(|e| bad(&e))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(args)
}

/// 16 bytes: `k`, the index scattered (so keys neither arrive nor sit in index order),
/// then the index itself.
fn present_key(i: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[0] = b'k';
    k[1..9].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes());
    k[9..16].copy_from_slice(&i.to_be_bytes()[1..]);
    k
}

/// A key the store never holds, sorted right next to `present_key(i)`: an absent lookup
/// walks to a random leaf of the tree, as a present one does. (Absent keys that all sort
/// before or after the present ones would find the same cached edge leaf every time.)
fn absent_key(i: u64) -> [u8; 16] {
    let mut k = present_key(i);
    k[9] |= 0x80; // the index is below 2^48, so this byte is otherwise 0
    k
}

fn drop_caches(on: bool) {
    if on && let Err(e) = std::fs::write("/proc/sys/vm/drop_caches", "3") {
        eprintln!("cannot drop the page cache ({e}); run as root or without --drop-caches");
        std::process::exit(2);
    }
}

#[derive(Clone, Copy)]
enum Mix {
    Absent,
    Present,
    Half,
}

fn lookup_key(mix: Mix, keys: u64, rng: &mut SplitMix64) -> [u8; 16] {
    let r = rng.next_u64();
    let present = match mix {
        Mix::Absent => false,
        Mix::Present => true,
        Mix::Half => r & 1 == 0,
    };
    let i = (r >> 1) % keys;
    if present {
        present_key(i)
    } else {
        absent_key(i)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let (dir, temporary) = match &args.dir {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("bloomkit-kv-mixed-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("store.redb");
    let open_store = || -> Result<RedbStore, redb::Error> {
        let db = redb::Database::builder()
            .set_cache_size(args.redb_cache_mb << 20)
            .create(&path)?;
        RedbStore::from_database(db, Some(path.clone()))
    };
    let options = Options::new(args.keys, args.fpr);

    // Build the store once (through the filter, in batches of 10,000 per commit).
    let t = Instant::now();
    let store: FilteredStore<RedbStore> = FilteredStore::open(open_store()?, options.clone())?;
    println!(
        "first open: {:?} in {:.3} s",
        store.opened(),
        t.elapsed().as_secs_f64()
    );
    let held = store.store().len()?;
    if held < args.keys {
        let value = vec![0x5a_u8; args.value_bytes];
        let mut i = held;
        while i < args.keys {
            let end = (i + 10_000).min(args.keys);
            let batch: Vec<[u8; 16]> = (i..end).map(present_key).collect();
            let ops: Vec<Op<'_>> = batch
                .iter()
                .map(|k| Op::Put {
                    key: k,
                    value: &value,
                })
                .collect();
            store.write(&ops)?;
            i = end;
        }
        println!(
            "built {} keys of {} value bytes in {:.1} s",
            args.keys,
            args.value_bytes,
            t.elapsed().as_secs_f64()
        );
    }
    drop(store);
    let file_mb = std::fs::metadata(&path)?.len() as f64 / f64::from(1 << 20);

    // Open again: the filter file reflects the last commit and loads.
    let t = Instant::now();
    let store: FilteredStore<RedbStore> = FilteredStore::open(open_store()?, options.clone())?;
    println!(
        "store {file_mb:.0} MiB; filter {:?} in {:.3} s ({:.1} MiB in memory)",
        store.opened(),
        t.elapsed().as_secs_f64(),
        store.filter().heap_bytes() as f64 / f64::from(1 << 20)
    );

    println!(
        "\n{:<8} {:<15} {:>12} {:>10} {:>8}",
        "keys", "filter", "lookups/s", "reads", "found"
    );
    let mut rates = Vec::new();
    for (mix, name) in [
        (Mix::Absent, "absent"),
        (Mix::Present, "present"),
        (Mix::Half, "50/50"),
    ] {
        // [without, with]: lookups, seconds, reads, found
        let mut sums = [(0u64, 0.0f64, 0u64, 0u64); 2];
        for round in 0..args.rounds {
            let order = if round % 2 == 0 {
                [false, true]
            } else {
                [true, false]
            };
            for with_filter in order {
                drop_caches(args.drop_caches);
                let before = store.stats();
                // Fresh keys every round and phase: nothing is cached from the last one.
                let mut rng = SplitMix64(
                    0xB100 + 16 * u64::from(round) + 2 * mix as u64 + u64::from(with_filter),
                );
                let mut found = 0u64;
                let t = Instant::now();
                for _ in 0..args.lookups {
                    let k = lookup_key(mix, args.keys, &mut rng);
                    let value = if with_filter {
                        store.get(&k)?
                    } else {
                        store.store().get(&k)?
                    };
                    // An `if`, not `+= u64::from(bool)` (rust-lang/rust#158206).
                    if black_box(value).is_some() {
                        found += 1;
                    }
                }
                let secs = t.elapsed().as_secs_f64();
                let reads = if with_filter {
                    store.stats().reads_made - before.reads_made
                } else {
                    args.lookups
                };
                let sum = &mut sums[usize::from(with_filter)];
                *sum = (
                    sum.0 + args.lookups,
                    sum.1 + secs,
                    sum.2 + reads,
                    sum.3 + found,
                );
            }
        }
        for (with_filter, (lookups, secs, reads, found)) in [false, true].into_iter().zip(sums) {
            println!(
                "{name:<8} {:<15} {:>12.0} {reads:>10} {found:>8}",
                if with_filter { "counting, 1%" } else { "none" },
                lookups as f64 / secs
            );
        }
        rates.push((name, sums[0].1 / sums[1].1));
    }
    // What the filter itself costs per lookup: its answer alone, on present keys.
    let mut rng = SplitMix64(7);
    let t = Instant::now();
    let mut maybe = 0u64;
    for _ in 0..args.lookups {
        if store.may_contain(&lookup_key(Mix::Present, args.keys, &mut rng)) {
            maybe += 1;
        }
    }
    println!(
        "\nthe filter alone: {:.0} ns per lookup ({maybe} of {} present keys said maybe)",
        t.elapsed().as_secs_f64() * 1e9 / args.lookups as f64,
        args.lookups
    );
    println!();
    for (name, ratio) in rates {
        println!("{name:<8} with filter / without: {ratio:.2}x");
    }
    let s = store.stats();
    println!(
        "\nfilter counters: {} reads avoided, {} reads made, {} false positives ({:.3}% of absent lookups)",
        s.reads_avoided,
        s.reads_made,
        s.false_positives,
        100.0 * s.false_positives as f64 / (s.reads_avoided + s.false_positives).max(1) as f64
    );
    drop(store);
    if temporary {
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}
