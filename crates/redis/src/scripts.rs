//! The server-side scripts. Every write to a filter's keys is one of these, or a transaction
//! that opens with a guard script that stops the native writes after it when it fails
//! ([`guard_write`]); each checks the filter's configuration before a bit is touched.
//! Lookups are a guard script, native reads (`GETRANGE`, `BITFIELD_RO`) and a closing guard,
//! so a filter deleted or re-created while the reads ran is caught.
//!
//! Every script gets `KEYS[1]` (the shard's configuration hash) and `KEYS[2]` (its bits,
//! named after the filter's creation id); the checked scripts get `ARGV[1]` (the creation id
//! the client opened) and `ARGV[2]` (the shard's length in bytes). Nothing a caller passes is
//! spliced into a script's text: keys and values travel as `KEYS` and `ARGV`.
//!
//! Errors are replies whose first word is a code the client maps to a typed error:
//! `BKMISSING` (a key is gone), `BKWRONGTYPE` (a key of another type), `BKRECREATED` (another
//! creation id), `BKCORRUPT` (the bits have another length), `BKREFUSED` (the server would not
//! allocate the bits).

use std::sync::LazyLock;

/// A script's text and its SHA-1, for `EVALSHA` (and `SCRIPT LOAD` after a `NOSCRIPT`).
#[derive(Debug)]
pub(crate) struct Lua {
    pub(crate) code: String,
    pub(crate) sha: String,
}

impl Lua {
    fn new(code: String) -> Lua {
        let sha = redis::Script::new(&code).get_hash().to_owned();
        Lua { code, sha }
    }
}

/// Every script, built (and hashed) once per process.
#[derive(Debug)]
pub(crate) struct Scripts {
    pub(crate) guard_read: Lua,
    pub(crate) guard_write: Lua,
    pub(crate) unshelter: Lua,
    pub(crate) or_delta: Lua,
    pub(crate) create: Lua,
    pub(crate) check: Lua,
    pub(crate) read_config: Lua,
    pub(crate) set_field: Lua,
    pub(crate) count: Lua,
    pub(crate) read_range: Lua,
    pub(crate) clear: Lua,
    pub(crate) delete: Lua,
    pub(crate) stage: Lua,
    pub(crate) commit_stage: Lua,
    pub(crate) rb_guard_read: Lua,
    pub(crate) rb_guard_write: Lua,
    pub(crate) rb_create: Lua,
    pub(crate) rb_delete: Lua,
    pub(crate) rb_stage: Lua,
    pub(crate) rb_commit_load: Lua,
}

impl Scripts {
    /// Every script, for finding one's text by its SHA-1 after a `NOSCRIPT` reply.
    fn all(&self) -> [&Lua; 19] {
        [
            &self.guard_read,
            &self.guard_write,
            &self.unshelter,
            &self.create,
            &self.check,
            &self.read_config,
            &self.set_field,
            &self.count,
            &self.read_range,
            &self.clear,
            &self.delete,
            &self.stage,
            &self.commit_stage,
            &self.rb_guard_read,
            &self.rb_guard_write,
            &self.rb_create,
            &self.rb_delete,
            &self.rb_stage,
            &self.rb_commit_load,
        ]
    }

    /// The text of the script whose SHA-1 (in hex) is `sha`.
    pub(crate) fn code(&self, sha: &[u8]) -> Option<&str> {
        self.all()
            .into_iter()
            .find(|s| s.sha.as_bytes() == sha)
            .map(|s| s.code.as_str())
    }
}

/// The scripts.
pub(crate) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    guard_read: script(" flags=no-writes", "return 1"),
    guard_write: guard_write(),
    unshelter: unshelter(),
    or_delta: or_delta(),
    create: create(),
    check: script(" flags=no-writes", "return 1"),
    read_config: read_config(),
    set_field: set_field(),
    count: count(),
    read_range: read_range(),
    clear: clear(),
    delete: delete(),
    stage: stage(),
    commit_stage: commit_stage(),
    rb_guard_read: rb_script(" flags=no-writes", "return card"),
    rb_guard_write: rb_guard_write(),
    rb_create: rb_create(),
    rb_delete: rb_script("", "return redis.call('DEL', KEYS[1], KEYS[2])"),
    rb_stage: rb_stage(),
    rb_commit_load: rb_commit_load(),
});

/// The creation id in the configuration `KEYS[1]` (nil when it is gone), or an error reply
/// when the key holds another type: the first step of [`GUARD`] and [`OWNED`].
const CONFIG_ID: &str = r"
local function config_id()
  local id = redis.pcall('HGET', KEYS[1], 'id')
  if type(id) == 'table' then
    return nil, redis.error_reply('BKWRONGTYPE ' .. KEYS[1] .. ' holds a ' ..
      redis.call('TYPE', KEYS[1])['ok'] .. ', not a hash')
  end
  return id, nil
end
";

/// The check every script but `create` makes: returns an error reply, or nothing. Two
/// commands when all is well (`HGET` of the id, `STRLEN` of the bits); the rest only to say
/// what is wrong. A bits key that is a tombstone (an earlier release's writers left one where
/// a filter's bits had gone) is a missing one; an empty string is too (Redis never keeps one).
const GUARD: &str = r"
local function guard()
  local id, failed = config_id()
  if failed then return failed end
  if id ~= ARGV[1] then
    if redis.call('EXISTS', KEYS[1]) == 0 then
      return redis.error_reply('BKMISSING the configuration ' .. KEYS[1] .. ' is gone')
    end
    return redis.error_reply('BKRECREATED ' .. KEYS[1] .. ' now has creation id ' .. tostring(id))
  end
  local len = redis.pcall('STRLEN', KEYS[2])
  if type(len) == 'table' then
    if redis.call('TYPE', KEYS[2])['ok'] == 'hash' and redis.call('HEXISTS', KEYS[2], 'tombstone') == 1 then
      return redis.error_reply('BKMISSING the bits ' .. KEYS[2] .. ' are gone')
    end
    return redis.error_reply('BKWRONGTYPE ' .. KEYS[2] .. ' holds a ' ..
      redis.call('TYPE', KEYS[2])['ok'] .. ', not a string')
  end
  if len == 0 then
    return redis.error_reply('BKMISSING the bits ' .. KEYS[2] .. ' are gone')
  end
  if len ~= tonumber(ARGV[2]) then
    return redis.error_reply('BKCORRUPT ' .. KEYS[2] .. ' has ' .. len .. ' bytes, not ' .. ARGV[2])
  end
  return nil
end
";

fn script(flags: &str, body: &str) -> Lua {
    Lua::new(format!(
        "#!lua{flags}\n{CONFIG_ID}\n{GUARD}\nlocal failed = guard()\nif failed then return failed end\n{body}"
    ))
}

/// What a failed write guard does: whatever stands at the key `KEYS[2]` moves aside to the
/// shelter `KEYS[3]` (a rename: constant time) and a tombstone of another type takes its
/// place, on which the transaction's writes fail; [`unshelter`] puts things back.
const SHELTER: &str = r"
local function shelter()
  if redis.call('EXISTS', KEYS[2]) == 1 then
    redis.call('RENAME', KEYS[2], KEYS[3])
  end
  redis.call('HSET', KEYS[2], 'tombstone', '1')
end
";

/// The guard of an insert's transaction (`MULTI`, this, native `BITFIELD` sets,
/// [`unshelter`], `EXEC`): the sets run whatever it answers, so when it fails it moves
/// whatever stands at the bits key (`KEYS[2]`) aside to the shelter `KEYS[3]` (a rename:
/// constant time) and leaves a tombstone of another type there, on which the sets fail with
/// `WRONGTYPE`. [`unshelter`] then puts things back, still inside the transaction, so no
/// other client ever sees the tombstone, and nothing is written into a filter that was
/// deleted, lost or re-created.
fn guard_write() -> Lua {
    Lua::new(format!(
        r"#!lua
{CONFIG_ID}
{GUARD}
{SHELTER}
local failed = guard()
if failed then
  shelter()
  return failed
end
return 1
"
    ))
}

/// Closes an insert's transaction: undoes what a failed [`guard_write`] did (the tombstone
/// removed, the sheltered key moved back).
fn unshelter() -> Lua {
    Lua::new(
        r"#!lua
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('RENAME', KEYS[3], KEYS[2])
elseif redis.call('TYPE', KEYS[2])['ok'] == 'hash' and
    redis.call('HEXISTS', KEYS[2], 'tombstone') == 1 then
  redis.call('DEL', KEYS[2])
end
return 1
"
        .to_owned(),
    )
}

/// Creates the shard if neither key exists (`ARGV[3..]`: the configuration's field, value
/// pairs; the bits get `ARGV[2]` zero bytes). Returns the configuration as it now is, ours or
/// the one found, as field, value pairs. The bits are made first: when the server refuses
/// them (`proto-max-bulk-len`, `maxmemory`), nothing is written. Bits without a
/// configuration are a filter whose configuration was lost: an error, never overwritten.
fn create() -> Lua {
    Lua::new(
        r"#!lua
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'hash' then return redis.call('HGETALL', KEYS[1]) end
if t ~= 'none' then
  return redis.error_reply('BKWRONGTYPE ' .. KEYS[1] .. ' holds a ' .. t .. ', not a hash')
end
t = redis.call('TYPE', KEYS[2])['ok']
if t == 'string' then
  return redis.error_reply('BKMISSING the configuration ' .. KEYS[1] .. ' is gone but the bits ' ..
    KEYS[2] .. ' remain')
end
if t ~= 'none' then
  return redis.error_reply('BKWRONGTYPE ' .. KEYS[2] .. ' holds a ' .. t .. ' with no configuration next to it')
end
local made = redis.pcall('SETRANGE', KEYS[2], tonumber(ARGV[2]) - 1, string.char(0))
if type(made) == 'table' and made['err'] then
  return redis.error_reply('BKREFUSED ' .. ARGV[2] .. ' bytes for ' .. KEYS[2] .. ': ' .. made['err'])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
return redis.call('HGETALL', KEYS[1])
"
        .to_owned(),
    )
}

/// The configuration, field, value pairs (empty if the key is missing).
fn read_config() -> Lua {
    Lua::new(
        r"#!lua flags=no-writes
local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'hash' and t ~= 'none' then
  return redis.error_reply('BKWRONGTYPE ' .. KEYS[1] .. ' holds a ' .. t .. ', not a hash')
end
return redis.call('HGETALL', KEYS[1])
"
        .to_owned(),
    )
}

/// Sets `ARGV[3]` to `ARGV[4]` in the configuration (marks the filter complete).
fn set_field() -> Lua {
    script(
        "",
        "redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])\nreturn 1",
    )
}

/// The number of set bits.
fn count() -> Lua {
    script(" flags=no-writes", "return redis.call('BITCOUNT', KEYS[2])")
}

/// Bytes `ARGV[3] ..= ARGV[4]` of the bits.
fn read_range() -> Lua {
    script(
        " flags=no-writes",
        "return redis.call('GETRANGE', KEYS[2], ARGV[3], ARGV[4])",
    )
}

/// The part of `clear` and `delete` that lets them work on a broken shard: passes when the
/// configuration is ours or gone, and a bits key of another type is not in the way.
const OWNED: &str = r"
local function owned()
  local id, failed = config_id()
  if failed then return failed end
  if id and id ~= ARGV[1] then
    return redis.error_reply('BKRECREATED ' .. KEYS[1] .. ' now has creation id ' .. id)
  end
  local t = redis.call('TYPE', KEYS[2])['ok']
  if t ~= 'string' and t ~= 'none' and
      not (t == 'hash' and redis.call('HEXISTS', KEYS[2], 'tombstone') == 1) then
    return redis.error_reply('BKWRONGTYPE ' .. KEYS[2] .. ' holds a ' .. t .. ', not a string')
  end
  return nil
end
";

/// Zeroes the bits, keeping their length, and writes the configuration again (`ARGV[3..]`,
/// field, value pairs): a shard whose bits or configuration were lost is whole again, empty,
/// which is what clearing asks for.
fn clear() -> Lua {
    owned_script(
        r"
local cfg_ttl = redis.call('PTTL', KEYS[1])
local bits_ttl = redis.call('PTTL', KEYS[2])
redis.call('DEL', KEYS[2])
local made = redis.pcall('SETRANGE', KEYS[2], tonumber(ARGV[2]) - 1, string.char(0))
if type(made) == 'table' and made['err'] then
  return redis.error_reply('BKREFUSED ' .. ARGV[2] .. ' bytes for ' .. KEYS[2] .. ': ' .. made['err'])
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
-- An expiry the user set on the keys outlives the clear.
if cfg_ttl > 0 then redis.call('PEXPIRE', KEYS[1], cfg_ttl) end
if bits_ttl > 0 then redis.call('PEXPIRE', KEYS[2], bits_ttl) end
return 1
",
    )
}

/// ORs the bytes `ARGV[1]` into the bits `KEYS[1]` through the scratch key `KEYS[2]` (one
/// `BITOP`), keeping the expiry the bits have (`BITOP` stores a new value, which drops it).
/// Inside an insert's transaction, after its guard: a tombstone left by a failed guard (a
/// hash) is left alone, with the `WRONGTYPE` error the native commands would give.
fn or_delta() -> Lua {
    Lua::new(
        r"#!lua
if redis.call('TYPE', KEYS[1])['ok'] ~= 'string' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[1] .. ' is not the bits')
end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1])
redis.call('BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
redis.call('DEL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"
        .to_owned(),
    )
}

/// Deletes both keys of a shard whose configuration is ours or gone.
fn delete() -> Lua {
    owned_script("return redis.call('DEL', KEYS[1], KEYS[2])")
}

/// A script that runs `body` once [`OWNED`] passes.
fn owned_script(body: &str) -> Lua {
    Lua::new(format!(
        "#!lua\n{CONFIG_ID}\n{OWNED}\nlocal failed = owned()\nif failed then return failed end\n{body}"
    ))
}

/// Staging a whole shard for `upload` or `merge`: `KEYS[3]` is the staging key. With
/// `ARGV[3]` = `init`, creates it zeroed with a one-hour expiry; otherwise writes `ARGV[4]`
/// at byte `ARGV[3]`.
fn stage() -> Lua {
    script(
        "",
        r"
if ARGV[3] == 'init' then
  redis.call('DEL', KEYS[3])
  redis.call('SETRANGE', KEYS[3], tonumber(ARGV[2]) - 1, string.char(0))
  redis.call('PEXPIRE', KEYS[3], 3600000)
  return 1
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  return redis.error_reply('BKMISSING the staging key ' .. KEYS[3] .. ' is gone')
end
redis.call('SETRANGE', KEYS[3], tonumber(ARGV[3]), ARGV[4])
return 1
",
    )
}

/// Ends a staging: `ARGV[3]` = `replace` makes the staged bytes the bits; `merge` ORs them in.
/// The staging key is removed either way.
fn commit_stage() -> Lua {
    script(
        "",
        r"
if redis.call('STRLEN', KEYS[3]) ~= tonumber(ARGV[2]) then
  return redis.error_reply('BKMISSING the staging key ' .. KEYS[3] .. ' is gone or short')
end
-- The bits keep the expiry the user set on them (RENAME and BITOP would drop it).
local ttl = redis.call('PTTL', KEYS[2])
if ARGV[3] == 'replace' then
  redis.call('RENAME', KEYS[3], KEYS[2])
  redis.call('PERSIST', KEYS[2])
else
  redis.call('BITOP', 'OR', KEYS[2], KEYS[2], KEYS[3])
  redis.call('DEL', KEYS[3])
end
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
",
    )
}

/// The check of a RedisBloom filter ([`crate::RedisBloomFilter`]): `KEYS[1]` is its creation
/// id key (a string next to the filter, written by [`rb_create`] and [`rb_commit_load`]),
/// `KEYS[2]` the filter, `ARGV[1]` the creation id the client opened ('' when the filter had
/// none), `ARGV[2]` the most keys the client has seen it hold (`BF.CARD` never goes down in
/// a filter's life: fewer is another filter). Returns an error reply, or nothing and the
/// filter's count.
const RB_GUARD: &str = r"
local function rb_guard()
  local t = redis.call('TYPE', KEYS[2])['ok']
  if t == 'none' then
    return redis.error_reply('BKMISSING the RedisBloom filter ' .. KEYS[2] .. ' is gone'), 0
  end
  if t ~= 'MBbloom--' then
    return redis.error_reply('BKWRONGTYPE ' .. KEYS[2] .. ' holds a ' .. t .. ', not a RedisBloom Bloom filter'), 0
  end
  local id = redis.pcall('GET', KEYS[1])
  if type(id) == 'table' then
    return redis.error_reply('BKWRONGTYPE ' .. KEYS[1] .. ' holds a ' ..
      redis.call('TYPE', KEYS[1])['ok'] .. ', not a string'), 0
  end
  if (id or '') ~= ARGV[1] then
    return redis.error_reply('BKRECREATED ' .. KEYS[2] .. ' now has creation id ' .. tostring(id)), 0
  end
  local card = redis.call('BF.CARD', KEYS[2])
  if card < tonumber(ARGV[2]) then
    return redis.error_reply('BKRECREATED ' .. KEYS[2] .. ' holds ' .. card .. ' keys where ' ..
      ARGV[2] .. ' were seen: another filter'), 0
  end
  return nil, card
end
";

fn rb_script(flags: &str, body: &str) -> Lua {
    Lua::new(format!(
        "#!lua{flags}\n{RB_GUARD}\nlocal failed, card = rb_guard()\nif failed then return failed end\n{body}"
    ))
}

/// The guard of a RedisBloom insert's transaction (`MULTI`, this, `BF.INSERT ... NOCREATE`,
/// [`unshelter`], `EXEC`), as [`guard_write`] is for the module-free filter: when the check
/// fails, whatever stands at the filter's key moves aside to the shelter `KEYS[3]` and a
/// tombstone of another type takes its place, so the insert fails (`WRONGTYPE`) instead of
/// writing into a filter re-created by someone else; [`unshelter`] puts things back.
fn rb_guard_write() -> Lua {
    Lua::new(format!(
        r"#!lua
{RB_GUARD}
{SHELTER}
local failed, card = rb_guard()
if failed then
  shelter()
  return failed
end
return card
"
    ))
}

/// Creates a RedisBloom filter (`BF.RESERVE KEYS[2] ARGV[2..]`) and its creation id
/// `ARGV[1]` at `KEYS[1]`, if nothing is at `KEYS[2]`.
fn rb_create() -> Lua {
    Lua::new(
        r"#!lua
local t = redis.call('TYPE', KEYS[2])['ok']
if t ~= 'none' then
  return redis.error_reply('BKEXISTS ' .. KEYS[2] .. ' exists (a ' .. t .. ')')
end
local made = redis.pcall('BF.RESERVE', KEYS[2], unpack(ARGV, 2))
if type(made) == 'table' and made['err'] then
  return redis.error_reply('BKREFUSED BF.RESERVE ' .. KEYS[2] .. ': ' .. made['err'])
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"
        .to_owned(),
    )
}

/// Starts a load: a new RedisBloom filter at the staging key `KEYS[1]` from the dump's
/// header `ARGV[1]` (`BF.LOADCHUNK KEYS[1] 1 header`), removed by itself after an hour if
/// the load never finishes. The chunks then go to the staging key; [`rb_commit_load`]
/// moves it to the filter's name, so no one sees a filter half loaded.
fn rb_stage() -> Lua {
    Lua::new(
        r"#!lua
redis.call('DEL', KEYS[1])
local made = redis.pcall('BF.LOADCHUNK', KEYS[1], 1, ARGV[1])
if type(made) == 'table' and made['err'] then
  return redis.error_reply('BKREFUSED BF.LOADCHUNK ' .. KEYS[1] .. ': ' .. made['err'])
end
redis.call('PEXPIRE', KEYS[1], 3600000)
return 1
"
        .to_owned(),
    )
}

/// Ends a load: the staged filter `KEYS[3]` becomes `KEYS[2]`, with the creation id
/// `ARGV[1]` at `KEYS[1]`, if nothing is at `KEYS[2]` (else the staged one is dropped).
fn rb_commit_load() -> Lua {
    Lua::new(
        r"#!lua
local t = redis.call('TYPE', KEYS[2])['ok']
if t ~= 'none' then
  redis.call('DEL', KEYS[3])
  return redis.error_reply('BKEXISTS ' .. KEYS[2] .. ' exists (a ' .. t .. ')')
end
if redis.call('TYPE', KEYS[3])['ok'] ~= 'MBbloom--' then
  return redis.error_reply('BKMISSING the staged filter ' .. KEYS[3] .. ' is gone (expired?)')
end
redis.call('RENAME', KEYS[3], KEYS[2])
redis.call('PERSIST', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1])
return 1
"
        .to_owned(),
    )
}
