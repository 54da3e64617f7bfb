//! What both backends send and read through: a [`Link`] (the connection and its state:
//! retired, replies still owed), one round trip with its deadline ([`round`], [`call`]),
//! scripts that survive a flushed script cache, and the typed errors a reply can turn into.
//! The bounded, reply-matching reader beneath is [`crate::wire`]'s; the engines above are
//! [`crate::engine`] (bloomkit's own layout) and [`crate::redisbloom`] (the module's).

use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use redis::{Cmd, Value};

use crate::exec::{Batch, Connection, Replies, Round};
use crate::scripts::{Lua, SCRIPTS};
use crate::Error;

/// The two operations on keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyOp {
    /// Set the keys' bits.
    Insert,
    /// Test them.
    Contains,
}

/// An engine's half of a call on keys ([`per_key`]): how it writes the keys (`I`) into
/// groups of a batch, and how it reads each group's replies.
pub(crate) trait KeyEngine<I: IntoIterator> {
    /// One group's keys, as the engine wrote them.
    type Group;

    /// The filter's name, for errors, and the deadline of each call.
    fn limits(&self) -> (&str, Option<Duration>);

    /// A batch of `op` on `keys`, one batch group per group returned, and how many keys
    /// there were; `d` is the call's deadline.
    fn write(&self, op: KeyOp, keys: I, d: Option<Instant>) -> (Batch, Vec<Self::Group>, usize);

    /// Where `group`'s keys stand among the call's, in the order of its answers.
    fn indices(group: &Self::Group) -> impl Iterator<Item = usize> + '_;

    /// The answers of `group`'s keys, read from its replies (`values`) and checked.
    fn answer(
        &self,
        op: KeyOp,
        group: &Self::Group,
        values: Vec<Value>,
    ) -> Result<Vec<bool>, Error>;
}

/// Runs `op` on `keys` with `engine` and appends its answer for each, in order: for
/// [`KeyOp::Insert`] whether the key was certainly new, for [`KeyOp::Contains`] whether it
/// may be in the filter. The groups the engine writes all go in one round trip (per node of
/// a cluster). On an error `out` is left as it was; a round cut by its deadline is
/// [`Error::Timeout`], naming for an insert the keys of the groups that answered.
pub(crate) async fn per_key<E, C, I>(
    engine: &E,
    link: &mut Link<C>,
    op: KeyOp,
    keys: I,
    out: &mut Vec<bool>,
) -> Result<(), Error>
where
    E: KeyEngine<I>,
    C: Connection,
    I: IntoIterator,
{
    let (name, timeout) = engine.limits();
    let deadline = deadline(timeout);
    let (batch, groups, count) = engine.write(op, keys, deadline);
    if groups.is_empty() {
        return Ok(());
    }
    let replies = round(name, link, &batch, deadline).await?;
    let mut answered = vec![false; count];
    let mut inserted = Vec::new();
    let timed_out = replies.timed_out;
    let answering = replies.groups.len();
    for (values, group) in replies.groups.into_iter().zip(&groups) {
        let these = engine.answer(op, group, values)?;
        for (answer, i) in these.into_iter().zip(E::indices(group)) {
            answered[i] = answer;
        }
        if op == KeyOp::Insert {
            inserted.extend(E::indices(group));
        }
    }
    if timed_out {
        inserted.sort_unstable();
        return Err(timed_out_error(
            name,
            timeout,
            inserted,
            format!("{answering} of {} groups of keys answered", groups.len()),
        ));
    }
    out.extend(answered);
    Ok(())
}

/// A connection, the replies earlier round trips on it left unread (see [`Round`]), and why
/// it was retired, if it was.
#[derive(Debug)]
pub(crate) struct Link<C> {
    pub(crate) con: C,
    unread: usize,
    retired: Option<String>,
}

impl<C> Link<C> {
    pub(crate) fn new(con: C) -> Link<C> {
        Link {
            con,
            unread: 0,
            retired: None,
        }
    }

    /// Puts `con` in place of the connection, with a clean slate; returns the old one.
    pub(crate) fn replace(&mut self, con: C) -> C {
        self.unread = 0;
        self.retired = None;
        std::mem::replace(&mut self.con, con)
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

/// A fresh random creation id, 32 hex digits.
pub(crate) fn fresh_id() -> String {
    use std::collections::hash_map::RandomState;
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let a = RandomState::new().hash_one((time, std::process::id()));
    let b = RandomState::new().hash_one((a, time));
    format!("{a:016x}{b:016x}")
}

/// The command that runs `script` on shard keys `keys`.
pub(crate) fn eval(script: &Lua, keys: &[&str]) -> Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(&script.sha).arg(keys.len()).arg(keys);
    cmd
}

/// Whether `v` is a server's refusal for want of a script.
fn noscript(v: &Value) -> bool {
    matches!(v, Value::ServerError(e) if e.code() == "NOSCRIPT")
}

/// The deadline of a call that starts now.
pub(crate) fn deadline(timeout: Option<Duration>) -> Option<Instant> {
    // A timeout too long to add to the clock (`Duration::MAX`) is no deadline.
    timeout.and_then(|t| Instant::now().checked_add(t))
}

/// One round trip of `batch`, ended at `deadline`. The groups a server refused for want of
/// a script (`NOSCRIPT`: a restart, a failover, `SCRIPT FLUSH`) go again in a second round
/// trip with their scripts sent whole (`EVAL`), which runs them, and caches them, on the node
/// that refused them, wherever a cluster routes the group. A refused command ran nothing, and
/// every group is safe to send again whole: lookups only read, and a script that writes is
/// alone in its group.
pub(crate) async fn round<C: Connection>(
    name: &str,
    link: &mut Link<C>,
    batch: &Batch,
    deadline: Option<Instant>,
) -> Result<Replies, Error> {
    let mut replies = send(name, link, batch, deadline).await?;
    let refused: Vec<usize> = (0..replies.groups.len())
        .filter(|&g| replies.groups[g].iter().any(noscript))
        .collect();
    if refused.is_empty() {
        return Ok(replies);
    }
    let again = batch.inlined(&refused, |sha| SCRIPTS.code(sha));
    let more = send(name, link, &again, deadline).await?;
    if let Some(&unanswered) = refused.get(more.groups.len()) {
        // Cut by the deadline: answers stay a prefix, up to the first refused group left.
        replies.groups.truncate(unanswered);
        replies.timed_out = true;
    }
    for (g, values) in refused.into_iter().zip(more.groups) {
        if g < replies.groups.len() {
            replies.groups[g] = values;
        }
    }
    Ok(replies)
}

/// One round trip of `batch` on `link`, each group followed by the echo of a fresh marker so
/// that replies out of step with the commands (a proxy that replays, drops, duplicates or
/// reorders them) are [`Error::Corrupt`], never answers; a connection that showed it cannot
/// be trusted is retired ([`Error::Retired`] from then on).
async fn send<C: Connection>(
    name: &str,
    link: &mut Link<C>,
    batch: &Batch,
    deadline: Option<Instant>,
) -> Result<Replies, Error> {
    if let Some(why) = &link.retired {
        return Err(Error::Retired {
            name: name.to_owned(),
            detail: why.clone(),
        });
    }
    let marker = crate::exec::marker();
    let marked = batch.marked(&marker);
    let mut state = Round {
        deadline,
        unread: link.unread,
        broken: false,
    };
    let out = link.con.run(&marked, &mut state).await;
    link.unread = state.unread;
    if state.broken {
        link.retired = Some(
            "an earlier call failed part way (cut by its deadline in the middle of a command, \
             or an I/O error)"
                .to_owned(),
        );
    }
    let mut out = match out {
        Ok(out) => out,
        Err(e) => return Err(retire_on(link, typed(name, e))),
    };
    // A connection answers a prefix of the groups, all of them unless cut by the deadline.
    let sent = batch.groups();
    let detail = if out.groups.len() > sent || (!out.timed_out && out.groups.len() != sent) {
        Some(format!(
            "{sent} groups of commands sent, {} answered",
            out.groups.len()
        ))
    } else {
        batch.unmark(&marker, &mut out).err()
    };
    if let Some(detail) = detail {
        link.retired = Some(format!("replies out of step with commands: {detail}"));
        return Err(corrupt(name, detail));
    }
    Ok(out)
}

/// `e`, after retiring `link` if `e` says its replies can no longer be read in step.
fn retire_on<C>(link: &mut Link<C>, e: Error) -> Error {
    let why = match &e {
        Error::Corrupt { detail, .. } => {
            Some(format!("replies out of step with commands: {detail}"))
        }
        Error::ReplyTooLarge { size, max, .. } => {
            Some(format!("a reply of {size} bytes or more, over {max}"))
        }
        _ => None,
    };
    if link.retired.is_none() {
        link.retired = why;
    }
    e
}

/// Sends `cmds` (scripts or plain commands, each naming a shard's key first) in one round
/// trip, one group per first key, and returns one value per command; the first error reply
/// is a typed error, and a deadline passed is [`Error::Timeout`].
pub(crate) async fn call<C: Connection>(
    name: &str,
    link: &mut Link<C>,
    cmds: &[Cmd],
    deadline: Option<Instant>,
    timeout: Option<Duration>,
) -> Result<Vec<Value>, Error> {
    if cmds.is_empty() {
        return Ok(Vec::new());
    }
    // A script's first key follows its SHA-1 and key count; a plain command's, its name.
    let first_key = |cmd: &Cmd| {
        let mut args = cmd.args_iter();
        let script = matches!(args.next(), Some(redis::Arg::Simple(n)) if n.starts_with(b"EVAL"));
        match args.nth(if script { 2 } else { 0 }) {
            Some(redis::Arg::Simple(key)) => key.to_vec(),
            _ => Vec::new(),
        }
    };
    let mut groups: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
    for (i, cmd) in cmds.iter().enumerate() {
        let key = first_key(cmd);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    let mut batch = Batch::new();
    for (_, members) in &groups {
        batch.group();
        for &i in members {
            batch.cmd(&cmds[i]);
        }
    }
    let replies = round(name, link, &batch, deadline).await?;
    if replies.timed_out {
        return Err(timed_out_error(
            name,
            timeout,
            Vec::new(),
            format!(
                "{} of {} shard calls answered",
                replies.groups.len(),
                groups.len()
            ),
        ));
    }
    let mut out = vec![Value::Nil; cmds.len()];
    for ((_, members), values) in groups.iter().zip(replies.groups) {
        if values.len() != members.len() {
            return Err(corrupt(
                name,
                "a reply has another number of values than commands",
            ));
        }
        for (&i, v) in members.iter().zip(values) {
            out[i] = v;
        }
    }
    if let Some(Value::ServerError(e)) = out.iter().find(|v| matches!(v, Value::ServerError(_))) {
        return Err(server_error(name, e));
    }
    Ok(out)
}

pub(crate) fn timed_out_error(
    name: &str,
    timeout: Option<Duration>,
    inserted: Vec<usize>,
    detail: String,
) -> Error {
    Error::Timeout {
        name: name.to_owned(),
        limit: timeout.unwrap_or_default(),
        inserted,
        detail,
    }
}

pub(crate) fn corrupt(name: &str, detail: impl Into<String>) -> Error {
    Error::Corrupt {
        name: name.to_owned(),
        detail: detail.into(),
    }
}

/// A reply that must be a non-negative integer at most `max`.
pub(crate) fn bounded_int(name: &str, v: Value, what: &str, max: u64) -> Result<u64, Error> {
    match v {
        Value::Int(n) if n >= 0 && n as u64 <= max => Ok(n as u64),
        other => Err(corrupt(name, format!("{what}: {other:?}, not 0..={max}"))),
    }
}

/// The typed error for a server's error reply.
pub(crate) fn server_error(name: &str, e: &redis::ServerError) -> Error {
    Error::from_server(name, e.code(), e.details())
        .unwrap_or_else(|| Error::from(redis::RedisError::from(e.clone())))
}

/// The typed error for `e`: the first server error of a pipeline, our scripts' codes, or
/// the connection's error as it is.
pub(crate) fn typed(name: &str, e: redis::RedisError) -> Error {
    if e.kind() == redis::ErrorKind::UnexpectedReturnType {
        return corrupt(name, e.to_string());
    }
    if let Some(limit) = crate::wire::ReplyLimit::from_error(&e) {
        return Error::ReplyTooLarge {
            name: name.to_owned(),
            size: limit.size,
            max: limit.max,
        };
    }
    if let Some(items) = e.clone().into_server_errors()
        && let Some((_, first)) = items.first()
    {
        return server_error(name, first);
    }
    match e
        .code()
        .and_then(|code| Error::from_server(name, code, e.detail()))
    {
        Some(typed) => typed,
        None => Error::from(e),
    }
}

/// Starts a script call on `keys` in `batch`: by SHA-1 (`EVALSHA`), or whole (`EVAL`) where a
/// refusal must not let the commands after it run (inside a transaction). The caller writes
/// the `extra` arguments after the keys and ends the command.
pub(crate) fn script_call(batch: &mut Batch, lua: &Lua, whole: bool, keys: &[&str], extra: usize) {
    batch.start(3 + keys.len() + extra);
    if whole {
        batch.arg(b"EVAL");
        batch.arg(lua.code.as_bytes());
    } else {
        batch.arg(b"EVALSHA");
        batch.arg(lua.sha.as_bytes());
    }
    batch.int(keys.len() as u64);
    for key in keys {
        batch.arg(key.as_bytes());
    }
}
