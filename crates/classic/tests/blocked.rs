//! The shared conformance suite, run on the blocked filter; and its bad inputs.

use bloomkit_classic::{BlockedBloomFilter, BloomFilter};
use bloomkit_core::{Error, Intersection, Union};
use bloomkit_testkit as kit;

fn make() -> BlockedBloomFilter {
    BlockedBloomFilter::new(2_000, 0.01).unwrap()
}

#[test]
fn filter_promises() {
    kit::check_filter(make);
    kit::check_filter(|| BlockedBloomFilter::with_seed(5_000, 0.0001, 7).unwrap());
    kit::check_union(make);
    kit::check_intersection(make);
}

#[test]
fn codec_and_incompatibility() {
    let foreign = BloomFilter::new(100, 0.01).unwrap().to_bytes();
    kit::check_codec(make, &foreign);
    kit::check_codec(|| BlockedBloomFilter::with_blocks(1, 3).unwrap(), &foreign);
    for other in [
        BlockedBloomFilter::with_seed(2_000, 0.01, 1).unwrap(),
        BlockedBloomFilter::new(4_000, 0.01).unwrap(),
    ] {
        kit::check_incompatible(&make(), &other, Union::union_with);
        kit::check_incompatible(&make(), &other, Intersection::intersect_with);
    }
    // A classic filter's bytes are not a blocked filter, and vice versa.
    assert!(BloomFilter::from_bytes(&make().to_bytes()).is_err());
}

#[test]
fn bad_parameters() {
    assert_eq!(
        BlockedBloomFilter::new(0, 0.01).unwrap_err(),
        Error::ZeroItems
    );
    assert!(matches!(
        BlockedBloomFilter::new(10, 1.0),
        Err(Error::InvalidFpr(_))
    ));
    assert_eq!(
        BlockedBloomFilter::with_blocks(0, 3).unwrap_err(),
        Error::ZeroBits
    );
    assert!(matches!(
        BlockedBloomFilter::with_blocks(10, 0),
        Err(Error::InvalidHashCount { .. })
    ));
    assert!(matches!(
        BlockedBloomFilter::with_blocks(u64::MAX, 3),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        BlockedBloomFilter::with_blocks(1 << 52, 3),
        Err(Error::AllocationFailed { .. })
    ));
}

#[test]
fn sized_with_the_blocked_model() {
    // About 3% more bits than the classic filter at 1%, 8% at 0.1%.
    for (p, lo, hi) in [(0.01, 1.02, 1.05), (0.001, 1.06, 1.10)] {
        let b = BlockedBloomFilter::new(1_000_000, p).unwrap();
        let c = BloomFilter::new(1_000_000, p).unwrap();
        let ratio = b.num_bits() as f64 / c.num_bits() as f64;
        assert!((lo..hi).contains(&ratio), "{p}: {ratio}");
        assert!(b.fpr_at(1_000_000) <= p);
    }
}
