//! Pinned outputs. If one of these fails, a dependency or a code change altered how keys
//! hash, where they land, or how filters are written: every stored filter would answer
//! differently. That needs a new hasher id or format version, not a new golden value.
//!
//! The hash values were computed independently with the reference C implementation of
//! XXH3 (Python's `xxhash.xxh3_64_intdigest(bytes, seed=...)`) from the bytes each key's
//! `Hash` impl writes; the probe positions with the closed form
//! `(a + i*b + (i^3 - i)/6) mod m` rather than the incremental code under test.

use std::hash::BuildHasher;

use bloomkit_classic::BloomFilter;
use bloomkit_core::hash::{Probes, Xxh3Builder};

#[test]
fn xxh3_hash_values_are_pinned() {
    let long = "x".repeat(300);
    for (seed, expected) in [
        (
            0,
            [
                0xc77b3abb6f87acd9u64,
                0xd5a6f8c838df27c8,
                0x5111c7e47d784413,
                0x3e7c905d6f736c83,
                0xd6bcec3c6b29d72e,
                0x7d218dadacd51137,
                0xb510d9231c56fca3,
                0x0b08b693efc7a031,
            ],
        ),
        (
            0xdeadbeef,
            [
                0xb8322d2662b2cce5,
                0xcd506fb8795767e2,
                0x38c19c5c64d3eba5,
                0x3a3f5081d010ea24,
                0x7300f98a5584b50b,
                0x22867171d828363e,
                0x6d7a2b70e0d052cd,
                0x468413b224976254,
            ],
        ),
    ] {
        let h = Xxh3Builder::with_seed(seed);
        let got = [
            h.hash_one(0u64),
            h.hash_one(42u64),
            h.hash_one(u64::MAX),
            h.hash_one("hello"),
            h.hash_one(""),
            h.hash_one(b"hello".as_slice()),
            h.hash_one((1u32, -1i16)),
            h.hash_one(long.as_str()),
        ];
        for (i, (g, e)) in got.iter().zip(expected).enumerate() {
            assert_eq!(*g, e, "seed {seed:#x}, case {i}: {g:#018x} != {e:#018x}");
        }
    }
}

#[test]
fn usize_hashes_as_u64_on_every_platform() {
    let h = Xxh3Builder::default();
    assert_eq!(h.hash_one(42usize), h.hash_one(42u64));
    assert_eq!(h.hash_one(-3isize), h.hash_one(-3i64));
}

#[test]
fn probe_positions_are_pinned() {
    let cases: [(u64, u64, u32, &[u64]); 5] = [
        (
            0xc77b3abb6f87acd9,
            9_592_958,
            7,
            &[7475063, 1978004, 6073904, 576848, 4672753, 8768662, 3271618],
        ),
        (
            0x3e7c905d6f736c83,
            1000,
            10,
            &[244, 209, 175, 143, 114, 89, 69, 55, 48, 49],
        ),
        (0, 64, 5, &[0, 0, 1, 4, 10]),
        (
            u64::MAX,
            1 << 40,
            4,
            &[1099511627775, 552801135359, 6090642944, 558891778307],
        ),
        (
            0x0123456789abcdef,
            7,
            20,
            &[0, 0, 1, 4, 3, 6, 0, 0, 0, 1, 4, 3, 6, 0, 0, 0, 1, 4, 3, 6],
        ),
    ];
    for (hash, m, k, expected) in cases {
        let got: Vec<u64> = Probes::new(hash, m, k).collect();
        assert_eq!(got, expected, "hash {hash:#x}, m {m}, k {k}");
    }
}

#[test]
fn probes_are_in_range_above_2_pow_32_bits() {
    let m = (1u64 << 40) + 12_345;
    let mut above = 0;
    for key in 0..10_000u64 {
        for p in Probes::new(Xxh3Builder::default().hash_one(key), m, 8) {
            assert!(p < m);
            if p >= 1 << 32 {
                above += 1; // not `u64::from(flag)`: rust-lang/rust#158206
            }
        }
    }
    // Positions spread over the whole range, not just the low 2^32 bits.
    assert!(above > 79_000, "{above} of 80,000 positions above 2^32");
}

/// A small filter with a known content, as stored in `tests/data/classic-v1.bin`.
fn golden_filter() -> BloomFilter<u64> {
    let mut f = BloomFilter::builder(100, 0.01).seed(7).build().unwrap();
    for i in 0..50u64 {
        f.insert(&i);
    }
    // A key of another type, through the hash entry point: the file predates typed keys
    // and holds the string "bloomkit" in a filter of integers.
    f.insert_hash(f.hasher().hash_one("bloomkit"));
    f
}

/// The first golden file, written by 0.1.0 (format version 1): still read, answering as
/// then. (Every variant's files, of every version, are pinned by `bloomkit`'s
/// `tests/golden.rs`.)
#[test]
fn version_1_file_still_loads() {
    let stored: &[u8] = include_bytes!("data/classic-v1.bin");
    assert_eq!(stored[4..6], 1u16.to_le_bytes());
    let f = BloomFilter::<u64>::from_bytes(stored).unwrap();
    let bloomkit = f.hasher().hash_one("bloomkit");
    assert!((0..50u64).all(|i| f.contains(&i)) && f.contains_hash(bloomkit));
    let g = golden_filter();
    assert_eq!(f, g);
    assert_eq!((g.num_bits(), g.num_hashes()), (967, 6));
}

#[test]
fn block_probe_positions_are_pinned() {
    use bloomkit_core::hash::BlockProbe;
    // Computed independently (Python) from the documented construction.
    let cases: [(u64, u64, u32, u64, &[u64]); 3] = [
        (
            0x0123456789abcdef,
            1000,
            7,
            4,
            &[50, 123, 155, 157, 187, 212, 243],
        ),
        (
            0xc77b3abb6f87acd9,
            19329,
            10,
            15061,
            &[18, 36, 193, 229, 313, 373, 438, 461, 463, 470],
        ),
        (
            0,
            1,
            16,
            0,
            &[0, 131, 178, 199, 230, 261, 303, 392, 431, 500],
        ),
    ];
    for (hash, blocks, k, block, positions) in cases {
        let probe = BlockProbe::new(hash, blocks, k);
        let got: Vec<u64> = (0..512u64)
            .filter(|&p| probe.mask[(p >> 6) as usize] & (1 << (p & 63)) != 0)
            .collect();
        assert_eq!(
            (probe.block, got.as_slice()),
            (block, positions),
            "hash {hash:#x}"
        );
    }
}
