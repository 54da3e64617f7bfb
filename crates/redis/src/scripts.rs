//! The server-side scripts: every operation on a filter's keys runs as one of these, and each
//! checks the filter's configuration before it touches a bit.
//!
//! Every script gets `KEYS[1]` (the shard's configuration hash) and `KEYS[2]` (its bits);
//! the checked scripts get `ARGV[1]` (the creation id the client opened) and `ARGV[2]` (the
//! shard's length in bytes). Nothing a caller passes is spliced into a script's text: keys
//! and values travel as `KEYS` and `ARGV`.
//!
//! Errors are replies whose first word is a code the client maps to a typed error:
//! `BKMISSING` (a key is gone), `BKWRONGTYPE` (a key of another type), `BKRECREATED` (another
//! creation id), `BKCORRUPT` (the bits have another length).

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
    pub(crate) insert: Lua,
    pub(crate) contains: Lua,
    pub(crate) create: Lua,
    pub(crate) read_config: Lua,
    pub(crate) set_field: Lua,
    pub(crate) count: Lua,
    pub(crate) read_range: Lua,
    pub(crate) clear: Lua,
    pub(crate) delete: Lua,
    pub(crate) stage: Lua,
    pub(crate) commit_stage: Lua,
}

impl Scripts {
    /// All of them, for loading after a `NOSCRIPT` reply.
    pub(crate) fn all(&self) -> [&Lua; 11] {
        [
            &self.insert,
            &self.contains,
            &self.create,
            &self.read_config,
            &self.set_field,
            &self.count,
            &self.read_range,
            &self.clear,
            &self.delete,
            &self.stage,
            &self.commit_stage,
        ]
    }
}

/// The scripts.
pub(crate) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    insert: insert(),
    contains: contains(),
    create: create(),
    read_config: read_config(),
    set_field: set_field(),
    count: count(),
    read_range: read_range(),
    clear: clear(),
    delete: delete(),
    stage: stage(),
    commit_stage: commit_stage(),
});

/// The check every script but `create` starts with. Returns an error reply, or nothing.
const GUARD: &str = r"
local function guard()
  local t = redis.call('TYPE', KEYS[1])['ok']
  if t == 'none' then
    return redis.error_reply('BKMISSING the configuration ' .. KEYS[1] .. ' is gone')
  end
  if t ~= 'hash' then
    return redis.error_reply('BKWRONGTYPE ' .. KEYS[1] .. ' holds a ' .. t .. ', not a hash')
  end
  local id = redis.call('HGET', KEYS[1], 'id')
  if id ~= ARGV[1] then
    return redis.error_reply('BKRECREATED ' .. KEYS[1] .. ' now has creation id ' .. tostring(id))
  end
  t = redis.call('TYPE', KEYS[2])['ok']
  if t == 'none' then
    return redis.error_reply('BKMISSING the bits ' .. KEYS[2] .. ' are gone')
  end
  if t ~= 'string' then
    return redis.error_reply('BKWRONGTYPE ' .. KEYS[2] .. ' holds a ' .. t .. ', not a string')
  end
  local len = redis.call('STRLEN', KEYS[2])
  if len ~= tonumber(ARGV[2]) then
    return redis.error_reply('BKCORRUPT ' .. KEYS[2] .. ' has ' .. len .. ' bytes, not ' .. ARGV[2])
  end
  return nil
end
local failed = guard()
if failed then return failed end
";

/// The most bit offsets one `BITFIELD` call gets: `unpack` in Redis's Lua stops near 8,000
/// values, and a `SET` takes four.
const PER_CALL: &str = "local per_call = 1800";

fn script(flags: &str, body: &str) -> Lua {
    Lua::new(format!("#!lua{flags}\n{GUARD}\n{PER_CALL}\n{body}"))
}

/// A script over `ARGV[3]` = k and `ARGV[4..]` = k bit offsets per key that sends each
/// position to `command` as the sub-command `sub` (`ARGV[j]` is the offset; `width` values
/// per position) and returns one byte per key: `on_clear` if one of its bits was 0, else
/// `otherwise`.
fn per_key(
    flags: &str,
    command: &str,
    sub: &str,
    width: u32,
    on_clear: char,
    otherwise: char,
) -> Lua {
    script(
        flags,
        &format!(
            r"
local k = tonumber(ARGV[3])
local keys_per_call = math.max(1, math.floor(per_call / k))
local out, o = {{}}, 0
local i = 4
while i <= #ARGV do
  local args, n = {{}}, 0
  local last = math.min(#ARGV, i + keys_per_call * k - 1)
  for j = i, last do
    {sub}
    n = n + {width}
  end
  local bits = redis.call('{command}', KEYS[2], unpack(args))
  for a = 1, #bits, k do
    local answer = '{otherwise}'
    for b = a, a + k - 1 do
      if bits[b] == 0 then answer = '{on_clear}'; break end
    end
    o = o + 1
    out[o] = answer
  end
  i = last + 1
end
return table.concat(out)
"
        ),
    )
}

/// Sets each key's bits; per key, `1` if one was clear before (the key was certainly new).
fn insert() -> Lua {
    per_key(
        "",
        "BITFIELD",
        "args[n + 1] = 'SET'; args[n + 2] = 'u1'; args[n + 3] = ARGV[j]; args[n + 4] = 1",
        4,
        '1',
        '0',
    )
}

/// Per key, `1` if all its bits are set, else `0`.
fn contains() -> Lua {
    per_key(
        " flags=no-writes",
        "BITFIELD_RO",
        "args[n + 1] = 'GET'; args[n + 2] = 'u1'; args[n + 3] = ARGV[j]",
        3,
        '0',
        '1',
    )
}

/// Creates the shard if neither key exists (`ARGV[3..]`: the configuration's field, value
/// pairs; the bits get `ARGV[2]` zero bytes). Returns the configuration as it now is, ours or
/// the one found, as field, value pairs.
fn create() -> Lua {
    Lua::new(
        r"#!lua
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'hash' then return redis.call('HGETALL', KEYS[1]) end
if t ~= 'none' then
  return redis.error_reply('BKWRONGTYPE ' .. KEYS[1] .. ' holds a ' .. t .. ', not a hash')
end
t = redis.call('TYPE', KEYS[2])['ok']
if t ~= 'none' then
  return redis.error_reply('BKWRONGTYPE ' .. KEYS[2] .. ' holds a ' .. t .. ' with no configuration next to it')
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('SETRANGE', KEYS[2], tonumber(ARGV[2]) - 1, string.char(0))
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

/// Zeroes the bits, keeping their length.
fn clear() -> Lua {
    script(
        "",
        "redis.call('DEL', KEYS[2])\nredis.call('SETRANGE', KEYS[2], tonumber(ARGV[2]) - 1, string.char(0))\nreturn 1",
    )
}

/// Deletes both keys.
fn delete() -> Lua {
    script("", "return redis.call('DEL', KEYS[1], KEYS[2])")
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
if ARGV[3] == 'replace' then
  redis.call('RENAME', KEYS[3], KEYS[2])
  redis.call('PERSIST', KEYS[2])
else
  redis.call('BITOP', 'OR', KEYS[2], KEYS[2], KEYS[3])
  redis.call('DEL', KEYS[3])
end
return 1
",
    )
}
