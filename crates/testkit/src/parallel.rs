//! The check every `par_extend` runs: a parallel build equals the sequential one, bit for bit.

use std::fmt::Debug;

use core::convert::Infallible;

use bloomkit_core::{Filter, FilterCore};
use rayon::iter::{IntoParallelRefIterator, ParallelExtend, ParallelIterator};

use crate::{ensure, Outcome};

/// A rayon pool of `threads` threads.
///
/// # Panics
/// If rayon cannot start the threads (a test machine problem, not a filter's).
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
}

/// `keys` inserted into a copy of `filter` by `par_extend` on a pool of `threads` threads
/// give the filter a sequential `insert_batch` of them gives, bit for bit (`what` names the
/// case in the failure message).
pub fn check_par_extend<F>(filter: &F, keys: &[u64], threads: usize, what: &str) -> Outcome
where
    F: Filter<Key = u64> + FilterCore<InsertError = Infallible>,
    F: ParallelExtend<u64> + Clone + PartialEq + Debug + Send,
{
    let mut seq = filter.clone();
    let mut par = filter.clone();
    seq.insert_batch(keys);
    pool(threads).install(|| par.par_extend(keys.par_iter().copied()));
    ensure(par == seq, || {
        format!("{what}, {threads} threads: the parallel build differs from the sequential one")
    })
}
