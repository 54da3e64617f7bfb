//! Every static filter against a model (`HashSet`), for any key multiset: no false
//! negatives, the exact count of distinct keys, batched and by-hash lookups that agree,
//! views that answer as the filter, and the byte format's checks.

use std::collections::HashSet;
use std::fmt::Debug;

use bloomkit_core::format::AlignedBytes;
use bloomkit_core::{Codec, DecodeError, Error, Lookup, LookupCore, Variant};
use bloomkit_static::{
    BinaryFuse, BinaryFuse16, BinaryFuse32, BinaryFuse8, BinaryFuseRef, Fingerprint, RibbonFilter,
    RibbonFilterRef,
};
use bloomkit_testkit::{check_codec_of, ensure, forall, member, non_member, Outcome};

/// The model check shared by every static filter: `build` makes one from keys (with
/// duplicates), `view` reads its bytes in place and is checked by [`same_answers`].
fn follows_the_model<F>(
    keys: &[u64],
    build: impl Fn(&[u64]) -> F,
    view: impl Fn(&[u8], &F, &[u64], &[bool]) -> Outcome,
) -> Outcome
where
    F: Lookup<Key = u64> + Codec + Debug,
{
    let f = build(keys);
    let set: HashSet<u64> = keys.iter().copied().collect();
    ensure(f.estimated_len() == set.len() as f64, || {
        format!("len {} for {} distinct keys", f.estimated_len(), set.len())
    })?;
    ensure(LookupCore::is_empty(&f) == set.is_empty(), || {
        "is_empty".into()
    })?;
    for k in &set {
        ensure(f.contains(k), || format!("false negative: {k}"))?;
        ensure(f.contains_hash(f.hash_key(k)), || format!("by hash: {k}"))?;
    }
    let probes: Vec<u64> = keys
        .iter()
        .copied()
        .chain((0..300).map(non_member))
        .collect();
    let mut batch = Vec::new();
    f.contains_batch(&probes, &mut batch);
    let one: Vec<bool> = probes.iter().map(|k| f.contains(k)).collect();
    ensure(batch == one, || {
        "contains_batch differs from contains".into()
    })?;
    if set.is_empty() {
        ensure(!one.iter().any(|&b| b), || {
            "empty filter claims a key".into()
        })?;
        ensure(f.estimated_fpr() == 0.0, || {
            "empty filter has a rate".into()
        })?;
    }
    let bytes = AlignedBytes::copy_from(&f.to_bytes());
    view(bytes.as_bytes(), &f, &probes, &one)
}

/// A view answers as its filter, one at a time and batched, with the same estimates.
fn same_answers<F: LookupCore, V: Lookup<Key = u64>>(
    v: Result<V, Error>,
    f: &F,
    probes: &[u64],
    one: &[bool],
) -> Outcome {
    let v = v.map_err(|e| format!("view: {e}"))?;
    let from_view: Vec<bool> = probes.iter().map(|k| v.contains(k)).collect();
    ensure(from_view == one, || "the view answers otherwise".into())?;
    let mut vbatch = Vec::new();
    v.contains_batch(probes, &mut vbatch);
    ensure(vbatch == one, || {
        "the view's batch answers otherwise".into()
    })?;
    ensure(v.estimated_len() == f.estimated_len(), || "view len".into())?;
    ensure(v.estimated_fpr() == f.estimated_fpr(), || {
        "view rate".into()
    })?;
    ensure(v.heap_bytes() == 0, || "a view holds heap".into())
}

/// [`follows_the_model`] for a binary fuse filter of fingerprint `F` and its view.
fn fuse_matches_the_model<F: Fingerprint>(keys: &[u64]) -> Outcome
where
    BinaryFuse<F, u64>: Codec + Debug,
{
    follows_the_model(
        keys,
        |keys| BinaryFuse::<F, u64>::from_keys(keys).unwrap(),
        |bytes, f, probes, one| {
            same_answers(BinaryFuseRef::<F, u64>::from_bytes(bytes), f, probes, one)
        },
    )
}

/// [`follows_the_model`] for a ribbon filter at rate `fpr` and its view.
fn ribbon_matches_the_model(keys: &[u64], fpr: f64) -> Outcome {
    follows_the_model(
        keys,
        |keys| RibbonFilter::<u64>::from_keys_with_fpr(keys, fpr).unwrap(),
        |bytes, f, probes, one| {
            same_answers(RibbonFilterRef::<u64>::from_bytes(bytes), f, probes, one)
        },
    )
}

fn fuse_model<F: Fingerprint>()
where
    BinaryFuse<F, u64>: Codec + Debug,
{
    forall(300, |keys: &Vec<u64>| {
        // Small keys collide often: duplicates are part of the input.
        let keys: Vec<u64> = keys
            .iter()
            .map(|k| k % 64)
            .chain(keys.iter().copied())
            .collect();
        fuse_matches_the_model::<F>(&keys)
    });
}

#[test]
fn fuse8_follows_the_model() {
    fuse_model::<u8>();
}

#[test]
fn fuse16_follows_the_model() {
    fuse_model::<u16>();
}

#[test]
fn fuse32_follows_the_model() {
    fuse_model::<u32>();
}

#[test]
fn ribbon_follows_the_model() {
    forall(300, |(keys, rate): &(Vec<u64>, u8)| {
        let fpr = [0.5, 0.1, 0.01, 0.003, 0.001, 1e-5, 2.5e-10][*rate as usize % 7];
        let keys: Vec<u64> = keys
            .iter()
            .map(|k| k % 64)
            .chain(keys.iter().copied())
            .collect();
        ribbon_matches_the_model(&keys, fpr)?;
        let f = RibbonFilter::<u64>::from_keys_with_fpr(&keys, fpr).unwrap();
        ensure(f.estimated_fpr() <= fpr * (1.0 + 1e-9), || {
            format!("model rate {} above the target {fpr}", f.estimated_fpr())
        })
    });
}

/// Larger sets than the properties reach, where the layouts are the paper's.
#[test]
fn large_sets_have_no_false_negative() {
    let keys: Vec<u64> = (0..200_000).map(member).collect();
    let fuse = BinaryFuse8::<u64>::from_keys(&keys).unwrap();
    let ribbon = RibbonFilter::<u64>::from_keys_with_fpr(&keys, 0.001).unwrap();
    let mut out = Vec::new();
    fuse.contains_batch(&keys, &mut out);
    ribbon.contains_batch(&keys, &mut out);
    assert!(out.iter().all(|&b| b));
    assert_eq!((fuse.len(), ribbon.len()), (200_000, 200_000));
    // 8 bits x max(1.125, 0.875 + 0.25 ln(10^6) / ln(n)) = 8 x 1.158 at n = 200,000.
    assert!(fuse.bits_per_key() < 9.35, "{}", fuse.bits_per_key());
    assert!(ribbon.bits_per_key() < 10.7, "{}", ribbon.bits_per_key());
}

#[test]
fn from_hashes_is_from_keys() {
    let keys: Vec<String> = (0..5_000).map(|i| format!("key-{i}")).collect();
    let by_key = BinaryFuse16::<str>::from_keys(keys.iter().map(String::as_str)).unwrap();
    let hashes: Vec<u64> = keys.iter().map(|k| by_key.hash_key(k)).collect();
    let by_hash = BinaryFuse16::<str>::from_hashes(hashes.iter().copied()).unwrap();
    assert_eq!(by_key, by_hash);
    let r1 =
        RibbonFilter::<str>::from_keys_with_fpr(keys.iter().map(String::as_str), 0.02).unwrap();
    let r2 = RibbonFilter::<str>::from_hashes(hashes, 0.02).unwrap();
    assert_eq!(r1.to_bytes(), r2.to_bytes());
}

#[test]
fn builds_are_deterministic() {
    let a = RibbonFilter::<u64>::from_keys(0..10_000u64).unwrap();
    let b = RibbonFilter::<u64>::from_keys((0..10_000u64).rev()).unwrap();
    assert!((0..10_000u64).all(|k| b.contains(&k)));
    assert_eq!(
        a.to_bytes(),
        RibbonFilter::<u64>::from_keys(0..10_000u64)
            .unwrap()
            .to_bytes()
    );
    let f = BinaryFuse32::<u64>::from_keys(0..10_000u64).unwrap();
    assert_eq!(
        f.to_bytes(),
        BinaryFuse32::<u64>::from_keys(0..10_000u64)
            .unwrap()
            .to_bytes()
    );
}

#[test]
fn bad_rates_are_typed_errors() {
    for p in [0.0, 1.0, -0.1, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            RibbonFilter::<u64>::from_keys_with_fpr([1u64], p),
            Err(Error::InvalidFpr(_))
        ));
    }
    match RibbonFilter::<u64>::from_keys_with_fpr([1u64], 1e-12) {
        Err(Error::FprBelowMinimum {
            variant: Variant::Ribbon,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn one_width_is_not_another() {
    let f8 = BinaryFuse8::<u64>::from_keys(0..100u64).unwrap().to_bytes();
    match BinaryFuse16::<u64>::from_bytes(&f8) {
        Err(Error::Decode(DecodeError::WrongVariant { .. })) => {}
        other => panic!("{other:?}"),
    }
    match RibbonFilter::<u64>::from_bytes(&f8) {
        Err(Error::Decode(DecodeError::WrongVariant { .. })) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn codecs() {
    let foreign = RibbonFilter::<u64>::from_keys(0..10u64).unwrap().to_bytes();
    check_codec_of(
        |keys| BinaryFuse8::<u64>::from_keys(keys).unwrap(),
        &foreign,
    );
    check_codec_of(
        |keys| BinaryFuse16::<u64>::from_keys(keys).unwrap(),
        &foreign,
    );
    check_codec_of(
        |keys| BinaryFuse32::<u64>::from_keys(keys).unwrap(),
        &foreign,
    );
    let foreign = BinaryFuse8::<u64>::from_keys(0..10u64).unwrap().to_bytes();
    check_codec_of(
        |keys| RibbonFilter::<u64>::from_keys(keys).unwrap(),
        &foreign,
    );
}

#[test]
fn unaligned_bytes_are_refused_for_views_not_for_copies() {
    let f = RibbonFilter::<u64>::from_keys(0..1_000u64).unwrap();
    let aligned = AlignedBytes::copy_from(&f.to_bytes());
    let mut shifted = vec![0u8];
    shifted.extend_from_slice(aligned.as_bytes());
    match RibbonFilterRef::<u64>::from_bytes(&shifted[1..]) {
        Err(Error::Decode(DecodeError::NotViewable(_))) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(RibbonFilter::<u64>::from_bytes(&shifted[1..]).unwrap(), f);
}

/// Larger random multisets than quickcheck's vectors: up to 20,000 keys, a third of them
/// repeated, from a seed; every width and the ribbon filter at a random rate.
#[test]
fn larger_random_sets_follow_the_model() {
    forall(60, |&(seed, n, rate): &(u64, u16, u8)| {
        let n = u64::from(n) % 20_000;
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let z = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z ^ (z >> 31)
        };
        let mut keys: Vec<u64> = (0..n).map(|_| next()).collect();
        let repeats: Vec<u64> = keys.iter().step_by(3).copied().collect();
        keys.extend(repeats);
        let fpr = [0.3, 0.01, 0.0007][rate as usize % 3];
        fuse_matches_the_model::<u8>(&keys)?;
        fuse_matches_the_model::<u32>(&keys)?;
        ribbon_matches_the_model(&keys, fpr)
    });
}
