//! Bad bytes and bad arguments get typed errors, never a panic or a huge allocation; no
//! false negative after any sequence of puts and merges (property tests against a model).

use std::io::Read;

use bloomkit_jvm::guava::{funnel, GuavaBloomFilter, GuavaHeader, Strategy};
use bloomkit_jvm::spark::{SparkBloomFilter, Version};
use bloomkit_jvm::{Error, JvmFormat};

type Guava = GuavaBloomFilter<funnel::Long>;

fn guava_bytes() -> Vec<u8> {
    let mut f = Guava::create(100, 0.01).unwrap();
    for i in 0..100 {
        f.put(&i);
    }
    f.to_bytes()
}

fn spark_bytes(version: Version) -> Vec<u8> {
    let mut f = SparkBloomFilter::create_with(version, 100, 1000, 0).unwrap();
    for i in 0..100i64 {
        f.put(&i);
    }
    f.to_bytes()
}

/// Every prefix of a valid file is refused as truncated; a byte more is refused as
/// trailing; both formats, both readers.
#[test]
fn truncated_and_trailing_bytes() {
    for bytes in [
        guava_bytes(),
        spark_bytes(Version::V1),
        spark_bytes(Version::V2),
    ] {
        let is_guava = bytes[0] != 0;
        let decode = |b: &[u8]| -> Result<(), Error> {
            if is_guava {
                Guava::from_bytes(b).map(drop)
            } else {
                SparkBloomFilter::from_bytes(b).map(drop)
            }
        };
        let read = |b: &[u8]| -> Result<(), Error> {
            if is_guava {
                Guava::read_from(b).map(drop)
            } else {
                SparkBloomFilter::read_from(b).map(drop)
            }
        };
        for len in 0..bytes.len() {
            assert!(
                matches!(decode(&bytes[..len]), Err(Error::Truncated { .. })),
                "{len}: {:?}",
                decode(&bytes[..len])
            );
            assert!(
                matches!(read(&bytes[..len]), Err(Error::Truncated { .. })),
                "{len}"
            );
            assert_eq!(JvmFormat::sniff(&bytes[..len]), None);
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(decode(&longer), Err(Error::TrailingBytes { .. })));
        assert_eq!(JvmFormat::sniff(&longer), None);
        decode(&bytes).unwrap();
        read(&bytes).unwrap();
    }
}

/// Headers that lie: unknown strategy or version, no hash functions, absurd hash counts,
/// word counts that are negative, zero, or two billion (16 GiB) over a few bytes. All
/// refused before any allocation of the declared size.
#[test]
fn absurd_headers() {
    let mut g = guava_bytes();
    g[0] = 2;
    assert!(matches!(
        Guava::from_bytes(&g),
        Err(Error::UnknownStrategy(2))
    ));
    g[0] = 0xff;
    assert!(matches!(
        Guava::read_from(&g[..]),
        Err(Error::UnknownStrategy(255))
    ));
    let mut g = guava_bytes();
    g[1] = 0;
    assert!(matches!(Guava::from_bytes(&g), Err(Error::HashCount(0))));
    // k of 255 is valid Guava (its maximum): read, and answers (slowly, correctly).
    g[1] = 255;
    assert_eq!(Guava::from_bytes(&g).unwrap().num_hash_functions(), 255);
    for count in [0i32, -1, i32::MIN] {
        let mut g = guava_bytes();
        g[2..6].copy_from_slice(&count.to_be_bytes());
        assert!(
            matches!(Guava::from_bytes(&g), Err(Error::WordCount(_))),
            "{count}"
        );
        assert!(
            matches!(Guava::read_from(&g[..]), Err(Error::WordCount(_))),
            "{count}"
        );
    }
    let mut g = guava_bytes();
    g[2..6].copy_from_slice(&i32::MAX.to_be_bytes());
    assert!(
        matches!(Guava::from_bytes(&g), Err(Error::Truncated { needed, .. }) if needed == 6 + 8 * i32::MAX as u64)
    );
    // A stream that declares 16 GiB and ends: refused when it ends.
    assert!(matches!(
        Guava::read_from(&g[..]),
        Err(Error::Truncated { .. })
    ));

    for version in [Version::V1, Version::V2] {
        let s = spark_bytes(version);
        for v in [0i32, 3, -1, 0x0100_0000] {
            let mut b = s.clone();
            b[0..4].copy_from_slice(&v.to_be_bytes());
            assert!(
                matches!(SparkBloomFilter::from_bytes(&b), Err(Error::UnknownVersion(x)) if x == v)
            );
        }
        for k in [0i32, -5, i32::MAX, 65_537] {
            let mut b = s.clone();
            b[4..8].copy_from_slice(&k.to_be_bytes());
            assert!(
                matches!(SparkBloomFilter::from_bytes(&b), Err(Error::HashCount(x)) if x == i64::from(k)),
                "{k}"
            );
            assert!(matches!(
                SparkBloomFilter::read_from(&b[..]),
                Err(Error::HashCount(_))
            ));
        }
        let at = if version == Version::V1 { 8 } else { 12 };
        let mut b = s.clone();
        b[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(matches!(
            SparkBloomFilter::from_bytes(&b),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            SparkBloomFilter::read_from(&b[..]),
            Err(Error::Truncated { .. })
        ));
    }
}

/// A reader that never stops talking (an endless stream of 0xff after a valid header):
/// the stream reader takes only the words the header declares.
#[test]
fn endless_stream_is_read_no_further_than_declared() {
    let head = [1u8, 3, 0, 0, 0, 2];
    let mut stream = head.as_slice().chain(std::io::repeat(0xff));
    let f = Guava::read_from(&mut stream).unwrap();
    assert_eq!(f.bit_size(), 128);
    assert_eq!(f.bit_count(), 128);
    let mut next = [0u8; 1];
    stream.read_exact(&mut next).unwrap();
    assert_eq!(next, [0xff]);
}

/// Arguments at every edge: typed errors where Guava and Spark refuse, a filter where they
/// build one.
#[test]
fn arguments_at_the_edges() {
    for fpp in [0.0, 1.0, -0.5, f64::NAN, f64::INFINITY, 1.5] {
        assert!(
            matches!(Guava::create(100, fpp), Err(Error::InvalidFpp(_))),
            "{fpp}"
        );
        assert!(
            matches!(
                SparkBloomFilter::create(100, fpp),
                Err(Error::InvalidFpp(_))
            ),
            "{fpp}"
        );
    }
    // Guava takes 0 keys as 1; Spark refuses them.
    assert_eq!(Guava::create(0, 0.5).unwrap().bit_size(), 64);
    assert!(matches!(
        SparkBloomFilter::create(0, 0.5),
        Err(Error::CannotCreate { .. })
    ));
    // No bits (a rate so high one key needs under one bit).
    assert!(matches!(
        Guava::create(1, 0.9),
        Err(Error::CannotCreate { bits: 0, .. })
    ));
    // The smallest positive rate: more than 255 hash functions.
    assert!(matches!(
        Guava::create(1, f64::MIN_POSITIVE),
        Err(Error::CannotCreate { .. })
    ));
    assert!(matches!(
        Guava::create(1, 5e-324),
        Err(Error::CannotCreate { .. })
    ));
    // More words than a Java array holds.
    assert!(matches!(
        Guava::create(u64::MAX, 0.01),
        Err(Error::CannotCreate { .. })
    ));
    assert!(matches!(
        SparkBloomFilter::create(u64::MAX, 0.01),
        Err(Error::CannotCreate { .. })
    ));
    assert!(matches!(
        SparkBloomFilter::create_with(Version::V2, 1, i64::MAX, 0),
        Err(Error::CannotCreate { .. })
    ));
    assert!(matches!(
        SparkBloomFilter::create_with(Version::V2, 1, 0, 0),
        Err(Error::CannotCreate { .. })
    ));
    assert!(matches!(
        SparkBloomFilter::create_with(Version::V1, 1, 64, 7),
        Err(Error::CannotCreate { .. })
    ));
    // One key in 2^31 - 64 bits: k would wrap in Java; refused, not a hang.
    assert!(matches!(
        SparkBloomFilter::create_with(Version::V2, 1, (1 << 37) - 64, 0),
        Err(Error::HashCount(_))
    ));
}

/// Two filters that differ cannot be merged; nothing changes when refused.
#[test]
fn incompatible_merges() {
    let a = Guava::create(1000, 0.01).unwrap();
    let b = Guava::create_with_strategy(1000, 0.01, Strategy::Murmur128Mitz32).unwrap();
    let c = Guava::create(2000, 0.01).unwrap();
    let mut x = a.clone();
    x.put(&1);
    let before = x.clone();
    for (other, what) in [(&b, "strategy"), (&c, "size of the bit arrays")] {
        assert!(!x.is_compatible(other));
        assert!(matches!(x.put_all(other), Err(Error::Incompatible { what: w, .. }) if w == what));
        assert_eq!(x, before);
    }
    let s1 = SparkBloomFilter::create_with(Version::V2, 100, 1000, 0).unwrap();
    let s2 = SparkBloomFilter::create_with(Version::V2, 100, 1000, 1).unwrap();
    let s3 = SparkBloomFilter::create_with(Version::V1, 100, 1000, 0).unwrap();
    let mut y = s1.clone();
    assert!(matches!(
        y.merge_in_place(&s2),
        Err(Error::Incompatible { what: "seed", .. })
    ));
    assert!(matches!(
        y.intersect_in_place(&s3),
        Err(Error::Incompatible {
            what: "version",
            ..
        })
    ));
    assert_eq!(y, s1);
}

/// Sniffing never confuses the formats and never panics on short input.
#[test]
fn sniffing() {
    let g = guava_bytes();
    let s = spark_bytes(Version::V2);
    assert!(matches!(
        JvmFormat::sniff(&g),
        Some(JvmFormat::Guava(GuavaHeader {
            num_hash_functions: 7,
            ..
        }))
    ));
    assert_eq!(JvmFormat::sniff(&s), Some(JvmFormat::Spark(Version::V2)));
    for len in 0..8 {
        assert_eq!(JvmFormat::sniff(&[0u8; 8][..len]), None);
    }
}

fn cases() -> u64 {
    std::env::var("BLOOMKIT_QC_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

/// No false negative after any sequence of puts (any keys, any small size, both
/// strategies, every Spark version and seed), through the bytes and back, and after a merge
/// with another filter of the same shape.
#[test]
fn no_false_negatives() {
    #[allow(clippy::needless_pass_by_value)] // quickcheck hands owned values
    fn prop(keys: Vec<i64>, other: Vec<i64>, shape: (u8, u16, i32)) -> bool {
        let (sel, n, seed) = shape;
        let n = u64::from(n % 2000) + 1;
        let fpp = [0.3, 0.05, 0.001][usize::from(sel % 3)];
        let mut g =
            Guava::create_with_strategy(n, fpp, Strategy::from_ordinal(sel % 2).unwrap()).unwrap();
        let mut g2 = g.clone();
        let version = if sel % 4 < 2 {
            Version::V1
        } else {
            Version::V2
        };
        let seed = if version == Version::V1 { 0 } else { seed };
        let mut s = SparkBloomFilter::create_with(version, n, (n * 7) as i64, seed).unwrap();
        let mut s2 = s.clone();
        for k in &keys {
            g.put(k);
            s.put(k);
        }
        for k in &other {
            g2.put(k);
            s2.put(k);
        }
        let g = Guava::from_bytes(&g.to_bytes()).unwrap();
        let s = SparkBloomFilter::from_bytes(&s.to_bytes()).unwrap();
        let mut gm = g.clone();
        gm.put_all(&g2).unwrap();
        let mut sm = s.clone();
        sm.merge_in_place(&s2).unwrap();
        let mut batch = Vec::new();
        g.contains_batch(&keys, &mut batch);
        keys.iter().all(|k| {
            g.might_contain(k) && s.might_contain(k) && gm.might_contain(k) && sm.might_contain(k)
        }) && other
            .iter()
            .all(|k| gm.might_contain(k) && sm.might_contain(k))
            && batch.iter().all(|&b| b)
    }
    quickcheck::QuickCheck::new()
        .tests(cases())
        .quickcheck(prop as fn(Vec<i64>, Vec<i64>, (u8, u16, i32)) -> bool);
}

/// Strings through every string-keyed path: UTF-8 and UTF-16 funnels and Spark.
#[test]
fn no_false_negatives_strings() {
    #[allow(clippy::needless_pass_by_value)] // quickcheck hands owned values
    fn prop(keys: Vec<String>) -> bool {
        let mut a =
            GuavaBloomFilter::<funnel::Utf8String>::create(keys.len() as u64, 0.01).unwrap();
        let mut b =
            GuavaBloomFilter::<funnel::UnencodedChars>::create(keys.len() as u64, 0.01).unwrap();
        let mut s = SparkBloomFilter::create(keys.len() as u64 + 1, 0.01).unwrap();
        for k in &keys {
            a.put(k);
            b.put(k);
            s.put(k.as_str());
        }
        keys.iter()
            .all(|k| a.might_contain(k) && b.might_contain(k) && s.might_contain(k.as_bytes()))
    }
    quickcheck::QuickCheck::new()
        .tests(cases())
        .quickcheck(prop as fn(Vec<String>) -> bool);
}
