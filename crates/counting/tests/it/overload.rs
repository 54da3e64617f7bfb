//! Overload and overflow: counters never wrap, saturated counters stick, and no sequence of
//! removals of inserted items creates a false negative.

use bloomkit_core::Error;
use bloomkit_core::Xxh3Builder;
use bloomkit_counting::{CountingBloomFilter, U4};
use bloomkit_testkit::{member, non_member};

#[test]
fn twenty_times_overload_then_delete_half() {
    // Designed for 1,000 items, loaded with 20,000: with 4-bit counters many saturate.
    let mut f = CountingBloomFilter::new(1_000, 0.01).unwrap();
    for i in 0..20_000 {
        f.insert(&member(i));
    }
    let saturated = f.saturated_counters();
    println!(
        "20x overload: {saturated} of {} counters saturated ({:.1}%)",
        f.num_counters(),
        saturated as f64 * 100.0 / f.num_counters() as f64
    );
    assert!(
        saturated > 0,
        "the overload test must actually saturate counters"
    );
    for i in (0..20_000).step_by(2) {
        f.remove(&member(i)).unwrap();
    }
    let lost: Vec<u64> = (1..20_000)
        .step_by(2)
        .filter(|&i| !f.contains(&member(i)))
        .collect();
    assert!(
        lost.is_empty(),
        "false negatives after deleting half: {lost:?}"
    );
    assert_eq!(
        f.saturated_counters(),
        saturated,
        "saturated counters must stick"
    );
}

#[test]
fn a_counter_driven_past_its_ceiling_sticks() {
    let mut f = CountingBloomFilter::new(1_000, 0.01).unwrap();
    for _ in 0..100 {
        f.insert("hot");
    }
    assert_eq!(
        f.count("hot"),
        15,
        "a 4-bit counter must stop at 15, not wrap"
    );
    let k = u64::from(f.num_hashes());
    assert_eq!(f.saturated_counters(), k);
    // Removing it as many times as it went in cannot take the counters down: they stuck.
    for _ in 0..100 {
        f.remove("hot").unwrap();
    }
    assert!(f.contains("hot"));
    assert_eq!(f.count("hot"), 15);

    let mut g = CountingBloomFilter::<str>::builder(1_000, 0.01)
        .counter::<u8>()
        .seed(0)
        .build()
        .unwrap();
    for _ in 0..300 {
        g.insert("hot");
    }
    assert_eq!(g.count("hot"), 255);
    for _ in 0..299 {
        g.remove("hot").unwrap();
    }
    assert!(g.contains("hot"), "a saturated u8 counter went down");
}

#[test]
fn removing_a_key_with_a_zero_counter_is_refused_and_changes_nothing() {
    let mut f = CountingBloomFilter::new(1_000, 0.01).unwrap();
    for i in 0..500 {
        f.insert(&member(i));
    }
    let before = f.to_bytes();
    let mut refused = 0;
    for i in 0..2_000 {
        let k = non_member(i);
        if !f.contains(&k) {
            assert_eq!(f.remove(&k), Err(Error::NotPresent));
            refused += 1;
        }
    }
    assert!(refused > 1_900);
    assert_eq!(f.to_bytes(), before, "a refused removal changed the filter");
    assert!((0..500).all(|i| f.contains(&member(i))));
}

#[test]
fn removing_everything_empties_the_filter() {
    let mut f = CountingBloomFilter::<u64>::builder(1_000, 0.01)
        .counter::<u8>()
        .seed(9)
        .build()
        .unwrap();
    for i in 0..1_000 {
        f.insert(&member(i));
        f.insert(&member(i));
    }
    for i in 0..1_000 {
        f.remove(&member(i)).unwrap();
        f.remove(&member(i)).unwrap();
    }
    assert!(f.is_empty());
    assert_eq!(f.nonzero_counters(), 0);
    assert_eq!(
        f,
        CountingBloomFilter::<u64>::builder(1_000, 0.01)
            .counter::<u8>()
            .seed(9)
            .build()
            .unwrap()
    );
}

#[test]
fn classic_conversion_answers_identically() {
    let mut f = CountingBloomFilter::<u64>::builder(10_000, 0.01)
        .counter::<U4>()
        .seed(5)
        .build()
        .unwrap();
    for i in 0..10_000 {
        f.insert(&member(i));
    }
    for i in 0..5_000 {
        f.remove(&member(i)).unwrap();
    }
    let c = f.to_classic().unwrap();
    assert_eq!(
        (c.num_bits(), c.num_hashes()),
        (f.num_counters(), f.num_hashes())
    );
    assert_eq!(c.design(), f.design());
    for i in 0..10_000 {
        assert_eq!(c.contains(&member(i)), f.contains(&member(i)));
        assert_eq!(c.contains(&non_member(i)), f.contains(&non_member(i)));
    }
    // The same (n, p) sizes both alike.
    let classic = bloomkit_classic::BloomFilter::<u64>::builder(10_000, 0.01)
        .seed(5)
        .build()
        .unwrap();
    assert_eq!(
        (classic.num_bits(), classic.num_hashes()),
        (f.num_counters(), f.num_hashes())
    );
    println!(
        "memory at n = 10,000, p = 1%: counting (4-bit) {} bytes, classic {} bytes",
        f.heap_bytes(),
        c.heap_bytes()
    );
}

#[test]
fn memory_per_item_at_one_percent() {
    fn per_item<C: bloomkit_counting::Counter>() -> f64 {
        CountingBloomFilter::<u64>::builder(1_000_000, 0.01)
            .counter::<C>()
            .seed(0)
            .build()
            .unwrap()
            .heap_bytes() as f64
            / 1e6
    }
    let rows = [
        ("4-bit", per_item::<U4>()),
        ("u8", per_item::<u8>()),
        ("u16", per_item::<u16>()),
        ("u32", per_item::<u32>()),
    ];
    for (name, bytes) in rows {
        println!("{name}: {bytes:.2} bytes per item at p = 1%");
    }
    assert!((rows[0].1 - 9.593 / 2.0).abs() < 0.01);
    assert!((rows[1].1 - 9.593).abs() < 0.01);
    assert!((rows[2].1 - 2.0 * 9.593).abs() < 0.01);
    assert!((rows[3].1 - 4.0 * 9.593).abs() < 0.01);
}

/// `count` never reads below `min(true count, ceiling)`, also when a key's probes coincide
/// on a counter that saturates. Regression: a saturated counter was divided by the number
/// of the key's probes on it, so one position probed 4 times read 15 / 4 = 3 after 4
/// inserts, and with 64 coinciding probes a key inserted once read 15 / 64 = 0.
#[test]
fn count_of_coinciding_probes_on_a_saturated_counter() {
    let hasher = Xxh3Builder::default;
    // One counter: every probe of every key lands on it.
    let mut f = CountingBloomFilter::<u64, U4>::with_counters_and_hasher(1, 4, hasher()).unwrap();
    for n in 1..=20u64 {
        f.insert(&1u64);
        assert!(
            f.count(&1u64) >= n.min(15),
            "after {n} inserts: {}",
            f.count(&1u64)
        );
    }
    let mut f = CountingBloomFilter::<u64, U4>::with_counters_and_hasher(1, 64, hasher()).unwrap();
    f.insert(&1u64);
    assert_eq!(f.count(&1u64), 15, "a stuck counter reads as its ceiling");
    assert!(f.contains(&1u64));
    let mut f = CountingBloomFilter::<u64, u8>::with_counters_and_hasher(1, 64, hasher()).unwrap();
    for n in 1..=5u64 {
        f.insert(&1u64);
        assert!(f.count(&1u64) >= n.min(255), "u8, after {n} inserts");
    }
}

/// The documented hazard of `remove` (its `# Correctness` section), pinned so the docs
/// cannot drift: a stranger that tests positive is accepted by `remove`, and the removal
/// takes a real member with it. A stranger that one counter shows absent is refused and
/// changes nothing.
#[test]
fn removing_a_stranger_that_tests_positive_loses_a_member() {
    // A small filter holding one member: find strangers that test positive (all their
    // counters are the member's) and strangers that do not.
    let mut f =
        CountingBloomFilter::<u64, u8>::with_counters_and_hasher(8, 2, Xxh3Builder::default())
            .unwrap();
    let member = 1u64;
    f.insert(&member);
    let before = f.clone();
    let refused = (0..).map(non_member).find(|k| !f.contains(k)).unwrap();
    assert_eq!(f.remove(&refused), Err(Error::NotPresent));
    assert_eq!(f, before, "a refused removal changes nothing");
    // A stranger whose counters could all be its own (some that test positive are still
    // refused: two probes on one counter of 1 cannot be an inserted key's).
    let impostor = (0..)
        .map(non_member)
        .find(|k| f.contains(k) && f.clone().remove(k).is_ok())
        .unwrap();
    assert!(
        f.remove(&impostor).is_ok(),
        "the filter cannot tell a false positive"
    );
    assert!(
        !f.contains(&member),
        "the member was lost: the precondition in remove's docs is real"
    );
}
