//! Zero-copy views answer exactly as the filters they show, check what the owned decoder
//! checks, and refuse (with the reason) bytes they cannot use in place.

use bloomkit_classic::{BlockedBloomFilter, BlockedBloomFilterRef, BloomFilter, BloomFilterRef};
use bloomkit_core::format::{AlignedBytes, Verify};
use bloomkit_core::{DecodeError, Error, Xxh3Builder};
use bloomkit_testkit::{forall, member, non_member, reseal};

fn filters(keys: &[u64]) -> (BloomFilter<u64>, BlockedBloomFilter<u64>) {
    let n = keys.len() as u64 + 1;
    let mut classic = BloomFilter::builder(n, 0.01).seed(3).build().unwrap();
    let mut blocked = BlockedBloomFilter::builder(n, 0.01)
        .seed(3)
        .build()
        .unwrap();
    classic.insert_batch(keys);
    blocked.insert_batch(keys);
    (classic, blocked)
}

#[test]
fn views_answer_as_the_filters() {
    forall(200, |keys: &Vec<u64>| {
        let (classic, blocked) = filters(keys);
        let c_bytes = AlignedBytes::copy_from(&classic.to_bytes());
        let b_bytes = AlignedBytes::copy_from(&blocked.to_bytes());
        for verify in [Verify::All, Verify::SkipPayloadChecksum] {
            let c = BloomFilterRef::<u64, Xxh3Builder>::with_hasher(&c_bytes, verify)
                .map_err(|e| e.to_string())?;
            let b = BlockedBloomFilterRef::<u64, Xxh3Builder>::with_hasher(&b_bytes, verify)
                .map_err(|e| e.to_string())?;
            let probes: Vec<u64> = keys
                .iter()
                .copied()
                .chain((0..300).map(non_member))
                .collect();
            let (mut c_out, mut b_out) = (Vec::new(), Vec::new());
            c.contains_batch(&probes, &mut c_out);
            b.contains_batch(&probes, &mut b_out);
            for (i, k) in probes.iter().enumerate() {
                if c.contains(k) != classic.contains(k) || c_out[i] != classic.contains(k) {
                    return Err(format!("classic view differs on {k}"));
                }
                if b.contains(k) != blocked.contains(k) || b_out[i] != blocked.contains(k) {
                    return Err(format!("blocked view differs on {k}"));
                }
            }
            if c.to_filter() != classic || b.to_filter() != blocked {
                return Err("to_filter gave another filter".into());
            }
            if (c.num_bits(), c.count_ones()) != (classic.num_bits(), classic.count_ones())
                || (b.num_blocks(), b.count_ones()) != (blocked.num_blocks(), blocked.count_ones())
            {
                return Err("shape differs".into());
            }
        }
        Ok(())
    });
}

fn not_viewable(e: Error) -> String {
    match e {
        Error::Decode(DecodeError::NotViewable(why)) => why,
        other => panic!("expected NotViewable, got {other:?}"),
    }
}

#[test]
fn misaligned_and_version_1_bytes_are_refused_with_the_reason() {
    let keys: Vec<u64> = (0..100).map(member).collect();
    let (classic, blocked) = filters(&keys);
    // One byte off an aligned address.
    let bytes = blocked.to_bytes();
    let mut shifted = vec![0u8];
    shifted.extend_from_slice(&bytes);
    let shifted = AlignedBytes::copy_from(&shifted);
    let why = not_viewable(BlockedBloomFilterRef::<u64>::from_bytes(&shifted[1..]).unwrap_err());
    assert!(why.contains("not a multiple of 8"), "{why}");
    // The owned decoder reads them all the same.
    assert_eq!(
        BlockedBloomFilter::<u64>::from_bytes(&shifted[1..]).unwrap(),
        blocked
    );
    // Version 1 (the golden file of 0.1.0).
    let v1 = AlignedBytes::copy_from(include_bytes!("../data/classic-v1.bin"));
    let why = not_viewable(BloomFilterRef::<u64>::from_bytes(&v1).unwrap_err());
    assert!(why.contains("format version 1"), "{why}");
    assert!(BloomFilter::<u64>::from_bytes(&v1).is_ok());
    // Another variant.
    let c = AlignedBytes::copy_from(&classic.to_bytes());
    assert!(matches!(
        BlockedBloomFilterRef::<u64>::from_bytes(&c),
        Err(Error::Decode(DecodeError::WrongVariant { .. }))
    ));
}

/// Every prefix and every single-byte corruption is refused by a fully verified view; with
/// the payload checksum skipped, a corruption of the payload gives a working view (never a
/// panic) and a corruption of anything else is still refused.
#[test]
fn views_reject_damage() {
    let keys: Vec<u64> = (0..50).map(member).collect();
    let (classic, blocked) = filters(&keys);
    for bytes in [classic.to_bytes(), blocked.to_bytes()] {
        let meta_end = 32 + u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize + 8;
        let view = |b: &[u8], verify| {
            let b = AlignedBytes::copy_from(b);
            let c = BloomFilterRef::<u64, Xxh3Builder>::with_hasher(&b, verify).map(|v| {
                let _ = (0..100).map(member).filter(|k| v.contains(k)).count();
            });
            let k = BlockedBloomFilterRef::<u64, Xxh3Builder>::with_hasher(&b, verify).map(|v| {
                let _ = (0..100).map(member).filter(|k| v.contains(k)).count();
            });
            c.is_ok() || k.is_ok()
        };
        for cut in 0..bytes.len() {
            assert!(
                !view(&bytes[..cut], Verify::SkipPayloadChecksum),
                "prefix {cut}"
            );
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(!view(&bad, Verify::All), "flip at {i}");
            // Unchecked payload: the view decides as the owned decoder does once the
            // checksums are put right, as long as the meta checksum is intact.
            let mut resealed = bad.clone();
            reseal(&mut resealed);
            let owned_ok = BloomFilter::<u64>::from_bytes(&resealed).is_ok()
                || BlockedBloomFilter::<u64>::from_bytes(&resealed).is_ok();
            assert_eq!(
                view(&bad, Verify::SkipPayloadChecksum),
                i >= meta_end && owned_ok,
                "flip at {i}, payload checksum skipped"
            );
        }
    }
}
