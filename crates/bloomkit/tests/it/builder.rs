//! The one builder: the same chain configures every Bloom variant, each
//! setting is checked at `build` and nowhere else, and a memory limit is exact.

use bloomkit::build::{Builder, FromSettings};
use bloomkit::counting::U4;
use bloomkit::prelude::*;
use bloomkit::Limit;
use bloomkit_testkit::{ensure, forall, Outcome};

/// A `build` with a limit of exactly the filter's heap succeeds, one byte less fails with
/// `OverLimit` naming both numbers, and nothing else about the filter changes.
fn check_byte_limit<F>(items: u64, fpr: f64) -> Outcome
where
    F: FromSettings + FilterCore + PartialEq + std::fmt::Debug,
    F::Hasher: Default,
{
    let free = Builder::<F>::new(items, fpr).build();
    let Ok(free) = free else {
        // An invalid point fails the same way with or without a limit.
        let with_limit = Builder::<F>::new(items, fpr).max_bytes(u64::MAX).build();
        // (Compared as messages: `InvalidFpr(NaN)` is not equal to itself.)
        let message = |e: Option<Error>| e.map(|e| e.to_string());
        return ensure(message(with_limit.err()) == message(free.err()), || {
            format!("({items}, {fpr}): a limit changed the error")
        });
    };
    let heap = free.heap_bytes() as u64;
    let at = Builder::<F>::new(items, fpr).max_bytes(heap).build();
    ensure(
        at.as_ref().map(LookupCore::heap_bytes) == Ok(free.heap_bytes()),
        || format!("({items}, {fpr}): a limit of exactly {heap} bytes gave {at:?}"),
    )?;
    let under = Builder::<F>::new(items, fpr).max_bytes(heap - 1).build();
    let expected = Error::OverLimit {
        what: Limit::Bytes,
        needed: heap,
        limit: heap - 1,
    };
    ensure(under.as_ref().err() == Some(&expected), || {
        format!(
            "({items}, {fpr}): a limit of {} bytes gave {under:?}",
            heap - 1
        )
    })?;
    // The smallest limits: nothing fits in none, one byte only a filter of one byte.
    for limit in [0, 1].into_iter().filter(|&l| l < heap) {
        let tiny = Builder::<F>::new(items, fpr).max_bytes(limit).build();
        ensure(
            matches!(tiny, Err(Error::OverLimit { needed, .. }) if needed == heap),
            || format!("({items}, {fpr}): a limit of {limit} bytes gave {tiny:?}"),
        )?;
    }
    Ok(())
}

/// The rates the builder sweeps: 0.5 down to 1e-7, the smallest the format's floats hold
/// (the smallest normal, a subnormal, the smallest positive), and two invalid ones.
fn hostile_rate(r: u8) -> f64 {
    match r % 20 {
        14 => f64::NAN,
        15 => 1.5,
        16 => f64::MIN_POSITIVE,
        17 => f64::MIN_POSITIVE / 4.0,
        18 => 5e-324,
        19 => 1e-300,
        r => 0.5 / 3f64.powi(i32::from(r)),
    }
}

#[test]
fn a_byte_limit_is_exact_for_every_variant() {
    forall(200, |&(items, rate): &(u16, u8)| {
        // Items 0..65535 (0 is an error).
        let items = u64::from(items);
        let fpr = hostile_rate(rate);
        check_byte_limit::<BloomFilter<u64>>(items, fpr)?;
        check_byte_limit::<BlockedBloomFilter<u64>>(items, fpr)?;
        check_byte_limit::<SimdBlockFilter<u64>>(items, fpr)?;
        check_byte_limit::<CountingBloomFilter<u64>>(items, fpr)?;
        check_byte_limit::<CountingBloomFilter<u64, u8>>(items, fpr)?;
        check_byte_limit::<CountingBloomFilter<u64, u32>>(items, fpr)?;
        check_byte_limit::<SplitBlockFilter<u64>>(items, fpr)?;
        check_byte_limit::<AtomicBloomFilter<u64>>(items, fpr)?;
        check_byte_limit::<AtomicBlockedBloomFilter<u64>>(items, fpr)?;
        check_byte_limit::<AtomicCountingBloomFilter<u64>>(items, fpr)?;
        check_byte_limit::<ScalableBloomFilter<u64>>(items, fpr)?;
        check_byte_limit::<QuotientFilter<u64>>(items, fpr)?;
        check_byte_limit::<ExpandableFilter<u64>>(items, fpr)
    });
}

/// Hashes 0 and `u64::MAX` (the first and last home slot or block) and one key, each
/// inserted `copies` times: every insert that succeeds leaves the key present, and a
/// filter that can grow (`grows`) never refuses one.
fn check_repeats<F>(items: u64, fpr: f64, copies: u32, grows: bool) -> Outcome
where
    F: FromSettings + FilterCore,
    F::Hasher: Default,
{
    let Ok(mut f) = Builder::<F>::new(items, fpr).build() else {
        return Ok(()); // invalid settings: the byte-limit property covers their errors
    };
    for hash in [0, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
        for copy in 0..copies {
            match f.try_insert_hash(hash) {
                Ok(_) => {}
                Err(_) if !grows => break, // a fixed size may be full: typed, not a panic
                Err(e) => {
                    return Err(format!(
                        "({items}, {fpr}): copy {copy} of hash {hash:#x} refused: {e}"
                    ))
                }
            }
            ensure(f.contains_hash(hash), || {
                format!("({items}, {fpr}): hash {hash:#x} lost after copy {copy}")
            })?;
        }
    }
    Ok(())
}

#[test]
fn repeated_keys_and_extreme_hashes_are_kept_by_every_variant() {
    forall(60, |&(items, rate, copies): &(u8, u8, u16)| {
        let items = u64::from(items) + 1;
        let fpr = hostile_rate(rate);
        // Up to 4,096 copies: many times the size asked for, so growth and full tables
        // are reached.
        let copies = u32::from(copies % 4_096) + 1;
        check_repeats::<BloomFilter<u64>>(items, fpr, copies, true)?;
        check_repeats::<BlockedBloomFilter<u64>>(items, fpr, copies, true)?;
        check_repeats::<SimdBlockFilter<u64>>(items, fpr, copies, true)?;
        check_repeats::<SplitBlockFilter<u64>>(items, fpr, copies, true)?;
        check_repeats::<CountingBloomFilter<u64>>(items, fpr, copies, true)?;
        check_repeats::<ScalableBloomFilter<u64>>(items, fpr, copies, true)?;
        check_repeats::<QuotientFilter<u64>>(items, fpr, copies, false)?;
        check_repeats::<ExpandableFilter<u64>>(items, fpr, copies, true)
    });
}

#[test]
fn new_is_the_builder_with_defaults() {
    assert_eq!(
        BloomFilter::<str>::new(5_000, 0.001).unwrap(),
        BloomFilter::builder(5_000, 0.001).build().unwrap()
    );
    assert_eq!(
        CountingBloomFilter::<str>::new(5_000, 0.001).unwrap(),
        CountingBloomFilter::builder(5_000, 0.001)
            .counter::<U4>()
            .seed(0)
            .build()
            .unwrap()
    );
    assert_eq!(
        ScalableBloomFilter::<str>::new(5_000, 0.001).unwrap(),
        ScalableBloomFilter::builder(5_000, 0.001)
            .growth(2)
            .tightening(0.85)
            .build()
            .unwrap()
    );
}

#[test]
fn seed_and_hasher_reach_every_variant() {
    let seeded = Xxh3Builder::with_seed(7);
    let key = "https://example.com/";
    let want = std::hash::BuildHasher::hash_one(&seeded, key);
    let classic = BloomFilter::<str>::builder(100, 0.01)
        .seed(7)
        .build()
        .unwrap();
    let blocked = BlockedBloomFilter::<str>::builder(100, 0.01)
        .seed(7)
        .build()
        .unwrap();
    let counting = CountingBloomFilter::<str>::builder(100, 0.01)
        .seed(7)
        .build()
        .unwrap();
    let scalable = ScalableBloomFilter::<str>::builder(100, 0.01)
        .seed(7)
        .build()
        .unwrap();
    assert_eq!(
        [
            classic.hash_key(key),
            blocked.hash_key(key),
            counting.hash_key(key),
            scalable.hash_key(key)
        ],
        [want; 4]
    );
    // Another hasher type changes the filter's type; the settings carry over.
    let std_hasher =
        std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
    let mut f = BloomFilter::<str>::builder(100, 0.01)
        .seed(7)
        .max_bytes(1 << 10)
        .hasher(std_hasher)
        .build()
        .unwrap();
    assert_eq!(f.target_fpr(), Some(0.01));
    f.insert(key);
    assert!(f.contains(key));
    assert_ne!(f.hash_key(key), want);
}

#[test]
fn counter_width_is_a_builder_setting() {
    let mut f = CountingBloomFilter::builder(1_000, 0.01)
        .counter::<u16>()
        .build()
        .unwrap();
    for _ in 0..1_000 {
        f.insert("hot");
    }
    assert_eq!(f.count("hot"), 1_000);
    let mut narrow = CountingBloomFilter::builder(1_000, 0.01).build().unwrap();
    for _ in 0..1_000 {
        narrow.insert("hot");
    }
    assert_eq!(
        narrow.count("hot"),
        15,
        "4-bit counters stick at their ceiling"
    );
}

#[test]
fn growth_settings_are_checked_at_build() {
    let build = |growth: u32, tightening: f64| {
        ScalableBloomFilter::<u64>::builder(100, 0.01)
            .growth(growth)
            .tightening(tightening)
            .build()
            .map(|f| (f.growth(), f.tightening()))
    };
    assert_eq!(build(4, 0.9), Ok((4, 0.9)));
    assert!(matches!(build(1, 0.9), Err(Error::InvalidGrowth { .. })));
    assert!(matches!(build(17, 0.9), Err(Error::InvalidGrowth { .. })));
    assert!(matches!(build(2, 0.4), Err(Error::InvalidGrowth { .. })));
    assert!(matches!(
        build(2, f64::NAN),
        Err(Error::InvalidGrowth { .. })
    ));
    // The order of the calls does not matter: the last value of each setting counts.
    let f = ScalableBloomFilter::<u64>::builder(100, 0.01)
        .growth(1)
        .max_items(10)
        .growth(3)
        .build()
        .unwrap();
    assert_eq!(f.growth(), 3);
}

#[test]
fn an_item_limit_refuses_inserts_past_it() {
    let mut f = ScalableBloomFilter::builder(10, 0.01)
        .max_items(25)
        .build()
        .unwrap();
    for i in 0..25u64 {
        assert_eq!(f.try_insert(&i), Ok(true));
    }
    assert_eq!(
        f.try_insert(&1_000),
        Err(Error::LimitReached {
            what: Limit::Items,
            limit: 25
        })
    );
    assert_eq!(f.len(), 25);
}

#[test]
fn over_limit_says_what_it_needed() {
    let needed = BloomFilter::<str>::new(1_000_000, 0.01)
        .unwrap()
        .heap_bytes();
    assert!((1_190_000..1_200_000).contains(&needed), "{needed}"); // 9.6 bits per item
    let err = BloomFilter::<str>::builder(1_000_000, 0.01)
        .max_bytes(1_000)
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("the filter would need {needed} bytes, over its limit of 1000")
    );
}

/// A growing filter built with a limit of `limit` bytes (from `start` items), filled with
/// `0..` (each key `repeat` times) until it refuses: it never holds more than the limit, the
/// refusal is `LimitReached`, and every key inserted is still found.
fn check_growth_limit<F>(start: u64, limit: u64, repeat: u64) -> Outcome
where
    F: FromSettings<Hasher = Xxh3Builder> + Filter<Key = u64>,
    F::InsertError: Into<Error>,
{
    let Ok(mut f) = Builder::<F>::new(start, 0.01).max_bytes(limit).build() else {
        return Ok(()); // the filter alone is over the limit
    };
    let mut inserted = 0u64;
    'fill: for i in 0u64.. {
        for _ in 0..repeat {
            match f.try_insert(&i).map_err(Into::into) {
                Ok(_) => {}
                Err(Error::LimitReached {
                    what: Limit::Bytes, ..
                }) => break 'fill,
                Err(e) => return Err(format!("unexpected error {e}")),
            }
            ensure(f.heap_bytes() as u64 <= limit, || {
                format!("{} bytes held under a limit of {limit}", f.heap_bytes())
            })?;
        }
        inserted = i + 1;
    }
    // Refused: every member is still found.
    ensure((0..inserted).all(|i| f.contains(&i)), || {
        "a member was lost".into()
    })
}

#[test]
fn a_growing_filter_never_holds_more_than_its_byte_limit() {
    forall(40, |&(start, limit, repeat): &(u8, u16, u8)| {
        let start = u64::from(start) + 1;
        // Up to 16 KiB: a dozen slices or doublings at most, and a few thousand inserts a
        // case; a limit of 1 byte too.
        let limit = (u64::from(limit % 2048) * 8).max(1);
        let repeat = u64::from(repeat % 4) + 1;
        check_growth_limit::<ScalableBloomFilter<u64>>(start, limit, repeat)?;
        check_growth_limit::<ExpandableFilter<u64>>(start, limit, repeat)
    });
}

/// A size refused as too large names a size past the limit it states, in one unit (found:
/// "34359737856 bits is larger than the maximum of 9223372036854775808", "8192 bits ...
/// maximum of 1099511627776").
fn check_too_large<F>(items: u64, fpr: f64) -> Outcome
where
    F: FromSettings,
    F::Hasher: Default,
{
    // A limit, so that a size that fits is refused before it is allocated.
    match Builder::<F>::new(items, fpr).max_bytes(1 << 20).build() {
        Err(e @ Error::TooLarge { size, max, .. }) => {
            ensure(size > max as f64, || format!("({items}, {fpr}): {e}"))
        }
        _ => Ok(()),
    }
}

#[test]
fn too_large_errors_state_a_size_past_their_limit() {
    forall(100, |&(shift, rate): &(u8, u8)| {
        // Items from 2^32 to 2^64 - 1: past what some layouts hold.
        let items = u64::MAX >> (shift % 33);
        let fpr = hostile_rate(rate);
        check_too_large::<BloomFilter<u64>>(items, fpr)?;
        check_too_large::<BlockedBloomFilter<u64>>(items, fpr)?;
        check_too_large::<SimdBlockFilter<u64>>(items, fpr)?;
        check_too_large::<SplitBlockFilter<u64>>(items, fpr)?;
        check_too_large::<CountingBloomFilter<u64>>(items, fpr)?;
        check_too_large::<ScalableBloomFilter<u64>>(items, fpr)?;
        check_too_large::<QuotientFilter<u64>>(items, fpr)?;
        check_too_large::<ExpandableFilter<u64>>(items, fpr)
    });
    // The quotient filter's home slots, by name.
    let e = QuotientFilter::<u64>::new(1 << 50, 0.01).unwrap_err();
    assert!(
        e.to_string()
            .contains("home slots is larger than the maximum of 1099511627776 home slots"),
        "{e}"
    );
}
