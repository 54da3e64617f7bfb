//! [`RedbStore`]: the [`Store`] over a redb database.

use std::ffi::OsString;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};

use redb::{
    Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
};

use crate::store::{Marker, Op, Store};

/// The table holding the user's keys and values.
const DATA: TableDefinition<'static, &[u8], &[u8]> = TableDefinition::new("bloomkit.kv.data");
/// The store id and the commit counter, updated in the same transaction as the data.
const META: TableDefinition<'static, &str, u64> = TableDefinition::new("bloomkit.kv.meta");
const STORE_ID: &str = "store_id";
const GENERATION: &str = "generation";

/// A redb database as a [`Store`]: keys and values are byte strings in one table, and a
/// second table holds the store id and a commit counter that every write raises in the same
/// transaction (the [`Marker`] a filter file is checked against).
///
/// Every commit is durable ([`Durability::Immediate`]), as the [`Store`] contract asks:
/// batch many changes into one [`write`](crate::FilteredStore::write) when you need more
/// writes per second.
///
/// # Examples
///
/// ```
/// use bloomkit_kv::{RedbStore, Store};
///
/// let dir = std::env::temp_dir().join(format!("bloomkit-redb-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let store = RedbStore::open(dir.join("data.redb"))?;
/// assert!(store.get(b"k")?.is_none());
/// assert_eq!(store.filter_path(), Some(dir.join("data.redb.filter")));
/// # drop(store);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedbStore {
    db: Database,
    path: Option<PathBuf>,
}

impl fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedbStore")
            .field("path", &self.path)
            .finish()
    }
}

impl RedbStore {
    /// Opens the database at `path`, creating it if missing, with redb's defaults (a 1 GiB
    /// cache; one writing process at a time, enforced by a file lock).
    ///
    /// # Errors
    /// redb's error: the file is not a redb database, another process has it open, I/O.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, redb::Error> {
        let path = path.as_ref();
        Self::from_database(Database::create(path)?, Some(path.to_path_buf()))
    }

    /// Wraps a database you opened yourself (to set its cache size, say). `path` is where
    /// it lives, for the filter file next to it (`None`: name the file in the options).
    ///
    /// Open it in redb's default `ConcurrencyMode::ExclusiveWriter`: a filter in this
    /// process cannot see keys another process writes.
    ///
    /// # Errors
    /// redb's error, when creating the tables fails.
    pub fn from_database(db: Database, path: Option<PathBuf>) -> Result<Self, redb::Error> {
        let txn = db.begin_write()?;
        {
            txn.open_table(DATA)?;
            let mut meta = txn.open_table(META)?;
            if meta.get(STORE_ID)?.is_none() {
                // Random per store, from the OS-seeded RandomState: a filter file copied
                // next to another database must not match it.
                meta.insert(STORE_ID, RandomState::new().hash_one(std::process::id()))?;
            }
        }
        txn.commit()?;
        Ok(RedbStore { db, path })
    }

    /// The database, to read it directly (its writes must go through the filter).
    pub fn database(&self) -> &Database {
        &self.db
    }

    fn read_marker(meta: &impl ReadableTable<&'static str, u64>) -> Result<Marker, redb::Error> {
        let get =
            |name| -> Result<u64, redb::Error> { Ok(meta.get(name)?.map_or(0, |v| v.value())) };
        Ok(Marker {
            store_id: get(STORE_ID)?,
            generation: get(GENERATION)?,
        })
    }
}

impl Store for RedbStore {
    type Error = redb::Error;

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, redb::Error> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(DATA)?;
        Ok(table.get(key)?.map(|v| v.value().to_vec()))
    }

    fn write(
        &self,
        ops: &[Op<'_>],
        before_commit: &mut dyn FnMut(&[bool]),
    ) -> Result<(), redb::Error> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        let mut changed = Vec::with_capacity(ops.len());
        {
            let mut data = txn.open_table(DATA)?;
            for op in ops {
                changed.push(match *op {
                    Op::Put { key, value } => data.insert(key, value)?.is_none(),
                    Op::Delete { key } => data.remove(key)?.is_some(),
                });
            }
            let mut meta = txn.open_table(META)?;
            let generation = meta.get(GENERATION)?.map_or(0, |v| v.value());
            meta.insert(GENERATION, generation + 1)?;
        }
        // Readers see nothing of this transaction until the commit below.
        before_commit(&changed);
        txn.commit()?;
        Ok(())
    }

    fn marker(&self) -> Result<Marker, redb::Error> {
        let txn = self.db.begin_read()?;
        Self::read_marker(&txn.open_table(META)?)
    }

    fn scan_keys(&self, visit: &mut dyn FnMut(&[u8])) -> Result<(Marker, u64), redb::Error> {
        // One read transaction: the keys and the marker of the same committed state.
        let txn = self.db.begin_read()?;
        let marker = Self::read_marker(&txn.open_table(META)?)?;
        let mut count = 0;
        for entry in txn.open_table(DATA)?.iter()? {
            visit(entry?.0.value());
            count += 1;
        }
        Ok((marker, count))
    }

    fn len(&self) -> Result<u64, redb::Error> {
        let txn = self.db.begin_read()?;
        Ok(txn.open_table(DATA)?.len()?)
    }

    fn filter_path(&self) -> Option<PathBuf> {
        self.path.as_ref().map(|p| {
            let mut name = OsString::from(p.as_os_str());
            name.push(".filter");
            PathBuf::from(name)
        })
    }
}
