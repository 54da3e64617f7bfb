//! Spark's Bloom filter sketch (`org.apache.spark.util.sketch.BloomFilter`), versions 1 and
//! 2 of its bytes.
//!
//! Spark builds these for runtime join filters (`BloomFilterAggregate`, `might_contain`) and
//! `DataFrameStatFunctions.bloomFilter`. Its bytes (`writeTo` / `readFrom`):
//!
//! | version 1 | version 2 | what |
//! |---|---|---|
//! | 4 | 4 | the version, a big-endian `int` (1 or 2) |
//! | 4 | 4 | `k`, a big-endian `int` |
//! | - | 4 | the seed, a big-endian `int` (0 unless chosen) |
//! | 4 + 8 a word | 4 + 8 a word | the words: a big-endian `int` count, then big-endian `long`s |
//!
//! A key's hash is two 32-bit MurmurHash3 values (Spark's own x86_32, see
//! [`murmur3::spark_hash_bytes`](crate::murmur3::spark_hash_bytes)): `h1 = hash(key, seed)`, `h2 = hash(key, h1)`; strings
//! hash their UTF-8 bytes, so a `str` and its bytes are one key, and every Java integral
//! type widens to `long` (an `i32` key is the `i64` of the same value).
//!
//! - Version 1 (Spark 2.0 to 4.0): for `i` in `1..=k`, `c = h1 + i * h2` in 32 bits, `!c` if
//!   negative, position `c % m`. Its positions reach only the first 2^31 bits.
//! - Version 2 (SPARK-47547; the default of `BloomFilter.create` from Spark 4.1):
//!   `c = h1 * (2^31 - 1)` in 64 bits; `k` times, `c += h2`, position `(c < 0 ? !c : c) % m` (as Spark 4.3's
//!   `BloomFilterImplV2` computes it: the running sum is not flipped).
//!
//! Sizing is Guava's formula (`m = (long) (-n ln p / (ln 2)^2)`, `k = max(1, round(m / n ln
//! 2))`), with Spark's own refusals (`n` and `m` must be positive).
//!
//! # Examples
//!
//! ```
//! use bloomkit_jvm::spark::{SparkBloomFilter, Version};
//!
//! // As `BloomFilter.create(1000, 0.03)` in Spark 4.1 and later.
//! let mut ids = SparkBloomFilter::create(1000, 0.03)?;
//! assert_eq!(ids.version(), Version::V2);
//! ids.put(&42i64);
//! ids.put("alice");
//! assert!(ids.might_contain(&42i64) && ids.might_contain(&42i32)); // ints widen to long
//! assert!(ids.might_contain(b"alice".as_slice())); // a string is its UTF-8 bytes
//!
//! let back = SparkBloomFilter::from_bytes(&ids.to_bytes())?;
//! assert_eq!(back, ids);
//! # Ok::<(), bloomkit_jvm::Error>(())
//! ```

use std::fmt;
use std::io::{Read, Write};

use bloomkit_core::batch;

use crate::murmur3::{spark_hash_bytes, spark_hash_long};
use crate::words::{self, Words};
use crate::{java_sizing, Error};

/// The version of Spark's bytes (and of its positions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// Version 1: 32-bit positions, no seed (Spark 2.0 to 4.0).
    V1 = 1,
    /// Version 2: 64-bit positions and a seed (the default from Spark 4.1).
    V2 = 2,
}

impl Version {
    /// The number Spark writes first.
    pub fn number(self) -> i32 {
        self as i32
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "V{}", self.number())
    }
}

/// The most hash functions a filter may declare. Spark writes any positive `int`; a
/// lookup of a present key costs `k` probes, so a file declaring billions would hang every
/// lookup. Spark's own sizing stays below 1,100 for any rate a `double` holds.
pub const MAX_HASH_FUNCTIONS: u32 = 1 << 16;

mod sealed {
    pub trait Sealed {}
}

/// A key Spark's Bloom filter takes: `i64` (and the narrower integers, which Spark widens to
/// `long`), `str` (its UTF-8 bytes) and `[u8]`.
pub trait SparkKey: sealed::Sealed {
    /// The key's two hashes with `seed`: `h1 = hash(key, seed)`, `h2 = hash(key, h1)`.
    fn spark_hash(&self, seed: i32) -> SparkHash;
}

/// A key's two 32-bit hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct SparkHash {
    /// `hash(key, seed)`.
    pub h1: i32,
    /// `hash(key, h1)`.
    pub h2: i32,
}

macro_rules! integral_keys {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl SparkKey for $t {
            #[inline]
            fn spark_hash(&self, seed: i32) -> SparkHash {
                let v = i64::from(*self);
                let h1 = spark_hash_long(v, seed as u32);
                SparkHash { h1: h1 as i32, h2: spark_hash_long(v, h1) as i32 }
            }
        }
    )*};
}
integral_keys!(i8, i16, i32, i64);

impl sealed::Sealed for [u8] {}
impl SparkKey for [u8] {
    #[inline]
    fn spark_hash(&self, seed: i32) -> SparkHash {
        let h1 = spark_hash_bytes(self, seed as u32);
        SparkHash {
            h1: h1 as i32,
            h2: spark_hash_bytes(self, h1) as i32,
        }
    }
}

impl sealed::Sealed for str {}
impl SparkKey for str {
    #[inline]
    fn spark_hash(&self, seed: i32) -> SparkHash {
        self.as_bytes().spark_hash(seed)
    }
}

/// Spark's `BloomFilter` sketch: the same bits, positions, sizing and bytes as Spark's
/// `BloomFilterImpl` (version 1) and `BloomFilterImplV2` (version 2).
#[derive(Clone, PartialEq, Eq)]
pub struct SparkBloomFilter {
    version: Version,
    k: u32,
    seed: i32,
    bits: Words,
}

impl fmt::Debug for SparkBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SparkBloomFilter")
            .field("version", &self.version)
            .field("num_hash_functions", &self.k)
            .field("seed", &self.seed)
            .field("bit_size", &self.bit_size())
            .finish()
    }
}

impl SparkBloomFilter {
    /// As Spark 4.1+'s `BloomFilter.create(expectedNumItems, fpp)`: version 2, seed 0, sized
    /// for `expected_items` at rate `fpp`.
    ///
    /// # Errors
    /// As Spark refuses: `fpp` not in (0, 1), no items, no bits, more than 2^31 - 1 words;
    /// memory the allocator refuses.
    pub fn create(expected_items: u64, fpp: f64) -> Result<Self, Error> {
        if !(fpp > 0.0 && fpp < 1.0) {
            return Err(Error::InvalidFpp(fpp));
        }
        let n = i64::try_from(expected_items).unwrap_or(i64::MAX);
        let bits = java_sizing::optimal_num_of_bits(n, fpp);
        Self::create_with(Version::V2, expected_items, bits, 0)
    }

    /// As Spark's `BloomFilter.create(version, expectedNumItems, numBits, seed)`: `num_bits`
    /// rounded up to whole words, `k` from Spark's formula. Version 1 has no seed (give 0).
    ///
    /// # Errors
    /// No items or no bits ([`Error::CannotCreate`]), a seed other than 0 for version 1,
    /// more than 2^31 - 1 words, more than [`MAX_HASH_FUNCTIONS`] from Spark's formula
    /// ([`Error::HashCount`]; Spark would build it), memory the allocator refuses.
    pub fn create_with(
        version: Version,
        expected_items: u64,
        num_bits: i64,
        seed: i32,
    ) -> Result<Self, Error> {
        let cannot = |why: &'static str| Error::CannotCreate {
            bits: num_bits,
            why,
        };
        let n = i64::try_from(expected_items).unwrap_or(i64::MAX);
        if n <= 0 {
            return Err(cannot("expected insertions must be positive"));
        }
        if num_bits <= 0 {
            return Err(cannot("no bits"));
        }
        if version == Version::V1 && seed != 0 {
            return Err(cannot("version 1 has no seed"));
        }
        let words = (num_bits as u64).div_ceil(64);
        if words > words::MAX_WORDS {
            return Err(cannot(
                "more than 2^31 - 1 words, more than a Java array holds",
            ));
        }
        let k = java_sizing::optimal_num_of_hash_functions(n, num_bits);
        Self::check_k(k)?;
        Ok(SparkBloomFilter {
            version,
            k: k as u32,
            seed,
            bits: Words::zeroed(words)?,
        })
    }

    fn check_k(k: i64) -> Result<(), Error> {
        if k <= 0 || k > i64::from(MAX_HASH_FUNCTIONS) {
            return Err(Error::HashCount(k));
        }
        Ok(())
    }

    /// Adds `key` (Spark's `put`, `putLong`, `putString`, `putBinary`); whether a bit
    /// changed.
    #[inline]
    pub fn put<K: SparkKey + ?Sized>(&mut self, key: &K) -> bool {
        self.put_hash(key.spark_hash(self.seed))
    }

    /// Whether `key` may be in the filter (Spark's `mightContain` and its typed forms).
    #[inline]
    pub fn might_contain<K: SparkKey + ?Sized>(&self, key: &K) -> bool {
        self.might_contain_hash(key.spark_hash(self.seed))
    }

    /// The hashes this filter derives `key`'s positions from (they depend on its seed).
    #[inline]
    pub fn hash_key<K: SparkKey + ?Sized>(&self, key: &K) -> SparkHash {
        key.spark_hash(self.seed)
    }

    /// [`put`](Self::put) of a key whose hashes are `hash` (from
    /// [`hash_key`](Self::hash_key)).
    #[inline]
    pub fn put_hash(&mut self, hash: SparkHash) -> bool {
        let (version, k) = (self.version, self.k);
        let bits = &mut self.bits;
        let mut changed = false;
        positions(version, k, bits.bit_size(), hash, |i| {
            changed |= bits.set(i);
            true
        });
        changed
    }

    /// [`might_contain`](Self::might_contain) of a key whose hashes are `hash`.
    #[inline]
    pub fn might_contain_hash(&self, hash: SparkHash) -> bool {
        positions(self.version, self.k, self.bits.bit_size(), hash, |i| {
            self.bits.get(i)
        })
    }

    /// Appends to `out` whether each key may be in the filter, prefetching a group of
    /// keys' words before testing them.
    pub fn contains_batch<'k, K, I>(&self, keys: I, out: &mut Vec<bool>)
    where
        K: SparkKey + ?Sized + 'k,
        I: IntoIterator<Item = &'k K>,
    {
        batch::pipeline(
            out,
            keys.into_iter().map(|key| key.spark_hash(self.seed)),
            |_, h| {
                self.prefetch(h);
                h
            },
            |out, h| out.push(self.might_contain_hash(h)),
        );
    }

    #[inline]
    fn prefetch(&self, hash: SparkHash) {
        positions(self.version, self.k, self.bits.bit_size(), hash, |i| {
            self.bits.prefetch(i);
            true
        });
    }

    /// Spark's `expectedFpp()`: `(bits set / bits)^k`.
    pub fn expected_fpp(&self) -> f64 {
        java_sizing::expected_fpp(self.bits.count_ones(), self.bit_size(), self.k)
    }

    /// The number of bits (Spark's `bitSize()`, 64 a word).
    pub fn bit_size(&self) -> u64 {
        self.bits.bit_size()
    }

    /// The bits set (Spark's `cardinality()`).
    pub fn cardinality(&self) -> u64 {
        self.bits.count_ones()
    }

    /// `k`.
    pub fn num_hash_functions(&self) -> u32 {
        self.k
    }

    /// The seed (0 for version 1).
    pub fn seed(&self) -> i32 {
        self.seed
    }

    /// The version of the bytes and the positions.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The heap memory the bits take.
    pub fn heap_bytes(&self) -> usize {
        self.bits.words.len() * 8
    }

    /// The number of keys the bits suggest, `-m ln(1 - set / m) / k` (Spark has no such
    /// method; Guava's `approximateElementCount`); `u64::MAX` when every bit is set.
    pub fn approximate_element_count(&self) -> u64 {
        let m = self.bit_size() as f64;
        let x = self.cardinality() as f64 / m;
        java_sizing::round_half_up(-(-x).ln_1p() * m / f64::from(self.k))
    }

    /// Spark's `isCompatible`: the same version, number of bits, `k` and seed.
    pub fn is_compatible(&self, other: &SparkBloomFilter) -> bool {
        self.check_compatible(other).is_ok()
    }

    fn check_compatible(&self, other: &SparkBloomFilter) -> Result<(), Error> {
        let differ =
            |what: &'static str, a: String, b: String| Err(Error::Incompatible { what, a, b });
        if self.version != other.version {
            return differ(
                "version",
                self.version.to_string(),
                other.version.to_string(),
            );
        }
        if self.bit_size() != other.bit_size() {
            return differ(
                "bit size",
                self.bit_size().to_string(),
                other.bit_size().to_string(),
            );
        }
        if self.seed != other.seed {
            return differ("seed", self.seed.to_string(), other.seed.to_string());
        }
        if self.k != other.k {
            return differ(
                "number of hash functions",
                self.k.to_string(),
                other.k.to_string(),
            );
        }
        Ok(())
    }

    /// Spark's `mergeInPlace`: ORs `other`'s bits into these.
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming what differs; nothing changes.
    pub fn merge_in_place(&mut self, other: &SparkBloomFilter) -> Result<(), Error> {
        self.check_compatible(other)?;
        self.bits.or(&other.bits);
        Ok(())
    }

    /// Spark's `intersectInPlace`: ANDs `other`'s bits into these (it answers "present"
    /// for every key of both, and more keys than their true intersection).
    ///
    /// # Errors
    /// As [`merge_in_place`](Self::merge_in_place).
    pub fn intersect_in_place(&mut self, other: &SparkBloomFilter) -> Result<(), Error> {
        self.check_compatible(other)?;
        self.bits.and(&other.bits);
        Ok(())
    }

    fn head_len(version: Version) -> u64 {
        match version {
            Version::V1 => 8,
            Version::V2 => 12,
        }
    }

    /// The length of [`to_bytes`](Self::to_bytes).
    pub fn serialized_len(&self) -> u64 {
        Self::head_len(self.version) + self.bits.encoded_len()
    }

    /// Spark's `writeTo` bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.serialized_len() as usize);
        // Writing to a Vec cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    /// Writes Spark's `writeTo` bytes to `out`.
    ///
    /// # Errors
    /// The writer's.
    pub fn write_to(&self, mut out: impl Write) -> std::io::Result<()> {
        out.write_all(&self.version.number().to_be_bytes())?;
        out.write_all(&(self.k as i32).to_be_bytes())?;
        if self.version == Version::V2 {
            out.write_all(&self.seed.to_be_bytes())?;
        }
        self.bits.write(&mut out)
    }

    /// Reads Spark's bytes of either version: exactly one filter, nothing after it.
    ///
    /// # Errors
    /// [`Error::UnknownVersion`], [`Error::HashCount`] (not positive, or above
    /// [`MAX_HASH_FUNCTIONS`]), [`Error::WordCount`], [`Error::Truncated`],
    /// [`Error::TrailingBytes`]; all found before the words are allocated.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let (version, k, seed) = Self::read_head(|at| {
            let at = at as usize;
            bytes
                .get(at..at + 4)
                .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or(Error::Truncated {
                    needed: at as u64 + 4,
                    got: bytes.len() as u64,
                })
        })?;
        let head = Self::head_len(version);
        // `read_head` read the `head` bytes.
        let bits = Words::decode(&bytes[head as usize..], head)?;
        Ok(SparkBloomFilter {
            version,
            k,
            seed,
            bits,
        })
    }

    /// Reads one filter from a stream, as Spark's `readFrom` (no further than its words).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) but for trailing bytes, and the reader's
    /// ([`Error::Io`]); memory grows with the bytes that arrive.
    pub fn read_from(mut input: impl Read) -> Result<Self, Error> {
        let (version, k, seed) = Self::read_head(|at| {
            let mut b = [0u8; 4];
            words::read_exact(&mut input, &mut b, at)?;
            Ok(i32::from_be_bytes(b))
        })?;
        let bits = Words::read(&mut input, Self::head_len(version))?;
        Ok(SparkBloomFilter {
            version,
            k,
            seed,
            bits,
        })
    }

    /// The version, `k` and seed, checked, from `int(at)` (the big-endian `int` at byte
    /// `at`), for both readers.
    fn read_head(
        mut int: impl FnMut(u64) -> Result<i32, Error>,
    ) -> Result<(Version, u32, i32), Error> {
        let version = Self::check_version(int(0)?)?;
        let k = int(4)?;
        let seed = if version == Version::V2 { int(8)? } else { 0 };
        Self::check_k(i64::from(k))?;
        Ok((version, k as u32, seed))
    }

    fn check_version(number: i32) -> Result<Version, Error> {
        match number {
            1 => Ok(Version::V1),
            2 => Ok(Version::V2),
            _ => Err(Error::UnknownVersion(number)),
        }
    }

    /// The version at the start of `bytes` (a known version, a positive `k` and word count)
    /// and the filter's length in bytes; `None` otherwise.
    pub fn peek(bytes: &[u8]) -> Option<(Version, u64)> {
        let int = |at: usize| {
            bytes
                .get(at..at + 4)
                .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        let version = Self::check_version(int(0)?).ok()?;
        let head = Self::head_len(version);
        let words = u64::try_from(int(head as usize)?).ok()?;
        (int(4)? > 0 && words > 0).then_some((version, head + 4 + 8 * words))
    }
}

/// Calls `visit` with each of a key's `k` positions in Spark's order until it returns
/// false; whether it never did.
#[inline(always)]
fn positions(
    version: Version,
    k: u32,
    bit_size: u64,
    hash: SparkHash,
    mut visit: impl FnMut(u64) -> bool,
) -> bool {
    let SparkHash { h1, h2 } = hash;
    match version {
        Version::V1 => {
            // Spark's loop counter is an `int`; `k` is at most MAX_HASH_FUNCTIONS.
            for i in 1..=k as i32 {
                let mut c = h1.wrapping_add(i.wrapping_mul(h2));
                if c < 0 {
                    c = !c;
                }
                if !visit(c as u64 % bit_size) {
                    return false;
                }
            }
        }
        Version::V2 => {
            let mut c = i64::from(h1) * i64::from(i32::MAX);
            for _ in 0..k {
                c = c.wrapping_add(i64::from(h2));
                // The running sum is kept; only the position is flipped.
                let index = if c < 0 { !c } else { c };
                if !visit(index as u64 % bit_size) {
                    return false;
                }
            }
        }
    }
    true
}
