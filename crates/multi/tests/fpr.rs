//! Measured false-positive rates of attribute, subset and whole-record queries, against the
//! rates the filter reports, on records whose fields take few values (most combinations of
//! stored values are recombinations). The full table, with and without the record-level
//! filter: `cargo run --release -p bloomkit-multi --example query_fpr`.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

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
    (f, stored, _): &(MultiFilter<Rec>, HashSet<Rec>, RandomState),
    attributes: &[usize],
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
        let mut q = f.query();
        for &a in attributes {
            q = match a {
                0 => q.attr::<0>(&r.0),
                1 => q.attr::<1>(&r.1),
                _ => q.attr::<2>(&r.2),
            };
        }
        if q.contains() {
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
    for attributes in [&[0, 2][..], &[0, 1, 2]] {
        let m = recombined(&with, attributes);
        let p = reported(&with.0, attributes);
        assert!(
            (0.003..0.02).contains(&p) && m.within(p, 4.5),
            "{attributes:?}: measured {:.4}%, reported {:.4}%",
            m.rate() * 100.0,
            p * 100.0
        );
    }
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
