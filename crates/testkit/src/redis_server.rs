//! Real Redis servers for tests: `redis-server` started on 127.0.0.1 at a free port, without
//! persistence, stopped by PID when dropped; and a Redis Cluster of such servers.
//!
//! Without `redis-server` on the machine, [`RedisServer::start`] prints a loud skip and
//! returns `None`, unless `CI` is `true`: there a missing server is a failure (CI installs
//! it, `.ci/run`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` process of this test.
#[derive(Debug)]
pub struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
    args: Vec<String>,
}

/// Whether `redis-server` can be run here; panics under `CI=true` when it cannot.
pub fn available() -> bool {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "redis-server is not installed, and CI=true: the Redis tests must run in CI"
        );
        eprintln!(
            "\n!!!!!!!! SKIPPED: redis-server is not installed; the Redis tests did NOT run !!!!!!!!\n"
        );
    }
    found
}

/// A port no one listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
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
        let dir =
            std::env::temp_dir().join(format!("bloomkit-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory for the server");
        let args: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        let mut server = RedisServer {
            child: spawn(port, &dir, &args),
            port,
            dir,
            args,
        };
        server.wait_ready();
        Some(server)
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

    /// Stops the server (SIGKILL by PID): what a crash or a host going away looks like.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port, empty (no persistence).
    ///
    /// # Panics
    /// As [`start`](Self::start).
    pub fn restart(&mut self) {
        self.stop();
        self.child = spawn(self.port, &self.dir, &self.args);
        self.wait_ready();
    }

    /// Sends one command in RESP and returns the raw reply (for setup the client under test
    /// must not do: `CONFIG SET`, `CLUSTER INFO`). `auth` is sent first when given.
    ///
    /// # Panics
    /// If the server cannot be reached.
    pub fn command(&self, args: &[&str]) -> String {
        raw_command(self.port, args)
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut log = String::new();
                if let Some(mut err) = self.child.stderr.take() {
                    let _ = err.read_to_string(&mut log);
                }
                panic!("redis-server on port {} exited: {status}: {log}", self.port);
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {} did not start", self.port);
    }
}

fn spawn(port: u16, dir: &std::path::Path, extra: &[String]) -> Child {
    Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .args(["--dir", dir.to_str().expect("a UTF-8 temp path")])
        .args(["--loglevel", "warning"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("redis-server starts")
}

/// One command over a plain TCP connection, in RESP; the reply's first line (and, for a
/// bulk reply, its body).
fn raw_command(port: u16, args: &[&str]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server answers");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a timeout");
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(req.as_bytes()).expect("a write");
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).expect("a reply");
    if let Some(len) = line
        .strip_prefix('$')
        .and_then(|l| l.trim().parse::<usize>().ok())
    {
        let mut body = vec![0; len + 2];
        reader.read_exact(&mut body).expect("the bulk reply");
        return String::from_utf8_lossy(&body[..len]).into_owned();
    }
    line.trim_end().to_owned()
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A Redis Cluster of `n` primaries (no replicas), each a [`RedisServer`], joined with
/// `redis-cli --cluster create`.
#[derive(Debug)]
pub struct RedisCluster {
    /// The nodes.
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// A cluster of `n` primaries, ready (`cluster_state:ok` on every node), or `None`
    /// without `redis-server` (see the module docs).
    ///
    /// # Panics
    /// If the cluster does not form within 30 seconds.
    pub fn start(n: usize) -> Option<RedisCluster> {
        let mut nodes = Vec::new();
        for _ in 0..n {
            let port = free_port();
            let conf = format!("nodes-{port}.conf");
            nodes.push(RedisServer::start(&[
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                &conf,
                "--cluster-node-timeout",
                "5000",
            ])?);
        }
        let addrs: Vec<String> = nodes
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        let out = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli runs");
        assert!(
            out.status.success(),
            "redis-cli --cluster create: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while !nodes
            .iter()
            .all(|s| s.command(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
        {
            assert!(
                Instant::now() < deadline,
                "the cluster did not become ready"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(RedisCluster { nodes })
    }

    /// The nodes' URLs.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }
}
