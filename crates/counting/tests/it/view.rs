//! The zero-copy view answers as the owned filter at every counter width, counts as it
//! does, gives it back whole, and refuses bytes it cannot use with a typed error.

use bloomkit_core::format::Verify;
use bloomkit_core::{Codec, DecodeError, Error, LookupCore, Remove};
use bloomkit_counting::{Counter, CountingBloomFilter, CountingBloomFilterRef, U4};

fn check<C: Counter>()
where
    CountingBloomFilter<u64, C>: Codec + PartialEq + std::fmt::Debug + Remove<Key = u64>,
{
    let mut f = CountingBloomFilter::<u64>::builder(5_000, 0.01)
        .counter::<C>()
        .build()
        .unwrap();
    for k in 0..5_000u64 {
        f.insert(&k);
    }
    for k in 0..100u64 {
        f.insert(&k); // twice
    }
    for k in 4_000..4_500u64 {
        f.remove(&k).unwrap();
    }
    let bytes = f.to_bytes();
    // Any alignment: the counters are read byte by byte.
    let mut shifted = vec![0u8; bytes.len() + 1];
    shifted[1..].copy_from_slice(&bytes);
    for b in [&bytes[..], &shifted[1..]] {
        let view = CountingBloomFilterRef::<u64, C>::with_hasher(b, Verify::All).unwrap();
        let probes: Vec<u64> = (0..20_000).collect();
        bloomkit_testkit::check_view_answers(&f, &view, &probes);
        assert!((0..100u64).all(|k| view.count(&k) == f.count(&k) && view.count(&k) >= 2));
        assert_eq!(view.to_filter().unwrap(), f);
        assert_eq!(view.nonzero_counters(), f.nonzero_counters());
        assert_eq!(LookupCore::estimated_fpr(&view), f.estimated_fpr());
        assert_eq!(view.hash_key(&9), f.hash_key(&9));
    }
    // Another width is refused, naming both.
    let other = if C::BITS == 8 {
        CountingBloomFilter::<u64>::new(100, 0.01)
            .unwrap()
            .to_bytes()
    } else {
        CountingBloomFilter::<u64>::builder(100, 0.01)
            .counter::<u8>()
            .build()
            .unwrap()
            .to_bytes()
    };
    match CountingBloomFilterRef::<u64, C>::with_hasher(&other, Verify::All) {
        Err(Error::Decode(DecodeError::Invalid(why))) => assert!(why.contains("counters"), "{why}"),
        other => panic!("{other:?}"),
    }
    for cut in [0, 8, 40, bytes.len() / 2, bytes.len() - 1] {
        assert!(CountingBloomFilterRef::<u64, C>::with_hasher(&bytes[..cut], Verify::All).is_err());
    }
}

#[test]
fn the_view_answers_and_counts_as_the_owned_filter_at_every_width() {
    check::<U4>();
    check::<u8>();
    check::<u16>();
    check::<u32>();
}
