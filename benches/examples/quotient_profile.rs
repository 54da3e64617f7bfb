//! The quotient filter's lookups, inserts and removes to count instructions of under
//! callgrind, beside qfilter 0.3's, one function per operation and structure:
//!
//! ```text
//! cargo build --release -p bloomkit-benches --example quotient_profile
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/examples/quotient_profile
//! callgrind_annotate --inclusive=yes /tmp/cg.out | grep quotient_profile::
//! ```
//!
//! Both tables have 2^16 home slots filled to 95% (62,259 hashes, bloomkit's XXH3 of
//! `0..62,259`; qfilter is given them through its fingerprint API). Divide `*_inserts` by
//! 62,259 (one build from empty), `*_lookups` by 124,518 (every member, then as many absent
//! hashes), `*_removes` by 31,130 (every other member).

use std::hash::BuildHasher;
use std::hint::black_box;

use bloomkit::core::Xxh3Builder;
use bloomkit::QuotientFilter;

#[inline(never)]
fn bloomkit_inserts(hashes: &[u64], n: u64) -> QuotientFilter<u64> {
    let mut f = QuotientFilter::<u64>::new(n, 0.01).expect("sized");
    for &h in hashes {
        f.try_insert_hash(h).expect("room");
    }
    f
}

#[inline(never)]
fn qfilter_inserts(hashes: &[u64], n: u64) -> qfilter::Filter {
    let mut f = qfilter::Filter::new(n, 0.01).expect("sized");
    for &h in hashes {
        f.insert_fingerprint(true, h).expect("room");
    }
    f
}

#[inline(never)]
fn bloomkit_lookups(f: &QuotientFilter<u64>, hashes: &[u64]) -> usize {
    hashes
        .iter()
        .filter(|&&h| f.contains_hash(black_box(h)))
        .count()
}

#[inline(never)]
fn qfilter_lookups(f: &qfilter::Filter, hashes: &[u64]) -> usize {
    hashes
        .iter()
        .filter(|&&h| f.contains_fingerprint(black_box(h)))
        .count()
}

#[inline(never)]
fn bloomkit_removes(f: &mut QuotientFilter<u64>, hashes: &[u64]) -> usize {
    hashes.iter().filter(|&&h| f.remove_hash(h).is_ok()).count()
}

#[inline(never)]
fn qfilter_removes(f: &mut qfilter::Filter, hashes: &[u64]) -> usize {
    hashes.iter().filter(|&&h| f.remove_fingerprint(h)).count()
}

fn main() {
    let hasher = Xxh3Builder::default();
    // 2^16 home slots filled to 95%: the filter sized for 62,259 keys takes 2^16 of them,
    // as qfilter does.
    let n = QuotientFilter::<u64>::new(62_259, 0.01)
        .expect("sized")
        .max_items();
    assert_eq!(n, 62_259);
    let members: Vec<u64> = (0..n).map(|k| hasher.hash_one(k)).collect();
    let probes: Vec<u64> = members
        .iter()
        .copied()
        .chain((n..2 * n).map(|k| hasher.hash_one(k)))
        .collect();
    let mut ours = bloomkit_inserts(&members, n);
    let mut theirs = qfilter_inserts(&members, n);
    let found = (
        bloomkit_lookups(&ours, &probes),
        qfilter_lookups(&theirs, &probes),
    );
    let half: Vec<u64> = members.iter().copied().step_by(2).collect();
    let removed = (
        bloomkit_removes(&mut ours, &half),
        qfilter_removes(&mut theirs, &half),
    );
    println!("{n} hashes: found {found:?}, removed {removed:?}");
}
