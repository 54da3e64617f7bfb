//! Measured false-positive rates of attribute, subset and whole-record queries, against the
//! rates the filter reports, on records whose fields take few values (most combinations of
//! stored values are recombinations). The full table, with and without the record-level
//! filter: `cargo run --release -p bloomkit-multi --example query_fpr`.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

use bloomkit_core::{Lookup, LookupCore};
use bloomkit_multi::{MultiFilter, QueryFpr};
use bloomkit_testkit::FprMeasurement;

type Rec = (u32, u32, u32);

/// The record `(a, b, c)` a random `h` picks: `a` of 100 values, `b` of 20, `c` of 500.
fn from_hash(h: u64) -> Rec {
    (
        (h % 100) as u32,
        ((h >> 20) % 20) as u32,
        ((h >> 40) % 500) as u32,
    )
}

/// Records `(a, b, c)` with 100, 20 and 500 values; 2,000 distinct; a new seed each run.
fn filled(record_filter: bool) -> (MultiFilter<Rec>, HashSet<Rec>, RandomState) {
    let seed = RandomState::new();
    let mut f = MultiFilter::<Rec>::builder(2_000, 0.01)
        .attribute(0, 100, 0.01)
        .and_then(|b| b.attribute(1, 20, 0.01))
        .and_then(|b| b.attribute(2, 500, 0.01))
        .and_then(|b| b.subset(&[0, 2]))
        .map(|b| b.record_filter(record_filter).seed(seed.hash_one(1u8)))
        .and_then(bloomkit_multi::MultiBuilder::build)
        .unwrap();
    let mut stored = HashSet::new();
    let mut i = 0u64;
    while stored.len() < 2_000 {
        let h = seed.hash_one(i);
        i += 1;
        let r = from_hash(h);
        f.try_insert(&r).unwrap();
        stored.insert(r);
    }
    (f, stored, seed)
}

/// The number of values each field of a [`Rec`] takes (see [`from_hash`]).
const DOMAIN: [u32; 3] = [100, 20, 500];

/// Probes every recombination of stored values on `attributes` once: each projection of the
/// fields' domains that no stored record has, counting the positives.
///
/// The domains are small (50,000 `(a, c)` pairs), so random draws would repeat projections
/// and the measured rate would carry the sampling noise of a finite population on top of the
/// filter's own; probing the whole population leaves only the filter's (the binomial
/// tolerance of [`FprMeasurement::within`] over the probes).
fn recombined(
    filled: &(MultiFilter<Rec>, HashSet<Rec>, RandomState),
    attributes: &[usize],
) -> FprMeasurement {
    recombined_by(filled, attributes, |f, r| {
        let mut q = f.query();
        for &a in attributes {
            q = match a {
                0 => q.attr::<0>(&r.0),
                1 => q.attr::<1>(&r.1),
                _ => q.attr::<2>(&r.2),
            };
        }
        q.contains()
    })
}

/// As [`recombined`], counting the probes `answer` says yes to.
fn recombined_by(
    (f, stored, _): &(MultiFilter<Rec>, HashSet<Rec>, RandomState),
    attributes: &[usize],
    answer: impl Fn(&MultiFilter<Rec>, Rec) -> bool,
) -> FprMeasurement {
    let project = |r: Rec| -> Vec<u32> { attributes.iter().map(|&i| [r.0, r.1, r.2][i]).collect() };
    let members: HashSet<Vec<u32>> = stored.iter().map(|&r| project(r)).collect();
    let population: u32 = attributes.iter().map(|&a| DOMAIN[a]).product();
    let (mut probes, mut false_positives) = (0, 0);
    for index in 0..population {
        let (mut fields, mut rest) = ([0u32; 3], index);
        for &a in attributes {
            fields[a] = rest % DOMAIN[a];
            rest /= DOMAIN[a];
        }
        let r = (fields[0], fields[1], fields[2]);
        if members.contains(&project(r)) {
            continue;
        }
        probes += 1;
        if answer(f, r) {
            false_positives += 1;
        }
    }
    FprMeasurement {
        false_positives,
        probes,
    }
}

/// The rate for recombined probes the filter reports from its fill.
fn reported(f: &MultiFilter<Rec>, attributes: &[usize]) -> f64 {
    let QueryFpr { recombined, .. } = f.estimated_fpr_of(attributes).unwrap();
    recombined.unwrap()
}

#[test]
fn recombinations_are_caught_where_a_filter_covers_them() {
    let with = filled(true);
    let m = recombined(&with, &[0, 2]);
    let p = reported(&with.0, &[0, 2]);
    assert!(
        (0.003..0.02).contains(&p) && m.within(p, 4.5),
        "[0, 2]: measured {:.4}%, reported {:.4}%",
        m.rate() * 100.0,
        p * 100.0
    );
    // A whole recombined record passes the record-level filter and, independently, the
    // pair (a, c) (its single values are all stored): the rate is the record filter's times
    // the share of probes whose pair passes, under the reported worst case (the record
    // filter's rate, as if every pair were stored).
    let m = recombined(&with, &[0, 1, 2]);
    let p = reported(&with.0, &[0, 1, 2]);
    let pairs = recombined_by(&with, &[0, 1, 2], |f, r| {
        f.query().attr::<0>(&r.0).attr::<2>(&r.2).contains()
    });
    assert!(
        (0.003..0.02).contains(&p) && m.within(p * pairs.rate(), 4.5) && m.rate() <= p,
        "[0, 1, 2]: measured {:.4}%, expected {:.4}% x {:.4}%, reported {:.4}%",
        m.rate() * 100.0,
        p * 100.0,
        pairs.rate() * 100.0,
        p * 100.0
    );
    // No filter over (a, b): recombined pairs pass, as reported.
    let m = recombined(&with, &[0, 1]);
    assert!(m.probes > 500, "{} recombined (a, b) pairs", m.probes);
    assert_eq!(
        (m.false_positives, reported(&with.0, &[0, 1])),
        (m.probes, 1.0)
    );

    // Without the record-level filter, whole recombined records pass unless the declared
    // pair (a, c) catches them: far above the record filter's 1%, far below 100%.
    let without = filled(false);
    let m = recombined(&without, &[0, 1, 2]);
    assert!((0.02..0.2).contains(&m.rate()), "{:.4}%", m.rate() * 100.0);
    assert_eq!(
        reported(&without.0, &[0, 1, 2]),
        1.0,
        "the worst case is reported"
    );
}

/// Whole records of values never stored: every part a whole-record query consults must err
/// (the record-level filter, each attribute's, the pair's), so the rate is their product,
/// about 1e-10 here: no false positive in 200,000 probes, where the record-level filter
/// alone errs on about 2,000 of them.
#[test]
fn whole_records_of_new_values_must_pass_every_part() {
    let (f, _, seed) = filled(true);
    let probes = 200_000u64;
    // The record-level filter's rate from its fill (what a recombined record meets).
    let record_rate = f.estimated_fpr_of(&[0, 1, 2]).unwrap().recombined.unwrap();
    let mut record_alone = 0u64;
    let mut false_positives = 0u64;
    for i in 0..probes {
        let h = seed.hash_one(i ^ 0x5eed);
        let r = (
            1_000 + (h % 1_000) as u32,
            1_000 + ((h >> 20) % 1_000) as u32,
            1_000 + ((h >> 40) % 1_000) as u32,
        );
        // `if`s, not `+= u64::from(bool)` (rust-lang/rust#158206).
        if f.contains(&r) {
            false_positives += 1;
        }
        if f.contains_hash(f.hash_key(&r)) {
            record_alone += 1;
        }
    }
    let predicted = f.estimated_fpr_of(&[0, 1, 2]).unwrap().new_values;
    assert!(predicted < 1e-6, "predicted {predicted}");
    assert_eq!(false_positives, 0, "predicted {predicted}");
    let alone = FprMeasurement {
        false_positives: record_alone,
        probes,
    };
    assert!(
        alone.within(record_rate, 4.5),
        "record filter alone: {alone:?}"
    );
}

#[test]
fn new_values_are_caught_at_the_attribute_rates() {
    let (f, _, seed) = filled(true);
    for (attribute, probes) in [(0usize, 100_000u64), (2, 100_000)] {
        let false_positives = (0..probes)
            .filter(|&i| {
                let v = 1_000_000 + (seed.hash_one(i) >> 34) as u32;
                match attribute {
                    0 => f.contains_attr::<0>(&v),
                    _ => f.contains_attr::<2>(&v),
                }
            })
            .count() as u64;
        let m = FprMeasurement {
            false_positives,
            probes,
        };
        let p = f.estimated_fpr_of(&[attribute]).unwrap().new_values;
        assert!(
            m.within(p, 4.5),
            "attribute {attribute}: measured {:.4}%, reported {:.4}%",
            m.rate() * 100.0,
            p * 100.0
        );
    }
}
