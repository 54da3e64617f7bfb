//! Measured false-positive rates of each kind of query on a multi-attribute filter, with and
//! without the record-level filter, next to the rates the filter predicts
//! (`MultiFilter::predicted_fpr`), on records whose fields take few values, so that most
//! combinations of stored values are recombinations (every value stored, the combination
//! not).
//!
//! Records `(a, b, c)`: `a` of 100 values, `b` of 20, `c` of 500; 2,000 distinct records.
//! Each attribute is sized for its distinct values at 1%, the record-level filter and the
//! declared subset `(a, c)` for 2,000 combinations at 1%. Rates are averaged over 20
//! filters (seeds) of 20,000 probes per kind each.
//!
//! ```text
//! cargo run --release -p bloomkit-multi --example query_fpr
//! ```

use std::collections::HashSet;

use bloomkit_multi::MultiFilter;
use bloomkit_testkit::SplitMix64;

type Rec = (u32, u32, u32);

const DOMAINS: (u32, u32, u32) = (100, 20, 500);
const RECORDS: usize = 2_000;
const FILTERS: u64 = 20;
const PROBES: u32 = 20_000;

/// A reproducible stream (SplitMix64), with the draws this example needs.
struct Rng(SplitMix64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
    fn record(&mut self) -> Rec {
        (
            self.below(DOMAINS.0),
            self.below(DOMAINS.1),
            self.below(DOMAINS.2),
        )
    }
}

fn build(seed: u64, record_filter: bool) -> MultiFilter<Rec> {
    MultiFilter::<Rec>::builder(RECORDS as u64, 0.01)
        .attribute(0, u64::from(DOMAINS.0), 0.01)
        .and_then(|b| b.attribute(1, u64::from(DOMAINS.1), 0.01))
        .and_then(|b| b.attribute(2, u64::from(DOMAINS.2), 0.01))
        .and_then(|b| b.subset(&[0, 2]))
        .map(|b| b.record_filter(record_filter).seed(seed))
        .and_then(bloomkit_multi::MultiBuilder::build)
        .expect("valid parameters")
}

/// The kinds of query measured: a name, the attributes, and whether the probes are
/// recombinations of stored values (else values never stored).
const KINDS: [(&str, &[usize], bool); 7] = [
    ("attribute a, new value", &[0], false),
    ("attribute c, new value", &[2], false),
    ("pair (a, c) declared, recombined", &[0, 2], true),
    ("pair (a, b) undeclared, recombined", &[0, 1], true),
    ("pair (a, b) undeclared, new values", &[0, 1], false),
    ("whole record, recombined", &[0, 1, 2], true),
    ("whole record, new values", &[0, 1, 2], false),
];

/// Whether `f` answers yes for the values of `r` at `attributes`.
fn asks(f: &MultiFilter<Rec>, r: Rec, attributes: &[usize]) -> bool {
    let mut q = f.query();
    for &i in attributes {
        q = match i {
            0 => q.attr::<0>(&r.0),
            1 => q.attr::<1>(&r.1),
            _ => q.attr::<2>(&r.2),
        };
    }
    q.contains()
}

/// The values of `r` at `attributes`, to compare projections.
fn project(r: Rec, attributes: &[usize]) -> Vec<u32> {
    attributes.iter().map(|&i| [r.0, r.1, r.2][i]).collect()
}

fn main() {
    println!(
        "{RECORDS} records of (a: {} values, b: {}, c: {}); {FILTERS} filters x {PROBES} probes per kind\n",
        DOMAINS.0, DOMAINS.1, DOMAINS.2
    );
    for record_filter in [true, false] {
        println!(
            "{} the record-level filter:\n{:<38} {:>10} {:>10} {:>10}",
            if record_filter { "With" } else { "Without" },
            "query",
            "measured",
            "design",
            "fill"
        );
        for (name, attributes, recombined) in KINDS {
            let (mut positives, mut probes) = (0u64, 0u64);
            let (mut design, mut fill) = (0.0, 0.0);
            for seed in 0..FILTERS {
                let mut rng = Rng(SplitMix64(seed));
                let mut f = build(seed, record_filter);
                let mut stored = HashSet::new();
                while stored.len() < RECORDS {
                    let r = rng.record();
                    f.try_insert(&r).expect("typed records are never refused");
                    stored.insert(r);
                }
                let projections: HashSet<Vec<u32>> =
                    stored.iter().map(|&r| project(r, attributes)).collect();
                let pick = |rates: bloomkit_multi::QueryFpr| match (recombined, rates.recombined) {
                    (true, Some(r)) => r,
                    _ => rates.new_values,
                };
                design += pick(f.predicted_fpr(attributes).expect("valid attributes"));
                fill += pick(f.estimated_fpr_of(attributes).expect("valid attributes"));
                let mut asked = 0;
                while asked < PROBES {
                    let r = if recombined {
                        rng.record()
                    } else {
                        // Values outside every domain: never stored.
                        let base = 1_000_000 + rng.below(1 << 30);
                        (base, base + 1, base + 2)
                    };
                    if projections.contains(&project(r, attributes)) {
                        continue; // a member: not a false-positive probe
                    }
                    asked += 1;
                    if asks(&f, r, attributes) {
                        positives += 1;
                    }
                }
                probes += u64::from(PROBES);
            }
            let percent = |x: f64| format!("{:.4}%", x * 100.0);
            println!(
                "{:<38} {:>10} {:>10} {:>10}",
                name,
                percent(positives as f64 / probes as f64),
                percent(design / FILTERS as f64),
                percent(fill / FILTERS as f64)
            );
        }
        println!();
    }
}
