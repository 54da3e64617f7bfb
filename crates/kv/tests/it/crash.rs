//! Crashes: a child process runs a write-heavy workload (batches of puts and deletes, the
//! filter file rewritten every few commits) and is killed with SIGKILL at a random moment,
//! many times over the same store. After every kill the store is reopened and every key it
//! holds must be found: by the filter (no false negative) and by `get`.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, RandomState};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bloomkit_kv::{FilteredStore, Op, Opened, Options, RebuildReason, RedbStore, Store};
use bloomkit_testkit::SplitMix64;

const CHILD: &str = "BLOOMKIT_KV_CRASH_CHILD";
const UNIVERSE: u64 = 20_000;

fn options() -> Options {
    // 200,000 keys at 1%: a filter file of about 1 MiB, rewritten every 3 commits, so
    // many kills land while it is being written.
    Options::new(200_000, 0.01).persist_every(3)
}

fn key(i: u64) -> Vec<u8> {
    format!("user:{i}").into_bytes()
}

/// The child's side: writes until it is killed. A no-op when the test runs on its own.
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD) else {
        return;
    };
    let path = Path::new(&dir).join("store.redb");
    let store: FilteredStore<RedbStore> =
        FilteredStore::open(RedbStore::open(&path).unwrap(), options()).unwrap();
    let mut rng = SplitMix64(u64::from(std::process::id()) ^ RandomState::new().hash_one(0u8));
    loop {
        let n = 1 + rng.next_u64() % 32;
        let keys: Vec<(bool, Vec<u8>)> = (0..n)
            .map(|_| {
                let r = rng.next_u64();
                (r % 10 < 7, key((r >> 8) % UNIVERSE))
            })
            .collect();
        let ops: Vec<Op<'_>> = keys
            .iter()
            .map(|(put, k)| {
                if *put {
                    Op::Put {
                        key: k,
                        value: b"v",
                    }
                } else {
                    Op::Delete { key: k }
                }
            })
            .collect();
        store.write(&ops).unwrap();
    }
}

#[test]
fn a_kill_at_any_point_loses_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.redb");
    let filter_file = dir.path().join("store.redb.filter");
    let seed = RandomState::new().hash_one(1u8);
    println!("kill timing seed {seed}");
    let mut rng = SplitMix64(seed);
    let exe = std::env::current_exe().unwrap();
    // 32 kills a run, each at a fresh random time (the seed is printed): about 10 s.
    let rounds = 32;
    let mut outcomes: BTreeMap<String, u32> = BTreeMap::new();
    let mut mid_write = 0;
    let mut max_keys = 0;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "crash::crash_child",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Let it open the store (a rebuild of up to 20,000 keys: some kills land in it) and
        // write a while.
        let wait = Duration::from_millis(100 + rng.next_u64() % 300);
        let start = Instant::now();
        while start.elapsed() < wait {
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
                panic!("round {round}: the writer died on its own ({status}):\n{err}");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        if dir.path().join("store.redb.filter.tmp").exists() {
            mid_write += 1;
        }

        let store: FilteredStore<RedbStore> =
            FilteredStore::open(RedbStore::open(&path).unwrap(), options()).unwrap();
        let kind = match store.opened() {
            Opened::Loaded => "loaded".to_string(),
            Opened::Rebuilt(RebuildReason::Stale { .. }) => "rebuilt: stale".to_string(),
            Opened::Rebuilt(RebuildReason::Missing) => "rebuilt: missing".to_string(),
            other => format!("{other:?}"),
        };
        *outcomes.entry(kind).or_default() += 1;
        let mut held = Vec::new();
        store
            .store()
            .scan_keys(&mut |k| held.push(k.to_vec()))
            .unwrap();
        max_keys = max_keys.max(held.len());
        for k in &held {
            assert!(
                store.may_contain(k),
                "round {round}: {} is in the store but not in the filter ({:?})",
                String::from_utf8_lossy(k),
                store.opened()
            );
            assert!(store.get(k).unwrap().is_some());
        }
        // The next writer starts from a file that reflects the store (it loads it), or,
        // every third round, from none (it rebuilds).
        drop(store);
        if round % 3 == 2 {
            std::fs::remove_file(&filter_file).unwrap();
        }
    }
    println!("{rounds} kills: {outcomes:?}; {mid_write} during a filter-file write; up to {max_keys} keys");
    assert!(
        max_keys > 1_000,
        "the writer wrote too little to test anything"
    );
    assert!(
        outcomes.get("rebuilt: stale").copied().unwrap_or(0) > 0,
        "no kill landed after a commit the file had not caught up with: {outcomes:?}"
    );
}
