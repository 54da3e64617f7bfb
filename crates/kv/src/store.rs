//! The [`Store`] trait: what a key-value store must offer to sit behind a filter.

use std::path::PathBuf;

/// One change in a [`Store::write`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// Set `key` to `value`, inserting the key if the store does not hold it.
    Put {
        /// The key.
        key: &'a [u8],
        /// Its new value.
        value: &'a [u8],
    },
    /// Remove `key` (nothing happens if the store does not hold it).
    Delete {
        /// The key.
        key: &'a [u8],
    },
}

impl<'a> Op<'a> {
    /// The key the change is about.
    pub fn key(&self) -> &'a [u8] {
        match *self {
            Op::Put { key, .. } | Op::Delete { key } => key,
        }
    }
}

/// Which committed state of a store a filter reflects.
///
/// `store_id` tells stores apart (a filter file copied next to another database must not
/// load); `generation` counts the store's commits. A filter file whose marker equals the
/// store's current marker was taken when the store held exactly the keys it holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Marker {
    /// Chosen at random when the store was first opened, and never changed.
    pub store_id: u64,
    /// The number of commits the store has made; every commit raises it.
    pub generation: u64,
}

/// An embedded key-value store a [`FilteredStore`](crate::FilteredStore) can guard.
///
/// bloomkit ships [`RedbStore`](crate::RedbStore) (feature `redb`). Another store plugs in
/// by implementing this trait, and the filter's promise (never a false negative, across
/// crashes too) then rests on the contract below, so read it as part of the signature:
///
/// 1. [`write`](Store::write) applies its changes in one atomic commit that also raises
///    the generation by at least one, and returns `Ok` only once that commit is durable
///    (it survives a crash of the process). A generation is never reused, even after a
///    crash.
/// 2. `write` calls `before_commit` once, after applying the changes and **before** they
///    become visible to [`get`](Store::get) and [`scan_keys`](Store::scan_keys); it tells
///    which changes altered the key set (a put of a new key, a delete of a present one).
/// 3. [`scan_keys`](Store::scan_keys) visits every key of one committed state and returns
///    that state's marker; [`marker`](Store::marker) returns the latest committed one.
/// 4. Nothing else writes to the store while the filter guards it (for redb, the default
///    single-writer file lock makes this so).
pub trait Store: Send + Sync {
    /// The store's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The value of `key`, if the store holds it.
    ///
    /// # Errors
    /// The store's own error.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, Self::Error>;

    /// Applies `ops` in order, in one atomic and durable commit (see the trait's contract).
    /// `before_commit` receives, for each op, whether it altered the key set.
    ///
    /// # Errors
    /// The store's own error; then nothing, or everything, was committed.
    fn write(
        &self,
        ops: &[Op<'_>],
        before_commit: &mut dyn FnMut(&[bool]),
    ) -> Result<(), Self::Error>;

    /// The marker of the latest committed state.
    ///
    /// # Errors
    /// The store's own error.
    fn marker(&self) -> Result<Marker, Self::Error>;

    /// Calls `visit` with every key of one committed state; returns that state's marker and
    /// the number of keys visited.
    ///
    /// # Errors
    /// The store's own error.
    fn scan_keys(&self, visit: &mut dyn FnMut(&[u8])) -> Result<(Marker, u64), Self::Error>;

    /// The number of keys the store holds.
    ///
    /// # Errors
    /// The store's own error.
    fn len(&self) -> Result<u64, Self::Error>;

    /// Whether the store holds no key.
    ///
    /// # Errors
    /// The store's own error.
    fn is_empty(&self) -> Result<bool, Self::Error> {
        Ok(self.len()? == 0)
    }

    /// Where the filter file goes when the options name none: next to the store's own
    /// files. `None` (the default) means the filter is rebuilt at every open unless the
    /// options give a path.
    fn filter_path(&self) -> Option<PathBuf> {
        None
    }
}
