//! The table of the third speed round, in one run: string keys (real package names), u64
//! keys at 10^6 and 10^7, lookups one at a time and batched, and builds, each bloomkit filter
//! side by side with sbbf-rs (split-block, SIMD, runtime dispatch), which is given what its
//! users give it: XXH3-64 in one shot over the key's bytes (`twox-hash`).
//!
//! Every round times each structure on the same probes, back to back, in a rotating order,
//! and the ratio (sbbf-rs's time / this one's: above 1 is faster) is taken per round; the
//! report is the median over rounds with the middle half in brackets.
//!
//! The names: one per line, from a file named by the first argument (or `BLOOMKIT_NAMES`).
//! PyPI's index gives about 900,000:
//!
//! ```text
//! curl -s https://pypi.org/simple/ | sed -n 's/.*">\(.*\)<\/a>.*/\1/p' > /tmp/names.txt
//! cargo run --release -p bloomkit-benches --example speed3 /tmp/names.txt
//! ```
//!
//! The first 886,323 names are inserted (the count the issue measured); the rest are the
//! absent probes.

use std::hint::black_box;
use std::time::Instant;

use bloomkit::{BlockedBloomFilter, SimdBlockFilter, SplitBlockFilter};
use bloomkit_benches::key;
use twox_hash::XxHash3_64;

const ROUNDS: usize = 21;
const MEMBERS: usize = 886_323;

/// One structure's work over a slice of probes, returning a count (kept from the optimizer).
type Work<'a, K> = (&'a str, Box<dyn FnMut(&[K]) -> usize + 'a>);

/// Median ns per key of each structure, and the median (and middle half) over rounds of
/// the reference's time over each one's.
fn race<K>(title: &str, probes: &[K], work: &mut [Work<'_, K>], reference: usize) {
    let mut times = vec![Vec::new(); work.len()];
    for round in 0..ROUNDS {
        for j in 0..work.len() {
            let i = (j + round) % work.len();
            let t = Instant::now();
            black_box((work[i].1)(black_box(probes)));
            times[i].push(t.elapsed().as_nanos() as f64 / probes.len() as f64);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[v.len() / 4], v[3 * v.len() / 4])
    };
    println!(
        "\n{title} (ratio = {}'s time / this one's)",
        work[reference].0
    );
    for i in 0..work.len() {
        let mut ratios: Vec<f64> = (0..ROUNDS)
            .map(|r| times[reference][r] / times[i][r])
            .collect();
        let (ns, _, _) = median(&mut times[i].clone());
        let (mid, lo, hi) = median(&mut ratios);
        println!(
            "  {:<48} {ns:>7.2} ns   {mid:>5.2}x  [{lo:.2} - {hi:.2}]",
            work[i].0
        );
    }
}

fn xxh3(bytes: &[u8]) -> u64 {
    XxHash3_64::oneshot(bytes)
}

fn sbbf_with(bits: usize, n: usize) -> sbbf_rs_safe::Filter {
    sbbf_rs_safe::Filter::new(bits, n)
}

/// Bits per key and measured false-positive rate of a filter, from its answers on `absent`.
fn accuracy(name: &str, bytes: usize, n: usize, absent_found: usize, absent: usize) {
    println!(
        "  {name:<48} {:>6.2} bits/key   FPR {:.3}%",
        bytes as f64 * 8.0 / n as f64,
        absent_found as f64 / absent as f64 * 100.0
    );
}

fn strings(path: &str) {
    let text = std::fs::read_to_string(path).expect("the names file");
    let mut seen = std::collections::HashSet::new();
    let names: Vec<&str> = text.lines().filter(|l| seen.insert(*l)).collect();
    assert!(
        names.len() > MEMBERS,
        "need more than {MEMBERS} distinct names"
    );
    let (members, absent) = names.split_at(MEMBERS);
    println!(
        "{} names inserted, {} absent probes, mean length {:.1} bytes",
        members.len(),
        absent.len(),
        members.iter().map(|s| s.len()).sum::<usize>() as f64 / members.len() as f64
    );

    let n = members.len() as u64;
    let mut blocked = BlockedBloomFilter::<str>::new(n, 0.01).unwrap();
    blocked.insert_batch(members.iter().copied());
    let mut split = SplitBlockFilter::<str>::new(n, 0.01).unwrap();
    split.insert_batch(members.iter().copied());
    let mut simd = SimdBlockFilter::<str>::new(n, 0.01).unwrap();
    simd.insert_batch(members.iter().copied());
    // sbbf-rs at the blocked filter's memory: the same bits per key.
    let bits_per_key = (blocked.num_bits() as f64 / n as f64).round() as usize;
    let mut sbbf = sbbf_with(bits_per_key, members.len());
    for m in members {
        sbbf.insert_hash(xxh3(m.as_bytes()));
    }

    let (blocked, split, simd, sbbf) = (&blocked, &split, &simd, &sbbf);
    println!(
        "\nstrings: memory and accuracy ({} absent names)",
        absent.len()
    );
    let count = |f: &dyn Fn(&str) -> bool| absent.iter().filter(|a| f(a)).count();
    accuracy(
        "bloomkit blocked (p = 1%)",
        blocked.heap_bytes(),
        members.len(),
        count(&|a| blocked.contains(a)),
        absent.len(),
    );
    accuracy(
        "bloomkit split-block (p = 1%)",
        split.heap_bytes(),
        members.len(),
        count(&|a| split.contains(a)),
        absent.len(),
    );
    accuracy(
        "bloomkit SIMD block (p = 1%)",
        simd.heap_bytes(),
        members.len(),
        count(&|a| simd.contains(a)),
        absent.len(),
    );
    accuracy(
        "sbbf-rs (same bits/key as blocked)",
        sbbf.as_bytes().len(),
        members.len(),
        count(&|a| sbbf.contains_hash(xxh3(a.as_bytes()))),
        absent.len(),
    );

    for (label, probes) in [("members", &members[..1 << 16]), ("absent", absent)] {
        let probes = &probes[..probes.len().min(1 << 16)];
        let mut out = Vec::with_capacity(probes.len());
        let mut out2 = Vec::with_capacity(probes.len());
        let mut work: Vec<Work<'_, &str>> = vec![
            (
                "sbbf-rs, one at a time",
                Box::new(|ks: &[&str]| {
                    ks.iter()
                        .filter(|k| sbbf.contains_hash(xxh3(k.as_bytes())))
                        .count()
                }),
            ),
            (
                "bloomkit blocked, one at a time",
                Box::new(|ks: &[&str]| ks.iter().filter(|k| blocked.contains(**k)).count()),
            ),
            (
                "bloomkit blocked, contains_batch",
                Box::new(move |ks: &[&str]| {
                    out.clear();
                    blocked.contains_batch(ks.iter().copied(), &mut out);
                    out.iter().filter(|&&b| b).count()
                }),
            ),
            (
                "bloomkit split-block (Parquet's hash), one at a time",
                Box::new(|ks: &[&str]| ks.iter().filter(|k| split.contains(**k)).count()),
            ),
            (
                "bloomkit SIMD block, one at a time",
                Box::new(|ks: &[&str]| ks.iter().filter(|k| simd.contains(**k)).count()),
            ),
            (
                "bloomkit SIMD block, contains_batch",
                Box::new(move |ks: &[&str]| {
                    out2.clear();
                    simd.contains_batch(ks.iter().copied(), &mut out2);
                    out2.iter().filter(|&&b| b).count()
                }),
            ),
            (
                "bloomkit hash only (hash_key)",
                Box::new(|ks: &[&str]| {
                    ks.iter()
                        .map(|k| blocked.hash_key(*k))
                        .fold(0, u64::wrapping_add) as usize
                }),
            ),
            (
                "XXH3 one-shot only (twox-hash)",
                Box::new(|ks: &[&str]| {
                    ks.iter()
                        .map(|k| xxh3(k.as_bytes()))
                        .fold(0, u64::wrapping_add) as usize
                }),
            ),
        ];
        race(&format!("strings, {label}, lookups"), probes, &mut work, 0);
    }

    let mut work: Vec<Work<'_, &str>> = vec![
        (
            "sbbf-rs, insert one at a time",
            Box::new(|ks: &[&str]| {
                let mut f = sbbf_with(bits_per_key, ks.len());
                for k in ks {
                    f.insert_hash(xxh3(k.as_bytes()));
                }
                f.as_bytes().len()
            }),
        ),
        (
            "bloomkit blocked, insert one at a time",
            Box::new(|ks: &[&str]| {
                let mut f = BlockedBloomFilter::<str>::new(ks.len() as u64, 0.01).unwrap();
                for k in ks {
                    f.insert(k);
                }
                f.heap_bytes()
            }),
        ),
        (
            "bloomkit blocked, insert_batch",
            Box::new(|ks: &[&str]| {
                let mut f = BlockedBloomFilter::<str>::new(ks.len() as u64, 0.01).unwrap();
                f.insert_batch(ks.iter().copied());
                f.heap_bytes()
            }),
        ),
        (
            "bloomkit split-block (Parquet's hash), insert_batch",
            Box::new(|ks: &[&str]| {
                let mut f = SplitBlockFilter::<str>::new(ks.len() as u64, 0.01).unwrap();
                f.insert_batch(ks.iter().copied());
                f.heap_bytes()
            }),
        ),
        (
            "bloomkit SIMD block, insert one at a time",
            Box::new(|ks: &[&str]| {
                let mut f = SimdBlockFilter::<str>::new(ks.len() as u64, 0.01).unwrap();
                for k in ks {
                    f.insert(k);
                }
                f.heap_bytes()
            }),
        ),
        (
            "bloomkit SIMD block, insert_batch",
            Box::new(|ks: &[&str]| {
                let mut f = SimdBlockFilter::<str>::new(ks.len() as u64, 0.01).unwrap();
                f.insert_batch(ks.iter().copied());
                f.heap_bytes()
            }),
        ),
    ];
    race("strings, build (ns per key)", members, &mut work, 0);
}

fn integers(n: usize) {
    let members: Vec<u64> = (0..n as u64).map(key).collect();
    let absent: Vec<u64> = (n as u64..n as u64 + (1 << 20)).map(key).collect();
    let mut blocked = BlockedBloomFilter::<u64>::new(n as u64, 0.01).unwrap();
    blocked.insert_batch(&members);
    let mut split = SplitBlockFilter::<u64>::new(n as u64, 0.01).unwrap();
    split.insert_batch(&members);
    let mut simd = SimdBlockFilter::<u64>::new(n as u64, 0.01).unwrap();
    simd.insert_batch(&members);
    let bits_per_key = (blocked.num_bits() as f64 / n as f64).round() as usize;
    let hasher = bloomkit::core::Xxh3Builder::default();
    let h = |k: &u64| std::hash::BuildHasher::hash_one(&hasher, k);
    let mut sbbf = sbbf_with(bits_per_key, n);
    for k in &members {
        sbbf.insert_hash(h(k));
    }
    let (blocked, split, simd, sbbf) = (&blocked, &split, &simd, &sbbf);
    println!(
        "\nu64 at {n}: memory and accuracy ({} absent keys)",
        absent.len()
    );
    accuracy(
        "bloomkit blocked (p = 1%)",
        blocked.heap_bytes(),
        n,
        absent.iter().filter(|k| blocked.contains(*k)).count(),
        absent.len(),
    );
    accuracy(
        "bloomkit split-block (p = 1%)",
        split.heap_bytes(),
        n,
        absent.iter().filter(|k| split.contains(*k)).count(),
        absent.len(),
    );
    accuracy(
        "bloomkit SIMD block (p = 1%)",
        simd.heap_bytes(),
        n,
        absent.iter().filter(|k| simd.contains(*k)).count(),
        absent.len(),
    );
    accuracy(
        "sbbf-rs (same bits/key as blocked)",
        sbbf.as_bytes().len(),
        n,
        absent.iter().filter(|k| sbbf.contains_hash(h(k))).count(),
        absent.len(),
    );

    let probes: Vec<u64> = members.iter().step_by(n / (1 << 16)).copied().collect();
    let mut out = Vec::with_capacity(probes.len());
    let mut out2 = Vec::with_capacity(probes.len());
    let mut work: Vec<Work<'_, u64>> = vec![
        (
            "sbbf-rs, one at a time",
            Box::new(|ks: &[u64]| ks.iter().filter(|k| sbbf.contains_hash(h(k))).count()),
        ),
        (
            "bloomkit blocked, one at a time",
            Box::new(|ks: &[u64]| ks.iter().filter(|k| blocked.contains(*k)).count()),
        ),
        (
            "bloomkit blocked, contains_batch",
            Box::new(move |ks: &[u64]| {
                out.clear();
                blocked.contains_batch(ks, &mut out);
                out.iter().filter(|&&b| b).count()
            }),
        ),
        (
            "bloomkit split-block, one at a time",
            Box::new(|ks: &[u64]| ks.iter().filter(|k| split.contains(*k)).count()),
        ),
        (
            "bloomkit SIMD block, one at a time",
            Box::new(|ks: &[u64]| ks.iter().filter(|k| simd.contains(*k)).count()),
        ),
        (
            "bloomkit SIMD block, contains_batch",
            Box::new(move |ks: &[u64]| {
                out2.clear();
                simd.contains_batch(ks, &mut out2);
                out2.iter().filter(|&&b| b).count()
            }),
        ),
    ];
    race(
        &format!("u64 at {n}, member lookups"),
        &probes,
        &mut work,
        0,
    );

    let mut work: Vec<Work<'_, u64>> = vec![
        (
            "sbbf-rs, insert one at a time",
            Box::new(|ks: &[u64]| {
                let mut f = sbbf_with(bits_per_key, ks.len());
                for k in ks {
                    f.insert_hash(h(k));
                }
                f.as_bytes().len()
            }),
        ),
        (
            "bloomkit blocked, insert one at a time",
            Box::new(|ks: &[u64]| {
                let mut f = BlockedBloomFilter::<u64>::new(ks.len() as u64, 0.01).unwrap();
                for k in ks {
                    f.insert(k);
                }
                f.heap_bytes()
            }),
        ),
        (
            "bloomkit blocked, insert_batch",
            Box::new(|ks: &[u64]| {
                let mut f = BlockedBloomFilter::<u64>::new(ks.len() as u64, 0.01).unwrap();
                f.insert_batch(ks);
                f.heap_bytes()
            }),
        ),
        (
            "bloomkit split-block, insert one at a time",
            Box::new(|ks: &[u64]| {
                let mut f = SplitBlockFilter::<u64>::new(ks.len() as u64, 0.01).unwrap();
                for k in ks {
                    f.insert(k);
                }
                f.heap_bytes()
            }),
        ),
        (
            "bloomkit split-block, insert_batch",
            Box::new(|ks: &[u64]| {
                let mut f = SplitBlockFilter::<u64>::new(ks.len() as u64, 0.01).unwrap();
                f.insert_batch(ks);
                f.heap_bytes()
            }),
        ),
        (
            "bloomkit SIMD block, insert one at a time",
            Box::new(|ks: &[u64]| {
                let mut f = SimdBlockFilter::<u64>::new(ks.len() as u64, 0.01).unwrap();
                for k in ks {
                    f.insert(k);
                }
                f.heap_bytes()
            }),
        ),
        (
            "bloomkit SIMD block, insert_batch",
            Box::new(|ks: &[u64]| {
                let mut f = SimdBlockFilter::<u64>::new(ks.len() as u64, 0.01).unwrap();
                f.insert_batch(ks);
                f.heap_bytes()
            }),
        ),
    ];
    race(
        &format!("u64 at {n}, build (ns per key)"),
        &members,
        &mut work,
        0,
    );
}

fn main() {
    let names = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("BLOOMKIT_NAMES").ok());
    match names {
        Some(path) if !path.is_empty() => strings(&path),
        _ => println!("no names file given: string rows skipped (see the example's docs)"),
    }
    // Other sizes: `BLOOMKIT_SPEED3_SIZES=2000000,4000000`.
    let sizes =
        std::env::var("BLOOMKIT_SPEED3_SIZES").unwrap_or_else(|_| "1000000,10000000".into());
    for n in sizes.split(',') {
        integers(n.trim().parse().expect("a size"));
    }
}
