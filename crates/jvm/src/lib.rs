//! The JVM's Bloom filters, byte for byte: read, answer, build and write the filters Java
//! services hand each other, in Rust.
//!
//! - [`guava::GuavaBloomFilter`]: Guava's `com.google.common.hash.BloomFilter`, both
//!   strategies (`MURMUR128_MITZ_32`, `MURMUR128_MITZ_64`), the five built-in funnels of `Funnels` (`stringFunnel`
//!   for UTF-8 only) as key types ([`guava::funnel`]), Guava's sizing, `put`, `mightContain`, `expectedFpp`,
//!   `approximateElementCount`, `putAll`, and its `writeTo` bytes; with bloomkit's batched,
//!   prefetching lookups on top.
//! - [`spark::SparkBloomFilter`]: Spark's sketch `BloomFilter`, versions 1 and 2 of its bytes,
//!   with Spark's MurmurHash3 of longs, strings and byte arrays.
//!
//! Both are checked against the real thing: Guava 31.1 run by the tests (a Java program in
//! `tests/java/`, compiled with `javac`, builds and reads filters of 10^6 keys for every
//! funnel and strategy; Rust answers as Guava does, and writes the same bytes), and golden
//! files written by Spark 4.3's own sketch classes (`tests/data/spark/`, with how they
//! were made).
//!
//! These filters keep their own formats and hashing, so they are not members of bloomkit's
//! `Filter` family: Guava's positions come from a 128-bit hash (the family's trait carries
//! 64), and neither format has bloomkit's header or checksum. The `bloomkit` command reads
//! both (`info`, `query --funnel`).
//!
//! # Examples
//!
//! A filter a Java service wrote with
//! `BloomFilter.create(Funnels.longFunnel(), 1_000_000, 0.01).writeTo(out)`:
//!
//! ```
//! use bloomkit_jvm::guava::{funnel, GuavaBloomFilter};
//!
//! # let java_bytes = {
//! #     let mut f = GuavaBloomFilter::<funnel::Long>::create(1_000_000, 0.01)?;
//! #     f.put(&7);
//! #     f.to_bytes()
//! # };
//! let users = GuavaBloomFilter::<funnel::Long>::from_bytes(&java_bytes)?;
//! assert!(users.might_contain(&7));
//!
//! // Many keys at once: hashed and prefetched ahead of the tests.
//! let mut answers = Vec::new();
//! users.contains_batch(&[7, 8, 9], &mut answers);
//! assert!(answers[0]);
//! # Ok::<(), bloomkit_jvm::Error>(())
//! ```
#![forbid(unsafe_code)]

pub mod guava;
pub mod murmur3;
pub mod spark;
mod words;

pub use guava::GuavaBloomFilter;
pub use spark::SparkBloomFilter;

/// What went wrong reading, building or combining a JVM filter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes end before what their header declares.
    #[error("truncated: the filter needs {needed} bytes, the input ends at {got}")]
    Truncated {
        /// The bytes the header declares, or (for a stream, which is read in pieces) the end
        /// of the piece that could not be read.
        needed: u64,
        /// Where the input ended: the bytes there were, or for a stream the start of the
        /// piece that could not be read.
        got: u64,
    },
    /// Bytes after the one filter they hold.
    #[error("{} bytes after the filter (it ends at byte {expected}, the input at {got})", got.saturating_sub(*expected))]
    TrailingBytes {
        /// Where the filter ends.
        expected: u64,
        /// Where the input ends.
        got: u64,
    },
    /// A Guava strategy ordinal other than 0 and 1.
    #[error("unknown Guava strategy ordinal {0} (0 is MURMUR128_MITZ_32, 1 MURMUR128_MITZ_64)")]
    UnknownStrategy(u8),
    /// A Spark version other than 1 and 2.
    #[error("unknown Spark Bloom filter version {0} (1 and 2 are known)")]
    UnknownVersion(i32),
    /// A number of hash functions a filter cannot have.
    #[error("{0} hash functions: a filter has at least 1 (and bloomkit reads at most {max})", max = spark::MAX_HASH_FUNCTIONS)]
    HashCount(i64),
    /// A word count that is not positive or past a Java array's length.
    #[error("a bit array of {0} words: it must have 1 to 2^31 - 1")]
    WordCount(i64),
    /// A false-positive rate outside (0, 1).
    #[error("false-positive rate {0} is not in (0, 1)")]
    InvalidFpp(f64),
    /// Sizing gave a filter the format cannot hold.
    #[error("could not create a filter of {bits} bits: {why}")]
    CannotCreate {
        /// The bits the sizing asked for.
        bits: i64,
        /// Why it cannot be made.
        why: &'static str,
    },
    /// The allocator refused the bits.
    #[error("could not allocate {bytes} bytes for the bits")]
    AllocationFailed {
        /// The bytes asked for.
        bytes: u64,
    },
    /// Two filters that cannot be combined (Guava's `putAll`, Spark's `mergeInPlace`).
    #[error("filters differ in {what} ({a} != {b})")]
    Incompatible {
        /// What differs.
        what: &'static str,
        /// This filter's.
        a: String,
        /// The other's.
        b: String,
    },
    /// Text that is not a key of the funnel (`long` and `int` funnels take decimal
    /// integers).
    #[error("{text:?} is not a key of {funnel}")]
    InvalidKey {
        /// The funnel.
        funnel: &'static str,
        /// The text (its first 40 characters).
        text: String,
    },
    /// The reader's or writer's error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Which JVM format bytes hold, from their header and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JvmFormat {
    /// Guava's `BloomFilter` bytes.
    Guava(guava::GuavaHeader),
    /// Spark's sketch `BloomFilter` bytes of this version.
    Spark(spark::Version),
}

impl JvmFormat {
    /// What `bytes` are, if they are exactly one Guava or Spark filter as far as the header
    /// and the length tell. The two cannot be confused: Spark's bytes start with three zero
    /// bytes, which in Guava's would declare no hash functions.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_jvm::{guava::{funnel, GuavaBloomFilter}, JvmFormat};
    ///
    /// let bytes = GuavaBloomFilter::<funnel::Utf8String>::create(100, 0.01)?.to_bytes();
    /// assert!(matches!(JvmFormat::sniff(&bytes), Some(JvmFormat::Guava(_))));
    /// assert_eq!(JvmFormat::sniff(b"BLMK...."), None);
    /// # Ok::<(), bloomkit_jvm::Error>(())
    /// ```
    pub fn sniff(bytes: &[u8]) -> Option<JvmFormat> {
        Self::peek(bytes).and_then(|(format, len)| (len == bytes.len() as u64).then_some(format))
    }

    /// What the first bytes of a stream declare, and the whole filter's length in bytes, from
    /// the header alone (for reading a pipe no further than the filter); `None` if they are
    /// neither format's header.
    pub fn peek(bytes: &[u8]) -> Option<(JvmFormat, u64)> {
        spark::SparkBloomFilter::peek(bytes)
            .map(|(v, len)| (JvmFormat::Spark(v), len))
            .or_else(|| guava::GuavaHeader::peek(bytes).map(|(h, len)| (JvmFormat::Guava(h), len)))
    }
}

/// The sizing formulas Guava and Spark share, with Java's arithmetic.
mod java_sizing {
    use std::f64::consts::LN_2;

    /// `optimalNumOfBits(n, p)`: `(long) (-n * Math.log(p) / (Math.log(2) * Math.log(2)))`
    /// (Java's cast saturates and takes NaN to 0, as Rust's `as` does).
    pub(crate) fn optimal_num_of_bits(n: i64, p: f64) -> i64 {
        (n.wrapping_neg() as f64 * p.ln() / (LN_2 * LN_2)) as i64
    }

    /// `optimalNumOfHashFunctions(n, m)`: `Math.max(1, (int) Math.round((double) m / n *
    /// Math.log(2)))`, with Java's `(int)` of a `long` (its low 32 bits), widened back so a
    /// caller can refuse what Java would wrap.
    pub(crate) fn optimal_num_of_hash_functions(n: i64, m: i64) -> i64 {
        let rounded = java_round(m as f64 / n as f64 * LN_2);
        i64::from((rounded as i32).max(1))
    }

    /// Java's `Math.round(double)`: the closest `long`, ties toward positive infinity,
    /// saturating, NaN to 0.
    fn java_round(x: f64) -> i64 {
        let floor = x.floor();
        let r = if x - floor >= 0.5 { floor + 1.0 } else { floor };
        r as i64
    }

    /// Guava's `DoubleMath.roundToLong(x, HALF_UP)` for the non-negative estimates it is
    /// used on (ties away from zero), saturating.
    pub(crate) fn round_half_up(x: f64) -> u64 {
        x.round() as u64
    }

    /// `Math.pow((double) set / bits, k)`.
    pub(crate) fn expected_fpp(set: u64, bits: u64, k: u32) -> f64 {
        (set as f64 / bits as f64).powf(f64::from(k))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn java_rounding() {
            assert_eq!(java_round(0.49999999999999994), 0);
            assert_eq!(java_round(0.5), 1);
            assert_eq!(java_round(2.5), 3);
            assert_eq!(java_round(f64::NAN), 0);
            assert_eq!(java_round(1e300), i64::MAX);
            // (int) of a long keeps its low 32 bits: about 2^32 + 3 becomes a small k.
            let m = ((1i64 << 32) as f64 / LN_2) as i64 + 4;
            assert!((1..10).contains(&optimal_num_of_hash_functions(1, m)));
            assert_eq!(optimal_num_of_hash_functions(1000, 9585), 7);
            assert_eq!(optimal_num_of_bits(1000, 0.01), 9585);
        }
    }
}
