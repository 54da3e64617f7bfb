//! The probe scheme a filter records (format version 3): new filters place positions by
//! `ProbeScheme::Wide`; filters of earlier versions keep `ProbeScheme::Enhanced` through
//! every way in and out (bytes, views, serde, the atomic twin), and the two never combine.

use bloomkit_classic::{AtomicBloomFilter, BloomFilter, BloomFilterRef};
use bloomkit_core::format::{checksum, AlignedBytes, HEADER_LEN};
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::{DecodeError, Error, Intersection, Parameter, Union};

fn filled(scheme: ProbeScheme) -> BloomFilter<u64> {
    let mut f = BloomFilter::builder(1_000, 0.01)
        .seed(5)
        .probe_scheme(scheme)
        .build()
        .unwrap();
    f.extend(0..1_000u64);
    f
}

#[test]
fn new_filters_use_the_wide_scheme_and_both_schemes_answer() {
    assert_eq!(
        BloomFilter::<u64>::new(10, 0.01).unwrap().probe_scheme(),
        ProbeScheme::Wide
    );
    let wide = filled(ProbeScheme::Wide);
    let enhanced = filled(ProbeScheme::Enhanced);
    assert_eq!(enhanced.probe_scheme(), ProbeScheme::Enhanced);
    // Same size, same keys, other bits.
    assert_eq!(wide.num_bits(), enhanced.num_bits());
    assert_ne!(wide.bits(), enhanced.bits());
    for f in [&wide, &enhanced] {
        assert!((0..1_000u64).all(|k| f.contains(&k)));
        let false_positives = (1_000..101_000u64).filter(|k| f.contains(k)).count();
        assert!(false_positives < 1_500, "{false_positives} of 100,000");
    }
}

#[test]
fn the_scheme_survives_bytes_views_serde_and_the_atomic_twin() {
    for scheme in [ProbeScheme::Wide, ProbeScheme::Enhanced] {
        let f = filled(scheme);
        let bytes = f.to_bytes();
        let read = BloomFilter::<u64>::from_bytes(&bytes).unwrap();
        assert_eq!((read.probe_scheme(), &read), (scheme, &f));
        let aligned = AlignedBytes::copy_from(&bytes);
        let view = BloomFilterRef::<u64>::from_bytes(&aligned).unwrap();
        assert_eq!(view.probe_scheme(), scheme);
        assert_eq!(view.to_filter(), f);
        let config = bincode::config::standard();
        let encoded = bincode::serde::encode_to_vec(&f, config).unwrap();
        let (via_serde, _): (BloomFilter<u64>, usize) =
            bincode::serde::decode_from_slice(&encoded, config).unwrap();
        assert_eq!(via_serde, f);
        let atomic = AtomicBloomFilter::from_filter(f.clone()).unwrap();
        assert_eq!(atomic.probe_scheme(), scheme);
        assert!((0..1_000u64).all(|k| atomic.contains(&k)));
        assert_eq!(atomic.to_filter().unwrap(), f);
    }
}

#[test]
fn filters_of_different_schemes_do_not_combine() {
    let mut wide = filled(ProbeScheme::Wide);
    let enhanced = filled(ProbeScheme::Enhanced);
    let refused = Error::Incompatible {
        what: Parameter::ProbeSchemes,
        left: 2,
        right: 1,
    };
    assert_eq!(wide.union_with(&enhanced).unwrap_err(), refused);
    assert_eq!(wide.intersect_with(&enhanced).unwrap_err(), refused);
    let atomic = AtomicBloomFilter::from_filter(wide.clone()).unwrap();
    assert_eq!(atomic.union_with(&enhanced).unwrap_err(), refused);
    assert_eq!(
        wide,
        filled(ProbeScheme::Wide),
        "a refused union changes nothing"
    );
}

#[test]
fn an_unknown_scheme_id_is_a_typed_error() {
    let f = filled(ProbeScheme::Wide);
    let mut bytes = f.to_bytes();
    // The parameter block: bits (8), hashes (4), design (1 + 8 + 8), then the scheme's id.
    let at = HEADER_LEN + 8 + 4 + 17;
    assert_eq!(bytes[at], ProbeScheme::Wide.id());
    let meta_len = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    for id in [0u8, 3, 255] {
        bytes[at] = id;
        let sum = checksum(&bytes[..HEADER_LEN + meta_len]);
        bytes[HEADER_LEN + meta_len..HEADER_LEN + meta_len + 8].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(
            BloomFilter::<u64>::from_bytes(&bytes).unwrap_err(),
            Error::Decode(DecodeError::UnknownProbeScheme(id))
        );
        let aligned = AlignedBytes::copy_from(&bytes);
        assert!(matches!(
            BloomFilterRef::<u64>::from_bytes(&aligned),
            Err(Error::Decode(DecodeError::UnknownProbeScheme(_)))
        ));
    }
}
