//! Sizes checked before anything large is allocated: a workload that cannot fit in this
//! machine's memory, or a key too long to measure, is a message and exit 2, never an abort.
//!
//! The estimate is the peak of what `compare` holds at once: the keys, the queries, the
//! synthetic generator's set of seen keys, the exact `HashSet` baseline, and the largest
//! structure measured (the 4-bit counting filter, or the bitmap over a dense range). It
//! errs high; it is compared with the memory the operating system says is available.

/// The longest key `compare` accepts, from a file or `--string-len`. URLs and other real
/// keys are far shorter; a 100 MB "key" hashed once per query would take hours.
pub const MAX_KEY_BYTES: usize = 64 << 10;

/// Bytes of bookkeeping per key held in a `Vec`, a `HashSet` entry (with its share of empty
/// buckets and control bytes) or a shared string's header.
const PER_KEY: u128 = 16;
const PER_SET_ENTRY: u128 = 2 * (PER_KEY + 1);

/// The memory the operating system says is available (Linux: `MemAvailable` of
/// `/proc/meminfo`), or `None` where it cannot be read.
pub fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// What a workload holds at its peak, in bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Estimate {
    /// Distinct keys.
    pub items: u128,
    /// Bytes of one key's content (8 for integers, the string's length for strings).
    pub key_bytes: u128,
    /// Whether keys are strings (shared, so queries and sets hold pointers to them).
    pub strings: bool,
    /// Queries asked.
    pub queries: u128,
    /// For dense keys, the size of the range (a bitmap bit, and a shuffled id, each).
    pub range: u128,
    /// Bits per key of the largest Bloom-style structure (the 4-bit counting filter).
    pub filter_bits_per_key: f64,
}

impl Estimate {
    /// The peak, in bytes.
    pub fn bytes(&self) -> u128 {
        let key = if self.strings {
            PER_KEY + self.key_bytes
        } else {
            self.key_bytes
        };
        let keys = self.items * key;
        // The generator's set of seen keys and the exact HashSet: entries (pointers for
        // strings) in tables at most half full.
        let sets = 2 * self.items * (PER_SET_ENTRY + if self.strings { 0 } else { key });
        // Member queries share the keys; made-up non-members are new keys.
        let queries = self.queries * (PER_KEY + key);
        let filter = (self.items as f64 * self.filter_bits_per_key * 4.0 / 8.0) as u128;
        // The dense generator shuffles every id of the range; the bitmap has a bit each.
        let dense = self.range * 8 + self.range / 8;
        keys + sets + queries + filter + dense
    }
}

/// `Ok` if `estimate` fits in the memory available (or that is unknown), else a message
/// that says what to change.
///
/// # Errors
/// The message, for exit 2.
pub fn check(estimate: &Estimate) -> Result<(), String> {
    let need = estimate.bytes();
    match available_bytes() {
        Some(have) if need > u128::from(have) => Err(format!(
            "this workload needs about {} of memory (keys, queries, the exact HashSet and the \
             largest structure), and this machine has {} available: use fewer --items or \
             --queries, shorter keys or a denser range",
            gib(need),
            gib(u128::from(have))
        )),
        _ => Ok(()),
    }
}

fn gib(bytes: u128) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

/// An empty `Vec` with room for `n` items, or a message (never an abort) when the allocator
/// refuses: the check for machines whose available memory cannot be read.
///
/// # Errors
/// The message, for exit 2.
pub fn vec_with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>, String> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| format!("cannot allocate room for {n} {what}"))?;
    Ok(v)
}

/// `s` cut to at most `max` characters, with its length when cut: for messages that quote
/// user input.
pub fn quoted(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => format!("{s:?}"),
        Some((end, _)) => format!("{:?}... ({} bytes)", &s[..end], s.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_grow_with_every_dimension() {
        let base = Estimate {
            items: 1_000_000,
            key_bytes: 8,
            queries: 1_000_000,
            filter_bits_per_key: 9.6,
            ..Estimate::default()
        };
        let b = base.bytes();
        assert!((50 << 20..200 << 20).contains(&b), "{b}");
        for bigger in [
            Estimate {
                items: 10_000_000_000,
                ..base
            },
            Estimate {
                queries: 10_000_000_000,
                ..base
            },
            Estimate {
                range: 1 << 60,
                ..base
            },
            Estimate {
                strings: true,
                key_bytes: 100_000_000,
                ..base
            },
        ] {
            assert!(bigger.bytes() > 24 << 30, "{bigger:?}");
        }
    }

    #[test]
    fn quotes_are_short() {
        assert_eq!(quoted("abc", 40), "\"abc\"");
        let long = "z".repeat(100_000);
        let q = quoted(&long, 40);
        assert!(q.len() < 80 && q.ends_with("... (100000 bytes)"), "{q}");
    }
}
