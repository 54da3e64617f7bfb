//! The expandable filter's targets table, in one run: bloomkit's `ExpandableFilter` grown
//! a thousandfold beside bloomkit's `ScalableBloomFilter`, growable-bloom-filter 2 and
//! qfilter 0.3's resizeable filter (told the final size up front, as its API requires), and
//! the `ExpandableFilter` made for the final size (never grown), at 1% and 0.1%, on u64 keys
//! (10,000 to 10^7) and on real package names (886 to 886,323).
//!
//! ```text
//! curl -s https://pypi.org/simple/ | sed -n 's/.*">\(.*\)<\/a>.*/\1/p' > /tmp/names.txt
//! cargo run --release -p bloomkit-benches --example expandable /tmp/names.txt
//! BLOOMKIT_GROWTH_START=1000 cargo run --release -p bloomkit-benches --example expandable
//! ```
//!
//! At 1x, 10x, 100x and 1000x the initial size: the rate measured on absent keys (10^6 u64
//! keys never inserted, or the names past the first 886,323), bits per key (heap bytes over
//! keys held; growable-bloom-filter's serialized size, the closest it exposes), and absent
//! and member lookups one at a time (ns per key, the median of 7 rounds, each round timing
//! every structure back to back in a rotating order). A ratio is the scalable filter's time
//! over this one's (above 1 is faster). bloomkit's filters hash with XXH3; qfilter and
//! growable-bloom-filter hash the keys themselves (qfilter with its default hasher).

use std::hash::Hash;

use bloomkit::{ExpandableFilter, ScalableBloomFilter};
use bloomkit_benches::{race, split_names, timed};

/// Rounds of lookups.
const ROUNDS: usize = 7;

/// The growth points measured.
const GROWTH: [u64; 4] = [1, 10, 100, 1_000];

/// One structure under test, over keys `K`.
enum Row<K: Hash + ?Sized> {
    Expandable(ExpandableFilter<K>),
    Scalable(ScalableBloomFilter<K>),
    Growable(growable_bloom_filter::GrowableBloom),
    Qfilter(qfilter::Filter),
}

impl<K: Hash + ?Sized> Row<K> {
    fn name(&self, never_grown: bool) -> &'static str {
        match self {
            Row::Expandable(_) if never_grown => {
                "bloomkit ExpandableFilter (made for the final size)"
            }
            Row::Expandable(_) => "bloomkit ExpandableFilter",
            Row::Scalable(_) => "bloomkit ScalableBloomFilter",
            Row::Growable(_) => "growable-bloom-filter 2",
            Row::Qfilter(_) => "qfilter 0.3 (resizeable, told the final size)",
        }
    }

    fn insert(&mut self, key: &K) {
        match self {
            Row::Expandable(f) => {
                f.try_insert(key).expect("the expandable filter grows");
            }
            Row::Scalable(f) => {
                f.try_insert(key).expect("the scalable filter grows");
            }
            Row::Growable(f) => {
                f.insert(key);
            }
            Row::Qfilter(f) => {
                f.insert(key).expect("qfilter was told the final size");
            }
        }
    }

    fn contains(&self, key: &K) -> bool {
        match self {
            Row::Expandable(f) => f.contains(key),
            Row::Scalable(f) => f.contains(key),
            Row::Growable(f) => f.contains(key),
            Row::Qfilter(f) => f.contains(key),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Row::Expandable(f) => f.heap_bytes(),
            Row::Scalable(f) => f.heap_bytes(),
            Row::Growable(f) => {
                bincode::serde::encode_to_vec(f, bincode::config::standard()).map_or(0, |v| v.len())
            }
            Row::Qfilter(f) => f.memory_usage(),
        }
    }
}

/// Builds every grown structure from `start` keys, measuring at each growth point; then the
/// expandable filter made for the final size.
fn run<K: Hash + ?Sized>(label: &str, members: &[&K], absent: &[&K], start: u64, p: f64) {
    let last = start * GROWTH[GROWTH.len() - 1];
    let mut rows: Vec<Row<K>> = vec![
        Row::Expandable(ExpandableFilter::new(start, p).unwrap()),
        Row::Scalable(ScalableBloomFilter::new(start, p).unwrap()),
        Row::Growable(growable_bloom_filter::GrowableBloom::new(p, start as usize)),
        Row::Qfilter(qfilter::Filter::new_resizeable(start, last, p).unwrap()),
    ];
    println!(
        "\n### {label} at {}%: {start} keys grown to {last}\n",
        100.0 * p
    );
    println!("| growth | structure | FPR measured | / target | bits/key | absent ns | members ns | extra |");
    println!("|---|---|---:|---:|---:|---:|---:|---|");
    let mut held = 0usize;
    let mut at_1000 = Vec::new();
    for growth in GROWTH {
        let n = (start * growth) as usize;
        for row in &mut rows {
            for key in &members[held..n] {
                row.insert(key);
            }
        }
        held = n;
        let probes: Vec<&K> = members[..n]
            .iter()
            .step_by((n / 100_000).max(1))
            .copied()
            .collect();
        report(
            growth,
            &rows,
            &members[..n],
            &probes,
            absent,
            p,
            false,
            &mut at_1000,
        );
    }
    // The same keys in the expandable filter made for all of them.
    let mut made = ExpandableFilter::<K>::new(last, p).unwrap();
    for &key in members.iter().take(held) {
        made.try_insert(key).unwrap();
    }
    let made = [Row::Expandable(made)];
    let probes: Vec<&K> = members[..held]
        .iter()
        .step_by((held / 100_000).max(1))
        .copied()
        .collect();
    report(
        GROWTH[3],
        &made,
        &members[..held],
        &probes,
        absent,
        p,
        true,
        &mut at_1000,
    );
    // at_1000: (name, bits/key, absent ns, rate) of the grown rows, then the never-grown one.
    let find = |name: &str| {
        at_1000
            .iter()
            .find(|r: &&(&str, f64, f64, f64)| r.0 == name)
            .copied()
    };
    let (Some(ours), Some(scalable), Some(never)) = (
        find("bloomkit ExpandableFilter"),
        find("bloomkit ScalableBloomFilter"),
        find("bloomkit ExpandableFilter (made for the final size)"),
    ) else {
        return;
    };
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    println!("\nTargets at 1000x ({label}, {}%):\n", 100.0 * p);
    println!(
        "- bits/key <= 0.8x the scalable filter's: {:.2} vs {:.2} = {:.2}x: {}",
        ours.1,
        scalable.1,
        ours.1 / scalable.1,
        verdict(ours.1 <= 0.8 * scalable.1)
    );
    println!(
        "- absent lookups >= 3x the scalable filter's speed: {:.1} vs {:.1} ns = {:.2}x: {}",
        ours.2,
        scalable.2,
        scalable.2 / ours.2,
        verdict(scalable.2 >= 3.0 * ours.2)
    );
    println!(
        "- absent lookups within 2x of never grown: {:.1} vs {:.1} ns = {:.2}x slower: {}",
        ours.2,
        never.2,
        ours.2 / never.2,
        verdict(ours.2 <= 2.0 * never.2)
    );
}

/// One table block: each row's rate, size and lookup times at `growth`.
#[allow(clippy::too_many_arguments)]
fn report<K: Hash + ?Sized>(
    growth: u64,
    rows: &[Row<K>],
    members: &[&K],
    probes: &[&K],
    absent: &[&K],
    p: f64,
    never_grown: bool,
    at_1000: &mut Vec<(&'static str, f64, f64, f64)>,
) {
    let absent_ns = race(rows, ROUNDS, |row| {
        Some(timed(absent.len(), || {
            absent.iter().filter(|k| row.contains(k)).count()
        }))
    });
    let member_ns = race(rows, ROUNDS, |row| {
        Some(timed(probes.len(), || {
            probes.iter().filter(|k| row.contains(k)).count()
        }))
    });
    for (i, row) in rows.iter().enumerate() {
        let positives = absent.iter().filter(|k| row.contains(k)).count();
        let rate = positives as f64 / absent.len() as f64;
        let lost = members.iter().filter(|k| !row.contains(k)).count();
        let bits = row.bytes() as f64 * 8.0 / members.len() as f64;
        let (a, m) = (
            absent_ns[i].unwrap_or(f64::NAN),
            member_ns[i].unwrap_or(f64::NAN),
        );
        let extra = match row {
            Row::Expandable(f) => format!(
                "{} fingerprint bits, {} doublings, load {:.2}, model {:.3}%",
                f.fingerprint_bits(),
                f.doublings(),
                f.load_factor(),
                100.0 * f.estimated_fpr()
            ),
            Row::Scalable(f) => format!("{} slices", f.slices().len()),
            _ => String::new(),
        };
        let extra = if lost > 0 {
            format!("{extra} **{lost} false negatives**")
        } else {
            extra
        };
        println!(
            "| {growth}x | {} | {:.4}% | {:.2}x | {bits:.2} | {a:.1} | {m:.1} | {extra} |",
            row.name(never_grown),
            100.0 * rate,
            rate / p,
        );
        if growth == GROWTH[3] {
            at_1000.push((row.name(never_grown), bits, a, rate));
        }
    }
}

fn main() {
    let start: u64 = std::env::var("BLOOMKIT_GROWTH_START")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let last = start * 1_000;
    let members: Vec<u64> = (0..last).map(bloomkit_benches::key).collect();
    let absent: Vec<u64> = bloomkit_benches::non_members(1_000_000);
    let members: Vec<&u64> = members.iter().collect();
    let absent: Vec<&u64> = absent.iter().collect();
    for p in [0.01, 0.001] {
        run::<u64>("u64 keys", &members, &absent, start, p);
    }
    if let Some(path) = std::env::args().nth(1) {
        let text = std::fs::read_to_string(&path).expect("a names file");
        let (names, absent, _) = split_names(&text, 886_323);
        let start = (names.len() / 1_000) as u64;
        let names: Vec<&str> = names[..(start * 1_000) as usize].to_vec();
        for p in [0.01, 0.001] {
            run::<str>("names", &names, &absent, start, p);
        }
    }
}
