//! One row of the before/after harness, for callgrind: `profile {base|head} {multi|blocked_insert|quotient_build|quotient_lookup|quotient_batch|counting_build|counting_lookup|expandable_build|expandable_lookup|blocked_str_build|blocked_str_lookup}`; a lookup row's instructions less its build row's, over 65,536, are one lookup's.
use std::hint::black_box;

fn keys(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

macro_rules! run {
    ($m:ident, $row:expr) => {{
        use $m::Filter;
        match $row {
            "multi" => {
                let recs: Vec<(u64, u64, u64)> =
                    keys(5, 10_000).iter().map(|&k| (k % 1_000, k % 97, k)).collect();
                let fresh: Vec<(u64, u64, u64)> =
                    keys(6, 1 << 16).iter().map(|&k| (k, k ^ 1, k ^ 2)).collect();
                let mut h = $m::MultiFilter::<(u64, u64, u64)>::new(10_000, 0.01).unwrap();
                for r in &recs {
                    h.try_insert(r).unwrap();
                }
                fresh.iter().filter(|r| h.contains(black_box(*r))).count()
            }
            "quotient_build" | "quotient_lookup" | "quotient_batch" => {
                let members = keys(1, 100_000);
                // One table for both: 2^17 home slots (the head sizes for 95% of them).
                let items = if stringify!($m) == "head" { 124_518 } else { 100_000 };
                let mut h = $m::QuotientFilter::<u64>::new(items, 0.01).unwrap();
                assert_eq!(h.capacity(), 1 << 17);
                for k in &members {
                    let _ = $m::Filter::try_insert(&mut h, k);
                }
                if $row == "quotient_build" {
                    return println!("{}", h.len());
                }
                let probes = keys(2, 1 << 16);
                if $row == "quotient_batch" {
                    let mut out = Vec::with_capacity(1 << 16);
                    h.contains_batch(members.iter().take(1 << 15).chain(&probes[..1 << 15]), &mut out);
                    return println!("{}", out.iter().filter(|&&b| b).count());
                }
                members.iter().take(1 << 15).chain(&probes[..1 << 15]).filter(|k| h.contains(black_box(*k))).count()
            }
            "counting_build" | "counting_lookup" => {
                let members = keys(1, 100_000);
                let mut h = $m::CountingBloomFilter::<u64>::new(100_000, 0.01).unwrap();
                for k in &members {
                    let _ = $m::Filter::try_insert(&mut h, k);
                }
                if $row == "counting_build" {
                    return println!("{}", h.num_counters());
                }
                let probes = keys(2, 1 << 16);
                members.iter().take(1 << 15).chain(&probes[..1 << 15]).filter(|k| h.contains(black_box(*k))).count()
            }
            "expandable_build" | "expandable_lookup" => {
                let members = keys(1, 100_000);
                let mut h = $m::ExpandableFilter::<u64>::new(1_000, 0.01).unwrap();
                for k in &members {
                    let _ = $m::Filter::try_insert(&mut h, k);
                }
                if $row == "expandable_build" {
                    return println!("{}", h.len());
                }
                let probes = keys(2, 1 << 16);
                members.iter().take(1 << 15).chain(&probes[..1 << 15]).filter(|k| h.contains(black_box(*k))).count()
            }
            "blocked_str_build" | "blocked_str_lookup" => {
                let members: Vec<String> = keys(1, 100_000).iter().map(|k| format!("key-{k}")).collect();
                let mut h = $m::BlockedBloomFilter::<str>::new(100_000, 0.01).unwrap();
                for k in &members {
                    h.insert(k.as_str());
                }
                if $row == "blocked_str_build" {
                    return println!("{}", h.num_blocks());
                }
                let probes: Vec<String> = keys(2, 1 << 15).iter().map(|k| format!("key-{k}")).collect();
                members.iter().take(1 << 15).chain(&probes).filter(|k| h.contains(black_box(k.as_str()))).count()
            }
            _ => {
                let mut h = $m::BlockedBloomFilter::<u64>::new(1_000_000, 0.01).unwrap();
                let fresh = keys(3, 1 << 16);
                fresh.iter().filter(|k| h.insert(black_box(*k))).count()
            }
        }
    }};
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = if args[1] == "base" { run!(base, args[2].as_str()) } else { run!(head, args[2].as_str()) };
    println!("{n}");
}
