//! The one list of variants: every variant the registry serves builds, writes, opens,
//! decodes and merges through it with no false negative, and does what its facts say.

use bloomkit::format::{AlignedBytes, Verify};
use bloomkit::registry::{self, AnyFilter, RegistryError, Spec};
use bloomkit::variant::{Inserts, Keys};
use bloomkit::Variant;

/// `keys` in a filter of `variant` made through the registry.
fn made(variant: Variant, keys: &[String], spec: &Spec) -> Box<dyn AnyFilter> {
    let entry = registry::str_entry(variant).unwrap();
    if entry.builds_from_hashes() {
        let probe = entry.from_hashes(Vec::new(), spec).unwrap();
        let mut hashes: Vec<u64> = keys.iter().map(|k| probe.hash_key(k)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        entry.from_hashes(hashes, spec).unwrap()
    } else {
        let mut f = entry.make(spec).unwrap();
        for k in keys {
            f.try_insert(k).unwrap();
        }
        f
    }
}

fn bytes_of(f: &dyn AnyFilter) -> AlignedBytes {
    let mut out = Vec::new();
    f.write_to(&mut out).unwrap();
    assert_eq!(out.len() as u64, f.serialized_len());
    AlignedBytes::copy_from(&out)
}

fn keys(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// Every variant whose keys are strings is in the table (with every feature on), and
/// answers every inserted key through a view or a decoded copy, in batch and one by one.
#[test]
fn every_str_variant_round_trips_through_the_registry() {
    let ks = keys("k", 2_000);
    let refs: Vec<&str> = ks.iter().map(String::as_str).collect();
    let mut served = 0;
    for v in Variant::ALL {
        let facts = v.facts();
        if facts.keys != Keys::Hashed {
            assert!(matches!(
                registry::str_entry(v),
                Err(RegistryError::NotStrKeys { .. })
            ));
            continue;
        }
        served += 1;
        let f = made(v, &ks, &Spec::new(2_000, 0.01).seed(7));
        assert_eq!(f.variant(), v);
        let bytes = bytes_of(f.as_ref());
        for verify in [Verify::All, Verify::SkipPayloadChecksum] {
            let opened = registry::open(&bytes, verify).unwrap();
            assert_eq!(opened.variant(), v);
            assert_eq!(opened.is_view(), facts.view, "{v:?}");
            let mut out = Vec::new();
            opened.contains_batch(&refs, &mut out);
            assert!(out.iter().all(|&b| b), "{v:?}: a false negative");
            assert!(refs.iter().all(|k| opened.contains(k)), "{v:?}");
            // The trait's contract: the batch appends.
            opened.contains_batch(&refs[..3], &mut out);
            assert_eq!(out.len(), refs.len() + 3);
        }
        let decoded = registry::decode(&bytes).unwrap();
        assert!(!decoded.is_view());
        assert!(refs.iter().all(|k| decoded.contains(k)), "{v:?}");
    }
    assert_eq!(served, 13);
}

/// Inserting into a static filter, and merging what has no union, are typed refusals.
#[test]
fn what_a_variant_cannot_do_is_refused_by_its_facts() {
    for v in Variant::ALL {
        let facts = v.facts();
        let Ok(entry) = registry::str_entry(v) else {
            continue;
        };
        let ks = keys("a", 100);
        let mut f = made(v, &ks, &Spec::new(100, 0.01));
        let other = bytes_of(made(v, &keys("b", 100), &Spec::new(100, 0.01)).as_ref());
        assert_eq!(
            f.try_insert("new").is_ok(),
            facts.inserts != Inserts::Never,
            "{v:?}"
        );
        assert_eq!(
            entry.make(&Spec::new(10, 0.01)).is_ok(),
            facts.inserts != Inserts::Never,
            "{v:?}"
        );
        match entry.union_into(f.as_mut(), &other) {
            Ok(_) => {
                assert!(facts.union, "{v:?}");
                for k in ks.iter().chain(&keys("b", 100)) {
                    assert!(f.contains(k), "{v:?}: {k} lost in the union");
                }
            }
            Err(RegistryError::Cannot { .. }) => assert!(!facts.union, "{v:?}"),
            Err(e) => panic!("{v:?}: {e}"),
        }
    }
}

/// A union that needs room grows a quotient filter and says how many times.
#[test]
fn a_quotient_union_grows_and_counts_its_doublings() {
    let spec = Spec::new(1_000, 0.01);
    let slots = match made(Variant::Quotient, &[], &spec).details()[..] {
        [bloomkit::registry::Detail::Slots { count, .. }, bloomkit::registry::Detail::Saturated(false)] => {
            count as usize
        }
        ref other => panic!("{other:?}"),
    };
    // Each side 60% full: the union cannot fit in the same table.
    let (ka, kb) = (keys("a", slots * 6 / 10), keys("b", slots * 6 / 10));
    let a = made(Variant::Quotient, &ka, &spec);
    let b = bytes_of(made(Variant::Quotient, &kb, &spec).as_ref());
    let entry = registry::entry(Variant::Quotient).unwrap();
    let mut merged = entry.decode(&bytes_of(a.as_ref())).unwrap();
    let doublings = entry.union_into(merged.as_mut(), &b).unwrap();
    assert_eq!(doublings, 1);
    assert!(matches!(
        merged.details()[..],
        [bloomkit::registry::Detail::Slots { count, .. }, bloomkit::registry::Detail::Saturated(false)]
            if count as usize == 2 * slots
    ));
    for k in ka.iter().chain(&kb) {
        assert!(merged.contains(k));
    }
}

/// Counting filters of every width open at their width; merging two widths is refused by
/// the decoder of the first one's width.
#[test]
fn counting_filters_open_at_their_width() {
    let ks = keys("c", 50);
    let entry = registry::entry(Variant::Counting).unwrap();
    let mut all = Vec::new();
    for bits in [4, 8, 16, 32] {
        let f = made(
            Variant::Counting,
            &ks,
            &Spec::new(100, 0.01).counter_bits(bits),
        );
        let bytes = bytes_of(f.as_ref());
        assert_eq!(bloomkit::counting::counter_bits(&bytes), Some(bits));
        {
            let opened = registry::open(&bytes, Verify::All).unwrap();
            assert!(opened
                .details()
                .contains(&bloomkit::registry::Detail::Counters {
                    count: f
                        .details()
                        .iter()
                        .find_map(|d| match d {
                            bloomkit::registry::Detail::Counters { count, .. } => Some(*count),
                            _ => None,
                        })
                        .unwrap(),
                    bits
                }));
        }
        all.push(bytes);
    }
    let mut four = entry.decode(&all[0]).unwrap();
    assert!(entry.union_into(four.as_mut(), &all[1]).is_err());
    assert!(entry.union_into(four.as_mut(), &all[0]).is_ok());
    assert!(entry.make(&Spec::new(10, 0.01).counter_bits(5)).is_err());
}

/// Bytes the registry cannot serve say why: a keyed hasher, a bitmap, garbage.
#[test]
fn bytes_it_cannot_serve_are_typed_errors() {
    use bloomkit::prelude::*;
    let keyed = BloomFilter::<str>::builder(100, 0.01)
        .hasher(KeyedHasher::new(HashKey::random()))
        .build()
        .unwrap()
        .to_bytes();
    assert!(matches!(
        registry::open(&AlignedBytes::copy_from(&keyed), Verify::All),
        Err(RegistryError::Keyed)
    ));
    let bitmap = Bitmap::<u32>::new(0..=100).unwrap().to_bytes();
    let e = registry::open(&AlignedBytes::copy_from(&bitmap), Verify::All)
        .err()
        .unwrap();
    assert!(e.to_string().contains("integers"), "{e}");
    assert!(registry::open(b"BLMK", Verify::All).is_err());
    assert!(registry::decode(b"not a filter at all").is_err());
}
