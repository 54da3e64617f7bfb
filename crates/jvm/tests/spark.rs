//! bloomkit's Spark filters against golden files written by Spark 4.3's own sketch classes
//! (`tests/data/spark/`; how they were made: `tests/java/SparkGolden.java`'s header). Each
//! file holds keys 0..999; its `.absent` file Spark's answers to keys 1000..10999.

use std::path::Path;

use bloomkit_jvm::spark::{SparkBloomFilter, SparkKey, Version};
use bloomkit_jvm::JvmFormat;

const N: u64 = 1000;
const PROBES: u64 = 10_000;

fn data(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/spark")
            .join(name),
    )
    .unwrap()
}

fn text(i: u64) -> String {
    format!("key-{i}{}", ["", "-\u{e9}", "-\u{1f511}"][(i % 3) as usize])
}

/// The answer of `f` for key `i` of `kind`, and `put` it when `insert`.
fn key_op(f: &mut SparkBloomFilter, kind: &str, i: u64, insert: bool) -> bool {
    fn op<K: SparkKey + ?Sized>(f: &mut SparkBloomFilter, key: &K, insert: bool) -> bool {
        if insert {
            f.put(key)
        } else {
            f.might_contain(key)
        }
    }
    match kind {
        "long" => op(f, &(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64), insert),
        "int" => op(f, &(i.wrapping_mul(0x9E37_79B9) as i32), insert),
        "str" => op(f, text(i).as_str(), insert),
        "bytes" => op(
            f,
            format!("b{i}").repeat(1 + (i % 3) as usize).as_bytes(),
            insert,
        ),
        _ => unreachable!("{kind}"),
    }
}

/// Every golden file: read, answered as Spark answered (every key present; the 10^4
/// absent keys bit for bit), its figures as Spark printed them, and the same bytes when
/// Rust builds the filter from the same keys.
#[test]
fn spark_golden_files() {
    let manifest = String::from_utf8(data("spark.txt")).unwrap();
    let mut seen = 0;
    for line in manifest.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let (name, version, k, seed, bit_size, cardinality, fpp) = (
            f[0],
            f[1].parse::<i32>().unwrap(),
            f[2].parse::<u32>().unwrap(),
            f[3].parse::<i32>().unwrap(),
            f[4].parse::<u64>().unwrap(),
            f[5].parse::<u64>().unwrap(),
            f[6].parse::<f64>().unwrap(),
        );
        let kind = name.split('-').nth(1).unwrap();
        let bytes = data(&format!("{name}.bin"));
        let mut theirs = SparkBloomFilter::from_bytes(&bytes).unwrap();
        assert_eq!(theirs.version().number(), version, "{name}");
        assert_eq!(
            JvmFormat::sniff(&bytes),
            Some(JvmFormat::Spark(theirs.version()))
        );
        assert_eq!(
            (
                theirs.num_hash_functions(),
                theirs.seed(),
                theirs.bit_size(),
                theirs.cardinality()
            ),
            (k, seed, bit_size, cardinality),
            "{name}"
        );
        assert_eq!(theirs.expected_fpp().to_bits(), fpp.to_bits(), "{name}");
        // The stream reader reads the same filter, and no further.
        let mut stream = bytes.clone();
        stream.extend_from_slice(b"next");
        let mut cursor = std::io::Cursor::new(&stream);
        assert_eq!(SparkBloomFilter::read_from(&mut cursor).unwrap(), theirs);
        assert_eq!(cursor.position(), bytes.len() as u64);
        // Answers.
        for i in 0..N {
            assert!(
                key_op(&mut theirs, kind, i, false),
                "{name}: key {i} missing"
            );
        }
        let absent = data(&format!("{name}.absent"));
        let mut wrong = 0;
        for j in 0..PROBES {
            let spark = absent[(j / 8) as usize] >> (j % 8) & 1 == 1;
            if key_op(&mut theirs, kind, N + j, false) != spark {
                wrong += 1;
            }
        }
        assert_eq!(
            wrong, 0,
            "{name}: {wrong} of {PROBES} answers differ from Spark's"
        );
        // The batched answers are the single ones (str keys through `contains_batch`).
        if kind == "str" {
            let keys: Vec<String> = (N..N + PROBES).map(text).collect();
            let mut out = Vec::new();
            theirs.contains_batch(keys.iter().map(String::as_str), &mut out);
            let singles: Vec<bool> = keys
                .iter()
                .map(|k| theirs.might_contain(k.as_str()))
                .collect();
            assert_eq!(out, singles, "{name}");
        }
        // Built here from the same keys: the same bytes.
        let version = if version == 1 {
            Version::V1
        } else {
            Version::V2
        };
        let mut ours = match name {
            "v2-str-seed" => SparkBloomFilter::create_with(version, N, 10001, seed).unwrap(),
            "v1-long-small" => SparkBloomFilter::create_with(version, N, 4001, 0).unwrap(),
            _ if version == Version::V2 => SparkBloomFilter::create(N, 0.03).unwrap(),
            _ => SparkBloomFilter::create_with(version, N, 7298, 0).unwrap(),
        };
        for i in 0..N {
            key_op(&mut ours, kind, i, true);
        }
        assert!(
            ours.to_bytes() == bytes,
            "{name}: Rust's bytes differ from Spark's"
        );
        seen += 1;
    }
    assert_eq!(seen, 10);
}

/// A string and its UTF-8 bytes are one key; an `i32` is the `i64` of its value.
#[test]
fn keys_widen_as_spark_widens() {
    let mut f = SparkBloomFilter::create(100, 0.01).unwrap();
    f.put("naïve");
    assert!(f.might_contain("naïve".as_bytes()));
    f.put(&-5i32);
    assert!(f.might_contain(&-5i64) && f.might_contain(&-5i8) && f.might_contain(&-5i16));
    assert_eq!(f.hash_key(&7i16), f.hash_key(&7i64));
}
