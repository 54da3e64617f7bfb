//! `par_extend` on the counting filter (feature `rayon`, issue 15): the counters of a
//! parallel build equal a sequential build's, stuck counters included.

use bloomkit_counting::{CountingBloomFilter, U4};
use bloomkit_testkit::forall;
use bloomkit_testkit::parallel::check_par_extend;
use rayon::prelude::*;

#[test]
fn parallel_build_equals_sequential_build() {
    forall(40, |(keys, seed): &(Vec<u16>, u64)| {
        // u16 keys, many repeats: small filters whose 4-bit counters saturate.
        let keys: Vec<u64> = keys.iter().map(|&k| u64::from(k % 64)).collect();
        for threads in [1, 2, 4] {
            let u4 = CountingBloomFilter::<u64>::builder(16, 0.1)
                .seed(*seed)
                .build()
                .unwrap();
            check_par_extend(&u4, &keys, threads, "u4")?;
            let u16 = CountingBloomFilter::<u64>::builder(16, 0.1)
                .counter::<u16>()
                .seed(*seed)
                .build()
                .unwrap();
            check_par_extend(&u16, &keys, threads, "u16")?;
        }
        Ok(())
    });
    // Saturation for certain: one key 100 times.
    let mut par = CountingBloomFilter::<u64, U4>::new(100, 0.01).unwrap();
    par.par_extend(vec![5u64; 100].into_par_iter());
    assert_eq!(par.count(&5), 15);
    assert!(par.saturated_counters() > 0);
}
