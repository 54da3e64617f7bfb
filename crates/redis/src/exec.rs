//! How commands reach Redis: one trait, [`Connection`], with a pipelined `run` for a single
//! server and for a cluster, synchronous or on tokio. Every operation of the filter is
//! written once, as an `async fn` over this trait; the synchronous connections answer at
//! once, and [`block_on`] drives such a future to its end without a runtime.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use redis::{Cmd, RedisResult, Value};

/// Commands for one round trip, in groups, already in the wire format (RESP): the filter
/// writes each command once, straight into the bytes a socket takes, so a batch of keys
/// costs no per-command allocation on the client.
///
/// A group is the commands of one hash slot (one shard of a filter) in order, and may be a
/// transaction (`MULTI` ... `EXEC`). [`Connection`] implementations send it with
/// [`Batch::packed`] / [`Batch::group_ranges`] (a single server: all groups at once) or turn
/// it into [`redis::Cmd`]s with [`Batch::into_cmds`].
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

    /// The groups as [`redis::Cmd`]s, for connections that take only those.
    pub fn into_cmds(self) -> Vec<Vec<Cmd>> {
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

/// The command one RESP array of bulk strings (as [`Batch`] writes them) encodes.
fn parse_command(mut bytes: &[u8]) -> Cmd {
    fn number(bytes: &mut &[u8]) -> usize {
        let end = bytes
            .iter()
            .position(|&b| b == b'\r')
            .unwrap_or(bytes.len());
        let n = std::str::from_utf8(&bytes[1..end])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        *bytes = &bytes[(end + 2).min(bytes.len())..];
        n
    }
    let args = number(&mut bytes);
    let mut cmd = Cmd::new();
    for _ in 0..args {
        let len = number(&mut bytes);
        cmd.arg(&bytes[..len]);
        bytes = &bytes[len + 2..];
    }
    cmd
}

/// A connection the filter can send pipelines of commands through: implemented for
/// [`redis::Connection`] and [`redis::cluster::ClusterConnection`], and with the `tokio`
/// feature for `redis::aio::MultiplexedConnection` and `redis::cluster_async::ClusterConnection`.
///
/// A single server gets all groups of a [`Batch`] in one pipeline, one round trip; a cluster
/// gets each group as one pipeline to the node that serves its slot. The reply holds, per
/// group, one value per command, server errors included as [`Value::ServerError`] so the
/// caller can tell which command failed.
pub trait Connection {
    /// Sends `batch` and returns, per group, one value per command.
    fn run(&mut self, batch: Batch) -> impl Future<Output = RedisResult<Vec<Vec<Value>>>>;

    /// Loads a script (`SCRIPT LOAD`; in a cluster, on every primary).
    fn load(&mut self, code: &str) -> impl Future<Output = RedisResult<()>>;
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

impl Connection for redis::Connection {
    fn run(&mut self, batch: Batch) -> impl Future<Output = RedisResult<Vec<Vec<Value>>>> {
        use redis::ConnectionLike;
        let out = if batch.is_empty() {
            Ok(Vec::new())
        } else {
            self.req_packed_commands(batch.packed(), 0, batch.len())
        };
        std::future::ready(out.and_then(|flat| batch.regroup(flat)))
    }

    fn load(&mut self, code: &str) -> impl Future<Output = RedisResult<()>> {
        std::future::ready(script_load(code).query::<Value>(self).map(drop))
    }
}

/// `SCRIPT LOAD code`.
fn script_load(code: &str) -> Cmd {
    let mut cmd = redis::cmd("SCRIPT");
    cmd.arg("LOAD").arg(code);
    cmd
}

impl Connection for redis::cluster::ClusterConnection {
    /// One group after the other, each a pipeline the cluster connection sends to the node
    /// of its first key (past a leading `MULTI`), with redirections followed.
    fn run(&mut self, batch: Batch) -> impl Future<Output = RedisResult<Vec<Vec<Value>>>> {
        use redis::ConnectionLike;
        let out = batch
            .group_ranges()
            .map(|(bytes, n)| match n {
                0 => Ok(Vec::new()),
                n => self.req_packed_commands(&batch.packed()[bytes], 0, n),
            })
            .collect();
        std::future::ready(out)
    }

    fn load(&mut self, code: &str) -> impl Future<Output = RedisResult<()>> {
        std::future::ready(script_load(code).query::<Value>(self).map(drop))
    }
}

#[cfg(feature = "tokio")]
mod tokio_impls {
    use super::*;

    impl Connection for redis::aio::MultiplexedConnection {
        async fn run(&mut self, batch: Batch) -> RedisResult<Vec<Vec<Value>>> {
            if batch.is_empty() {
                return Ok(Vec::new());
            }
            let flat = pipeline(batch.clone().into_cmds().into_iter().flatten())
                .query_async(self)
                .await?;
            batch.regroup(flat)
        }

        async fn load(&mut self, code: &str) -> RedisResult<()> {
            script_load(code).query_async::<Value>(self).await.map(drop)
        }
    }

    impl Connection for redis::cluster_async::ClusterConnection {
        /// The groups at once, each a pipeline to the node of its slot.
        async fn run(&mut self, batch: Batch) -> RedisResult<Vec<Vec<Value>>> {
            let sends = batch.into_cmds().into_iter().map(|group| {
                let mut con = self.clone();
                async move { pipeline(group).query_async(&mut con).await }
            });
            futures_util::future::try_join_all(sends).await
        }

        async fn load(&mut self, code: &str) -> RedisResult<()> {
            script_load(code).query_async::<Value>(self).await.map(drop)
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

        let back = from.clone().into_cmds();
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
