//! Parallel builds with rayon (feature `rayon`): one filter filled from a parallel iterator.
//!
//! Two ways were measured (`benches/parallel.rs`, `docs/performance.md`, 10^8 keys, 2
//! threads): every thread inserting into one shared atomic filter, and every thread filling
//! a plain filter of its own, the filters ORed together at the end (the per-partition build
//! and reduce of Spark's `bloom_filter_agg`). The second won for both the classic and the
//! blocked filter: an atomic insert pays a locked instruction per word it sets, a private one
//! pays nothing, and the final OR is one pass over memory. So [`par_insert`] does that:
//!
//! - one filter per rayon thread: the caller's own filter, plus `threads - 1` empty ones of
//!   the same shape (fewer if memory runs short; with none at all, the caller's filter alone
//!   serves every thread in turn);
//! - keys are gathered [`CHUNK`] at a time per rayon job and inserted with the filter's
//!   batched `insert_batch` (its prefetching is most of the speed of a large build), into
//!   whichever filter is free;
//! - at the end, the extra filters are ORed into the caller's.
//!
//! The result is the same filter, bit for bit, as inserting the keys one after another.

use core::borrow::Borrow;
use core::convert::Infallible;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use rayon::iter::{IntoParallelIterator, ParallelIterator};

use crate::{EmptyLike, Filter, FilterCore, Union};

/// The rayon this crate was built with, for [`impl_par_extend!`](crate::impl_par_extend).
#[doc(hidden)]
pub use rayon;

/// Keys gathered per rayon job before they go to a filter in one `insert_batch`: enough to
/// amortize taking a filter from the pool and to fill the batch pipeline, few enough to stay
/// in L1.
pub const CHUNK: usize = 1024;

/// The filters not in use at the moment; a flush takes one and gives it back.
struct Pool<'a, F> {
    free: Mutex<Vec<&'a mut F>>,
    returned: Condvar,
}

impl<'a, F> Pool<'a, F> {
    fn lock(&self) -> MutexGuard<'_, Vec<&'a mut F>> {
        // No user code runs under this lock, so a poisoned one still holds a sound list.
        self.free.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A free filter, waiting for one if all are in use (each is held for one
    /// `insert_batch` only, which never waits on anything, so the wait ends).
    fn take(&self) -> Lent<'_, 'a, F> {
        let mut free = self.lock();
        loop {
            if let Some(filter) = free.pop() {
                return Lent {
                    filter: Some(filter),
                    pool: self,
                };
            }
            free = self
                .returned
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A filter taken from the pool, given back when dropped, even by a panic (a user's `Hash`
/// may panic), so that no other job waits for it forever.
struct Lent<'p, 'a, F> {
    filter: Option<&'a mut F>,
    pool: &'p Pool<'a, F>,
}

impl<F> Drop for Lent<'_, '_, F> {
    fn drop(&mut self) {
        if let Some(filter) = self.filter.take() {
            self.pool.lock().push(filter);
            self.pool.returned.notify_one();
        }
    }
}

/// One rayon job's gathered keys; what is left goes in when the job ends.
struct Gathered<'p, 'a, F, T>
where
    F: Filter + FilterCore<InsertError = Infallible>,
    T: Borrow<F::Key>,
{
    keys: Vec<T>,
    pool: &'p Pool<'a, F>,
}

impl<F, T> Gathered<'_, '_, F, T>
where
    F: Filter + FilterCore<InsertError = Infallible>,
    T: Borrow<F::Key>,
{
    fn flush(&mut self) {
        if self.keys.is_empty() {
            return;
        }
        let mut lent = self.pool.take();
        if let Some(filter) = lent.filter.as_deref_mut() {
            filter.insert_batch(self.keys.drain(..));
        }
    }
}

impl<F, T> Drop for Gathered<'_, '_, F, T>
where
    F: Filter + FilterCore<InsertError = Infallible>,
    T: Borrow<F::Key>,
{
    fn drop(&mut self) {
        // Not while unwinding: the panic came from the caller's iterator or key type, and
        // hashing those keys again could panic a second time (an abort).
        if !std::thread::panicking() {
            self.flush();
        }
    }
}

/// Inserts every key of the parallel iterator `keys` into `filter`, from all of rayon's
/// threads; the other threads fill filters of `filter`'s shape ([`EmptyLike`]). See the
/// [module docs](self).
///
/// For the crates that implement a variant: users call `par_extend` (rayon's
/// `ParallelExtend`, which [`impl_par_extend!`](crate::impl_par_extend) writes).
///
/// The result equals, bit for bit, a sequential `insert_batch` of the same keys. If `keys`
/// panics, the panic propagates and `filter` holds its keys from before the call and some
/// of the new ones: nothing it held is lost.
///
/// # Panics
/// If `empty_like` makes a filter that cannot be merged into `filter` (a bug in the variant,
/// never caused by input): better a panic than keys silently left out.
pub fn par_insert<F, T, I>(filter: &mut F, keys: I)
where
    F: Filter + FilterCore<InsertError = Infallible> + Union + EmptyLike + Send,
    T: Borrow<F::Key> + Send,
    I: IntoParallelIterator<Item = T>,
{
    // Allocated before any key moves, fallibly: short of memory, fewer threads share.
    let helpers = rayon::current_num_threads().saturating_sub(1);
    let mut extras = Vec::with_capacity(helpers);
    while extras.len() < helpers {
        match filter.empty_like() {
            Ok(f) => extras.push(f),
            Err(_) => break,
        }
    }
    {
        let free: Vec<&mut F> = core::iter::once(&mut *filter)
            .chain(extras.iter_mut())
            .collect();
        let pool = Pool {
            free: Mutex::new(free),
            returned: Condvar::new(),
        };
        keys.into_par_iter().for_each_init(
            || Gathered {
                keys: Vec::with_capacity(CHUNK),
                pool: &pool,
            },
            |gathered, key| {
                gathered.keys.push(key);
                if gathered.keys.len() == CHUNK {
                    gathered.flush();
                }
            },
        );
    }
    for extra in &extras {
        let merged = filter.union_with(extra);
        assert!(
            merged.is_ok(),
            "par_insert: `empty_like` made a filter of another shape: {merged:?}"
        );
    }
}

/// rayon's `ParallelExtend` for a filter, through [`par_insert`]: one filter per thread,
/// merged at the end, with its docs and doctest written once. As for
/// [`impl_infallible_filter!`](crate::impl_infallible_filter): the generic parameters other
/// than the key in brackets, the type, and the key parameter; then the crate and type for the
/// doctest; then any doc lines of the variant's own:
///
/// ```text
/// bloomkit_core::impl_par_extend!(
///     [S: PortableHasher + Clone + Send] BloomFilter<K, S>, key = K,
///     doc = ("bloomkit_classic", BloomFilter)
/// );
/// ```
///
/// Exported only so the variant crates can use it: not part of the public API.
#[doc(hidden)]
#[macro_export]
macro_rules! impl_par_extend {
    (
        [$($generics:tt)*] $ty:ty, key = $key:ident, doc = ($krate:literal, $name:ident)
        $(, $(#[$doc:meta])*)?
    ) => {
        /// Inserts the keys of a rayon parallel iterator from all of rayon's threads (feature
        /// `rayon`): one private filter per thread, merged into this one at the end
        /// ([`bloomkit_core::parallel`]; faster than one shared atomic filter, as measured
        /// there). The result is the filter a sequential `insert_batch` of the same keys
        /// makes, bit for bit.
        $($(#[$doc])*)?
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use ", $krate, "::", stringify!($name), ";")]
        /// use rayon::prelude::*;
        ///
        /// let urls: Vec<String> = (0..10_000).map(|i| format!("https://example.com/{i}")).collect();
        #[doc = concat!("let mut seen = ", stringify!($name), "::<str>::new(10_000, 0.01)?;")]
        /// seen.par_extend(urls.par_iter().map(String::as_str));
        /// assert!(urls.iter().all(|url| seen.contains(url)));
        /// # Ok::<(), bloomkit_core::Error>(())
        /// ```
        impl<$key, $($generics)*, T> $crate::parallel::rayon::iter::ParallelExtend<T> for $ty
        where
            $key: ::core::hash::Hash + ?::core::marker::Sized,
            T: ::core::borrow::Borrow<$key> + ::core::marker::Send,
            $ty: $crate::Filter<Key = $key>
                + $crate::FilterCore<InsertError = ::core::convert::Infallible>
                + $crate::Union
                + $crate::EmptyLike
                + ::core::marker::Send,
        {
            fn par_extend<I>(&mut self, keys: I)
            where
                I: $crate::parallel::rayon::iter::IntoParallelIterator<Item = T>,
            {
                $crate::parallel::par_insert(self, keys);
            }
        }
    };
}
