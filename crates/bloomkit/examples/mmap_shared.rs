//! A blocked Bloom filter in a file, answered from a memory map by several processes at
//! once, and the cost of each way of loading it.
//!
//! ```text
//! cargo run --release -p bloomkit --example mmap_shared -- [--keys N] [--processes P] [--dir D] [--cold]
//! ```
//!
//! The parent builds a filter of N keys (default 10^8) at 1%, writes it with `write_to`,
//! and then starts one child process per way of loading it, each measuring, from the
//! start of the load, the time to its first answer and its resident memory after it:
//!
//! - `from_bytes`: the file read into a `Vec<u8>`, then decoded (a second copy, the filter);
//! - `read_from`: the file streamed into the filter (one copy);
//! - `view`: the file mapped, and a `BlockedBloomFilterRef` over the map, all checksums
//!   checked (reads the file once, copies nothing);
//! - `view-unverified`: the same, without the payload's checksum (reads nothing).
//!
//! Then P children map the same file at once and answer lookups from it: their anonymous
//! (private) memory stays small, since the bits are in the page cache once, shared.
//! With `--cold`, the page cache is dropped before each child (needs root), so the
//! loads read from the disk.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use bloomkit::format::Verify;
use bloomkit::{BlockedBloomFilter, BlockedBloomFilterRef, Codec, Xxh3Builder};

/// Keys that were inserted: `0..n`; keys that were not: `n..`.
const SEED: u64 = 42;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// `RssAnon`, `RssFile` and the peak RSS (`VmHWM`) of this process, in MiB, from
/// `/proc/self/status` (Linux).
fn resident() -> (f64, f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("RssAnon:"), field("RssFile:"), field("VmHWM:"))
}

/// Answers `count` member and `count` absent lookups; returns the members found and the
/// false positives.
fn lookups(contains: impl Fn(u64) -> bool, keys: u64, from: u64, count: u64) -> (u64, u64) {
    let found = (from..from + count).filter(|k| contains(k % keys)).count() as u64;
    let fp = (0..count).filter(|k| contains(keys + from + k)).count() as u64;
    (found, fp)
}

/// One child: load the filter `mode`'s way, answer, report one line.
fn child(mode: &str, path: &Path, keys: u64, from: u64) {
    let start = Instant::now();
    // Resident memory right after the first answer: what loading cost.
    let report = |first: f64,
                  (anon, file, peak): (f64, f64, f64),
                  found: u64,
                  fp: u64,
                  count: u64| {
        println!(
            "{mode:>16} | {:>10.3} ms | {anon:>9.1} MiB | {file:>9.1} MiB | {peak:>9.1} MiB | {found}/{count} members, {fp} false positives",
            first * 1e3
        );
    };
    let count = 1_000_000.min(keys);
    match mode {
        "from_bytes" | "read_from" => {
            let f: BlockedBloomFilter<u64> = if mode == "from_bytes" {
                let bytes = std::fs::read(path).expect("read the file");
                BlockedBloomFilter::from_bytes(&bytes).expect("decode")
            } else {
                let file = BufReader::new(File::open(path).expect("open"));
                BlockedBloomFilter::read_from(file).expect("decode")
            };
            assert!(f.contains(&from));
            let first = start.elapsed().as_secs_f64();
            let memory = resident();
            let (found, fp) = lookups(|k| f.contains(&k), keys, from, count);
            report(first, memory, found, fp, count);
        }
        _ => {
            let file = File::open(path).expect("open");
            // SAFETY: the file is not written or truncated while it is mapped: the parent
            // wrote it before starting the children, and nothing else touches it. (A map
            // of a file changed underneath is the one way this could read torn bytes.)
            #[allow(unsafe_code)]
            let map = unsafe { memmap2::Mmap::map(&file) }.expect("map");
            let verify = if mode == "view" {
                Verify::All
            } else {
                Verify::SkipPayloadChecksum
            };
            let f =
                BlockedBloomFilterRef::<u64, Xxh3Builder>::with_hasher(&map, verify).expect("view");
            assert!(f.contains(&from));
            let first = start.elapsed().as_secs_f64();
            let memory = resident();
            let (found, fp) = lookups(|k| f.contains(&k), keys, from, count);
            report(first, memory, found, fp, count);
        }
    }
}

fn drop_page_cache() -> bool {
    let _ = Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
}

fn main() {
    let keys: u64 = arg("--keys").map_or(100_000_000, |s| s.parse().expect("--keys N"));
    let path = arg("--file").map(PathBuf::from).unwrap_or_else(|| {
        let dir = arg("--dir").map_or_else(std::env::temp_dir, PathBuf::from);
        dir.join("bloomkit-mmap-example.blmk")
    });
    if let Some(mode) = arg("--child") {
        let from = arg("--from").map_or(0, |s| s.parse().expect("--from N"));
        child(&mode, &path, keys, from);
        return;
    }
    let processes: u64 = arg("--processes").map_or(4, |s| s.parse().expect("--processes P"));
    let cold = std::env::args().any(|a| a == "--cold");

    let t = Instant::now();
    let mut f = BlockedBloomFilter::<u64>::builder(keys, 0.01)
        .seed(SEED)
        .build()
        .expect("size the filter");
    f.insert_batch(0..keys);
    let built = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut out = BufWriter::new(File::create(&path).expect("create the file"));
    f.write_to(&mut out).expect("write");
    out.into_inner().expect("flush").sync_all().expect("sync");
    println!(
        "{keys} keys at 1%: {:.1} MB in {} (built in {built:.2} s, written in {:.2} s)",
        f.serialized_len() as f64 / 1e6,
        path.display(),
        t.elapsed().as_secs_f64()
    );
    drop(f);

    let me = std::env::current_exe().expect("own path");
    let spawn = |mode: &str, from: u64| {
        Command::new(&me)
            .args([
                "--child",
                mode,
                "--keys",
                &keys.to_string(),
                "--from",
                &from.to_string(),
            ])
            .arg("--file")
            .arg(&path)
            .spawn()
            .expect("start a child")
    };
    println!(
        "\n{:>16} | first answer  | RssAnon       | RssFile       | peak RSS      | lookups",
        "load"
    );
    for mode in ["from_bytes", "read_from", "view", "view-unverified"] {
        if cold && !drop_page_cache() {
            eprintln!("--cold: cannot drop the page cache (not root?): measuring warm");
        }
        spawn(mode, 0).wait().expect("child");
    }
    println!("\n{processes} processes answering from one shared mapping at once:");
    let children: Vec<_> = (0..processes)
        .map(|i| spawn("view-unverified", i * 1_000_000))
        .collect();
    for mut c in children {
        assert!(c.wait().expect("child").success());
    }
    std::fs::remove_file(&path).ok();
}
