//! RedisBloom as a backend: [`RedisBloomFilter`] drives a filter of the RedisBloom module
//! (`BF.*` commands: built into Redis 8, in Redis Stack, in managed services) with the same
//! typed errors, deadlines and batching as the module-free [`RedisFilter`](crate::RedisFilter),
//! and [`RedisBloomChain`] is RedisBloom's own filter, locally: read from a `BF.SCANDUMP`
//! ([`RedisBloomFilter::download`](crate::RedisBloomFilter::download)) to answer without a round trip, or built offline and
//! loaded with `BF.LOADCHUNK` ([`RedisBloomFilter::load`](crate::RedisBloomFilter::load)).
//!
//! The server hashes the keys (RedisBloom's MurmurHash64A over the key's bytes), so keys are
//! byte strings here (`&str`, `&[u8]`, `String`, `Vec<u8>`: anything `AsRef<[u8]>`), and a
//! key answers the same whichever client, in whichever language, inserted it.

pub(crate) mod chain;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::Value;

use crate::exec::{Batch, Connection};
use crate::options::{RedisBloomInfo, RedisBloomOptions};
use crate::scripts::{Lua, SCRIPTS};
use crate::transport::{
    call, corrupt, deadline, fresh_id, round, script_call, server_error, timed_out_error,
    KeyEngine, KeyOp, Link,
};
use crate::{Error, Limits};

pub use chain::{RedisBloomChain, RedisBloomLink, DEFAULT_EXPANSION, MAX_CHUNK_BYTES};

/// Keys per `BF.INSERT` / `BF.MEXISTS`: larger batches become several in one pipeline, so no
/// single command holds the server for long.
const KEYS_PER_COMMAND: usize = 4096;
/// Bytes of dump chunks per round trip of a download or a load.
const BYTES_PER_ROUND: usize = 64 << 20;

/// The commands a [`RedisBloomFilter`] needs; a server that knows none of them lacks the
/// module.
const COMMANDS: [&str; 8] = [
    "BF.RESERVE",
    "BF.INSERT",
    "BF.MEXISTS",
    "BF.INFO",
    "BF.CARD",
    "BF.SCANDUMP",
    "BF.LOADCHUNK",
    "BF.MADD",
];

/// The client state of a RedisBloom filter: its key, its creation id's key and the id read
/// at open, the shelter of a failed insert, the limits.
#[derive(Debug)]
pub(crate) struct RbCore {
    name: String,
    id_key: String,
    shelter: String,
    id: String,
    /// The most keys the filter was seen to hold (`BF.CARD`, from the guards): a filter
    /// holding fewer is another one, created since.
    seen: AtomicU64,
    timeout: Option<Duration>,
    max_bytes: u64,
    replicas: u32,
}

/// A key next to the filter `name`, in its hash slot: `name` has a hash tag, which the
/// suffix keeps (`name:bloomkit-<what>`), or gets one around it
/// (`{name}:bloomkit-untagged-<what>`: no tagged name's key has that suffix). A name with
/// braces but no hash tag (`a{}b`) cannot be given a neighbour in its slot, and names with
/// `:bloomkit-` in them are this crate's.
fn side_key(name: &str, what: &str) -> Result<String, Error> {
    let refuse = |reason| {
        Err(Error::InvalidName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.contains(":bloomkit-") {
        return refuse("names with `:bloomkit-` are the keys bloomkit keeps next to a filter");
    }
    let tagged = name
        .find('{')
        .and_then(|open| name[open + 1..].find('}'))
        .is_some_and(|len| len > 0);
    if tagged {
        Ok(format!("{name}:bloomkit-{what}"))
    } else if name.contains(['{', '}']) {
        refuse("braces that are not a hash tag: no key can share its slot")
    } else {
        Ok(format!("{{{name}}}:bloomkit-untagged-{what}"))
    }
}

/// `items` cut into runs of at most [`BYTES_PER_ROUND`] bytes each (by `len`; an item
/// larger alone is a run of its own).
fn rounds<T>(items: &[T], len: impl Fn(&T) -> usize) -> Vec<&[T]> {
    let mut out = Vec::new();
    let mut rest = items;
    while !rest.is_empty() {
        let mut bytes = 0;
        let n = rest
            .iter()
            .take_while(|item| {
                bytes += len(item);
                bytes - len(item) < BYTES_PER_ROUND
            })
            .count()
            .max(1);
        let (this, more) = rest.split_at(n);
        out.push(this);
        rest = more;
    }
    out
}

/// Writes one script call on the filter's keys, with `args`.
fn script(batch: &mut Batch, lua: &Lua, whole: bool, keys: &[&str], args: &[&[u8]]) {
    script_call(batch, lua, whole, keys, args.len());
    for a in args {
        batch.arg(a);
    }
    batch.end_command();
}

fn simple(batch: &mut Batch, args: &[&[u8]]) {
    batch.start(args.len());
    for a in args {
        batch.arg(a);
    }
    batch.end_command();
}

/// An integer field of a reply.
fn int(name: &str, v: &Value, what: &str) -> Result<u64, Error> {
    match v {
        Value::Int(n) if *n >= 0 => Ok(*n as u64),
        other => Err(corrupt(name, format!("{what}: {other:?}"))),
    }
}

impl RbCore {
    /// The filter's key.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The deadline of each call.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Sets the deadline of each call.
    pub(crate) fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
    }

    fn new(name: &str, id: String, limits: &Limits) -> Result<RbCore, Error> {
        if name.is_empty() || name.len() > 1024 {
            return Err(Error::InvalidName {
                name: name.to_owned(),
                reason: "a RedisBloom filter's key is 1 to 1024 bytes",
            });
        }
        // The module-free backend's keys all start so (`bloomkit:{name#shard}:...`): a
        // RedisBloom filter there would be written over by, or write over, one of them.
        if name.starts_with(crate::engine::KEY_PREFIX) {
            return Err(Error::InvalidName {
                name: name.to_owned(),
                reason: "names starting with `bloomkit:{` are the keys of bloomkit's module-free filters",
            });
        }
        Ok(RbCore {
            name: name.to_owned(),
            id_key: side_key(name, "id")?,
            shelter: side_key(name, "shelter")?,
            id,
            seen: AtomicU64::new(0),
            timeout: limits.timeout,
            max_bytes: limits.max_bytes,
            replicas: limits.replicas,
        })
    }

    /// Whether the server has the module's commands.
    async fn check_module<C: Connection>(&self, link: &mut Link<C>) -> Result<(), Error> {
        let mut cmd = redis::cmd("COMMAND");
        cmd.arg("INFO").arg(&COMMANDS[..]);
        let d = deadline(self.timeout);
        let mut batch = Batch::new();
        batch.group();
        batch.cmd(&cmd);
        let replies = round(&self.name, link, &batch, d).await?;
        if replies.timed_out {
            return Err(self.timed_out(Vec::new(), "COMMAND INFO unanswered"));
        }
        let reply = replies.groups.into_iter().flatten().next();
        let infos = match reply {
            Some(Value::Array(infos)) if infos.len() == COMMANDS.len() => infos,
            Some(Value::ServerError(e)) => return Err(server_error(&self.name, &e)),
            other => {
                return Err(corrupt(
                    &self.name,
                    format!("COMMAND INFO answered {other:?}"),
                ))
            }
        };
        let missing: Vec<&str> = COMMANDS
            .iter()
            .zip(&infos)
            .filter(|(_, i)| matches!(i, Value::Nil))
            .map(|(c, _)| *c)
            .collect();
        if !missing.is_empty() {
            return Err(Error::NoModule {
                detail: format!("the server does not know {}", missing.join(", ")),
            });
        }
        Ok(())
    }

    fn timed_out(&self, inserted: Vec<usize>, detail: impl Into<String>) -> Error {
        timed_out_error(&self.name, self.timeout, inserted, detail.into())
    }

    pub(crate) async fn open<C: Connection>(
        link: &mut Link<C>,
        name: &str,
        limits: &Limits,
    ) -> Result<RbCore, Error> {
        let mut core = RbCore::new(name, String::new(), limits)?;
        core.check_module(link).await?;
        let d = deadline(core.timeout);
        let cmds = [
            redis::cmd("TYPE").arg(&core.name).clone(),
            redis::cmd("GET").arg(&core.id_key).clone(),
        ];
        let values = call(&core.name, link, &cmds, d, core.timeout).await?;
        match &values[0] {
            Value::SimpleString(t) if t == "MBbloom--" => {}
            Value::SimpleString(t) if t == "none" => {
                return Err(Error::NotFound {
                    name: core.name.clone(),
                    detail: format!("no key {}", core.name),
                })
            }
            Value::SimpleString(t) => {
                return Err(Error::WrongType {
                    name: core.name.clone(),
                    detail: format!("{} holds a {t}, not a RedisBloom Bloom filter", core.name),
                })
            }
            other => return Err(corrupt(name, format!("TYPE answered {other:?}"))),
        }
        core.id = match &values[1] {
            Value::Nil => String::new(),
            Value::BulkString(id) => String::from_utf8_lossy(id).into_owned(),
            other => return Err(corrupt(name, format!("the creation id read as {other:?}"))),
        };
        Ok(core)
    }

    pub(crate) async fn reserve<C: Connection>(
        link: &mut Link<C>,
        name: &str,
        options: &RedisBloomOptions,
    ) -> Result<RbCore, Error> {
        options.check()?;
        let core = RbCore::new(name, fresh_id(), &options.limits)?;
        core.check_module(link).await?;
        let rate = format!("{:?}", options.error_rate);
        let capacity = options.capacity.to_string();
        let mut args: Vec<&[u8]> = vec![core.id.as_bytes(), rate.as_bytes(), capacity.as_bytes()];
        let factor = options.expansion.map(|f| f.to_string());
        match &factor {
            Some(f) => args.extend([&b"EXPANSION"[..], f.as_bytes()]),
            None => args.push(b"NONSCALING"),
        }
        let keys = [core.id_key.as_str(), core.name.as_str()];
        let d = deadline(core.timeout);
        core.one_script(link, &SCRIPTS.rb_create, &keys, &args, d)
            .await?;
        Ok(core)
    }

    /// Runs one call of `lua` on `keys` with `args` (a batch of one group of one command)
    /// and returns its reply within `d`, errors typed.
    async fn one_script<C: Connection>(
        &self,
        link: &mut Link<C>,
        lua: &Lua,
        keys: &[&str],
        args: &[&[u8]],
        d: Option<Instant>,
    ) -> Result<Value, Error> {
        let mut batch = Batch::new();
        batch.group();
        script(&mut batch, lua, false, keys, args);
        match self.first_group(link, batch, d).await?.into_iter().next() {
            Some(Value::ServerError(e)) => Err(server_error(&self.name, &e)),
            Some(v) => Ok(v),
            None => Err(corrupt(&self.name, "no reply")),
        }
    }

    /// The replies of a batch's first group, within `d`.
    async fn first_group<C: Connection>(
        &self,
        link: &mut Link<C>,
        batch: Batch,
        d: Option<Instant>,
    ) -> Result<Vec<Value>, Error> {
        let replies = round(&self.name, link, &batch, d).await?;
        if replies.timed_out {
            return Err(self.timed_out(Vec::new(), "no answer"));
        }
        replies
            .groups
            .into_iter()
            .next()
            .ok_or_else(|| corrupt(&self.name, "no reply"))
    }

    /// The guard's arguments: the creation id, and the most keys seen.
    fn guard_args(&self) -> [Vec<u8>; 2] {
        [
            self.id.as_bytes().to_vec(),
            self.seen.load(Ordering::Relaxed).to_string().into_bytes(),
        ]
    }

    /// A read guarded on both sides: the guard, `command` (`BF.MEXISTS key ...`,
    /// `BF.INFO key`, ...), the guard.
    fn guarded_read(&self, batch: &mut Batch, command: impl FnOnce(&mut Batch)) {
        let keys = [self.id_key.as_str(), self.name.as_str()];
        let args = self.guard_args();
        let guard = |batch: &mut Batch| {
            script(
                batch,
                &SCRIPTS.rb_guard_read,
                false,
                &keys,
                &args.each_ref().map(Vec::as_slice),
            );
        };
        batch.group();
        guard(batch);
        command(batch);
        guard(batch);
    }

    /// A new batch of one guarded read (see [`Self::guarded_read`]).
    fn guarded_batch(&self, command: impl FnOnce(&mut Batch)) -> Batch {
        let mut batch = Batch::new();
        self.guarded_read(&mut batch, command);
        batch
    }

    /// The middle reply of a guarded read, once both guards passed.
    fn read_reply(&self, values: Vec<Value>) -> Result<Value, Error> {
        let [read]: [Value; 1] = self
            .guarded_replies(values)?
            .try_into()
            .map_err(|v| corrupt(&self.name, format!("a guarded read answered {v:?}")))?;
        Ok(read)
    }

    /// A guard's answer: the filter's count (kept as the least it may hold from now on),
    /// or its error.
    fn passed(&self, v: Value) -> Result<(), Error> {
        match v {
            Value::Int(card) if card >= 0 => {
                self.seen.fetch_max(card as u64, Ordering::Relaxed);
                Ok(())
            }
            Value::ServerError(e) => Err(server_error(&self.name, &e)),
            other => Err(corrupt(&self.name, format!("the guard answered {other:?}"))),
        }
    }

    /// `n` answers of 0 / 1, or the first error among them.
    fn flags(&self, v: Value, n: usize) -> Result<Vec<bool>, Error> {
        let items = match v {
            Value::Array(items) => items,
            other => {
                return Err(corrupt(
                    &self.name,
                    format!("{n} keys sent, answered {other:?}"),
                ))
            }
        };
        // A full non-scaling filter answers up to the first key it refused, that key's
        // answer an error: the error first, then the count.
        let mut flags = Vec::with_capacity(n);
        for v in items {
            flags.push(match v {
                Value::Int(0) | Value::Boolean(false) => false,
                Value::Int(1) | Value::Boolean(true) => true,
                Value::ServerError(e) if e.details().is_some_and(|d| d.contains("full")) => {
                    return Err(Error::Full {
                        name: self.name.clone(),
                        detail: e.details().unwrap_or_default().to_owned(),
                    })
                }
                Value::ServerError(e) => return Err(server_error(&self.name, &e)),
                other => return Err(corrupt(&self.name, format!("a key answered {other:?}"))),
            });
        }
        if flags.len() != n {
            return Err(corrupt(
                &self.name,
                format!("{n} keys sent, {} answered", flags.len()),
            ));
        }
        Ok(flags)
    }

    /// The answers of one insert transaction of `n` keys.
    fn inserted(&self, mut values: Vec<Value>, n: usize) -> Result<Vec<bool>, Error> {
        let waited = if self.replicas > 0 {
            values.pop()
        } else {
            None
        };
        let results = match values.pop() {
            Some(Value::Array(results)) if results.len() == 3 => results,
            exec => {
                values.extend(exec);
                let first = values.iter().find_map(|v| match v {
                    Value::ServerError(e) => Some(server_error(&self.name, e)),
                    _ => None,
                });
                return Err(first.unwrap_or_else(|| {
                    corrupt(&self.name, format!("a transaction answered {values:?}"))
                }));
            }
        };
        let [guard, flags, closing]: [Value; 3] = results.try_into().expect("three results");
        self.passed(guard)?;
        if !matches!(closing, Value::Int(1)) {
            return Err(corrupt(
                &self.name,
                format!("the transaction closed with {closing:?}"),
            ));
        }
        let flags = match flags {
            Value::ServerError(e) => return Err(server_error(&self.name, &e)),
            v => self.flags(v, n)?,
        };
        match waited {
            None => {}
            Some(Value::Int(acked)) if acked >= i64::from(self.replicas) => {}
            Some(Value::Int(acked)) => {
                return Err(Error::Unreplicated {
                    name: self.name.clone(),
                    acked: acked.max(0) as u64,
                    wanted: self.replicas,
                })
            }
            Some(Value::ServerError(e)) => return Err(server_error(&self.name, &e)),
            Some(other) => return Err(corrupt(&self.name, format!("WAIT answered {other:?}"))),
        }
        Ok(flags)
    }

    /// `BF.INFO`, guarded.
    pub(crate) async fn info<C: Connection>(
        &self,
        link: &mut Link<C>,
    ) -> Result<RedisBloomInfo, Error> {
        let batch = self.guarded_batch(|b| simple(b, &[b"BF.INFO", self.name.as_bytes()]));
        let v = self.read_reply(
            self.first_group(link, batch, deadline(self.timeout))
                .await?,
        )?;
        let pairs: Vec<(Value, Value)> = match v {
            Value::Map(pairs) => pairs,
            Value::Array(items) if items.len() % 2 == 0 => {
                let mut items = items.into_iter();
                let mut pairs = Vec::new();
                while let (Some(k), Some(v)) = (items.next(), items.next()) {
                    pairs.push((k, v));
                }
                pairs
            }
            other => return Err(corrupt(&self.name, format!("BF.INFO answered {other:?}"))),
        };
        let mut info = RedisBloomInfo {
            capacity: 0,
            size: 0,
            filters: 0,
            items: 0,
            expansion: None,
        };
        let mut seen = 0;
        for (k, v) in pairs {
            let key = match k {
                Value::SimpleString(s) => s,
                Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
                _ => continue,
            };
            let slot = match key.as_str() {
                "Capacity" => &mut info.capacity,
                "Size" => &mut info.size,
                "Number of filters" => &mut info.filters,
                "Number of items inserted" => &mut info.items,
                "Expansion rate" => {
                    info.expansion = match v {
                        Value::Nil => None,
                        v => Some(int(&self.name, &v, "Expansion rate")?),
                    };
                    continue;
                }
                _ => continue,
            };
            *slot = int(&self.name, &v, &key)?;
            seen += 1;
        }
        if seen != 4 {
            return Err(corrupt(&self.name, "BF.INFO lacks a field"));
        }
        Ok(info)
    }

    /// `BF.CARD`, guarded.
    pub(crate) async fn card<C: Connection>(&self, link: &mut Link<C>) -> Result<u64, Error> {
        self.card_by(link, deadline(self.timeout)).await
    }

    /// [`Self::card`] within `d`.
    async fn card_by<C: Connection>(
        &self,
        link: &mut Link<C>,
        d: Option<Instant>,
    ) -> Result<u64, Error> {
        let batch = self.guarded_batch(|b| simple(b, &[b"BF.CARD", self.name.as_bytes()]));
        let v = self.read_reply(self.first_group(link, batch, d).await?)?;
        int(&self.name, &v, "BF.CARD")
    }

    /// The filter as a local chain: the header, then every chunk (their iterators follow
    /// from the header), in rounds of at most [`BYTES_PER_ROUND`], each guarded; then the
    /// count again. Inserts by others while it ran (the count moved) take it again, up to
    /// three times.
    pub(crate) async fn download<C: Connection>(
        &self,
        link: &mut Link<C>,
    ) -> Result<RedisBloomChain, Error> {
        let d = deadline(self.timeout);
        let mut last = 0;
        for _ in 0..3 {
            let batch = self.guarded_batch(|b| {
                simple(b, &[b"BF.SCANDUMP", self.name.as_bytes(), b"0"]);
            });
            let v = self.read_reply(self.first_group(link, batch, d).await?)?;
            let header = match self.dump_reply(v, 1)? {
                header if RedisBloomChain::declared_bytes(&header).is_some() => header,
                other => {
                    return Err(corrupt(
                        &self.name,
                        format!("a dump header of {} bytes", other.len()),
                    ))
                }
            };
            let bytes = RedisBloomChain::declared_bytes(&header).unwrap_or(u64::MAX);
            if bytes > self.max_bytes {
                return Err(Error::TooLarge {
                    name: self.name.clone(),
                    bits: bytes.saturating_mul(8),
                    max_bytes: self.max_bytes,
                });
            }
            let mut chain = RedisBloomChain::from_header_within(&header, self.max_bytes)?;
            let pieces: Vec<(u64, usize)> = chain.pieces().map(|p| (p.start, p.len)).collect();
            for round_pieces in rounds(&pieces, |&(_, len)| len) {
                let batch = self.guarded_batch(|b| {
                    for &(start, _) in round_pieces {
                        let it = (start + 1).to_string();
                        simple(b, &[b"BF.SCANDUMP", self.name.as_bytes(), it.as_bytes()]);
                    }
                });
                let values = self.guarded_replies(self.first_group(link, batch, d).await?)?;
                if values.len() != round_pieces.len() {
                    return Err(corrupt(
                        &self.name,
                        format!(
                            "{} chunks asked, {} answered",
                            round_pieces.len(),
                            values.len()
                        ),
                    ));
                }
                for (v, &(start, len)) in values.into_iter().zip(round_pieces) {
                    let next = start + 1 + len as u64;
                    let chunk = self.dump_reply(v, next)?;
                    if chunk.len() != len {
                        return Err(corrupt(
                            &self.name,
                            format!("a dump chunk of {} bytes, {len} expected", chunk.len()),
                        ));
                    }
                    chain.load_chunk(next, &chunk)?;
                }
            }
            let now = self.card_by(link, d).await?;
            if now == chain.len() {
                return Ok(chain);
            }
            last = now;
        }
        Err(Error::Busy {
            name: self.name.clone(),
            detail: format!("keys were inserted during each of three downloads (now {last})"),
        })
    }

    /// `[next iterator, bytes]` of a `BF.SCANDUMP`, the iterator checked.
    fn dump_reply(&self, v: Value, next: u64) -> Result<Vec<u8>, Error> {
        match v {
            Value::Array(pair) if pair.len() == 2 => {
                let mut pair = pair.into_iter();
                let (it, data) = (pair.next(), pair.next());
                match (it, data) {
                    (Some(Value::Int(it)), Some(Value::BulkString(data))) if it as u64 == next => {
                        Ok(data)
                    }
                    (it, _) => Err(corrupt(
                        &self.name,
                        format!("BF.SCANDUMP answered iterator {it:?}, {next} expected (the filter changed?)"),
                    )),
                }
            }
            Value::ServerError(e) => Err(server_error(&self.name, &e)),
            other => Err(corrupt(
                &self.name,
                format!("BF.SCANDUMP answered {other:?}"),
            )),
        }
    }

    /// Creates the filter from `chain` (`BF.LOADCHUNK`): the header with the creation id,
    /// then the chunks in guarded rounds of at most [`BYTES_PER_ROUND`].
    pub(crate) async fn load<C: Connection>(
        link: &mut Link<C>,
        name: &str,
        chain: &RedisBloomChain,
        limits: &Limits,
    ) -> Result<RbCore, Error> {
        let core = RbCore::new(name, fresh_id(), limits)?;
        core.check_module(link).await?;
        let d = deadline(core.timeout);
        let staging = side_key(name, &format!("load-{}", core.id))?;
        let mut chunks = chain.chunks();
        let (_, header) = chunks.next().expect("a dump has a header");
        core.one_script(link, &SCRIPTS.rb_stage, &[&staging], &[&header], d)
            .await?;
        let chunks: Vec<_> = chunks.collect();
        for this in rounds(&chunks, |(_, c)| c.len()) {
            let mut batch = Batch::new();
            batch.group();
            for (it, c) in this {
                let it = it.to_string();
                simple(
                    &mut batch,
                    &[b"BF.LOADCHUNK", staging.as_bytes(), it.as_bytes(), c],
                );
            }
            let replies = round(&core.name, link, &batch, d).await?;
            let values: Vec<Value> = replies.groups.into_iter().flatten().collect();
            if replies.timed_out || values.len() != this.len() {
                return Err(core.timed_out(
                    Vec::new(),
                    format!("a load cut short; the staged copy {staging} expires in an hour"),
                ));
            }
            for v in values {
                match v {
                    Value::Okay => {}
                    Value::SimpleString(s) if s == "OK" => {}
                    Value::ServerError(e) => return Err(server_error(&core.name, &e)),
                    other => {
                        return Err(corrupt(
                            &core.name,
                            format!("BF.LOADCHUNK answered {other:?}"),
                        ))
                    }
                }
            }
        }
        let keys = [core.id_key.as_str(), core.name.as_str(), staging.as_str()];
        core.one_script(
            link,
            &SCRIPTS.rb_commit_load,
            &keys,
            &[core.id.as_bytes()],
            d,
        )
        .await?;
        Ok(core)
    }

    /// The replies of a guarded group of several commands (`values`, the guards' with
    /// them), once both guards passed; the first error reply among them is the error.
    fn guarded_replies(&self, mut values: Vec<Value>) -> Result<Vec<Value>, Error> {
        if values.len() < 2 {
            return Err(corrupt(&self.name, "a guarded round answered too little"));
        }
        let last = values.pop().expect("two values");
        let first = values.remove(0);
        self.passed(first)?;
        self.passed(last)?;
        if let Some(Value::ServerError(e)) =
            values.iter().find(|v| matches!(v, Value::ServerError(_)))
        {
            return Err(server_error(&self.name, e));
        }
        Ok(values)
    }

    /// Deletes the filter and its creation id.
    pub(crate) async fn delete<C: Connection>(&self, link: &mut Link<C>) -> Result<(), Error> {
        let keys = [self.id_key.as_str(), self.name.as_str()];
        let args = self.guard_args();
        let args = args.each_ref().map(Vec::as_slice);
        self.one_script(
            link,
            &SCRIPTS.rb_delete,
            &keys,
            &args,
            deadline(self.timeout),
        )
        .await?;
        Ok(())
    }
}

/// Keys go in groups of at most [`KEYS_PER_COMMAND`], in order: an insert is a transaction
/// of a guard, `BF.INSERT ... NOCREATE` and the closing script (with a `WAIT` after it for
/// replicas), a lookup a guarded read of `BF.MEXISTS`. A group is where its keys stand.
impl<I> KeyEngine<I> for RbCore
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    type Group = Range<usize>;

    fn limits(&self) -> (&str, Option<Duration>) {
        (&self.name, self.timeout)
    }

    fn write(&self, op: KeyOp, keys: I, d: Option<Instant>) -> (Batch, Vec<Range<usize>>, usize) {
        let mut batch = Batch::new();
        let mut groups = Vec::new();
        let mut count = 0;
        let mut keys = keys.into_iter().peekable();
        let shelter_keys = [
            self.id_key.as_str(),
            self.name.as_str(),
            self.shelter.as_str(),
        ];
        while keys.peek().is_some() {
            let chunk: Vec<I::Item> = keys.by_ref().take(KEYS_PER_COMMAND).collect();
            groups.push(count..count + chunk.len());
            count += chunk.len();
            let command = |batch: &mut Batch, name: &[u8], extra: &[&[u8]]| {
                batch.start(2 + extra.len() + chunk.len());
                batch.arg(name);
                batch.arg(self.name.as_bytes());
                for e in extra {
                    batch.arg(e);
                }
                for k in &chunk {
                    batch.arg(k.as_ref());
                }
                batch.end_command();
            };
            if op == KeyOp::Insert {
                batch.group();
                simple(&mut batch, &[b"MULTI"]);
                // Sent whole: an EVALSHA refused inside a transaction would let the insert
                // after it run unguarded.
                script(
                    &mut batch,
                    &SCRIPTS.rb_guard_write,
                    true,
                    &shelter_keys,
                    &self.guard_args().each_ref().map(Vec::as_slice),
                );
                command(&mut batch, b"BF.INSERT", &[b"NOCREATE", b"ITEMS"]);
                script(&mut batch, &SCRIPTS.unshelter, true, &shelter_keys, &[]);
                simple(&mut batch, &[b"EXEC"]);
                if self.replicas > 0 {
                    let ms = d.map_or(0, |d| {
                        d.saturating_duration_since(Instant::now())
                            .as_millis()
                            .max(1) as u64
                    });
                    let (r, ms) = (self.replicas.to_string(), ms.to_string());
                    simple(&mut batch, &[b"WAIT", r.as_bytes(), ms.as_bytes()]);
                }
            } else {
                self.guarded_read(&mut batch, |b| command(b, b"BF.MEXISTS", &[]));
            }
        }
        (batch, groups, count)
    }

    fn indices(group: &Range<usize>) -> impl Iterator<Item = usize> + '_ {
        group.clone()
    }

    fn answer(&self, op: KeyOp, group: &Range<usize>, v: Vec<Value>) -> Result<Vec<bool>, Error> {
        match op {
            KeyOp::Insert => self.inserted(v, group.len()),
            KeyOp::Contains => self.flags(self.read_reply(v)?, group.len()),
        }
    }
}

/// A Bloom filter of the RedisBloom module, driven through `BF.*` commands with bloomkit's
/// guards, deadlines and batching. The server hashes (RedisBloom's MurmurHash64A over the key's
/// bytes), so keys are byte strings (`&str`, `&[u8]`, `String`, `Vec<u8>`: anything
/// `AsRef<[u8]>`), and a key answers the same whichever client, in whichever language,
/// inserted it.
///
/// # What cannot go wrong
///
/// - **A lost filter is an error, never "absent"**: every lookup is a guard script (the key
///   holds a RedisBloom filter of the creation this client opened), `BF.MEXISTS`, and the
///   guard again, in one pipeline; `BF.MEXISTS` alone answers 0 for a missing key.
/// - **An insert never creates a filter by accident**: it is a transaction of a guard, `BF.INSERT
///   ... NOCREATE`, and a closing script (`BF.MADD` alone would create a default filter, 100
///   items at 1%, after a `FLUSHALL`). A failed guard moves the key aside so the insert fails,
///   and puts it back in the same transaction.
/// - **Re-creation is seen**: [`RedisBloomFilter::reserve`](crate::RedisBloomFilter::reserve) and [`RedisBloomFilter::load`](crate::RedisBloomFilter::load)
///   write a creation id next to the filter (`<name>:bloomkit-id` when the name has a hash
///   tag, `{<name>}:bloomkit-untagged-id` otherwise: in the filter's slot), and every call
///   checks it, and checks that the filter holds at least as many keys (`BF.CARD`) as this
///   client has seen it hold: a filter lost alone and made again by another client (a
///   `BF.ADD` creates one) is [`Error::Recreated`] as soon as it holds fewer. One made
///   again and filled past that count before this client's next call goes unseen.
/// - **A load is seen whole or not at all**: [`RedisBloomFilter::load`](crate::RedisBloomFilter::load) writes the chunks to
///   a staging key (expiring in an hour should the loader die) that one script then renames
///   to the filter's name.
/// - A server without the module is [`Error::NoModule`] at open, and a full `NONSCALING`
///   filter [`Error::Full`].
///
/// # Examples
///
/// ```no_run
/// use bloomkit_redis::{RedisBloomFilter, RedisBloomOptions};
///
/// let client = redis::Client::open("redis://127.0.0.1:6379/")?;
/// let options = RedisBloomOptions::new(1_000_000, 0.01);
/// let mut seen = RedisBloomFilter::reserve(client.get_connection()?, "seen", &options)?;
/// seen.try_insert_batch(["https://example.com/", "https://example.org/"])?;
/// let mut answers = Vec::new();
/// seen.try_contains_batch(["https://example.com/", "https://example.net/"], &mut answers)?;
/// assert!(answers[0]);
///
/// // The same filter locally: answers exactly as the server, without a round trip.
/// let local = seen.download()?;
/// assert!(local.contains(b"https://example.org/"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedisBloomFilter<C = crate::RespConnection> {
    core: RbCore,
    link: Link<C>,
}

impl<C> std::fmt::Debug for RedisBloomFilter<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

impl RedisBloomFilter<crate::RespConnection> {
    /// Connects to `url` and opens the filter `name`, on a [`crate::RespConnection`] (see
    /// [`RedisFilter::connect`](crate::RedisFilter::connect)); connecting obeys the default
    /// deadline.
    ///
    /// # Errors
    /// As [`open`](Self::open), and connection errors.
    pub fn connect(url: &str, name: &str) -> Result<Self, Error> {
        let con = crate::RespConnection::open(url, Limits::default().timeout)?;
        Self::open(con, name)
    }
}

impl<C: Connection> RedisBloomFilter<C> {
    crate::front::ops!(
        sync [],
        key: impl AsRef<[u8]>,
        item: [AsRef<[u8]>],
        info: RedisBloomInfo,
        local: RedisBloomChain,
        engine: RbCore,
    );
    rb_ops!(sync []);
}

/// What only a RedisBloom front has (creating a filter, `BF.CARD`), for the synchronous
/// [`RedisBloomFilter`] and its tokio twin alike: `$mode` as in [`crate::front::ops!`].
macro_rules! rb_ops {
    ($mode:ident [$($async:ident)?]) => {
        /// Creates the filter `name` (`BF.RESERVE`) with a creation id next to it.
        ///
        /// # Errors
        /// [`Error::Filter`](crate::Error::Filter) for sizing RedisBloom refuses (capacity 0,
        /// a rate outside (0, 1), expansion 0),
        /// [`Error::AlreadyExists`](crate::Error::AlreadyExists) when a key `name` exists,
        /// [`Error::NoModule`](crate::Error::NoModule),
        /// [`Error::InvalidName`](crate::Error::InvalidName),
        /// [`Error::Refused`](crate::Error::Refused) when the server refuses the reservation,
        /// [`Error::Timeout`](crate::Error::Timeout), and connection errors.
        pub $($async)? fn reserve(
            con: C,
            name: &str,
            options: &$crate::RedisBloomOptions,
        ) -> Result<Self, $crate::Error> {
            let mut link = $crate::transport::Link::new(con);
            let core = $crate::front::ops!(
                @engine $mode,
                $crate::redisbloom::RbCore::reserve(&mut link, name, options)
            )?;
            Ok(Self { core, link })
        }

        /// Creates the filter `name` from a local chain (`BF.LOADCHUNK`): a filter built
        /// offline by a batch job, loaded in chunks of at most
        /// [`MAX_CHUNK_BYTES`](crate::MAX_CHUNK_BYTES).
        ///
        /// # Errors
        /// As [`reserve`](Self::reserve); a load cut by the deadline leaves a partial filter,
        /// which [`delete`](Self::delete) removes.
        pub $($async)? fn load(
            con: C,
            name: &str,
            chain: &$crate::RedisBloomChain,
            limits: &$crate::Limits,
        ) -> Result<Self, $crate::Error> {
            let mut link = $crate::transport::Link::new(con);
            let core = $crate::front::ops!(
                @engine $mode,
                $crate::redisbloom::RbCore::load(&mut link, name, chain, limits)
            )?;
            Ok(Self { core, link })
        }

        /// Keys inserted (`BF.CARD`).
        ///
        /// # Errors
        /// As [`try_contains`](Self::try_contains).
        pub $($async)? fn count(&mut self) -> Result<u64, $crate::Error> {
            $crate::front::ops!(@engine $mode, self.core.card(&mut self.link))
        }
    };
}

use rb_ops;

#[cfg(feature = "tokio")]
mod tokio_front;
#[cfg(feature = "tokio")]
pub use tokio_front::AsyncRedisBloomFilter;
