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
//! lookup.

use std::hint::black_box;

use bloomkit::{BlockedBloomFilter, BloomFilter, CountingBloomFilter};
use bloomkit_benches::key;

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

fn main() {
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
