//! `compare --window N`: which structure answers "was this key inserted in the last N
//! inserts?" best, measured on a stream in which keys recur at many distances, some within
//! the window and some beyond it.
//!
//! The stream: at each step a key is asked about, then inserted (a de-duplicator's loop).
//! Half the steps bring a key never seen; the others repeat the key of a step `d` back, `d`
//! uniform in `1..=2.5 N`, so about 40% of repeats fall within the window and the rest at
//! every distance past it. An exact model (each key's last step) judges every answer:
//!
//! - **false negatives**: a key inserted within the last `N` steps answered absent (must be
//!   0);
//! - **rate**: keys never seen answered present, per checkpoint (every `N / 10` steps,
//!   at least 10,000, at most 100,000), the worst checkpoint and the whole stream;
//! - **forgetting**: keys last inserted `a` steps back, `a > N`, answered present, by
//!   distance band (`N..1.1N`, `1.1N..1.5N`, `1.5N..2N`, past `2N`); "forgotten by" is the
//!   first band from which on they answer present no more often than never-seen keys do
//!   (within chance);
//! - memory after the stream, and time, on a fresh structure fed the first `4 N` steps
//!   without the model: ns per step (ask, then insert), and ns per lookup over a million
//!   lookups after it (keys of the window and never-seen keys, alternately).
//!
//! The structures: bloomkit's `WindowFilter`; two rotating blocked Bloom filters (each sized
//! for `N` at half the rate: every key of the last `N` is in one of them, keys stay up to
//! `2N`); a counting Bloom filter with exact removals (a queue of the last `N` keys, the
//! oldest removed at each insert: exact forgetting, at the queue's memory); a `HashMap` of
//! last-seen steps (exact; pruned every `N` steps).

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::time::Instant;

use bloomkit::counting::U4;
use bloomkit::{BlockedBloomFilter, CountingBloomFilter, WindowFilter};
use serde_json::json;

use super::measure::per;

/// Distance bands past the window, in windows: `[from, to)`.
const BANDS: [(f64, f64); 4] = [(1.0, 1.1), (1.1, 1.5), (1.5, 2.0), (2.0, f64::INFINITY)];

/// Makes a structure under test.
type Maker = Box<dyn Fn() -> Result<Box<dyn Windowed>, String>>;

/// A structure under test.
trait Windowed {
    fn ask(&self, key: u64, step: u64) -> bool;
    fn put(&mut self, key: u64, step: u64);
    fn bytes(&self) -> u64;
}

struct Window(WindowFilter<u64>);

impl Windowed for Window {
    fn ask(&self, key: u64, _: u64) -> bool {
        self.0.contains(&key)
    }
    fn put(&mut self, key: u64, _: u64) {
        // A window over inserts never refuses.
        let _new = self.0.try_insert(&key);
    }
    fn bytes(&self) -> u64 {
        self.0.heap_bytes() as u64
    }
}

/// Double buffering: keys go into `current`; every `n` inserts `previous` is dropped and
/// `current` becomes it.
struct Rotating {
    current: BlockedBloomFilter<u64>,
    previous: BlockedBloomFilter<u64>,
    n: u64,
    held: u64,
}

impl Windowed for Rotating {
    fn ask(&self, key: u64, _: u64) -> bool {
        self.current.contains(&key) || self.previous.contains(&key)
    }
    fn put(&mut self, key: u64, _: u64) {
        if self.held == self.n {
            std::mem::swap(&mut self.current, &mut self.previous);
            self.current.clear();
            self.held = 0;
        }
        self.current.insert(&key);
        self.held += 1;
    }
    fn bytes(&self) -> u64 {
        (self.current.heap_bytes() + self.previous.heap_bytes()) as u64
    }
}

/// A counting filter and the queue of the last `n` keys, the oldest removed at each insert.
struct Counting {
    filter: CountingBloomFilter<u64, U4>,
    queue: VecDeque<u64>,
    n: u64,
}

impl Windowed for Counting {
    fn ask(&self, key: u64, _: u64) -> bool {
        self.filter.contains(&key)
    }
    fn put(&mut self, key: u64, _: u64) {
        self.filter.insert(&key);
        self.queue.push_back(key);
        // The key inserted n steps ago is present (a saturated counter stays).
        if self.queue.len() as u64 > self.n
            && let Some(old) = self.queue.pop_front()
        {
            let _ = self.filter.remove(&old);
        }
    }
    fn bytes(&self) -> u64 {
        (self.filter.heap_bytes() + self.queue.capacity() * 8) as u64
    }
}

/// Each key's last step; entries older than the window pruned every `n` steps.
struct LastSeen {
    map: HashMap<u64, u64>,
    n: u64,
}

impl Windowed for LastSeen {
    fn ask(&self, key: u64, step: u64) -> bool {
        self.map.get(&key).is_some_and(|&s| step - s <= self.n)
    }
    fn put(&mut self, key: u64, step: u64) {
        self.map.insert(key, step);
        if step.is_multiple_of(self.n) {
            let n = self.n;
            self.map.retain(|_, s| step - *s < n);
        }
    }
    fn bytes(&self) -> u64 {
        // hashbrown: a power-of-two bucket count at 7/8 load, one control byte per bucket.
        let buckets = (self.map.capacity() * 8 / 7).next_power_of_two();
        (buckets * 17) as u64
    }
}

/// One structure's figures.
#[derive(Debug, Clone)]
pub struct WindowRow {
    /// The structure.
    pub structure: &'static str,
    /// Heap bytes after the stream.
    pub bytes: u64,
    /// Bits per window item.
    pub bits_per_item: f64,
    /// Keys inserted within the window answered absent.
    pub false_negatives: u64,
    /// The highest rate on never-seen keys at a checkpoint.
    pub worst_rate: f64,
    /// The rate on never-seen keys over the whole stream.
    pub rate: f64,
    /// Share of keys answered present, per band of distance past the window: 1-1.1,
    /// 1.1-1.5, 1.5-2 windows, and past 2.
    pub past_window: [f64; 4],
    /// The first band from which on old keys answer present no more often than never-seen
    /// ones: its start, in windows.
    pub forgotten_by: Option<f64>,
    /// Nanoseconds per step (ask, then insert).
    pub step_ns: f64,
    /// Nanoseconds per lookup after the stream.
    pub lookup_ns: f64,
}

/// The comparison.
#[derive(Debug, Clone)]
pub struct WindowReport {
    /// The window.
    pub window: u64,
    /// Steps of the stream.
    pub steps: u64,
    /// The target rate.
    pub fpr: f64,
    /// One row per structure.
    pub rows: Vec<WindowRow>,
    /// The structure recommended, and why.
    pub recommendation: String,
}

/// Tallies of one structure's answers.
#[derive(Default)]
struct Tally {
    false_negatives: u64,
    fresh: u64,
    fresh_yes: u64,
    checkpoint: (u64, u64),
    worst: f64,
    band: [(u64, u64); 4],
}

/// Runs the comparison over a stream of `steps` steps (at least `3 * window`).
///
/// # Errors
/// A message for a window of 0 or past what this machine can hold.
pub fn run(
    window: u64,
    steps: u64,
    fpr: f64,
    seed: u64,
    progress: &mut dyn FnMut(&str),
) -> Result<WindowReport, String> {
    if window == 0 {
        return Err("--window must be at least 1".into());
    }
    let steps = steps.max(window.saturating_mul(3));
    // The stream (8 bytes a step) and the model (a map entry of 16 bytes, a control byte,
    // at most half empty after hashbrown's power-of-two rounding, for each distinct key:
    // half the steps), and the structure measured (at most a `HashMap` of 2 N entries).
    let need = steps
        .saturating_mul(8 + 17)
        .saturating_add(window.saturating_mul(2 * 34));
    if let Some(have) = super::budget::available_bytes()
        && u128::from(need) > u128::from(have)
    {
        return Err(format!(
            "a stream of {steps} steps for a window of {window} needs about {need} bytes, more than available"
        ));
    }
    progress("preparing the stream");
    let stream = stream(window, steps, seed)?;
    let half = fpr / 2.0;
    let n = window;
    let made: Vec<(&'static str, Maker)> = vec![
        (
            "WindowFilter",
            Box::new(move || {
                Ok(Box::new(Window(
                    WindowFilter::new(n, fpr).map_err(|e| e.to_string())?,
                )) as Box<dyn Windowed>)
            }),
        ),
        (
            "two rotating blocked Bloom filters",
            Box::new(move || {
                let make = || BlockedBloomFilter::<u64>::new(n, half).map_err(|e| e.to_string());
                Ok(Box::new(Rotating {
                    current: make()?,
                    previous: make()?,
                    n,
                    held: 0,
                }) as Box<dyn Windowed>)
            }),
        ),
        (
            "counting Bloom filter + queue of the last N keys",
            Box::new(move || {
                Ok(Box::new(Counting {
                    filter: CountingBloomFilter::<u64, U4>::builder(n, fpr)
                        .counter::<U4>()
                        .build()
                        .map_err(|e| e.to_string())?,
                    queue: VecDeque::with_capacity(n as usize + 1),
                    n,
                }) as Box<dyn Windowed>)
            }),
        ),
        (
            "HashMap of last-seen steps (exact)",
            Box::new(move || {
                Ok(Box::new(LastSeen {
                    map: HashMap::new(),
                    n,
                }) as Box<dyn Windowed>)
            }),
        ),
    ];
    let mut rows = Vec::new();
    let timed_steps = stream.len().min(
        usize::try_from(window)
            .unwrap_or(usize::MAX)
            .saturating_mul(4),
    );
    for (name, make) in &made {
        progress(name);
        let mut row = measure(name, make()?.as_mut(), &stream, window, fpr);
        // Times on a fresh structure without the model (whose map would be most of them).
        let mut s = make()?;
        let start = Instant::now();
        let mut yes = 0usize;
        for (t, &key) in stream[..timed_steps].iter().enumerate() {
            let t = t as u64 + 1;
            if s.ask(key, t) {
                yes += 1;
            }
            s.put(key, t);
        }
        row.step_ns = per(start.elapsed(), timed_steps);
        std::hint::black_box(yes);
        row.lookup_ns = lookups(s.as_ref(), &stream[..timed_steps], window);
        rows.push(row);
    }
    let recommendation = recommend(&rows, fpr);
    Ok(WindowReport {
        window,
        steps,
        fpr,
        rows,
        recommendation,
    })
}

/// The keys of the stream: a fresh key (a new number) or the key of a step `d` back.
fn stream(window: u64, steps: u64, seed: u64) -> Result<Vec<u64>, String> {
    let mut rng = seed ^ 0x5EED_5EED_5EED_5EED;
    let mut next = || {
        rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let span = window.saturating_mul(5) / 2;
    let mut keys: Vec<u64> = Vec::new();
    usize::try_from(steps)
        .ok()
        .and_then(|n| keys.try_reserve_exact(n).ok())
        .ok_or_else(|| format!("cannot hold a stream of {steps} steps in memory"))?;
    let mut fresh = 0u64;
    for t in 0..steps {
        let r = next();
        let d = 1 + (r >> 1) % span.max(1);
        let key = if r & 1 == 0 || d > t {
            fresh += 1;
            // Fresh keys: a bijection of the counter, so never repeated by chance.
            fresh.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed
        } else {
            keys[(t - d) as usize]
        };
        keys.push(key);
    }
    Ok(keys)
}

fn measure(
    name: &'static str,
    s: &mut dyn Windowed,
    stream: &[u64],
    n: u64,
    fpr: f64,
) -> WindowRow {
    let mut last: HashMap<u64, u64> = HashMap::with_capacity(stream.len() / 2);
    let mut tally = Tally::default();
    // Every 10^5 steps, or every tenth of a smaller window (at least 10,000 steps).
    let checkpoint = (n / 10).clamp(10_000, 100_000);
    for (t, &key) in stream.iter().enumerate() {
        let t = t as u64 + 1;
        let yes = s.ask(key, t);
        match last.get(&key) {
            None => {
                tally.fresh += 1;
                tally.checkpoint.1 += 1;
                if yes {
                    tally.fresh_yes += 1;
                    tally.checkpoint.0 += 1;
                }
            }
            Some(&seen) => {
                let age = t - seen;
                if age <= n {
                    if !yes {
                        tally.false_negatives += 1;
                    }
                } else {
                    let windows = age as f64 / n as f64;
                    if let Some(b) = BANDS
                        .iter()
                        .position(|&(lo, hi)| windows >= lo && windows < hi)
                    {
                        tally.band[b].1 += 1;
                        if yes {
                            tally.band[b].0 += 1;
                        }
                    }
                }
            }
        }
        s.put(key, t);
        last.insert(key, t);
        if t.is_multiple_of(checkpoint) && t > n {
            let (y, all) = tally.checkpoint;
            if all > 0 {
                tally.worst = tally.worst.max(y as f64 / all as f64);
            }
            tally.checkpoint = (0, 0);
        }
    }
    let rate = tally.fresh_yes as f64 / tally.fresh.max(1) as f64;
    let past_window = tally.band.map(|(y, all)| y as f64 / all.max(1) as f64);
    // Forgotten by the first band from which on every band is within chance of the rate
    // on never-seen keys (or of the target, whichever is higher).
    let base = rate.max(fpr);
    let quiet = |b: usize| {
        let (y, all) = tally.band[b];
        let all = all.max(1) as f64;
        y as f64 / all <= base + 4.0 * (base * (1.0 - base) / all).sqrt() + 1.0 / all
    };
    let forgotten_by = (0..BANDS.len())
        .find(|&b| (b..BANDS.len()).all(quiet))
        .map(|b| BANDS[b].0);
    let bytes = s.bytes();
    WindowRow {
        structure: name,
        bytes,
        bits_per_item: bytes as f64 * 8.0 / n as f64,
        false_negatives: tally.false_negatives,
        worst_rate: tally.worst,
        rate,
        past_window,
        forgotten_by,
        step_ns: 0.0,
        lookup_ns: 0.0,
    }
}

/// Nanoseconds per lookup over a million: keys of the last window and never-seen ones,
/// alternately.
fn lookups(s: &dyn Windowed, stream: &[u64], n: u64) -> f64 {
    let probes: Vec<u64> = (0..1_000_000u64)
        .map(|i| {
            if i % 2 == 0 {
                stream[stream.len() - 1 - (i as usize / 2) % n as usize]
            } else {
                !i
            }
        })
        .collect();
    let at = stream.len() as u64;
    let start = Instant::now();
    let found = probes.iter().filter(|&&k| s.ask(k, at)).count();
    let ns = per(start.elapsed(), probes.len());
    std::hint::black_box(found);
    ns
}

/// The smallest structure with no false negative whose rate holds (within chance) and that
/// forgets by 1.1 windows; else the smallest with no false negative.
fn recommend(rows: &[WindowRow], fpr: f64) -> String {
    let holds = |r: &&WindowRow| r.false_negatives == 0 && r.rate <= fpr * 1.1 + 1e-4;
    let pick = rows
        .iter()
        .filter(holds)
        .filter(|r| r.forgotten_by.is_some_and(|w| w <= 1.1))
        .min_by_key(|r| r.bytes)
        .or_else(|| rows.iter().filter(holds).min_by_key(|r| r.bytes));
    match pick {
        Some(r) => {
            let mut why = format!(
                "{}: the least memory ({:.1} bits per window item) with no false negative, the rate held ({:.4} against {fpr})",
                r.structure, r.bits_per_item, r.rate
            );
            if let Some(w) = r.forgotten_by {
                let _ = write!(why, ", keys forgotten by {w} windows");
            }
            if let Some(fastest) = rows
                .iter()
                .filter(holds)
                .min_by(|a, b| a.lookup_ns.total_cmp(&b.lookup_ns))
                && fastest.structure != r.structure
            {
                let _ = write!(
                    why,
                    "; if lookups matter more than memory, {} answers in {:.0} ns against {:.0}",
                    fastest.structure, fastest.lookup_ns, r.lookup_ns
                );
            }
            why
        }
        None => "none: every structure had false negatives (a defect)".into(),
    }
}

impl WindowReport {
    /// The rows as a table.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "workload: a window of the last {} inserts, a stream of {} steps (ask, then insert; half the keys fresh, half repeats from 1 to 2.5 windows back), target FPR {}",
            self.window, self.steps, self.fpr
        );
        let build = if cfg!(debug_assertions) {
            "an UNOPTIMIZED (debug) build: the times are meaningless"
        } else {
            "an optimized (release) build"
        };
        let _ = writeln!(out, "measured in {build}\n");
        let _ = writeln!(
            out,
            "{:<48} {:>12} {:>9} {:>4} {:>9} {:>9} {:>7} {:>7} {:>7} {:>7} {:>10} {:>8} {:>9}",
            "structure",
            "bytes",
            "bits/item",
            "FN",
            "rate",
            "worst",
            "1-1.1N",
            "1.1-1.5",
            "1.5-2N",
            ">2N",
            "forgotten",
            "step ns",
            "lookup ns"
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{:<48} {:>12} {:>9.2} {:>4} {:>9.5} {:>9.5} {:>7.4} {:>7.4} {:>7.4} {:>7.4} {:>10} {:>8.1} {:>9.1}",
                r.structure,
                r.bytes,
                r.bits_per_item,
                r.false_negatives,
                r.rate,
                r.worst_rate,
                r.past_window[0],
                r.past_window[1],
                r.past_window[2],
                r.past_window[3],
                r.forgotten_by.map_or("never".into(), |w| format!("by {w}N")),
                r.step_ns,
                r.lookup_ns
            );
        }
        let _ = writeln!(out, "\nrecommended: {}", self.recommendation);
        let _ = writeln!(out, "(1-1.1N ... >2N: share of keys last inserted that far back answered present; forgotten: the distance from which on they answer present no more often than never-seen keys)");
        out
    }

    /// The rows as JSON.
    pub fn json(&self) -> String {
        let rows: Vec<_> = self
            .rows
            .iter()
            .map(|r| {
                json!({
                    "structure": r.structure,
                    "bytes": r.bytes,
                    "bits_per_item": r.bits_per_item,
                    "false_negatives": r.false_negatives,
                    "rate": r.rate,
                    "worst_checkpoint_rate": r.worst_rate,
                    "present_past_window": BANDS.iter().zip(r.past_window).map(|(&(lo, hi), share)| json!({
                        "from_windows": lo,
                        "to_windows": if hi.is_finite() { json!(hi) } else { json!(null) },
                        "share_present": share,
                    })).collect::<Vec<_>>(),
                    "forgotten_by_windows": r.forgotten_by,
                    "step_ns": r.step_ns,
                    "lookup_ns": r.lookup_ns,
                })
            })
            .collect();
        json!({
            "window": self.window,
            "steps": self.steps,
            "target_fpr": self.fpr,
            "optimized": !cfg!(debug_assertions),
            "rows": rows,
            "recommendation": self.recommendation,
        })
        .to_string()
    }

    /// Rows that had false negatives.
    pub fn defects(&self) -> Vec<&WindowRow> {
        self.rows.iter().filter(|r| r.false_negatives > 0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small window: every structure keeps every key of the window, the exact ones forget
    /// right at it, the window filter by 1.1 windows, double buffering only past 2.
    #[test]
    fn the_window_comparison_measures_what_it_says() {
        let report = run(2_000, 20_000, 0.01, 3, &mut |_| {}).unwrap();
        assert_eq!(report.rows.len(), 4);
        for r in &report.rows {
            assert_eq!(r.false_negatives, 0, "{r:?}");
            assert!(r.bytes > 0, "{r:?}");
        }
        let by = |name: &str| {
            report
                .rows
                .iter()
                .find(|r| r.structure.starts_with(name))
                .unwrap()
        };
        assert_eq!(by("HashMap").rate, 0.0);
        assert_eq!(by("HashMap").forgotten_by, Some(1.0));
        assert!(
            by("WindowFilter").forgotten_by.is_some_and(|w| w <= 1.1),
            "{:?}",
            by("WindowFilter")
        );
        // Double buffering keeps keys up to two windows: most of 1-1.1N still answer.
        assert!(
            by("two rotating").past_window[0] > 0.5,
            "{:?}",
            by("two rotating")
        );
        assert!(report.table().contains("recommended:"));
        let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(json["rows"][0]["false_negatives"], 0);
        assert!(run(0, 10, 0.01, 0, &mut |_| {}).is_err());
    }
}
