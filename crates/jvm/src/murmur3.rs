//! MurmurHash3 (Austin Appleby's public-domain hash) in the two forms the JVM's filters use:
//!
//! - [`x64_128`] and the streaming [`Murmur3x64`]: the 128-bit x64 variant, which Guava's
//!   `Hashing.murmur3_128()` computes (seed 0). Guava's `HashCode` of it is the first half
//!   then the second, each little-endian: `asLong()` is [`Hash128::h1`].
//! - [`spark_hash_bytes`] and [`spark_hash_long`]: the 32-bit x86 variant as Spark's
//!   `org.apache.spark.util.sketch.Murmur3_x86_32` computes it. Its `hashUnsafeBytes`, the one
//!   Spark's Bloom filter calls, is **not** standard MurmurHash3 for lengths that are not a
//!   multiple of four: each trailing byte, sign-extended, goes through a whole mixing round
//!   of its own (standard MurmurHash3 packs the tail into one word). The standard form is
//!   [`x86_32`]; the two agree when the length is a multiple of four.
//!
//! Every function is pinned by golden values computed by the JVM code itself (the tests
//! below, and the interop tests against Guava and Spark's files).

const C1_64: u64 = 0x87c3_7b91_1142_53d5;
const C2_64: u64 = 0x4cf5_ad43_2745_937f;

/// The 128 bits of MurmurHash3_x64_128: Guava's `HashCode` is `h1` then `h2`, each in
/// little-endian order; its `asLong()` is `h1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Hash128 {
    /// The first 64 bits (Guava's `asLong()`, its `MURMUR128_MITZ_64`'s `lowerEight`).
    pub h1: u64,
    /// The second 64 bits (`MURMUR128_MITZ_64`'s `upperEight`).
    pub h2: u64,
}

#[inline(always)]
fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1_64).rotate_left(31).wrapping_mul(C2_64)
}

#[inline(always)]
fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2_64).rotate_left(33).wrapping_mul(C1_64)
}

#[inline(always)]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// One 16-byte block into the state.
#[inline(always)]
fn block(h: &mut (u64, u64), block: &[u8; 16]) {
    let (k1, k2) = split_block(block);
    let (mut h1, mut h2) = *h;
    h1 ^= mix_k1(k1);
    h1 = h1
        .rotate_left(27)
        .wrapping_add(h2)
        .wrapping_mul(5)
        .wrapping_add(0x52dc_e729);
    h2 ^= mix_k2(k2);
    h2 = h2
        .rotate_left(31)
        .wrapping_add(h1)
        .wrapping_mul(5)
        .wrapping_add(0x3849_5ab5);
    *h = (h1, h2);
}

#[inline(always)]
fn split_block(block: &[u8; 16]) -> (u64, u64) {
    let (lo, hi) = block.split_at(8);
    // Infallible: both halves are eight bytes.
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    (word(lo), word(hi))
}

/// The last `tail.len()` (< 16) bytes and the length, into the final hash.
#[inline(always)]
fn finish(h: (u64, u64), tail: &[u8], len: u64) -> Hash128 {
    let (mut h1, mut h2) = h;
    if !tail.is_empty() {
        let mut padded = [0u8; 16];
        padded[..tail.len()].copy_from_slice(tail);
        let (k1, k2) = split_block(&padded);
        if tail.len() > 8 {
            h2 ^= mix_k2(k2);
        }
        h1 ^= mix_k1(k1);
    }
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    Hash128 { h1, h2 }
}

/// MurmurHash3_x64_128 of `bytes` with `seed`, as Guava's `Hashing.murmur3_128(seed)`
/// computes it: Guava's seed is an `int`, sign-extended to start both halves (the reference
/// C++ zero-extends; the two agree below 2^31). Guava's Bloom filters use seed 0.
///
/// # Examples
///
/// ```
/// use bloomkit_jvm::murmur3::x64_128;
///
/// // Guava: Hashing.murmur3_128().hashBytes("hello".getBytes(UTF_8)).asLong()
/// assert_eq!(x64_128(b"hello", 0).h1 as i64, -3758069500696749310);
/// ```
#[inline]
pub fn x64_128(bytes: &[u8], seed: i32) -> Hash128 {
    let mut h = (i64::from(seed) as u64, i64::from(seed) as u64);
    let mut blocks = bytes.chunks_exact(16);
    for b in blocks.by_ref() {
        // Infallible: `chunks_exact(16)`.
        block(&mut h, b.try_into().unwrap_or(&[0; 16]));
    }
    finish(h, blocks.remainder(), bytes.len() as u64)
}

/// MurmurHash3_x64_128 over bytes that arrive in pieces (Guava's streaming hasher): the
/// same hash as [`x64_128`] of the pieces joined.
#[derive(Debug, Clone)]
pub struct Murmur3x64 {
    h: (u64, u64),
    buf: [u8; 16],
    held: usize,
    len: u64,
}

impl Murmur3x64 {
    /// A hasher with `seed` (sign-extended, as [`x64_128`]).
    pub fn new(seed: i32) -> Murmur3x64 {
        Murmur3x64 {
            h: (i64::from(seed) as u64, i64::from(seed) as u64),
            buf: [0; 16],
            held: 0,
            len: 0,
        }
    }

    /// Appends `bytes`.
    #[inline]
    pub fn write(&mut self, mut bytes: &[u8]) {
        self.len = self.len.wrapping_add(bytes.len() as u64);
        if self.held > 0 {
            let take = (16 - self.held).min(bytes.len());
            self.buf[self.held..self.held + take].copy_from_slice(&bytes[..take]);
            self.held += take;
            bytes = &bytes[take..];
            if self.held < 16 {
                return;
            }
            let full = self.buf;
            block(&mut self.h, &full);
            self.held = 0;
        }
        let mut blocks = bytes.chunks_exact(16);
        for b in blocks.by_ref() {
            block(&mut self.h, b.try_into().unwrap_or(&[0; 16]));
        }
        let rest = blocks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
    }

    /// The hash of everything written.
    pub fn finish(&self) -> Hash128 {
        finish(self.h, &self.buf[..self.held], self.len)
    }
}

const C1_32: u32 = 0xcc9e_2d51;
const C2_32: u32 = 0x1b87_3593;

#[inline(always)]
fn mix_k1_32(k1: u32) -> u32 {
    k1.wrapping_mul(C1_32).rotate_left(15).wrapping_mul(C2_32)
}

#[inline(always)]
fn mix_h1_32(h1: u32, k1: u32) -> u32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

#[inline(always)]
fn fmix32(mut h: u32, len: u32) -> u32 {
    h ^= len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The four-byte little-endian words of `bytes` (a multiple of four long) into `h1`.
#[inline(always)]
fn words_32(mut h1: u32, words: &[u8]) -> u32 {
    for w in words.chunks_exact(4) {
        let k = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        h1 = mix_h1_32(h1, mix_k1_32(k));
    }
    h1
}

/// Standard MurmurHash3_x86_32 of `bytes` with `seed` (Spark's `hashUnsafeBytes2`, Guava's
/// `murmur3_32_fixed`).
pub fn x86_32(bytes: &[u8], seed: u32) -> u32 {
    let aligned = bytes.len() - bytes.len() % 4;
    let mut h1 = words_32(seed, &bytes[..aligned]);
    let tail = &bytes[aligned..];
    if !tail.is_empty() {
        let mut k1 = 0u32;
        for (i, &b) in tail.iter().enumerate() {
            k1 |= u32::from(b) << (8 * i);
        }
        h1 ^= mix_k1_32(k1);
    }
    // The length as Java's `int` (the hash's own convention: its low 32 bits).
    fmix32(h1, bytes.len() as u32)
}

/// Spark's `Murmur3_x86_32.hashUnsafeBytes(bytes, seed)`: the four-byte words as
/// MurmurHash3_x86_32, then each trailing byte, **sign-extended** as Java's `byte` is, through
/// a whole mixing round of its own. What Spark's Bloom filter hashes strings (as UTF-8) and
/// byte arrays with.
///
/// # Examples
///
/// ```
/// use bloomkit_jvm::murmur3::{spark_hash_bytes, x86_32};
///
/// // A multiple of four long: the standard hash.
/// assert_eq!(spark_hash_bytes(b"abcd", 0), x86_32(b"abcd", 0));
/// // Otherwise not.
/// assert_ne!(spark_hash_bytes(b"abc", 0), x86_32(b"abc", 0));
/// ```
#[inline]
pub fn spark_hash_bytes(bytes: &[u8], seed: u32) -> u32 {
    let aligned = bytes.len() - bytes.len() % 4;
    let mut h1 = words_32(seed, &bytes[..aligned]);
    for &b in &bytes[aligned..] {
        h1 = mix_h1_32(h1, mix_k1_32(i32::from(b as i8) as u32));
    }
    fmix32(h1, bytes.len() as u32)
}

/// Spark's `Murmur3_x86_32.hashLong(value, seed)`: the low then the high 32 bits, each one
/// mixing round, finished with length 8. What Spark's Bloom filter hashes integers with
/// (`Byte`, `Short`, `Integer` and `Long` all widen to `long` first).
#[inline]
pub fn spark_hash_long(value: i64, seed: u32) -> u32 {
    let low = value as u32;
    let high = (value as u64 >> 32) as u32;
    let h1 = mix_h1_32(seed, mix_k1_32(low));
    let h1 = mix_h1_32(h1, mix_k1_32(high));
    fmix32(h1, 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streaming hasher agrees with the one-shot hash however the bytes are cut.
    #[test]
    fn streaming_agrees_with_one_shot() {
        let data: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37)).collect();
        for len in 0..data.len() {
            let whole = x64_128(&data[..len], 7);
            for cut in [1, 3, 7, 16, 17] {
                let mut h = Murmur3x64::new(7);
                for piece in data[..len].chunks(cut) {
                    h.write(piece);
                }
                assert_eq!(h.finish(), whole, "len {len} cut {cut}");
            }
        }
    }

    /// Reference values of standard MurmurHash3 (the SMHasher verification values' inputs,
    /// computed by the reference C++ and by Guava).
    #[test]
    fn standard_values() {
        assert_eq!(x86_32(b"", 0), 0);
        assert_eq!(x86_32(b"", 1), 0x514e_28b7);
        assert_eq!(x86_32(b"", 0xffff_ffff), 0x81f1_6f39);
        assert_eq!(x86_32(&[0xff; 4], 0), 0x7629_3b50);
        assert_eq!(x86_32(b"\x21\x43\x65\x87", 0), 0xf55b_516b);
        assert_eq!(x86_32(b"\x21\x43\x65", 0), 0x7e4a_8634);
        assert_eq!(x86_32(b"\x21\x43", 0), 0xa0f7_b07a);
        assert_eq!(x86_32(b"\x21", 0), 0x7266_1cf4);
        assert_eq!(x64_128(b"", 0), Hash128 { h1: 0, h2: 0 });
    }
}
