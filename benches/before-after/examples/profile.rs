//! One row of the before/after harness, for callgrind: `profile {base|head} {multi|blocked_insert}`.
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
