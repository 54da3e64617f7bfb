//! The keys to insert and the queries to ask, synthetic or from the user's files.

use std::collections::HashSet;
use std::hash::Hash;
use std::path::Path;

use serde::Serialize;

/// The kind of keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum KeyKind {
    /// Random 64-bit integers.
    U64,
    /// Random strings (or, from a file, each line as it is).
    String,
    /// Integers packed into a bounded range (`--density` of the range is used).
    Dense,
}

/// Keys of one type, the queries against them, and what the truth is.
#[derive(Debug, Clone)]
pub struct Data<K> {
    /// Distinct keys, in insertion order.
    pub keys: Vec<K>,
    /// How many of the first keys are removed after insertion (`--deletes`).
    pub deleted: usize,
    /// Queries that are members of the final set (keys not deleted).
    pub members: Vec<K>,
    /// Queries that are not (never inserted, or deleted).
    pub non_members: Vec<K>,
    /// For dense keys, the range `lo..=hi` a bitmap must cover.
    pub range: Option<(u64, u64)>,
}

/// A workload: integer keys or string keys.
#[derive(Debug, Clone)]
pub enum Keys {
    /// Integer keys (u64 or dense).
    Int(Data<u64>),
    /// String keys.
    Str(Data<String>),
}

/// splitmix64: a fixed stream of well-mixed numbers for a seed.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./";

fn random_string(seed: u64, i: u64, len: usize) -> String {
    let mut state = mix(seed ^ mix(i));
    (0..len)
        .map(|j| {
            if j % 8 == 0 {
                state = mix(state);
            }
            let c = ALPHABET[(state >> ((j % 8) * 8)) as usize % ALPHABET.len()];
            char::from(c)
        })
        .collect()
}

/// What the synthetic workload asks for.
#[derive(Debug, Clone, Copy)]
pub struct Synthetic {
    /// Kind of keys.
    pub kind: KeyKind,
    /// Distinct keys.
    pub items: usize,
    /// Queries.
    pub queries: usize,
    /// Share of queries that are members, in [0, 1].
    pub member_share: f64,
    /// Share of the range used, for dense keys, in (0, 1].
    pub density: f64,
    /// Length of string keys.
    pub string_len: usize,
    /// Share of keys removed after insertion, in [0, 1).
    pub deletes: f64,
    /// Seed of every random choice.
    pub seed: u64,
}

/// Keys `make(1), make(2), ...` that are not in `exclude`: made-up non-members.
fn fresh<'a, K: Hash + Eq + 'a>(
    exclude: &'a HashSet<K>,
    make: impl Fn(u64) -> K + 'a,
) -> impl FnMut(u64) -> K + 'a {
    let mut j = 0u64;
    move |_| loop {
        j += 1;
        let k = make(j);
        if !exclude.contains(&k) {
            break k;
        }
    }
}

/// Splits `queries` into members (drawn from the kept keys) and non-members (drawn from
/// `fresh` and from deleted keys), in the asked proportion.
fn split_queries<K: Clone>(
    keys: &[K],
    deleted: usize,
    queries: usize,
    member_share: f64,
    seed: u64,
    mut fresh: impl FnMut(u64) -> K,
) -> (Vec<K>, Vec<K>) {
    let kept = &keys[deleted..];
    let want_members = if kept.is_empty() {
        0
    } else {
        (queries as f64 * member_share).round() as usize
    };
    let members = (0..want_members as u64)
        .map(|i| kept[(mix(seed ^ 0x51 ^ mix(i)) % kept.len() as u64) as usize].clone())
        .collect();
    let want_non = queries - want_members;
    // Deleted keys are absent now: a fair share of the non-member queries.
    let from_deleted = if deleted == 0 {
        0
    } else {
        want_non.min(deleted) / 2
    };
    let mut non_members: Vec<K> = keys[..deleted].iter().take(from_deleted).cloned().collect();
    non_members.extend((0..(want_non - from_deleted) as u64).map(&mut fresh));
    (members, non_members)
}

/// Builds a synthetic workload.
pub fn synthetic(s: Synthetic) -> Keys {
    let deleted = deleted_of(s.items, s.deletes);
    match s.kind {
        KeyKind::U64 => {
            let mut seen = HashSet::with_capacity(s.items);
            let keys: Vec<u64> = (0..)
                .map(|i| mix(s.seed ^ mix(i)))
                .filter(|k| seen.insert(*k))
                .take(s.items)
                .collect();
            let fresh = fresh(&seen, |j| mix(!s.seed ^ mix(j)));
            let (members, non_members) =
                split_queries(&keys, deleted, s.queries, s.member_share, s.seed, fresh);
            Keys::Int(Data {
                keys,
                deleted,
                members,
                non_members,
                range: None,
            })
        }
        KeyKind::Dense => {
            let range = ((s.items as f64 / s.density).ceil() as u64)
                .max(s.items as u64)
                .max(1);
            // A partial Fisher-Yates shuffle of 0..range: the first `items` are the keys, the
            // rest are the ids of the range that are not.
            let mut ids: Vec<u64> = (0..range).collect();
            for i in 0..s.items.min(ids.len()) {
                let j = i + (mix(s.seed ^ mix(i as u64)) % (range - i as u64)) as usize;
                ids.swap(i, j);
            }
            let keys = ids[..s.items].to_vec();
            let absent = &ids[s.items..];
            let mut next_outside = range;
            let fresh = |i: u64| {
                if absent.is_empty() {
                    next_outside += 1; // a full range: the only non-members lie outside it
                    next_outside - 1
                } else {
                    absent[(mix(s.seed ^ 0xab ^ mix(i)) % absent.len() as u64) as usize]
                }
            };
            let (members, non_members) =
                split_queries(&keys, deleted, s.queries, s.member_share, s.seed, fresh);
            Keys::Int(Data {
                keys,
                deleted,
                members,
                non_members,
                range: Some((0, range - 1)),
            })
        }
        KeyKind::String => {
            let mut seen = HashSet::with_capacity(s.items);
            let keys: Vec<String> = (0..)
                .map(|i| random_string(s.seed, i, s.string_len))
                .filter(|k| seen.insert(k.clone()))
                .take(s.items)
                .collect();
            let fresh = fresh(&seen, |j| random_string(!s.seed, j, s.string_len));
            let (members, non_members) =
                split_queries(&keys, deleted, s.queries, s.member_share, s.seed, fresh);
            Keys::Str(Data {
                keys,
                deleted,
                members,
                non_members,
                range: None,
            })
        }
    }
}

/// How many of `len` keys `--deletes` removes.
fn deleted_of(len: usize, share: f64) -> usize {
    (len as f64 * share).floor() as usize
}

/// The user's queries, split by the truth: members of the keys kept after deletes, or not.
fn judge<K: Hash + Eq>(keys: &[K], deleted: usize, queries: Vec<K>) -> (Vec<K>, Vec<K>) {
    let kept: HashSet<&K> = keys[deleted..].iter().collect();
    queries.into_iter().partition(|k| kept.contains(k))
}

fn read_lines(path: &Path, what: &str) -> Result<Vec<String>, String> {
    let text =
        std::fs::read(path).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&text);
    Ok(text
        .lines()
        .map(|l| l.trim_end_matches('\r').to_owned())
        .filter(|l| !l.is_empty())
        .collect())
}

fn distinct<K: Hash + Eq + Clone>(keys: Vec<K>) -> Vec<K> {
    let mut seen = HashSet::with_capacity(keys.len());
    keys.into_iter()
        .filter(|k| seen.insert(k.clone()))
        .collect()
}

fn parse_ints(lines: Vec<String>, path: &Path) -> Result<Vec<u64>, String> {
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            l.trim().parse::<u64>().map_err(|_| {
                format!(
                    "line {} of {} is not a non-negative integer ({l:?}): --keys u64 and --keys dense need integer keys",
                    i + 1,
                    path.display()
                )
            })
        })
        .collect()
}

/// A workload from the user's key file (one key per line) and, if given, query file.
/// Queries that are not keys measure the false-positive rate on the user's own data; with no
/// query file, members are drawn from the keys and non-members are made up.
pub fn from_files(
    kind: KeyKind,
    keys_path: &Path,
    queries_path: Option<&Path>,
    s: Synthetic,
) -> Result<Keys, String> {
    let lines = read_lines(keys_path, "key file")?;
    if lines.is_empty() {
        return Err(format!(
            "key file {} has no keys (no non-empty lines)",
            keys_path.display()
        ));
    }
    let queries = match queries_path {
        Some(p) => {
            let q = read_lines(p, "query file")?;
            if q.is_empty() {
                return Err(format!("query file {} has no queries", p.display()));
            }
            Some(q)
        }
        None => None,
    };
    match kind {
        KeyKind::String => {
            let keys = distinct(lines);
            let deleted = deleted_of(keys.len(), s.deletes);
            let (members, non_members) = match queries {
                Some(q) => judge(&keys, deleted, q),
                None => {
                    let all: HashSet<String> = keys.iter().cloned().collect();
                    let fresh = fresh(&all, |j| random_string(!s.seed, j, s.string_len));
                    split_queries(&keys, deleted, s.queries, s.member_share, s.seed, fresh)
                }
            };
            Ok(Keys::Str(Data {
                keys,
                deleted,
                members,
                non_members,
                range: None,
            }))
        }
        KeyKind::U64 | KeyKind::Dense => {
            let keys = distinct(parse_ints(lines, keys_path)?);
            let deleted = deleted_of(keys.len(), s.deletes);
            let lo = keys.iter().copied().min().unwrap_or(0);
            let hi = keys.iter().copied().max().unwrap_or(0);
            let range = (kind == KeyKind::Dense).then_some((lo, hi));
            let (members, non_members) = match queries {
                Some(q) => judge(
                    &keys,
                    deleted,
                    parse_ints(q, queries_path.unwrap_or(keys_path))?,
                ),
                None => {
                    let all: HashSet<u64> = keys.iter().copied().collect();
                    let span = (hi - lo).saturating_add(1);
                    // Dense keys: non-members from the same range, where a bitmap answers.
                    let in_range = kind == KeyKind::Dense && (all.len() as u64) < span;
                    let fresh = fresh(&all, |j| {
                        let k = mix(!s.seed ^ mix(j));
                        if in_range {
                            lo + k % span
                        } else {
                            k
                        }
                    });
                    split_queries(&keys, deleted, s.queries, s.member_share, s.seed, fresh)
                }
            };
            Ok(Keys::Int(Data {
                keys,
                deleted,
                members,
                non_members,
                range,
            }))
        }
    }
}
