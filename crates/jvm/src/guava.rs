//! Guava's `com.google.common.hash.BloomFilter`, byte for byte.
//!
//! A Guava filter is `m` bits (64-bit words) and `k` positions a key derived from the key's
//! MurmurHash3_x64_128 (seed 0) over the bytes its *funnel* writes. Its bytes
//! (`writeTo` / `readFrom`) are:
//!
//! | bytes | what |
//! |---|---|
//! | 1 | the strategy's ordinal: 0 `MURMUR128_MITZ_32`, 1 `MURMUR128_MITZ_64` |
//! | 1 | `k`, unsigned (1..=255) |
//! | 4 | the number of words, a big-endian `int` (positive) |
//! | 8 a word | the words, big-endian `long`s; bit `i` is bit `i % 64` of word `i / 64` |
//!
//! Nothing in them names the funnel: a file is answered correctly only through the funnel
//! that wrote it, so each funnel is a type ([`funnel`]) and the filter is typed by it,
//! `GuavaBloomFilter<funnel::Utf8String>`, as a Rust filter is typed by its key.
//!
//! # The strategies
//!
//! With `(h1, h2)` the hash's two 64-bit halves (little-endian):
//!
//! - `MURMUR128_MITZ_32` (ordinal 0, Guava's first): `a`, `b` the low and high 32 bits of
//!   `h1` as Java `int`s; for `i` in `1..=k`, `c = a + i * b` (wrapping), `!c` if negative,
//!   position `c % m`.
//! - `MURMUR128_MITZ_64` (ordinal 1, Guava's default since version 17): `c = h1`; `k` times,
//!   position `(c & i64::MAX) % m`, then `c += h2` (wrapping).
//!
//! # Sizing
//!
//! As Guava's `create(funnel, expectedInsertions, fpp)` up to version 32 (Debian's 31.1 is
//! the one tested): `m = (long) (-n ln p / (ln 2)^2)` (`n` of 0 taken as 1),
//! `k = max(1, (int) round(m / n * ln 2))`, rounded up to whole words. Guava 33 computes `k`
//! as `round(-ln p / ln 2)`, which can differ by one at extreme rates (`create(1, 1e-70)`:
//! 232 here, 233 there); files of either are read and answered alike, `k` is in the bytes.
//!
//! # Examples
//!
//! ```
//! use bloomkit_jvm::guava::{funnel, GuavaBloomFilter};
//!
//! // As `BloomFilter.create(Funnels.stringFunnel(UTF_8), 1000, 0.01)` in Java.
//! let mut seen = GuavaBloomFilter::<funnel::Utf8String>::create(1000, 0.01)?;
//! assert!(seen.put("https://example.org/"));
//! assert!(seen.might_contain("https://example.org/"));
//! assert_eq!((seen.bit_size(), seen.num_hash_functions()), (9600, 7));
//!
//! // The bytes Guava's `writeTo` writes and `readFrom` reads.
//! let bytes = seen.to_bytes();
//! assert_eq!(bytes.len(), 6 + 8 * 150);
//! let back = GuavaBloomFilter::<funnel::Utf8String>::from_bytes(&bytes)?;
//! assert!(back.might_contain("https://example.org/"));
//! # Ok::<(), bloomkit_jvm::Error>(())
//! ```

use std::fmt;
use std::io::{Read, Write};
use std::marker::PhantomData;

use bloomkit_core::batch;

use crate::murmur3::{Hash128, Murmur3x64};
use crate::words::{self, Words};
use crate::{java_sizing, Error};

/// Guava's `BloomFilterStrategies`: how a key's 128-bit hash becomes `k` positions. The
/// discriminant is the ordinal Guava writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// `MURMUR128_MITZ_32` (ordinal 0): positions from the first 64 bits only, 32-bit
    /// arithmetic. Filters written by Guava before version 17, and by code that asks for it.
    Murmur128Mitz32 = 0,
    /// `MURMUR128_MITZ_64` (ordinal 1): Guava's default; 64-bit arithmetic over all 128
    /// bits.
    Murmur128Mitz64 = 1,
}

impl Strategy {
    /// The strategy with Guava's ordinal `ordinal`, if any.
    pub fn from_ordinal(ordinal: u8) -> Option<Strategy> {
        match ordinal {
            0 => Some(Strategy::Murmur128Mitz32),
            1 => Some(Strategy::Murmur128Mitz64),
            _ => None,
        }
    }

    /// Guava's ordinal (the first byte of its bytes).
    pub fn ordinal(self) -> u8 {
        self as u8
    }

    /// Guava's name for it (`MURMUR128_MITZ_64`).
    pub fn java_name(self) -> &'static str {
        match self {
            Strategy::Murmur128Mitz32 => "MURMUR128_MITZ_32",
            Strategy::Murmur128Mitz64 => "MURMUR128_MITZ_64",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.java_name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Guava funnel: how a key becomes the bytes Guava hashes. Implemented by the types of
/// [`funnel`] only.
pub trait Funnel: sealed::Sealed {
    /// The Rust key the funnel takes.
    type Key: ?Sized;
    /// Which funnel it is, as a value.
    const KIND: FunnelKind;
    /// MurmurHash3_x64_128 (seed 0) of the bytes the funnel writes for `key`.
    fn hash(key: &Self::Key) -> Hash128;
}

/// The funnels of Guava's `Funnels`, one type each (markers: they do not derive `Hash`, so
/// `funnel::Long::hash(&key)` is never ambiguous with `std::hash::Hash`).
pub mod funnel {
    use super::{sealed, Funnel, FunnelKind, Hash128, Murmur3x64};
    use crate::murmur3;

    /// `Funnels.stringFunnel(StandardCharsets.UTF_8)`: a string's UTF-8 bytes. Key: `str`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct Utf8String;
    /// `Funnels.unencodedCharsFunnel()`: a string's UTF-16 code units, each two bytes
    /// little-endian (Java's `char`s). Key: `str`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct UnencodedChars;
    /// `Funnels.longFunnel()`: a Java `long`, eight bytes little-endian. Key: `i64`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct Long;
    /// `Funnels.integerFunnel()`: a Java `int`, four bytes little-endian. Key: `i32`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct Integer;
    /// `Funnels.byteArrayFunnel()`: the bytes themselves. Key: `[u8]`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct ByteArray;

    impl sealed::Sealed for Utf8String {}
    impl sealed::Sealed for UnencodedChars {}
    impl sealed::Sealed for Long {}
    impl sealed::Sealed for Integer {}
    impl sealed::Sealed for ByteArray {}

    impl Funnel for Utf8String {
        type Key = str;
        const KIND: FunnelKind = FunnelKind::Utf8String;
        #[inline]
        fn hash(key: &str) -> Hash128 {
            murmur3::x64_128(key.as_bytes(), 0)
        }
    }

    impl Funnel for UnencodedChars {
        type Key = str;
        const KIND: FunnelKind = FunnelKind::UnencodedChars;
        #[inline]
        fn hash(key: &str) -> Hash128 {
            // Eight code units at a time into the streaming hasher.
            let mut h = Murmur3x64::new(0);
            let mut buf = [0u8; 16];
            let mut held = 0;
            for unit in key.encode_utf16() {
                buf[held..held + 2].copy_from_slice(&unit.to_le_bytes());
                held += 2;
                if held == buf.len() {
                    h.write(&buf);
                    held = 0;
                }
            }
            h.write(&buf[..held]);
            h.finish()
        }
    }

    impl Funnel for Long {
        type Key = i64;
        const KIND: FunnelKind = FunnelKind::Long;
        #[inline]
        fn hash(key: &i64) -> Hash128 {
            murmur3::x64_128(&key.to_le_bytes(), 0)
        }
    }

    impl Funnel for Integer {
        type Key = i32;
        const KIND: FunnelKind = FunnelKind::Integer;
        #[inline]
        fn hash(key: &i32) -> Hash128 {
            murmur3::x64_128(&key.to_le_bytes(), 0)
        }
    }

    impl Funnel for ByteArray {
        type Key = [u8];
        const KIND: FunnelKind = FunnelKind::ByteArray;
        #[inline]
        fn hash(key: &[u8]) -> Hash128 {
            murmur3::x64_128(key, 0)
        }
    }
}

/// Which funnel, as a value: for tools that choose at run time how a line of text becomes
/// a key (`bloomkit query --funnel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FunnelKind {
    /// [`funnel::Utf8String`].
    Utf8String,
    /// [`funnel::UnencodedChars`].
    UnencodedChars,
    /// [`funnel::Long`].
    Long,
    /// [`funnel::Integer`].
    Integer,
    /// [`funnel::ByteArray`].
    ByteArray,
}

impl FunnelKind {
    /// Every funnel.
    pub const ALL: [FunnelKind; 5] = [
        FunnelKind::Utf8String,
        FunnelKind::UnencodedChars,
        FunnelKind::Long,
        FunnelKind::Integer,
        FunnelKind::ByteArray,
    ];

    /// The Java expression that makes it (`Funnels.longFunnel()`).
    pub fn java_name(self) -> &'static str {
        match self {
            FunnelKind::Utf8String => "Funnels.stringFunnel(UTF_8)",
            FunnelKind::UnencodedChars => "Funnels.unencodedCharsFunnel()",
            FunnelKind::Long => "Funnels.longFunnel()",
            FunnelKind::Integer => "Funnels.integerFunnel()",
            FunnelKind::ByteArray => "Funnels.byteArrayFunnel()",
        }
    }

    /// The hash of `text` as this funnel's key: its UTF-8 bytes (string and byte-array
    /// funnels), its UTF-16 code units, or the integer it spells in decimal (`long`, `int`).
    ///
    /// # Errors
    /// [`Error::InvalidKey`]: text that is not a decimal integer in the funnel's range.
    pub fn hash_text(self, text: &str) -> Result<Hash128, Error> {
        let invalid = || Error::InvalidKey {
            funnel: self.java_name(),
            text: text.chars().take(40).collect(),
        };
        Ok(match self {
            FunnelKind::Utf8String | FunnelKind::ByteArray => funnel::Utf8String::hash(text),
            FunnelKind::UnencodedChars => funnel::UnencodedChars::hash(text),
            FunnelKind::Long => funnel::Long::hash(&text.trim().parse().map_err(|_| invalid())?),
            FunnelKind::Integer => {
                funnel::Integer::hash(&text.trim().parse().map_err(|_| invalid())?)
            }
        })
    }
}

/// Guava's `BloomFilter<T>` for the funnel `F`: the same bits, positions, sizing and bytes,
/// so a filter built in Java answers identically here and the other way round.
///
/// `put` / `might_contain` / `put_all` carry Guava's names and answers (`put` is true when
/// a bit changed); `put_batch` / `contains_batch` are bloomkit's batched calls, which
/// prefetch each key's words before testing them.
pub struct GuavaBloomFilter<F: Funnel> {
    strategy: Strategy,
    k: u8,
    bits: Words,
    funnel: PhantomData<fn(&F::Key)>,
}

impl<F: Funnel> Clone for GuavaBloomFilter<F> {
    fn clone(&self) -> Self {
        GuavaBloomFilter {
            strategy: self.strategy,
            k: self.k,
            bits: self.bits.clone(),
            funnel: PhantomData,
        }
    }
}

impl<F: Funnel> PartialEq for GuavaBloomFilter<F> {
    fn eq(&self, other: &Self) -> bool {
        self.strategy == other.strategy && self.k == other.k && self.bits == other.bits
    }
}

impl<F: Funnel> Eq for GuavaBloomFilter<F> {}

impl<F: Funnel> fmt::Debug for GuavaBloomFilter<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuavaBloomFilter")
            .field("funnel", &F::KIND.java_name())
            .field("strategy", &self.strategy)
            .field("num_hash_functions", &self.k)
            .field("bit_size", &self.bit_size())
            .finish()
    }
}

/// The bytes before the words: ordinal, `k`.
const HEAD: u64 = 2;

impl<F: Funnel> GuavaBloomFilter<F> {
    /// As Guava's `BloomFilter.create(funnel, expectedInsertions, fpp)`: sized for
    /// `expected_insertions` keys at rate `fpp`, with Guava's default strategy
    /// (`MURMUR128_MITZ_64`).
    ///
    /// # Errors
    /// As Guava refuses: `fpp` not in (0, 1) ([`Error::InvalidFpp`]); a filter of no bits,
    /// of more than 255 hash functions (rates below about 10^-77) or of more than
    /// 2^31 - 1 words ([`Error::CannotCreate`]); memory the allocator refuses.
    pub fn create(expected_insertions: u64, fpp: f64) -> Result<Self, Error> {
        Self::create_with_strategy(expected_insertions, fpp, Strategy::Murmur128Mitz64)
    }

    /// [`create`](Self::create) with `strategy` (Guava's package-private
    /// `create(funnel, n, fpp, strategy)`).
    ///
    /// # Errors
    /// As [`create`](Self::create).
    pub fn create_with_strategy(
        expected_insertions: u64,
        fpp: f64,
        strategy: Strategy,
    ) -> Result<Self, Error> {
        // Guava takes a `long`: past its range is past any filter it could make.
        let n = i64::try_from(expected_insertions.max(1)).unwrap_or(i64::MAX);
        if !(fpp > 0.0 && fpp < 1.0) {
            return Err(Error::InvalidFpp(fpp));
        }
        let num_bits = java_sizing::optimal_num_of_bits(n, fpp);
        let k = java_sizing::optimal_num_of_hash_functions(n, num_bits);
        let cannot = |why: &'static str| Error::CannotCreate {
            bits: num_bits,
            why,
        };
        if num_bits <= 0 {
            return Err(cannot("no bits"));
        }
        if k > 255 {
            return Err(cannot(
                "more than 255 hash functions, more than Guava's format holds",
            ));
        }
        let words = (num_bits as u64).div_ceil(64);
        if words > words::MAX_WORDS {
            return Err(cannot(
                "more than 2^31 - 1 words, more than a Java array holds",
            ));
        }
        Ok(GuavaBloomFilter {
            strategy,
            k: k as u8,
            bits: Words::zeroed(words)?,
            funnel: PhantomData,
        })
    }

    /// Adds `key`; whether a bit changed (Guava's `put`: `true` means the key was certainly
    /// not in the filter before).
    #[inline]
    pub fn put(&mut self, key: &F::Key) -> bool {
        self.put_hash(F::hash(key))
    }

    /// Whether `key` may be in the filter (Guava's `mightContain`): never false for a key
    /// put in.
    #[inline]
    pub fn might_contain(&self, key: &F::Key) -> bool {
        self.might_contain_hash(F::hash(key))
    }

    /// [`put`](Self::put) of a key whose hash is `hash` (from [`Funnel::hash`] or
    /// [`FunnelKind::hash_text`]).
    #[inline]
    pub fn put_hash(&mut self, hash: Hash128) -> bool {
        let (strategy, k) = (self.strategy, self.k);
        let bits = &mut self.bits;
        let mut changed = false;
        positions(strategy, k, bits.bit_size(), hash, |i| {
            changed |= bits.set(i);
            true
        });
        changed
    }

    /// [`might_contain`](Self::might_contain) of a key whose hash is `hash`.
    #[inline]
    pub fn might_contain_hash(&self, hash: Hash128) -> bool {
        positions(self.strategy, self.k, self.bits.bit_size(), hash, |i| {
            self.bits.get(i)
        })
    }

    /// Appends to `out` whether each key may be in the filter, as
    /// [`might_contain`](Self::might_contain) answers, hashing and prefetching a group of
    /// keys' words before testing them (several times faster than one at a time on
    /// filters larger than the cache).
    pub fn contains_batch<'k, I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator<Item = &'k F::Key>,
        F::Key: 'k,
    {
        self.contains_hash_batch(keys.into_iter().map(F::hash), out);
    }

    /// [`contains_batch`](Self::contains_batch) of keys given by their hashes.
    pub fn contains_hash_batch<I: IntoIterator<Item = Hash128>>(
        &self,
        hashes: I,
        out: &mut Vec<bool>,
    ) {
        batch::pipeline(
            out,
            hashes,
            |_, h| {
                self.prefetch(h);
                h
            },
            |out, h| out.push(self.might_contain_hash(h)),
        );
    }

    /// Adds every key of `keys` (prefetching as
    /// [`contains_batch`](Self::contains_batch)); how many changed a bit.
    pub fn put_batch<'k, I>(&mut self, keys: I) -> usize
    where
        I: IntoIterator<Item = &'k F::Key>,
        F::Key: 'k,
    {
        let mut changed = 0;
        batch::pipeline(
            self,
            keys.into_iter().map(F::hash),
            |f, h| {
                f.prefetch(h);
                h
            },
            |f, h| {
                // Counted with an `if` (docs/architecture.md: rust-lang/rust#158206).
                if f.put_hash(h) {
                    changed += 1;
                }
            },
        );
        changed
    }

    #[inline]
    fn prefetch(&self, hash: Hash128) {
        positions(self.strategy, self.k, self.bits.bit_size(), hash, |i| {
            self.bits.prefetch(i);
            true
        });
    }

    /// Guava's `expectedFpp()`: `(bits set / bits)^k`, the rate a key never put in is
    /// answered "present" with, for the filter as it is.
    pub fn expected_fpp(&self) -> f64 {
        java_sizing::expected_fpp(self.bits.count_ones(), self.bit_size(), u32::from(self.k))
    }

    /// Guava's `approximateElementCount()`: `-m ln(1 - bits set / m) / k`, rounded half up;
    /// `u64::MAX` when every bit is set (Guava throws there: the estimate is infinite).
    pub fn approximate_element_count(&self) -> u64 {
        let m = self.bit_size() as f64;
        let x = self.bits.count_ones() as f64 / m;
        let estimate = -(-x).ln_1p() * m / f64::from(self.k);
        java_sizing::round_half_up(estimate)
    }

    /// The number of bits, `m` (64 a word).
    pub fn bit_size(&self) -> u64 {
        self.bits.bit_size()
    }

    /// The bits set.
    pub fn bit_count(&self) -> u64 {
        self.bits.count_ones()
    }

    /// `k`, the positions a key sets.
    pub fn num_hash_functions(&self) -> u32 {
        u32::from(self.k)
    }

    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The heap memory the bits take.
    pub fn heap_bytes(&self) -> usize {
        self.bits.words.len() * 8
    }

    /// Guava's `isCompatible`: the same strategy, `k` and number of bits (the funnel is the
    /// type, so always the same).
    pub fn is_compatible(&self, other: &Self) -> bool {
        self.check_compatible(other).is_ok()
    }

    fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        let incompatible =
            |what: &'static str, a: String, b: String| Err(Error::Incompatible { what, a, b });
        if self.k != other.k {
            return incompatible(
                "number of hash functions",
                self.k.to_string(),
                other.k.to_string(),
            );
        }
        if self.bit_size() != other.bit_size() {
            return incompatible(
                "size of the bit arrays",
                self.bit_size().to_string(),
                other.bit_size().to_string(),
            );
        }
        if self.strategy != other.strategy {
            return incompatible(
                "strategy",
                self.strategy.to_string(),
                other.strategy.to_string(),
            );
        }
        Ok(())
    }

    /// Guava's `putAll`: ORs `other`'s bits into these, so the filter answers every key of
    /// both.
    ///
    /// # Errors
    /// [`Error::Incompatible`], naming what differs (as Guava's message does), when
    /// [`is_compatible`](Self::is_compatible) is false; nothing changes.
    pub fn put_all(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        self.bits.or(&other.bits);
        Ok(())
    }

    /// The length of [`to_bytes`](Self::to_bytes).
    pub fn serialized_len(&self) -> u64 {
        HEAD + self.bits.encoded_len()
    }

    /// Guava's `writeTo` bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.serialized_len() as usize);
        // Writing to a Vec cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    /// Writes Guava's `writeTo` bytes to `out`.
    ///
    /// # Errors
    /// The writer's.
    pub fn write_to(&self, mut out: impl Write) -> std::io::Result<()> {
        out.write_all(&[self.strategy.ordinal(), self.k])?;
        self.bits.write(&mut out)
    }

    /// Reads Guava's `writeTo` bytes: exactly one filter, nothing after it.
    ///
    /// # Errors
    /// [`Error::UnknownStrategy`], [`Error::HashCount`] (0), [`Error::WordCount`] (not
    /// positive), [`Error::Truncated`], [`Error::TrailingBytes`]; all found before the words
    /// are allocated.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let Some((&[ordinal, k], rest)) = bytes.split_first_chunk::<2>() else {
            return Err(Error::Truncated {
                needed: HEAD,
                got: bytes.len() as u64,
            });
        };
        let (strategy, k) = Self::check_head(ordinal, k)?;
        Ok(GuavaBloomFilter {
            strategy,
            k,
            bits: Words::decode(rest, HEAD)?,
            funnel: PhantomData,
        })
    }

    /// Reads one filter from a stream, as Guava's `readFrom` (no further than its words).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) (but for trailing bytes, which are left in the
    /// stream), and the reader's errors ([`Error::Io`]). Memory grows with the bytes that
    /// arrive, not with the count the header declares.
    pub fn read_from(mut input: impl Read) -> Result<Self, Error> {
        let mut head = [0u8; 2];
        words::read_exact(&mut input, &mut head, 0)?;
        let (strategy, k) = Self::check_head(head[0], head[1])?;
        Ok(GuavaBloomFilter {
            strategy,
            k,
            bits: Words::read(&mut input, HEAD)?,
            funnel: PhantomData,
        })
    }

    fn check_head(ordinal: u8, k: u8) -> Result<(Strategy, u8), Error> {
        let strategy = Strategy::from_ordinal(ordinal).ok_or(Error::UnknownStrategy(ordinal))?;
        if k == 0 {
            return Err(Error::HashCount(0));
        }
        Ok((strategy, k))
    }
}

/// Calls `visit` with each of a key's `k` positions in Guava's order until it returns
/// false; whether it never did.
#[inline(always)]
fn positions(
    strategy: Strategy,
    k: u8,
    bit_size: u64,
    hash: Hash128,
    mut visit: impl FnMut(u64) -> bool,
) -> bool {
    match strategy {
        Strategy::Murmur128Mitz32 => {
            let a = hash.h1 as i32;
            let b = (hash.h1 >> 32) as i32;
            for i in 1..=i32::from(k) {
                let mut c = a.wrapping_add(i.wrapping_mul(b));
                if c < 0 {
                    c = !c;
                }
                if !visit(c as u64 % bit_size) {
                    return false;
                }
            }
        }
        Strategy::Murmur128Mitz64 => {
            let mut c = hash.h1;
            for _ in 0..k {
                if !visit((c & i64::MAX as u64) % bit_size) {
                    return false;
                }
                c = c.wrapping_add(hash.h2);
            }
        }
    }
    true
}

/// The facts a file's first bytes give, without reading the words: for a tool that must
/// say what a file is before choosing a funnel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuavaHeader {
    /// The strategy.
    pub strategy: Strategy,
    /// `k`.
    pub num_hash_functions: u32,
    /// The number of words (`m / 64`).
    pub words: u64,
}

impl GuavaHeader {
    /// The header at the start of `bytes` (a known strategy, `k` of at least 1, a positive
    /// word count) and the filter's length in bytes; `None` otherwise.
    pub fn peek(bytes: &[u8]) -> Option<(GuavaHeader, u64)> {
        let (&[ordinal, k], rest) = bytes.split_first_chunk::<2>()?;
        let (count, _) = rest.split_first_chunk::<4>()?;
        let strategy = Strategy::from_ordinal(ordinal)?;
        let words = u64::try_from(i32::from_be_bytes(*count)).ok()?;
        let header = GuavaHeader {
            strategy,
            num_hash_functions: u32::from(k),
            words,
        };
        (k > 0 && words > 0).then_some((header, HEAD + 4 + 8 * words))
    }
}
