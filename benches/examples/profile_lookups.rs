//! Lookups to count instructions of under callgrind, one function per structure, so that a
//! gap measured in the benches can be traced to what each lookup executes:
//!
//! ```text
//! cargo build --release -p bloomkit-benches --example profile_lookups
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/examples/profile_lookups
//! callgrind_annotate --inclusive=yes /tmp/cg.out | grep lookups
//! ```
//!
//! Each `*_lookups` function asks 10^5 member keys and 10^5 absent keys of a filter of 10^5
//! keys at 1%; its inclusive instruction count divided by 2 * 10^5 is the instructions per
//! lookup. The `*_str_*` functions do the same with names as keys (and hash them alone), and
//! the `*_inserts` functions insert 10^5 u64 keys (blocked and SIMD block filters, one at a
//! time and batched), the `*_str_inserts` 10^5 names (divide by 10^5).
//!
//! The `specialist_*` functions set each member against the crate that does only its
//! structure, on 10^5 u64 keys at 1% (10^5 member and 10^5 absent probes per lookup
//! function, so divide by 2 * 10^5; builds and inserts by 10^5, removes by 5 * 10^4): the
//! SIMD block filter against sbbf-rs, binary fuse against xorf, the quotient filter against
//! qfilter, the expandable filter (grown 1000x) against qfilter made resizeable, and ribbon
//! against binary fuse. Every peer that takes hashes is given bloomkit's XXH3 hash of the
//! key, so the hash costs both sides the same:
//!
//! ```text
//! callgrind_annotate --inclusive=yes /tmp/cg.out | grep specialist_
//! ```

use std::hint::black_box;

use bloomkit::{
    BinaryFuse8, BlockedBloomFilter, BloomFilter, CountingBloomFilter, ExpandableFilter,
    QuotientFilter, RibbonFilter, SimdBlockFilter, WindowFilter,
};
use bloomkit_benches::key;
use twox_hash::XxHash3_64;
use xorf::Filter as _;

const N: u64 = 100_000;

#[inline(never)]
fn bloomkit_classic_lookups(f: &BloomFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

#[inline(never)]
fn bloomkit_blocked_lookups(f: &BlockedBloomFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

#[inline(never)]
fn bloomkit_window_lookups(f: &WindowFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

#[inline(never)]
fn bloomkit_counting_lookups(f: &CountingBloomFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

#[inline(never)]
fn fastbloom_lookups(f: &fastbloom::BloomFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

/// String keys (names of 6 to 21 bytes): the blocked filter, and sbbf-rs given XXH3 one-shot.
#[inline(never)]
fn bloomkit_blocked_str_lookups(f: &BlockedBloomFilter<str>, keys: &[String]) -> usize {
    keys.iter()
        .filter(|k| f.contains(black_box(k.as_str())))
        .count()
}

#[inline(never)]
fn sbbf_str_lookups(f: &sbbf_rs_safe::Filter, keys: &[String]) -> usize {
    keys.iter()
        .filter(|k| f.contains_hash(XxHash3_64::oneshot(black_box(k.as_bytes()))))
        .count()
}

#[inline(never)]
fn bloomkit_str_hashes(f: &BlockedBloomFilter<str>, keys: &[String]) -> u64 {
    keys.iter()
        .map(|k| f.hash_key(black_box(k.as_str())))
        .fold(0, u64::wrapping_add)
}

#[inline(never)]
fn twox_str_hashes(keys: &[String]) -> u64 {
    keys.iter()
        .map(|k| XxHash3_64::oneshot(black_box(k.as_bytes())))
        .fold(0, u64::wrapping_add)
}

#[inline(never)]
fn bloomkit_simd_str_inserts(f: &mut SimdBlockFilter<str>, keys: &[String]) -> usize {
    keys.iter()
        .filter(|k| f.insert(black_box(k.as_str())))
        .count()
}

#[inline(never)]
fn sbbf_str_inserts(f: &mut sbbf_rs_safe::Filter, keys: &[String]) -> usize {
    keys.iter()
        .filter(|k| f.insert_hash(XxHash3_64::oneshot(black_box(k.as_bytes()))))
        .count()
}

#[inline(never)]
fn bloomkit_simd_str_lookups(f: &SimdBlockFilter<str>, keys: &[String]) -> usize {
    keys.iter()
        .filter(|k| f.contains(black_box(k.as_str())))
        .count()
}

#[inline(never)]
fn bloomkit_blocked_batch_inserts(f: &mut BlockedBloomFilter<u64>, keys: &[u64]) -> usize {
    f.insert_batch(black_box(keys))
}

#[inline(never)]
fn bloomkit_blocked_inserts(f: &mut BlockedBloomFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.insert(black_box(*k))).count()
}

#[inline(never)]
fn bloomkit_simd_batch_inserts(f: &mut SimdBlockFilter<u64>, keys: &[u64]) -> usize {
    f.insert_batch(black_box(keys))
}

#[inline(never)]
fn bloomkit_simd_inserts(f: &mut SimdBlockFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.insert(black_box(*k))).count()
}

#[inline(never)]
fn sbbf_inserts(f: &mut sbbf_rs_safe::Filter, keys: &[u64]) -> usize {
    let h = bloomkit::core::Xxh3Builder::default();
    keys.iter()
        .filter(|k| f.insert_hash(std::hash::BuildHasher::hash_one(&h, black_box(*k))))
        .count()
}

fn strings_and_inserts() {
    let names: Vec<String> = (0..2 * N)
        .map(|i| {
            format!(
                "{}-{}",
                ["py", "rust-lang", "django-rest"][i as usize % 3],
                key(i) % 100_000_000
            )
        })
        .collect();
    let (members, _) = names.split_at(N as usize);
    let mut blocked = BlockedBloomFilter::<str>::new(N, 0.01).expect("valid");
    let mut sbbf = sbbf_rs_safe::Filter::new(10, N as usize);
    for m in members {
        blocked.insert(m);
        sbbf.insert_hash(XxHash3_64::oneshot(m.as_bytes()));
    }
    println!(
        "strings: blocked {}, sbbf {}, hashes {} {}",
        bloomkit_blocked_str_lookups(&blocked, &names),
        sbbf_str_lookups(&sbbf, &names),
        bloomkit_str_hashes(&blocked, &names),
        twox_str_hashes(&names)
    );
    let mut simd = SimdBlockFilter::<str>::new(N, 0.01).expect("valid");
    let mut sbbf_inserted = sbbf_rs_safe::Filter::new(10, N as usize);
    println!(
        "string inserts: SIMD block {}, sbbf {}; SIMD block lookups {}",
        bloomkit_simd_str_inserts(&mut simd, members),
        sbbf_str_inserts(&mut sbbf_inserted, members),
        bloomkit_simd_str_lookups(&simd, &names)
    );
    let keys: Vec<u64> = (0..N).map(key).collect();
    let mut blocked = BlockedBloomFilter::<u64>::new(N, 0.01).expect("valid");
    let mut sbbf = sbbf_rs_safe::Filter::new(10, N as usize);
    let mut batched = BlockedBloomFilter::<u64>::new(N, 0.01).expect("valid");
    println!(
        "inserts: blocked {} (batched {}), sbbf {}",
        bloomkit_blocked_inserts(&mut blocked, &keys),
        bloomkit_blocked_batch_inserts(&mut batched, &keys),
        sbbf_inserts(&mut sbbf, &keys)
    );
    let mut simd = SimdBlockFilter::<u64>::new(N, 0.01).expect("valid");
    let mut batched = SimdBlockFilter::<u64>::new(N, 0.01).expect("valid");
    println!(
        "inserts: SIMD block {} (batched {})",
        bloomkit_simd_inserts(&mut simd, &keys),
        bloomkit_simd_batch_inserts(&mut batched, &keys),
    );
}

/// bloomkit's XXH3 hash of a u64 key: what the peers that take hashes are given.
fn xxh3(k: &u64) -> u64 {
    std::hash::BuildHasher::hash_one(&bloomkit::core::Xxh3Builder::default(), k)
}

#[inline(never)]
fn specialist_simd_lookups(f: &SimdBlockFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

#[inline(never)]
fn specialist_sbbf_lookups(f: &sbbf_rs_safe::Filter, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|k| f.contains_hash(xxh3(black_box(*k))))
        .count()
}

#[inline(never)]
fn specialist_fuse8_build(keys: &[u64]) -> usize {
    BinaryFuse8::<u64>::from_keys(black_box(keys))
        .expect("built")
        .heap_bytes()
}

#[inline(never)]
fn specialist_xorf_fuse8_build(keys: &[u64]) -> usize {
    let hashes: Vec<u64> = keys.iter().map(|k| xxh3(black_box(k))).collect();
    xorf::BinaryFuse8::try_from(&hashes)
        .expect("built")
        .fingerprints
        .len()
}

#[inline(never)]
fn specialist_fuse8_lookups(f: &BinaryFuse8<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

#[inline(never)]
fn specialist_xorf_fuse8_lookups(f: &xorf::BinaryFuse8, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|k| f.contains(&xxh3(black_box(*k))))
        .count()
}

#[inline(never)]
fn specialist_ribbon_lookups(f: &RibbonFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

#[inline(never)]
fn specialist_quotient_inserts(f: &mut QuotientFilter<u64>, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|k| f.try_insert(black_box(*k)).expect("room"))
        .count()
}

#[inline(never)]
fn specialist_qfilter_inserts(f: &mut qfilter::Filter, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|k| {
            f.insert_fingerprint(true, xxh3(black_box(*k)))
                .expect("room")
        })
        .count()
}

#[inline(never)]
fn specialist_quotient_lookups(f: &QuotientFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

#[inline(never)]
fn specialist_qfilter_lookups(f: &qfilter::Filter, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|k| f.contains_fingerprint(xxh3(black_box(*k))))
        .count()
}

#[inline(never)]
fn specialist_quotient_removes(f: &mut QuotientFilter<u64>, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|k| f.remove(black_box(*k)).is_ok())
        .count()
}

#[inline(never)]
fn specialist_qfilter_removes(f: &mut qfilter::Filter, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|k| f.remove_fingerprint(xxh3(black_box(*k))))
        .count()
}

#[inline(never)]
fn specialist_expandable_lookups(f: &ExpandableFilter<u64>, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(black_box(*k))).count()
}

#[inline(never)]
fn specialist_qfilter_resizeable_lookups(f: &qfilter::Filter, keys: &[u64]) -> usize {
    // In reverse order: a body of its own, which the compiler cannot fold into
    // `specialist_qfilter_lookups` (the counts would merge).
    keys.iter()
        .rev()
        .filter(|k| f.contains_fingerprint(xxh3(black_box(*k))))
        .count()
}

/// Each member beside its specialist (see the crate docs for how to read the counts).
fn specialists(members: &[u64], probes: &[u64]) {
    let mut simd = SimdBlockFilter::<u64>::new(N, 0.01).expect("valid");
    simd.insert_batch(members);
    let bits_per_key = (simd.num_bits() as f64 / N as f64).round() as usize;
    let mut sbbf = sbbf_rs_safe::Filter::new(bits_per_key, N as usize);
    for k in members {
        sbbf.insert_hash(xxh3(k));
    }
    println!(
        "SIMD block {} / sbbf-rs {}",
        specialist_simd_lookups(&simd, probes),
        specialist_sbbf_lookups(&sbbf, probes)
    );

    let fuse = BinaryFuse8::<u64>::from_keys(members).expect("built");
    let hashes: Vec<u64> = members.iter().map(xxh3).collect();
    let xfuse = xorf::BinaryFuse8::try_from(&hashes).expect("built");
    let ribbon = RibbonFilter::<u64>::from_keys_with_fpr(members, 0.01).expect("built");
    println!(
        "fuse8 build {} / xorf {}; lookups {} / xorf {}; ribbon {}",
        specialist_fuse8_build(members),
        specialist_xorf_fuse8_build(members),
        specialist_fuse8_lookups(&fuse, probes),
        specialist_xorf_fuse8_lookups(&xfuse, probes),
        specialist_ribbon_lookups(&ribbon, probes)
    );

    // One table shape for both: qfilter rounds its home slots up to a power of two (2^17 for
    // 10^5 keys, 76% full), and bloomkit's filter sized for 95% of them takes the same.
    let mut qf = qfilter::Filter::new(N, 0.01).expect("valid");
    let home = qf.capacity() * 20 / 19; // qfilter holds 95% of its home slots
    let mut quotient = QuotientFilter::<u64>::new(home * 19 / 20, 0.01).expect("valid");
    assert_eq!(quotient.capacity(), home);
    let inserted = (
        specialist_quotient_inserts(&mut quotient, members),
        specialist_qfilter_inserts(&mut qf, members),
    );
    let found = (
        specialist_quotient_lookups(&quotient, probes),
        specialist_qfilter_lookups(&qf, probes),
    );
    let half = &members[..members.len() / 2];
    println!(
        "quotient inserts {inserted:?}, lookups {found:?}, removes {} / {}",
        specialist_quotient_removes(&mut quotient, half),
        specialist_qfilter_removes(&mut qf, half)
    );

    let mut expandable = ExpandableFilter::<u64>::new(N / 1_000, 0.01).expect("valid");
    expandable.try_insert_batch(members).expect("room");
    let mut resizeable = qfilter::Filter::new_resizeable(N / 1_000, N, 0.01).expect("valid");
    for k in members {
        resizeable.insert_fingerprint(true, xxh3(k)).expect("room");
    }
    println!(
        "expandable {} / qfilter resizeable {}",
        specialist_expandable_lookups(&expandable, probes),
        specialist_qfilter_resizeable_lookups(&resizeable, probes)
    );
}

fn main() {
    strings_and_inserts();
    let members: Vec<u64> = (0..N).map(key).collect();
    let probes: Vec<u64> = members
        .iter()
        .copied()
        .chain((0..N).map(|i| key((1 << 62) | i)))
        .collect();
    let mut classic = BloomFilter::new(N, 0.01).expect("valid");
    let mut blocked = BlockedBloomFilter::new(N, 0.01).expect("valid");
    let mut counting = CountingBloomFilter::new(N, 0.01).expect("valid");
    let mut fast = fastbloom::BloomFilter::with_false_pos(0.01).expected_items(N as usize);
    for k in &members {
        classic.insert(k);
        blocked.insert(k);
        counting.insert(k);
        fast.insert(k);
    }
    println!(
        "found: classic {}, blocked {}, counting {}, fastbloom {} (of {} probes, {N} members)",
        bloomkit_classic_lookups(&classic, &probes),
        bloomkit_blocked_lookups(&blocked, &probes),
        bloomkit_counting_lookups(&counting, &probes),
        fastbloom_lookups(&fast, &probes),
        probes.len()
    );
    window(&members, &probes);
    specialists(&members, &probes);
}

/// The window filter (a window of `N`, fed `3 N` keys, so its table is in its steady state)
/// beside a blocked filter of the same bytes holding the last `N`: `bloomkit_window_lookups`
/// against the second `bloomkit_blocked_lookups` call.
fn window(members: &[u64], probes: &[u64]) {
    let mut w = WindowFilter::<u64>::new(N, 0.01).expect("valid");
    w.try_insert_batch((0..2 * N).map(|i| key((1 << 61) | i)))
        .expect("a window over inserts takes every key");
    w.try_insert_batch(members)
        .expect("a window over inserts takes every key");
    let blocks = w.heap_bytes() as u64 / 64;
    let mut b = BlockedBloomFilter::<u64>::with_blocks(blocks, 8).expect("valid");
    b.insert_batch(members);
    println!(
        "found: window {}, blocked of its bytes {} (of {} probes)",
        bloomkit_window_lookups(&w, probes),
        bloomkit_blocked_lookups(&b, probes),
        probes.len()
    );
}
