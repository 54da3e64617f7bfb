//! The conformance suite every bloomkit filter variant runs, so that all of them keep the
//! same promises: no false negatives after any sequence of operations (checked against a
//! `HashSet` model), unions and intersections that keep what they must, byte round trips
//! that answer identically, decoders that reject every truncation and corruption without
//! panicking, and false-positive rates measured against their prediction.
//!
//! Property checks use quickcheck's generators and shrinkers through [`forall`], which
//! (unlike `quickcheck::quickcheck`) accepts closures, so a check can capture the
//! constructor of the variant under test. Set `BLOOMKIT_QC_SEED` to replay a failure; set
//! `BLOOMKIT_QC_CASES` to run more cases.

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::fmt::Debug;

use bloomkit_core::format::{checksum, CHECKSUM_LEN, HEADER_LEN};
use bloomkit_core::{Codec, DecodeError, Error, Filter, Intersection, Lookup, LookupCore, Union};
use quickcheck::{Arbitrary, Gen};

pub mod fpr;
pub mod parallel;
pub mod redis_server;
pub mod resp;
pub mod resp_proxy;
pub mod resp_server;

/// The outcome of one property case: `Err` carries what went wrong.
pub type Outcome = Result<(), String>;

/// `Ok` if `cond`, else `Err(msg())`.
pub fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Outcome {
    if cond {
        Ok(())
    } else {
        Err(msg())
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.parse().ok()
}

/// Runs `prop` on `cases` random inputs (more if `BLOOMKIT_QC_CASES` says so); on a
/// failure, shrinks the input with quickcheck's shrinker and panics with the smallest
/// failing input, its message and the seed that replays it.
pub fn forall<A, P>(cases: u64, prop: P)
where
    A: Arbitrary + Debug,
    P: Fn(&A) -> Outcome,
{
    let seed = seed();
    let cases = env_u64("BLOOMKIT_QC_CASES").unwrap_or(cases);
    let mut g = Gen::from_size_and_seed(64, seed);
    for case in 0..cases {
        let input = A::arbitrary(&mut g);
        if let Err(msg) = prop(&input) {
            let (input, msg) = shrink(input, msg, &prop);
            panic!(
                "property failed on case {case} (replay with BLOOMKIT_QC_SEED={seed}):\n  \
                 input: {input:?}\n  error: {msg}"
            );
        }
    }
}

fn shrink<A: Arbitrary, P: Fn(&A) -> Outcome>(
    mut input: A,
    mut msg: String,
    prop: &P,
) -> (A, String) {
    'outer: for _ in 0..10_000 {
        for candidate in input.shrink() {
            if let Err(m) = prop(&candidate) {
                input = candidate;
                msg = m;
                continue 'outer;
            }
        }
        break;
    }
    (input, msg)
}

/// One step of a model-based test.
#[derive(Debug, Clone)]
pub enum Op {
    /// Insert a key.
    Insert(u64),
    /// Ask for a key (the model says whether it must be found).
    Check(u64),
    /// Empty the filter.
    Clear,
}

/// Keys drawn from a small range often, so that sequences repeat keys.
fn arbitrary_key(g: &mut Gen) -> u64 {
    let k = u64::arbitrary(g);
    if bool::arbitrary(g) {
        k % 32
    } else {
        k
    }
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        match u8::arbitrary(g) % 32 {
            0 => Op::Clear,
            1..=20 => Op::Insert(arbitrary_key(g)),
            _ => Op::Check(arbitrary_key(g)),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Op>> {
        match *self {
            Op::Insert(k) => Box::new(k.shrink().map(Op::Insert)),
            Op::Check(k) => Box::new(k.shrink().map(Op::Check).chain([Op::Insert(k)])),
            Op::Clear => Box::new(std::iter::empty()),
        }
    }
}

/// Checks a filter's batched calls against its one-at-a-time calls, on random key lists
/// (repeats included) and group-boundary lengths: `insert_batch` leaves the same filter as
/// `insert` key by key and counts the same new keys; `contains_batch` appends exactly the
/// answers of `contains`, `true` for every inserted key (no false negatives).
pub fn check_batch<F, M>(make: M)
where
    F: Filter<Key = u64, InsertError = std::convert::Infallible> + PartialEq + Debug,
    M: Fn() -> F,
{
    let lanes = bloomkit_core::batch::LANES as u64;
    let check = |keys: &[u64], probes: &[u64]| -> Outcome {
        let mut one = make();
        let single_new = keys.iter().filter(|k| one.insert(k)).count();
        let mut batched = make();
        let batch_new = batched.insert_batch(keys);
        ensure(single_new == batch_new, || {
            format!("insert counted {single_new} new keys, insert_batch {batch_new}")
        })?;
        ensure(one == batched, || {
            "insert_batch left a different filter".into()
        })?;
        same_batched_answers(&batched, keys, probes)
    };
    forall(200, |(keys, probes): &(Vec<u64>, Vec<u64>)| {
        check(keys, probes)
    });
    // Under miri (thousands of times slower) the group boundaries only.
    let sizes: &[u64] = if cfg!(miri) {
        &[0, 1, lanes + 1]
    } else {
        &[0, 1, lanes - 1, lanes, lanes + 1, 5 * lanes + 3]
    };
    for &n in sizes {
        let keys: Vec<u64> = (0..n).map(member).collect();
        let probes: Vec<u64> = (0..n).map(non_member).collect();
        if let Err(msg) = check(&keys, &probes) {
            panic!("{n} keys: {msg}");
        }
    }
}

/// `contains_batch` on `keys` then `probes` appends exactly the answers of `contains`, and
/// `true` for every key of `keys` (which the caller inserted into `f`).
fn same_batched_answers<F: Filter<Key = u64>>(f: &F, keys: &[u64], probes: &[u64]) -> Outcome {
    let mut out = vec![true]; // appended to, not overwritten
    f.contains_batch(keys.iter().chain(probes), &mut out);
    let expected: Vec<bool> = std::iter::once(true)
        .chain(keys.iter().chain(probes).map(|k| f.contains(k)))
        .collect();
    ensure(out == expected, || {
        "contains_batch differs from contains".into()
    })?;
    ensure(out[1..=keys.len()].iter().all(|&x| x), || {
        "contains_batch missed an inserted key".into()
    })
}

/// For variants whose inserts can fail (so without `insert_batch`): `contains_batch` answers
/// as `contains` does, on filters filled with random keys through `try_insert`.
pub fn check_contains_batch<F, M>(make: M)
where
    F: Filter<Key = u64>,
    M: Fn() -> F,
{
    forall(100, |(keys, probes): &(Vec<u64>, Vec<u64>)| {
        let mut f = make();
        for k in keys {
            f.try_insert(k).map_err(|e| format!("insert {k}: {e}"))?;
        }
        same_batched_answers(&f, keys, probes)
    });
}

/// Keys that tests insert: `0, 1, 2, ...` (the hash spreads them).
pub fn member(i: u64) -> u64 {
    i
}

/// Keys that tests never insert: disjoint from every [`member`] below `2^63`.
pub fn non_member(i: u64) -> u64 {
    (1 << 63) | i
}

/// A key type the conformance suite can test a filter over: made from a `u64` (a
/// [`member`] or [`non_member`] index), distinct for distinct indices.
pub trait TestKey: Clone + Debug + Eq + std::hash::Hash {
    /// The key for index `i`.
    fn from_index(i: u64) -> Self;
}

impl TestKey for u64 {
    fn from_index(i: u64) -> u64 {
        i
    }
}

/// Records for multi-attribute filters: the index, then two fields with few distinct
/// values, so that records share field values and combinations of fields from different
/// records are common.
impl TestKey for (u64, u64, u64) {
    fn from_index(i: u64) -> Self {
        (i, i % 13, i % 7)
    }
}

/// Records of one attribute.
impl TestKey for (u64,) {
    fn from_index(i: u64) -> Self {
        (i,)
    }
}

fn key<K: TestKey>(i: u64) -> K {
    K::from_index(i)
}

/// Checks the promises of [`Filter`] on filters from `make`, each of which must hold at
/// least 2,000 items and accept the keys `0..2_000` (a variant may refuse other keys, as a
/// bitmap refuses keys outside its range: a refused insert must change nothing).
pub fn check_filter<F, K, M>(make: M)
where
    F: Filter<Key = K> + Clone + Debug,
    K: TestKey,
    M: Fn() -> F,
{
    // An empty filter holds nothing.
    let empty = make();
    assert_eq!(empty.estimated_len(), 0.0, "fresh filter: {empty:?}");
    assert_eq!(empty.estimated_fpr(), 0.0, "fresh filter: {empty:?}");
    assert!(
        LookupCore::is_empty(&empty),
        "fresh filter not empty: {empty:?}"
    );
    assert!(empty.heap_bytes() > 0);
    if let Some(p) = empty.target_fpr() {
        assert!((0.0..1.0).contains(&p), "target fpr {p}");
    }
    assert!(
        (0..1_000).all(|i| !empty.contains(&key(member(i)))),
        "empty filter claims keys"
    );

    // First insert says "new", the second "maybe present"; hash entry points agree.
    let mut f = make();
    assert!(
        f.try_insert(&key(7)).expect("insert"),
        "first insert of 7 must say new"
    );
    assert!(
        !f.try_insert(&key(7)).expect("insert"),
        "second insert of 7 must say maybe-present"
    );
    for i in 0..1_000 {
        let k: K = key(non_member(i));
        assert_eq!(f.contains(&k), f.contains_hash(f.hash_key(&k)));
    }

    // Estimates follow the load: 1,000 distinct keys.
    let mut f = make();
    for i in 0..1_000 {
        f.try_insert(&key(member(i))).expect("insert");
    }
    assert!(!LookupCore::is_empty(&f), "empty after 1,000 keys: {f:?}");
    let est = f.estimated_len();
    assert!(
        (est - 1_000.0).abs() <= 50.0,
        "estimated_len {est} after 1,000 keys: {f:?}"
    );
    let fpr = f.estimated_fpr();
    assert!((0.0..=1.0).contains(&fpr), "estimated_fpr {fpr}");
    if let Some(p) = f.target_fpr() {
        assert!(
            fpr <= p * 1.5,
            "estimated fpr {fpr} at 1,000 keys, target {p}"
        );
    }
    let g = f.clone();
    assert!((0..2_000).all(|i| f.contains(&key(member(i))) == g.contains(&key(member(i)))));

    // Clear forgets everything.
    f.clear();
    assert_eq!(f.estimated_len(), 0.0);
    assert!(LookupCore::is_empty(&f), "not empty after clear: {f:?}");
    assert!(
        (0..1_000).all(|i| !f.contains(&key(member(i)))),
        "cleared filter claims keys"
    );

    // No false negatives after any sequence of operations, against a HashSet model.
    forall(300, |ops: &Vec<Op>| {
        let mut filter = make();
        let mut model = HashSet::new();
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Insert(k) => {
                    let before = filter.contains(&key(k));
                    match filter.try_insert(&key(k)) {
                        Ok(new) => {
                            let was_new = model.insert(k);
                            ensure(was_new || !new, || {
                                format!("step {step}: re-insert of {k} said new")
                            })?;
                        }
                        // A variant may refuse a key (a bitmap outside its range); it must
                        // then be unchanged, and the key stays out of the model.
                        Err(_) => ensure(filter.contains(&key(k)) == before, || {
                            format!("step {step}: refused insert of {k} changed the filter")
                        })?,
                    }
                }
                Op::Check(k) => {
                    let found = filter.contains(&key(k));
                    ensure(found || !model.contains(&k), || {
                        format!("step {step}: lost {k}")
                    })?;
                }
                Op::Clear => {
                    filter.clear();
                    model.clear();
                }
            }
        }
        let lost: Vec<_> = model
            .iter()
            .filter(|&&k| !filter.contains(&key(k)))
            .collect();
        ensure(lost.is_empty(), || format!("false negatives {lost:?}"))
    });
}

/// A filter from `make` holding `keys`, less any the variant refuses (see [`check_filter`]).
fn fill<F: Filter<Key = K>, K: TestKey>(make: &impl Fn() -> F, keys: &[u64]) -> F {
    let mut f = make();
    for &k in keys {
        let _refusals_are_checked_by_check_filter = f.try_insert(&key(k));
    }
    f
}

/// Checks [`Union`]: the union of two filters from `make` contains every key of either, by
/// value and in place alike, whichever side it is taken from.
pub fn check_union<F, K, M>(make: M)
where
    F: Filter<Key = K> + Union + Debug,
    K: TestKey,
    M: Fn() -> F,
{
    forall(200, |(a, b): &(Vec<u64>, Vec<u64>)| {
        let (fa, fb) = (fill(&make, a), fill(&make, b));
        let ab = fa.union(&fb).map_err(|e| e.to_string())?;
        let ba = fb.union(&fa).map_err(|e| e.to_string())?;
        let mut in_place = fa.clone();
        in_place.union_with(&fb).map_err(|e| e.to_string())?;
        for k in a
            .iter()
            .chain(b)
            .map(|&k| key::<K>(k))
            .filter(|k| fa.contains(k) || fb.contains(k))
        {
            ensure(ab.contains(&k) && ba.contains(&k), || {
                format!("union lost {k:?}")
            })?;
            ensure(in_place.contains(&k), || format!("union_with lost {k:?}"))?;
        }
        for i in 0..200 {
            let k: K = key(non_member(i));
            ensure(ab.contains(&k) == ba.contains(&k), || {
                "union is not commutative".into()
            })?;
        }
        Ok(())
    });
}

/// Checks [`Intersection`]: the intersection of two filters from `make` contains every key
/// common to both.
pub fn check_intersection<F, K, M>(make: M)
where
    F: Filter<Key = K> + Intersection + Debug,
    K: TestKey,
    M: Fn() -> F,
{
    forall(200, |(a, b, common): &(Vec<u64>, Vec<u64>, Vec<u64>)| {
        let a: Vec<u64> = a.iter().chain(common).copied().collect();
        let b: Vec<u64> = b.iter().chain(common).copied().collect();
        let (fa, fb) = (fill(&make, &a), fill(&make, &b));
        let both = fa.intersection(&fb).map_err(|e| e.to_string())?;
        let mut in_place = fa.clone();
        in_place.intersect_with(&fb).map_err(|e| e.to_string())?;
        for k in common
            .iter()
            .map(|&k| key::<K>(k))
            .filter(|k| fa.contains(k) && fb.contains(k))
        {
            ensure(both.contains(&k) && in_place.contains(&k), || {
                format!("intersection lost {k:?}")
            })?;
        }
        Ok(())
    });
}

/// Checks that `combine` refuses to mix `a` and `b` (built with different parameters) with
/// [`Error::Incompatible`] and leaves the left side unchanged.
pub fn check_incompatible<F, C>(a: &F, b: &F, combine: C)
where
    F: Codec + Debug,
    C: Fn(&mut F, &F) -> Result<(), Error>,
{
    let before = a.to_bytes();
    let mut left = F::from_bytes(&before).expect("round trip");
    let err = combine(&mut left, b).expect_err("incompatible filters were combined");
    assert!(matches!(err, Error::Incompatible { .. }), "{err:?}");
    assert_eq!(
        left.to_bytes(),
        before,
        "a refused combination changed the filter"
    );
}

/// Recomputes the checksums (version 2: the meta checksum after the meta block and the data
/// checksum at the end; version 1: the one trailing checksum), so a test can hand the
/// decoder corrupted bytes that get past the checksums and reach the structural checks
/// behind them. Bytes too short or too broken to locate a checksum are left as they are.
pub fn reseal(bytes: &mut [u8]) {
    let len = bytes.len();
    if len < 24 + CHECKSUM_LEN {
        return;
    }
    let seal = |bytes: &mut [u8], from: usize, to: usize| {
        let sum = checksum(&bytes[from..to]);
        bytes[to..to + CHECKSUM_LEN].copy_from_slice(&sum.to_le_bytes());
    };
    if bytes[4..6] == [1, 0] {
        seal(bytes, 0, len - CHECKSUM_LEN);
        return;
    }
    if len < HEADER_LEN + 2 * CHECKSUM_LEN {
        return;
    }
    let meta_len = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
    let Some(meta_end) = usize::try_from(meta_len)
        .ok()
        .and_then(|m| m.checked_add(HEADER_LEN))
        .filter(|&end| end + 2 * CHECKSUM_LEN <= len)
    else {
        return;
    };
    seal(bytes, 0, meta_end);
    seal(bytes, meta_end + CHECKSUM_LEN, len - CHECKSUM_LEN);
}

/// Checks [`Codec`] on filters from `make`: round trips answer identically and re-encode to
/// the same bytes; every prefix, single-byte corruptions (with and without a recomputed
/// checksum; every byte up to 8 KiB, beyond that every byte of the first 128 and last 16
/// and a sample of 512 between) and
/// `foreign` (bytes of another variant) are rejected or decode to a usable filter, and
/// never panic. serde (through bincode) carries the same bytes, checked the same way: a
/// flipped byte inside a bincode payload is refused.
pub fn check_codec<F, K, M>(make: M, foreign: &[u8])
where
    F: Filter<Key = K> + Codec + Debug + serde::Serialize + serde::de::DeserializeOwned,
    K: TestKey,
    M: Fn() -> F,
{
    check_codec_of(|keys: &[u64]| fill(&make, keys), foreign);
}

/// [`check_codec`] for structures built from their keys at once (the static filters):
/// `build` makes one holding the keys it is given.
pub fn check_codec_of<F, K, B>(build: B, foreign: &[u8])
where
    F: Lookup<Key = K> + Codec + Debug + serde::Serialize + serde::de::DeserializeOwned,
    K: TestKey,
    B: Fn(&[u64]) -> F,
{
    forall(100, |keys: &Vec<u64>| {
        let f = build(keys);
        let bytes = f.to_bytes();
        let g = F::from_bytes(&bytes).map_err(|e| format!("round trip: {e}"))?;
        ensure(g.to_bytes() == bytes, || {
            "re-encoding changed the bytes".into()
        })?;
        for k in keys.iter().copied().chain((0..500).map(non_member)) {
            let k: K = key(k);
            ensure(f.contains(&k) == g.contains(&k), || {
                format!("answers differ on {k:?}")
            })?;
        }
        ensure(f.estimated_len() == g.estimated_len(), || {
            "estimates differ".into()
        })?;
        // Streaming: the same bytes out, the same filter back, read no further than its end.
        ensure(f.serialized_len() == bytes.len() as u64, || {
            format!(
                "serialized_len {} for {} bytes",
                f.serialized_len(),
                bytes.len()
            )
        })?;
        let mut out = Vec::new();
        f.write_to(&mut out).map_err(|e| format!("write_to: {e}"))?;
        ensure(out == bytes, || "write_to wrote other bytes".into())?;
        out.extend_from_slice(b"next");
        let mut stream = out.as_slice();
        let h = F::read_from(&mut stream).map_err(|e| format!("read_from: {e}"))?;
        ensure(stream == b"next", || {
            format!("read_from left {} bytes, expected 4", stream.len())
        })?;
        ensure(h.to_bytes() == bytes, || {
            "read_from gave another filter".into()
        })
    });

    let members: Vec<u64> = (0..100).map(member).collect();
    let f = build(&members);
    let bytes = f.to_bytes();
    for cut in 0..bytes.len() {
        match F::from_bytes(&bytes[..cut]) {
            Err(Error::Decode(_)) => {}
            other => panic!("prefix of {cut} bytes: {other:?}"),
        }
        match F::read_from(&bytes[..cut]) {
            Err(Error::Decode(_)) => {}
            other => panic!("stream cut after {cut} bytes: {other:?}"),
        }
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        F::from_bytes(&longer).unwrap_err(),
        Error::Decode(DecodeError::TrailingBytes(1))
    );

    // Every byte of encodings up to 8 KiB. For larger ones (a 77 KB filter of u32
    // counters), every byte of the header, the parameters and the start of the payload, the
    // last bytes (end of payload, checksum), and an even sample of the payload between: all
    // of the structure, without decoding a large filter a hundred thousand times.
    let len = bytes.len();
    let stride = if len <= 8 * 1024 { 1 } else { len / 512 };
    let positions = (0..len.min(128))
        .chain((128..len).step_by(stride))
        .chain(len.saturating_sub(16)..len);
    for i in positions {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[i] ^= flip;
            assert!(
                F::from_bytes(&bad).is_err() && F::read_from(bad.as_slice()).is_err(),
                "flip {flip:#x} at byte {i} went unnoticed"
            );
            reseal(&mut bad);
            let decoded = F::from_bytes(&bad);
            assert_eq!(
                decoded.is_ok(),
                F::read_from(bad.as_slice()).is_ok(),
                "flip {flip:#x} at byte {i}: from_bytes and read_from disagree"
            );
            if let Ok(g) = decoded {
                // Corruption that survives every check must still give a working filter.
                let again = F::from_bytes(&g.to_bytes()).expect("a decoded filter re-encodes");
                for k in (0..100).map(|i| key::<K>(member(i))) {
                    assert_eq!(g.contains(&k), again.contains(&k));
                }
                let _ = (g.estimated_len(), g.estimated_fpr());
            }
        }
    }

    // serde writes the same bytes behind bincode's length prefix, reads them back through
    // the same decoder, and so refuses a flipped byte the way `from_bytes` does.
    let config = bincode::config::standard();
    let encoded = bincode::serde::encode_to_vec(&f, config).expect("serializes");
    let prefix = encoded.len() - bytes.len();
    assert!(
        encoded.ends_with(&bytes) && prefix <= 9,
        "serde wrote other bytes than to_bytes"
    );
    let (g, used): (F, usize) =
        bincode::serde::decode_from_slice(&encoded, config).expect("serde reads what it wrote");
    assert_eq!((used, g.to_bytes()), (encoded.len(), bytes.clone()));
    let positions = (0..len.min(128))
        .chain((128..len).step_by(stride))
        .chain(len.saturating_sub(16)..len);
    for i in positions {
        let mut bad = encoded.clone();
        bad[prefix + i] ^= 0x01;
        assert!(
            bincode::serde::decode_from_slice::<F, _>(&bad, config).is_err(),
            "serde: flip at byte {i} of the filter went unnoticed"
        );
    }
    for cut in 0..encoded.len() {
        assert!(
            bincode::serde::decode_from_slice::<F, _>(&encoded[..cut], config).is_err(),
            "serde: a prefix of {cut} bytes decoded"
        );
    }
    // Formats without byte strings (JSON) hand the bytes over as a sequence of numbers:
    // the same decoder reads them, and refuses them changed.
    let as_seq = |bytes: &[u8]| -> Result<F, serde::de::value::Error> {
        use serde::de::value::SeqDeserializer;
        serde::Deserialize::deserialize(SeqDeserializer::<_, serde::de::value::Error>::new(
            bytes.iter().copied(),
        ))
    };
    let from_seq = as_seq(&bytes).expect("a sequence of the bytes reads back");
    assert_eq!(from_seq.to_bytes(), bytes, "a sequence read another filter");
    let mut bad = bytes.clone();
    bad[len / 2] ^= 0x01;
    assert!(
        as_seq(&bad).is_err(),
        "a changed byte in a sequence went unnoticed"
    );

    match F::from_bytes(foreign) {
        Err(Error::Decode(DecodeError::WrongVariant { .. })) => {}
        other => panic!("another variant's bytes: {other:?}"),
    }
    assert!(F::from_bytes(b"").is_err());
    assert!(F::from_bytes(b"not a filter at all, just some text").is_err());
}

/// A measured false-positive rate.
#[derive(Debug, Clone, Copy)]
pub struct FprMeasurement {
    /// Non-members reported present.
    pub false_positives: u64,
    /// Non-members probed.
    pub probes: u64,
}

impl FprMeasurement {
    /// `false_positives / probes`.
    pub fn rate(&self) -> f64 {
        self.false_positives as f64 / self.probes as f64
    }

    /// Whether the count is within `z` standard deviations of a Binomial(probes, `p`) mean
    /// (plus one count, for continuity at tiny `p`).
    pub fn within(&self, p: f64, z: f64) -> bool {
        let n = self.probes as f64;
        let mean = n * p;
        let sd = (n * p * (1.0 - p)).sqrt();
        (self.false_positives as f64 - mean).abs() <= z * sd + 1.0
    }

    /// The largest rate consistent with this measurement at `z` standard deviations.
    pub fn upper(&self, z: f64) -> f64 {
        let p = self.rate();
        p + z * (p * (1.0 - p) / self.probes as f64).sqrt() + 1.0 / self.probes as f64
    }
}

/// Probes `probes` keys that were never inserted ([`non_member`]) and counts the positives,
/// on all cores.
pub fn measure_fpr<F, K>(filter: &F, probes: u64) -> FprMeasurement
where
    F: Lookup<Key = K> + Sync,
    K: TestKey,
{
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let per = probes.div_ceil(threads);
    let false_positives = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let range = (t * per)..((t + 1) * per).min(probes);
                s.spawn(move || {
                    range
                        .filter(|&i| filter.contains(&key(non_member(i))))
                        .count() as u64
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("probe thread"))
            .sum()
    });
    FprMeasurement {
        false_positives,
        probes,
    }
}

/// The seed of a randomized test: `BLOOMKIT_QC_SEED` if set (to replay a failure), else a new
/// one each run.
pub fn seed() -> u64 {
    env_u64("BLOOMKIT_QC_SEED").unwrap_or_else(|| {
        use std::hash::{BuildHasher, RandomState};
        RandomState::new().hash_one(0u8)
    })
}

/// A [`SplitMix64`] from a new [`seed`] each run, printed (a failing test shows it; replay
/// with `BLOOMKIT_QC_SEED`).
pub fn seeded_rng(test: &str) -> SplitMix64 {
    let seed = seed();
    eprintln!("{test}: BLOOMKIT_QC_SEED={seed}");
    SplitMix64(seed)
}

/// A small deterministic generator (SplitMix64) for tests and examples that need a
/// reproducible stream of numbers: the same seed gives the same stream everywhere.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next number of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A zero-copy view answers every probe as its owned filter does, one key at a time and in a
/// batch (the views' tests).
///
/// # Panics
/// On the first probe answered otherwise.
pub fn check_view_answers<F, V, K>(owned: &F, view: &V, probes: &[K])
where
    K: Clone,
    F: bloomkit_core::Lookup<Key = K>,
    V: bloomkit_core::Lookup<Key = K>,
{
    let expected: Vec<bool> = probes.iter().map(|k| owned.contains(k)).collect();
    let one: Vec<bool> = probes.iter().map(|k| view.contains(k)).collect();
    assert_eq!(
        one, expected,
        "the view answers otherwise, one key at a time"
    );
    let mut batch = Vec::new();
    view.contains_batch(probes, &mut batch);
    assert_eq!(batch, expected, "the view answers otherwise in a batch");
}

/// `bytes` copied to an address 4 bytes past a multiple of 8 (what a view of 8-aligned words
/// must refuse), in a buffer that owns them: `&buffer[at..]` is the copy.
pub fn misaligned_copy(bytes: &[u8]) -> (Vec<u8>, usize) {
    let mut buffer = vec![0u8; bytes.len() + 8];
    let at = (0..8)
        .find(|i| (buffer.as_ptr() as usize + i) % 8 == 4)
        .expect("one of eight offsets is 4 past a multiple of 8");
    buffer[at..at + bytes.len()].copy_from_slice(bytes);
    buffer.truncate(at + bytes.len());
    (buffer, at)
}
