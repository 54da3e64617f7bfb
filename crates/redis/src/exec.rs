//! How commands reach Redis: one trait, [`Connection`], with a pipelined `run` for a single
//! server and for a cluster, synchronous or on tokio. Every operation of the filter is
//! written once, as an `async fn` over this trait; the synchronous connections answer at
//! once, and [`block_on`] drives such a future to its end without a runtime.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use redis::{Cmd, RedisResult, Value};

/// A connection the filter can send pipelines of commands through: implemented for
/// [`redis::Connection`] and [`redis::cluster::ClusterConnection`], and with the `tokio`
/// feature for `redis::aio::MultiplexedConnection` and `redis::cluster_async::ClusterConnection`.
///
/// A pipeline's commands go to the server (or, in a cluster, to the node of each command's
/// first key) in one round trip per node; the reply holds one value per command, server
/// errors included as [`Value::ServerError`] so the caller can tell which command failed
/// (a connection that cannot do that returns the error instead, and the filter resends the
/// whole pipeline after loading its scripts: every operation is idempotent).
pub trait Connection {
    /// Sends `cmds` as one pipeline and returns one value per command.
    fn run(&mut self, cmds: &[Cmd]) -> impl Future<Output = RedisResult<Vec<Value>>>;

    /// Loads a script (`SCRIPT LOAD`; in a cluster, on every primary).
    fn load(&mut self, code: &str) -> impl Future<Output = RedisResult<()>>;
}

impl Connection for redis::Connection {
    fn run(&mut self, cmds: &[Cmd]) -> impl Future<Output = RedisResult<Vec<Value>>> {
        let mut pipe = redis::pipe();
        for cmd in cmds {
            pipe.add_command(cmd.clone());
        }
        let out = pipe.ignore_errors().query(self);
        std::future::ready(out)
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
    fn run(&mut self, cmds: &[Cmd]) -> impl Future<Output = RedisResult<Vec<Value>>> {
        // A cluster pipeline cannot ignore errors: a server error fails the whole call, and
        // the caller sees it as the error of the command it names.
        let mut pipe = redis::cluster::cluster_pipe();
        for cmd in cmds {
            pipe.add_command(cmd.clone());
        }
        let out = pipe.query(self);
        std::future::ready(out)
    }

    fn load(&mut self, code: &str) -> impl Future<Output = RedisResult<()>> {
        std::future::ready(script_load(code).query::<Value>(self).map(drop))
    }
}

#[cfg(feature = "tokio")]
mod tokio_impls {
    use super::*;

    /// One pipeline on an async connection: a plain pipeline, which the cluster connection
    /// splits by node itself.
    async fn run_async<C: redis::aio::ConnectionLike>(
        con: &mut C,
        cmds: &[Cmd],
    ) -> RedisResult<Vec<Value>> {
        let mut pipe = redis::pipe();
        for cmd in cmds {
            pipe.add_command(cmd.clone());
        }
        pipe.ignore_errors().query_async(con).await
    }

    impl Connection for redis::aio::MultiplexedConnection {
        async fn run(&mut self, cmds: &[Cmd]) -> RedisResult<Vec<Value>> {
            run_async(self, cmds).await
        }

        async fn load(&mut self, code: &str) -> RedisResult<()> {
            script_load(code).query_async::<Value>(self).await.map(drop)
        }
    }

    impl Connection for redis::cluster_async::ClusterConnection {
        /// The async cluster connection takes a pipeline only within one slot: the commands
        /// are grouped by their first key (a shard's keys share a slot), and the groups sent
        /// at once.
        async fn run(&mut self, cmds: &[Cmd]) -> RedisResult<Vec<Value>> {
            let mut groups: Vec<(&[u8], Vec<usize>)> = Vec::new();
            for (i, cmd) in cmds.iter().enumerate() {
                let key = match cmd.args_iter().nth(3) {
                    Some(redis::Arg::Simple(key)) => key,
                    _ => &[],
                };
                match groups.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, members)) => members.push(i),
                    None => groups.push((key, vec![i])),
                }
            }
            let sends = groups.iter().map(|(_, members)| {
                let mut con = self.clone();
                let group: Vec<Cmd> = members.iter().map(|&i| cmds[i].clone()).collect();
                async move { run_async(&mut con, &group).await }
            });
            let answers = futures_util::future::try_join_all(sends).await?;
            let mut out = vec![Value::Nil; cmds.len()];
            for ((_, members), values) in groups.iter().zip(answers) {
                for (&i, v) in members.iter().zip(values) {
                    out[i] = v;
                }
            }
            Ok(out)
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
