//! The keys to insert and the queries to ask, synthetic or from the user's files.

use std::collections::HashSet;
use std::hash::Hash;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::budget::{self, vec_with_capacity, MAX_KEY_BYTES};

/// The answer to records asked of a file.
pub const RECORDS_FROM_FILES: &str =
    "--keys records is synthetic only (records from a file are not read yet): drop --keys-file";

/// A string key, shared: member queries and sets hold a pointer to the one copy. It hashes
/// exactly as the `String` or `&str` a user would insert (`Hash` for `Arc<str>` is `str`'s).
pub type Str = Arc<str>;

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
    /// Records of `--attributes` fields, asked by record, by one field and by two fields
    /// together (synthetic only).
    Records,
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

impl<K> Data<K> {
    /// How many member and non-member queries there are.
    pub fn queries(&self) -> (usize, usize) {
        (self.members.len(), self.non_members.len())
    }

    /// The workload of `keys`, the first `deleted` of them removed, asked `(members,
    /// non_members)`.
    fn new(
        keys: Vec<K>,
        deleted: usize,
        queries: (Vec<K>, Vec<K>),
        range: Option<(u64, u64)>,
    ) -> Self {
        let (members, non_members) = queries;
        Data {
            keys,
            deleted,
            members,
            non_members,
            range,
        }
    }
}

impl<K: Clone> Data<K> {
    /// The workload of `keys`, the first `deleted` of them removed, asked the queries `s`
    /// asks for, drawn by [`split_queries`] (non-members from `fresh`).
    fn drawn(
        keys: Vec<K>,
        deleted: usize,
        s: &Synthetic,
        fresh: impl FnMut(u64) -> K,
        range: Option<(u64, u64)>,
    ) -> Result<Self, String> {
        let queries = split_queries(&keys, deleted, s.queries, s.member_share, s.seed, fresh)?;
        Ok(Data::new(keys, deleted, queries, range))
    }
}

/// A workload: integer keys or string keys.
#[derive(Debug, Clone)]
pub enum Keys {
    /// Integer keys (u64 or dense).
    Int(Data<u64>),
    /// String keys.
    Str(Data<Str>),
}

/// splitmix64: a fixed stream of well-mixed numbers for a seed.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./";

fn random_string(seed: u64, i: u64, len: usize) -> Str {
    let mut state = mix(seed ^ mix(i));
    let s: String = (0..len)
        .map(|j| {
            if j % 8 == 0 {
                state = mix(state);
            }
            let c = ALPHABET[(state >> ((j % 8) * 8)) as usize % ALPHABET.len()];
            char::from(c)
        })
        .collect();
    s.into()
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
    /// Bits per key of a classic filter at the target rate, for memory estimates.
    pub filter_bits_per_key: f64,
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
) -> Result<(Vec<K>, Vec<K>), String> {
    let kept = &keys[deleted..];
    let want_members = if kept.is_empty() {
        0
    } else {
        (queries as f64 * member_share).round() as usize
    };
    let mut members = vec_with_capacity(want_members, "member queries")?;
    members.extend(
        (0..want_members as u64)
            .map(|i| kept[(mix(seed ^ 0x51 ^ mix(i)) % kept.len() as u64) as usize].clone()),
    );
    let want_non = queries - want_members;
    // Deleted keys are absent now: a fair share of the non-member queries.
    let from_deleted = if deleted == 0 {
        0
    } else {
        want_non.min(deleted) / 2
    };
    let mut non_members = vec_with_capacity(want_non, "non-member queries")?;
    non_members.extend(keys[..deleted].iter().take(from_deleted).cloned());
    non_members.extend((0..(want_non - from_deleted) as u64).map(&mut fresh));
    Ok((members, non_members))
}

/// A set with room for `n` keys, or a message instead of an abort.
fn set_with_capacity<K: Hash + Eq>(n: usize) -> Result<HashSet<K>, String> {
    let mut set = HashSet::new();
    set.try_reserve(n)
        .map_err(|_| format!("cannot allocate a set of {n} keys"))?;
    Ok(set)
}

/// `items` distinct keys `make(0), make(1), ...` (skipping repeats), and the set of them.
fn distinct_keys<K: Hash + Eq + Clone>(
    items: usize,
    make: impl Fn(u64) -> K,
) -> Result<(Vec<K>, HashSet<K>), String> {
    let mut seen = set_with_capacity(items)?;
    let mut keys = vec_with_capacity(items, "keys")?;
    keys.extend(
        (0..)
            .map(make)
            .filter(|k| seen.insert(k.clone()))
            .take(items),
    );
    Ok((keys, seen))
}

/// What a synthetic workload will hold at its peak.
pub fn synthetic_estimate(s: &Synthetic, filter_bits_per_key: f64) -> budget::Estimate {
    let items = s.items as u128;
    let strings = s.kind == KeyKind::String;
    budget::Estimate {
        items,
        key_bytes: if strings { s.string_len as u128 } else { 8 },
        strings,
        queries: s.queries as u128,
        range: if s.kind == KeyKind::Dense {
            // Saturating: 1e12 items at density 1e-12 is refused, not wrapped.
            (s.items as f64 / s.density).ceil() as u128
        } else {
            0
        },
        filter_bits_per_key,
    }
}

/// Builds a synthetic workload. Check [`synthetic_estimate`] first: this allocates it.
///
/// # Errors
/// When an allocation is refused.
pub fn synthetic(s: Synthetic) -> Result<Keys, String> {
    let deleted = deleted_of(s.items, s.deletes);
    Ok(match s.kind {
        KeyKind::Records => return Err("records are made by compare::records".into()),
        KeyKind::U64 => {
            let (keys, seen) = distinct_keys(s.items, |i| mix(s.seed ^ mix(i)))?;
            let fresh = fresh(&seen, |j| mix(!s.seed ^ mix(j)));
            Keys::Int(Data::drawn(keys, deleted, &s, fresh, None)?)
        }
        KeyKind::Dense => {
            let range = ((s.items as f64 / s.density).ceil() as u64)
                .max(s.items as u64)
                .max(1);
            // A partial Fisher-Yates shuffle of 0..range: the first `items` are the keys, the
            // rest are the ids of the range that are not.
            let len = usize::try_from(range).map_err(|_| format!("a range of {range} ids"))?;
            let mut ids: Vec<u64> = vec_with_capacity(len, "ids of the dense range")?;
            ids.extend(0..range);
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
            Keys::Int(Data::drawn(keys, deleted, &s, fresh, Some((0, range - 1)))?)
        }
        KeyKind::String => {
            let (keys, seen) = distinct_keys(s.items, |i| random_string(s.seed, i, s.string_len))?;
            let fresh = fresh(&seen, |j| random_string(!s.seed, j, s.string_len));
            Keys::Str(Data::drawn(keys, deleted, &s, fresh, None)?)
        }
    })
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

/// The non-empty lines of a file, each one shared key. The file must fit in the memory
/// available, and every line in [`MAX_KEY_BYTES`]: both are checked before anything is
/// copied, and the message names the line, never repeats it.
fn read_lines(path: &Path, what: &str) -> Result<Vec<Str>, String> {
    let cannot = |e: std::io::Error| format!("cannot read {what} {}: {e}", path.display());
    let size = std::fs::metadata(path).map_err(cannot)?.len();
    if let Some(have) = budget::available_bytes()
        && size > have / 2
    {
        return Err(format!(
            "{what} {} is {size} bytes, more than half of the {have} bytes of memory available",
            path.display()
        ));
    }
    let bytes = std::fs::read(path).map_err(cannot)?;
    let text = String::from_utf8_lossy(&bytes);
    let lines = || {
        text.lines()
            .enumerate()
            .map(|(i, l)| (i, l.trim_end_matches('\r')))
            .filter(|(_, l)| !l.is_empty())
    };
    if let Some((i, l)) = lines().find(|(_, l)| l.len() > MAX_KEY_BYTES) {
        return Err(format!(
            "line {} of {} is {} bytes long: keys of at most {MAX_KEY_BYTES} bytes are supported",
            i + 1,
            path.display(),
            l.len()
        ));
    }
    let mut out = vec_with_capacity(lines().count(), "lines")?;
    out.extend(lines().map(|(_, l)| Str::from(l)));
    Ok(out)
}

fn distinct<K: Hash + Eq + Clone>(keys: Vec<K>) -> Result<Vec<K>, String> {
    let mut seen = set_with_capacity(keys.len())?;
    Ok(keys
        .into_iter()
        .filter(|k| seen.insert(k.clone()))
        .collect())
}

fn parse_ints(lines: Vec<Str>, path: &Path) -> Result<Vec<u64>, String> {
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            l.trim().parse::<u64>().map_err(|_| {
                format!(
                    "line {} of {} is not a non-negative integer ({}): --keys u64 and --keys dense need integer keys",
                    i + 1,
                    path.display(),
                    budget::quoted(&l, 40)
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
    // Every line is in memory now, shared; check the rest of the peak before building it.
    // Integer keys are 8 bytes once parsed.
    let strings = kind == KeyKind::String;
    let key_bytes = if strings {
        lines.iter().map(|l| l.len()).sum::<usize>() / lines.len()
    } else {
        8
    };
    let queries_len = queries.as_ref().map_or(s.queries, Vec::len);
    budget::check(&budget::Estimate {
        items: lines.len() as u128,
        key_bytes: key_bytes as u128,
        strings,
        queries: queries_len as u128,
        range: 0,
        filter_bits_per_key: s.filter_bits_per_key,
    })?;
    match kind {
        KeyKind::Records => Err(RECORDS_FROM_FILES.into()),
        KeyKind::String => {
            let keys = distinct(lines)?;
            let deleted = deleted_of(keys.len(), s.deletes);
            Ok(Keys::Str(match queries {
                Some(q) => {
                    let judged = judge(&keys, deleted, q);
                    Data::new(keys, deleted, judged, None)
                }
                None => {
                    let all: HashSet<Str> = keys.iter().cloned().collect();
                    let fresh = fresh(&all, |j| random_string(!s.seed, j, s.string_len));
                    Data::drawn(keys, deleted, &s, fresh, None)?
                }
            }))
        }
        KeyKind::U64 | KeyKind::Dense => {
            let keys = distinct(parse_ints(lines, keys_path)?)?;
            let deleted = deleted_of(keys.len(), s.deletes);
            let lo = keys.iter().copied().min().unwrap_or(0);
            let hi = keys.iter().copied().max().unwrap_or(0);
            let range = (kind == KeyKind::Dense).then_some((lo, hi));
            Ok(Keys::Int(match queries {
                Some(q) => {
                    let q = parse_ints(q, queries_path.unwrap_or(keys_path))?;
                    let judged = judge(&keys, deleted, q);
                    Data::new(keys, deleted, judged, range)
                }
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
                    Data::drawn(keys, deleted, &s, fresh, range)?
                }
            }))
        }
    }
}
