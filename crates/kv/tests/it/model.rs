//! The filtered store against a `BTreeMap` model: random sequences of puts, deletes,
//! batches, reopens, persists, rebuilds and damaged filter files. After every step each key
//! of a small universe reads back what the model holds, and every key the model holds is
//! in the filter (no false negative, ever).

use std::collections::BTreeMap;
use std::path::Path;

use bloomkit_classic::{BlockedBloomFilter, BloomFilter};
use bloomkit_counting::{CountingBloomFilter, U4};
use bloomkit_kv::{FilteredStore, GuardFilter, Op, Opened, Options, RedbStore};
use bloomkit_testkit::{ensure, forall, Outcome};
use quickcheck::{Arbitrary, Gen};

/// Keys 0..UNIVERSE: few enough that the sequences hit the same keys again and again.
const UNIVERSE: u8 = 24;

#[derive(Debug, Clone)]
enum Step {
    Put(u8, u8),
    Delete(u8),
    Batch(Vec<(bool, u8, u8)>),
    Reopen,
    Persist,
    Rebuild,
    /// Flip one byte of the filter file (if there is one), then reopen.
    Damage(u16),
    /// Drop the store without writing the file (as a crash would), then reopen.
    Crash,
}

impl Arbitrary for Step {
    fn arbitrary(g: &mut Gen) -> Self {
        let key = |g: &mut Gen| u8::arbitrary(g) % UNIVERSE;
        match u8::arbitrary(g) % 20 {
            0..=6 => Step::Put(key(g), u8::arbitrary(g)),
            7..=11 => Step::Delete(key(g)),
            12..=14 => Step::Batch(
                (0..usize::arbitrary(g) % 8)
                    .map(|_| (bool::arbitrary(g), key(g), u8::arbitrary(g)))
                    .collect(),
            ),
            15 => Step::Reopen,
            16 => Step::Persist,
            17 => Step::Rebuild,
            18 => Step::Damage(u16::arbitrary(g)),
            _ => Step::Crash,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        match self {
            Step::Batch(ops) => Box::new(ops.shrink().map(Step::Batch)),
            _ => Box::new(std::iter::empty()),
        }
    }
}

fn key(k: u8) -> Vec<u8> {
    format!("key-{k}").into_bytes()
}

fn open<F: GuardFilter>(path: &Path) -> FilteredStore<RedbStore, F> {
    // Sized for 16 keys while the universe has 24: the growth path is exercised too.
    FilteredStore::open(RedbStore::open(path).unwrap(), Options::new(16, 0.05)).unwrap()
}

fn check<F: GuardFilter>(
    store: &FilteredStore<RedbStore, F>,
    model: &BTreeMap<u8, u8>,
    step: usize,
) -> Outcome {
    for k in 0..UNIVERSE {
        let expected = model.get(&k).map(|&v| vec![v]);
        if expected.is_some() {
            ensure(store.may_contain(&key(k)), || {
                format!("after step {step}: key {k} held by the store is not in the filter")
            })?;
        }
        let got = store.get(&key(k)).map_err(|e| e.to_string())?;
        ensure(got == expected, || {
            format!("after step {step}: key {k} reads {got:?}, the model has {expected:?}")
        })?;
    }
    let len = bloomkit_kv::Store::len(store.store()).map_err(|e| e.to_string())?;
    ensure(len == model.len() as u64, || {
        format!(
            "after step {step}: the store holds {len} keys, the model {}",
            model.len()
        )
    })
}

fn run<F: GuardFilter>(steps: &[Step]) -> Outcome {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("model.redb");
    let mut model = BTreeMap::new();
    let mut store = open::<F>(&path);
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Put(k, v) => {
                let new = store.insert(&key(*k), &[*v]).map_err(|e| e.to_string())?;
                let was = model.insert(*k, *v);
                ensure(new == was.is_none(), || {
                    format!("step {i}: insert said new={new}")
                })?;
            }
            Step::Delete(k) => {
                let held = store.remove(&key(*k)).map_err(|e| e.to_string())?;
                let was = model.remove(k);
                ensure(held == was.is_some(), || {
                    format!("step {i}: remove said {held}")
                })?;
            }
            Step::Batch(ops) => {
                let keys: Vec<(bool, Vec<u8>, [u8; 1])> =
                    ops.iter().map(|&(put, k, v)| (put, key(k), [v])).collect();
                let batch: Vec<Op<'_>> = keys
                    .iter()
                    .map(|(put, k, v)| {
                        if *put {
                            Op::Put { key: k, value: v }
                        } else {
                            Op::Delete { key: k }
                        }
                    })
                    .collect();
                let changed = store.write(&batch).map_err(|e| e.to_string())?;
                for (j, &(put, k, v)) in ops.iter().enumerate() {
                    let expect = if put {
                        model.insert(k, v).is_none()
                    } else {
                        model.remove(&k).is_some()
                    };
                    ensure(changed[j] == expect, || {
                        format!("step {i}: batch op {j} reported changed={}", changed[j])
                    })?;
                }
            }
            Step::Reopen => {
                store.close().map_err(|e| e.to_string())?;
                store = open::<F>(&path);
                ensure(*store.opened() == Opened::Loaded, || {
                    format!(
                        "step {i}: a cleanly closed store rebuilt: {:?}",
                        store.opened()
                    )
                })?;
            }
            Step::Persist => store.persist().map_err(|e| e.to_string())?,
            Step::Rebuild => {
                store.rebuild().map_err(|e| e.to_string())?;
                ensure(store.stats().stale_removals == 0, || {
                    "stale after rebuild".into()
                })?;
            }
            Step::Damage(at) => {
                store.close().map_err(|e| e.to_string())?;
                let file = path.with_extension("redb.filter");
                let mut bytes = std::fs::read(&file).map_err(|e| e.to_string())?;
                let at = usize::from(*at) % bytes.len();
                bytes[at] ^= 0x40;
                std::fs::write(&file, bytes).map_err(|e| e.to_string())?;
                store = open::<F>(&path);
                ensure(matches!(store.opened(), Opened::Rebuilt(_)), || {
                    format!("step {i}: a damaged file (byte {at}) was loaded")
                })?;
            }
            Step::Crash => {
                // What a crash leaves: the store's commits, and whatever file the last
                // persist wrote. The store is dropped (its drop writes a fresh file), then
                // the file is put back as the last persist left it, or removed.
                let file = path.with_extension("redb.filter");
                let saved = std::fs::read(&file).ok();
                drop(store);
                // Put back the file as it was before the drop wrote it.
                match saved {
                    Some(bytes) => std::fs::write(&file, bytes).map_err(|e| e.to_string())?,
                    None => {
                        let _ = std::fs::remove_file(&file);
                    }
                }
                store = open::<F>(&path);
            }
        }
        check(&store, &model, i)?;
    }
    Ok(())
}

#[test]
fn counting_filter_follows_the_model() {
    forall(60, |steps: &Vec<Step>| {
        run::<CountingBloomFilter<[u8], U4>>(steps)
    });
}

#[test]
fn classic_filter_follows_the_model() {
    forall(30, |steps: &Vec<Step>| run::<BloomFilter<[u8]>>(steps));
}

#[test]
fn blocked_filter_follows_the_model() {
    forall(30, |steps: &Vec<Step>| {
        run::<BlockedBloomFilter<[u8]>>(steps)
    });
}
