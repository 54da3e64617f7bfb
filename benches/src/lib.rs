//! Shared workloads for bloomkit's benchmarks: fixed key streams, so every structure in a
//! group is measured on the same keys.

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
