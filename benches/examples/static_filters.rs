//! The static filters' table, in one run: bloomkit's binary fuse and ribbon filters side by
//! side with xorf 0.13 (binary fuse 8 and 16) and bloomkit's blocked Bloom filter, at 10^6
//! and 10^7 u64 keys and on real package names: bits per key, the rate measured on 10^7
//! absent keys beside each model, lookups of members and absent keys one at a time and
//! batched, and builds.
//!
//! ```text
//! curl -s https://pypi.org/simple/ | sed -n 's/.*">\(.*\)<\/a>.*/\1/p' > /tmp/names.txt
//! cargo run --release -p bloomkit-benches --example static_filters /tmp/names.txt
//! ```
//!
//! xorf is given what bloomkit computes: each key's XXH3 hash (deduplicated, as it needs;
//! the sort is inside its timed build), so the work compared is the filter's. Every round
//! times each structure on the same probes back to back in a rotating order; the figure is
//! the median over rounds (ns per key), and the ratio is xorf BinaryFuse8's time over this
//! one's (above 1 is faster).

use std::hash::{BuildHasher, Hash};

use bloomkit::core::Xxh3Builder;
use bloomkit::{BinaryFuse16, BinaryFuse8, BlockedBloomFilter, RibbonFilter};
use bloomkit_benches::{key, median, race, split_names, timed};
use xorf::Filter as _;

const ROUNDS: usize = 7;

/// Work over a slice of keys, returning a count (kept from the optimizer).
type Work<'a, K> = Box<dyn Fn(&[&K]) -> usize + 'a>;

/// One structure: name, bytes, and its work (lookups of a probe set, one at a time or
/// batched; a build of the keys).
struct Row<'a, K: ?Sized> {
    name: &'static str,
    bytes: usize,
    one: Work<'a, K>,
    batch: Option<Work<'a, K>>,
    build: Work<'a, K>,
}

fn table<K: Hash + ?Sized + Sync>(title: &str, members: &[&K], absent: &[&K], probes: &[&K]) {
    let hasher = Xxh3Builder::default();
    let h = |k: &K| hasher.hash_one(k);
    let mut hashes: Vec<u64> = members.iter().map(|k| h(k)).collect();
    hashes.sort_unstable();
    hashes.dedup();
    let n = members.len();
    let fuse8 = BinaryFuse8::<K>::from_keys(members.iter().copied()).unwrap();
    let fuse16 = BinaryFuse16::<K>::from_keys(members.iter().copied()).unwrap();
    let ribbon1 = RibbonFilter::<K>::from_keys_with_fpr(members.iter().copied(), 0.01).unwrap();
    let ribbon01 = RibbonFilter::<K>::from_keys_with_fpr(members.iter().copied(), 0.001).unwrap();
    let mut blocked = BlockedBloomFilter::<K>::new(n as u64, 0.01).unwrap();
    blocked.insert_batch(members.iter().copied());
    let xfuse8 = xorf::BinaryFuse8::try_from(&hashes).unwrap();
    let xfuse16 = xorf::BinaryFuse16::try_from(&hashes).unwrap();
    let count = |f: &dyn Fn(&K) -> bool, ks: &[&K]| ks.iter().filter(|k| f(k)).count();
    let batch = |ks: &[&K], f: &dyn Fn(&[&K], &mut Vec<bool>)| {
        let mut out = Vec::with_capacity(ks.len());
        f(ks, &mut out);
        out.iter().filter(|&&b| b).count()
    };
    let xbuild = |ks: &[&K], sixteen: bool| {
        let mut hs: Vec<u64> = ks.iter().map(|k| h(k)).collect();
        hs.sort_unstable();
        hs.dedup();
        if sixteen {
            xorf::BinaryFuse16::try_from(&hs)
                .unwrap()
                .fingerprints
                .len()
        } else {
            xorf::BinaryFuse8::try_from(&hs).unwrap().fingerprints.len()
        }
    };
    let rows: Vec<Row<'_, K>> = vec![
        Row {
            name: "xorf BinaryFuse8",
            bytes: xfuse8.fingerprints.len(),
            one: Box::new(|ks| count(&|k| xfuse8.contains(&h(k)), ks)),
            batch: None,
            build: Box::new(|ks| xbuild(ks, false)),
        },
        Row {
            name: "xorf BinaryFuse16",
            bytes: xfuse16.fingerprints.len() * 2,
            one: Box::new(|ks| count(&|k| xfuse16.contains(&h(k)), ks)),
            batch: None,
            build: Box::new(|ks| xbuild(ks, true)),
        },
        Row {
            name: "bloomkit BinaryFuse8",
            bytes: fuse8.heap_bytes(),
            one: Box::new(|ks| count(&|k| fuse8.contains(k), ks)),
            batch: Some(Box::new(|ks| {
                batch(ks, &|ks, out| fuse8.contains_batch(ks.iter().copied(), out))
            })),
            build: Box::new(|ks| {
                BinaryFuse8::<K>::from_keys(ks.iter().copied())
                    .unwrap()
                    .heap_bytes()
            }),
        },
        Row {
            name: "bloomkit BinaryFuse16",
            bytes: fuse16.heap_bytes(),
            one: Box::new(|ks| count(&|k| fuse16.contains(k), ks)),
            batch: Some(Box::new(|ks| {
                batch(ks, &|ks, out| {
                    fuse16.contains_batch(ks.iter().copied(), out)
                })
            })),
            build: Box::new(|ks| {
                BinaryFuse16::<K>::from_keys(ks.iter().copied())
                    .unwrap()
                    .heap_bytes()
            }),
        },
        Row {
            name: "bloomkit RibbonFilter 1%",
            bytes: ribbon1.heap_bytes(),
            one: Box::new(|ks| count(&|k| ribbon1.contains(k), ks)),
            batch: Some(Box::new(|ks| {
                batch(ks, &|ks, out| {
                    ribbon1.contains_batch(ks.iter().copied(), out)
                })
            })),
            build: Box::new(|ks| {
                RibbonFilter::<K>::from_keys_with_fpr(ks.iter().copied(), 0.01)
                    .unwrap()
                    .heap_bytes()
            }),
        },
        Row {
            name: "bloomkit RibbonFilter 0.1%",
            bytes: ribbon01.heap_bytes(),
            one: Box::new(|ks| count(&|k| ribbon01.contains(k), ks)),
            batch: Some(Box::new(|ks| {
                batch(ks, &|ks, out| {
                    ribbon01.contains_batch(ks.iter().copied(), out)
                })
            })),
            build: Box::new(|ks| {
                RibbonFilter::<K>::from_keys_with_fpr(ks.iter().copied(), 0.001)
                    .unwrap()
                    .heap_bytes()
            }),
        },
        Row {
            name: "bloomkit blocked Bloom 1%",
            bytes: blocked.heap_bytes(),
            one: Box::new(|ks| count(&|k| blocked.contains(k), ks)),
            batch: Some(Box::new(|ks| {
                batch(ks, &|ks, out| {
                    blocked.contains_batch(ks.iter().copied(), out)
                })
            })),
            build: Box::new(|ks| {
                let mut f = BlockedBloomFilter::<K>::new(ks.len() as u64, 0.01).unwrap();
                f.insert_batch(ks.iter().copied());
                f.heap_bytes()
            }),
        },
    ];
    let models = [
        1.0 / 256.0,
        1.0 / 65536.0,
        bloomkit::core::LookupCore::estimated_fpr(&fuse8),
        bloomkit::core::LookupCore::estimated_fpr(&fuse16),
        ribbon1.estimated_fpr(),
        ribbon01.estimated_fpr(),
        blocked.estimated_fpr(),
    ];
    let fps: Vec<usize> = rows.iter().map(|r| (r.one)(absent)).collect();
    let members_probe: Vec<&K> = probes.to_vec();
    let absent_probe: Vec<&K> = absent.iter().take(probes.len()).copied().collect();
    let m_one = race(&rows, ROUNDS, |r| {
        Some(timed(members_probe.len(), || (r.one)(&members_probe)))
    });
    let m_batch = race(&rows, ROUNDS, |r| {
        r.batch
            .as_ref()
            .map(|b| timed(members_probe.len(), || b(&members_probe)))
    });
    let a_one = race(&rows, ROUNDS, |r| {
        Some(timed(absent_probe.len(), || (r.one)(&absent_probe)))
    });
    let a_batch = race(&rows, ROUNDS, |r| {
        r.batch
            .as_ref()
            .map(|b| timed(absent_probe.len(), || b(&absent_probe)))
    });
    let builds = {
        let mut times = vec![Vec::new(); rows.len()];
        for round in 0..3 {
            for j in 0..rows.len() {
                let i = (j + round) % rows.len();
                times[i].push(timed(n, || (rows[i].build)(members)));
            }
        }
        times.into_iter().map(median).collect::<Vec<f64>>()
    };
    println!(
        "\n{title}: {n} keys, {} absent probes for the rate, {} probes timed",
        absent.len(),
        probes.len()
    );
    println!(
        "  {:<28} {:>8} {:>10} {:>10} {:>16} {:>16} {:>16} {:>16} {:>14}",
        "structure",
        "bits/key",
        "FPR",
        "model",
        "members 1-by-1",
        "members batch",
        "absent 1-by-1",
        "absent batch",
        "build ns/key"
    );
    let cell = |v: Option<f64>, reference: Option<f64>| match (v, reference) {
        (Some(v), Some(r)) => format!("{v:.1} ({:.2}x)", r / v),
        (Some(v), None) => format!("{v:.1}"),
        _ => "-".into(),
    };
    for (i, r) in rows.iter().enumerate() {
        println!(
            "  {:<28} {:>8.2} {:>9.4}% {:>9.4}% {:>16} {:>16} {:>16} {:>16} {:>14}",
            r.name,
            r.bytes as f64 * 8.0 / n as f64,
            fps[i] as f64 / absent.len() as f64 * 100.0,
            models[i] * 100.0,
            cell(m_one[i], m_one[0]),
            cell(m_batch[i], m_one[0]),
            cell(a_one[i], a_one[0]),
            cell(a_batch[i], a_one[0]),
            format!("{:.1} ({:.2}x)", builds[i], builds[0] / builds[i]),
        );
    }
}

fn integers(n: u64) {
    let members: Vec<u64> = (0..n).map(key).collect();
    let absent: Vec<u64> = (0..10_000_000u64).map(|i| key((1 << 62) | i)).collect();
    let step = (n as usize / (1 << 20)).max(1);
    let probes: Vec<&u64> = members.iter().step_by(step).collect();
    let m: Vec<&u64> = members.iter().collect();
    let a: Vec<&u64> = absent.iter().collect();
    table(&format!("u64 keys, n = {n}"), &m, &a, &probes);
}

fn names(path: &str) {
    let text = std::fs::read_to_string(path).expect("the names file");
    let (members, absent, probes) = split_names(&text, 886_323);
    table(
        &format!("package names from {path}"),
        &members,
        &absent,
        &probes,
    );
}

fn main() {
    let sizes: Vec<u64> = std::env::var("BLOOMKIT_STATIC_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000_000, 10_000_000]);
    for n in sizes {
        integers(n);
    }
    if let Some(path) = std::env::args().nth(1) {
        names(&path);
    }
}
