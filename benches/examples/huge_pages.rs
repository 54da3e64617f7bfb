//! Lookups in large filters with and without transparent huge pages: every filter asks Linux
//! to back its memory with 2 MiB pages once it spans two of them (`madvise(MADV_HUGEPAGE)`,
//! `bloomkit_core::bits::filled_vec`), and this measures what that buys. Run it as it is,
//! then with huge pages turned off for the process (`prctl(PR_SET_THP_DISABLE)`, which the
//! program and its allocations inherit), and compare the two lines:
//!
//! ```text
//! cargo build --release -p bloomkit-benches --example huge_pages
//! target/release/examples/huge_pages 100000000
//! python3 -c 'import ctypes, os, sys; ctypes.CDLL(None).prctl(41, 1, 0, 0, 0); os.execv(sys.argv[1], sys.argv[1:])' \
//!     target/release/examples/huge_pages 100000000
//! ```
//!
//! Each line: ns per lookup (median of 5 rounds of 2 * 10^6 probes, members and absent keys
//! mixed) of a binary fuse filter one at a time and batched, a blocked, a classic and a
//! quotient filter one at a time, each built from `n` u64 keys (default 10^7) at 1%, and the
//! process's `AnonHugePages` (0 when huge pages are off or the kernel has none).

use std::hint::black_box;
use std::time::Instant;

use bloomkit::{BinaryFuse8, BlockedBloomFilter, BloomFilter, QuotientFilter};
use bloomkit_benches::key;

const ROUNDS: usize = 5;
const PROBES: u64 = 2_000_000;

fn ns_per_probe(probes: usize, mut work: impl FnMut() -> usize) -> f64 {
    let start = Instant::now();
    black_box(work());
    start.elapsed().as_nanos() as f64 / probes as f64
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(10_000_000, |s| s.parse().expect("a number of keys"));
    let keys: Vec<u64> = (0..n).map(key).collect();
    // Half members, half keys never inserted.
    let probes: Vec<u64> = (0..PROBES)
        .map(|i| {
            if i % 2 == 0 {
                key(i * 7_919 % n)
            } else {
                key(n + i)
            }
        })
        .collect();
    let fuse = BinaryFuse8::<u64>::from_keys(&keys).expect("built");
    let mut blocked = BlockedBloomFilter::<u64>::new(n, 0.01).expect("sized");
    blocked.insert_batch(&keys);
    let mut classic = BloomFilter::<u64>::new(n, 0.01).expect("sized");
    classic.insert_batch(&keys);
    let mut quotient = QuotientFilter::<u64>::new(n, 0.01).expect("sized");
    quotient.try_insert_batch(&keys).expect("room");
    let p = probes.len();
    let mut out = Vec::with_capacity(p);
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        rounds.push([
            ns_per_probe(p, || probes.iter().filter(|k| fuse.contains(k)).count()),
            ns_per_probe(p, || {
                out.clear();
                fuse.contains_batch(&probes, &mut out);
                out.len()
            }),
            ns_per_probe(p, || probes.iter().filter(|k| blocked.contains(k)).count()),
            ns_per_probe(p, || probes.iter().filter(|k| classic.contains(k)).count()),
            ns_per_probe(p, || probes.iter().filter(|k| quotient.contains(k)).count()),
        ]);
    }
    let median = |i: usize| {
        let mut v: Vec<f64> = rounds.iter().map(|r| r[i]).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let huge = std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("AnonHugePages"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned))
        })
        .unwrap_or_else(|| "?".into());
    println!(
        "n = {n}: BinaryFuse8 {:.1} (batched {:.1}), BlockedBloomFilter {:.1}, BloomFilter {:.1}, \
         QuotientFilter {:.1} ns a lookup; AnonHugePages {huge} kB",
        median(0),
        median(1),
        median(2),
        median(3),
        median(4)
    );
}
