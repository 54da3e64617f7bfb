//! Every operation of a shared filter, written once as an `async fn` over [`Connection`]: the
//! synchronous [`crate::RedisFilter`] drives them with [`crate::exec::block_on`], the tokio
//! one awaits them.

use core::borrow::Borrow;
use core::hash::BuildHasher;
use core::marker::PhantomData;
use std::collections::HashMap;
use std::fmt;

use bloomkit_core::hash::BLOCK_BITS;
use bloomkit_core::sizing::{self, Design};
use bloomkit_core::PortableHasher;
use redis::{Cmd, Value};

use crate::exec::Connection;
use crate::layout::{Layout, Shape, SharedLayout};
use crate::scripts::{Lua, SCRIPTS};
use crate::{Error, Info, Options};

/// The version of the keys' layout (configuration fields, key names, bit order).
pub(crate) const FORMAT: u64 = 1;
/// Redis's largest string: one shard's bits at most.
pub const MAX_SHARD_BYTES: u64 = 512 << 20;
/// The most shards a filter has: one per Redis Cluster hash slot.
pub const MAX_SHARDS: u32 = 16_384;
/// Keys per script call: larger batches become several calls in one pipeline, so no single
/// call holds the server for long.
const KEYS_PER_CALL: usize = 4096;
/// Bytes per `GETRANGE` / `SETRANGE` when a whole filter moves.
const RANGE_BYTES: u64 = 4 << 20;
/// Range calls per pipeline when a whole filter moves (64 MiB in flight).
const RANGES_PER_PIPELINE: usize = 16;

/// The two operations on keys, each one script answering one byte per key.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyOp {
    /// Set the keys' bits.
    Insert,
    /// Test them.
    Contains,
}

/// One shard: its keys and the bits it holds.
#[derive(Debug, Clone)]
struct Shard {
    cfg: String,
    bits: String,
    /// The filter's bit where this shard starts (a block boundary).
    first_bit: u64,
    /// Bytes of its string.
    bytes: u64,
}

/// A shared filter's state on the client: its name, shape, keys and creation id.
pub(crate) struct Core<F: SharedLayout> {
    name: String,
    shape: Shape,
    shards: Vec<Shard>,
    id: String,
    hasher: F::Hasher,
    local: PhantomData<fn() -> F>,
}

impl<F: SharedLayout> fmt::Debug for Core<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedFilter")
            .field("name", &self.name)
            .field("shape", &self.shape)
            .field("shards", &self.shards.len())
            .field("id", &self.id)
            .finish()
    }
}

/// Checks a filter name: 1 to 200 bytes of ASCII letters, digits and `_ - . : /`. Braces
/// (Redis Cluster hash tags), `#` (the shard separator), spaces and control bytes are out.
pub(crate) fn check_name(name: &str) -> Result<(), Error> {
    let bad = |reason| {
        Err(Error::InvalidName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > 200 {
        return bad("it is longer than 200 bytes");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_-.:/".contains(&b))
    {
        return bad("only ASCII letters, digits and _ - . : / may be used");
    }
    Ok(())
}

/// The key prefix of shard `s` of `name`: the hash tag keeps a shard's keys in one slot.
fn shard_tag(name: &str, s: u32) -> String {
    format!("bloomkit:{{{name}#{s}}}")
}

/// A fresh random creation id, 32 hex digits.
fn fresh_id() -> String {
    use std::collections::hash_map::RandomState;
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let a = RandomState::new().hash_one((time, std::process::id()));
    let b = RandomState::new().hash_one((a, time));
    format!("{a:016x}{b:016x}")
}

/// The configuration fields that say which bits a key sets, in the order a mismatch is
/// reported.
fn shape_fields(sh: &Shape) -> [(&'static str, String); 7] {
    [
        ("layout", sh.layout.name().to_owned()),
        ("bits", sh.bits.to_string()),
        ("hashes", sh.hashes.to_string()),
        ("hasher", sh.hasher_id.to_string()),
        ("seed", sh.seed.to_string()),
        ("items", sh.design.capacity.to_string()),
        ("fpr", sh.design.fpr.to_string()),
    ]
}

/// The command that runs `script` on shard keys `keys` with arguments `id, bytes` first.
fn eval(script: &Lua, keys: &[&str]) -> Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(&script.sha).arg(keys.len()).arg(keys);
    cmd
}

/// Sends `cmds` as one pipeline; loads the scripts and resends what a `NOSCRIPT` refused (a
/// restarted server, a failover, `SCRIPT FLUSH`); turns the first error reply into a typed
/// error.
pub(crate) async fn call<C: Connection>(
    name: &str,
    con: &mut C,
    cmds: &[Cmd],
) -> Result<Vec<Value>, Error> {
    if cmds.is_empty() {
        return Ok(Vec::new());
    }
    let noscript = |v: &Value| matches!(v, Value::ServerError(e) if e.code() == "NOSCRIPT");
    let mut out = match con.run(cmds).await {
        Ok(out) => out,
        Err(e) if refused_script(&e) => {
            load_scripts(con).await?;
            con.run(cmds).await.map_err(|e| typed(name, e))?
        }
        Err(e) => return Err(typed(name, e)),
    };
    let refused: Vec<usize> = (0..out.len()).filter(|&i| noscript(&out[i])).collect();
    if !refused.is_empty() {
        load_scripts(con).await?;
        let again: Vec<Cmd> = refused.iter().map(|&i| cmds[i].clone()).collect();
        let answers = con.run(&again).await.map_err(|e| typed(name, e))?;
        for (i, v) in refused.into_iter().zip(answers) {
            out[i] = v;
        }
    }
    if let Some(Value::ServerError(e)) = out.iter().find(|v| matches!(v, Value::ServerError(_))) {
        return Err(server_error(name, e));
    }
    Ok(out)
}

async fn load_scripts<C: Connection>(con: &mut C) -> Result<(), Error> {
    for script in SCRIPTS.all() {
        con.load(&script.code).await?;
    }
    Ok(())
}

/// Whether `e` says a script was not loaded (alone, or among a pipeline's errors).
fn refused_script(e: &redis::RedisError) -> bool {
    e.code() == Some("NOSCRIPT")
        || e.clone()
            .into_server_errors()
            .is_some_and(|items| items.iter().any(|(_, e)| e.code() == "NOSCRIPT"))
}

/// The typed error for a server's error reply.
fn server_error(name: &str, e: &redis::ServerError) -> Error {
    Error::from_server(name, e.code(), e.details())
        .unwrap_or_else(|| Error::from(redis::RedisError::from(e.clone())))
}

/// The typed error for `e`: the first server error of a pipeline, our scripts' codes, or
/// the connection's error as it is.
fn typed(name: &str, e: redis::RedisError) -> Error {
    if let Some(items) = e.clone().into_server_errors() {
        if let Some((_, first)) = items.first() {
            return server_error(name, first);
        }
    }
    match e
        .code()
        .and_then(|code| Error::from_server(name, code, e.detail()))
    {
        Some(typed) => typed,
        None => Error::from(e),
    }
}

/// A reply of field, value pairs as a map.
fn config_map(name: &str, v: Value) -> Result<HashMap<String, String>, Error> {
    redis::from_redis_value(v).map_err(|e| Error::Corrupt {
        name: name.to_owned(),
        detail: format!("configuration reply: {e}"),
    })
}

impl<F: SharedLayout> Core<F> {
    /// The client state for `name` of `shape`, split in `shards` (or as few as fit).
    fn new(name: &str, shape: Shape, shards: Option<u32>, id: String) -> Result<Self, Error> {
        check_name(name)?;
        let hasher = F::Hasher::from_seed(shape.seed);
        let invalid = |reason: String| Error::InvalidShards {
            name: name.to_owned(),
            reason,
        };
        let unit = shape.layout.unit_bits();
        let units = shape.bits.div_ceil(unit);
        let bytes = units * (unit / 8);
        let count = match shards {
            Some(0) => return Err(invalid("zero shards".into())),
            Some(s) if s > MAX_SHARDS => {
                return Err(invalid(format!("{s} shards, more than {MAX_SHARDS}")))
            }
            Some(s) => u64::from(s),
            None => bytes.div_ceil(MAX_SHARD_BYTES).max(1),
        };
        if shape.layout == Layout::Classic && count > 1 {
            return Err(invalid(format!(
                "a classic filter is one Redis string ({bytes} bytes asked, at most {MAX_SHARD_BYTES}); \
                 use the blocked layout to shard"
            )));
        }
        if count > units {
            return Err(invalid(format!("{count} shards for {units} blocks")));
        }
        let start = |s: u64| ((u128::from(s) * u128::from(units)) / u128::from(count)) as u64;
        let mut out = Vec::with_capacity(count as usize);
        for s in 0..count {
            let shard_bytes = (start(s + 1) - start(s)) * (unit / 8);
            if shard_bytes > MAX_SHARD_BYTES {
                return Err(invalid(format!(
                    "shard {s} would hold {shard_bytes} bytes, over Redis's {MAX_SHARD_BYTES}; use \
                     at least {} shards",
                    bytes.div_ceil(MAX_SHARD_BYTES)
                )));
            }
            let tag = shard_tag(name, s as u32);
            out.push(Shard {
                cfg: format!("{tag}:cfg"),
                bits: format!("{tag}:bits"),
                first_bit: start(s) * unit,
                bytes: shard_bytes,
            });
        }
        Ok(Core {
            name: name.to_owned(),
            shape,
            shards: out,
            id,
            hasher,
            local: PhantomData,
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn shape(&self) -> &Shape {
        &self.shape
    }

    pub(crate) fn shard_count(&self) -> u32 {
        self.shards.len() as u32
    }

    /// The configuration fields of shard `s`, as written at creation.
    fn fields(&self, s: usize) -> Vec<(&'static str, String)> {
        let mut f = vec![("format", FORMAT.to_string())];
        f.extend(shape_fields(&self.shape));
        f.extend([
            ("shards", self.shards.len().to_string()),
            ("shard", s.to_string()),
            ("id", self.id.clone()),
        ]);
        if s == 0 {
            f.push(("complete", u8::from(self.shards.len() == 1).to_string()));
        }
        f
    }

    /// The first field where `found` (a shard's configuration in Redis) differs from ours.
    fn compare(&self, s: usize, found: &HashMap<String, String>) -> Result<(), Error> {
        for (field, expected) in self.fields(s) {
            if matches!(field, "id" | "complete") {
                continue;
            }
            let got = found.get(field).map_or("(none)", String::as_str);
            let same = if field == "fpr" {
                got.parse::<f64>().ok() == expected.parse::<f64>().ok()
            } else {
                got == expected
            };
            if !same {
                return Err(Error::Mismatch {
                    name: self.name.clone(),
                    field,
                    expected,
                    found: got.to_owned(),
                });
            }
        }
        Ok(())
    }

    fn shard_keys(&self, s: usize) -> [&str; 2] {
        [&self.shards[s].cfg, &self.shards[s].bits]
    }

    /// `script` on shard `s`, its guard's arguments (id, bytes) given.
    fn checked(&self, script: &Lua, s: usize) -> Cmd {
        let mut cmd = eval(script, &self.shard_keys(s));
        cmd.arg(&self.id).arg(self.shards[s].bytes);
        cmd
    }

    fn create_cmd(&self, s: usize) -> Cmd {
        let mut cmd = eval(&SCRIPTS.create, &self.shard_keys(s));
        cmd.arg(&self.id).arg(self.shards[s].bytes);
        for (field, value) in self.fields(s) {
            cmd.arg(field).arg(value);
        }
        cmd
    }

    /// Opens `name` if it exists with these parameters, or creates it.
    pub(crate) async fn open_or_create<C: Connection>(
        con: &mut C,
        name: &str,
        options: &Options,
    ) -> Result<Self, Error> {
        let (bits, hashes) = F::plan(options.items, options.fpr)?;
        let shape = Shape {
            layout: F::LAYOUT,
            bits,
            hashes,
            hasher_id: <F::Hasher as PortableHasher>::ID,
            seed: options.seed,
            design: Design::new(options.items, options.fpr)?,
        };
        let mut core = Core::new(name, shape, options.shards, fresh_id())?;
        let found = call(name, con, &[core.create_cmd(0)]).await?;
        let found = config_map(name, found.into_iter().next().unwrap_or(Value::Nil))?;
        core.compare(0, &found)?;
        core.id = found.get("id").cloned().unwrap_or_default();
        let complete = found.get("complete").is_some_and(|c| c == "1");
        core.ensure_shards(con, complete).await?;
        Ok(core)
    }

    /// Opens the existing filter `name`, with the parameters Redis holds.
    pub(crate) async fn open<C: Connection>(con: &mut C, name: &str) -> Result<Self, Error> {
        check_name(name)?;
        let cfg = format!("{}:cfg", shard_tag(name, 0));
        let found = call(name, con, &[eval(&SCRIPTS.read_config, &[&cfg])]).await?;
        let found = config_map(name, found.into_iter().next().unwrap_or(Value::Nil))?;
        if found.is_empty() {
            return Err(Error::NotFound {
                name: name.to_owned(),
                key: cfg,
            });
        }
        let corrupt = |field: &str| Error::Corrupt {
            name: name.to_owned(),
            detail: format!("configuration field {field} is missing or does not parse"),
        };
        let get = |field: &'static str| found.get(field).ok_or_else(|| corrupt(field));
        let num = |field: &'static str| get(field)?.parse::<u64>().map_err(|_| corrupt(field));
        let mismatch = |field, expected: String, found: &str| Error::Mismatch {
            name: name.to_owned(),
            field,
            expected,
            found: found.to_owned(),
        };
        if num("format")? != FORMAT {
            return Err(mismatch("format", FORMAT.to_string(), get("format")?));
        }
        if get("layout")? != F::LAYOUT.name() {
            return Err(mismatch("layout", F::LAYOUT.name().into(), get("layout")?));
        }
        let hasher_id = <F::Hasher as PortableHasher>::ID;
        if num("hasher")? != u64::from(hasher_id) {
            return Err(mismatch("hasher", hasher_id.to_string(), get("hasher")?));
        }
        let fpr = get("fpr")?.parse::<f64>().map_err(|_| corrupt("fpr"))?;
        let shape = Shape {
            layout: F::LAYOUT,
            bits: num("bits")?,
            hashes: sizing::check_hashes(num("hashes")?).map_err(|_| corrupt("hashes"))?,
            hasher_id,
            seed: num("seed")?,
            design: Design::new(num("items")?, fpr).map_err(|_| corrupt("items"))?,
        };
        let shards = u32::try_from(num("shards")?).map_err(|_| corrupt("shards"))?;
        let id = get("id")?.clone();
        let core = Core::new(name, shape, Some(shards), id).map_err(|e| Error::Corrupt {
            name: name.to_owned(),
            detail: e.to_string(),
        })?;
        core.compare(0, &found)?;
        let complete = found.get("complete").is_some_and(|c| c == "1");
        core.ensure_shards(con, complete).await?;
        Ok(core)
    }

    /// Checks that every shard exists with our creation id. A filter whose creation did not
    /// finish (`complete` is not set) gets its missing shards created first: no key was
    /// inserted before completion, so nothing is lost. Once complete, a missing shard is an
    /// error, never re-created empty.
    async fn ensure_shards<C: Connection>(&self, con: &mut C, complete: bool) -> Result<(), Error> {
        if self.shards.len() == 1 {
            return Ok(());
        }
        let cmds: Vec<Cmd> = (1..self.shards.len())
            .map(|s| {
                if complete {
                    eval(&SCRIPTS.read_config, &[&self.shards[s].cfg])
                } else {
                    self.create_cmd(s)
                }
            })
            .collect();
        for (s, v) in (1..).zip(call(&self.name, con, &cmds).await?) {
            let found = config_map(&self.name, v)?;
            if found.is_empty() {
                return Err(Error::Missing {
                    name: self.name.clone(),
                    detail: format!("the configuration {} is gone", self.shards[s].cfg),
                });
            }
            self.compare(s, &found)?;
            if found.get("id") != Some(&self.id) {
                return Err(Error::Recreated {
                    name: self.name.clone(),
                    detail: format!("shard {s} belongs to another creation"),
                });
            }
        }
        if !complete {
            let mut cmd = self.checked(&SCRIPTS.set_field, 0);
            cmd.arg("complete").arg("1");
            call(&self.name, con, &[cmd]).await?;
        }
        Ok(())
    }

    /// The shard of bit `bit`, and the Redis bit offset of `bit` in that shard's string.
    /// Redis numbers the bits of a byte from the most significant; the local filter keeps
    /// bit `i` in byte `i / 8` (words stored little-endian) at bit `i % 8` from the least
    /// significant: offset `i ^ 7`.
    #[inline]
    fn locate(&self, bit: u64) -> (usize, u64) {
        let s = if self.shards.len() == 1 {
            0
        } else {
            let (blocks, count) = (self.shape.bits / BLOCK_BITS, self.shards.len() as u64);
            let block = bit / BLOCK_BITS;
            ((u128::from(block) * u128::from(count) + u128::from(count) - 1) / u128::from(blocks))
                as usize
        };
        (s, (bit - self.shards[s].first_bit) ^ 7)
    }

    /// The script calls that apply `script` to `keys`: per shard, the keys' Redis offsets,
    /// at most [`KEYS_PER_CALL`] keys per call. Returns the calls and, per call, the indices
    /// (in `keys`' order) of the keys it carries.
    fn key_calls<I>(&self, script: &Lua, keys: I) -> (Vec<Cmd>, Vec<Vec<usize>>)
    where
        I: IntoIterator,
        I::Item: Borrow<F::Key>,
    {
        let k = self.shape.hashes;
        let mut per_shard: Vec<(Vec<u64>, Vec<usize>)> =
            vec![Default::default(); self.shards.len()];
        let mut positions = Vec::with_capacity(k as usize);
        for (i, key) in keys.into_iter().enumerate() {
            positions.clear();
            F::positions(
                self.hasher.hash_one(key.borrow()),
                self.shape.bits,
                k,
                &mut positions,
            );
            let (s, _) = self.locate(positions[0]);
            let (offsets, indices) = &mut per_shard[s];
            offsets.extend(positions.iter().map(|&p| self.locate(p).1));
            indices.push(i);
        }
        let (mut cmds, mut carried) = (Vec::new(), Vec::new());
        for (s, (offsets, indices)) in per_shard.into_iter().enumerate() {
            for (chunk, idx) in offsets
                .chunks(KEYS_PER_CALL * k as usize)
                .zip(indices.chunks(KEYS_PER_CALL))
            {
                let mut cmd = self.checked(script, s);
                cmd.arg(k).arg(chunk);
                cmds.push(cmd);
                carried.push(idx.to_vec());
            }
        }
        (cmds, carried)
    }

    /// Runs `op` on `keys` and appends its answer for each, in order: for
    /// [`KeyOp::Insert`] whether the key was certainly new (had a clear bit before), for
    /// [`KeyOp::Contains`] whether it may be in the filter. On an error `out` is left as it
    /// was.
    pub(crate) async fn per_key<C, I>(
        &self,
        con: &mut C,
        op: KeyOp,
        keys: I,
        out: &mut Vec<bool>,
    ) -> Result<(), Error>
    where
        C: Connection,
        I: IntoIterator,
        I::Item: Borrow<F::Key>,
    {
        let script = match op {
            KeyOp::Insert => &SCRIPTS.insert,
            KeyOp::Contains => &SCRIPTS.contains,
        };
        let (cmds, carried) = self.key_calls(script, keys);
        let answers = call(&self.name, con, &cmds).await?;
        let start = out.len();
        let total: usize = carried.iter().map(Vec::len).sum();
        let mut answered = vec![false; total];
        for (v, indices) in answers.into_iter().zip(carried) {
            let bytes: Vec<u8> = redis::from_redis_value(v).map_err(redis::RedisError::from)?;
            if bytes.len() != indices.len() {
                return Err(Error::Corrupt {
                    name: self.name.clone(),
                    detail: format!("{} answers for {} keys", bytes.len(), indices.len()),
                });
            }
            for (b, i) in bytes.into_iter().zip(indices) {
                answered[i] = b == b'1';
            }
        }
        debug_assert_eq!(out.len(), start);
        out.extend(answered);
        Ok(())
    }

    /// Counts the set bits and estimates items and rate from them.
    pub(crate) async fn info<C: Connection>(&self, con: &mut C) -> Result<Info, Error> {
        let cmds: Vec<Cmd> = (0..self.shards.len())
            .map(|s| self.checked(&SCRIPTS.count, s))
            .collect();
        let mut ones = 0u64;
        for v in call(&self.name, con, &cmds).await? {
            ones += redis::from_redis_value::<u64>(v).map_err(redis::RedisError::from)?;
        }
        let sh = &self.shape;
        let estimated_items = sizing::estimate_cardinality(sh.bits, sh.hashes, ones)?;
        let estimated_fpr = match sh.layout {
            Layout::Classic => sizing::fpr_from_fill(sh.bits, sh.hashes, ones)?,
            Layout::Blocked if estimated_items.is_finite() => sizing::blocked_fpr_model(
                estimated_items.round().max(1.0) as u64,
                sh.bits / BLOCK_BITS,
                sh.hashes,
            )?,
            Layout::Blocked => 1.0,
        };
        Ok(Info {
            layout: sh.layout,
            bits: sh.bits,
            hashes: sh.hashes,
            bytes: self.shards.iter().map(|s| s.bytes).sum(),
            shards: self.shard_count(),
            ones,
            estimated_items,
            estimated_fpr,
            design: sh.design,
        })
    }

    /// Zeroes every shard's bits (each shard atomically).
    pub(crate) async fn clear<C: Connection>(&self, con: &mut C) -> Result<(), Error> {
        let cmds: Vec<Cmd> = (0..self.shards.len())
            .map(|s| self.checked(&SCRIPTS.clear, s))
            .collect();
        call(&self.name, con, &cmds).await.map(drop)
    }

    /// Deletes every shard's two keys (each shard atomically), the first shard last.
    pub(crate) async fn delete<C: Connection>(&self, con: &mut C) -> Result<(), Error> {
        let cmds: Vec<Cmd> = (1..self.shards.len())
            .chain([0])
            .map(|s| self.checked(&SCRIPTS.delete, s))
            .collect();
        call(&self.name, con, &cmds).await.map(drop)
    }

    /// The whole filter, as the local type: bit-identical to what Redis holds.
    pub(crate) async fn download<C: Connection>(&self, con: &mut C) -> Result<F, Error> {
        let total: u64 = self.shards.iter().map(|s| s.bytes).sum();
        let mut bytes = Vec::with_capacity(total as usize);
        for s in 0..self.shards.len() {
            let ranges: Vec<(u64, u64)> = (0..self.shards[s].bytes)
                .step_by(RANGE_BYTES as usize)
                .map(|a| (a, (a + RANGE_BYTES).min(self.shards[s].bytes) - 1))
                .collect();
            for group in ranges.chunks(RANGES_PER_PIPELINE) {
                let cmds: Vec<Cmd> = group
                    .iter()
                    .map(|&(a, b)| {
                        let mut cmd = self.checked(&SCRIPTS.read_range, s);
                        cmd.arg(a).arg(b);
                        cmd
                    })
                    .collect();
                for (v, &(a, b)) in call(&self.name, con, &cmds).await?.into_iter().zip(group) {
                    let chunk: Vec<u8> =
                        redis::from_redis_value(v).map_err(redis::RedisError::from)?;
                    if chunk.len() as u64 != b - a + 1 {
                        return Err(Error::Corrupt {
                            name: self.name.clone(),
                            detail: format!("bytes {a}..={b} of shard {s}: {} came", chunk.len()),
                        });
                    }
                    bytes.extend_from_slice(&chunk);
                }
            }
        }
        let words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        Ok(F::from_words(&words, &self.shape, self.hasher.clone())?)
    }

    /// Writes `local`'s bits over the filter's (`merge`: ORs them in), shard by shard: the
    /// bytes go to a staging key next to the shard, then one script swaps or ORs them in.
    pub(crate) async fn put<C: Connection>(
        &self,
        con: &mut C,
        local: &F,
        merge: bool,
    ) -> Result<(), Error> {
        let ours = shape_fields(&self.shape);
        for ((field, found), (_, expected)) in ours.into_iter().zip(shape_fields(&local.shape())) {
            if found != expected {
                return Err(Error::Mismatch {
                    name: self.name.clone(),
                    field,
                    expected,
                    found,
                });
            }
        }
        let words = local.words();
        for (s, shard) in self.shards.iter().enumerate() {
            let stage = format!("{}:stage:{}", shard_tag(&self.name, s as u32), fresh_id());
            let keys = [shard.cfg.as_str(), shard.bits.as_str(), stage.as_str()];
            let staged = |extra: &[&[u8]]| {
                let mut cmd = eval(&SCRIPTS.stage, &keys);
                cmd.arg(&self.id).arg(shard.bytes);
                for e in extra {
                    cmd.arg(*e);
                }
                cmd
            };
            call(&self.name, con, &[staged(&[b"init"])]).await?;
            let first_word = (shard.first_bit / 64) as usize;
            let shard_words = &words[first_word..first_word + (shard.bytes / 8) as usize];
            let word_chunk = (RANGE_BYTES / 8) as usize;
            let mut cmds = Vec::new();
            for (c, chunk) in shard_words.chunks(word_chunk).enumerate() {
                if chunk.iter().all(|&w| w == 0) {
                    continue; // the staging key starts zeroed
                }
                let bytes: Vec<u8> = chunk.iter().flat_map(|w| w.to_le_bytes()).collect();
                let at = (c * word_chunk * 8).to_string();
                cmds.push(staged(&[at.as_bytes(), &bytes]));
                if cmds.len() == RANGES_PER_PIPELINE {
                    call(&self.name, con, &cmds).await?;
                    cmds.clear();
                }
            }
            call(&self.name, con, &cmds).await?;
            let mut commit = eval(&SCRIPTS.commit_stage, &keys);
            commit
                .arg(&self.id)
                .arg(shard.bytes)
                .arg(if merge { "merge" } else { "replace" });
            call(&self.name, con, &[commit]).await?;
        }
        Ok(())
    }
}
