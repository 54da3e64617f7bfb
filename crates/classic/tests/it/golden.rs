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
use bloomkit_core::hash::{ProbeScheme, Probes, WideProbes, Xxh3Builder};
use bloomkit_core::Xxh3Scheme;

/// Hasher id 1 (the buffered scheme): XXH3 of all the bytes a key writes.
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
        let h = Xxh3Builder::with_scheme(seed, Xxh3Scheme::Buffered);
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

/// Hasher id 2 (the chained scheme, the default), computed with the reference XXH3 from the
/// writes each key makes: a write of more than 16 bytes is hashed with the hash of what came
/// before (`xxh3(buffer, chain)`, skipped when the buffer is empty) as its seed, and
/// `finish` is `xxh3(rest, chain)`. Keys that write 16 bytes or less at a time, 128 in all,
/// hash as with id 1.
#[test]
fn chained_xxh3_hash_values_are_pinned() {
    let long = "x".repeat(300);
    let bytes: Vec<u8> = (0..40).collect();
    let many: Vec<(u64,)> = vec![(12,); 20];
    for (seed, expected) in [
        (
            0,
            [
                0xc77b3abb6f87acd9u64,
                0x1e113359f79455f6,
                0x979fea204e86facd,
                0xe928dbf81e5ff40c,
                0x3e7c905d6f736c83,
                0x90d833f30df16805,
            ],
        ),
        (
            0xdeadbeef,
            [
                0xb8322d2662b2cce5,
                0xfc95840f840454cc,
                0x86976635dfc6144b,
                0x638f85f0d175cdb3,
                0x3a3f5081d010ea24,
                0x5d05e8e6a3e41aaa,
            ],
        ),
    ] {
        let h = Xxh3Builder::with_scheme(seed, Xxh3Scheme::Chained);
        let got = [
            h.hash_one(0u64),
            // 300 bytes, then the 0xff that ends a str.
            h.hash_one(long.as_str()),
            // 24 bytes, then 0xff.
            h.hash_one("https://example.com/0042"),
            // The length (8 bytes, buffered), then 40 bytes.
            h.hash_one(bytes.as_slice()),
            h.hash_one("hello"),
            // 21 writes of 8 bytes: the buffer is hashed into the chain at 128 bytes.
            h.hash_one(many.as_slice()),
        ];
        for (i, (g, e)) in got.iter().zip(expected).enumerate() {
            assert_eq!(*g, e, "seed {seed:#x}, case {i}: {g:#018x} != {e:#018x}");
        }
        // Short keys hash as with id 1; long ones do not.
        let v1 = Xxh3Builder::with_scheme(seed, Xxh3Scheme::Buffered);
        assert_eq!(h.hash_one((1u32, -1i16)), v1.hash_one((1u32, -1i16)));
        assert_eq!(h.hash_one(u128::MAX), v1.hash_one(u128::MAX));
        assert_eq!(
            h.hash_one("sixteen bytes!!!"),
            v1.hash_one("sixteen bytes!!!")
        );
        assert_ne!(h.hash_one(long.as_str()), v1.hash_one(long.as_str()));
    }
}

#[test]
fn usize_hashes_as_u64_on_every_platform() {
    let h = Xxh3Builder::default();
    assert_eq!(h.hash_one(42usize), h.hash_one(42u64));
    assert_eq!(h.hash_one(-3isize), h.hash_one(-3i64));
}

/// The positions of both probe schemes, pinned over one list of inputs (hash, m, k): the
/// enhanced double hashing of format versions 1 and 2 (`Probes`), and `ProbeScheme::Wide`
/// (format version 3 on), computed independently in Python from the definition:
/// `d = ((h ^ (h >> 32)) * 0x9e3779b97f4a7c15 mod 2^64) | 1`, `c = 0xbf58476d1ce4e5b9`,
/// position `i` = `((h + i*d + (i^3 - i)/6 * c) mod 2^64) * m >> 64`.
#[test]
fn probe_positions_are_pinned() {
    type Case = (u64, u64, u32, Option<&'static [u64]>, &'static [u64]);
    let cases: [Case; 6] = [
        (
            0xc77b3abb6f87acd9,
            9_592_958,
            7,
            Some(&[7475063, 1978004, 6073904, 576848, 4672753, 8768662, 3271618]),
            &[7475063, 1978005, 3651114, 478644, 9223719, 8277635, 4810559],
        ),
        (
            0x3e7c905d6f736c83,
            1000,
            10,
            Some(&[244, 209, 175, 143, 114, 89, 69, 55, 48, 49]),
            &[244, 209, 922, 129, 579, 19, 195, 857, 751, 624],
        ),
        (0, 64, 5, Some(&[0, 0, 1, 4, 10]), &[0, 0, 47, 63, 30]),
        (
            u64::MAX,
            1 << 40,
            4,
            Some(&[1099511627775, 552801135359, 6090642944, 558891778307]),
            &[1099511627775, 552801135360, 827910472476, 547636213107],
        ),
        (
            0x0123456789abcdef,
            7,
            20,
            Some(&[0, 0, 1, 4, 3, 6, 0, 0, 0, 1, 4, 3, 6, 0, 0, 0, 1, 4, 3, 6]),
            &[0, 0, 6, 1, 5, 2, 4, 2, 2, 2, 0, 1, 4, 0, 0, 4, 2, 1, 4, 3],
        ),
        (
            1 << 63,
            1 << 63,
            3,
            None,
            &[
                4611686018427387904,
                6904756023609786368,
                6868378388515680989,
            ],
        ),
    ];
    for (hash, m, k, enhanced, wide) in cases {
        let at = format!("hash {hash:#x}, m {m}, k {k}");
        let old: Vec<u64> = Probes::new(hash, m, k).collect();
        if let Some(enhanced) = enhanced {
            assert_eq!(old, enhanced, "{at}");
        }
        let via_scheme: Vec<u64> = ProbeScheme::Enhanced.positions(hash, m, k).collect();
        assert_eq!(via_scheme, old, "{at}");
        let got: Vec<u64> = WideProbes::new(hash, m, k).collect();
        assert_eq!(got, wide, "{at}");
        let via_scheme: Vec<u64> = ProbeScheme::Wide.positions(hash, m, k).collect();
        assert_eq!(via_scheme, wide, "{at}");
    }
}

#[test]
fn probes_are_in_range_above_2_pow_32_bits() {
    let m = (1u64 << 40) + 12_345;
    for scheme in [ProbeScheme::Enhanced, ProbeScheme::Wide] {
        let mut above = 0;
        for key in 0..10_000u64 {
            for p in scheme.positions(Xxh3Builder::default().hash_one(key), m, 8) {
                assert!(p < m);
                if p >= 1 << 32 {
                    above += 1; // not `u64::from(flag)`: rust-lang/rust#158206
                }
            }
        }
        // Positions spread over the whole range, not just the low 2^32 bits.
        assert!(
            above > 79_000,
            "{scheme}: {above} of 80,000 positions above 2^32"
        );
    }
}

/// A small filter with a known content, as stored in `tests/data/classic-v1.bin`.
fn golden_filter() -> BloomFilter<u64> {
    let mut f = BloomFilter::builder(100, 0.01)
        .hasher(Xxh3Builder::with_scheme(7, Xxh3Scheme::Buffered))
        .probe_scheme(ProbeScheme::Enhanced)
        .build()
        .unwrap();
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
    let stored: &[u8] = include_bytes!("../data/classic-v1.bin");
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

/// A filter hashing with id 1 keeps hashing with id 1 after a trip through its bytes (and
/// through serde), so long string keys stay found; a filter of each scheme will not be
/// combined with one of the other.
#[test]
fn a_filter_keeps_its_xxh3_scheme_through_serialization() {
    use bloomkit_core::{Error, Parameter, Union};
    let keys: Vec<String> = (0..500)
        .map(|i| format!("https://example.com/a/long/path/{i}"))
        .collect();
    for scheme in [
        Xxh3Scheme::Buffered,
        Xxh3Scheme::Chained,
        Xxh3Scheme::OneShot,
    ] {
        let mut f = BloomFilter::<str>::builder(500, 0.01)
            .hasher(Xxh3Builder::with_scheme(3, scheme))
            .build()
            .unwrap();
        for k in &keys {
            f.insert(k);
        }
        let read = BloomFilter::<str>::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(read.hasher().scheme(), scheme);
        let config = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(&f, config).unwrap();
        let (via_serde, _): (BloomFilter<str>, usize) =
            bincode::serde::decode_from_slice(&bytes, config).unwrap();
        assert_eq!(via_serde.hasher().scheme(), scheme);
        for k in &keys {
            assert!(
                read.contains(k.as_str()) && via_serde.contains(k.as_str()),
                "{k}"
            );
        }
    }
    let a = BloomFilter::<str>::builder(500, 0.01)
        .hasher(Xxh3Builder::with_scheme(3, Xxh3Scheme::Buffered))
        .build()
        .unwrap();
    let b = BloomFilter::<str>::builder(500, 0.01)
        .seed(3)
        .build()
        .unwrap();
    assert!(matches!(
        a.union(&b),
        Err(Error::Incompatible {
            what: Parameter::Hashers,
            left: 1,
            right: 4
        })
    ));
}

/// Hasher id 3, keyed: SipHash-1-3 under the key `00 01 .. 0f` of the bytes each key writes
/// (integers little-endian, a `str` followed by 0xff). Computed independently with a
/// Python SipHash (checked against the SipHash-2-4 reference vector for that key).
#[test]
fn keyed_hash_values_are_pinned() {
    use bloomkit_core::hash::{HashKey, KeyedHasher};
    use bloomkit_core::PortableHasher;
    let mut key = [0u8; 16];
    for (i, b) in key.iter_mut().enumerate() {
        *b = i as u8;
    }
    let hasher = KeyedHasher::new(HashKey::new(key));
    assert_eq!(hasher.hash_one(42u64), 0x2d9b012a807294cb);
    assert_eq!(hasher.hash_one(42usize), 0x2d9b012a807294cb);
    assert_eq!(hasher.hash_one("alice"), 0x4f29b71d2ea7086b);
    assert_eq!(
        hasher.hash_one("x".repeat(300).as_str()),
        0xaa84114010f699bb
    );
    // What the bytes record in place of a seed: a check value of the key, not the key.
    assert_eq!(hasher.spec().id, 3);
    assert_eq!(hasher.seed(), 0x342c5a0e7b23e2ae);
}

/// A keyed filter's bytes hold no key material and are refused without the key or with
/// another; with it, every variant reads back and answers as before. serde (which cannot be
/// given a key) refuses them with the same typed error.
#[test]
fn keyed_filters_need_their_key_to_be_read() {
    use bloomkit_core::hash::{HashKey, KeyedHasher};
    use bloomkit_core::{Codec, DecodeError, Error};
    let key = HashKey::random();
    let raw = key.to_bytes();
    let mut f = BloomFilter::<u64>::builder(1_000, 0.01)
        .hasher(KeyedHasher::new(key))
        .build()
        .unwrap();
    f.extend(0..1_000u64);
    let bytes = f.to_bytes();
    assert!(
        !bytes.windows(8).any(|w| w == &raw[..8] || w == &raw[8..]),
        "key material in the bytes"
    );
    let g = BloomFilter::<u64, KeyedHasher>::from_bytes_with_key(&bytes, &key).unwrap();
    assert_eq!(g, f);
    assert!((0..1_000u64).all(|k| g.contains(&k)));
    let h = BloomFilter::<u64, KeyedHasher>::read_from_with_key(bytes.as_slice(), &key).unwrap();
    assert_eq!(h, f);
    assert_eq!(
        BloomFilter::<u64, KeyedHasher>::from_bytes(&bytes).unwrap_err(),
        Error::Decode(DecodeError::KeyRequired)
    );
    assert_eq!(
        BloomFilter::<u64, KeyedHasher>::from_bytes_with_key(&bytes, &HashKey::random())
            .unwrap_err(),
        Error::Decode(DecodeError::WrongKey)
    );
    // Read as a filter of the default hasher: another hasher's bytes.
    assert!(matches!(
        BloomFilter::<u64>::from_bytes(&bytes),
        Err(Error::Decode(DecodeError::HasherMismatch {
            expected: 4,
            found: 3
        }))
    ));
    let config = bincode::config::standard();
    let encoded = bincode::serde::encode_to_vec(&f, config).unwrap();
    let err =
        bincode::serde::decode_from_slice::<BloomFilter<u64, KeyedHasher>, _>(&encoded, config)
            .unwrap_err()
            .to_string();
    assert!(err.contains("keyed hasher"), "{err}");

    // Two keys, the same keys inserted: different bits (the positions depend on the key).
    let mut other = BloomFilter::<u64>::builder(1_000, 0.01)
        .hasher(KeyedHasher::new(HashKey::random()))
        .build()
        .unwrap();
    other.extend(0..1_000u64);
    assert_ne!(other.bits().words(), f.bits().words());
}
