//! What every fuzz target checks, as plain functions of the input bytes: the cargo-fuzz
//! targets (`fuzz_targets/`) call them, and bloomkit's test suite replays the seeds and
//! every regression input through them (`crates/bloomkit/tests/it/fuzz_regressions.rs`).
//!
//! - `decode_*`: any bytes either fail to decode with an error, or decode to a filter that
//!   re-encodes to bytes that decode to the same filter, that the streaming decoder and
//!   (where there is one) the zero-copy view agree with, and that survives inserts,
//!   lookups, a union and its estimates without panicking or blowing up.
//! - `serde_bincode`: the same for the serde path through bincode (with a size limit, as
//!   anyone decoding untrusted bincode must set).
//! - `ops_*`: the input is a sequence of operations (3 bytes each) run on a filter and on
//!   a model (`HashMap` of counts); after each, every key the model holds must be found
//!   (no false negatives), and the bitmap must agree with the model exactly.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::fmt::Debug;

use bloomkit::counting::{Counter, U4};
use bloomkit::format::{AlignedBytes, Verify};
use bloomkit::prelude::*;
use bloomkit::static_filters::Fingerprint;
use bloomkit::{
    BinaryFuse, BinaryFuseRef, BlockedBloomFilterRef, BloomFilterRef, QuotientFilterRef,
    RibbonFilterRef, SimdBlockFilterRef, WindowFilterRef,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A target's check of one input: returns if the input passes, panics otherwise.
pub type Check = fn(&[u8]);

/// The fuzz targets, by name: `cargo xtask fuzz` runs them all.
pub const TARGETS: &[(&str, Check)] = &[
    ("decode_classic", decode_classic),
    ("decode_blocked", decode_blocked),
    ("decode_simd_block", decode_simd_block),
    ("decode_split_block", decode_split_block),
    ("decode_counting", decode_counting),
    ("decode_scalable", decode_scalable),
    ("decode_bitmap", decode_bitmap),
    ("decode_multi", decode_multi),
    ("decode_binary_fuse", decode_binary_fuse),
    ("decode_ribbon", decode_ribbon),
    ("decode_quotient", decode_quotient),
    ("decode_expandable", decode_expandable),
    ("decode_window", decode_window),
    ("decode_any", decode_any),
    #[cfg(feature = "redis")]
    ("decode_redisbloom", decode_redisbloom),
    #[cfg(feature = "jvm")]
    ("decode_jvm", decode_jvm),
    ("serde_bincode", serde_bincode),
    ("ops_classic", ops_classic),
    ("ops_blocked", ops_blocked),
    ("ops_counting", ops_counting),
    ("ops_scalable", ops_scalable),
    ("ops_bitmap", ops_bitmap),
];

/// Decodes `data` as an `F` through both decoders; on success checks the round trip and
/// returns the filter.
fn decoded<F: Codec + PartialEq + Debug>(data: &[u8]) -> Option<F> {
    let owned = F::from_bytes(data);
    let mut rest = data;
    let streamed = F::read_from(&mut rest);
    match (&owned, &streamed) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "from_bytes and read_from disagree"),
        (Ok(_), Err(e)) => panic!("from_bytes accepts what read_from refuses: {e}"),
        (Err(e), Ok(_)) => assert!(
            !rest.is_empty(),
            "read_from accepts all of what from_bytes refuses: {e}"
        ),
        (Err(_), Err(_)) => {}
    }
    let f = owned.ok()?;
    let bytes = f.to_bytes();
    assert_eq!(bytes.len() as u64, f.serialized_len());
    let again = F::from_bytes(&bytes).expect("a decoded filter re-encodes to valid bytes");
    assert_eq!(again, f, "re-encoding changed the filter");
    Some(f)
}

/// Keys probed and inserted after decoding.
const PROBES: std::ops::Range<u64> = 0..64;

fn after_decoding<F>(mut f: F)
where
    F: Filter<Key = u64> + Union,
{
    let _ = (
        f.estimated_len(),
        f.estimated_fpr(),
        f.heap_bytes(),
        f.target_fpr(),
    );
    let before: Vec<bool> = PROBES.map(|k| f.contains(&k)).collect();
    let copy = f.clone();
    f.union_with(&copy).expect("a filter unites with itself");
    assert!(PROBES.zip(before).all(|(k, was)| f.contains(&k) == was));
    for k in PROBES {
        if f.try_insert(&k).is_ok() {
            assert!(f.contains(&k), "false negative after decoding: {k}");
        }
    }
}

/// A view of `data`, which the owned decoder accepted, must answer as the owned filter
/// does, and accept it whenever it is version 2. (Inputs the owned decoder refuses, the
/// view must refuse too: the callers check that.)
fn view_agrees(
    data: &[u8],
    view: impl Fn(&[u8]) -> Option<Vec<bool>>,
    owned: impl Fn() -> Vec<bool>,
) {
    let aligned = AlignedBytes::copy_from(data);
    match view(&aligned) {
        Some(answers) => {
            assert_eq!(answers, owned(), "the view answers otherwise");
        }
        None => assert!(
            data[4..6] != [2, 0],
            "a view refuses version 2 bytes from_bytes accepts"
        ),
    }
}

/// `decode_any`: whatever variant the bytes name, through the family's one list
/// (`bloomkit::registry`), so a variant added to the list is fuzzed from its first day:
/// what opens (a view, or a decoded copy) and what decodes agree on every probe; a decoded
/// filter re-encodes to bytes that decode to the same answers; one with a union unites with
/// itself and answers as before; one that takes keys finds every key it took.
pub fn decode_any(data: &[u8]) {
    use bloomkit::registry;
    let keys: Vec<String> = PROBES.map(|k| format!("key {k}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let answers = |f: &dyn registry::AnyLookup| {
        let mut out = Vec::new();
        f.contains_batch(&keys, &mut out);
        assert_eq!(out.len(), keys.len());
        let one_by_one: Vec<bool> = keys.iter().map(|k| f.contains(k)).collect();
        assert_eq!(
            out, one_by_one,
            "the batch answers otherwise than one key at a time"
        );
        let core = f.core();
        let _ = (
            core.estimated_len(),
            core.estimated_fpr(),
            core.heap_bytes(),
        );
        out
    };
    let aligned = AlignedBytes::copy_from(data);
    let opened = registry::open(&aligned, Verify::All);
    let mut decoded = match (opened, registry::decode(data)) {
        (Ok(view), Ok(decoded)) => {
            assert_eq!(view.variant(), decoded.variant());
            assert_eq!(
                answers(view.as_ref()),
                answers(decoded.as_ref()),
                "the view answers otherwise"
            );
            decoded
        }
        (Ok(_), Err(e)) => panic!("the registry opens what it cannot decode: {e}"),
        (Err(e), Ok(_)) => {
            assert!(data[4..6] == [1, 0], "a view refuses what decodes: {e}");
            return;
        }
        (Err(_), Err(_)) => return,
    };
    let before = answers(decoded.as_ref());
    let mut bytes = Vec::new();
    decoded.write_to(&mut bytes).expect("writes to memory");
    assert_eq!(bytes.len() as u64, decoded.serialized_len());
    let again = registry::decode(&bytes).expect("a decoded filter re-encodes to valid bytes");
    assert_eq!(
        answers(again.as_ref()),
        before,
        "re-encoding changed the answers"
    );
    let entry = registry::entry(decoded.variant()).expect("decoded, so served");
    if decoded.variant().facts().union {
        entry
            .union_into(decoded.as_mut(), &bytes)
            .expect("a filter unites with itself");
        assert_eq!(
            answers(decoded.as_ref()),
            before,
            "a union with itself changed answers"
        );
    }
    for k in &keys {
        if decoded.try_insert(k).is_ok() {
            assert!(decoded.contains(k), "false negative after decoding: {k}");
        }
    }
}

/// `decode_classic`: `BloomFilter<u64>` and its view.
pub fn decode_classic(data: &[u8]) {
    let f = decoded::<BloomFilter<u64>>(data);
    if let Some(f) = &f {
        view_agrees(
            data,
            |b| {
                let v = BloomFilterRef::<u64, Xxh3Builder>::with_hasher(b, Verify::All).ok()?;
                Some(PROBES.map(|k| v.contains(&k)).collect())
            },
            || PROBES.map(|k| f.contains(&k)).collect(),
        );
    } else {
        let aligned = AlignedBytes::copy_from(data);
        assert!(BloomFilterRef::<u64>::from_bytes(&aligned).is_err());
    }
    if let Some(f) = f {
        f.clone()
            .intersect_with(&f)
            .expect("a filter intersects with itself");
        after_decoding(f);
    }
}

/// `decode_blocked`: `BlockedBloomFilter<u64>` and its view.
pub fn decode_blocked(data: &[u8]) {
    decode_with_view::<BlockedBloomFilter<u64>>(data, |b| {
        let v = BlockedBloomFilterRef::<u64, Xxh3Builder>::with_hasher(b, Verify::All).ok()?;
        let mut batch = Vec::new();
        v.contains_batch(PROBES, &mut batch);
        assert!(PROBES.zip(&batch).all(|(k, &x)| v.contains(&k) == x));
        Some(batch)
    });
}

/// `decode_simd_block`: `SimdBlockFilter<u64>` and its view.
pub fn decode_simd_block(data: &[u8]) {
    decode_with_view::<SimdBlockFilter<u64>>(data, |b| {
        let v = SimdBlockFilterRef::<u64, Xxh3Builder>::with_hasher(b, Verify::All).ok()?;
        let mut batch = Vec::new();
        v.contains_batch(PROBES, &mut batch);
        assert!(PROBES.zip(&batch).all(|(k, &x)| v.contains(&k) == x));
        Some(batch)
    });
}

/// `decode_split_block`: `SplitBlockFilter<u64>` (Parquet's hash) in bloomkit's format,
/// and the same bits through Parquet's bytes.
pub fn decode_split_block(data: &[u8]) {
    decode_with_view::<SplitBlockFilter<u64>>(data, |b| {
        let f = SplitBlockFilter::<u64>::from_bytes(b).ok()?;
        let parquet = SplitBlockFilter::<u64>::from_parquet_bytes(&f.to_parquet_bytes())
            .expect("a decoded filter's Parquet bytes read back");
        // The design does not travel in Parquet's bytes; the bits do.
        assert!(
            parquet.to_bitset() == f.to_bitset(),
            "the Parquet bytes hold other bits"
        );
        let mut batch = Vec::new();
        f.contains_batch(PROBES, &mut batch);
        assert!(PROBES.zip(&batch).all(|(k, &x)| f.contains(&k) == x));
        Some(batch)
    });
}

/// `decode_binary_fuse`: the bytes as each of `BinaryFuse8`, `BinaryFuse16` and
/// `BinaryFuse32` (`u64` keys), and their views.
pub fn decode_binary_fuse(data: &[u8]) {
    fn one<F: Fingerprint>(data: &[u8])
    where
        BinaryFuse<F, u64>: Codec + PartialEq + Debug + Serialize + DeserializeOwned,
    {
        decode_static::<BinaryFuse<F, u64>>(data, |b| {
            let v = BinaryFuseRef::<F, u64, Xxh3Builder>::with_hasher(b, Verify::All).ok()?;
            Some(static_answers(&v))
        });
    }
    one::<u8>(data);
    one::<u16>(data);
    one::<u32>(data);
}

/// `decode_ribbon`: `RibbonFilter<u64>` and its view.
pub fn decode_ribbon(data: &[u8]) {
    decode_static::<RibbonFilter<u64>>(data, |b| {
        let v = RibbonFilterRef::<u64, Xxh3Builder>::with_hasher(b, Verify::All).ok()?;
        Some(static_answers(&v))
    });
}

/// `decode_quotient`: `QuotientFilter<u64>` and its view; after decoding, its lookups agree
/// with its batch and counts, and inserts, removes, a union with itself, a resize and a shrink keep
/// every copy it held (no false negative, exact length).
pub fn decode_quotient(data: &[u8]) {
    let view = |b: &[u8]| {
        let v = QuotientFilterRef::<u64, Xxh3Builder>::with_hasher(b, Verify::All).ok()?;
        Some(static_answers(&v))
    };
    let Some(mut f) = decoded::<QuotientFilter<u64>>(data) else {
        assert!(
            view(&AlignedBytes::copy_from(data)).is_none(),
            "the view accepts what the filter refuses"
        );
        return;
    };
    view_agrees(data, view, || static_answers(&f));
    let answers = static_answers(&f);
    assert!(PROBES.zip(&answers).all(|(k, &x)| (f.count(&k) > 0) == x));
    let mut held: HashMap<u64, u64> = HashMap::new();
    for k in PROBES {
        match f.try_insert(&k) {
            Ok(_) => *held.entry(k).or_default() += 1,
            Err(Error::Full { .. }) => break,
            Err(e) => panic!("insert after decoding: {e}"),
        }
    }
    let len = f.len();
    let keeps = |f: &QuotientFilter<u64>, what: &str| {
        assert_eq!(f.len(), len, "{what} changed the length");
        for (k, &c) in &held {
            assert!(f.count(k) >= c, "{what} lost a copy of {k}");
        }
    };
    keeps(&f, "inserting");
    let mut doubled = f.clone();
    if doubled.union_with(&f).is_ok() {
        assert_eq!(
            doubled.len(),
            2 * len,
            "a union with itself doubles the copies"
        );
    }
    if f.resize().is_ok() {
        keeps(&f, "resize");
        if f.shrink().is_ok() {
            keeps(&f, "shrink");
        }
    }
    for k in held.keys() {
        f.remove(k).expect("an inserted key is removed");
    }
    assert_eq!(f.len(), len - held.len() as u64);
}

/// The expandable filter: decoded both ways; its answers and counts agree; keys inserted
/// after decoding (growing it) are found, and removing them gives the length back.
pub fn decode_expandable(data: &[u8]) {
    let Some(mut f) = decoded::<ExpandableFilter<u64>>(data) else {
        return;
    };
    let answers = static_answers(&f);
    assert!(PROBES.zip(&answers).all(|(k, &x)| (f.count(&k) > 0) == x));
    assert!(f.estimated_fpr() <= 1.0);
    let len = f.len();
    let mut held: HashMap<u64, u64> = HashMap::new();
    for k in PROBES {
        match f.try_insert(&k) {
            Ok(_) => *held.entry(k).or_default() += 1,
            // Past the largest table (runs that reach the table's end make it grow: `Full`
            // would be a bug).
            Err(Error::TooLarge { .. }) => break,
            Err(e) => panic!("insert after decoding: {e}"),
        }
    }
    for (k, &c) in &held {
        assert!(f.count(k) >= c, "lost a copy of {k}");
    }
    assert_eq!(f.len(), len + held.values().sum::<u64>());
    for (k, &c) in &held {
        for _ in 0..c {
            f.remove(k).expect("an inserted key is removed");
        }
    }
    assert_eq!(f.len(), len);
}

/// The window filter: decoded both ways, its view agrees (and refuses what it refuses);
/// keys inserted after decoding are all found while they are within the window (a window
/// over time may refuse a full generation), lookups ahead in time never panic.
pub fn decode_window(data: &[u8]) {
    let view = |b: &[u8]| {
        let v = WindowFilterRef::<u64, Xxh3Builder>::with_hasher(b, Verify::All).ok()?;
        let mut answers = static_answers(&v);
        answers.extend(PROBES.map(|k| v.contains_at(&k, v.now().saturating_add(k << 40))));
        Some(answers)
    };
    let Some(mut f) = decoded::<WindowFilter<u64>>(data) else {
        assert!(
            view(&AlignedBytes::copy_from(data)).is_none(),
            "the view accepts what the filter refuses"
        );
        return;
    };
    view_agrees(data, view, || {
        let mut answers = static_answers(&f);
        answers.extend(PROBES.map(|k| f.contains_at(&k, f.now().saturating_add(k << 40))));
        answers
    });
    let window = f.window().min(PROBES.end);
    let mut held = Vec::new();
    for k in PROBES.take(window as usize) {
        match f.try_insert(&k) {
            Ok(_) => held.push(k),
            Err(Error::WindowFull { .. }) => break,
            Err(e) => panic!("insert after decoding: {e}"),
        }
    }
    assert!(
        held.iter().all(|k| f.contains(k)),
        "lost a key inserted within the window"
    );
    f.advance_to(f.now().saturating_add(1));
    assert!(f.estimated_fpr() <= 1.0);
}

/// `decode_redisbloom`: the input as a RedisBloom dump in one buffer (header, then every
/// sub-filter's bytes). Refused with an error, or read to a chain that writes back the same
/// bytes, reads back equal from its `BF.SCANDUMP` chunks, answers its batch as its single
/// lookups, and finds every key inserted after (inserts stop at a full or too large chain).
#[cfg(feature = "redis")]
pub fn decode_redisbloom(data: &[u8]) {
    use bloomkit::redis::{Error as RedisError, RedisBloomChain};
    let Ok(chain) = RedisBloomChain::from_bytes(data) else {
        return;
    };
    assert_eq!(
        chain.to_bytes(),
        data,
        "a dump read writes back other bytes"
    );
    let chunks: Vec<(u64, Vec<u8>)> = chain.chunks().map(|(i, c)| (i, c.to_vec())).collect();
    assert_eq!(
        RedisBloomChain::from_dump(chunks).expect("its own chunks read back"),
        chain
    );
    let mut batched = Vec::new();
    chain.contains_batch(PROBES.map(u64::to_le_bytes), &mut batched);
    assert!(PROBES
        .zip(&batched)
        .all(|(k, &b)| chain.contains(k.to_le_bytes()) == b));
    let _ = chain.info();
    // Inserts within a memory limit: a hostile capacity or growth is refused by the chain
    // itself (`TooLarge`) before it allocates.
    let limit = (data.len() as u64).max(1 << 20) * 4;
    let mut chain = chain.with_max_bytes(limit);
    let mut held = Vec::new();
    for k in PROBES {
        match chain.insert(k.to_le_bytes()) {
            Ok(_) => held.push(k),
            Err(
                RedisError::Full { .. }
                | RedisError::Filter(_)
                | RedisError::Corrupt { .. }
                | RedisError::TooLarge { .. },
            ) => break,
            Err(e) => panic!("insert after decoding: {e}"),
        }
        let bytes: usize = chain.links().iter().map(|l| l.as_bytes().len()).sum();
        assert!(
            bytes as u64 <= limit,
            "{bytes} bytes past a limit of {limit}"
        );
    }
    for k in held {
        assert!(chain.contains(k.to_le_bytes()), "lost {k}");
    }
}

/// `decode_jvm`: the input as Guava's and as Spark's Bloom filter bytes. Each decoder
/// refuses it with an error or reads a filter that writes back the same bytes, that the
/// stream reader reads alike (and no further), that `JvmFormat` names, whose batch answers
/// as its single lookups, and that finds every key put after.
#[cfg(feature = "jvm")]
pub fn decode_jvm(data: &[u8]) {
    use bloomkit::jvm::guava::{funnel, GuavaBloomFilter};
    use bloomkit::jvm::spark::SparkBloomFilter;
    use bloomkit::jvm::JvmFormat;
    type Guava = GuavaBloomFilter<funnel::Long>;
    let sniffed = JvmFormat::sniff(data);
    if let Some(format) = sniffed {
        assert_eq!(JvmFormat::peek(data), Some((format, data.len() as u64)));
    }
    let keys: Vec<i64> = PROBES.map(|k| k as i64).collect();
    match Guava::from_bytes(data) {
        Ok(mut g) => {
            assert!(matches!(sniffed, Some(JvmFormat::Guava(_))), "{sniffed:?}");
            assert_eq!(
                g.to_bytes(),
                data,
                "a Guava filter read writes back other bytes"
            );
            assert_eq!(read_no_further(data, |r| Guava::read_from(r)), g);
            let mut batch = Vec::new();
            g.contains_batch(&keys, &mut batch);
            assert!(keys
                .iter()
                .zip(&batch)
                .all(|(k, &b)| g.might_contain(k) == b));
            let _ = (g.expected_fpp(), g.approximate_element_count());
            for k in &keys {
                g.put(k);
            }
            assert!(
                keys.iter().all(|k| g.might_contain(k)),
                "lost a key put after reading"
            );
        }
        Err(e) => assert!(
            !matches!(sniffed, Some(JvmFormat::Guava(_))),
            "named Guava's but refused: {e}"
        ),
    }
    match SparkBloomFilter::from_bytes(data) {
        Ok(mut s) => {
            assert!(matches!(sniffed, Some(JvmFormat::Spark(_))), "{sniffed:?}");
            assert_eq!(
                s.to_bytes(),
                data,
                "a Spark filter read writes back other bytes"
            );
            assert_eq!(read_no_further(data, |r| SparkBloomFilter::read_from(r)), s);
            let mut batch = Vec::new();
            s.contains_batch(&keys, &mut batch);
            assert!(keys
                .iter()
                .zip(&batch)
                .all(|(k, &b)| s.might_contain(k) == b));
            let _ = (s.expected_fpp(), s.approximate_element_count());
            for k in &keys {
                s.put(k);
            }
            assert!(
                keys.iter().all(|k| s.might_contain(k)),
                "lost a key put after reading"
            );
        }
        // A header with a hash count past what bloomkit reads is still named Spark's (so
        // the command says what is wrong with it), and refused for that alone.
        Err(e) => assert!(
            !matches!(sniffed, Some(JvmFormat::Spark(_)))
                || matches!(e, bloomkit::jvm::Error::HashCount(_)),
            "named Spark's but refused: {e}"
        ),
    }
}

/// What a stream reader reads from `data` followed by more bytes: it must read the filter
/// and stop where `data` ends.
#[cfg(feature = "jvm")]
fn read_no_further<F, E: Debug>(
    data: &[u8],
    read: impl FnOnce(&mut std::io::Cursor<Vec<u8>>) -> Result<F, E>,
) -> F {
    let mut stream = std::io::Cursor::new([data, b"more"].concat());
    let f = read(&mut stream).expect("the stream reader reads what the decoder read");
    assert_eq!(stream.position(), data.len() as u64, "read past the filter");
    f
}

/// A static filter's (or view's) answers on [`PROBES`], checked against its batch.
fn static_answers<F: Lookup<Key = u64>>(f: &F) -> Vec<bool> {
    let mut batch = Vec::new();
    f.contains_batch(PROBES, &mut batch);
    assert!(PROBES.zip(&batch).all(|(k, &x)| f.contains(&k) == x));
    let _ = (f.estimated_len(), f.estimated_fpr(), f.target_fpr());
    batch
}

/// A static filter: decoded both ways, its view agrees (and refuses what it refuses), its
/// lookups and estimates run.
fn decode_static<F>(data: &[u8], view: impl Fn(&[u8]) -> Option<Vec<bool>>)
where
    F: Lookup<Key = u64> + Codec + PartialEq + Debug + Serialize + DeserializeOwned,
{
    match decoded::<F>(data) {
        Some(f) => view_agrees(data, &view, || static_answers(&f)),
        None => assert!(view(&AlignedBytes::copy_from(data)).is_none()),
    }
}

/// A filter with a zero-copy view: decoded both ways, the view (`view`: its answers on
/// [`PROBES`], or `None` if it refuses the bytes) agrees with the filter, and refuses what
/// the filter refuses.
fn decode_with_view<F>(data: &[u8], view: impl Fn(&[u8]) -> Option<Vec<bool>>)
where
    F: Filter<Key = u64> + Codec + Union + Intersection + Clone + PartialEq + Debug,
    F: Serialize + DeserializeOwned,
{
    let f = decoded::<F>(data);
    if let Some(f) = &f {
        view_agrees(data, &view, || PROBES.map(|k| f.contains(&k)).collect());
    } else {
        let aligned = AlignedBytes::copy_from(data);
        assert!(
            view(&aligned).is_none(),
            "the view accepts what the filter refuses"
        );
    }
    if let Some(f) = f {
        f.clone()
            .intersect_with(&f)
            .expect("a filter intersects with itself");
        after_decoding(f);
    }
}

fn decode_counting_as<C: Counter>(data: &[u8]) {
    if let Some(mut f) = decoded::<CountingBloomFilter<u64, C>>(data) {
        for k in PROBES {
            if f.contains(&k) {
                // Only keys that are (or may be) present can be removed; the filter refuses
                // the others.
                let _ = f.remove(&k);
            }
        }
        let _ = f.to_classic();
        after_decoding(f);
    }
}

/// `decode_counting`: `CountingBloomFilter<u64, C>` for each counter width.
pub fn decode_counting(data: &[u8]) {
    decode_counting_as::<U4>(data);
    decode_counting_as::<u8>(data);
    decode_counting_as::<u16>(data);
    decode_counting_as::<u32>(data);
}

/// `decode_scalable`: `ScalableBloomFilter<u64>`, then inserts that make it grow.
pub fn decode_scalable(data: &[u8]) {
    if let Some(mut f) = decoded::<ScalableBloomFilter<u64>>(data) {
        let _ = (f.capacity(), f.len(), f.num_slices(), f.fpr_bound());
        for k in 0..256u64 {
            if f.try_insert(&k).is_ok() {
                assert!(f.contains(&k), "false negative after decoding: {k}");
            }
        }
        after_decoding(f);
    }
}

/// `decode_multi`: `MultiFilter<(u64, u64, u64)>` (and as dynamic records), then inserts
/// and every kind of query of what was inserted.
pub fn decode_multi(data: &[u8]) {
    if let Some(f) = decoded::<MultiFilter<Vec<u64>>>(data) {
        let arity = f.arity();
        let mut f = f;
        for k in 0..16u64 {
            let record: Vec<u64> = (0..arity as u64).map(|i| k * 7 + i).collect();
            f.try_insert(&record)
                .expect("a record of the filter's arity");
            assert!(
                f.contains(&record),
                "false negative after decoding: {record:?}"
            );
            for (i, v) in record.iter().enumerate() {
                let q = f.query().try_attr(i, v).expect("an attribute in range");
                assert!(q.contains(), "attribute {i} of {record:?} lost");
            }
        }
        let _ = (f.parts(), f.predicted_fpr(&[0]), f.estimated_fpr_of(&[0]));
    }
    // The view answers every kind of query as the owned filter does, and refuses what it
    // refuses.
    let view = |bytes: &[u8]| {
        let v = MultiFilterRef::<(u64, u64, u64)>::from_bytes(bytes).ok()?;
        Some(multi_answers(|r| v.contains(r), |i, x| match i {
            0 => v.query().attr::<0>(x).contains(),
            1 => v.query().attr::<1>(x).attr::<2>(x).contains(),
            _ => v.query().attr::<0>(x).attr::<2>(x).contains(),
        }))
    };
    match decoded::<MultiFilter<(u64, u64, u64)>>(data) {
        Some(f) => {
            view_agrees(data, view, || {
                multi_answers(|r| f.contains(r), |i, x| match i {
                    0 => f.query().attr::<0>(x).contains(),
                    1 => f.query().attr::<1>(x).attr::<2>(x).contains(),
                    _ => f.query().attr::<0>(x).attr::<2>(x).contains(),
                })
            });
            after_decoding(RecordKeys(f));
        }
        None => assert!(
            view(&AlignedBytes::copy_from(data)).is_none(),
            "the view accepts what the filter refuses"
        ),
    }
}

/// A multi-attribute filter's answers on [`PROBES`]: whole records, then three kinds of
/// query (one attribute, two, two with the first) by `query(kind, value)`.
fn multi_answers(
    contains: impl Fn(&(u64, u64, u64)) -> bool,
    query: impl Fn(usize, &u64) -> bool,
) -> Vec<bool> {
    PROBES
        .map(|k| contains(&record(k)))
        .chain((0..3).flat_map(|i| PROBES.map(move |k| (i, k))).map(|(i, k)| query(i, &k)))
        .collect()
}

/// A multi-attribute filter keyed by `u64` (the record `(k, k % 13, k % 7)`), so that the
/// checks written for `u64` filters apply.
#[derive(Clone, Debug, PartialEq)]
struct RecordKeys(MultiFilter<(u64, u64, u64)>);

fn record(k: u64) -> (u64, u64, u64) {
    (k, k % 13, k % 7)
}

impl LookupCore for RecordKeys {
    fn contains_hash(&self, hash: u64) -> bool {
        self.0.contains_hash(hash)
    }
    fn estimated_len(&self) -> f64 {
        self.0.estimated_len()
    }
    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
    fn target_fpr(&self) -> Option<f64> {
        LookupCore::target_fpr(&self.0)
    }
    fn estimated_fpr(&self) -> f64 {
        LookupCore::estimated_fpr(&self.0)
    }
}

impl FilterCore for RecordKeys {
    type InsertError = Error;
    fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        self.0.try_insert_hash(hash)
    }
    fn clear(&mut self) {
        self.0.clear();
    }
}

impl Lookup for RecordKeys {
    type Key = u64;
    fn hash_key(&self, k: &u64) -> u64 {
        self.0.hash_key(&record(*k))
    }
    fn contains(&self, k: &u64) -> bool {
        self.0.contains(&record(*k))
    }
}

impl Filter for RecordKeys {
    fn try_insert(&mut self, k: &u64) -> Result<bool, Error> {
        self.0.try_insert(&record(*k))
    }
}

impl Union for RecordKeys {
    fn union_with(&mut self, other: &Self) -> Result<(), Error> {
        self.0.union_with(&other.0)
    }
}

fn decode_bitmap_as<K>(data: &[u8], key: fn(u64) -> K)
where
    K: bloomkit::bitmap::Key,
{
    let view = |bytes: &[u8]| {
        let v = bloomkit::bitmap::BitmapRef::<K>::with_verify(bytes, Verify::All).ok()?;
        Some(PROBES.map(key).map(|k| v.contains(&k)).collect())
    };
    let Some(mut b) = decoded::<Bitmap<K>>(data) else {
        assert!(
            view(&AlignedBytes::copy_from(data)).is_none(),
            "the view accepts what the bitmap refuses"
        );
        return;
    };
    view_agrees(data, view, || {
        PROBES.map(key).map(|k| b.contains(&k)).collect()
    });
    {
        let _ = (
            b.len(),
            b.min(),
            b.max(),
            b.rank(key(7)),
            b.select(3),
            b.capacity(),
        );
        for k in PROBES.map(key) {
            if b.try_insert(&k).is_ok() {
                assert!(b.contains(&k));
            }
        }
        let copy = b.clone();
        b.union_with(&copy).expect("a bitmap unites with itself");
        assert_eq!(b, copy);
        assert_eq!(b.iter().count() as u64, b.len());
    }
}

/// `decode_bitmap`: bitmaps of a signed and two unsigned key types.
pub fn decode_bitmap(data: &[u8]) {
    decode_bitmap_as::<i16>(data, |k| k as i16 - 32);
    decode_bitmap_as::<u32>(data, |k| k as u32 + 1_000);
    decode_bitmap_as::<u64>(data, |k| k);
}

fn bincode_as<F>(data: &[u8])
where
    F: Serialize + DeserializeOwned + PartialEq + Debug,
{
    // A limit, as for any untrusted bincode: a hostile length cannot allocate past it.
    let config = bincode::config::standard().with_limit::<{ 1 << 20 }>();
    if let Ok((f, _)) = bincode::serde::decode_from_slice::<F, _>(data, config) {
        let bytes = bincode::serde::encode_to_vec(&f, config).expect("re-encodes");
        let (g, _) = bincode::serde::decode_from_slice::<F, _>(&bytes, config).expect("re-decodes");
        assert_eq!(f, g);
    }
}

/// `serde_bincode`: the serde representation of every variant, through bincode.
pub fn serde_bincode(data: &[u8]) {
    let Some((&which, data)) = data.split_first() else {
        return;
    };
    match which % 6 {
        0 => bincode_as::<BloomFilter<u64>>(data),
        1 => bincode_as::<BlockedBloomFilter<u64>>(data),
        2 => bincode_as::<CountingBloomFilter<u64>>(data),
        3 => bincode_as::<CountingBloomFilter<u64, u16>>(data),
        4 => bincode_as::<ScalableBloomFilter<u64>>(data),
        _ => bincode_as::<Bitmap<i32>>(data),
    }
}

/// An operation of `ops_*`, from 3 input bytes: an opcode and a 16-bit key (few distinct
/// keys, so inserts, removes and lookups meet).
#[derive(Debug, Clone, Copy)]
enum Op {
    Insert(u16),
    Remove(u16),
    Merge(u16),
    RoundTrip,
    Serde,
    Clear,
}

fn ops(data: &[u8]) -> impl Iterator<Item = Op> + '_ {
    data.chunks_exact(3).map(|c| {
        let key = u16::from_le_bytes([c[1], c[2]]) % 512;
        match c[0] % 16 {
            0..=7 => Op::Insert(key),
            8..=10 => Op::Remove(key),
            11 | 12 => Op::Merge(key),
            13 => Op::RoundTrip,
            14 => Op::Serde,
            _ => Op::Clear,
        }
    })
}

/// Runs the operations of `data` on `make()` and a model. `remove` is the variant's
/// removal (`None`: it has none); `exact` says the filter must agree with the model on
/// every key, not only on members (and holds each key once).
fn run_ops<F>(data: &[u8], make: impl FnOnce() -> F, remove: Option<fn(&mut F, u16)>, exact: bool)
where
    F: Filter<Key = u16> + Union + Codec + Serialize + DeserializeOwned + PartialEq + Debug + Clone,
{
    // Built once and cloned: a blocked plan costs more to compute than the rest of an
    // execution (it was most of ops_blocked's time when each merge built its own).
    let empty = make();
    let mut f = empty.clone();
    let mut model: HashMap<u16, u32> = HashMap::new();
    // A filter with deletes counts repeats; an exact set holds a key once.
    let add = |model: &mut HashMap<u16, u32>, k: u16| {
        let n = model.entry(k).or_default();
        *n = if exact { 1 } else { *n + 1 };
    };
    for op in ops(data) {
        match op {
            Op::Insert(k) => {
                if f.try_insert(&k).is_ok() {
                    add(&mut model, k);
                }
            }
            Op::Remove(k) => {
                // Only what was inserted is removed (the contract of a counting filter).
                if let (Some(remove), Some(n)) = (remove, model.get_mut(&k)) {
                    remove(&mut f, k);
                    *n -= 1;
                    if *n == 0 {
                        model.remove(&k);
                    }
                }
            }
            Op::Merge(k) => {
                let mut other = empty.clone();
                if other.try_insert(&k).is_ok() && f.union_with(&other).is_ok() {
                    add(&mut model, k);
                }
            }
            Op::RoundTrip => {
                let bytes = f.to_bytes();
                f = F::from_bytes(&bytes).expect("round trip");
                let mut streamed = Vec::new();
                f.write_to(&mut streamed).expect("write_to a Vec");
                assert_eq!(streamed, bytes);
            }
            Op::Serde => {
                let config = bincode::config::standard();
                let bytes = bincode::serde::encode_to_vec(&f, config).expect("encodes");
                let (g, _) =
                    bincode::serde::decode_from_slice::<F, _>(&bytes, config).expect("decodes");
                assert_eq!(g, f);
                f = g;
            }
            Op::Clear => {
                f.clear();
                model.clear();
            }
        }
        // After an insert, its key; after anything that rewrites the filter, every key.
        match op {
            Op::Insert(k) if model.contains_key(&k) => {
                assert!(f.contains(&k), "false negative for {k} after inserting it");
            }
            Op::Insert(_) => {}
            _ => check_all(&f, &model, exact, op),
        }
    }
    check_all(&f, &model, exact, Op::Clear);
}

/// No member of `model` is missing from `f` (and, if `exact`, no other key is present).
fn check_all<F: Filter<Key = u16>>(f: &F, model: &HashMap<u16, u32>, exact: bool, op: Op) {
    for k in model.keys() {
        assert!(f.contains(k), "false negative for {k} after {op:?}");
    }
    if exact {
        let mut member = [false; 512];
        for &k in model.keys() {
            member[usize::from(k)] = true;
        }
        for (k, &member) in (0..512u16).zip(&member) {
            assert_eq!(f.contains(&k), member, "bitmap wrong on {k}");
        }
    }
}

/// `ops_classic`.
pub fn ops_classic(data: &[u8]) {
    run_ops(
        data,
        || {
            BloomFilter::<u16>::builder(64, 0.05)
                .seed(1)
                .build()
                .unwrap()
        },
        None,
        false,
    );
}

/// `ops_blocked`.
pub fn ops_blocked(data: &[u8]) {
    run_ops(
        data,
        || {
            BlockedBloomFilter::<u16>::builder(64, 0.05)
                .seed(1)
                .build()
                .unwrap()
        },
        None,
        false,
    );
}

/// `ops_counting`: 4-bit counters, which saturate within a short input.
pub fn ops_counting(data: &[u8]) {
    run_ops(
        data,
        || {
            CountingBloomFilter::<u16>::builder(64, 0.05)
                .seed(1)
                .build()
                .unwrap()
        },
        Some(|f: &mut CountingBloomFilter<u16>, k| f.remove(&k).expect("removing an inserted key")),
        false,
    );
}

/// `ops_scalable`: a small first slice, so the sequence makes it grow.
pub fn ops_scalable(data: &[u8]) {
    run_ops(
        data,
        || {
            ScalableBloomFilter::<u16>::builder(4, 0.05)
                .seed(1)
                .build()
                .unwrap()
        },
        None,
        false,
    );
}

/// `ops_bitmap`: exact, with removals.
pub fn ops_bitmap(data: &[u8]) {
    run_ops(
        data,
        || Bitmap::<u16>::new(0..=511).unwrap(),
        Some(|b: &mut Bitmap<u16>, k| b.remove(&k).expect("removing a key in range")),
        true,
    );
}
