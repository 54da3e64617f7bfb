//! `par_extend` (feature `rayon`, issue 15): a parallel build equals a sequential one bit for
//! bit, whatever the pool size, the existing contents, nested parallelism in the caller's
//! iterator; a panic in the caller's iterator loses nothing the filter held.

use std::panic::{catch_unwind, AssertUnwindSafe};

use bloomkit_classic::{BlockedBloomFilter, BloomFilter};
use bloomkit_testkit::forall;
use bloomkit_testkit::parallel::{check_par_extend, pool};
use rayon::prelude::*;

#[test]
fn parallel_build_equals_sequential_build() {
    forall(40, |(before, keys, seed): &(Vec<u64>, Vec<u64>, u64)| {
        let n = (before.len() + keys.len()) as u64 + 1;
        for threads in [1, 2, 4] {
            let mut classic = BloomFilter::<u64>::builder(n, 0.01)
                .seed(*seed)
                .build()
                .unwrap();
            classic.insert_batch(before);
            check_par_extend(&classic, keys, threads, "classic")?;

            let mut blocked = BlockedBloomFilter::<u64>::builder(n, 0.01)
                .seed(*seed)
                .build()
                .unwrap();
            blocked.insert_batch(before);
            check_par_extend(&blocked, keys, threads, "blocked")?;
        }
        Ok(())
    });
}

#[test]
fn large_build_from_a_range_and_from_strings() {
    let n = 300_000u64;
    let mut seq = BlockedBloomFilter::<u64>::new(n, 0.001).unwrap();
    seq.insert_batch(0..n);
    let mut par = BlockedBloomFilter::<u64>::new(n, 0.001).unwrap();
    par.par_extend((0..n).into_par_iter());
    assert_eq!(par, seq);
    assert_eq!(par.count_ones(), seq.count_ones());

    let words: Vec<String> = (0..50_000).map(|i| format!("key-{i}")).collect();
    let mut seq = BloomFilter::<str>::new(50_000, 0.01).unwrap();
    seq.insert_batch(words.iter().map(String::as_str));
    let mut par = BloomFilter::<str>::new(50_000, 0.01).unwrap();
    par.par_extend(words.par_iter().map(String::as_str));
    assert_eq!(par, seq);
}

/// The caller's iterator runs parallel work of its own inside the build (rayon jobs nest
/// on one thread); every key still lands.
#[test]
fn nested_parallelism_in_the_callers_iterator() {
    let mut seq = BloomFilter::<u64>::new(200_000, 0.01).unwrap();
    seq.insert_batch(0..200_000u64);
    let mut par = BloomFilter::<u64>::new(200_000, 0.01).unwrap();
    pool(2).install(|| {
        par.par_extend(
            (0..200u64)
                .into_par_iter()
                .flat_map(|i| (i * 1_000..(i + 1) * 1_000).into_par_iter()),
        )
    });
    assert_eq!(par, seq);
}

/// A panic in the caller's iterator propagates; the filter keeps every key it held before
/// (and may have some of the new ones), and stays usable.
#[test]
fn a_panicking_iterator_loses_nothing_held() {
    let mut f = BlockedBloomFilter::<u64>::new(100_000, 0.01).unwrap();
    f.insert_batch(0..10_000u64);
    let result = catch_unwind(AssertUnwindSafe(|| {
        pool(2).install(|| {
            f.par_extend((10_000..100_000u64).into_par_iter().map(|k| {
                if k == 77_777 {
                    panic!("the caller's iterator failed");
                }
                k
            }))
        })
    }));
    assert!(result.is_err());
    assert!((0..10_000u64).all(|k| f.contains(&k)));
    f.par_extend((10_000..100_000u64).into_par_iter());
    assert!((0..100_000u64).all(|k| f.contains(&k)));
}
