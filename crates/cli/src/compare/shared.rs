//! The filters shared through Redis (`--redis URL`), measured against that server: the
//! module-free `RedisFilter` (blocked and classic bits in Redis strings) and, when the
//! server has RedisBloom's module, `RedisBloomFilter`. Keys go in and are asked in batches
//! of [`BATCH`] (one round trip each), under names no one else uses, removed afterwards.

use std::hash::Hash;
use std::time::Instant;

use bloomkit::redis::{Error, Options, RedisBloomFilter, RedisBloomOptions, RedisFilter};
use bloomkit::{BlockedBloomFilter, BloomFilter};

use super::measure::{fixed_size_refusal, per, Answers, Asked, Row, Sizing};
use super::workload::{Data, Str};

/// Keys a round trip.
pub const BATCH: usize = 10_000;

/// The row name without `--redis`.
pub const REDIS_ROW: &str = "RedisFilter, RedisBloomFilter (shared)";

/// A key as the bytes RedisBloom hashes.
pub trait KeyBytes {
    /// The bytes.
    fn key_bytes(&self) -> Vec<u8>;
}
impl KeyBytes for u64 {
    fn key_bytes(&self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }
}
impl KeyBytes for Str {
    fn key_bytes(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}

/// What a shared filter must do to be measured.
trait Remote<K> {
    fn put(&mut self, keys: &[K]) -> Result<(), Error>;
    fn ask(&mut self, keys: &[K], out: &mut Vec<bool>) -> Result<(), Error>;
    fn bytes(&mut self) -> Result<u64, Error>;
    fn remove(self) -> Result<(), Error>;
}

macro_rules! remote_filter {
    ($($layout:ident),*) => {$(
        impl<K: Hash> Remote<K> for RedisFilter<$layout<K>> {
            fn put(&mut self, keys: &[K]) -> Result<(), Error> {
                self.try_insert_batch(keys).map(drop)
            }
            fn ask(&mut self, keys: &[K], out: &mut Vec<bool>) -> Result<(), Error> {
                self.try_contains_batch(keys, out)
            }
            fn bytes(&mut self) -> Result<u64, Error> {
                self.info().map(|i| i.bytes)
            }
            fn remove(self) -> Result<(), Error> {
                self.delete().map(drop)
            }
        }
    )*};
}
remote_filter!(BlockedBloomFilter, BloomFilter);

impl<K: KeyBytes> Remote<K> for RedisBloomFilter {
    fn put(&mut self, keys: &[K]) -> Result<(), Error> {
        self.try_insert_batch(keys.iter().map(KeyBytes::key_bytes))
            .map(drop)
    }
    fn ask(&mut self, keys: &[K], out: &mut Vec<bool>) -> Result<(), Error> {
        self.try_contains_batch(keys.iter().map(KeyBytes::key_bytes), out)
    }
    fn bytes(&mut self) -> Result<u64, Error> {
        self.info().map(|i| i.size)
    }
    fn remove(self) -> Result<(), Error> {
        self.delete().map(drop)
    }
}

fn unique_name(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("bloomkit-compare:{}:{nanos}:{what}", std::process::id())
}

/// Times `keys` asked in batches.
fn ask_all<K, R: Remote<K>>(f: &mut R, keys: &[K]) -> Result<Asked, Error> {
    let mut out = Vec::with_capacity(BATCH);
    let mut found = 0;
    let start = Instant::now();
    for chunk in keys.chunks(BATCH) {
        out.clear();
        f.ask(chunk, &mut out)?;
        found += out.iter().filter(|&&x| x).count();
    }
    Ok(Asked {
        queries: keys.len(),
        present: found,
        ns: per(start.elapsed(), keys.len()),
    })
}

/// Builds, asks, checks and removes one shared filter; the row, or why it cannot serve.
fn measure_remote<K, R: Remote<K>>(
    name: &str,
    grows: bool,
    data: &Data<K>,
    make: impl FnOnce() -> Result<R, Error>,
) -> Row {
    let cannot = |why: String| Row::cannot(name, why, false, grows, false);
    let mut f = match make() {
        Ok(f) => f,
        Err(Error::NoModule { .. }) => {
            return cannot("the server has no RedisBloom module (MODULE LOAD redisbloom.so)".into())
        }
        Err(e) => return cannot(format!("cannot create it on the server: {e}")),
    };
    let run = |f: &mut R| -> Result<Row, Error> {
        let start = Instant::now();
        for chunk in data.keys.chunks(BATCH) {
            f.put(chunk)?;
        }
        let build_ns = per(start.elapsed(), data.keys.len());
        let bytes = f.bytes()?;
        let answers = Answers {
            members: ask_all(f, &data.members)?,
            non_members: ask_all(f, &data.non_members)?,
        };
        let flags = (false, grows, false);
        let kept = data.keys.len();
        Ok(Row::served(name, flags, bytes, kept, build_ns, answers))
    };
    let row = run(&mut f);
    let removed = f.remove();
    match (row, removed) {
        (Ok(row), Ok(())) => row,
        (Err(e), Ok(())) => cannot(format!("failed on the server: {e}")),
        (Err(e), Err(left)) => cannot(format!(
            "failed on the server: {e}; and its keys could not be removed: {left}"
        )),
        (Ok(_), Err(e)) => cannot(format!("measured, but could not be removed: {e}")),
    }
}

/// The shared filters' rows: measured against `url` when given, one row saying how
/// otherwise.
pub fn measure_shared<K>(data: &Data<K>, sizing: Sizing, url: Option<&str>) -> Vec<Row>
where
    K: Hash + KeyBytes,
{
    let Some(url) = url else {
        return vec![Row::cannot(
            REDIS_ROW,
            "a filter shared by many processes through Redis: measured against a server with --redis redis://host:port",
            false,
            false,
            false,
        )];
    };
    let n = (data.keys.len() as u64).max(1);
    let fixed = |name: &str| fixed_size_refusal(name, false, sizing, data.deleted > 0);
    let options = Options::new(n, sizing.fpr).seed(sizing.seed);
    let mut rows = Vec::new();
    let name = "RedisFilter<BlockedBloomFilter> (shared)";
    rows.push(fixed(name).unwrap_or_else(|| {
        measure_remote(name, false, data, || {
            RedisFilter::<BlockedBloomFilter<K>>::connect_or_create(
                url,
                &unique_name("blocked"),
                &options,
            )
        })
    }));
    let name = "RedisFilter<BloomFilter> (shared)";
    rows.push(fixed(name).unwrap_or_else(|| {
        measure_remote(name, false, data, || {
            RedisFilter::<BloomFilter<K>>::connect_or_create(url, &unique_name("classic"), &options)
        })
    }));
    // RedisBloom grows (expansion 2): it serves an unknown size, from a guess 1000x small.
    let name = "RedisBloomFilter (module, shared)";
    rows.push(if data.deleted > 0 {
        Row::cannot(name, "cannot remove items (--deletes)", false, true, false)
    } else {
        // Grown from a guess 1000x small, the module's compounded rate passes its nominal
        // one (measured: 1.2% for a 1% target after 13 growths, 1.5% after 10 from a
        // capacity of 20), so it is reserved at half the target then.
        let (capacity, rate) = if sizing.unknown_size {
            ((n / 1_000).max(1), sizing.fpr / 2.0)
        } else {
            (n, sizing.fpr)
        };
        measure_remote(name, true, data, || {
            let con = bloomkit::redis::RespConnection::open(url, None)?;
            RedisBloomFilter::reserve(
                con,
                &unique_name("redisbloom"),
                &RedisBloomOptions::new(capacity, rate),
            )
        })
    });
    rows
}
