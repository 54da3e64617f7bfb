//! The hashing layer's unit tests: golden values, the schemes, probes and block layouts.

use core::hash::Hasher;

use super::*;
use twox_hash::XxHash3_64;

/// Both block tests agree with the key's mask (a key is present when every bit of its
/// `BlockProbe` mask is set) for every k bloomkit supports, on blocks from nearly
/// empty to nearly full. Regression: with k = 1, `block_contains` tested no bit and
/// answered `true` for every key.
#[test]
fn block_tests_agree_with_the_mask_for_every_k() {
    let mut state = 0x5eed_u64;
    let mut next = || {
        state = splitmix(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
        state
    };
    for k in 1..=crate::sizing::MAX_HASHES {
        let (mut present, mut absent) = (0, 0);
        for round in 0..2_000u64 {
            // Density from 1/64 to about 7/8 of the bits set.
            let mut block = [0u64; 8];
            for w in &mut block {
                for _ in 0..(round % 3 + 1) {
                    *w |= next() & next() & next();
                }
                if round % 7 == 0 {
                    *w |= next() | next();
                }
                if round % 11 == 0 {
                    *w |= !(next() & next() & next() & next());
                }
            }
            let hash = next();
            let mask = BlockProbe::new(hash, 1, k).mask;
            let expected = mask.iter().zip(&block).all(|(m, b)| m & b == *m);
            assert_eq!(block_contains(&block, hash, k), expected, "k = {k}");
            assert_eq!(block_contains_all(&block, hash, k), expected, "k = {k}");
            // A key whose bits are all set is always found.
            let mut with_key = block;
            for (w, m) in with_key.iter_mut().zip(mask) {
                *w |= m;
            }
            assert!(block_contains(&with_key, hash, k), "k = {k}");
            assert!(block_contains_all(&with_key, hash, k), "k = {k}");
            if expected {
                present += 1;
            } else {
                absent += 1;
            }
        }
        // Both answers occurred, so the comparison tested something.
        assert!(present > 0 && absent > 0, "k = {k}: {present} / {absent}");
    }
}

/// Sizes no filter can have are refused in release builds too, by `try_new` as errors
/// and by `new` as a panic (it once computed positions outside `[0, m)` past 2^63).
#[test]
fn probe_sizes_are_checked_in_release() {
    assert!(matches!(
        Probes::try_new(1, 0, 3),
        Err(crate::Error::ZeroBits)
    ));
    assert!(matches!(
        Probes::try_new(1, (1 << 63) + 1, 3),
        Err(crate::Error::TooLarge { .. })
    ));
    let edge: Vec<u64> = Probes::try_new(u64::MAX, 1 << 63, 20).unwrap().collect();
    assert!(edge.iter().all(|&p| p < 1 << 63) && edge.len() == 20);
    for m in [0, (1 << 63) + 1, u64::MAX] {
        assert!(
            std::panic::catch_unwind(|| Probes::new(7, m, 3)).is_err(),
            "m = {m}"
        );
        assert!(
            std::panic::catch_unwind(|| WideProbes::new(7, m, 3)).is_err(),
            "m = {m}"
        );
    }
    let edge: Vec<u64> = WideProbes::new(u64::MAX, 1 << 63, 20).collect();
    assert!(edge.iter().all(|&p| p < 1 << 63) && edge.len() == 20);
    assert!(std::panic::catch_unwind(|| BlockProbe::new(7, 0, 3)).is_err());
}

/// `hash_one` (the register hasher, and the full one again when a key buffers more than
/// 16 bytes) gives what the full hasher gives, for keys of many shapes around the limits:
/// strings and slices of 0 to 200 bytes, alone and in tuples, and integer tuples of 8 to
/// 40 bytes, in both schemes.
#[test]
fn hash_one_agrees_with_the_full_hasher() {
    // The hasher `hash_one` stands in for, by hand.
    #[allow(clippy::manual_hash_one)]
    fn full<T: Hash>(b: &Xxh3Builder, x: T) -> u64 {
        let mut h = b.build_hasher();
        x.hash(&mut h);
        h.finish()
    }
    let text: String = (0..200u8).map(|i| char::from(b'a' + i % 26)).collect();
    for seed in [0, 7, u64::MAX] {
        for scheme in [
            Xxh3Scheme::Buffered,
            Xxh3Scheme::Chained,
            Xxh3Scheme::OneShot,
        ] {
            let b = Xxh3Builder::with_scheme(seed, scheme);
            macro_rules! check {
                ($key:expr) => {{
                    let key = $key;
                    assert_eq!(b.hash_one(&key), full(&b, &key), "{key:?}, {scheme:?}");
                }};
            }
            // Under miri, the lengths around the limits only (16, 17: the chain; 32).
            let longest = if cfg!(miri) { 40 } else { text.len() };
            for len in 0..=longest {
                let s = &text[..len];
                check!(s);
                check!(s.as_bytes());
                check!((len as u8, s));
                check!((s, len as u64));
                check!((len as u64, len as u32, s));
                check!((s, s));
                check!(vec![s; 3]);
                // Buffered bytes, a long write that chains them, then more buffered.
                let x = splitmix(len as u64);
                check!((x, s, x));
                // Past 16 buffered bytes (the full hasher's case), then a long write.
                check!((x, x, x, s));
            }
            for x in (0..if cfg!(miri) { 10 } else { 200 }).map(splitmix) {
                check!(x);
                check!(u128::from(x));
                check!((x, x));
                check!((x, x, x));
                check!((x as u8, x as u16, x as u32, x));
                check!([x; 5]);
                check!(());
            }
        }
    }
}

/// Through the `Hash` trait, integer keys of every width hash to XXH3 of their
/// little-endian bytes, whichever path `finish` takes.
#[test]
fn integer_keys_hash_to_xxh3_of_their_bytes() {
    let b = Xxh3Builder::with_seed(99);
    let xxh = |bytes: &[u8]| XxHash3_64::oneshot_with_seed(99, bytes);
    for x in [0u64, 1, 42, u64::MAX, 0x8000_0000_0000_0000] {
        assert_eq!(b.hash_one(x), xxh(&x.to_le_bytes()));
        assert_eq!(b.hash_one(x as u32), xxh(&(x as u32).to_le_bytes()));
        assert_eq!(b.hash_one(x as u16), xxh(&(x as u16).to_le_bytes()));
        assert_eq!(b.hash_one(x as u8), xxh(&[x as u8]));
        assert_eq!(b.hash_one(x as i64), xxh(&x.to_le_bytes()));
        assert_eq!(b.hash_one(x as usize), xxh(&x.to_le_bytes()));
        assert_eq!(b.hash_one(u128::from(x)), xxh(&u128::from(x).to_le_bytes()));
        let pair = [(x as u32).to_le_bytes(), 7u32.to_le_bytes()].concat();
        assert_eq!(b.hash_one((x as u32, 7u32)), xxh(&pair));
    }
}

/// In the one-shot scheme, every byte-string key type hashes to XXH3-64 of its bytes
/// alone (checked against twox-hash, an independent XXH3), at every length from 0 to 300
/// (all of XXH3's length paths); integer keys hash as in the chained scheme.
#[test]
fn one_shot_byte_keys_hash_to_xxh3_of_their_bytes() {
    let bytes: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
    let text: String = (0..300u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    for seed in [0, 7, u64::MAX] {
        let b = Xxh3Builder::with_scheme(seed, Xxh3Scheme::OneShot);
        let xxh = |bytes: &[u8]| XxHash3_64::oneshot_with_seed(seed, bytes);
        let longest = if cfg!(miri) { 40 } else { 300 };
        for len in 0..=longest {
            let (s, v) = (&text[..len], &bytes[..len]);
            assert_eq!(b.hash_one(s), xxh(s.as_bytes()), "str of {len}");
            assert_eq!(
                b.hash_one(s.to_string()),
                xxh(s.as_bytes()),
                "String of {len}"
            );
            assert_eq!(b.hash_one(v), xxh(v), "[u8] of {len}");
            assert_eq!(b.hash_one(v.to_vec()), xxh(v), "Vec<u8> of {len}");
        }
        assert_eq!(b.hash_one([1u8, 2, 3]), xxh(&[1, 2, 3]));
        let chained = Xxh3Builder::with_scheme(seed, Xxh3Scheme::Chained);
        for x in (0..200).map(splitmix) {
            assert_eq!(b.hash_one(x), chained.hash_one(x));
            assert_eq!(b.hash_one((x, x as u32)), chained.hash_one((x, x as u32)));
            assert_eq!(b.hash_one(u128::from(x)), chained.hash_one(u128::from(x)));
            assert_eq!(b.hash_one((x, x, x)), chained.hash_one((x, x, x)));
            let many = (x, x as u32, (x, x, x), u128::from(x), (x, x, x, x, x));
            assert_eq!(b.hash_one(many), chained.hash_one(many));
        }
    }
}

/// The one-shot scheme's values, pinned: XXH3-64 of the bytes as Python's `xxhash`
/// package computes it (`xxhash.xxh3_64_intdigest(bytes, seed)`), so that a change to the
/// scheme or to our XXH3 cannot pass unnoticed.
#[test]
fn one_shot_values_are_pinned() {
    let h = |seed: u64| Xxh3Builder::with_seed(seed);
    assert_eq!(h(0).hash_one(""), 0x2d06800538d394c2);
    assert_eq!(h(0).hash_one("a"), 0xe6c632b61e964e1f);
    assert_eq!(h(0).hash_one("numpy"), 0x7c6a658bb770ce1f);
    assert_eq!(
        h(7).hash_one("https://example.com/0042"),
        0x2f424b3ea32c1751
    );
    assert_eq!(
        h(99).hash_one(b"0123456789abcdef".to_vec()),
        0x01ff5971608ed56c
    );
    let long: Vec<u8> = (0..200u8).collect();
    assert_eq!(
        h(0xdeadbeefcafef00d).hash_one(&long[..]),
        0x52bcd4c9e1586e16
    );
}

/// The delimiters the one-shot scheme drops keep keys of one type apart: strings in
/// tuples, a slice's length before other integers, a `0xff` that is data.
#[test]
fn one_shot_keeps_structured_keys_apart() {
    let b = Xxh3Builder::with_seed(1);
    let distinct = |hashes: &[u64]| {
        let set: std::collections::HashSet<_> = hashes.iter().collect();
        set.len() == hashes.len()
    };
    assert!(distinct(&[
        b.hash_one(("ab", "c")),
        b.hash_one(("a", "bc")),
        b.hash_one(("abc", "")),
        b.hash_one(("", "abc")),
    ]));
    assert!(distinct(&[
        b.hash_one((3u64, "abc")),
        b.hash_one((4u64, "abc")),
        b.hash_one((3u64, "abd")),
    ]));
    assert!(distinct(&[
        b.hash_one(("ab", 0xffu8)),
        b.hash_one(("ab", 0xfeu8)),
        b.hash_one(("ab", 0u8)),
    ]));
    assert!(distinct(&[
        b.hash_one(vec!["a", "b"]),
        b.hash_one(vec!["ab"]),
        b.hash_one(vec!["a", "b", ""]),
    ]));
}
