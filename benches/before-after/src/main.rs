//! Before/after, side by side in one process: the same operations on an earlier commit
//! (`base`, named in Cargo.toml) and this checkout (`head`), interleaved round by round on
//! the same keys; the ratio head/base is taken per round, and the median over rounds (with
//! the middle half) is reported. `ONLY_COUNTING=1` runs the counting filter alone with the head
//! filter allocated first (its lookups are placement-sensitive at 10^6 keys: compare with
//! the same rows of a full run). `ONLY=<text>` runs only the rows whose name contains it.
use std::hint::black_box;
use std::time::Instant;

const N: u64 = 1_000_000;
const PROBES: usize = 1 << 16;
const ROUNDS: usize = 101;

fn keys(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

fn time(f: &mut dyn FnMut() -> usize) -> f64 {
    let t = Instant::now();
    black_box(f());
    t.elapsed().as_secs_f64()
}

/// Median and middle half of head/base over rounds, alternating which goes first.
fn compare(name: &str, base: &mut dyn FnMut() -> usize, head: &mut dyn FnMut() -> usize) {
    // `ONLY=Quotient` runs the rows whose name contains it (a noisy row again, alone).
    if std::env::var("ONLY").is_ok_and(|only| !name.contains(&only)) {
        return;
    }
    // Warm up both.
    time(base);
    time(head);
    let mut ratios = Vec::new();
    for r in 0..ROUNDS {
        let (b, h) = if r % 2 == 0 {
            let b = time(base);
            (b, time(head))
        } else {
            let h = time(head);
            (time(base), h)
        };
        ratios.push(h / b);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "{name:<44} head/base {:.3} [{:.3}, {:.3}]",
        ratios[ROUNDS / 2],
        ratios[ROUNDS / 4],
        ratios[3 * ROUNDS / 4]
    );
}

macro_rules! lookups_and_inserts {
    ($name:literal, $make_base:expr, $make_head:expr, $insert:ident, $contains:ident) => {
        lookups_and_inserts!($name, $make_base, $make_head, $insert / $insert, $contains)
    };
    // An insert renamed between the commits: the base's name, then the head's.
    ($name:literal, $make_base:expr, $make_head:expr, $insert:ident / $head_insert:ident, $contains:ident) => {{
        let members = keys(1, N as usize);
        let probes_in: Vec<u64> = members
            .iter()
            .step_by(N as usize / PROBES)
            .copied()
            .collect();
        let probes_out = keys(2, PROBES);
        let mut b = $make_base;
        let mut h = $make_head;
        for k in &members {
            let _ = b.$insert(k);
            let _ = h.$head_insert(k);
        }
        compare(
            concat!($name, ": contains, members"),
            &mut || {
                probes_in
                    .iter()
                    .filter(|k| b.$contains(black_box(*k)))
                    .count()
            },
            &mut || {
                probes_in
                    .iter()
                    .filter(|k| h.$contains(black_box(*k)))
                    .count()
            },
        );
        compare(
            concat!($name, ": contains, absent"),
            &mut || {
                probes_out
                    .iter()
                    .filter(|k| b.$contains(black_box(*k)))
                    .count()
            },
            &mut || {
                probes_out
                    .iter()
                    .filter(|k| h.$contains(black_box(*k)))
                    .count()
            },
        );
        let fresh = keys(3, PROBES);
        let mut b2 = $make_base;
        let mut h2 = $make_head;
        compare(
            concat!($name, ": insert"),
            &mut || {
                b2.clear();
                fresh
                    .iter()
                    .filter(|k| b2.$insert(black_box(*k)).into_ok())
                    .count()
            },
            &mut || {
                h2.clear();
                fresh
                    .iter()
                    .filter(|k| h2.$head_insert(black_box(*k)).into_ok())
                    .count()
            },
        );
    }};
}

trait IntoOk {
    fn into_ok(self) -> bool;
}
impl IntoOk for bool {
    fn into_ok(self) -> bool {
        self
    }
}
impl<E> IntoOk for Result<bool, E> {
    fn into_ok(self) -> bool {
        matches!(self, Ok(true))
    }
}

fn main() {
    if std::env::var_os("ONLY_COUNTING").is_some() {
        // The head filter allocated first this time: placement, not code, if the ratio flips.
        lookups_and_inserts!(
            "CountingBloomFilter<u64> (head allocated first)",
            {
                let h = head::CountingBloomFilter::<u64>::new(N, 0.01).unwrap();
                drop(h);
                base::CountingBloomFilter::<u64>::new(N, 0.01).unwrap()
            },
            head::CountingBloomFilter::<u64>::new(N, 0.01).unwrap(),
            insert,
            contains
        );
        return;
    }
    lookups_and_inserts!(
        "BloomFilter<u64>",
        base::BloomFilter::<u64>::new(N, 0.01).unwrap(),
        head::BloomFilter::<u64>::new(N, 0.01).unwrap(),
        insert,
        contains
    );
    lookups_and_inserts!(
        "BlockedBloomFilter<u64>",
        base::BlockedBloomFilter::<u64>::new(N, 0.01).unwrap(),
        head::BlockedBloomFilter::<u64>::new(N, 0.01).unwrap(),
        insert,
        contains
    );
    lookups_and_inserts!(
        "SplitBlockFilter<u64>",
        base::SplitBlockFilter::<u64>::new(N, 0.01).unwrap(),
        head::SplitBlockFilter::<u64>::new(N, 0.01).unwrap(),
        insert,
        contains
    );
    lookups_and_inserts!(
        "CountingBloomFilter<u64>",
        base::CountingBloomFilter::<u64>::new(N, 0.01).unwrap(),
        head::CountingBloomFilter::<u64>::new(N, 0.01).unwrap(),
        insert,
        contains
    );
    lookups_and_inserts!(
        "ScalableBloomFilter<u64>",
        base::ScalableBloomFilter::<u64>::new(N, 0.01).unwrap(),
        head::ScalableBloomFilter::<u64>::new(N, 0.01).unwrap(),
        try_insert,
        contains
    );
    lookups_and_inserts!(
        "SimdBlockFilter<u64>",
        base::SimdBlockFilter::<u64>::new(N, 0.01).unwrap(),
        head::SimdBlockFilter::<u64>::new(N, 0.01).unwrap(),
        insert,
        contains
    );
    // The quotient filters' inserts were `insert -> Result` at the base commit. The
    // head sizes a quotient table for the keys asked for (any multiple of 64 home slots),
    // the base rounded up to a power of two: the head is given the base's table (2^21 home
    // slots for 10^6 keys; 2^17 for 10^5), so that the rows compare the code at one load.
    lookups_and_inserts!(
        "QuotientFilter<u64>",
        base::QuotientFilter::<u64>::new(N, 0.01).unwrap(),
        head::QuotientFilter::<u64>::new(1_992_294, 0.01).unwrap(),
        insert / try_insert,
        contains
    );
    lookups_and_inserts!(
        "ExpandableFilter<u64> (from 1,000)",
        base::ExpandableFilter::<u64>::new(1_000, 0.01).unwrap(),
        head::ExpandableFilter::<u64>::new(1_000, 0.01).unwrap(),
        insert / try_insert,
        contains
    );
    // The quotient filter in cache (10^5 keys): the lookup's instructions, not its misses.
    {
        let members = keys(1, 100_000);
        let probes_in: Vec<u64> = members.iter().step_by(2).copied().collect();
        let probes_out = keys(2, 50_000);
        let mut b = base::QuotientFilter::<u64>::new(100_000, 0.01).unwrap();
        let mut h = head::QuotientFilter::<u64>::new(124_518, 0.01).unwrap();
        for k in &members {
            let _ = b.insert(k);
            let _ = h.try_insert(k);
        }
        for (name, probes) in [
            ("QuotientFilter<u64> 10^5: contains, members", &probes_in),
            ("QuotientFilter<u64> 10^5: contains, absent", &probes_out),
        ] {
            compare(
                name,
                &mut || probes.iter().filter(|k| b.contains(black_box(*k))).count(),
                &mut || probes.iter().filter(|k| h.contains(black_box(*k))).count(),
            );
        }
    }
    // Batched lookups of the quotient filters (the expandable one answered its batches one
    // key at a time at the base).
    {
        let members = keys(1, N as usize);
        let probes: Vec<u64> = keys(2, PROBES / 2)
            .into_iter()
            .chain(members.iter().step_by(N as usize / (PROBES / 2)).copied())
            .collect();
        let mut bq = base::QuotientFilter::<u64>::new(N, 0.01).unwrap();
        let mut hq = head::QuotientFilter::<u64>::new(1_992_294, 0.01).unwrap();
        let mut be = base::ExpandableFilter::<u64>::new(1_000, 0.01).unwrap();
        let mut he = head::ExpandableFilter::<u64>::new(1_000, 0.01).unwrap();
        for k in &members {
            let _ = bq.insert(k);
            let _ = hq.try_insert(k);
            let _ = be.insert(k);
            let _ = he.try_insert(k);
        }
        let mut out = Vec::with_capacity(PROBES);
        let mut out2 = Vec::with_capacity(PROBES);
        compare(
            "QuotientFilter<u64>: contains_batch",
            &mut || {
                out.clear();
                bq.contains_batch(black_box(&probes), &mut out);
                out.iter().filter(|&&b| b).count()
            },
            &mut || {
                out2.clear();
                hq.contains_batch(black_box(&probes), &mut out2);
                out2.iter().filter(|&&b| b).count()
            },
        );
        compare(
            "ExpandableFilter<u64>: contains_batch",
            &mut || {
                out.clear();
                base::Lookup::contains_batch(&be, black_box(&probes), &mut out);
                out.iter().filter(|&&b| b).count()
            },
            &mut || {
                out2.clear();
                head::Lookup::contains_batch(&he, black_box(&probes), &mut out2);
                out2.iter().filter(|&&b| b).count()
            },
        );
    }
    // Multi-attribute filter, whole records: members, and records of new values.
    {
        let recs: Vec<(u64, u64, u64)> = keys(5, 100_000)
            .iter()
            .map(|&k| (k % 1_000, k % 97, k))
            .collect();
        let fresh: Vec<(u64, u64, u64)> =
            keys(6, PROBES).iter().map(|&k| (k, k ^ 1, k ^ 2)).collect();
        let mut b = base::MultiFilter::<(u64, u64, u64)>::new(100_000, 0.01).unwrap();
        let mut h = head::MultiFilter::<(u64, u64, u64)>::new(100_000, 0.01).unwrap();
        for r in &recs {
            b.try_insert(r).unwrap();
            h.try_insert(r).unwrap();
        }
        let members: Vec<(u64, u64, u64)> = recs.iter().step_by(2).copied().collect();
        compare(
            "MultiFilter<(u64,u64,u64)>: contains, members",
            &mut || members.iter().filter(|r| b.contains(black_box(*r))).count(),
            &mut || members.iter().filter(|r| h.contains(black_box(*r))).count(),
        );
        compare(
            "MultiFilter<(u64,u64,u64)>: pair (0, 2), new values",
            &mut || {
                fresh
                    .iter()
                    .filter(|r| {
                        b.query()
                            .attr::<0>(black_box(&r.0))
                            .attr::<2>(&r.2)
                            .contains()
                    })
                    .count()
            },
            &mut || {
                fresh
                    .iter()
                    .filter(|r| {
                        h.query()
                            .attr::<0>(black_box(&r.0))
                            .attr::<2>(&r.2)
                            .contains()
                    })
                    .count()
            },
        );
        compare(
            "MultiFilter<(u64,u64,u64)>: pair (0, 2), members",
            &mut || {
                members
                    .iter()
                    .filter(|r| {
                        b.query()
                            .attr::<0>(black_box(&r.0))
                            .attr::<2>(&r.2)
                            .contains()
                    })
                    .count()
            },
            &mut || {
                members
                    .iter()
                    .filter(|r| {
                        h.query()
                            .attr::<0>(black_box(&r.0))
                            .attr::<2>(&r.2)
                            .contains()
                    })
                    .count()
            },
        );
        compare(
            "MultiFilter<(u64,u64,u64)>: contains, new values",
            &mut || fresh.iter().filter(|r| b.contains(black_box(*r))).count(),
            &mut || fresh.iter().filter(|r| h.contains(black_box(*r))).count(),
        );
    }
    // Batched lookups of the blocked filter.
    {
        let members = keys(1, N as usize);
        let mut b = base::BlockedBloomFilter::<u64>::new(N, 0.01).unwrap();
        let mut h = head::BlockedBloomFilter::<u64>::new(N, 0.01).unwrap();
        b.extend(members.iter().copied());
        h.extend(members.iter().copied());
        let probes = keys(2, PROBES);
        let mut out = Vec::with_capacity(PROBES);
        let mut out2 = Vec::with_capacity(PROBES);
        compare(
            "BlockedBloomFilter<u64>: contains_batch",
            &mut || {
                out.clear();
                b.contains_batch(&probes, &mut out);
                out.len()
            },
            &mut || {
                out2.clear();
                h.contains_batch(&probes, &mut out2);
                out2.len()
            },
        );
    }
    // Atomic filter: inserts through &self.
    {
        let fresh = keys(3, PROBES);
        let b = base::AtomicBloomFilter::<u64>::new(N, 0.01).unwrap();
        let h = head::AtomicBloomFilter::<u64>::new(N, 0.01).unwrap();
        compare(
            "AtomicBloomFilter<u64>: insert",
            &mut || fresh.iter().filter(|k| b.insert(black_box(*k))).count(),
            &mut || fresh.iter().filter(|k| h.insert(black_box(*k))).count(),
        );
        compare(
            "AtomicBloomFilter<u64>: contains",
            &mut || fresh.iter().filter(|k| b.contains(black_box(*k))).count(),
            &mut || fresh.iter().filter(|k| h.contains(black_box(*k))).count(),
        );
    }
    // Strings through the blocked filter.
    {
        let urls: Vec<String> = keys(4, PROBES)
            .iter()
            .map(|k| format!("https://example.com/{k:x}"))
            .collect();
        let mut b = base::BlockedBloomFilter::<str>::new(N, 0.01).unwrap();
        let mut h = head::BlockedBloomFilter::<str>::new(N, 0.01).unwrap();
        compare(
            "BlockedBloomFilter<str>: insert",
            &mut || {
                b.clear();
                urls.iter().filter(|u| b.insert(u.as_str())).count()
            },
            &mut || {
                h.clear();
                urls.iter().filter(|u| h.insert(u.as_str())).count()
            },
        );
        compare(
            "BlockedBloomFilter<str>: contains",
            &mut || urls.iter().filter(|u| b.contains(u.as_str())).count(),
            &mut || urls.iter().filter(|u| h.contains(u.as_str())).count(),
        );
    }
}
