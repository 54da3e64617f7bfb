//! Shared workloads for bloomkit's benchmarks: fixed key streams, so every structure in a
//! group is measured on the same keys.

#![forbid(unsafe_code)]

/// splitmix64: a fixed, fast stream of well-mixed 64-bit keys.
pub fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `count` member keys: `key(0..count)`.
pub fn members(count: u64) -> Vec<u64> {
    (0..count).map(key).collect()
}

/// `count` keys never among [`members`] of any size below 2^62 (by construction of the
/// index, not by luck).
pub fn non_members(count: u64) -> Vec<u64> {
    (0..count).map(|i| key((1 << 62) | i)).collect()
}

/// Every member of a filter is looked up in a random order over the whole filter, in
/// batches of this many keys per benchmark iteration.
pub const BATCH: usize = 1_024;

/// `BATCH` keys drawn evenly from `keys`, so a lookup batch touches the whole filter.
pub fn sample(keys: &[u64]) -> Vec<u64> {
    let step = (keys.len() / BATCH).max(1);
    keys.iter().step_by(step).take(BATCH).copied().collect()
}

/// Whether the bench runs as a smoke test (`cargo bench -- --test`, as CI does): then the
/// benches build small structures, since nothing is timed.
pub fn smoke() -> bool {
    std::env::args().any(|a| a == "--test")
}

/// Walks a probe set `BATCH` keys at a time, wrapping around, so consecutive iterations
/// of a benchmark ask different keys and a large filter's lines are not left in the cache
/// by the previous iteration.
#[derive(Debug)]
pub struct Cycle<'a, T> {
    keys: &'a [T],
    at: usize,
}

impl<'a, T> Cycle<'a, T> {
    /// A walk over `keys` (at least `BATCH` of them, or all of them if fewer).
    pub fn new(keys: &'a [T]) -> Self {
        Cycle { keys, at: 0 }
    }

    /// The next `BATCH` keys (fewer only if the set is smaller than `BATCH`).
    pub fn next_batch(&mut self) -> &'a [T] {
        let len = BATCH.min(self.keys.len());
        if self.at + len > self.keys.len() {
            self.at = 0;
        }
        let out = &self.keys[self.at..self.at + len];
        self.at += len;
        out
    }
}

/// A string key of 16 to 32 bytes (hex digits; the length varies with the key): distinct for
/// distinct `i`, like [`key`].
pub fn string_key(i: u64) -> String {
    let (a, b) = (key(i), key(i ^ 0x5bd1_e995));
    let mut s = format!("{a:016x}{b:016x}");
    s.truncate(16 + (b % 17) as usize);
    s
}

/// The median of `v` (the upper one for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median of `f` on each of `rows` over `rounds` rounds, each round timing every row
/// once in a rotating order (so that no row always runs first, after another's cache
/// traffic); `None` for a row `f` has no figure for.
pub fn race<T>(rows: &[T], rounds: usize, f: impl Fn(&T) -> Option<f64>) -> Vec<Option<f64>> {
    let mut times = vec![Vec::new(); rows.len()];
    for round in 0..rounds {
        for j in 0..rows.len() {
            let i = (j + round) % rows.len();
            if let Some(t) = f(&rows[i]) {
                times[i].push(t);
            }
        }
    }
    times
        .into_iter()
        .map(|t| (!t.is_empty()).then(|| median(t)))
        .collect()
}

/// Nanoseconds per key of `work` over `keys` keys (its result kept from the optimizer).
pub fn timed(keys: usize, work: impl FnOnce() -> usize) -> f64 {
    let t = std::time::Instant::now();
    std::hint::black_box(work());
    t.elapsed().as_nanos() as f64 / keys as f64
}

/// A names file's lines split as the examples use them: the first `n` are the members, the
/// rest the absent keys, and every fourth member a timed probe.
pub fn split_names(text: &str, n: usize) -> (Vec<&str>, Vec<&str>, Vec<&str>) {
    let all: Vec<&str> = text.lines().collect();
    let n = all.len().min(n);
    let probes = all[..n].iter().step_by(4).copied().collect();
    let absent = all[n..].to_vec();
    let mut members = all;
    members.truncate(n);
    (members, absent, probes)
}
