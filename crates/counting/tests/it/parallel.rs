//! `par_extend` on the counting filter (feature `rayon`, issue 15): the counters of a
//! parallel build equal a sequential build's, stuck counters included.

use bloomkit_counting::{CountingBloomFilter, U4};
use bloomkit_testkit::{ensure, forall};
use rayon::prelude::*;

#[test]
fn parallel_build_equals_sequential_build() {
    forall(40, |(keys, seed): &(Vec<u16>, u64)| {
        // u16 keys, many repeats: small filters whose 4-bit counters saturate.
        let keys: Vec<u64> = keys.iter().map(|&k| u64::from(k % 64)).collect();
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut seq = CountingBloomFilter::<u64>::builder(16, 0.1)
                .seed(*seed)
                .build()
                .unwrap();
            let mut par = seq.clone();
            seq.insert_batch(&keys);
            pool.install(|| par.par_extend(keys.par_iter()));
            ensure(par == seq, || {
                format!("u4, {threads} threads: counters differ")
            })?;

            let mut seq = CountingBloomFilter::<u64>::builder(16, 0.1)
                .counter::<u16>()
                .seed(*seed)
                .build()
                .unwrap();
            let mut par = seq.clone();
            seq.insert_batch(&keys);
            pool.install(|| par.par_extend(keys.par_iter()));
            ensure(par == seq, || {
                format!("u16, {threads} threads: counters differ")
            })?;
        }
        Ok(())
    });
    // Saturation for certain: one key 100 times.
    let mut par = CountingBloomFilter::<u64, U4>::new(100, 0.01).unwrap();
    par.par_extend(vec![5u64; 100].into_par_iter());
    assert_eq!(par.count(&5), 15);
    assert!(par.saturated_counters() > 0);
}
