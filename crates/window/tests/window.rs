//! The window filter against exact models: no false negative within the window after any
//! sequence, the rate under the target at every checkpoint of a long stream, old keys
//! forgotten, the byte format and the view.

use std::collections::{HashMap, VecDeque};

use bloomkit_core::Error;
use bloomkit_testkit::{
    check_contains_batch, check_filter, ensure, forall, measure_fpr, member, Outcome,
};
use bloomkit_window::WindowFilter;
use quickcheck::{Arbitrary, Gen};

#[test]
fn the_filter_contract() {
    check_filter(|| WindowFilter::<u64>::new(10_000, 0.01).unwrap());
    check_contains_batch(|| WindowFilter::<u64>::new(3_000, 0.01).unwrap());
}

/// A step of a stream over a small universe of keys (so keys recur at every distance).
#[derive(Debug, Clone)]
enum Step {
    Insert(u8),
    Batch(Vec<u8>),
    Clear,
}

impl Arbitrary for Step {
    fn arbitrary(g: &mut Gen) -> Self {
        match u8::arbitrary(g) % 20 {
            0 => Step::Batch(Vec::arbitrary(g)),
            1 if bool::arbitrary(g) => Step::Clear,
            _ => Step::Insert(u8::arbitrary(g)),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        match self {
            Step::Batch(keys) => Box::new(keys.shrink().map(Step::Batch)),
            _ => Box::new(std::iter::empty()),
        }
    }
}

/// Every key of the last `window()` inserts is answered, one at a time and in a batch,
/// after every step; `try_insert` says "new" for every key not among them.
#[test]
fn no_false_negative_within_a_window_of_inserts() {
    for window in [1u64, 5, 40, 300] {
        forall(300, |steps: &Vec<Step>| -> Outcome {
            let mut f = WindowFilter::<u64>::new(window, 0.05).unwrap();
            let held = f.window();
            let mut model: VecDeque<u64> = VecDeque::new();
            let insert =
                |f: &mut WindowFilter<u64>, model: &mut VecDeque<u64>, k: u64| -> Outcome {
                    let was_within = model.iter().rev().take(held as usize).any(|&m| m == k);
                    let new = f.try_insert(&k).map_err(|e| e.to_string())?;
                    ensure(!(new && was_within), || {
                        format!("{k} said new within the window")
                    })?;
                    model.push_back(k);
                    Ok(())
                };
            for step in steps {
                match step {
                    Step::Insert(k) => insert(&mut f, &mut model, u64::from(*k))?,
                    Step::Batch(keys) => {
                        let mut g = f.clone();
                        for &k in keys {
                            insert(&mut f, &mut model, u64::from(k))?;
                        }
                        let keys: Vec<u64> = keys.iter().map(|&k| u64::from(k)).collect();
                        g.try_insert_batch(&keys).map_err(|e| e.to_string())?;
                        ensure(g == f, || "try_insert_batch left another filter".into())?;
                    }
                    Step::Clear => {
                        f.clear();
                        model.clear();
                    }
                }
                let within: Vec<u64> = model.iter().rev().take(held as usize).copied().collect();
                let mut out = Vec::new();
                f.contains_batch(&within, &mut out);
                for (k, batched) in within.iter().zip(out) {
                    ensure(f.contains(k) && batched, || {
                        format!("window {window}: {k} inserted within the last {held} is missing")
                    })?;
                }
            }
            Ok(())
        });
    }
}

/// A step of a timed stream: insert a key after some time, or ask about a key some time
/// ahead.
#[derive(Debug, Clone)]
enum Timed {
    Insert { key: u8, after: u16 },
    Ask { key: u8, ahead: u16 },
}

impl Arbitrary for Timed {
    fn arbitrary(g: &mut Gen) -> Self {
        let after = if u8::arbitrary(g) % 16 == 0 {
            u16::arbitrary(g)
        } else {
            u16::arbitrary(g) % 64
        };
        if u8::arbitrary(g) % 4 == 0 {
            Timed::Ask {
                key: u8::arbitrary(g),
                ahead: after,
            }
        } else {
            Timed::Insert {
                key: u8::arbitrary(g),
                after,
            }
        }
    }
}

/// Over time: every key inserted less than the window before a query's time is answered
/// (at the query's time, ahead of the clock, or at it), whatever the gaps; refused inserts
/// change nothing and are refused only when a generation's inserts are used up.
#[test]
fn no_false_negative_within_a_window_of_time() {
    for (items, span) in [(8u64, 100u64), (200, 1000), (50, 7)] {
        forall(300, |steps: &Vec<Timed>| -> Outcome {
            let mut f = WindowFilter::<u64>::builder(items, 0.05)
                .over_time(span)
                .build()
                .unwrap();
            let mut t = 0u64;
            let mut last: HashMap<u64, u64> = HashMap::new();
            for step in steps {
                match *step {
                    Timed::Insert { key, after } => {
                        t += u64::from(after);
                        let before = f.clone();
                        match f.try_insert_at(&u64::from(key), t) {
                            Ok(_) => {
                                last.insert(u64::from(key), t);
                            }
                            Err(Error::WindowFull { .. }) => {
                                let mut advanced = before.clone();
                                advanced.advance_to(t);
                                ensure(advanced == f, || {
                                    "a refused insert changed the filter".into()
                                })?;
                            }
                            Err(e) => return Err(e.to_string()),
                        }
                    }
                    Timed::Ask { key, ahead } => {
                        let at = t + u64::from(ahead);
                        if let Some(&when) = last.get(&u64::from(key)) {
                            if at - when < span {
                                ensure(f.contains_at(&u64::from(key), at), || {
                                    format!(
                                        "{key} inserted at {when} missing at {at} (window {span})"
                                    )
                                })?;
                            }
                        }
                    }
                }
                for (&k, &when) in &last {
                    if t - when < span {
                        ensure(f.contains(&k), || {
                            format!("{k} inserted at {when} missing at {t}")
                        })?;
                    }
                }
            }
            Ok(())
        });
    }
}

/// The rate stays under the target (within four standard deviations of a measurement) at
/// every checkpoint of a stream ten windows long, and keys older than `forgotten_after`
/// answer "present" no more often than keys never inserted.
#[test]
fn rate_at_every_checkpoint_and_old_keys_forgotten() {
    let window = 20_000u64;
    for fpr in [0.01, 0.05] {
        let mut f = WindowFilter::<u64>::new(window, fpr).unwrap();
        let bytes = f.heap_bytes();
        let forgotten = f.forgotten_after();
        assert!(forgotten as f64 <= 1.12 * window as f64, "{forgotten}");
        let step = window / 4;
        let mut inserted = 0u64;
        while inserted < 10 * window {
            f.try_insert_batch(member(inserted)..member(inserted + step))
                .unwrap();
            inserted += step;
            let m = measure_fpr(&f, 20_000);
            let bound = fpr + 4.0 * (fpr * (1.0 - fpr) / 20_000.0).sqrt();
            assert!(
                m.rate() <= bound,
                "{inserted} inserts: rate {} over the target {fpr} (bound {bound})",
                m.rate()
            );
            // Keys past forgotten_after: as often as never-inserted keys.
            if inserted > forgotten + 20_000 {
                let old = (inserted - forgotten - 20_000..inserted - forgotten)
                    .filter(|&k| f.contains(&k))
                    .count() as f64
                    / 20_000.0;
                let bound = fpr + 4.0 * (fpr * (1.0 - fpr) / 20_000.0).sqrt();
                assert!(
                    old <= bound,
                    "{inserted} inserts: old keys answer {old}, over {bound}"
                );
            }
        }
        // Memory fixed: at the sizing's load no insert needed the stash.
        assert_eq!(f.heap_bytes(), bytes, "{fpr}");
    }
}

/// Every slot width the sizing picks, from the narrowest (buckets in one word) to 32 bits
/// (buckets of 128): the window's keys all answer, absent keys at about the bound.
#[test]
fn every_slot_width_keeps_its_promises() {
    let mut widths = Vec::new();
    for fpr in [0.5, 0.1, 0.01, 1e-3, 1e-5, 1e-7, 3e-9] {
        let window = 2_000u64;
        let mut f = WindowFilter::<u64>::new(window, fpr).unwrap();
        widths.push(f.fingerprint_bits() + f.tag_bits());
        f.try_insert_batch((0..3 * window).map(member)).unwrap();
        let recent = 2 * window..3 * window;
        assert!(recent.clone().all(|i| f.contains(&member(i))), "{fpr}");
        let mut one_by_one = Vec::new();
        f.contains_batch(recent.map(member), &mut one_by_one);
        assert!(one_by_one.iter().all(|&x| x), "{fpr}");
        let m = measure_fpr(&f, 20_000);
        let bound = fpr + 4.0 * (fpr * (1.0 - fpr) / 20_000.0).sqrt();
        assert!(m.rate() <= bound, "{fpr}: {}", m.rate());
    }
    assert!(
        widths.contains(&32) && widths.iter().any(|&w| w <= 16),
        "{widths:?}"
    );
}

#[test]
fn bad_settings_get_errors() {
    assert_eq!(
        WindowFilter::<u64>::new(0, 0.01).unwrap_err(),
        Error::ZeroItems
    );
    for p in [0.0, 1.0, f64::NAN, -0.5, f64::INFINITY] {
        assert!(
            matches!(WindowFilter::<u64>::new(10, p), Err(Error::InvalidFpr(_))),
            "{p}"
        );
    }
    assert!(matches!(
        WindowFilter::<u64>::new(10, f64::MIN_POSITIVE),
        Err(Error::UnreachableFpr { .. })
    ));
    let huge = WindowFilter::<u64>::new(1 << 40, 1e-6);
    assert!(matches!(huge, Err(Error::TooLarge { .. })), "{huge:?}");
    assert!(matches!(
        WindowFilter::<u64>::new(u64::MAX, 0.01),
        Err(Error::UnreachableFpr { .. })
    ));
    assert_eq!(
        WindowFilter::<u64>::builder(10, 0.01)
            .over_time(0)
            .build()
            .unwrap_err(),
        Error::ZeroSpan
    );
    for slack in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            WindowFilter::<u64>::builder(10, 0.01).slack(slack).build(),
            Err(Error::InvalidSlack(_))
        ));
    }
    assert!(matches!(
        WindowFilter::<u64>::builder(1_000, 0.01)
            .max_bytes(1)
            .build(),
        Err(Error::OverLimit { .. })
    ));
    // The smallest windows work: one insert, u64::MAX span.
    let mut f = WindowFilter::<u64>::builder(1, 0.5)
        .over_time(u64::MAX)
        .build()
        .unwrap();
    assert!(f.try_insert_at(&3, u64::MAX - 1).unwrap());
    assert!(f.contains(&3));
    assert!(matches!(
        f.try_insert_at(&4, u64::MAX - 1),
        Err(Error::WindowFull { .. })
    ));
    f.advance_to(0); // never backwards
    assert_eq!(f.now(), u64::MAX - 1);
}

/// A window over time refuses exactly when a generation's inserts are used up, and takes
/// keys again in the next generation.
#[test]
fn a_full_generation_refuses_until_the_next() {
    let mut f = WindowFilter::<u64>::builder(100, 0.01)
        .over_time(1_000)
        .build()
        .unwrap();
    let span = f.generation_span().unwrap();
    let per = f.window() / u64::from(f.generations());
    for i in 0..per {
        f.try_insert_at(&i, 10).unwrap();
    }
    assert_eq!(
        f.try_insert_at(&per, 10),
        Err(Error::WindowFull { limit: per, span })
    );
    assert!(f.try_insert_at(&per, 10 + span).unwrap());
    assert!((0..=per).all(|k| f.contains(&k)));
}

#[cfg(feature = "serde")]
#[test]
fn bytes_round_trip_and_refuse_damage() {
    use bloomkit_core::PortableHasher;
    use bloomkit_testkit::check_codec;

    let foreign = bloomkit_core::format::Writer::new(
        bloomkit_core::Variant::Counting,
        bloomkit_core::Xxh3Builder::default().spec(),
    )
    .params(&(1u64, 2u32))
    .words(&[0])
    .to_vec();
    check_codec(|| WindowFilter::<u64>::new(50, 0.01).unwrap(), &foreign);
    // A time window keeps its clock.
    let mut f = WindowFilter::<str>::builder(100, 0.01)
        .over_time(60)
        .seed(9)
        .build()
        .unwrap();
    f.try_insert_at("a", 1_000).unwrap();
    let g = WindowFilter::<str>::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(g, f);
    assert_eq!(g.now(), 1_000);
    assert!(g.contains_at("a", 1_059) && !g.contains_at("a", 1_000 + 60 * 200));
}

/// A file at the edges the decoder accepts (every slot alive, every count full, the
/// generation counter about to wrap) decodes to a filter whose every method answers without
/// overflowing; fields whose sums overflow, or a table too small for its generations, are
/// refused.
#[cfg(feature = "serde")]
#[test]
fn hostile_sizes_in_a_file_do_not_overflow() {
    use bloomkit_core::format::Writer;
    use bloomkit_core::{LookupCore, PortableHasher, Variant, Xxh3Builder};

    // 1-bit fingerprints, 2-bit tags, L = 1, one bucket, every slot and count full, the
    // generation counter about to wrap.
    let params = (
        1u32,
        2u32,
        1u32,
        2u64,
        1u64,
        0.5f64,
        0u64,
        u64::MAX,
        0u64,
        0u64,
        0u64,
    );
    let bytes = Writer::new(Variant::Window, Xxh3Builder::default().spec())
        .params(&params)
        .words(&[u64::MAX; 3])
        .words(&[2u64; 4])
        .words(&[0u64; 0])
        .to_vec();
    let mut f = WindowFilter::<u64>::from_bytes(&bytes).unwrap();
    assert_eq!(f.window(), 2);
    assert_eq!(f.forgotten_after(), 4);
    assert_eq!(f.len(), 4);
    assert!((0.0..=1.0).contains(&LookupCore::estimated_fpr(&f)));
    assert!(f.contains(&1));
    assert!(f.try_insert(&2).is_ok());
    assert!(f.contains(&2));
    for k in 3..50u64 {
        assert!(f.try_insert(&k).is_ok());
        assert!(f.contains(&k) && f.contains(&(k - 1)), "{k}");
    }
    // Widths that overflow a sum of the two fields, and a table too small for its entries,
    // are refused with an error, not a panic.
    let refused = |params: (u32, u32, u32, u64, u64, f64, u64, u64, u64, u64, u64),
                   words: usize| {
        let bytes = Writer::new(Variant::Window, Xxh3Builder::default().spec())
            .params(&params)
            .words(&vec![0u64; words])
            .words(&vec![0u64; 1 << params.1.min(13)])
            .words(&[0u64; 0])
            .to_vec();
        assert!(
            matches!(
                WindowFilter::<u64>::from_bytes(&bytes),
                Err(Error::Decode(_))
            ),
            "{params:?}"
        );
    };
    for f in [0xFFFF_FFFE, u32::MAX, 29, 0] {
        refused((f, 4, 10, 1, 8, 0.5, 0, 0, 0, 0, 0), 4);
    }
    // 11 generations of 10 alive at once in 2 buckets of 4 slots; generations of
    // u64::MAX inserts in one bucket.
    refused((8, 4, 10, 10, 2, 0.5, 0, 0, 0, 0, 0), 4);
    refused((1, 2, 1, u64::MAX, 1, 0.5, 0, 0, 0, 0, 0), 3);
}

#[cfg(feature = "serde")]
#[test]
fn the_view_answers_as_the_filter() {
    use bloomkit_core::format::AlignedBytes;
    use bloomkit_core::{Lookup, LookupCore};
    use bloomkit_testkit::{check_view_answers, misaligned_copy, seeded_rng};
    use bloomkit_window::WindowFilterRef;

    let mut rng = seeded_rng("the_view_answers_as_the_filter");
    let mut f = WindowFilter::<u64>::new(5_000, 0.01).unwrap();
    f.try_insert_batch((0..12_000).map(|_| rng.next_u64() % 20_000))
        .unwrap();
    let bytes = AlignedBytes::copy_from(&f.to_bytes());
    let view = WindowFilterRef::<u64>::from_bytes(&bytes).unwrap();
    let probes: Vec<u64> = (0..30_000).collect();
    check_view_answers(&f, &view, &probes);
    assert_eq!(view.to_filter(), f);
    assert_eq!(view.len(), f.len());
    assert_eq!(
        LookupCore::estimated_fpr(&view),
        LookupCore::estimated_fpr(&f)
    );
    // The view holds the generations' counts, not the table.
    assert_eq!(view.heap_bytes() as u64, (1u64 << f.tag_bits()) * 8);
    let (buffer, at) = misaligned_copy(&bytes);
    assert!(matches!(
        WindowFilterRef::<u64>::from_bytes(&buffer[at..]),
        Err(Error::Decode(bloomkit_core::DecodeError::NotViewable(_)))
    ));
    for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
        assert!(WindowFilterRef::<u64>::from_bytes(&bytes[..cut]).is_err());
    }
    assert_eq!(view.hash_key(&1), f.hash_key(&1));
}
