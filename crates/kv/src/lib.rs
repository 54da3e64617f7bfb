//! A Bloom filter in front of an embedded on-disk key-value store: a lookup of a key the
//! store does not hold is answered from memory, without a disk read, and no crash can make
//! the filter answer "absent" for a key the store holds.
//!
//! This is what LevelDB, RocksDB, Cassandra and HBase do per file, packaged for a store of
//! your own: [`FilteredStore`] wraps a [`Store`] (bloomkit ships [`RedbStore`], over the
//! [redb](https://docs.rs/redb) database; another store plugs in through the trait) and a
//! [`GuardFilter`] (a counting filter by default, so deletes free their place; a classic or
//! blocked filter for append-only data).
//!
//! # Examples
//!
//! ```
//! use bloomkit_kv::{FilteredStore, Opened, Options, RedbStore};
//!
//! let dir = std::env::temp_dir().join(format!("bloomkit-kv-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let path = dir.join("users.redb");
//!
//! // A counting filter sized for 10,000 keys at 1%, kept in `users.redb.filter`.
//! let store: FilteredStore<RedbStore> =
//!     FilteredStore::open(RedbStore::open(&path)?, Options::new(10_000, 0.01))?;
//! store.insert(b"alice", b"admin")?;
//! store.insert(b"bob", b"reader")?;
//! store.remove(b"bob")?;
//!
//! assert_eq!(store.get(b"alice")?.as_deref(), Some(&b"admin"[..]));
//! assert_eq!(store.get(b"bob")?, None);   // answered by the filter: no read
//! assert_eq!(store.get(b"carol")?, None); // likewise (or, 1% of the time, by a read)
//! assert!(store.stats().reads_avoided >= 1);
//! store.close()?; // writes the filter file
//!
//! // The next open loads the file, since it reflects the store's last commit.
//! let store: FilteredStore<RedbStore> =
//!     FilteredStore::open(RedbStore::open(&path)?, Options::new(10_000, 0.01))?;
//! assert_eq!(store.opened(), &Opened::Loaded);
//! assert!(store.may_contain(b"alice"));
//! # drop(store);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How nothing is lost
//!
//! - **Writes go filter-first.** A new key enters the filter after the store has applied
//!   the write and before the commit makes it visible, so a reader can never see the key
//!   in the store and not in the filter. A removal leaves the filter only after the store
//!   has committed it. When a commit fails, the filter keeps the key (a false positive,
//!   never a false negative).
//! - **The filter file names the state it reflects.** Every commit raises a counter kept in
//!   the store, in the same transaction as the data; the file records the counter (and the
//!   store's random id) it was taken at, and is loaded only if both match the store's. A
//!   file from before the last commit, from another store, truncated, corrupted (the file
//!   and the filter bytes are checksummed) or missing is not trusted: the filter is rebuilt
//!   from the store's keys. The file is written to a temporary name, flushed, and renamed
//!   over the old one, so a crash during the write leaves the old file whole.
//! - The file is written by [`persist`](FilteredStore::persist),
//!   [`close`](FilteredStore::close), on drop, and every
//!   [`persist_every`](Options::persist_every) writes if you ask for it. After a crash the
//!   file is usually stale and the first open rebuilds, which costs one scan of the store
//!   (54 s for 10^7 keys in a cold 2.2 GB redb file here; `docs/performance.md`).
//!
//! # Crate features
//!
//! - `redb` (default): [`RedbStore`].

#![forbid(unsafe_code)]

mod guard;
#[cfg(feature = "redb")]
mod redb_store;
mod sidecar;
mod store;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use bloomkit_counting::CountingBloomFilter;

pub use guard::GuardFilter;
#[cfg(feature = "redb")]
pub use redb_store::RedbStore;
pub use store::{Marker, Op, Store};

/// What went wrong in a [`FilteredStore`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The store failed; nothing of the failed write is lost from the filter.
    #[error("the store failed: {0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The filter file could not be written. The store and the filter in memory are fine;
    /// the next open rebuilds the filter.
    #[error("cannot write the filter file {}: {source}", path.display())]
    FilterFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The store committed a write without reporting, before the commit, which of its
    /// `ops` changed the key set (see the [`Store`] contract). Every key the write put is in
    /// the filter; keys it deleted stay there too (false positives only).
    #[error("the store broke its contract: {reported} changes reported for {ops} ops")]
    StoreContract {
        /// Ops in the write.
        ops: usize,
        /// Changes the store reported (summed over its calls of the hook).
        reported: usize,
    },
    /// The filter cannot be built with the options' parameters.
    #[error("the filter: {0}")]
    Filter(#[from] bloomkit_core::Error),
}

#[cfg(feature = "redb")]
impl From<redb::Error> for Error {
    fn from(e: redb::Error) -> Self {
        Error::Store(Box::new(e))
    }
}

fn store_error<E: std::error::Error + Send + Sync + 'static>(e: E) -> Error {
    Error::Store(Box::new(e))
}

/// How a [`FilteredStore`] sizes and keeps its filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    expected_items: u64,
    fpr: f64,
    filter_path: Option<PathBuf>,
    persist_every: u64,
}

impl Options {
    /// A filter sized for `expected_items` keys at false-positive rate `fpr` (checked when
    /// the store opens), kept in the file the store names ([`Store::filter_path`]),
    /// written on [`close`](FilteredStore::close) and drop.
    pub fn new(expected_items: u64, fpr: f64) -> Self {
        Options {
            expected_items,
            fpr,
            filter_path: None,
            persist_every: 0,
        }
    }

    /// Keeps the filter file at `path` instead.
    pub fn filter_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.filter_path = Some(path.into());
        self
    }

    /// Also writes the filter file after every `writes` writes (0, the default: only on
    /// [`persist`](FilteredStore::persist), close and drop). A file that reflects the last
    /// commit spares the rebuild after a crash; each write of it costs the filter's size
    /// in I/O.
    pub fn persist_every(mut self, writes: u64) -> Self {
        self.persist_every = writes;
        self
    }
}

/// Why the filter was rebuilt from the store's keys when the store opened.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RebuildReason {
    /// Neither the options nor the store name a filter file.
    NoFile,
    /// There is no filter file (first open, or it was deleted).
    Missing,
    /// The file could not be read or failed a check (what is said here).
    Corrupt(String),
    /// The file reflects another state of the store (a commit after it was written, as
    /// after a crash) or another store.
    Stale {
        /// The state the file reflects.
        file: Marker,
        /// The store's state.
        store: Marker,
    },
    /// The file holds a filter of another design than the options ask for.
    OtherDesign,
}

/// Where the filter came from when the store opened.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Opened {
    /// Loaded from the filter file, which reflected the store's last commit.
    Loaded,
    /// Rebuilt from the store's keys.
    Rebuilt(RebuildReason),
}

/// How often the filter spared a read, and how often it could not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Lookups the filter answered "absent": no store read.
    pub reads_avoided: u64,
    /// Lookups that read the store (the filter answered "maybe").
    pub reads_made: u64,
    /// Reads the store answered "absent": the filter's false positives (for classic and
    /// blocked filters, removed keys count here too).
    pub false_positives: u64,
    /// Removed keys still in the filter (filters without deletes) since the last rebuild.
    pub stale_removals: u64,
}

#[derive(Debug, Default)]
struct Counters {
    reads_avoided: AtomicU64,
    reads_made: AtomicU64,
    false_positives: AtomicU64,
    stale_removals: AtomicU64,
    writes_since_persist: AtomicU64,
}

/// A key-value store guarded by a filter. See the [crate docs](crate) for the guarantees.
///
/// All methods take `&self`: share it between threads with an `Arc`. Lookups run in
/// parallel; writes are serialized (as the store's own are).
pub struct FilteredStore<S: Store, F: GuardFilter = CountingBloomFilter<[u8]>> {
    store: S,
    filter: RwLock<F>,
    /// Held by every write, by a rebuild, and while a persist reads the marker and copies
    /// the filter, so each of those sees no write half done.
    writes: Mutex<()>,
    /// Held while the file is written; holds the marker the file last reflected.
    persisted: Mutex<Option<Marker>>,
    path: Option<PathBuf>,
    options: Options,
    opened: Opened,
    counters: Counters,
}

impl<S: Store, F: GuardFilter> fmt::Debug for FilteredStore<S, F>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteredStore")
            .field("store", &self.store)
            .field("path", &self.path)
            .field("options", &self.options)
            .field("opened", &self.opened)
            .field("stats", &self.stats())
            .finish()
    }
}

/// Locks that a panic elsewhere left poisoned are still used: every critical section
/// leaves the filter a superset of the store, whatever point it stopped at.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<S: Store, F: GuardFilter> FilteredStore<S, F> {
    /// Opens `store` behind a filter: loads the filter file if it reflects the store's
    /// last commit and has the options' design, else rebuilds the filter from the store's
    /// keys (and writes the file). [`opened`](Self::opened) tells which.
    ///
    /// A store that holds more keys than `expected_items` gets a filter sized for 25% more
    /// than it holds.
    ///
    /// # Errors
    /// [`Error::Filter`] for bad options (`expected_items == 0`, `fpr` outside (0, 1));
    /// [`Error::Store`] when reading the store fails; [`Error::FilterFile`] when the
    /// rebuilt filter cannot be written (the store is then not opened).
    pub fn open(store: S, options: Options) -> Result<Self, Error> {
        // Checks the parameters before any I/O.
        F::for_items(options.expected_items, options.fpr)?;
        let path = options.filter_path.clone().or_else(|| store.filter_path());
        let current = store.marker().map_err(store_error)?;
        let loaded = match &path {
            None => Err(RebuildReason::NoFile),
            Some(path) => match sidecar::read::<F>(path, current) {
                Ok(filter) if Self::fits(&filter, &options) => Ok(filter),
                Ok(_) => Err(RebuildReason::OtherDesign),
                Err(sidecar::Unusable::Missing) => Err(RebuildReason::Missing),
                Err(sidecar::Unusable::Corrupt(why)) => Err(RebuildReason::Corrupt(why)),
                Err(sidecar::Unusable::Stale { file }) => Err(RebuildReason::Stale {
                    file,
                    store: current,
                }),
            },
        };
        let (filter, opened, persisted) = match loaded {
            Ok(filter) => (filter, Opened::Loaded, Some(current)),
            Err(reason) => {
                let (filter, _) = Self::build(&store, &options)?;
                (filter, Opened::Rebuilt(reason), None)
            }
        };
        let this = FilteredStore {
            store,
            filter: RwLock::new(filter),
            writes: Mutex::new(()),
            persisted: Mutex::new(persisted),
            path,
            options,
            opened,
            counters: Counters::default(),
        };
        // A rebuilt filter is written at once, so the next open loads it.
        this.persist()?;
        Ok(this)
    }

    /// Whether a loaded filter is what the options ask for.
    fn fits(filter: &F, options: &Options) -> bool {
        let same_rate = filter
            .target_fpr()
            .is_some_and(|p| (p - options.fpr).abs() <= options.fpr * 1e-9);
        let big_enough = filter
            .capacity()
            .is_some_and(|n| n >= options.expected_items);
        same_rate && big_enough
    }

    /// A filter holding every key of the store, and the state it reflects.
    fn build(store: &S, options: &Options) -> Result<(F, Marker), Error> {
        let len = store.len().map_err(store_error)?;
        // The design, unless the store outgrew it: then room for a quarter more.
        let items = if len <= options.expected_items {
            options.expected_items
        } else {
            len.saturating_add(len / 4)
        };
        let mut filter = F::for_items(items, options.fpr)?;
        let (marker, _) = store
            .scan_keys(&mut |key| {
                filter.insert(key);
            })
            .map_err(store_error)?;
        Ok((filter, marker))
    }

    fn read_filter(&self) -> RwLockReadGuard<'_, F> {
        self.filter
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write_filter(&self) -> RwLockWriteGuard<'_, F> {
        self.filter
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The value of `key`: the filter first, and a store read only on its "maybe".
    ///
    /// # Errors
    /// [`Error::Store`] when the read fails.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        if !self.read_filter().contains(key) {
            self.counters.reads_avoided.fetch_add(1, Relaxed);
            return Ok(None);
        }
        self.counters.reads_made.fetch_add(1, Relaxed);
        let value = self.store.get(key).map_err(store_error)?;
        if value.is_none() {
            self.counters.false_positives.fetch_add(1, Relaxed);
        }
        Ok(value)
    }

    /// Whether the store holds `key` (as [`get`](Self::get), without returning the value).
    ///
    /// # Errors
    /// [`Error::Store`] when the read fails.
    pub fn contains_key(&self, key: &[u8]) -> Result<bool, Error> {
        Ok(self.get(key)?.is_some())
    }

    /// The filter's answer alone: `false` means the store certainly does not hold `key`.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.read_filter().contains(key)
    }

    /// Sets `key` to `value`; returns whether the key is new.
    ///
    /// # Errors
    /// [`Error::Store`] when the write fails (the key may stay in the filter: a false
    /// positive, never a false negative).
    pub fn insert(&self, key: &[u8], value: &[u8]) -> Result<bool, Error> {
        Ok(self.write(&[Op::Put { key, value }])?[0])
    }

    /// Removes `key`; returns whether the store held it.
    ///
    /// # Errors
    /// [`Error::Store`] when the write fails (the filter keeps the key).
    pub fn remove(&self, key: &[u8]) -> Result<bool, Error> {
        Ok(self.write(&[Op::Delete { key }])?[0])
    }

    /// Applies `ops` in order in one commit (one disk flush for all of them); returns, for
    /// each, whether it changed the key set (a put of a new key, a delete of a present one).
    ///
    /// # Errors
    /// [`Error::Store`] when the write fails: nothing, or everything, was committed, and
    /// the filter holds every key either way.
    pub fn write(&self, ops: &[Op<'_>]) -> Result<Vec<bool>, Error> {
        let gate = lock(&self.writes);
        let mut changed = Vec::new();
        self.store
            .write(ops, &mut |applied| {
                // Before the commit: new keys enter the filter before readers can see them.
                let mut filter = self.write_filter();
                // A store that reports the wrong number of changes breaks its contract;
                // then every put goes in, so the filter still holds every key.
                let trusted = applied.len() == ops.len();
                for (i, op) in ops.iter().enumerate() {
                    if let Op::Put { key, .. } = op
                        && (!trusted || applied[i])
                    {
                        filter.insert(key);
                    }
                }
                changed.extend_from_slice(applied);
            })
            .map_err(store_error)?;
        if changed.len() != ops.len() {
            // The hook was not called, called twice, or told of another number of changes:
            // the commit happened, so make the filter a superset now, then say so.
            let mut filter = self.write_filter();
            for op in ops {
                if let Op::Put { key, .. } = op {
                    filter.insert(key);
                }
            }
            return Err(Error::StoreContract {
                ops: ops.len(),
                reported: changed.len(),
            });
        }
        // After the commit: removed keys leave the filter only now they left the store.
        let mut stale = 0;
        {
            let mut filter = self.write_filter();
            for (op, &gone) in ops.iter().zip(&changed) {
                if let Op::Delete { key } = op
                    && gone
                    && !filter.forget(key)
                {
                    stale += 1;
                }
            }
        }
        self.counters.stale_removals.fetch_add(stale, Relaxed);
        let writes = self.counters.writes_since_persist.fetch_add(1, Relaxed) + 1;
        drop(gate);
        if self.options.persist_every > 0 && writes >= self.options.persist_every {
            self.persist()?;
        }
        Ok(changed)
    }

    /// Writes the filter file, if the options or the store name one and it does not already
    /// reflect the last commit. Writes continue meanwhile; the file reflects the state at
    /// the call.
    ///
    /// # Errors
    /// [`Error::Store`] reading the store's marker, [`Error::FilterFile`] writing the file.
    pub fn persist(&self) -> Result<(), Error> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let mut persisted = lock(&self.persisted);
        let (marker, snapshot) = {
            let _gate = lock(&self.writes);
            let marker = self.store.marker().map_err(store_error)?;
            if *persisted == Some(marker) {
                return Ok(());
            }
            self.counters.writes_since_persist.store(0, Relaxed);
            (marker, self.read_filter().clone())
        };
        sidecar::write(path, marker, &snapshot).map_err(|source| Error::FilterFile {
            path: path.clone(),
            source,
        })?;
        *persisted = Some(marker);
        Ok(())
    }

    /// Whether deletes (filters without them) or growth past the design have raised the
    /// filter's estimated rate above twice the target: time to [`rebuild`](Self::rebuild).
    pub fn needs_rebuild(&self) -> bool {
        self.read_filter().estimated_fpr() > 2.0 * self.options.fpr
    }

    /// Rebuilds the filter from the store's keys (dropping removed keys' bits, and sized
    /// for 25% more keys than the store holds if it outgrew the design), then writes the
    /// file. Lookups go on meanwhile, on the old filter; writes wait.
    ///
    /// # Errors
    /// [`Error::Store`] reading the store, [`Error::FilterFile`] writing the file.
    pub fn rebuild(&self) -> Result<(), Error> {
        {
            // The same lock order as `persist`: the file's lock, then the writes'.
            let mut persisted = lock(&self.persisted);
            let _gate = lock(&self.writes);
            let (filter, _) = Self::build(&self.store, &self.options)?;
            *self.write_filter() = filter;
            self.counters.stale_removals.store(0, Relaxed);
            // The file holds the old filter; the marker alone cannot tell.
            *persisted = None;
        }
        self.persist()
    }

    /// Writes the filter file and closes the store.
    ///
    /// # Errors
    /// As [`persist`](Self::persist); the store is closed either way.
    pub fn close(self) -> Result<(), Error> {
        self.persist()
    }

    /// Where the filter came from when the store opened.
    pub fn opened(&self) -> &Opened {
        &self.opened
    }

    /// The lookup counters.
    pub fn stats(&self) -> Stats {
        Stats {
            reads_avoided: self.counters.reads_avoided.load(Relaxed),
            reads_made: self.counters.reads_made.load(Relaxed),
            false_positives: self.counters.false_positives.load(Relaxed),
            stale_removals: self.counters.stale_removals.load(Relaxed),
        }
    }

    /// The store, to read it directly.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The filter file's path, if there is one.
    pub fn filter_path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// A copy of the filter as it is now.
    pub fn filter(&self) -> F {
        self.read_filter().clone()
    }
}

impl<S: Store, F: GuardFilter> Drop for FilteredStore<S, F> {
    fn drop(&mut self) {
        // Best effort: a file that cannot be written only means a rebuild at the next open.
        let _ = self.persist();
    }
}

/// The README's examples, compiled and run as doctests so that it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
