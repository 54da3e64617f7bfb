//! The engine of bloomkit's own shared filter (no module needed): every operation, written once as an `async fn` over [`Connection`]: the
//! synchronous [`crate::RedisFilter`] drives them with [`crate::exec::block_on`], the tokio
//! one awaits them.
//!
//! Each public operation is one or a few round trips ([`Core::round`]); each round trip
//! recovers by itself from a lost script cache (a restart, a failover, `SCRIPT FLUSH`) and
//! ends at the call's deadline. Every number the server sends is checked before it is used.

use core::borrow::Borrow;
use core::hash::BuildHasher;
use core::marker::PhantomData;
use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

use bloomkit_core::hash::{ProbeScheme, BLOCK_BITS};
use bloomkit_core::sizing::{self, Design};
use bloomkit_core::{HasherSpec, PortableHasher};
use redis::{Cmd, Value};

use crate::exec::{Batch, Connection};
use crate::layout::{Layout, Shape, SharedLayout};
use crate::options::{Info, Limits, Options};
use crate::scripts::{Lua, SCRIPTS};
use crate::transport::{
    bounded_int, call, check_name, corrupt, deadline, eval, fresh_id, script_call, server_error,
    KeyEngine, KeyOp, Link,
};
use crate::Error;

/// The version of the keys' layout (configuration fields, key names, bit order) that new
/// filters get.
///
/// 3: the bits key of a shard is `bloomkit:{name#s}:bits`, so a filter whose configuration
/// was lost leaves its bits where they can be found and removed. 2 (still read and written):
/// the bits key is named after the creation id (`bloomkit:{name#s}:bits:<id>`). A filter of
/// format 1 is refused with [`Error::Mismatch`] on the field `format`.
pub(crate) const FORMAT: u64 = 3;
/// The formats this release opens.
const FORMATS: [u64; 2] = [2, 3];
/// Redis's largest string: one shard's bits at most.
pub const MAX_SHARD_BYTES: u64 = 512 << 20;
/// The most shards a filter has: one per Redis Cluster hash slot.
pub const MAX_SHARDS: u32 = 16_384;
/// The largest filter a client opens unless told otherwise ([`Options::max_bytes`]): 4 GiB of
/// bits, a blocked filter of about 3.4 billion keys at 1%.
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;
/// Keys per script call (or lookup group): larger batches become several in one pipeline, so
/// no single one holds the server for long.
const KEYS_PER_CALL: usize = 4096;
/// Keys per `BITFIELD` command in a transaction.
const KEYS_PER_BITFIELD: usize = 256;
/// Lookups read the bytes between two keys' bits with theirs when fewer than this lie
/// between (see [`Core::read_ranges`]).
const MERGE_GAP: u64 = 4096;
/// An insert ORs a string into a shard with fewer bytes than this per bit it sets (see
/// [`Core::or_whole`]).
const OR_BYTES_PER_BIT: u64 = 400;
/// Bytes per `GETRANGE` / `SETRANGE` when a whole filter moves.
const RANGE_BYTES: u64 = 1 << 20;
/// Bytes of ranges in flight when a whole filter moves: at most this much (or an eighth of
/// the filter, if more) is held in replies on top of the filter itself.
const BYTES_IN_FLIGHT: u64 = 16 << 20;

/// One shard: its keys and the bits it holds.
#[derive(Debug, Clone)]
struct Shard {
    /// The hash tag's prefix, `bloomkit:{name#s}`.
    tag: String,
    cfg: String,
    /// The bits key (see [`bits_key`]).
    bits: String,
    /// The filter's bit where this shard starts (a block boundary).
    first_bit: u64,
    /// Bytes of its string.
    bytes: u64,
}

/// A shared filter's state on the client: its name, shape, keys, creation id and limits.
pub(crate) struct Core<F: SharedLayout> {
    name: String,
    shape: Shape,
    shards: Vec<Shard>,
    id: String,
    format: u64,
    hasher: F::Hasher,
    timeout: Option<Duration>,
    replicas: u32,
    local: PhantomData<fn() -> F>,
}

impl<F: SharedLayout> fmt::Debug for Core<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedFilter")
            .field("name", &self.name)
            .field("shape", &self.shape)
            .field("shards", &self.shards.len())
            .field("id", &self.id)
            .field("format", &self.format)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// What every key of a module-free filter starts with (`bloomkit:{name#shard}:...`):
/// reserved, so that no RedisBloom filter of this crate is named like one.
pub(crate) const KEY_PREFIX: &str = "bloomkit:{";

/// The key prefix of shard `s` of `name`: the hash tag keeps a shard's keys in one slot.
fn shard_tag(name: &str, s: u32) -> String {
    format!("{KEY_PREFIX}{name}#{s}}}")
}

/// The bits key of the shard with tag `tag`: fixed in format 3, named after the creation
/// `id` in format 2.
fn bits_key(tag: &str, id: &str, format: u64) -> String {
    if format == 2 {
        format!("{tag}:bits:{id}")
    } else {
        format!("{tag}:bits")
    }
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
/// reads ids 1, 2 and 4: a filter created before id 4 was the default opens as it is).
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

/// A reply of field, value pairs as a map.
fn config_map(name: &str, v: Value) -> Result<HashMap<String, String>, Error> {
    redis::from_redis_value(v).map_err(|e| Error::Corrupt {
        name: name.to_owned(),
        detail: format!("configuration reply: {e}"),
    })
}

/// The bytes of a shard's string that a call read (`GETRANGE` of [`Core::read_ranges`]),
/// asked for by the bits at filter positions.
struct RangeBytes {
    /// The filter's bit where the shard starts.
    first: u64,
    ranges: Vec<(u64, u64)>,
    bytes: Vec<Vec<u8>>,
}

impl RangeBytes {
    /// The replies to the `GETRANGE`s of `ranges`, taken from `replies`, each checked.
    fn take(
        name: &str,
        first: u64,
        ranges: Vec<(u64, u64)>,
        replies: &mut impl Iterator<Item = Value>,
    ) -> Result<RangeBytes, Error> {
        let mut bytes = Vec::with_capacity(ranges.len());
        for &(from, to) in &ranges {
            match replies.next() {
                Some(Value::BulkString(b)) if b.len() as u64 == to - from => bytes.push(b),
                Some(Value::ServerError(e)) => return Err(server_error(name, &e)),
                other => {
                    return Err(corrupt(
                        name,
                        format!("{} bytes read as {other:?}", to - from),
                    ))
                }
            }
        }
        Ok(RangeBytes {
            first,
            ranges,
            bytes,
        })
    }

    /// The range, the byte in it, and the mask of the bit at filter position `p` (one of
    /// the positions the ranges were made for).
    fn locate(&self, p: u64) -> (usize, usize, u8) {
        let byte = (p - self.first) / 8;
        let r = self.ranges.partition_point(|&(from, _)| from <= byte) - 1;
        (
            r,
            (byte - self.ranges[r].0) as usize,
            1 << ((p - self.first) % 8),
        )
    }

    /// Whether the bit at `p` is set.
    fn get(&self, p: u64) -> bool {
        let (r, i, mask) = self.locate(p);
        self.bytes[r][i] & mask != 0
    }

    /// Sets the bit at `p`; whether it was clear.
    fn set(&mut self, p: u64) -> bool {
        let (r, i, mask) = self.locate(p);
        let byte = &mut self.bytes[r][i];
        let clear = *byte & mask == 0;
        *byte |= mask;
        clear
    }
}

/// One group of a call on keys: at most [`KEYS_PER_CALL`] keys of one shard.
#[derive(Debug)]
pub(crate) struct KeyGroup {
    /// The shard.
    shard: usize,
    /// The keys' bit positions, [`Shape::hashes`] per key.
    positions: Vec<u64>,
    /// Where the keys stand among the call's.
    indices: Vec<usize>,
}

impl<F: SharedLayout, I> KeyEngine<I> for Core<F>
where
    I: IntoIterator,
    I::Item: Borrow<F::Key>,
{
    type Group = KeyGroup;

    fn limits(&self) -> (&str, Option<Duration>) {
        (&self.name, self.timeout)
    }

    /// Per shard, at most [`KEYS_PER_CALL`] keys go in one group ([`Core::commands`]), the
    /// shards in order.
    fn write(&self, op: KeyOp, keys: I, d: Option<Instant>) -> (Batch, Vec<KeyGroup>, usize) {
        let k = self.shape.hashes as usize;
        let mut per_shard: Vec<Vec<KeyGroup>> =
            (0..self.shards.len()).map(|_| Vec::new()).collect();
        let mut count = 0;
        let mut key_positions = Vec::with_capacity(k);
        for (i, key) in keys.into_iter().enumerate() {
            key_positions.clear();
            F::positions(
                self.hasher.hash_one(key.borrow()),
                &self.shape,
                &mut key_positions,
            );
            let shard = self.locate(key_positions[0]).0;
            let groups = &mut per_shard[shard];
            if groups
                .last()
                .is_none_or(|g| g.indices.len() == KEYS_PER_CALL)
            {
                groups.push(KeyGroup {
                    shard,
                    positions: Vec::new(),
                    indices: Vec::new(),
                });
            }
            let group = groups.last_mut().expect("a group was just pushed");
            group.positions.extend_from_slice(&key_positions);
            group.indices.push(i);
            count = i + 1;
        }
        let groups: Vec<KeyGroup> = per_shard.into_iter().flatten().collect();
        let mut batch = Batch::new();
        for g in &groups {
            self.commands(&mut batch, op, g.shard, &g.positions, d);
        }
        (batch, groups, count)
    }

    fn indices(group: &KeyGroup) -> impl Iterator<Item = usize> + '_ {
        group.indices.iter().copied()
    }

    fn answer(&self, op: KeyOp, group: &KeyGroup, values: Vec<Value>) -> Result<Vec<bool>, Error> {
        let mut these = Vec::with_capacity(group.indices.len());
        self.answers(op, group.shard, &group.positions, values, &mut these)?;
        Ok(these)
    }
}

impl<F: SharedLayout> Core<F> {
    /// The client state for `name` of `shape`, split in `shards` (or as few as fit), refused
    /// past `max_bytes`.
    fn new(
        name: &str,
        shape: Shape,
        shards: Option<u32>,
        id: String,
        format: u64,
        limits: &Limits,
    ) -> Result<Self, Error> {
        check_name(name)?;
        let hasher = F::Hasher::from_spec(HasherSpec {
            id: shape.hasher_id,
            seed: shape.seed,
        })
        .map_err(|e| corrupt(name, e.to_string()))?;
        let invalid = |reason: String| Error::InvalidShards {
            name: name.to_owned(),
            reason,
        };
        let unit = shape.layout.unit_bits();
        let units = shape.bits.div_ceil(unit);
        if units == 0 {
            return Err(corrupt(name, "a filter of 0 bits"));
        }
        let too_large = || Error::TooLarge {
            name: name.to_owned(),
            bits: shape.bits,
            max_bytes: limits.max_bytes,
        };
        let bytes = units.checked_mul(unit / 8).ok_or_else(too_large)?;
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
        if bytes > limits.max_bytes {
            return Err(too_large());
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
                bits: bits_key(&tag, &id, format),
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
            format,
            hasher,
            timeout: limits.timeout,
            replicas: limits.replicas,
            local: PhantomData,
        })
    }

    /// Takes the hasher id and probe scheme of the filter found in Redis when this type reads
    /// them: a filter created by an earlier release (hasher id 1 or 2, the enhanced probe
    /// scheme) is opened as it is by `open_or_create`, instead of refused as a mismatch.
    fn adopt_scheme(&mut self, found: &HashMap<String, String>) {
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

    /// Takes the creation id and format found in Redis as the filter's: the id names the
    /// bits keys in format 2, so one that is not what [`fresh_id`] makes (edited by hand) is
    /// refused.
    fn adopt(&mut self, found: &HashMap<String, String>) -> Result<(), Error> {
        let format = found.get("format").map_or("(none)", String::as_str);
        let format = match format.parse::<u64>() {
            Ok(f) if FORMATS.contains(&f) => f,
            _ => {
                return Err(Error::Mismatch {
                    name: self.name.clone(),
                    field: "format",
                    expected: "2 or 3".into(),
                    found: format.to_owned(),
                })
            }
        };
        let id = found.get("id").cloned().unwrap_or_default();
        if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(corrupt(
                &self.name,
                format!("creation id {id:?} is not 1 to 64 ASCII letters and digits"),
            ));
        }
        for shard in &mut self.shards {
            shard.bits = bits_key(&shard.tag, &id, format);
        }
        self.id = id;
        self.format = format;
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

    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    pub(crate) fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
    }

    /// The configuration fields of shard `s`, as written at creation (`complete` as given,
    /// on shard 0).
    fn fields(&self, s: usize, complete: bool) -> Vec<(&'static str, String)> {
        let mut f = vec![("format", self.format.to_string())];
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
            f.push(("complete", u8::from(complete).to_string()));
        }
        f
    }

    /// The first field where `found` (a shard's configuration in Redis) differs from ours.
    fn compare(&self, s: usize, found: &HashMap<String, String>) -> Result<(), Error> {
        for (field, expected) in self.fields(s, true) {
            if matches!(field, "id" | "complete" | "format") {
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

    /// `script` on shard `s` with the shard's whole configuration after the guard's
    /// arguments (creating, clearing).
    fn with_fields(&self, script: &Lua, s: usize, complete: bool) -> Cmd {
        let mut cmd = self.checked(script, s);
        for (field, value) in self.fields(s, complete) {
            cmd.arg(field).arg(value);
        }
        cmd
    }

    /// Script calls, in one round trip, ended at `deadline`.
    async fn call<C: Connection>(
        &self,
        link: &mut Link<C>,
        cmds: &[Cmd],
        deadline: Option<Instant>,
    ) -> Result<Vec<Value>, Error> {
        call(&self.name, link, cmds, deadline, self.timeout).await
    }

    /// Opens `name` if it exists with these parameters, or creates it; says which.
    pub(crate) async fn open_or_create<C: Connection>(
        link: &mut Link<C>,
        name: &str,
        options: &Options,
    ) -> Result<(Self, bool), Error> {
        let deadline = deadline(options.limits.timeout);
        let (bits, hashes) = F::plan(options.items, options.fpr)?;
        let shape = Shape {
            layout: F::LAYOUT,
            bits,
            hashes,
            hasher_id: F::Hasher::ID,
            seed: options.seed,
            probes: match F::LAYOUT {
                Layout::Classic => Some(ProbeScheme::default()),
                Layout::Blocked => None,
            },
            design: Design::new(options.items, options.fpr)?,
        };
        let mut core = Core::new(
            name,
            shape,
            options.shards,
            fresh_id(),
            FORMAT,
            &options.limits,
        )?;
        let single = core.shards.len() == 1;
        let create = core.with_fields(&SCRIPTS.create, 0, single);
        let found = core.call(link, &[create], deadline).await?;
        let found = config_map(name, found.into_iter().next().unwrap_or(Value::Nil))?;
        let ours = found.get("id") == Some(&core.id);
        if !ours {
            core.adopt_scheme(&found);
            core.compare(0, &found)?;
            core.adopt(&found)?;
        }
        let complete = found.get("complete").is_some_and(|c| c == "1");
        let made = async {
            if !complete {
                core.finish(link, deadline).await?;
            }
            core.verify(link, deadline).await
        }
        .await;
        if let Err(e) = made {
            if ours {
                // Our own creation failed half way: take back what it made, so the name is
                // free (best effort: the error says what went wrong).
                let _ = core.delete(link).await;
            }
            return Err(e);
        }
        Ok((core, ours))
    }

    /// Creates the filter `name`, refusing one that exists.
    pub(crate) async fn create<C: Connection>(
        link: &mut Link<C>,
        name: &str,
        options: &Options,
    ) -> Result<Self, Error> {
        match Self::open_or_create(link, name, options).await {
            Ok((core, true)) => Ok(core),
            Ok((_, false)) | Err(Error::Mismatch { .. }) => Err(Error::AlreadyExists {
                name: name.to_owned(),
            }),
            Err(e) => Err(e),
        }
    }

    /// Opens the existing filter `name`, with the parameters Redis holds, each checked
    /// before it is used.
    pub(crate) async fn open<C: Connection>(
        link: &mut Link<C>,
        name: &str,
        limits: &Limits,
    ) -> Result<Self, Error> {
        check_name(name)?;
        let deadline = deadline(limits.timeout);
        let cfg = format!("{}:cfg", shard_tag(name, 0));
        let found = call(
            name,
            link,
            &[eval(&SCRIPTS.read_config, &[&cfg])],
            deadline,
            limits.timeout,
        )
        .await?;
        let found = config_map(name, found.into_iter().next().unwrap_or(Value::Nil))?;
        if found.is_empty() {
            return Err(Error::NotFound {
                name: name.to_owned(),
                detail: format!("no key {cfg}"),
            });
        }
        let bad = |field: &str| {
            corrupt(
                name,
                format!("configuration field {field} is missing or does not parse"),
            )
        };
        let get = |field: &'static str| found.get(field).ok_or_else(|| bad(field));
        let num = |field: &'static str| get(field)?.parse::<u64>().map_err(|_| bad(field));
        let mismatch = |field, expected: String, found: &str| Error::Mismatch {
            name: name.to_owned(),
            field,
            expected,
            found: found.to_owned(),
        };
        if get("layout")? != F::LAYOUT.name() {
            return Err(mismatch("layout", F::LAYOUT.name().into(), get("layout")?));
        }
        let hasher_id = recorded_hasher::<F::Hasher>(&found).ok_or_else(|| {
            let expected = <F::Hasher as PortableHasher>::ID.to_string();
            mismatch("hasher", expected, get("hasher").map_or("", |s| s))
        })?;
        let fpr = get("fpr")?.parse::<f64>().map_err(|_| bad("fpr"))?;
        let bits = num("bits")?;
        if F::LAYOUT == Layout::Blocked && bits % BLOCK_BITS != 0 {
            return Err(corrupt(
                name,
                format!("{bits} bits is not whole 512-bit blocks"),
            ));
        }
        let shape = Shape {
            layout: F::LAYOUT,
            bits,
            hashes: sizing::check_hashes(num("hashes")?).map_err(|_| bad("hashes"))?,
            hasher_id,
            seed: num("seed")?,
            probes: recorded_probes(F::LAYOUT, &found)
                .map_err(|v| mismatch("probes", "1 or 2".into(), &v))?,
            design: Design::new(num("items")?, fpr).map_err(|_| bad("items"))?,
        };
        let shards = u32::try_from(num("shards")?).map_err(|_| bad("shards"))?;
        let mut core = Core::new(name, shape, Some(shards), String::new(), FORMAT, limits)
            .map_err(|e| match e {
                Error::TooLarge { .. } => e,
                e => corrupt(name, e.to_string()),
            })?;
        core.adopt(&found)?;
        core.compare(0, &found)?;
        if found.get("complete").is_none_or(|c| c != "1") {
            return Err(Error::NotFound {
                name: name.to_owned(),
                detail:
                    "its creation never finished: open_or_create finishes it, destroy removes it"
                        .into(),
            });
        }
        core.verify(link, deadline).await?;
        Ok(core)
    }

    /// Creates the shards after the first of a filter whose creation did not finish
    /// (`complete` not set: no key was inserted before completion, so nothing is lost), then
    /// marks it complete.
    async fn finish<C: Connection>(
        &self,
        link: &mut Link<C>,
        deadline: Option<Instant>,
    ) -> Result<(), Error> {
        let cmds: Vec<Cmd> = (1..self.shards.len())
            .map(|s| self.with_fields(&SCRIPTS.create, s, false))
            .collect();
        for (s, v) in (1..).zip(self.call(link, &cmds, deadline).await?) {
            let found = config_map(&self.name, v)?;
            self.compare(s, &found)?;
            if found.get("id") != Some(&self.id) {
                return Err(Error::Recreated {
                    name: self.name.clone(),
                    detail: format!("shard {s} belongs to another creation"),
                });
            }
        }
        let mut cmd = self.checked(&SCRIPTS.set_field, 0);
        cmd.arg("complete").arg("1");
        self.call(link, &[cmd], deadline).await.map(drop)
    }

    /// Checks that every shard has its configuration, with our creation id, and its bits,
    /// of the right length: a filter with a lost key is an error that names it, at open.
    async fn verify<C: Connection>(
        &self,
        link: &mut Link<C>,
        deadline: Option<Instant>,
    ) -> Result<(), Error> {
        let cmds: Vec<Cmd> = (0..self.shards.len())
            .map(|s| self.checked(&SCRIPTS.check, s))
            .collect();
        self.call(link, &cmds, deadline).await.map(drop)
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

    /// One group of commands that applies `op` to keys of shard `s` whose positions are
    /// `positions` (`k` per key). An insert is a transaction: `MULTI`, the write guard,
    /// `BITFIELD` sets, the closing script, `EXEC` (and `WAIT` when inserts wait for
    /// replicas). A lookup is the guard, native reads and the guard
    /// again, in one pipeline but not a transaction (under `maxmemory` Redis refuses every
    /// queued command, and lookups must go on there): a blocked filter reads each key's whole
    /// block with `GETRANGE`, a classic one its bits with `BITFIELD_RO`. Bits deleted after
    /// the first guard read as an empty string or as zeros; the closing guard, which sees
    /// the configuration gone or of another creation, turns either into an error.
    fn commands(
        &self,
        batch: &mut Batch,
        op: KeyOp,
        s: usize,
        positions: &[u64],
        deadline: Option<Instant>,
    ) {
        let k = self.shape.hashes as usize;
        let shard = &self.shards[s];
        // A script call on the shard's keys (and `extra` arguments the caller writes next):
        // by SHA-1, or whole (EVAL) where a refusal must not let the commands after it run.
        let guarded = [shard.cfg.as_str(), shard.bits.as_str()];
        let guard_args = |batch: &mut Batch| {
            batch.arg(self.id.as_bytes());
            batch.int(shard.bytes);
            batch.end_command();
        };
        // One sub-command per position (`KEYS_PER_BITFIELD` keys a command): `sub u1 offset`,
        // and `value` after it for a SET.
        let bitfield = |batch: &mut Batch, command: &[u8], sub: &[u8], value: Option<&[u8]>| {
            let per = 3 + usize::from(value.is_some());
            for keys in positions.chunks(k * KEYS_PER_BITFIELD) {
                batch.start(2 + per * keys.len());
                batch.arg(command);
                batch.arg(shard.bits.as_bytes());
                for &p in keys {
                    batch.arg(sub);
                    batch.arg(b"u1");
                    batch.int(self.locate(p).1);
                    if let Some(v) = value {
                        batch.arg(v);
                    }
                }
                batch.end_command();
            }
        };
        batch.group();
        if op == KeyOp::Insert {
            // Sent whole: an EVALSHA refused inside a transaction would let the sets after it
            // run unguarded.
            let shelter = format!("{}:shelter", shard.tag);
            let keys = [shard.cfg.as_str(), shard.bits.as_str(), shelter.as_str()];
            let simple = |batch: &mut Batch, name: &[u8]| {
                batch.start(1);
                batch.arg(name);
                batch.end_command();
            };
            simple(batch, b"MULTI");
            script_call(batch, &SCRIPTS.guard_write, true, &keys, 2);
            guard_args(batch);
            if self.or_whole(s, positions) {
                // The bytes the keys' bits are in, as they were (which keys are new), then
                // the bits ORed in with one BITOP from a key holding them alone.
                self.range_reads(batch, s, positions);
                let delta_key = format!("{}:delta", shard.tag);
                let mut delta = vec![0u8; 0];
                for &p in positions {
                    let bit = p - shard.first_bit;
                    let byte = (bit / 8) as usize;
                    if delta.len() <= byte {
                        delta.resize(byte + 1, 0);
                    }
                    delta[byte] |= 1 << (bit % 8);
                }
                script_call(
                    batch,
                    &SCRIPTS.or_delta,
                    true,
                    &[shard.bits.as_str(), delta_key.as_str()],
                    1,
                );
                batch.arg(&delta);
                batch.end_command();
            } else {
                // Each SET answers the bit's old value: a key with an old 0 was new.
                bitfield(batch, b"BITFIELD", b"SET", Some(b"1"));
            }
            script_call(batch, &SCRIPTS.unshelter, true, &keys, 0);
            batch.end_command();
            simple(batch, b"EXEC");
            if self.replicas > 0 {
                // WAIT blocks for at most the time the call has left (0: no limit).
                let ms = deadline.map_or(0, |d| {
                    d.saturating_duration_since(Instant::now())
                        .as_millis()
                        .max(1) as u64
                });
                batch.start(3);
                batch.arg(b"WAIT");
                batch.int(u64::from(self.replicas));
                batch.int(ms);
                batch.end_command();
            }
            return;
        }
        script_call(batch, &SCRIPTS.guard_read, false, &guarded, 2);
        guard_args(batch);
        // The bytes the keys' bits are in, as few ranges as pay: one `GETRANGE` each.
        self.range_reads(batch, s, positions);
        script_call(batch, &SCRIPTS.guard_read, false, &guarded, 2);
        guard_args(batch);
    }

    /// Whether an insert of `positions` into shard `s` ORs a string of its bits into the
    /// shard's (`BITOP OR`, reading the bytes they fall in first) rather than setting them one
    /// `BITFIELD` operation each. A `BITFIELD` operation costs about 0.8 us (server and
    /// client, loopback); the OR goes over the whole shard, about 2 ns a byte with what it
    /// sends and reads back: it wins when the shard has fewer than [`OR_BYTES_PER_BIT`] bytes
    /// per bit set (a batch of 1,000 keys on a filter of a megabyte, not on one of a
    /// gigabyte).
    fn or_whole(&self, s: usize, positions: &[u64]) -> bool {
        self.shards[s].bytes < positions.len() as u64 * OR_BYTES_PER_BIT
    }

    /// One `GETRANGE` of shard `s` per range of [`Self::read_ranges`].
    fn range_reads(&self, batch: &mut Batch, s: usize, positions: &[u64]) {
        for (start, end) in self.read_ranges(s, positions) {
            batch.start(4);
            batch.arg(b"GETRANGE");
            batch.arg(self.shards[s].bits.as_bytes());
            batch.int(start);
            batch.int(end - 1);
            batch.end_command();
        }
    }

    /// The byte ranges `[start, end)` of shard `s`'s string that lookups of `positions`
    /// (`k` per key) read: each key's block (blocked) or the byte of each of its bits
    /// (classic), sorted, merged where less than [`MERGE_GAP`] bytes lie between two. A
    /// `GETRANGE` costs the server about a microsecond and a byte about half a nanosecond
    /// (both ends of loopback), so reading a gap that small is cheaper than a command more:
    /// a batch of 10,000 keys on a filter of a megabyte reads it whole, in one command.
    fn read_ranges(&self, s: usize, positions: &[u64]) -> Vec<(u64, u64)> {
        let k = self.shape.hashes as usize;
        let first = self.shards[s].first_bit;
        let (mut starts, unit): (Vec<u64>, u64) = match self.shape.layout {
            Layout::Blocked => (
                positions
                    .chunks(k)
                    .map(|key| (key[0] - first) / BLOCK_BITS * (BLOCK_BITS / 8))
                    .collect(),
                BLOCK_BITS / 8,
            ),
            Layout::Classic => (positions.iter().map(|p| (p - first) / 8).collect(), 1),
        };
        starts.sort_unstable();
        starts.dedup();
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for start in starts {
            match ranges.last_mut() {
                Some((_, end)) if start <= *end + MERGE_GAP => *end = start + unit,
                _ => ranges.push((start, start + unit)),
            }
        }
        ranges
    }

    /// The answers to [`Self::commands`] (`values`, one per command), each checked: per key,
    /// for [`KeyOp::Insert`] whether one of its bits was 0, for [`KeyOp::Contains`] whether
    /// all are 1.
    fn answers(
        &self,
        op: KeyOp,
        s: usize,
        positions: &[u64],
        mut values: Vec<Value>,
        out: &mut Vec<bool>,
    ) -> Result<(), Error> {
        let k = self.shape.hashes as usize;
        let keys = positions.len() / k;
        let name = &self.name;
        let start = out.len();
        let guard_passed = |v: Option<Value>| match v {
            Some(Value::Int(1)) => Ok(()),
            Some(Value::ServerError(e)) => Err(server_error(name, &e)),
            other => Err(corrupt(name, format!("the guard answered {other:?}"))),
        };
        if op == KeyOp::Insert {
            let waited = if self.replicas > 0 {
                values.pop()
            } else {
                None
            };
            let mut results = match values.pop() {
                Some(Value::Array(results)) => results.into_iter(),
                // EXEC refused: a queued command's error says why (maxmemory, ...).
                exec => {
                    values.extend(exec);
                    let first = values.iter().find_map(|v| match v {
                        Value::ServerError(e) => Some(server_error(name, e)),
                        _ => None,
                    });
                    return Err(first.unwrap_or_else(|| {
                        corrupt(name, format!("a transaction answered {values:?}"))
                    }));
                }
            };
            guard_passed(results.next())?;
            let closing = results.next_back();
            if !matches!(closing, Some(Value::Int(1))) {
                return Err(corrupt(
                    name,
                    format!("the transaction closed with {closing:?}"),
                ));
            }
            let mut news = Vec::with_capacity(keys);
            if self.or_whole(s, positions) {
                let mut read = RangeBytes::take(
                    name,
                    self.shards[s].first_bit,
                    self.read_ranges(s, positions),
                    &mut results,
                )?;
                match results.next() {
                    Some(Value::Int(1)) => {}
                    Some(Value::ServerError(e)) => return Err(server_error(name, &e)),
                    other => {
                        return Err(corrupt(
                            name,
                            format!("the OR of the bits answered {other:?}"),
                        ))
                    }
                }
                // In order, each key against the bits as the keys before it left them: the
                // answers `BITFIELD SET`s would give.
                for key in positions.chunks(k) {
                    let mut new = false;
                    for &p in key {
                        new |= read.set(p);
                    }
                    news.push(new);
                }
            }
            for v in results {
                let olds = match v {
                    Value::Array(olds) if olds.len() % k == 0 => olds,
                    Value::ServerError(e) => return Err(server_error(name, &e)),
                    other => return Err(corrupt(name, format!("bits set as {other:?}"))),
                };
                for key in olds.chunks(k) {
                    let mut new = false;
                    for old in key {
                        match old {
                            Value::Int(0) => new = true,
                            Value::Int(1) => {}
                            other => return Err(corrupt(name, format!("a bit was {other:?}"))),
                        }
                    }
                    news.push(new);
                }
            }
            if news.len() != keys {
                return Err(corrupt(
                    name,
                    format!("{keys} keys inserted, {} answered", news.len()),
                ));
            }
            match waited {
                None => {}
                Some(Value::Int(acked)) if acked >= i64::from(self.replicas) => {}
                Some(Value::Int(acked)) => {
                    return Err(Error::Unreplicated {
                        name: name.clone(),
                        acked: acked.max(0) as u64,
                        wanted: self.replicas,
                    })
                }
                Some(Value::ServerError(e)) => return Err(server_error(name, &e)),
                Some(other) => return Err(corrupt(name, format!("WAIT answered {other:?}"))),
            }
            out.extend(news);
            return Ok(());
        }
        let closing = values.pop();
        let mut reads = values.into_iter();
        guard_passed(reads.next())?;
        // The closing guard first: if the filter went during the reads, that is the error.
        guard_passed(closing)?;
        let read = RangeBytes::take(
            name,
            self.shards[s].first_bit,
            self.read_ranges(s, positions),
            &mut reads,
        )?;
        out.extend(
            positions
                .chunks(k)
                .map(|key| key.iter().all(|&p| read.get(p))),
        );
        if reads.next().is_some() || out.len() - start != keys {
            out.truncate(start);
            return Err(corrupt(
                name,
                format!("{keys} keys sent, answers for another number"),
            ));
        }
        Ok(())
    }

    /// Counts the set bits and estimates items and rate from them.
    pub(crate) async fn info<C: Connection>(&self, link: &mut Link<C>) -> Result<Info, Error> {
        let deadline = deadline(self.timeout);
        let cmds: Vec<Cmd> = (0..self.shards.len())
            .map(|s| self.checked(&SCRIPTS.count, s))
            .collect();
        let mut ones = 0u64;
        for (v, shard) in self
            .call(link, &cmds, deadline)
            .await?
            .into_iter()
            .zip(&self.shards)
        {
            ones += bounded_int(&self.name, v, "a count of set bits", shard.bytes * 8)?;
        }
        let sh = &self.shape;
        let ones = ones.min(sh.bits);
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

    /// Zeroes every shard's bits and writes its configuration again (each shard
    /// atomically): works on a filter whose keys were lost, as long as no other filter was
    /// created under the name since.
    pub(crate) async fn clear<C: Connection>(&self, link: &mut Link<C>) -> Result<(), Error> {
        let deadline = deadline(self.timeout);
        let cmds: Vec<Cmd> = (0..self.shards.len())
            .map(|s| self.with_fields(&SCRIPTS.clear, s, true))
            .collect();
        self.call(link, &cmds, deadline).await.map(drop)
    }

    /// Deletes every shard's two keys (each shard atomically), the first shard last: works on
    /// a filter whose keys were lost, as long as no other filter was created under the name.
    pub(crate) async fn delete<C: Connection>(&self, link: &mut Link<C>) -> Result<(), Error> {
        let deadline = deadline(self.timeout);
        let cmds: Vec<Cmd> = (1..self.shards.len())
            .chain([0])
            .map(|s| self.checked(&SCRIPTS.delete, s))
            .collect();
        self.call(link, &cmds, deadline).await.map(drop)
    }

    /// The whole filter, as the local type: bit-identical to what Redis holds. The bytes go
    /// straight into the filter's words as they arrive, a few ranges at a time, so the peak
    /// is the filter plus the ranges in flight.
    pub(crate) async fn download<C: Connection>(&self, link: &mut Link<C>) -> Result<F, Error> {
        let deadline = deadline(self.timeout);
        let total: u64 = self.shards.iter().map(|s| s.bytes).sum();
        let mut local = F::zeroed(&self.shape, self.hasher.clone())?;
        let in_flight = BYTES_IN_FLIGHT.max(total / 8) / RANGE_BYTES;
        let mut word = 0usize;
        let mut words = Vec::with_capacity(1024);
        for s in 0..self.shards.len() {
            let bytes = self.shards[s].bytes;
            let ranges: Vec<(u64, u64)> = (0..bytes)
                .step_by(RANGE_BYTES as usize)
                .map(|a| (a, (a + RANGE_BYTES).min(bytes) - 1))
                .collect();
            for group in ranges.chunks(in_flight.max(1) as usize) {
                let cmds: Vec<Cmd> = group
                    .iter()
                    .map(|&(a, b)| {
                        let mut cmd = self.checked(&SCRIPTS.read_range, s);
                        cmd.arg(a).arg(b);
                        cmd
                    })
                    .collect();
                for (v, &(a, b)) in self
                    .call(link, &cmds, deadline)
                    .await?
                    .into_iter()
                    .zip(group)
                {
                    let chunk = match v {
                        Value::BulkString(chunk) if chunk.len() as u64 == b - a + 1 => chunk,
                        other => {
                            let got = match other {
                                Value::BulkString(c) => format!("{} bytes", c.len()),
                                other => format!("{other:?}"),
                            };
                            return Err(corrupt(
                                &self.name,
                                format!("bytes {a}..={b} of shard {s}: {got} came"),
                            ));
                        }
                    };
                    for piece in chunk.chunks(8 * 1024) {
                        words.clear();
                        words.extend(
                            piece
                                .chunks_exact(8)
                                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
                        );
                        local.or_words(word, &words)?;
                        word += words.len();
                    }
                }
            }
        }
        Ok(local)
    }

    /// Writes `local`'s bits over the filter's (`merge`: ORs them in), shard by shard: the
    /// bytes go to a staging key next to the shard, then one script swaps or ORs them in.
    pub(crate) async fn put<C: Connection>(
        &self,
        link: &mut Link<C>,
        local: &F,
        merge: bool,
    ) -> Result<(), Error> {
        let deadline = deadline(self.timeout);
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
            self.call(link, &[staged(&[b"init"])], deadline).await?;
            let first_word = (shard.first_bit / 64) as usize;
            let shard_words = &words[first_word..first_word + (shard.bytes / 8) as usize];
            let word_chunk = (RANGE_BYTES / 8) as usize;
            let per_trip = (BYTES_IN_FLIGHT / RANGE_BYTES) as usize;
            let mut cmds = Vec::new();
            for (c, chunk) in shard_words.chunks(word_chunk).enumerate() {
                if chunk.iter().all(|&w| w == 0) {
                    continue; // the staging key starts zeroed
                }
                let bytes: Vec<u8> = chunk.iter().flat_map(|w| w.to_le_bytes()).collect();
                let at = (c * word_chunk * 8).to_string();
                cmds.push(staged(&[at.as_bytes(), &bytes]));
                if cmds.len() == per_trip {
                    self.call(link, &cmds, deadline).await?;
                    cmds.clear();
                }
            }
            self.call(link, &cmds, deadline).await?;
            let mut commit = eval(&SCRIPTS.commit_stage, &keys);
            commit
                .arg(&self.id)
                .arg(shard.bytes)
                .arg(if merge { "merge" } else { "replace" });
            self.call(link, &[commit], deadline).await?;
        }
        Ok(())
    }
}

/// Removes every key of the filter `name` that can be found, whatever its state (lost
/// configuration, lost bits, an unfinished creation): the way out for a broken filter.
/// Returns the number of keys removed.
pub(crate) async fn destroy<C: Connection>(
    link: &mut Link<C>,
    name: &str,
    timeout: Option<Duration>,
) -> Result<u64, Error> {
    check_name(name)?;
    let deadline = deadline(timeout);
    // The configurations say how many shards there are; the bits of a format-3 filter are
    // found by name even where its configuration is gone.
    const WINDOW: u32 = 64;
    let mut shards = 0u32;
    let mut ids: Vec<(u32, String)> = Vec::new();
    let mut window = 0;
    loop {
        let range = window..(window + WINDOW).min(MAX_SHARDS);
        let mut cmds = Vec::new();
        for s in range.clone() {
            let tag = shard_tag(name, s);
            cmds.push(eval(&SCRIPTS.read_config, &[&format!("{tag}:cfg")]));
            let mut exists = redis::cmd("EXISTS");
            exists.arg(bits_key(&tag, "", FORMAT));
            cmds.push(exists);
        }
        let values = call(name, link, &cmds, deadline, timeout).await?;
        let mut seen = false;
        for (s, pair) in range.clone().zip(values.chunks(2)) {
            let found = config_map(name, pair[0].clone())?;
            let bits = matches!(pair[1], Value::Int(1));
            if !found.is_empty() || bits {
                seen = true;
                shards = shards.max(s + 1);
            }
            if let Some(n) = found.get("shards").and_then(|n| n.parse::<u32>().ok()) {
                shards = shards.max(n.min(MAX_SHARDS));
            }
            if let Some(id) = found.get("id")
                && found.get("format").is_some_and(|f| f == "2")
            {
                ids.push((s, id.clone()));
            }
        }
        window = range.end;
        if !seen || window >= MAX_SHARDS {
            break;
        }
    }
    let mut cmds = Vec::new();
    for s in 0..shards {
        let tag = shard_tag(name, s);
        let mut del = redis::cmd("DEL");
        del.arg(format!("{tag}:cfg"))
            .arg(bits_key(&tag, "", FORMAT));
        for (_, id) in ids.iter().filter(|(at, _)| *at == s) {
            del.arg(bits_key(&tag, id, 2));
        }
        cmds.push(del);
    }
    let mut removed = 0;
    for v in call(name, link, &cmds, deadline, timeout).await? {
        removed += bounded_int(name, v, "keys deleted", 2 + ids.len() as u64)?;
    }
    Ok(removed)
}
