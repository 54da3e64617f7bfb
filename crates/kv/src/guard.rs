//! [`GuardFilter`]: the filters that can stand in front of a store.

use std::convert::Infallible;

use bloomkit_classic::{BlockedBloomFilter, BloomFilter};
use bloomkit_core::{Codec, Error, Filter};
use bloomkit_counting::{Counter, CountingBloomFilter};

/// A filter over byte-string keys that a [`FilteredStore`](crate::FilteredStore) keeps in
/// step with its store.
///
/// - [`CountingBloomFilter`] (the default) for stores with deletes: a removal frees the
///   key's counters, so the rate stays what it was sized for.
/// - [`BloomFilter`] and [`BlockedBloomFilter`] for append-only stores: half or less the
///   memory, but a removed key's bits stay set (the filter answers "maybe" for it, never a
///   wrong "absent"), so many deletes raise the rate until
///   [`rebuild`](crate::FilteredStore::rebuild).
pub trait GuardFilter:
    Filter<Key = [u8], InsertError = Infallible> + Codec + Clone + Send + Sync + 'static
{
    /// An empty filter for `items` keys at false-positive rate `fpr`.
    ///
    /// # Errors
    /// [`Error`] for parameters no filter can be built with.
    fn for_items(items: u64, fpr: f64) -> Result<Self, Error>;

    /// Forgets `key`, which has just left the store. Returns whether its place was freed;
    /// `false` (the default, for filters without deletes) leaves it answering "maybe".
    fn forget(&mut self, key: &[u8]) -> bool {
        let _ = key;
        false
    }

    /// The number of keys the filter was sized for.
    fn capacity(&self) -> Option<u64>;
}

impl GuardFilter for BloomFilter<[u8]> {
    fn for_items(items: u64, fpr: f64) -> Result<Self, Error> {
        BloomFilter::new(items, fpr)
    }

    fn capacity(&self) -> Option<u64> {
        self.design().map(|d| d.capacity)
    }
}

impl GuardFilter for BlockedBloomFilter<[u8]> {
    fn for_items(items: u64, fpr: f64) -> Result<Self, Error> {
        BlockedBloomFilter::new(items, fpr)
    }

    fn capacity(&self) -> Option<u64> {
        self.design().map(|d| d.capacity)
    }
}

impl<C: Counter + Send + Sync + 'static> GuardFilter for CountingBloomFilter<[u8], C> {
    fn for_items(items: u64, fpr: f64) -> Result<Self, Error> {
        CountingBloomFilter::builder(items, fpr)
            .counter::<C>()
            .build()
    }

    fn forget(&mut self, key: &[u8]) -> bool {
        // Refused (NotPresent) only if the key's counters say it was never inserted, which
        // the store's own "it was there" rules out; a refusal changes nothing, so it is
        // safe either way.
        self.remove(key).is_ok()
    }

    fn capacity(&self) -> Option<u64> {
        self.design().map(|d| d.capacity)
    }
}
