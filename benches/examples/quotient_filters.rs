//! The quotient filter's targets table, in one run: bloomkit's `QuotientFilter` side by side
//! with qfilter 0.3 (the rank-select quotient filter crate), cuckoofilter 0.5 and bloomkit's
//! `CountingBloomFilter`, all at 1% except the cuckoo filter (fixed 8-bit fingerprints), at
//! 10^6 and 10^7 u64 keys and on real package names: bits per key, load, the rate measured
//! on absent keys beside each model, lookups of members and absent keys one at a time and
//! batched, inserts (building the whole filter) and removes (half the keys), then the
//! survivors' false negatives and rate.
//!
//! ```text
//! curl -s https://pypi.org/simple/ | sed -n 's/.*">\(.*\)<\/a>.*/\1/p' > /tmp/names.txt
//! cargo run --release -p bloomkit-benches --example quotient_filters /tmp/names.txt
//! BLOOMKIT_QF_SIZES=1000000 cargo run --release -p bloomkit-benches --example quotient_filters
//! ```
//!
//! Each u64 size `n` gives two tables: `n` keys in filters sized for `n` (qfilter rounds its
//! home slots up to a power of two, so 10^6 keys fill 2^21 slots to 48% and 10^7 fill 2^24
//! to 60%; bloomkit's takes the fewest multiple of 64 that holds `n` at 95% load), then the
//! same keys with bloomkit's filter given qfilter's home slots (sized for 95% of them), so
//! that both run at one load. The names (both tables too): the first 886,323 are inserted,
//! the rest (some 40,000: a noisier rate than the 10^7 absent u64 keys give) are the absent
//! probes. `BLOOMKIT_QF_SIZES` (comma-separated) picks the u64 sizes.
//!
//! qfilter is given what bloomkit computes: each key's XXH3 hash, through its fingerprint
//! API (`insert_fingerprint(true, h)`, which adds a copy as bloomkit's `insert` does;
//! `contains_fingerprint`, `remove_fingerprint`), so the work compared is the filter's.
//! cuckoofilter is given the keys: it hashes them itself, with its default hasher (std's
//! SipHash-1-3), and has no API that takes a hash. Only bloomkit's filters have batched
//! lookups. Every round times each structure on the same probes back to back in a rotating
//! order; the figure is the median over rounds (ns per key), and a ratio is the reference's
//! time over this one's (above 1 is faster).

use std::collections::hash_map::DefaultHasher;
use std::hash::{BuildHasher, Hash};

use bloomkit::core::Xxh3Builder;
use bloomkit::{CountingBloomFilter, LookupCore, QuotientFilter};
use bloomkit_benches::{median, members, non_members, race, split_names, timed};
use cuckoofilter::CuckooFilter;

/// Rounds of lookups.
const ROUNDS: usize = 7;
/// Rounds of builds and removes (each one builds or copies a whole filter).
const BUILD_ROUNDS: usize = 3;
/// The rate every filter but the cuckoo filter is sized for.
const FPR: f64 = 0.01;
/// The names inserted; the rest are the absent probes.
const NAMES: usize = 886_323;

/// The rows, in this order: the reference of the ratios first.
const QFILTER: usize = 0;
const QUOTIENT: usize = 1;
const COUNTING: usize = 2;

/// Work over a slice of keys, returning a count (kept from the optimizer).
type Work<'a, K> = Box<dyn Fn(&[&K]) -> usize + 'a>;

/// A filter after the removes: its lookup, and the rate its model then gives.
struct After<'a, K: ?Sized> {
    contains: Box<dyn Fn(&K) -> bool + 'a>,
    estimate: f64,
}

/// Removes keys from a copy of the built filter: ns per key (the copy is not timed), and
/// the copy after the removes.
type Removes<'a, K> = Box<dyn Fn(&[&K]) -> (f64, After<'a, K>) + 'a>;

/// One structure: name, memory, load and rates, and its work (lookups of a probe set, one
/// at a time or batched; a build of the keys, one at a time or batched; removes).
struct Row<'a, K: ?Sized> {
    name: &'static str,
    bytes: usize,
    /// Items over slots (for the counting filter: the share of counters above zero).
    load: f64,
    /// The rate asked for, if it takes one.
    target: Option<f64>,
    /// The rate its own model gives at this load.
    model: f64,
    one: Work<'a, K>,
    batch: Option<Work<'a, K>>,
    insert: Work<'a, K>,
    insert_batch: Option<Work<'a, K>>,
    remove: Removes<'a, K>,
}

/// The cuckoo filter's rate at `load`: a lookup compares its 8-bit fingerprint (255 values,
/// one of them twice as likely) with the 8 slots of its two buckets.
fn cuckoo_model(load: f64) -> f64 {
    1.0 - (1.0 - 257.0 / 65536.0f64).powf(8.0 * load)
}

/// qfilter's home slots: `2^(fingerprint bits - remainder bits)`.
fn qfilter_slots(f: &qfilter::Filter) -> f64 {
    let remainder_bits = -f.max_error_ratio().log2();
    (f64::from(f.fingerprint_size()) - remainder_bits).exp2()
}

fn percent(rate: f64) -> String {
    format!("{:.4}%", rate * 100.0)
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

/// How bloomkit's quotient filter is sized for a count of keys.
#[derive(Clone, Copy)]
enum Sizing {
    /// For the count (as every other structure).
    ForKeys,
    /// For 95% of the home slots qfilter takes for the count: the same table, one load.
    AsQfilter,
}

impl Sizing {
    /// The count to build bloomkit's filter for, to hold `n` keys.
    fn items(self, n: usize) -> u64 {
        match self {
            Sizing::ForKeys => n as u64,
            Sizing::AsQfilter => {
                let q = qfilter::Filter::new(n as u64, FPR).expect("sized");
                (qfilter_slots(&q) * 0.95) as u64
            }
        }
    }

    fn what(self) -> &'static str {
        match self {
            Sizing::ForKeys => "every filter sized for them",
            Sizing::AsQfilter => "bloomkit's filter given qfilter's home slots",
        }
    }
}

fn table<K: Hash + ?Sized>(
    title: &str,
    sizing: Sizing,
    members: &[&K],
    absent: &[&K],
    probes: &[&K],
) {
    let n = members.len();
    let hasher = Xxh3Builder::default();
    let h = |k: &K| hasher.hash_one(k);
    let title = format!("{title}: {}", sizing.what());
    let title = title.as_str();

    let mut xq = qfilter::Filter::new(n as u64, FPR).expect("sized");
    for k in members {
        xq.insert_fingerprint(true, h(k)).expect("room");
    }
    let mut qf = QuotientFilter::<K>::new(sizing.items(n), FPR).expect("sized");
    for k in members {
        qf.try_insert(k).expect("room");
    }
    let mut counting = CountingBloomFilter::<K>::new(n as u64, FPR).expect("sized");
    for k in members {
        counting.insert(k);
    }
    let mut cuckoo = CuckooFilter::<DefaultHasher>::with_capacity(n);
    let cuckoo_refused = members.iter().filter(|k| cuckoo.add(**k).is_err()).count();
    let cuckoo_slots = cuckoo.export().values.len() as f64;

    let batch_count = |out: &[bool]| out.iter().filter(|&&b| b).count();
    let rows: Vec<Row<'_, K>> = vec![
        Row {
            name: "qfilter 0.3 (XXH3 fingerprints)",
            bytes: xq.memory_usage(),
            load: xq.len() as f64 / qfilter_slots(&xq),
            target: Some(FPR),
            model: xq.current_error_ratio(),
            one: Box::new(|ks| ks.iter().filter(|k| xq.contains_fingerprint(h(k))).count()),
            batch: None,
            insert: Box::new(|ks| {
                let mut f = qfilter::Filter::new(ks.len() as u64, FPR).expect("sized");
                for k in ks {
                    f.insert_fingerprint(true, h(k)).expect("room");
                }
                f.memory_usage()
            }),
            insert_batch: None,
            remove: Box::new(|ks| {
                let mut f = xq.clone();
                let t = timed(ks.len(), || {
                    ks.iter().filter(|k| f.remove_fingerprint(h(k))).count()
                });
                let estimate = f.current_error_ratio();
                let contains = Box::new(move |k: &K| f.contains_fingerprint(h(k)));
                (t, After { contains, estimate })
            }),
        },
        Row {
            name: "bloomkit QuotientFilter",
            bytes: qf.heap_bytes(),
            load: qf.load_factor(),
            target: qf.target_fpr(),
            model: qf.estimated_fpr(),
            one: Box::new(|ks| ks.iter().filter(|k| qf.contains(k)).count()),
            batch: Some(Box::new(|ks| {
                let mut out = Vec::with_capacity(ks.len());
                qf.contains_batch(ks.iter().copied(), &mut out);
                batch_count(&out)
            })),
            insert: Box::new(|ks| {
                let mut f = QuotientFilter::<K>::new(sizing.items(ks.len()), FPR).expect("sized");
                for k in ks {
                    f.try_insert(k).expect("room");
                }
                f.heap_bytes()
            }),
            insert_batch: Some(Box::new(|ks| {
                let mut f = QuotientFilter::<K>::new(sizing.items(ks.len()), FPR).expect("sized");
                f.try_insert_batch(ks.iter().copied()).expect("room")
            })),
            remove: Box::new(|ks| {
                let mut f = qf.clone();
                let t = timed(ks.len(), || {
                    ks.iter().filter(|k| f.remove(k).is_ok()).count()
                });
                let estimate = f.estimated_fpr();
                let contains = Box::new(move |k: &K| f.contains(k));
                (t, After { contains, estimate })
            }),
        },
        Row {
            name: "bloomkit CountingBloomFilter",
            bytes: counting.heap_bytes(),
            load: counting.nonzero_counters() as f64 / counting.num_counters() as f64,
            target: Some(FPR),
            model: counting.estimated_fpr(),
            one: Box::new(|ks| ks.iter().filter(|k| counting.contains(k)).count()),
            batch: Some(Box::new(|ks| {
                let mut out = Vec::with_capacity(ks.len());
                counting.contains_batch(ks.iter().copied(), &mut out);
                batch_count(&out)
            })),
            insert: Box::new(|ks| {
                let mut f = CountingBloomFilter::<K>::new(ks.len() as u64, FPR).expect("sized");
                for k in ks {
                    f.insert(k);
                }
                f.heap_bytes()
            }),
            insert_batch: Some(Box::new(|ks| {
                let mut f = CountingBloomFilter::<K>::new(ks.len() as u64, FPR).expect("sized");
                f.insert_batch(ks.iter().copied())
            })),
            remove: Box::new(|ks| {
                let mut f = counting.clone();
                let t = timed(ks.len(), || {
                    ks.iter().filter(|k| f.remove(k).is_ok()).count()
                });
                let estimate = f.estimated_fpr();
                let contains = Box::new(move |k: &K| f.contains(k));
                (t, After { contains, estimate })
            }),
        },
        Row {
            name: "cuckoofilter 0.5 (SipHash keys)",
            bytes: cuckoo.memory_usage(),
            load: cuckoo.len() as f64 / cuckoo_slots,
            target: None,
            model: cuckoo_model(cuckoo.len() as f64 / cuckoo_slots),
            one: Box::new(|ks| ks.iter().filter(|k| cuckoo.contains(**k)).count()),
            batch: None,
            insert: Box::new(|ks| {
                let mut f = CuckooFilter::<DefaultHasher>::with_capacity(ks.len());
                ks.iter().filter(|k| f.add(**k).is_ok()).count()
            }),
            insert_batch: None,
            remove: Box::new(|ks| {
                let mut f: CuckooFilter<DefaultHasher> = cuckoo.export().into();
                let t = timed(ks.len(), || ks.iter().filter(|k| f.delete(**k)).count());
                let estimate = cuckoo_model(f.len() as f64 / cuckoo_slots);
                let contains = Box::new(move |k: &K| f.contains(k));
                (t, After { contains, estimate })
            }),
        },
    ];

    let fps: Vec<usize> = rows.iter().map(|r| (r.one)(absent)).collect();
    let absent_probes = &absent[..probes.len().min(absent.len())];
    let m_one = race(&rows, ROUNDS, |r| {
        Some(timed(probes.len(), || (r.one)(probes)))
    });
    let a_one = race(&rows, ROUNDS, |r| {
        Some(timed(absent_probes.len(), || (r.one)(absent_probes)))
    });
    let m_batch = race(&rows, ROUNDS, |r| {
        r.batch.as_ref().map(|b| timed(probes.len(), || b(probes)))
    });
    let a_batch = race(&rows, ROUNDS, |r| {
        r.batch
            .as_ref()
            .map(|b| timed(absent_probes.len(), || b(absent_probes)))
    });
    let inserts = race(&rows, BUILD_ROUNDS, |r| {
        Some(timed(n, || (r.insert)(members)))
    });
    let inserts_batch = race(&rows, BUILD_ROUNDS, |r| {
        r.insert_batch.as_ref().map(|b| timed(n, || b(members)))
    });
    let (removed, survivors) = members.split_at(n / 2);
    let mut remove_times = vec![Vec::new(); rows.len()];
    let mut afters: Vec<Option<After<'_, K>>> = rows.iter().map(|_| None).collect();
    for round in 0..BUILD_ROUNDS {
        for j in 0..rows.len() {
            let i = (j + round) % rows.len();
            let (t, after) = (rows[i].remove)(removed);
            remove_times[i].push(t);
            afters[i] = Some(after);
        }
    }
    let removes: Vec<f64> = remove_times.into_iter().map(median).collect();

    let get = |v: &[Option<f64>], i: usize| v[i].expect("timed");
    let vs = |reference: f64, v: f64| reference / v;
    println!("\n### {title}\n");
    println!(
        "{n} keys inserted; rate measured on {} absent keys; lookups timed on {} members and \
         {} absent keys.\n",
        absent.len(),
        probes.len(),
        absent_probes.len()
    );
    println!("| structure | bits/key | load | FPR measured | model | target | measured / target |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (i, r) in rows.iter().enumerate() {
        let fpr = fps[i] as f64 / absent.len() as f64;
        println!(
            "| {} | {:.2} | {:.3} | {} | {} | {} | {} |",
            r.name,
            r.bytes as f64 * 8.0 / n as f64,
            r.load,
            percent(fpr),
            percent(r.model),
            r.target.map_or("-".into(), percent),
            r.target.map_or("-".into(), |t| format!("{:.2}x", fpr / t)),
        );
    }
    println!(
        "\nns per key, median of {ROUNDS} rounds ({BUILD_ROUNDS} for inserts and removes). \
         (Nx q): qfilter's time over this one's, one at a time (batched lookups and inserts are \
         compared with qfilter's one at a time); (Nx c): the counting filter's one at a time. \
         Above 1 is faster. Inserts build the whole filter; removes take out half the keys.\n"
    );
    println!(
        "| structure | members 1-by-1 | absent 1-by-1 | members batched | absent batched | \
         inserts | inserts batched | removes |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let (qm, qa, cm, ca) = (
        get(&m_one, QFILTER),
        get(&a_one, QFILTER),
        get(&m_one, COUNTING),
        get(&a_one, COUNTING),
    );
    let (qi, qr) = (get(&inserts, QFILTER), removes[QFILTER]);
    let both = |v: f64, q: f64, c: f64| format!("{v:.1} ({:.2}x q, {:.2}x c)", q / v, c / v);
    let one =
        |v: Option<f64>, q: f64| v.map_or("-".into(), |v| format!("{v:.1} ({:.2}x q)", q / v));
    for (i, r) in rows.iter().enumerate() {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            both(get(&m_one, i), qm, cm),
            both(get(&a_one, i), qa, ca),
            one(m_batch[i], qm),
            one(a_batch[i], qa),
            one(inserts[i], qi),
            one(inserts_batch[i], qi),
            one(Some(removes[i]), qr),
        );
    }

    println!(
        "\nAfter inserting {n} keys and removing {} of them: the {} survivors looked up, and \
         the rate on the absent keys.\n",
        removed.len(),
        survivors.len()
    );
    println!("| structure | false negatives | FPR measured | estimate |");
    println!("|---|---:|---:|---:|");
    let mut negatives = vec![0; rows.len()];
    for (i, r) in rows.iter().enumerate() {
        let after = afters[i].as_ref().expect("removed");
        negatives[i] = survivors.iter().filter(|k| !(after.contains)(k)).count();
        let fp = absent.iter().filter(|k| (after.contains)(k)).count();
        println!(
            "| {} | {} | {} | {} |",
            r.name,
            negatives[i],
            percent(fp as f64 / absent.len() as f64),
            percent(after.estimate),
        );
    }
    if cuckoo_refused > 0 {
        println!(
            "\ncuckoofilter refused {cuckoo_refused} inserts (each refusal drops another \
             key's fingerprint: its false negatives)."
        );
    }

    let q = &rows[QUOTIENT];
    let bits = q.bytes as f64 * 8.0 / n as f64;
    let fpr = fps[QUOTIENT] as f64 / absent.len() as f64;
    let (m, a) = (get(&m_one, QUOTIENT), get(&a_one, QUOTIENT));
    let (mb, ab) = (get(&m_batch, QUOTIENT), get(&a_batch, QUOTIENT));
    let (ins, rem) = (get(&inserts, QUOTIENT), removes[QUOTIENT]);
    println!("\nTargets of bloomkit QuotientFilter at 1%:\n");
    if q.load >= 0.94 {
        println!(
            "- bits/key <= 11 at 95% load: {bits:.2} at load {:.3}: {}",
            q.load,
            verdict(bits <= 11.0)
        );
    } else {
        println!(
            "- bits/key <= 11 at 95% load: not at 95% load here ({bits:.2} at load {:.3})",
            q.load
        );
    }
    println!(
        "- measured rate <= 1.05x target: {} = {:.2}x: {}",
        percent(fpr),
        fpr / FPR,
        verdict(fpr <= 1.05 * FPR)
    );
    for (what, reference, mine, goal) in [
        ("members 1-by-1 >= 1.0x qfilter", qm, m, 1.0),
        ("absent 1-by-1 >= 1.0x qfilter", qa, a, 1.0),
        ("members 1-by-1 >= 1.0x counting", cm, m, 1.0),
        ("absent 1-by-1 >= 1.0x counting", ca, a, 1.0),
        ("members batched >= 2x qfilter", qm, mb, 2.0),
        ("absent batched >= 2x qfilter", qa, ab, 2.0),
        ("inserts >= 1.0x qfilter", qi, ins, 1.0),
        ("removes >= 1.0x qfilter", qr, rem, 1.0),
    ] {
        let x = vs(reference, mine);
        println!("- {what}: {x:.2}x: {}", verdict(x >= goal));
    }
    println!(
        "- 0 false negatives after {n} inserts and {} removes: {}: {}",
        removed.len(),
        negatives[QUOTIENT],
        verdict(negatives[QUOTIENT] == 0)
    );
    for i in [QFILTER, QUOTIENT, COUNTING] {
        assert_eq!(
            negatives[i], 0,
            "{}: false negatives after removes",
            rows[i].name
        );
    }
}

/// `n` u64 keys, each filter sized for `n`, then bloomkit's at qfilter's load.
fn integers(n: u64, absent: &[&u64]) {
    let keys = members(n);
    let step = (n as usize / (1 << 20)).max(1);
    let probes: Vec<&u64> = keys.iter().step_by(step).collect();
    let m: Vec<&u64> = keys.iter().collect();
    for sizing in [Sizing::ForKeys, Sizing::AsQfilter] {
        table(&format!("u64 keys, n = {n}"), sizing, &m, absent, &probes);
    }
}

fn names(path: &str) {
    let text = std::fs::read_to_string(path).expect("the names file");
    let (members, absent, probes) = split_names(&text, NAMES);
    for sizing in [Sizing::ForKeys, Sizing::AsQfilter] {
        let title = format!("package names from {path}");
        table(&title, sizing, &members, &absent, &probes);
    }
}

fn main() {
    let sizes: Vec<u64> = std::env::var("BLOOMKIT_QF_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000_000, 10_000_000]);
    let absent = non_members(10_000_000);
    let absent: Vec<&u64> = absent.iter().collect();
    for n in sizes {
        integers(n, &absent);
    }
    if let Some(path) = std::env::args().nth(1) {
        names(&path);
    }
}
