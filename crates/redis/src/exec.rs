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
/// Commands come in groups, each the commands of one hash slot (one shard of a filter) in
/// order; a group may be a transaction (`MULTI` ... `EXEC`). A single server gets all groups
/// in one pipeline, one round trip; a cluster gets each group as one pipeline to the node
/// that serves its slot. The reply holds, per group, one value per command, server errors
/// included as [`Value::ServerError`] so the caller can tell which command failed.
pub trait Connection {
    /// Sends `groups` and returns, per group, one value per command.
    fn run(&mut self, groups: Vec<Vec<Cmd>>) -> impl Future<Output = RedisResult<Vec<Vec<Value>>>>;

    /// Loads a script (`SCRIPT LOAD`; in a cluster, on every primary).
    fn load(&mut self, code: &str) -> impl Future<Output = RedisResult<()>>;
}

/// One pipeline of `cmds` that keeps server errors as values.
fn pipeline(cmds: impl IntoIterator<Item = Cmd>) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    for cmd in cmds {
        pipe.add_command(cmd);
    }
    pipe.ignore_errors();
    pipe
}

/// Cuts `flat`, the values of all groups in order, back into groups of `sizes`.
fn regroup(sizes: &[usize], flat: Vec<Value>) -> RedisResult<Vec<Vec<Value>>> {
    let expected: usize = sizes.iter().sum();
    if flat.len() != expected {
        return Err(redis::RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "a pipeline's reply has another number of values than it had commands",
        )));
    }
    let mut flat = flat.into_iter();
    Ok(sizes
        .iter()
        .map(|&n| flat.by_ref().take(n).collect())
        .collect())
}

impl Connection for redis::Connection {
    fn run(&mut self, groups: Vec<Vec<Cmd>>) -> impl Future<Output = RedisResult<Vec<Vec<Value>>>> {
        let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
        let out = pipeline(groups.into_iter().flatten())
            .query(self)
            .and_then(|flat| regroup(&sizes, flat));
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
    /// One group after the other, each a pipeline the cluster connection sends to the node
    /// of its first key (past a leading `MULTI`), with redirections followed.
    fn run(&mut self, groups: Vec<Vec<Cmd>>) -> impl Future<Output = RedisResult<Vec<Vec<Value>>>> {
        use redis::ConnectionLike;
        // `Pipeline::query` refuses a cluster connection; its packed commands go through.
        let out = groups
            .into_iter()
            .map(|group| {
                let n = group.len();
                self.req_packed_commands(&pipeline(group).get_packed_pipeline(), 0, n)
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
        async fn run(&mut self, groups: Vec<Vec<Cmd>>) -> RedisResult<Vec<Vec<Value>>> {
            let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
            let flat = pipeline(groups.into_iter().flatten())
                .query_async(self)
                .await?;
            regroup(&sizes, flat)
        }

        async fn load(&mut self, code: &str) -> RedisResult<()> {
            script_load(code).query_async::<Value>(self).await.map(drop)
        }
    }

    impl Connection for redis::cluster_async::ClusterConnection {
        /// The groups at once, each a pipeline to the node of its slot.
        async fn run(&mut self, groups: Vec<Vec<Cmd>>) -> RedisResult<Vec<Vec<Value>>> {
            let sends = groups.into_iter().map(|group| {
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
