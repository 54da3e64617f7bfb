//! The filter file: loaded only when it reflects the store's last commit, rebuilt when it is
//! missing, truncated, corrupted, stale, from another store or of another design; bad
//! options and unwritable files are typed errors. Also: a second `Store` implementation,
//! commit failures, concurrent readers during writes, and filters without deletes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bloomkit_classic::BloomFilter;
use bloomkit_counting::CountingBloomFilter;
use bloomkit_kv::{
    Error, FilteredStore, GuardFilter, Marker, Op, Opened, Options, RebuildReason, RedbStore, Store,
};

type Counting = CountingBloomFilter<[u8]>;

fn key(i: u64) -> Vec<u8> {
    format!("item-{i}").into_bytes()
}

fn filled(path: &Path, keys: u64) -> FilteredStore<RedbStore> {
    let store =
        FilteredStore::open(RedbStore::open(path).unwrap(), Options::new(1_000, 0.01)).unwrap();
    let keys: Vec<Vec<u8>> = (0..keys).map(key).collect();
    let ops: Vec<Op<'_>> = keys.iter().map(|k| Op::Put { key: k, value: k }).collect();
    store.write(&ops).unwrap();
    store
}

fn reopen(path: &Path) -> FilteredStore<RedbStore> {
    FilteredStore::open(RedbStore::open(path).unwrap(), Options::new(1_000, 0.01)).unwrap()
}

fn all_found<F: GuardFilter>(store: &FilteredStore<RedbStore, F>, keys: u64) {
    for i in 0..keys {
        assert!(store.may_contain(&key(i)), "key {i} lost from the filter");
        assert_eq!(store.get(&key(i)).unwrap(), Some(key(i)));
    }
}

fn filter_file(path: &Path) -> PathBuf {
    path.with_extension("redb.filter")
}

#[test]
fn a_clean_close_loads_and_a_missing_file_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    assert_eq!(
        filled(&path, 0).opened(),
        &Opened::Rebuilt(RebuildReason::Missing)
    );
    filled(&path, 300).close().unwrap();
    let store = reopen(&path);
    assert_eq!(store.opened(), &Opened::Loaded);
    all_found(&store, 300);
    drop(store);
    std::fs::remove_file(filter_file(&path)).unwrap();
    let store = reopen(&path);
    assert_eq!(store.opened(), &Opened::Rebuilt(RebuildReason::Missing));
    all_found(&store, 300);
}

#[test]
fn truncated_files_are_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    filled(&path, 300).close().unwrap();
    let whole = std::fs::read(filter_file(&path)).unwrap();
    for len in [0, 7, 39, 40, 41, 100, whole.len() / 2, whole.len() - 1] {
        std::fs::write(filter_file(&path), &whole[..len]).unwrap();
        let store = reopen(&path);
        assert!(
            matches!(store.opened(), Opened::Rebuilt(RebuildReason::Corrupt(_))),
            "{len} of {} bytes: {:?}",
            whole.len(),
            store.opened()
        );
        all_found(&store, 300);
    }
}

#[test]
fn every_flipped_byte_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    filled(&path, 50).close().unwrap();
    let whole = std::fs::read(filter_file(&path)).unwrap();
    // Every byte of the header and the filter's own header, then a stride through the bits.
    let positions = (0..200).chain((200..whole.len()).step_by(97));
    for at in positions {
        let mut bytes = whole.clone();
        bytes[at] ^= 0x01;
        std::fs::write(filter_file(&path), &bytes).unwrap();
        let store = reopen(&path);
        assert!(
            matches!(store.opened(), Opened::Rebuilt(_)),
            "byte {at} flipped and the file loaded"
        );
        all_found(&store, 50);
    }
}

#[test]
fn a_file_older_than_the_last_commit_is_stale() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    filled(&path, 100).close().unwrap();
    let old = std::fs::read(filter_file(&path)).unwrap();
    let store = reopen(&path);
    store.insert(b"late", b"1").unwrap();
    drop(store);
    // As after a crash between the commit and the file's write: the old file is back.
    std::fs::write(filter_file(&path), old).unwrap();
    let store = reopen(&path);
    match store.opened() {
        Opened::Rebuilt(RebuildReason::Stale { file, store: now }) => {
            assert_eq!(file.store_id, now.store_id);
            assert_eq!(file.generation + 1, now.generation);
        }
        other => panic!("{other:?}"),
    }
    assert!(store.may_contain(b"late"));
    all_found(&store, 100);
}

#[test]
fn a_file_of_another_store_is_not_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.redb"), dir.path().join("b.redb"));
    // Same number of commits in both: only the store id tells the files apart.
    filled(&a, 10).close().unwrap();
    let store =
        FilteredStore::<RedbStore>::open(RedbStore::open(&b).unwrap(), Options::new(1_000, 0.01))
            .unwrap();
    store.insert(b"only-in-b", b"1").unwrap();
    drop(store);
    std::fs::copy(filter_file(&a), filter_file(&b)).unwrap();
    let store = reopen(&b);
    match store.opened() {
        Opened::Rebuilt(RebuildReason::Stale { file, store: now }) => {
            assert_eq!(file.generation, now.generation);
            assert_ne!(file.store_id, now.store_id);
        }
        other => panic!("{other:?}"),
    }
    assert!(store.may_contain(b"only-in-b"));
}

#[test]
fn another_design_or_filter_type_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    filled(&path, 100).close().unwrap();
    for options in [Options::new(1_000, 0.001), Options::new(5_000, 0.01)] {
        let store: FilteredStore<RedbStore> =
            FilteredStore::open(RedbStore::open(&path).unwrap(), options.clone()).unwrap();
        assert_eq!(
            store.opened(),
            &Opened::Rebuilt(RebuildReason::OtherDesign),
            "{options:?}"
        );
        all_found(&store, 100);
    }
    // A classic filter cannot load a counting filter's bytes (or the reverse).
    let store: FilteredStore<RedbStore, BloomFilter<[u8]>> =
        FilteredStore::open(RedbStore::open(&path).unwrap(), Options::new(5_000, 0.01)).unwrap();
    assert!(matches!(
        store.opened(),
        Opened::Rebuilt(RebuildReason::Corrupt(_))
    ));
    all_found(&store, 100);
}

#[test]
fn a_leftover_temporary_file_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    filled(&path, 10).close().unwrap();
    let tmp = dir.path().join("s.redb.filter.tmp");
    std::fs::write(&tmp, b"half a file").unwrap();
    let store = reopen(&path);
    assert_eq!(store.opened(), &Opened::Loaded);
    assert!(!tmp.exists());
}

#[test]
fn bad_options_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    for (n, p) in [(0, 0.01), (10, 0.0), (10, 1.0), (10, f64::NAN), (10, -0.5)] {
        let err =
            FilteredStore::<RedbStore>::open(RedbStore::open(&path).unwrap(), Options::new(n, p))
                .unwrap_err();
        assert!(matches!(err, Error::Filter(_)), "({n}, {p}): {err}");
    }
}

#[test]
fn an_unwritable_filter_file_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    let nowhere = dir.path().join("no-such-dir").join("f.filter");
    let err = FilteredStore::<RedbStore>::open(
        RedbStore::open(&path).unwrap(),
        Options::new(100, 0.01).filter_path(&nowhere),
    )
    .unwrap_err();
    match err {
        Error::FilterFile { path, .. } => assert_eq!(path, nowhere),
        other => panic!("{other}"),
    }
}

#[test]
fn a_store_that_outgrew_the_design_gets_a_bigger_filter() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    // 1,000 keys into a filter designed for 1,000: then reopened with a design of 100.
    filled(&path, 1_000).close().unwrap();
    // Rebuilt at exactly its design, it keeps the design (no room added).
    std::fs::remove_file(filter_file(&path)).unwrap();
    assert_eq!(reopen(&path).filter().capacity(), Some(1_000));
    std::fs::remove_file(filter_file(&path)).unwrap();
    let store: FilteredStore<RedbStore> =
        FilteredStore::open(RedbStore::open(&path).unwrap(), Options::new(100, 0.01)).unwrap();
    assert_eq!(store.filter().capacity(), Some(1_250));
    assert!(!store.needs_rebuild());
    all_found(&store, 1_000);
}

#[test]
fn classic_filters_count_stale_removals_and_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    let store: FilteredStore<RedbStore, BloomFilter<[u8]>> =
        FilteredStore::open(RedbStore::open(&path).unwrap(), Options::new(1_000, 0.01)).unwrap();
    for round in 0..3u64 {
        let keys: Vec<Vec<u8>> = (round * 1_000..(round + 1) * 1_000).map(key).collect();
        let puts: Vec<Op<'_>> = keys.iter().map(|k| Op::Put { key: k, value: k }).collect();
        store.write(&puts).unwrap();
        let deletes: Vec<Op<'_>> = keys.iter().map(|k| Op::Delete { key: k }).collect();
        store.write(&deletes).unwrap();
    }
    // 3,000 keys went through a filter designed for 1,000: they are all still "maybe".
    assert_eq!(store.stats().stale_removals, 3_000);
    assert!(store.needs_rebuild());
    let before = store.filter().estimated_fpr();
    store.rebuild().unwrap();
    assert_eq!(store.stats().stale_removals, 0);
    assert!(!store.needs_rebuild());
    assert!(store.filter().estimated_fpr() < before / 10.0);
    assert!((0..3_000).all(|i| store.get(&key(i)).unwrap().is_none()));
}

#[test]
fn counting_filters_free_removed_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    let store = filled(&path, 1_000);
    let keys: Vec<Vec<u8>> = (0..1_000).map(key).collect();
    let deletes: Vec<Op<'_>> = keys.iter().map(|k| Op::Delete { key: k }).collect();
    store.write(&deletes).unwrap();
    assert_eq!(store.stats().stale_removals, 0);
    assert!(store.filter().is_empty());
    let absent_before = store.stats();
    assert!((0..1_000).all(|i| store.get(&key(i)).unwrap().is_none()));
    // Every one answered by the filter: no read made.
    assert_eq!(store.stats().reads_made, absent_before.reads_made);
}

#[test]
fn readers_never_see_a_committed_key_the_filter_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    let store: Arc<FilteredStore<RedbStore>> = Arc::new(
        FilteredStore::open(RedbStore::open(&path).unwrap(), Options::new(20_000, 0.01)).unwrap(),
    );
    let written = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (store, written, done) = (store.clone(), written.clone(), done.clone());
        std::thread::spawn(move || {
            let mut checks = 0u64;
            while !done.load(Ordering::Relaxed) {
                // The key being written right now, and the one after: read the store
                // directly, then ask the filter.
                let next = written.load(Ordering::Relaxed);
                for i in [next, next + 1] {
                    if store.store().get(&key(i)).unwrap().is_some() {
                        assert!(store.may_contain(&key(i)), "key {i} visible, not in filter");
                        checks += 1;
                    }
                }
            }
            checks
        })
    };
    for i in 0..2_000 {
        store.insert(&key(i), b"v").unwrap();
        written.store(i + 1, Ordering::Relaxed);
    }
    done.store(true, Ordering::Relaxed);
    let checks = reader.join().unwrap();
    assert!(checks > 0, "the reader never overlapped a write");
}

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// A second `Store`: an in-memory map, whose commit can be made to fail after the store
/// applied the changes (as a disk error at the flush would).
#[derive(Debug, Default)]
struct MapStore {
    /// The map and its commit count.
    state: Mutex<(Map, u64)>,
    fail_commit: AtomicBool,
    /// Commits without calling the hook: a store that breaks the contract.
    skip_hook: AtomicBool,
}

#[derive(Debug, thiserror::Error)]
#[error("commit failed")]
struct CommitFailed;

impl Store for MapStore {
    type Error = CommitFailed;

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, CommitFailed> {
        Ok(self.state.lock().unwrap().0.get(key).cloned())
    }

    fn write(
        &self,
        ops: &[Op<'_>],
        before_commit: &mut dyn FnMut(&[bool]),
    ) -> Result<(), CommitFailed> {
        let mut state = self.state.lock().unwrap();
        let mut next = state.0.clone();
        let changed: Vec<bool> = ops
            .iter()
            .map(|op| match *op {
                Op::Put { key, value } => next.insert(key.to_vec(), value.to_vec()).is_none(),
                Op::Delete { key } => next.remove(key).is_some(),
            })
            .collect();
        if !self.skip_hook.load(Ordering::Relaxed) {
            before_commit(&changed);
        }
        if self.fail_commit.load(Ordering::Relaxed) {
            return Err(CommitFailed);
        }
        state.0 = next;
        state.1 += 1;
        Ok(())
    }

    fn marker(&self) -> Result<Marker, CommitFailed> {
        Ok(Marker {
            store_id: 7,
            generation: self.state.lock().unwrap().1,
        })
    }

    fn scan_keys(&self, visit: &mut dyn FnMut(&[u8])) -> Result<(Marker, u64), CommitFailed> {
        let state = self.state.lock().unwrap();
        state.0.keys().for_each(|k| visit(k));
        let marker = Marker {
            store_id: 7,
            generation: state.1,
        };
        Ok((marker, state.0.len() as u64))
    }

    fn len(&self) -> Result<u64, CommitFailed> {
        Ok(self.state.lock().unwrap().0.len() as u64)
    }
}

#[test]
fn another_store_plugs_in_and_a_failed_commit_keeps_the_key() {
    let store: FilteredStore<MapStore, Counting> =
        FilteredStore::open(MapStore::default(), Options::new(100, 0.01)).unwrap();
    assert_eq!(store.opened(), &Opened::Rebuilt(RebuildReason::NoFile));
    assert!(store.insert(b"a", b"1").unwrap());
    store.store().fail_commit.store(true, Ordering::Relaxed);
    let err = store.insert(b"b", b"2").unwrap_err();
    assert!(matches!(err, Error::Store(_)), "{err}");
    assert_eq!(err.to_string(), "the store failed: commit failed");
    // "b" stays in the filter (a false positive); "a" cannot leave it.
    assert!(store.may_contain(b"b"));
    assert!(store.remove(b"a").is_err());
    assert!(store.may_contain(b"a"));
    store.store().fail_commit.store(false, Ordering::Relaxed);
    assert_eq!(store.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(store.get(b"b").unwrap(), None);
    assert_eq!(store.stats().false_positives, 1);
}

#[test]
fn a_store_that_skips_the_hook_is_an_error_and_loses_no_key() {
    let store: FilteredStore<MapStore, Counting> =
        FilteredStore::open(MapStore::default(), Options::new(100, 0.01)).unwrap();
    store.store().skip_hook.store(true, Ordering::Relaxed);
    let err = store.insert(b"k", b"v").unwrap_err();
    assert!(
        matches!(
            err,
            Error::StoreContract {
                ops: 1,
                reported: 0
            }
        ),
        "{err}"
    );
    // Committed without the hook: the filter holds the key all the same.
    assert!(store.may_contain(b"k"));
    assert_eq!(store.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}
