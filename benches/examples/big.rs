//! Big filters: u64 keys at 10^9 (or `BLOOMKIT_BIG_N`), built and probed without holding the
//! keys in memory (they are `key(0..n)`, generated in chunks), so only the filters take RAM:
//! about 1.3 GB each at 10^9. The blocked and SIMD block filters beside sbbf-rs at the blocked
//! filter's bits/key, given the same hash.
//!
//! ```text
//! cargo run --release -p bloomkit-benches --example big
//! ```
//!
//! Builds are timed once each (allocation and zeroing included); lookups are 2^20 members
//! and 2^20 absent keys, one at a time and batched, median of 5 rounds in a rotating order;
//! the rate is measured on 10^7 absent keys.

use std::hash::BuildHasher;
use std::hint::black_box;
use std::time::Instant;

use bloomkit::{BlockedBloomFilter, SimdBlockFilter};
use bloomkit_benches::key;

const CHUNK: u64 = 1 << 16;
const ROUNDS: usize = 5;

/// One structure's lookups over the probes, returning a count (kept from the optimizer).
type Work<'a> = (&'a str, Box<dyn FnMut() -> usize + 'a>);

/// `f` over the keys `key(from..to)`, in chunks.
fn chunks(from: u64, to: u64, mut f: impl FnMut(&[u64])) {
    let mut buf = Vec::with_capacity(CHUNK as usize);
    let mut i = from;
    while i < to {
        buf.clear();
        buf.extend((i..to.min(i + CHUNK)).map(key));
        f(&buf);
        i += CHUNK;
    }
}

fn main() {
    let n: u64 = std::env::var("BLOOMKIT_BIG_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000_000);
    let hasher = bloomkit::core::Xxh3Builder::default();
    let h = |k: &u64| hasher.hash_one(k);

    let t = Instant::now();
    let mut blocked = BlockedBloomFilter::<u64>::new(n, 0.01).unwrap();
    chunks(0, n, |ks| {
        blocked.insert_batch(ks);
    });
    let blocked_build = t.elapsed().as_secs_f64() * 1e9 / n as f64;
    let t = Instant::now();
    let mut simd = SimdBlockFilter::<u64>::new(n, 0.01).unwrap();
    chunks(0, n, |ks| {
        simd.insert_batch(ks);
    });
    let simd_build = t.elapsed().as_secs_f64() * 1e9 / n as f64;
    let bits_per_key = (blocked.num_bits() as f64 / n as f64).round() as usize;
    let t = Instant::now();
    let mut sbbf = sbbf_rs_safe::Filter::new(bits_per_key, n as usize);
    chunks(0, n, |ks| {
        ks.iter().for_each(|k| {
            sbbf.insert_hash(h(k));
        })
    });
    let sbbf_build = t.elapsed().as_secs_f64() * 1e9 / n as f64;

    println!("u64 keys, n = {n}, p = 1%");
    let absent_n = 10_000_000u64;
    let absent_from = 1u64 << 62;
    let mut fp = [0usize; 3];
    chunks(absent_from, absent_from + absent_n, |ks| {
        fp[0] += ks.iter().filter(|k| blocked.contains(*k)).count();
        fp[1] += ks.iter().filter(|k| simd.contains(*k)).count();
        fp[2] += ks.iter().filter(|k| sbbf.contains_hash(h(k))).count();
    });
    let row = |name: &str, bytes: usize, fp: usize, build: f64| {
        println!(
            "  {name:<22} {:>7.1} MB  {:>6.2} bits/key  FPR {:.3}%  build {build:.1} ns/key",
            bytes as f64 / 1e6,
            bytes as f64 * 8.0 / n as f64,
            fp as f64 / absent_n as f64 * 100.0
        );
    };
    row(
        "bloomkit blocked",
        blocked.heap_bytes(),
        fp[0],
        blocked_build,
    );
    row("bloomkit SIMD block", simd.heap_bytes(), fp[1], simd_build);
    row("sbbf-rs", sbbf.as_bytes().len(), fp[2], sbbf_build);

    let step = (n >> 20).max(1);
    let members: Vec<u64> = (0..n).step_by(step as usize).map(key).collect();
    let absent: Vec<u64> = (0..members.len() as u64)
        .map(|i| key(absent_from | (1 << 40) | i))
        .collect();
    let mut out = Vec::with_capacity(members.len());
    for (what, probes) in [("members", &members), ("absent", &absent)] {
        let mut work: Vec<Work<'_>> = vec![
            (
                "blocked, one at a time",
                Box::new(|| probes.iter().filter(|k| blocked.contains(*k)).count()),
            ),
            (
                "blocked, batched",
                Box::new(|| {
                    out.clear();
                    blocked.contains_batch(probes, &mut out);
                    out.iter().filter(|&&b| b).count()
                }),
            ),
            (
                "SIMD block, one at a time",
                Box::new(|| probes.iter().filter(|k| simd.contains(*k)).count()),
            ),
            (
                "sbbf-rs, one at a time",
                Box::new(|| probes.iter().filter(|k| sbbf.contains_hash(h(k))).count()),
            ),
        ];
        let mut times = vec![Vec::new(); work.len()];
        for round in 0..ROUNDS {
            for j in 0..work.len() {
                let i = (j + round) % work.len();
                let t = Instant::now();
                black_box((work[i].1)());
                times[i].push(t.elapsed().as_nanos() as f64 / probes.len() as f64);
            }
        }
        println!(
            "lookups of {} {what}, median ns/key over {ROUNDS} rounds",
            probes.len()
        );
        let sbbf_ns = {
            let mut v = times[3].clone();
            v.sort_by(f64::total_cmp);
            v[ROUNDS / 2]
        };
        for (i, (name, _)) in work.iter().enumerate() {
            let mut v = times[i].clone();
            v.sort_by(f64::total_cmp);
            let ns = v[ROUNDS / 2];
            println!("  {name:<28} {ns:>7.2} ns  ({:.2}x sbbf-rs)", sbbf_ns / ns);
        }
    }
}
