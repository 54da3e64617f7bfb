//! `cargo xtask redis-cluster`: a local Redis Cluster for the cluster tests and examples,
//! in the foreground. It starts `redis-server` nodes on consecutive ports, joins them with
//! `redis-cli --cluster create`, prints the nodes' URLs on stdout (one a line) and waits;
//! on Ctrl-C (or SIGTERM, SIGHUP), when standard input closes, or after `--for SECONDS`,
//! it stops every node by PID. The cluster itself is bloomkit-testkit's
//! [`RedisCluster`], the one the tests start.

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bloomkit_testkit::redis_server::{self, ClusterConfig, RedisCluster, RedisServer};

/// `cargo xtask redis-cluster` flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Primaries (at least 3).
    #[arg(long, default_value_t = 3)]
    pub primaries: usize,
    /// Replicas of each primary.
    #[arg(long, default_value_t = 1)]
    pub replicas: usize,
    /// The first node's port: the nodes take PORT..PORT+N*(R+1), their cluster bus the
    /// ports 10000 above.
    #[arg(long, default_value_t = 7000)]
    pub port: u16,
    /// Where the nodes keep their files and logs (DIR/PORT/redis.log, PORT each node's),
    /// kept afterwards [default: a temporary directory, removed at the end].
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Run this many seconds, then stop (for scripts: standard input is not watched).
    #[arg(long = "for", value_name = "SECONDS")]
    pub seconds: Option<u64>,
    /// The nodes' cluster-node-timeout in milliseconds (how soon a crashed primary is
    /// replaced by its replica).
    #[arg(long, default_value_t = 1000)]
    pub node_timeout: u64,
}

/// The ports of `args`' nodes and their cluster bus, or why they cannot be used.
fn ports(args: &Args) -> Result<Vec<u16>, String> {
    if args.primaries < 3 {
        return Err(format!(
            "a redis cluster needs at least 3 primaries, not {}",
            args.primaries
        ));
    }
    let nodes = args
        .primaries
        .checked_mul(args.replicas + 1)
        .ok_or("too many nodes")?;
    let last = u16::try_from(nodes - 1)
        .ok()
        .and_then(|n| args.port.checked_add(n))
        .filter(|&last| last <= 55535)
        .ok_or_else(|| {
            format!(
                "{nodes} nodes from port {} pass port 55535 (their cluster bus is 10000 above)",
                args.port
            )
        })?;
    Ok((args.port..=last).collect())
}

/// Starts the cluster, waits, stops it. Exit status 2 when `redis-server` is not
/// installed, 1 when the ports are taken or the flags are wrong.
pub fn main(args: &Args) -> ExitCode {
    if !redis_server::installed() {
        eprintln!(
            "redis-server and redis-cli are not installed: {}",
            redis_server::INSTALL
        );
        return ExitCode::from(2);
    }
    let ports = match ports(args) {
        Ok(ports) => ports,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let taken: Vec<u16> = ports
        .iter()
        .flat_map(|&p| [p, p + 10000])
        .filter(|&p| TcpListener::bind(("127.0.0.1", p)).is_err())
        .collect();
    if !taken.is_empty() {
        eprintln!("ports in use: {taken:?} (choose others with --port)");
        return ExitCode::FAILURE;
    }

    // Registered before the nodes start, so that a Ctrl-C while they do still stops them.
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).expect("a signal handler");
    }

    let config = ClusterConfig {
        first_port: Some(args.port),
        dir: Some(match &args.dir {
            Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
            None => {
                std::env::temp_dir().join(format!("bloomkit-redis-cluster-{}", std::process::id()))
            }
        }),
        node_timeout_ms: args.node_timeout,
        ..ClusterConfig::new(args.primaries, args.replicas)
    };
    let dir = config.dir.clone().expect("a directory");
    eprintln!(
        "starting {} primaries with {} replicas each on ports {}..={} in {}",
        args.primaries,
        args.replicas,
        ports[0],
        ports[ports.len() - 1],
        dir.display()
    );
    let started = Instant::now();
    let Some(cluster) = RedisCluster::start_with(&config) else {
        return ExitCode::from(2);
    };
    for url in cluster.urls() {
        println!("{url}");
    }
    for p in cluster.primaries() {
        let replicas: Vec<u16> = cluster
            .replicas_of(p)
            .into_iter()
            .map(|r| cluster.nodes[r].port())
            .collect();
        eprintln!(
            "primary 127.0.0.1:{}, replicas on ports {replicas:?}",
            cluster.nodes[p].port()
        );
    }
    eprintln!(
        "cluster ready in {:.1?}: `redis-cli -c -p {}`; {}",
        started.elapsed(),
        args.port,
        match args.seconds {
            Some(s) => format!("stopping in {s} s (or on Ctrl-C)"),
            None => "Ctrl-C (or closing standard input) stops it".to_owned(),
        }
    );

    let deadline = args
        .seconds
        .map(|s| Instant::now() + Duration::from_secs(s));
    if deadline.is_none() {
        // Standard input is watched only from here: closing it early does not stop a
        // cluster that is still starting.
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut buf = [0u8; 1024];
            let mut stdin = std::io::stdin();
            while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
            stop.store(true, Ordering::SeqCst);
        });
    }
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        std::thread::sleep(Duration::from_millis(100));
    }

    let count = cluster.nodes.len();
    let pids: Vec<u32> = cluster.nodes.iter().map(RedisServer::pid).collect();
    drop(cluster);
    if args.dir.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    eprintln!("stopped {count} nodes (PIDs {pids:?})");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::{ports, Args};

    fn args(primaries: usize, replicas: usize, port: u16) -> Args {
        Args {
            primaries,
            replicas,
            port,
            dir: None,
            seconds: None,
            node_timeout: 1000,
        }
    }

    #[test]
    fn nodes_take_consecutive_ports_below_the_cluster_bus_limit() {
        assert_eq!(
            ports(&args(3, 1, 7000)).unwrap(),
            (7000..=7005).collect::<Vec<_>>()
        );
        assert_eq!(
            ports(&args(3, 0, 55533)).unwrap(),
            vec![55533, 55534, 55535]
        );
        assert!(ports(&args(3, 0, 55534)).is_err());
        assert!(ports(&args(2, 1, 7000)).is_err());
    }
}
