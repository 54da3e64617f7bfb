//! How commands reach Redis: one trait, [`Connection`], with a pipelined `run` for a single
//! server and for a cluster, synchronous or on tokio. Every operation of the filter is
//! written once, as an `async fn` over this trait; the synchronous connections answer at
//! once, and [`block_on`] drives such a future to its end without a runtime.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use redis::{Cmd, RedisResult, Value};

/// Commands for one round trip, in groups, already in the wire format (RESP): the filter
/// writes each command once, straight into the bytes a socket takes, so a batch of keys
/// costs no per-command allocation on the client.
///
/// A group is the commands of one hash slot (one shard of a filter) in order, and may be a
/// transaction (`MULTI` ... `EXEC`). [`Connection`] implementations send it with
/// [`Batch::packed`] / [`Batch::group_ranges`] (a single server: all groups at once) or turn
/// it into [`redis::Cmd`]s with [`Batch::to_cmds`].
#[derive(Debug, Default, Clone)]
pub struct Batch {
    packed: Vec<u8>,
    /// Per command, where its bytes end in `packed`.
    ends: Vec<usize>,
    /// Per group, how many commands it has.
    sizes: Vec<usize>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// The batch of these groups of commands.
    pub fn from_cmds(groups: Vec<Vec<Cmd>>) -> Batch {
        let mut batch = Batch::new();
        for group in groups {
            batch.group();
            for cmd in group {
                batch.cmd(&cmd);
            }
        }
        batch
    }

    /// Starts a new group: the commands written next belong to it.
    pub fn group(&mut self) {
        self.sizes.push(0);
    }

    /// Appends `cmd` to the current group.
    pub fn cmd(&mut self, cmd: &Cmd) {
        cmd.write_packed_command(&mut self.packed);
        self.end_command();
    }

    /// Starts a command of `args` arguments (its name included) in the current group; write
    /// them with [`Self::arg`] and [`Self::int`].
    pub(crate) fn start(&mut self, args: usize) {
        self.header(b'*', args);
    }

    /// One argument of the command being written. The command ends with its last argument.
    pub(crate) fn arg(&mut self, bytes: &[u8]) {
        self.header(b'$', bytes.len());
        self.packed.extend_from_slice(bytes);
        self.packed.extend_from_slice(b"\r\n");
    }

    /// One integer argument, in decimal.
    pub(crate) fn int(&mut self, value: u64) {
        let (digits, at) = decimal(value);
        self.arg(&digits[at..]);
    }

    /// Marks the end of the command being written.
    pub(crate) fn end_command(&mut self) {
        self.ends.push(self.packed.len());
        *self.sizes.last_mut().expect("a group is started first") += 1;
    }

    fn header(&mut self, kind: u8, n: usize) {
        let (digits, at) = decimal(n as u64);
        self.packed.push(kind);
        self.packed.extend_from_slice(&digits[at..]);
        self.packed.extend_from_slice(b"\r\n");
    }

    /// Every command's bytes, all groups in order.
    pub fn packed(&self) -> &[u8] {
        &self.packed
    }

    /// How many commands the batch holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the batch holds no command.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Per group, the range of its bytes in [`Self::packed`] and its number of commands.
    pub fn group_ranges(&self) -> impl Iterator<Item = (std::ops::Range<usize>, usize)> + '_ {
        let mut command = 0;
        let mut byte = 0;
        self.sizes.iter().map(move |&n| {
            let start = byte;
            command += n;
            byte = if command == 0 {
                0
            } else {
                self.ends[command - 1]
            };
            (start..byte, n)
        })
    }

    /// How many groups the batch holds.
    pub fn groups(&self) -> usize {
        self.sizes.len()
    }

    /// The groups `which` of this batch, in that order, with each `EVALSHA` of a script that
    /// `code` knows by its SHA-1 sent whole, as `EVAL`: what a node that answered `NOSCRIPT`
    /// runs instead, and caches (Redis keeps the scripts `EVAL` runs), whichever node of a
    /// cluster the group's keys route it to.
    pub(crate) fn inlined(&self, which: &[usize], code: impl Fn(&[u8]) -> Option<&str>) -> Batch {
        let mut firsts = Vec::with_capacity(self.sizes.len());
        let mut command = 0;
        for &n in &self.sizes {
            firsts.push(command);
            command += n;
        }
        let mut out = Batch::new();
        for &g in which {
            out.group();
            for c in firsts[g]..firsts[g] + self.sizes[g] {
                let bytes = self.command_bytes(c);
                let args = command_args(bytes);
                match args.as_slice() {
                    [name, sha, rest @ ..] if name.eq_ignore_ascii_case(b"EVALSHA") => {
                        match code(sha) {
                            Some(code) => {
                                out.start(args.len());
                                out.arg(b"EVAL");
                                out.arg(code.as_bytes());
                                for a in rest {
                                    out.arg(a);
                                }
                                out.end_command();
                            }
                            None => out.raw_command(bytes),
                        }
                    }
                    _ => out.raw_command(bytes),
                }
            }
        }
        out
    }

    /// A key of group `g` (its keys share a slot): the first key of its first command.
    pub(crate) fn group_key(&self, g: usize) -> Option<&[u8]> {
        let first: usize = self.sizes[..g].iter().sum();
        if self.sizes.get(g).is_none_or(|&n| n == 0) {
            return None;
        }
        // A transaction routes by the command after its MULTI, as the redis crate does.
        let multi = |c: usize| {
            self.command(c)
                .first()
                .is_some_and(|a| a.eq_ignore_ascii_case(b"MULTI"))
        };
        let first = if self.sizes[g] > 1 && multi(first) {
            first + 1
        } else {
            first
        };
        let args = self.command(first);
        let at = match args.first() {
            Some(name)
                if name.eq_ignore_ascii_case(b"EVALSHA") || name.eq_ignore_ascii_case(b"EVAL") =>
            {
                3
            }
            _ => 1,
        };
        args.get(at).copied()
    }

    /// The arguments of command `c`.
    fn command(&self, c: usize) -> Vec<&[u8]> {
        command_args(self.command_bytes(c))
    }

    /// The wire bytes of command `c`.
    fn command_bytes(&self, c: usize) -> &[u8] {
        let start = if c == 0 { 0 } else { self.ends[c - 1] };
        &self.packed[start..self.ends[c]]
    }

    /// Appends one command already in the wire format.
    fn raw_command(&mut self, bytes: &[u8]) {
        self.packed.extend_from_slice(bytes);
        self.end_command();
    }

    /// This batch with `ECHO marker` appended to each group that has commands: the marker's
    /// echo, last in each group's replies, shows that the replies before it answer this
    /// group's commands (see [`Self::unmark`]).
    pub(crate) fn marked(&self, marker: &[u8]) -> Batch {
        let mut out = Batch {
            packed: Vec::with_capacity(self.packed.len() + self.sizes.len() * (marker.len() + 24)),
            ends: Vec::with_capacity(self.ends.len() + self.sizes.len()),
            sizes: Vec::with_capacity(self.sizes.len()),
        };
        for (bytes, n) in self.group_ranges() {
            out.group();
            let base = out.packed.len() - bytes.start;
            out.packed.extend_from_slice(&self.packed[bytes.clone()]);
            for c in self.commands_in(bytes.clone()) {
                out.ends.push(c + base);
            }
            *out.sizes.last_mut().expect("a group was started") += n;
            if n > 0 {
                echo(&mut out, marker);
            }
        }
        out
    }

    /// The ends of the commands whose bytes lie in `bytes` (a group's range).
    fn commands_in(&self, bytes: std::ops::Range<usize>) -> impl Iterator<Item = usize> + '_ {
        let from = self.ends.partition_point(|&e| e <= bytes.start);
        self.ends[from..]
            .iter()
            .copied()
            .take_while(move |&e| e <= bytes.end)
    }

    /// Checks the replies of a [`Self::marked`] batch against this (unmarked) batch and takes
    /// the markers' echoes off: each answered group must end with the marker, and a
    /// transaction's `EXEC` must answer as many commands as it queued. `Err` says what did
    /// not match: the replies cannot be trusted, nor the connection they came on.
    pub(crate) fn unmark(&self, marker: &[u8], replies: &mut Replies) -> Result<(), String> {
        let mut first = 0;
        for (g, values) in replies.groups.iter_mut().enumerate() {
            let n = self.sizes[g];
            let start = first;
            first += n;
            if n == 0 {
                if !values.is_empty() {
                    return Err(format!("{} replies to an empty group", values.len()));
                }
                continue;
            }
            if values.len() != n + 1 {
                return Err(format!(
                    "{} replies to a group of {} commands and its marker",
                    values.len(),
                    n
                ));
            }
            match values.pop() {
                Some(Value::BulkString(echo)) if echo == marker => {}
                // A cluster connection reports a server's error reply to one command of a
                // group as the error of every command (see its `run`): no answer is taken
                // from such a group.
                Some(Value::ServerError(_))
                    if values.iter().all(|v| matches!(v, Value::ServerError(_))) => {}
                Some(other) => {
                    return Err(format!(
                        "the round's marker came back as {}: replies are out of step",
                        describe(&other)
                    ))
                }
                None => unreachable!("the length was checked"),
            }
            self.check_transaction(start, values)?;
        }
        Ok(())
    }

    /// A transaction (`MULTI` ... `EXEC`) that makes up the group whose first command is
    /// `first`: `EXEC` must answer every queued command, or none (an error, or nil when a
    /// `WATCH` aborted it).
    fn check_transaction(&self, first: usize, values: &[Value]) -> Result<(), String> {
        let n = values.len();
        let is = |c: usize, name: &[u8]| {
            self.command(c)
                .first()
                .is_some_and(|a| a.eq_ignore_ascii_case(name))
        };
        if n < 2 || !is(first, b"MULTI") || !is(first + n - 1, b"EXEC") {
            return Ok(());
        }
        match &values[n - 1] {
            Value::Array(items) if items.len() != n - 2 => Err(format!(
                "EXEC answered {} results for {} queued commands",
                items.len(),
                n - 2
            )),
            Value::Array(_) | Value::Nil | Value::ServerError(_) => Ok(()),
            other => Err(format!("EXEC answered {}", describe(other))),
        }
    }

    /// The groups as [`redis::Cmd`]s, for connections that take only those.
    pub fn to_cmds(&self) -> Vec<Vec<Cmd>> {
        let mut commands = Vec::with_capacity(self.ends.len());
        let mut start = 0;
        for &end in &self.ends {
            commands.push(parse_command(&self.packed[start..end]));
            start = end;
        }
        let mut commands = commands.into_iter();
        self.sizes
            .iter()
            .map(|&n| commands.by_ref().take(n).collect())
            .collect()
    }

    /// Cuts `flat`, the values of all commands in order, into groups.
    pub fn regroup(&self, flat: Vec<Value>) -> RedisResult<Vec<Vec<Value>>> {
        if flat.len() != self.len() {
            return Err(redis::RedisError::from((
                redis::ErrorKind::UnexpectedReturnType,
                "a pipeline's reply has another number of values than it had commands",
            )));
        }
        let mut flat = flat.into_iter();
        Ok(self
            .sizes
            .iter()
            .map(|&n| flat.by_ref().take(n).collect())
            .collect())
    }
}

/// Appends `ECHO marker` to the current group of `batch`.
fn echo(batch: &mut Batch, marker: &[u8]) {
    batch.start(2);
    batch.arg(b"ECHO");
    batch.arg(marker);
    batch.end_command();
}

/// A short description of a reply for an error message (never the whole of a large one).
fn describe(v: &Value) -> String {
    match v {
        Value::BulkString(b) if b.len() <= 64 => format!("{:?}", String::from_utf8_lossy(b)),
        Value::BulkString(b) => format!("a string of {} bytes", b.len()),
        Value::Array(items) => format!("an array of {}", items.len()),
        other => {
            let mut text = format!("{other:?}");
            text.truncate(80);
            text
        }
    }
}

/// A marker no earlier reply on any connection of this process carries: this process's
/// random tag and a count.
pub(crate) fn marker() -> Vec<u8> {
    use std::hash::BuildHasher;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static TAG: OnceLock<u64> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let tag = *TAG.get_or_init(|| {
        std::collections::hash_map::RandomState::new().hash_one(std::process::id())
    });
    format!(
        "bloomkit:{tag:016x}:{}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
    .into_bytes()
}

/// `value` in decimal: the digits are `.0[.1..]`.
fn decimal(value: u64) -> ([u8; 20], usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut v = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return (digits, at);
        }
    }
}

/// The arguments of one RESP array of bulk strings, as [`Batch`] writes them.
fn command_args(mut bytes: &[u8]) -> Vec<&[u8]> {
    fn number(bytes: &mut &[u8]) -> usize {
        let end = bytes
            .iter()
            .position(|&b| b == b'\r')
            .unwrap_or(bytes.len());
        let n = std::str::from_utf8(&bytes[1.min(end)..end])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        *bytes = &bytes[(end + 2).min(bytes.len())..];
        n
    }
    let count = number(&mut bytes);
    let mut args = Vec::with_capacity(count);
    for _ in 0..count {
        let len = number(&mut bytes).min(bytes.len());
        args.push(&bytes[..len]);
        bytes = &bytes[(len + 2).min(bytes.len())..];
    }
    args
}

/// The command one RESP array of bulk strings (as [`Batch`] writes them) encodes.
fn parse_command(bytes: &[u8]) -> Cmd {
    let mut cmd = Cmd::new();
    for arg in command_args(bytes) {
        cmd.arg(arg);
    }
    cmd
}

/// The limits of one round trip: its deadline, and the replies of earlier round trips that the
/// connection has not read yet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Round {
    /// When the round trip must end, answered or not.
    pub deadline: Option<Instant>,
    /// Replies that earlier round trips on this connection left unread when their deadline
    /// passed: a [`Connection`] that reads replies in order reads (and drops) these first,
    /// and adds the ones it leaves unread itself.
    pub unread: usize,
    /// Whether the connection lost its framing: a write the deadline cut part way left half
    /// a command with the server, so nothing sent on it later can be trusted. A
    /// [`Connection`] sets it and fails every later round trip.
    pub broken: bool,
}

impl Round {
    /// The time left before the deadline: `None` without one, `Some(ZERO)` once passed.
    pub fn left(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }
}

/// What a round trip got back: per group, one value per command, for the groups answered
/// before the deadline, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replies {
    /// The answered groups' values, server errors included as [`Value::ServerError`].
    pub groups: Vec<Vec<Value>>,
    /// Whether the deadline passed before every group was answered (the ones missing from
    /// [`Self::groups`] may or may not have run on the server).
    pub timed_out: bool,
}

impl Replies {
    fn answered(groups: Vec<Vec<Value>>) -> Replies {
        Replies {
            groups,
            timed_out: false,
        }
    }

    fn cut(groups: Vec<Vec<Value>>) -> Replies {
        Replies {
            groups,
            timed_out: true,
        }
    }
}

/// A connection the filter can send pipelines of commands through: implemented for the
/// crate's own [`crate::RespConnection`] and [`crate::RespCluster`] (every reply bounded by
/// the deadline and in size; with `tokio`, `AsyncRespConnection` and
/// `RespCluster<AsyncRespConnection>`), for [`redis::Connection`] and
/// [`redis::cluster::ClusterConnection`], and with the `tokio` feature for
/// `redis::aio::MultiplexedConnection` and `redis::cluster_async::ClusterConnection`.
///
/// A single server gets all groups of a [`Batch`] in one pipeline, one round trip; a cluster
/// gets each group as one pipeline to the node that serves its slot. The reply holds, per
/// group, one value per command, server errors included as [`Value::ServerError`] so the
/// caller can tell which command failed.
///
/// # Deadlines
///
/// [`redis::Connection`] writes in 64 KiB pieces and reads reply by reply, its socket timeouts
/// kept within 1/32 over the time left, and stops at the deadline: a stalled server costs the
/// time left, not a timeout per reply. A write the deadline cuts retires the connection
/// ([`Round::broken`]).
/// Replies it did not read are counted in [`Round::unread`] and read first by the next round
/// trip, so no late reply is ever taken for another command's. The tokio connections stop at
/// the deadline exactly (their runtime needs timers: `enable_time`). A
/// [`redis::cluster::ClusterConnection`] gets the time left as its read and write timeouts
/// before each group and stops between groups; inside one group the redis crate's own
/// retries run, so build its client with [`crate::cluster_client`], whose retries fit the
/// deadline.
pub trait Connection {
    /// Sends `batch` and returns, per group, one value per command, for the groups answered
    /// before `round.deadline`.
    fn run(
        &mut self,
        batch: &Batch,
        round: &mut Round,
    ) -> impl Future<Output = RedisResult<Replies>>;
}

impl<C: Connection> Connection for &mut C {
    fn run(
        &mut self,
        batch: &Batch,
        round: &mut Round,
    ) -> impl Future<Output = RedisResult<Replies>> {
        (**self).run(batch, round)
    }
}

/// One pipeline of `cmds` that keeps server errors as values.
#[cfg(feature = "tokio")]
fn pipeline(cmds: impl IntoIterator<Item = Cmd>) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    for cmd in cmds {
        pipe.add_command(cmd);
    }
    pipe.ignore_errors();
    pipe
}

/// Sets both socket timeouts of a connection to the time `round` leaves (none without a
/// deadline); `false` when no time is left.
fn arm(round: &Round, set: impl Fn(Option<Duration>) -> RedisResult<()>) -> RedisResult<bool> {
    match round.left() {
        // Without a deadline, no timeout: the one an earlier call set must not linger.
        None => set(None).map(|()| true),
        Some(Duration::ZERO) => Ok(false),
        Some(left) => set(Some(left)).map(|()| true),
    }
}

impl Connection for redis::Connection {
    /// Writes the batch, then reads reply by reply, within the time left (see the trait's
    /// docs).
    async fn run(&mut self, batch: &Batch, round: &mut Round) -> RedisResult<Replies> {
        run_wire(&mut PlainWire::new(self), batch, round).await
    }
}

/// How much of a write went out before the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// All of it.
    All,
    /// None: the deadline had passed.
    None,
    /// Part: the framing of the connection is lost.
    Part,
}

/// One socket to one server, as [`run_wire`] drives it: synchronous ones answer on the
/// first poll.
pub(crate) trait Wire {
    /// Writes `bytes` by the round's deadline.
    fn send(&mut self, bytes: &[u8], round: &Round) -> impl Future<Output = RedisResult<Sent>>;
    /// The next reply by the round's deadline; `None` once it passed, and the reply then
    /// under way is passed over by the wire itself when it comes.
    fn recv(&mut self, round: &Round) -> impl Future<Output = RedisResult<Option<Value>>>;
}

/// A [`redis::Connection`] as a [`Wire`]: its socket timeouts kept within 1/32 over the time
/// left (the redis crate reads a reply for as long as its bytes keep coming).
struct PlainWire<'a> {
    con: &'a mut redis::Connection,
    reads: ReadTimeout,
}

impl<'a> PlainWire<'a> {
    fn new(con: &'a mut redis::Connection) -> Self {
        PlainWire {
            con,
            reads: ReadTimeout::default(),
        }
    }
}

impl Wire for PlainWire<'_> {
    fn send(&mut self, bytes: &[u8], round: &Round) -> impl Future<Output = RedisResult<Sent>> {
        std::future::ready(self.send_now(bytes, round))
    }

    fn recv(&mut self, round: &Round) -> impl Future<Output = RedisResult<Option<Value>>> {
        std::future::ready(self.recv_now(round))
    }
}

impl PlainWire<'_> {
    fn send_now(&mut self, bytes: &[u8], round: &Round) -> RedisResult<Sent> {
        // Written in pieces, each with the time then left: a socket's send timeout applies
        // per system call, so one write of a large batch to a stalled server could wait it
        // out several times.
        let pieces = if round.deadline.is_some() {
            WRITE_PIECE
        } else {
            bytes.len()
        };
        let con = &mut *self.con;
        for (i, piece) in bytes.chunks(pieces.max(1)).enumerate() {
            let armed = arm(round, |left| {
                con.set_read_timeout(left)?;
                con.set_write_timeout(left)
            })?;
            let cut = if i == 0 { Sent::None } else { Sent::Part };
            if !armed {
                return Ok(cut);
            }
            match con.send_packed_command(piece) {
                Ok(()) => {}
                Err(e) if e.is_timeout() => return Ok(Sent::Part),
                Err(e) => return Err(e),
            }
        }
        // The socket's read timeout was just set with the write's.
        self.reads.set = None;
        Ok(Sent::All)
    }

    fn recv_now(&mut self, round: &Round) -> RedisResult<Option<Value>> {
        if !self.reads.arm(round, self.con)? {
            return Ok(None);
        }
        match recv(self.con) {
            Ok(v) => Ok(Some(v)),
            // The redis crate passes over a reply whose read timed out when it comes.
            Err(e) if e.is_timeout() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The error of a round trip on a connection an earlier one left out of step.
fn retired() -> redis::RedisError {
    redis::RedisError::from(std::io::Error::other(
        "this connection was retired: an earlier call was cut in the middle of a command by \
         its deadline, or got replies that did not match its commands; give the filter a new \
         connection (replace_connection)",
    ))
}

/// Writes `bytes` by the round's deadline: `None` when all went out, else how the round trip
/// ends: cut with nothing of them sent (`due` replies of what went before still come), cut
/// part way (the connection is retired), or an error (the same).
async fn write<W: Wire>(
    con: &mut W,
    bytes: &[u8],
    round: &mut Round,
    due: usize,
) -> Option<RedisResult<Replies>> {
    match con.send(bytes, round).await {
        Ok(Sent::All) => None,
        Ok(Sent::None) => {
            round.unread += due;
            Some(Ok(Replies::cut(Vec::new())))
        }
        Ok(Sent::Part) => {
            round.broken = true;
            Some(Ok(Replies::cut(Vec::new())))
        }
        Err(e) => {
            round.broken = true;
            Some(Err(e))
        }
    }
}

/// One round trip on one socket. Replies an earlier round trip left unread come first: when
/// there may be some, an `ECHO` of a fresh marker goes ahead of the batch, and replies are
/// passed over until its echo (no more than [`Round::unread`] of them; a connection swapped
/// in since has none).
pub(crate) async fn run_wire<W: Wire>(
    con: &mut W,
    batch: &Batch,
    round: &mut Round,
) -> RedisResult<Replies> {
    if round.broken {
        return Err(retired());
    }
    let resync = (round.unread > 0).then(marker);
    if let Some(m) = &resync {
        let mut head = Batch::new();
        head.group();
        echo(&mut head, m);
        if let Some(end) = write(con, head.packed(), round, 0).await {
            return end;
        }
    } else if batch.is_empty() {
        return Ok(Replies::answered(Vec::new()));
    }
    let marked = usize::from(resync.is_some());
    if !batch.is_empty()
        && let Some(end) = write(con, batch.packed(), round, marked).await
    {
        return end;
    }
    // From here on, `round.unread` bounds the replies still due before this round's.
    let mut left_unread = batch.len();
    if let Some(m) = &resync {
        loop {
            match con.recv(round).await {
                Ok(Some(Value::BulkString(b))) if b == *m => break,
                Ok(Some(_)) if round.unread > 0 => round.unread -= 1,
                Ok(Some(other)) => {
                    round.broken = true;
                    return Err(redis::RedisError::from((
                        redis::ErrorKind::UnexpectedReturnType,
                        "replies out of step with commands",
                        format!(
                            "{} came where the echo of this call's marker was due",
                            describe(&other)
                        ),
                    )));
                }
                Ok(None) => {
                    round.unread += 1 + left_unread;
                    return Ok(Replies::cut(Vec::new()));
                }
                Err(e) => {
                    round.broken = true;
                    return Err(e);
                }
            }
        }
        round.unread = 0;
    }
    let mut groups = Vec::with_capacity(batch.sizes.len());
    for &n in &batch.sizes {
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            match con.recv(round).await {
                Ok(Some(v)) => values.push(v),
                Ok(None) => {
                    round.unread += left_unread;
                    return Ok(Replies::cut(groups));
                }
                Err(e) => {
                    round.broken = true;
                    return Err(e);
                }
            }
            left_unread -= 1;
        }
        groups.push(values);
    }
    Ok(Replies::answered(groups))
}

/// The read timeout of a round trip's replies, set again only when the time left has shrunk
/// by more than [`ReadTimeout::SLACK`] of itself since it was set: one system call per reply
/// would cost as much as reading the reply, and a timeout a little longer than the time
/// left stretches a stall by at most that slack.
#[derive(Default)]
struct ReadTimeout {
    /// What the socket's timeout was last set to by this round trip (`Some(None)`: none).
    set: Option<Option<Duration>>,
}

impl ReadTimeout {
    /// A set timeout is kept while it is at most this part (1/32) over the time left.
    const SLACK: u32 = 32;

    /// Makes the read timeout fit the time `round` leaves; `false` when none is left.
    fn arm(&mut self, round: &Round, con: &redis::Connection) -> RedisResult<bool> {
        let left = round.left();
        if left == Some(Duration::ZERO) {
            return Ok(false);
        }
        let fits = match (self.set, left) {
            (Some(None), None) => true,
            (Some(Some(set)), Some(left)) => set.saturating_sub(left) <= left / Self::SLACK,
            _ => false,
        };
        if !fits {
            con.set_read_timeout(left)?;
            self.set = Some(left);
        }
        Ok(true)
    }
}

/// Bytes per write when a call has a deadline.
const WRITE_PIECE: usize = 64 << 10;

/// The next reply on `con`: push messages (RESP3: client tracking, pub/sub) are not replies
/// to a command and are passed over.
fn recv(con: &mut redis::Connection) -> RedisResult<Value> {
    loop {
        match con.recv_response()? {
            Value::Push { .. } => continue,
            v => return Ok(v),
        }
    }
}

impl Connection for redis::cluster::ClusterConnection {
    /// One group after the other, each a pipeline the cluster connection sends to the node
    /// of its first key (past a leading `MULTI`), with redirections followed.
    fn run(
        &mut self,
        batch: &Batch,
        round: &mut Round,
    ) -> impl Future<Output = RedisResult<Replies>> {
        use redis::ConnectionLike;
        let mut run = || {
            let mut groups = Vec::with_capacity(batch.sizes.len());
            for (bytes, n) in batch.group_ranges() {
                if n == 0 {
                    groups.push(Vec::new());
                    continue;
                }
                let armed = arm(round, |left| {
                    self.set_read_timeout(left)?;
                    self.set_write_timeout(left)
                })?;
                if !armed {
                    return Ok(Replies::cut(groups));
                }
                let mut sent = self.req_packed_commands(&batch.packed()[bytes.clone()], 0, n);
                if sent.as_ref().is_err_and(refused_connection) {
                    // Nothing was sent: heal the slot map, then send the group once more.
                    if let Some(key) = batch.group_key(groups.len()) {
                        heal_slot_map(self, key);
                    }
                    sent = self.req_packed_commands(&batch.packed()[bytes], 0, n);
                }
                match sent {
                    Ok(values) => groups.push(values),
                    Err(e) if e.is_timeout() => return Ok(Replies::cut(groups)),
                    // The cluster connection turns a server's error reply in a pipeline into
                    // an error of the whole group: which command it was is lost, so it stands
                    // for every command of the group (a group is safe to send again whole).
                    Err(e) => match redis::ServerError::try_from(e) {
                        Ok(refused) => groups.push(vec![Value::ServerError(refused); n]),
                        Err(e) => return Err(e),
                    },
                }
            }
            Ok(Replies::answered(groups))
        };
        std::future::ready(run())
    }
}

/// Whether `e` says a connection could not be made: nothing was sent.
fn refused_connection(e: &redis::RedisError) -> bool {
    e.is_connection_refusal()
}

/// Makes a cluster connection learn the slots anew. The redis crate's synchronous cluster
/// connection refreshes its slot map only on a `MOVED` reply, so after a primary dies it
/// keeps dialling the dead node for that node's slots. A keyed command sent to a random
/// primary of the old map draws a `MOVED` from any live one that does not own `key`'s slot
/// (after a failover, none of the old primaries does, but the dead one, which fails at once),
/// and the connection refreshes its map on it.
fn heal_slot_map(con: &mut redis::cluster::ClusterConnection, key: &[u8]) {
    use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
    let mut exists = redis::cmd("EXISTS");
    exists.arg(key);
    for _ in 0..8 {
        let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::RandomPrimary);
        if con.route_command(&exists, route).is_ok() {
            return;
        }
    }
}

#[cfg(feature = "tokio")]
mod tokio_impls {
    use super::*;

    /// `future`, cut at `round`'s deadline.
    async fn within(
        round: &Round,
        future: impl Future<Output = RedisResult<Vec<Vec<Value>>>>,
    ) -> RedisResult<Replies> {
        match round.deadline {
            None => future.await.map(Replies::answered),
            Some(deadline) => match tokio::time::timeout_at(deadline.into(), future).await {
                // The redis crate's own response timeout (500 ms unless the connection was
                // built with another) ended the call first: a call cut short, as typed as
                // one cut at its deadline (build the connection with
                // `set_response_timeout(None)`, or use `AsyncRespConnection`, for the
                // caller's deadline to rule).
                Ok(Err(e)) if e.is_timeout() => Ok(Replies::cut(Vec::new())),
                Ok(out) => out.map(Replies::answered),
                Err(_) => Ok(Replies::cut(Vec::new())),
            },
        }
    }

    impl Connection for redis::aio::MultiplexedConnection {
        async fn run(&mut self, batch: &Batch, round: &mut Round) -> RedisResult<Replies> {
            if batch.is_empty() {
                return Ok(Replies::answered(Vec::new()));
            }
            let send = async {
                let flat = pipeline(batch.to_cmds().into_iter().flatten())
                    .query_async(self)
                    .await?;
                batch.regroup(flat)
            };
            within(round, send).await
        }
    }

    impl Connection for redis::cluster_async::ClusterConnection {
        /// The groups at once, each a pipeline to the node of its slot.
        async fn run(&mut self, batch: &Batch, round: &mut Round) -> RedisResult<Replies> {
            let sends = batch.to_cmds().into_iter().map(|group| {
                let mut con = self.clone();
                async move {
                    if group.is_empty() {
                        return Ok(Vec::new());
                    }
                    pipeline(group).query_async(&mut con).await
                }
            });
            within(round, futures_util::future::try_join_all(sends)).await
        }
    }
}

/// Drives `future` to its end on this thread. For the futures of the synchronous
/// connections, which are ready on their first poll (their I/O is done by then); anything
/// else is polled again until it is ready.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_groups_key_is_found_past_a_leading_multi() {
        let mut multi = Batch::new();
        multi.group();
        multi.cmd(&redis::cmd("MULTI"));
        multi.cmd(&{
            let mut c = redis::cmd("EVAL");
            c.arg("return 1").arg(2).arg("k:cfg").arg("k:bits");
            c
        });
        multi.cmd(&redis::cmd("EXEC"));
        multi.group();
        multi.cmd(&{
            let mut c = redis::cmd("GETRANGE");
            c.arg("k:bits").arg(0).arg(63);
            c
        });
        multi.group();
        assert_eq!(multi.group_key(0), Some(&b"k:cfg"[..]));
        assert_eq!(multi.group_key(1), Some(&b"k:bits"[..]));
        assert_eq!(multi.group_key(2), None);
    }

    #[test]
    fn a_batch_writes_what_the_redis_crate_writes_and_reads_back_its_commands() {
        let mut a = redis::cmd("GETRANGE");
        a.arg("bloomkit:{x#0}:bits:ab").arg(0u64).arg(u64::MAX);
        let mut b = redis::cmd("EVAL");
        b.arg("return 1\r\n").arg(0).arg(b"\x00\xff".as_slice());
        let groups = vec![vec![a.clone()], vec![], vec![b.clone(), a.clone()]];

        let mut written = Batch::new();
        written.group();
        written.start(4);
        written.arg(b"GETRANGE");
        written.arg(b"bloomkit:{x#0}:bits:ab");
        written.int(0);
        written.int(u64::MAX);
        written.end_command();
        let from = Batch::from_cmds(groups.clone());
        assert_eq!(&from.packed()[..written.packed().len()], written.packed());
        let expected: Vec<u8> = [&a, &b, &a]
            .iter()
            .flat_map(|c| c.get_packed_command())
            .collect();
        assert_eq!(from.packed(), expected.as_slice());
        assert_eq!(from.len(), 3);
        let ranges: Vec<_> = from.group_ranges().collect();
        let first = a.get_packed_command().len();
        assert_eq!(ranges[0], (0..first, 1));
        assert_eq!(ranges[1], (first..first, 0));
        assert_eq!(ranges[2], (first..expected.len(), 2));

        let back = from.to_cmds();
        let packed = |g: &Vec<Vec<Cmd>>| -> Vec<Vec<Vec<u8>>> {
            g.iter()
                .map(|c| c.iter().map(Cmd::get_packed_command).collect())
                .collect()
        };
        assert_eq!(packed(&back), packed(&groups));
        let values = vec![Value::Int(1), Value::Nil, Value::Okay];
        assert_eq!(
            from.regroup(values).unwrap(),
            vec![vec![Value::Int(1)], vec![], vec![Value::Nil, Value::Okay]]
        );
        assert!(from.regroup(vec![Value::Nil]).is_err());
    }
}
