//! Every operation of a shared filter, written once as an `async fn` over [`Connection`]: the
//! synchronous [`crate::RedisFilter`] drives them with [`crate::exec::block_on`], the tokio
//! one awaits them.

use core::borrow::Borrow;
use core::hash::BuildHasher;
use core::marker::PhantomData;
use std::collections::HashMap;
use std::fmt;

use bloomkit_core::hash::{ProbeScheme, BLOCK_BITS};
use bloomkit_core::sizing::{self, Design};
use bloomkit_core::{HasherSpec, PortableHasher};
use redis::{Cmd, Value};

use crate::exec::{Batch, Connection};
use crate::layout::{Layout, Shape, SharedLayout};
use crate::scripts::{Lua, SCRIPTS};
use crate::{Error, Info, Options};

/// The version of the keys' layout (configuration fields, key names, bit order).
///
/// 2: the bits key is named after the creation id (`bloomkit:{name#s}:bits:<id>`), so
/// batches run as transactions of native commands behind a guard. A filter of format 1 is
/// refused with [`Error::Mismatch`] on the field `format`: download it with the version that
/// made it and upload it to a new one.
pub(crate) const FORMAT: u64 = 2;
/// Redis's largest string: one shard's bits at most.
pub const MAX_SHARD_BYTES: u64 = 512 << 20;
/// The most shards a filter has: one per Redis Cluster hash slot.
pub const MAX_SHARDS: u32 = 16_384;
/// Keys per transaction (or lookup group): larger batches become several in one pipeline, so
/// no single one holds the server for long.
const KEYS_PER_CALL: usize = 4096;
/// Keys per `BITFIELD` command in a transaction.
const KEYS_PER_BITFIELD: usize = 256;
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
    /// The hash tag's prefix, `bloomkit:{name#s}`.
    tag: String,
    cfg: String,
    /// `{tag}:bits:{creation id}`: a filter re-created under the same name has other bits
    /// keys, which a client that opened the old one never writes to.
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

/// The bits key of the shard with tag `tag` of the creation `id`.
fn bits_key(tag: &str, id: &str) -> String {
    format!("{tag}:bits:{id}")
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
fn shape_fields(sh: &Shape) -> [(&'static str, String); 8] {
    [
        ("layout", sh.layout.name().to_owned()),
        ("bits", sh.bits.to_string()),
        ("hashes", sh.hashes.to_string()),
        ("hasher", sh.hasher_id.to_string()),
        ("seed", sh.seed.to_string()),
        ("items", sh.design.capacity.to_string()),
        ("fpr", sh.design.fpr.to_string()),
        (
            "probes",
            sh.probes.map_or(String::new(), |p| p.id().to_string()),
        ),
    ]
}

/// Whether a configuration field is kept in Redis. `probes` is written for the classic
/// layout's current scheme only: [`ProbeScheme::Enhanced`] is what a classic filter without
/// the field (created before it existed) uses, and the blocked layout has none.
fn stored(field: &str, value: &str) -> bool {
    field != "probes" || !(value.is_empty() || value == "1")
}

/// The hasher id a configuration records, when hasher type `H` reads it (the XXH3 builder
/// reads ids 1 and 2).
fn recorded_hasher<H: PortableHasher>(found: &HashMap<String, String>) -> Option<u8> {
    found
        .get("hasher")
        .and_then(|v| v.parse::<u8>().ok())
        .filter(|&id| H::from_spec(HasherSpec { id, seed: 0 }).is_ok())
}

/// The probe scheme a configuration records for `layout`, or why it cannot be read.
fn recorded_probes(
    layout: Layout,
    found: &HashMap<String, String>,
) -> Result<Option<ProbeScheme>, String> {
    match (layout, found.get("probes")) {
        (Layout::Blocked, _) => Ok(None),
        (Layout::Classic, None) => Ok(Some(ProbeScheme::Enhanced)),
        (Layout::Classic, Some(v)) => v
            .parse::<u8>()
            .ok()
            .and_then(ProbeScheme::from_id)
            .map(Some)
            .ok_or_else(|| v.clone()),
    }
}

/// The command that runs `script` on shard keys `keys` with arguments `id, bytes` first.
fn eval(script: &Lua, keys: &[&str]) -> Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(&script.sha).arg(keys.len()).arg(keys);
    cmd
}

/// Sends `cmds` (each naming a shard's keys first) as one pipeline per shard's slot, one
/// round trip on a single server; loads the scripts and resends what a `NOSCRIPT` refused (a
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
    let all: Vec<usize> = (0..cmds.len()).collect();
    let mut out = match send(con, cmds, &all).await {
        Ok(out) => out,
        Err(e) if refused_script(&e) => {
            load_scripts(con).await?;
            send(con, cmds, &all).await.map_err(|e| typed(name, e))?
        }
        Err(e) => return Err(typed(name, e)),
    };
    let refused: Vec<usize> = (0..out.len()).filter(|&i| noscript(&out[i])).collect();
    if !refused.is_empty() {
        load_scripts(con).await?;
        let answers = send(con, cmds, &refused)
            .await
            .map_err(|e| typed(name, e))?;
        for (i, v) in refused.into_iter().zip(answers) {
            out[i] = v;
        }
    }
    if let Some(Value::ServerError(e)) = out.iter().find(|v| matches!(v, Value::ServerError(_))) {
        return Err(server_error(name, e));
    }
    Ok(out)
}

/// Sends `cmds[i]` for each `i` in `which`, grouped by their first key (a shard's keys share
/// a slot); the answers in `which`'s order.
async fn send<C: Connection>(
    con: &mut C,
    cmds: &[Cmd],
    which: &[usize],
) -> redis::RedisResult<Vec<Value>> {
    let first_key = |cmd: &Cmd| match cmd.args_iter().nth(3) {
        Some(redis::Arg::Simple(key)) => key.to_vec(),
        _ => Vec::new(),
    };
    let mut groups: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
    for (at, &i) in which.iter().enumerate() {
        let key = first_key(&cmds[i]);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(at),
            None => groups.push((key, vec![at])),
        }
    }
    let sent = groups
        .iter()
        .map(|(_, members)| members.iter().map(|&at| cmds[which[at]].clone()).collect())
        .collect();
    let mut out = vec![Value::Nil; which.len()];
    for ((_, members), values) in groups.iter().zip(con.run(Batch::from_cmds(sent)).await?) {
        for (&at, v) in members.iter().zip(values) {
            out[at] = v;
        }
    }
    Ok(out)
}

async fn load_scripts<C: Connection>(con: &mut C) -> Result<(), Error> {
    for script in SCRIPTS.by_sha() {
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
        let hasher = F::Hasher::from_spec(HasherSpec {
            id: shape.hasher_id,
            seed: shape.seed,
        })
        .map_err(|e| Error::Corrupt {
            name: name.to_owned(),
            detail: e.to_string(),
        })?;
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
                bits: bits_key(&tag, &id),
                tag,
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

    /// Takes the hasher id and probe scheme of the filter found in Redis when this type reads
    /// them: a filter created by an earlier release (hasher id 1, the enhanced probe
    /// scheme) is opened as it is by `open_or_create`, instead of refused as a mismatch.
    fn adopt_scheme(&mut self, found: &HashMap<String, String>) {
        if found.is_empty() {
            return;
        }
        if let Some(id) = recorded_hasher::<F::Hasher>(found) {
            let spec = HasherSpec {
                id,
                seed: self.shape.seed,
            };
            if let Ok(hasher) = F::Hasher::from_spec(spec) {
                self.shape.hasher_id = id;
                self.hasher = hasher;
            }
        }
        if let Ok(probes) = recorded_probes(self.shape.layout, found) {
            self.shape.probes = probes;
        }
    }

    /// Takes `id`, the creation id found in Redis, as the filter's: it names the bits keys,
    /// so one that is not what [`fresh_id`] makes (edited by hand) is refused.
    fn adopt(&mut self, id: String) -> Result<(), Error> {
        if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(Error::Corrupt {
                name: self.name.clone(),
                detail: format!("creation id {id:?} is not 1 to 64 ASCII letters and digits"),
            });
        }
        for shard in &mut self.shards {
            shard.bits = bits_key(&shard.tag, &id);
        }
        self.id = id;
        Ok(())
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn shape(&self) -> &Shape {
        &self.shape
    }

    pub(crate) fn keys(&self) -> Vec<(&str, &str)> {
        self.shards
            .iter()
            .map(|s| (s.cfg.as_str(), s.bits.as_str()))
            .collect()
    }

    pub(crate) fn shard_count(&self) -> u32 {
        self.shards.len() as u32
    }

    /// The configuration fields of shard `s`, as written at creation.
    fn fields(&self, s: usize) -> Vec<(&'static str, String)> {
        let mut f = vec![("format", FORMAT.to_string())];
        f.extend(
            shape_fields(&self.shape)
                .into_iter()
                .filter(|(field, value)| stored(field, value)),
        );
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
            hasher_id: F::Hasher::from_seed(options.seed).spec().id,
            seed: options.seed,
            probes: match F::LAYOUT {
                Layout::Classic => Some(ProbeScheme::default()),
                Layout::Blocked => None,
            },
            design: Design::new(options.items, options.fpr)?,
        };
        let mut core = Core::new(name, shape, options.shards, fresh_id())?;
        let found = call(name, con, &[core.create_cmd(0)]).await?;
        let found = config_map(name, found.into_iter().next().unwrap_or(Value::Nil))?;
        core.adopt_scheme(&found);
        core.compare(0, &found)?;
        core.adopt(found.get("id").cloned().unwrap_or_default())?;
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
        let hasher_id = recorded_hasher::<F::Hasher>(&found).ok_or_else(|| {
            let expected = <F::Hasher as PortableHasher>::ID.to_string();
            mismatch("hasher", expected, get("hasher").map_or("", |s| s))
        })?;
        let fpr = get("fpr")?.parse::<f64>().map_err(|_| corrupt("fpr"))?;
        let shape = Shape {
            layout: F::LAYOUT,
            bits: num("bits")?,
            hashes: sizing::check_hashes(num("hashes")?).map_err(|_| corrupt("hashes"))?,
            hasher_id,
            seed: num("seed")?,
            probes: recorded_probes(F::LAYOUT, &found)
                .map_err(|v| mismatch("probes", "1 or 2".into(), &v))?,
            design: Design::new(num("items")?, fpr).map_err(|_| corrupt("items"))?,
        };
        let shards = u32::try_from(num("shards")?).map_err(|_| corrupt("shards"))?;
        let mut core =
            Core::new(name, shape, Some(shards), String::new()).map_err(|e| Error::Corrupt {
                name: name.to_owned(),
                detail: e.to_string(),
            })?;
        core.adopt(get("id")?.clone())?;
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

    /// The commands that apply `op` to keys of shard `s` whose positions are `positions`
    /// (`k` per key). Inserts are a transaction: `MULTI`, the guard, `BITFIELD` sets,
    /// `EXEC`. Lookups are the guard and the reads, in one pipeline but not a transaction
    /// (under `maxmemory` Redis refuses every queued command, and lookups must go on there).
    /// That is safe because the bits key is named after the creation id and only our own
    /// atomic scripts replace it: a blocked filter reads each key's whole block with
    /// `GETRANGE`, and a key gone after the guard (deleted, flushed, evicted, re-created
    /// under another id) reads as an empty string, an error here. A classic filter reads
    /// bits with `BITFIELD_RO`, which reads a missing key as zeros, so a second guard after
    /// the reads must pass too.
    fn commands(&self, batch: &mut Batch, op: KeyOp, s: usize, positions: &[u64]) {
        let k = self.shape.hashes as usize;
        let shard = &self.shards[s];
        // Sent whole (EVAL) where native writes follow: an EVALSHA refused for want of the
        // script inside a transaction would let them run unguarded.
        let guard = |batch: &mut Batch, script: &Lua| {
            batch.start(7);
            match op {
                KeyOp::Insert => {
                    batch.arg(b"EVAL");
                    batch.arg(script.code.as_bytes());
                }
                KeyOp::Contains => {
                    batch.arg(b"EVALSHA");
                    batch.arg(script.sha.as_bytes());
                }
            }
            batch.int(2);
            batch.arg(shard.cfg.as_bytes());
            batch.arg(shard.bits.as_bytes());
            batch.arg(self.id.as_bytes());
            batch.int(shard.bytes);
            batch.end_command();
        };
        let simple = |batch: &mut Batch, name: &[u8]| {
            batch.start(1);
            batch.arg(name);
            batch.end_command();
        };
        batch.group();
        match op {
            KeyOp::Insert => {
                simple(batch, b"MULTI");
                guard(batch, &SCRIPTS.guard_write);
            }
            KeyOp::Contains => guard(batch, &SCRIPTS.guard_read),
        }
        match (op, self.shape.layout) {
            (KeyOp::Contains, Layout::Blocked) => {
                // A key's bits are in one block: read the block, test the bits here.
                for key in positions.chunks(k) {
                    let at = (key[0] - shard.first_bit) / BLOCK_BITS * (BLOCK_BITS / 8);
                    batch.start(4);
                    batch.arg(b"GETRANGE");
                    batch.arg(shard.bits.as_bytes());
                    batch.int(at);
                    batch.int(at + BLOCK_BITS / 8 - 1);
                    batch.end_command();
                }
            }
            (op, _) => {
                // Inserts: each SET answers the bit's old value, and a key with an old 0 was
                // new. Classic lookups: each GET answers the bit.
                let (command, sub, value): (&[u8], &[u8], &[&[u8]]) = match op {
                    KeyOp::Insert => (b"BITFIELD", b"SET", &[b"1"]),
                    KeyOp::Contains => (b"BITFIELD_RO", b"GET", &[]),
                };
                for keys in positions.chunks(k * KEYS_PER_BITFIELD) {
                    batch.start(2 + (3 + value.len()) * keys.len());
                    batch.arg(command);
                    batch.arg(shard.bits.as_bytes());
                    for &p in keys {
                        batch.arg(sub);
                        batch.arg(b"u1");
                        batch.int(self.locate(p).1);
                        for v in value {
                            batch.arg(v);
                        }
                    }
                    batch.end_command();
                }
            }
        }
        match (op, self.shape.layout) {
            (KeyOp::Insert, _) => simple(batch, b"EXEC"),
            (KeyOp::Contains, Layout::Classic) => guard(batch, &SCRIPTS.guard_read),
            (KeyOp::Contains, Layout::Blocked) => {}
        }
    }

    /// The answers to [`Self::commands`] (`values`, one per command): per key, for
    /// [`KeyOp::Insert`] whether one of its bits was 0, for [`KeyOp::Contains`] whether all
    /// are 1.
    fn answers(
        &self,
        op: KeyOp,
        s: usize,
        positions: &[u64],
        values: Vec<Value>,
        out: &mut Vec<bool>,
    ) -> Result<(), Error> {
        let k = self.shape.hashes as usize;
        let corrupt = |detail: String| Error::Corrupt {
            name: self.name.clone(),
            detail,
        };
        let first_error = |values: &[Value]| {
            values.iter().find_map(|v| match v {
                Value::ServerError(e) => Some(server_error(&self.name, e)),
                _ => None,
            })
        };
        let guard_passed = |v: Option<Value>| match v {
            Some(Value::Int(1)) => Ok(()),
            Some(Value::ServerError(e)) => Err(server_error(&self.name, &e)),
            other => Err(corrupt(format!("the guard answered {other:?}"))),
        };
        let mut values = values;
        let mut results = match op {
            KeyOp::Insert => match values.pop() {
                Some(Value::Array(results)) => results.into_iter(),
                // EXEC refused: a queued command's error says why (maxmemory, ...).
                exec => {
                    values.extend(exec);
                    return Err(first_error(&values)
                        .unwrap_or_else(|| corrupt(format!("a transaction answered {values:?}"))));
                }
            },
            KeyOp::Contains => {
                let closing = match self.shape.layout {
                    Layout::Classic => Some(values.pop()),
                    Layout::Blocked => None,
                };
                let mut results = values.into_iter();
                guard_passed(results.next())?;
                if let Some(closing) = closing {
                    guard_passed(closing)?;
                }
                results
            }
        };
        if let KeyOp::Insert = op {
            guard_passed(results.next())?;
        }
        let start = out.len();
        let int = |v: Value| match v {
            Value::Int(b) => Ok(b),
            other => Err(corrupt(format!("a bit read as {other:?}"))),
        };
        if let (KeyOp::Contains, Layout::Blocked) = (op, self.shape.layout) {
            let shard = &self.shards[s];
            for (key, v) in positions.chunks(k).zip(results.by_ref()) {
                let block = match v {
                    Value::BulkString(block) if block.len() as u64 == BLOCK_BITS / 8 => block,
                    // Gone since the guard passed: the bits were deleted, flushed, evicted.
                    Value::BulkString(block) if block.is_empty() => {
                        return Err(Error::Missing {
                            name: self.name.clone(),
                            detail: format!("the bits {} went during the lookup", shard.bits),
                        })
                    }
                    Value::ServerError(e) => return Err(server_error(&self.name, &e)),
                    other => return Err(corrupt(format!("a block read as {other:?}"))),
                };
                let base = shard.first_bit + (key[0] - shard.first_bit) / BLOCK_BITS * BLOCK_BITS;
                out.push(key.iter().all(|&p| {
                    let i = (p - base) as usize;
                    block[i / 8] >> (i % 8) & 1 == 1
                }));
            }
        } else {
            let mut bits = Vec::with_capacity(positions.len());
            for v in results.by_ref() {
                match v {
                    Value::Array(olds) => {
                        for b in olds {
                            bits.push(int(b)?);
                        }
                    }
                    Value::ServerError(e) => return Err(server_error(&self.name, &e)),
                    other => return Err(corrupt(format!("bits read as {other:?}"))),
                }
            }
            if bits.len() != positions.len() {
                return Err(corrupt(format!(
                    "{} bits for {} positions",
                    bits.len(),
                    positions.len()
                )));
            }
            let clear = |key: &[i64]| key.contains(&0);
            out.extend(bits.chunks(k).map(|key| match op {
                KeyOp::Insert => clear(key),
                KeyOp::Contains => !clear(key),
            }));
        }
        if results.next().is_some() || out.len() - start != positions.len() / k {
            out.truncate(start);
            return Err(corrupt(format!(
                "{} keys sent, answers for another number",
                positions.len() / k
            )));
        }
        Ok(())
    }

    /// Runs `op` on `keys` and appends its answer for each, in order: for
    /// [`KeyOp::Insert`] whether the key was certainly new (had a clear bit before), for
    /// [`KeyOp::Contains`] whether it may be in the filter. Per shard, at most
    /// [`KEYS_PER_CALL`] keys go in one transaction; all transactions go in one round trip
    /// (per node of a cluster). On an error `out` is left as it was.
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
        let k = self.shape.hashes as usize;
        let mut per_shard: Vec<(Vec<u64>, Vec<usize>)> =
            vec![Default::default(); self.shards.len()];
        let mut count = 0;
        let mut key_positions = Vec::with_capacity(k);
        for (i, key) in keys.into_iter().enumerate() {
            key_positions.clear();
            F::positions(
                self.hasher.hash_one(key.borrow()),
                &self.shape,
                &mut key_positions,
            );
            let (positions, indices) = &mut per_shard[self.locate(key_positions[0]).0];
            positions.extend_from_slice(&key_positions);
            indices.push(i);
            count = i + 1;
        }
        let mut carried = Vec::new();
        for (s, (positions, indices)) in per_shard.iter().enumerate() {
            for (chunk, idx) in positions
                .chunks(KEYS_PER_CALL * k)
                .zip(indices.chunks(KEYS_PER_CALL))
            {
                carried.push((s, chunk, idx));
            }
        }
        if carried.is_empty() {
            return Ok(());
        }
        let groups = || {
            let mut batch = Batch::new();
            for &(s, chunk, _) in &carried {
                self.commands(&mut batch, op, s, chunk);
            }
            batch
        };
        let mut replies = con.run(groups()).await.map_err(|e| typed(&self.name, e))?;
        // A lookup's guard goes by EVALSHA (its reads change nothing if it is refused): after
        // a restart, failover or SCRIPT FLUSH, load the scripts and look up again.
        let noscript = |values: &Vec<Value>| matches!(values.first(), Some(Value::ServerError(e)) if e.code() == "NOSCRIPT");
        if replies.iter().any(noscript) {
            load_scripts(con).await?;
            replies = con.run(groups()).await.map_err(|e| typed(&self.name, e))?;
        }
        let mut answered = vec![false; count];
        let mut these = Vec::with_capacity(KEYS_PER_CALL);
        for (values, (s, chunk, idx)) in replies.into_iter().zip(carried) {
            these.clear();
            self.answers(op, s, chunk, values, &mut these)?;
            for (&answer, &i) in these.iter().zip(idx) {
                answered[i] = answer;
            }
        }
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
        for shard in &self.shards {
            let stage = format!("{}:stage:{}", shard.tag, fresh_id());
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
