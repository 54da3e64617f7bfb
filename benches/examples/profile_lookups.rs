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

use std::hint::black_box;

use bloomkit::{BlockedBloomFilter, BloomFilter, CountingBloomFilter, SimdBlockFilter};
use bloomkit_benches::key;
use twox_hash::XxHash3_64;

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
}
