//! XXH3-64 with a seed for inputs of up to 128 bytes, written out so that it inlines: the
//! lengths bloomkit's keys have (integers, strings, short byte strings) become straight-line
//! code instead of a call into a routine that also handles megabytes and derives a secret.
//!
//! Every function equals `twox_hash::XxHash3_64::oneshot_with_seed(seed, bytes)` for the
//! lengths it takes; the tests check each length against it on many inputs and seeds.
//! Longer inputs go to twox-hash.

use twox_hash::XxHash3_64;

/// The first 128 bytes of XXH3's default secret (`XXH3_kSecret`), as little-endian words.
const SECRET: [u64; 16] = [
    0xbe4b_a423_396c_feb8,
    0x1cad_21f7_2c81_017c,
    0xdb97_9083_e96d_d4de,
    0x1f67_b3b7_a4a4_4072,
    0x78e5_c0cc_4ee6_79cb,
    0x2172_ffcc_7dd0_5a82,
    0x8e24_43f7_7446_08b8,
    0x4c26_3a81_e690_35e0,
    0xcb00_c391_bb52_283c,
    0xa32e_531b_8b65_d088,
    0x4ef9_0da2_9748_6471,
    0xd8ac_dea9_46ef_1938,
    0x3f34_9ce3_3f76_faa8,
    0x1d4f_0bc7_c7bb_dcf9,
    0x3159_b4cd_4be0_518a,
    0x6473_78d9_c97e_9fc8,
];

const PRIME64_1: u64 = 0x9e37_79b1_85eb_ca87;
const PRIME64_2: u64 = 0xc2b2_ae3d_27d4_eb4f;
const PRIME64_3: u64 = 0x1656_67b1_9e37_79f9;
const PRIME_MX1: u64 = 0x1656_6791_9e37_79f9;
const PRIME_MX2: u64 = 0x9fb2_1c65_1e98_df25;

/// XXH3-64 of `bytes` with `seed`, the short lengths inline.
#[inline(always)]
pub(crate) fn xxh3(seed: u64, bytes: &[u8]) -> u64 {
    match bytes.len() {
        0 => xxh64_avalanche(seed ^ SECRET[7] ^ SECRET[8]),
        1..=3 => xxh3_1to3(seed, bytes),
        4..=8 => xxh3_4to8(seed, bytes),
        9..=16 => xxh3_9to16(seed, bytes),
        17..=128 => xxh3_17to128(seed, bytes),
        _ => long(seed, bytes),
    }
}

/// [`xxh3`] out of line: a run of bytes (a string key), so that the `Hash` impl that
/// writes it stays small enough to inline and the hasher's state stays in registers.
#[inline(always)]
pub(crate) fn xxh3_run(seed: u64, bytes: &[u8]) -> u64 {
    if (9..=16).contains(&bytes.len()) {
        xxh3_9to16(seed, bytes)
    } else {
        xxh3_other_run(seed, bytes)
    }
}

#[inline(never)]
fn xxh3_other_run(seed: u64, bytes: &[u8]) -> u64 {
    xxh3(seed, bytes)
}

/// Inputs past 128 bytes: twox-hash, out of line.
#[inline(never)]
fn long(seed: u64, bytes: &[u8]) -> u64 {
    XxHash3_64::oneshot_with_seed(seed, bytes)
}

#[inline(always)]
fn read64(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

#[inline(always)]
fn read32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

/// The low and high halves of the 128-bit product, xored.
#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

#[inline(always)]
fn xxh64_avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(PRIME64_2);
    h ^= h >> 29;
    h = h.wrapping_mul(PRIME64_3);
    h ^ (h >> 32)
}

#[inline(always)]
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(PRIME_MX1);
    h ^ (h >> 32)
}

/// XXH3-64 of 1 to 3 bytes.
#[inline(always)]
pub(crate) fn xxh3_1to3(seed: u64, bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!((1..=3).contains(&len));
    from_1to3(seed, len, bytes[0], bytes[len >> 1], bytes[len - 1])
}

/// XXH3-64 of 1 to 3 bytes from the ones it reads: the first, the middle and the last.
#[inline(always)]
fn from_1to3(seed: u64, len: usize, first: u8, middle: u8, last: u8) -> u64 {
    let combined = (u32::from(first) << 16)
        | (u32::from(middle) << 24)
        | u32::from(last)
        | ((len as u32) << 8);
    let bitflip = u64::from(SECRET[0] as u32 ^ (SECRET[0] >> 32) as u32);
    xxh64_avalanche(u64::from(combined) ^ bitflip.wrapping_add(seed))
}

/// XXH3-64 of 4 to 8 bytes.
#[inline(always)]
pub(crate) fn xxh3_4to8(seed: u64, bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!((4..=8).contains(&len));
    from_4to8(seed, len, read32(bytes, 0), read32(bytes, len - 4))
}

/// XXH3-64 of 4 to 8 bytes from the first four and the last four.
#[inline(always)]
fn from_4to8(seed: u64, len: usize, first: u32, last: u32) -> u64 {
    let seed = seed ^ (u64::from((seed as u32).swap_bytes()) << 32);
    let combined = u64::from(last) | (u64::from(first) << 32);
    let mut v = (SECRET[1] ^ SECRET[2]).wrapping_sub(seed) ^ combined;
    v ^= v.rotate_left(49) ^ v.rotate_left(24);
    v = v.wrapping_mul(PRIME_MX2);
    v ^= (v >> 35).wrapping_add(len as u64);
    v = v.wrapping_mul(PRIME_MX2);
    v ^ (v >> 28)
}

/// XXH3-64 of 9 to 16 bytes.
#[inline(always)]
fn xxh3_9to16(seed: u64, bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!((9..=16).contains(&len));
    from_9to16(seed, len, read64(bytes, 0), read64(bytes, len - 8))
}

/// XXH3-64 of 9 to 16 bytes from the first eight and the last eight.
#[inline(always)]
fn from_9to16(seed: u64, len: usize, first: u64, last: u64) -> u64 {
    let low = first ^ (SECRET[3] ^ SECRET[4]).wrapping_add(seed);
    let high = last ^ (SECRET[5] ^ SECRET[6]).wrapping_sub(seed);
    let acc = (len as u64)
        .wrapping_add(low.swap_bytes())
        .wrapping_add(high)
        .wrapping_add(fold_mul(low, high));
    avalanche(acc)
}

/// The at most 16 `bytes` as one little-endian number (byte i in bits `8i..8i+8`), read
/// without a copy to memory: the form [`xxh3_word`] hashes.
#[inline(always)]
pub(crate) fn load_word(bytes: &[u8]) -> u128 {
    let len = bytes.len();
    debug_assert!(len <= WORD);
    // Two reads that overlap in the middle; the overlapping bytes agree, so `|` joins them.
    // Up to 8 bytes in 64-bit arithmetic: a `u128` shift by a variable costs a few
    // instructions more.
    match len {
        0 => 0,
        1..=3 => u128::from(
            u64::from(bytes[0])
                | u64::from(bytes[len >> 1]) << (8 * (len >> 1))
                | u64::from(bytes[len - 1]) << (8 * (len - 1)),
        ),
        4..=8 => u128::from(
            u64::from(read32(bytes, 0)) | u64::from(read32(bytes, len - 4)) << (8 * (len - 4)),
        ),
        _ => u128::from(read64(bytes, 0)) | u128::from(read64(bytes, len - 8)) << (8 * (len - 8)),
    }
}

/// The most bytes [`load_word`] and [`xxh3_word`] take.
pub(crate) const WORD: usize = 16;

/// XXH3-64 of the first `len` (at most 16) bytes of `word` in little-endian order: what
/// [`xxh3`] gives for them, computed from the register with shifts instead of reads.
#[inline(always)]
pub(crate) fn xxh3_word(seed: u64, word: u128, len: usize) -> u64 {
    debug_assert!(len <= WORD);
    // Up to 8 bytes, the low half alone (as in `load_word`).
    let low = word as u64;
    let byte = |at: usize| (low >> (8 * at)) as u8;
    match len {
        0 => xxh3(seed, &[]),
        // The one byte a string's `Hash` writes after its contents (0xff), alone after a
        // long write was chained: no shifts by a variable.
        1 => from_1to3(seed, 1, low as u8, low as u8, low as u8),
        2..=3 => from_1to3(seed, len, byte(0), byte(len >> 1), byte(len - 1)),
        4..=8 => from_4to8(seed, len, low as u32, (low >> (8 * (len - 4))) as u32),
        _ => from_9to16(seed, len, word as u64, (word >> (8 * (len - 8))) as u64),
    }
}

/// One 16-byte lane of the 17-to-128-byte path: input at `at`, secret words `s` and `s + 1`.
#[inline(always)]
fn mix16(bytes: &[u8], at: usize, s: usize, seed: u64) -> u64 {
    fold_mul(
        read64(bytes, at) ^ SECRET[s].wrapping_add(seed),
        read64(bytes, at + 8) ^ SECRET[s + 1].wrapping_sub(seed),
    )
}

/// XXH3-64 of 17 to 128 bytes.
#[inline(always)]
fn xxh3_17to128(seed: u64, bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!((17..=128).contains(&len));
    let mut acc = (len as u64).wrapping_mul(PRIME64_1);
    if len > 32 {
        if len > 64 {
            if len > 96 {
                acc = acc.wrapping_add(mix16(bytes, 48, 12, seed));
                acc = acc.wrapping_add(mix16(bytes, len - 64, 14, seed));
            }
            acc = acc.wrapping_add(mix16(bytes, 32, 8, seed));
            acc = acc.wrapping_add(mix16(bytes, len - 48, 10, seed));
        }
        acc = acc.wrapping_add(mix16(bytes, 16, 4, seed));
        acc = acc.wrapping_add(mix16(bytes, len - 32, 6, seed));
    }
    acc = acc.wrapping_add(mix16(bytes, 0, 0, seed));
    acc = acc.wrapping_add(mix16(bytes, len - 16, 2, seed));
    avalanche(acc)
}

/// XXH64 of `bytes` with `seed`, inputs under 32 bytes inline (the values a Parquet filter
/// hashes: 4- and 8-byte numbers, short strings); longer ones through twox-hash.
#[inline(always)]
pub fn xxh64(seed: u64, bytes: &[u8]) -> u64 {
    const P1: u64 = PRIME64_1;
    const P2: u64 = PRIME64_2;
    const P3: u64 = PRIME64_3;
    const P4: u64 = 0x85eb_ca77_c2b2_ae63;
    const P5: u64 = 0x27d4_eb2f_1656_67c5;
    if bytes.len() >= 32 {
        return xxh64_long(seed, bytes);
    }
    let mut h = seed.wrapping_add(P5).wrapping_add(bytes.len() as u64);
    let mut rest = bytes;
    while rest.len() >= 8 {
        let k = read64(rest, 0)
            .wrapping_mul(P2)
            .rotate_left(31)
            .wrapping_mul(P1);
        h = (h ^ k).rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        h ^= u64::from(read32(rest, 0)).wrapping_mul(P1);
        h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        rest = &rest[4..];
    }
    for &byte in rest {
        h ^= u64::from(byte).wrapping_mul(P5);
        h = h.rotate_left(11).wrapping_mul(P1);
    }
    xxh64_avalanche(h)
}

#[inline(never)]
fn xxh64_long(seed: u64, bytes: &[u8]) -> u64 {
    twox_hash::XxHash64::oneshot(seed, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random bytes from a splitmix64 stream.
    fn random_bytes(state: &mut u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *state = state.wrapping_add(1);
                crate::hash::splitmix(*state) as u8
            })
            .collect()
    }

    /// Seeds for the tests, including seeds whose halves are 0 or all ones.
    const SEEDS: [u64; 7] = [
        0,
        1,
        u64::MAX,
        0xffff_ffff,
        0xffff_ffff_0000_0000,
        0x0123_4567_89ab_cdef,
        0xdead_beef_5eed_f00d,
    ];

    /// Every length 0..=300 (the inline paths, and the hand-over to twox-hash past 128)
    /// against twox-hash, on random bytes and seeds.
    #[test]
    fn every_length_matches_twox_hash() {
        let mut state = 7;
        for seed in SEEDS {
            for _ in 0..if cfg!(miri) { 1 } else { 20 } {
                let bytes = random_bytes(&mut state, 300);
                for len in 0..=300 {
                    let input = &bytes[..len];
                    assert_eq!(
                        xxh3(seed, input),
                        XxHash3_64::oneshot_with_seed(seed, input),
                        "seed {seed:#x}, length {len}"
                    );
                }
            }
        }
    }

    /// The register path: every length 0..=16, the bytes read into a word and hashed from
    /// it, against the bytes hashed where they lie and against twox-hash.
    #[test]
    fn words_hash_as_their_bytes() {
        let mut state = 5;
        for seed in SEEDS {
            for _ in 0..if cfg!(miri) { 1 } else { 50 } {
                let bytes = random_bytes(&mut state, WORD);
                for len in 0..=WORD {
                    let input = &bytes[..len];
                    let mut padded = [0; WORD];
                    padded[..len].copy_from_slice(input);
                    assert_eq!(
                        load_word(input),
                        u128::from_le_bytes(padded),
                        "length {len}"
                    );
                    let word = xxh3_word(seed, load_word(input), len);
                    assert_eq!(word, xxh3(seed, input), "seed {seed:#x}, length {len}");
                    assert_eq!(
                        word,
                        XxHash3_64::oneshot_with_seed(seed, input),
                        "seed {seed:#x}, length {len}"
                    );
                }
            }
        }
    }

    /// XXH64, every length 0..=100 (the inline path and the hand-over past 31).
    #[test]
    fn xxh64_matches_twox_hash() {
        let mut state = 11;
        for seed in SEEDS {
            for _ in 0..if cfg!(miri) { 1 } else { 20 } {
                let bytes = random_bytes(&mut state, 100);
                for len in 0..=100 {
                    assert_eq!(
                        xxh64(seed, &bytes[..len]),
                        twox_hash::XxHash64::oneshot(seed, &bytes[..len]),
                        "seed {seed:#x}, length {len}"
                    );
                }
            }
        }
    }
}
