//! [`RespCluster`]: Redis Cluster over the crate's own bounded connections
//! ([`RespConnection`], or `AsyncRespConnection` (feature `tokio`) on tokio). The slot map, the
//! routing of each group of commands to the node of its keys' slot, `MOVED` redirections and
//! reconnections to a node that died are ours, so every one of them ends by the call's
//! deadline: the redis crate's cluster connections retry inside a call where no deadline
//! reaches (a primary killed and left dead held one insert 8.9 s against a 2 s deadline).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::time::{Duration, Instant};

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, RedisResult, Value};

use crate::exec::{run_wire, Batch, Connection, Replies, Round, Wire};
use crate::slot::slot_of;
use crate::wire::RespConnection;

/// How many times a group is sent at most in one call (a redirection or a reconnection
/// each): enough for a failover, bounded by the deadline in any case.
const MAX_SENDS: usize = 5;

/// A node connection a [`RespCluster`] opens: the crate's own, sync or tokio.
pub(crate) trait Dial: Wire + Sized {
    /// Connects to `info` (one node's address, the seed's credentials) by `deadline`.
    fn dial(
        info: ConnectionInfo,
        deadline: Option<Instant>,
        max_reply: u64,
    ) -> impl Future<Output = RedisResult<Self>>;
}

/// Time left before `deadline` (`None`: no deadline).
fn left(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()))
}

impl Dial for RespConnection {
    fn dial(
        info: ConnectionInfo,
        deadline: Option<Instant>,
        max_reply: u64,
    ) -> impl Future<Output = RedisResult<Self>> {
        let out = RespConnection::open(info, left(deadline)).map(|mut con| {
            con.set_max_reply_bytes(max_reply);
            con
        });
        std::future::ready(out)
    }
}

/// One node: its connection and what the last round trip on it left (see [`Round`]).
struct Node<W> {
    wire: W,
    unread: usize,
}

/// A Redis Cluster connection whose every step ends by the call's deadline: groups of
/// commands go to the node of their keys' slot (one pipeline per node), a `MOVED` reply or a
/// node that cannot be reached makes it learn the slots again (`CLUSTER SLOTS`) and send
/// those groups once more, at most 5 times a call and never past its deadline. Each node's
/// connection is a [`RespConnection`] (every reply bounded in time and size), or an
/// `AsyncRespConnection` for the tokio filters (feature `tokio`).
///
/// ```no_run
/// use std::time::Duration;
/// use bloomkit_redis::{BlockedBloomFilter, Options, RedisFilter, RespCluster};
///
/// let nodes = ["redis://127.0.0.1:7000/", "redis://127.0.0.1:7001/"];
/// let con = RespCluster::open(nodes, Some(Duration::from_secs(2)))?;
/// let options = Options::new(100_000_000, 0.01).shards(16);
/// let mut seen: RedisFilter<BlockedBloomFilter<str>, _> =
///     RedisFilter::open_or_create(con, "crawler:seen", &options)?;
/// seen.try_insert("https://example.com/")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// `ASK` redirections (a slot migrating) are not followed: such a group's call fails with the
/// server's error until the migration ends.
pub struct RespCluster<W = RespConnection> {
    seeds: Vec<ConnectionInfo>,
    nodes: HashMap<String, Node<W>>,
    /// `(first slot, last slot, node address)`, sorted.
    slots: Vec<(u16, u16, String)>,
    max_reply: u64,
}

impl<W> fmt::Debug for RespCluster<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RespCluster")
            .field("nodes", &self.nodes.keys().collect::<Vec<_>>())
            .field("slot ranges", &self.slots.len())
            .finish()
    }
}

impl RespCluster<RespConnection> {
    /// Connects to the cluster through `seeds` (any of its nodes' URLs; the first one's
    /// credentials serve every node) and learns its slots, within `timeout`.
    ///
    /// # Errors
    /// A bad URL, or no seed that answers `CLUSTER SLOTS` within `timeout`.
    pub fn open<T: IntoConnectionInfo>(
        seeds: impl IntoIterator<Item = T>,
        timeout: Option<Duration>,
    ) -> RedisResult<Self> {
        let mut cluster = RespCluster::new(seeds)?;
        crate::exec::block_on(cluster.refresh(crate::transport::deadline(timeout)))?;
        Ok(cluster)
    }
}

impl<W> RespCluster<W> {
    fn new<T: IntoConnectionInfo>(seeds: impl IntoIterator<Item = T>) -> RedisResult<Self> {
        let seeds = seeds
            .into_iter()
            .map(IntoConnectionInfo::into_connection_info)
            .collect::<RedisResult<Vec<_>>>()?;
        if seeds.is_empty() {
            return Err(redis::RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "a cluster needs at least one seed node",
            )));
        }
        Ok(RespCluster {
            seeds,
            nodes: HashMap::new(),
            slots: Vec::new(),
            max_reply: crate::DEFAULT_MAX_REPLY_BYTES,
        })
    }

    /// The largest reply read on each node's connection (see
    /// [`RespConnection::max_reply_bytes`]).
    pub fn max_reply_bytes(&self) -> u64 {
        self.max_reply
    }

    /// Changes the largest reply read, for connections opened from now on (at least 64).
    pub fn set_max_reply_bytes(&mut self, max: u64) {
        self.max_reply = max.max(64);
    }

    /// The node serving `slot`, as last learned.
    fn owner(&self, slot: u16) -> Option<&str> {
        let i = self.slots.partition_point(|&(_, last, _)| last < slot);
        match self.slots.get(i) {
            Some((first, _, addr)) if *first <= slot => Some(addr),
            _ => None,
        }
    }

    /// The connection settings of the node at `addr` (`host:port`).
    fn info_for(&self, addr: &str) -> ConnectionInfo {
        let (host, port) = addr.rsplit_once(':').unwrap_or((addr, "6379"));
        self.seeds[0].clone().set_addr(ConnectionAddr::Tcp(
            host.to_owned(),
            port.parse().unwrap_or(6379),
        ))
    }
}

// Every method here is private: the bound names no public item.
#[allow(private_bounds)]
impl<W: Dial> RespCluster<W> {
    /// The connection to `addr`, opened if need be.
    async fn node(&mut self, addr: &str, deadline: Option<Instant>) -> RedisResult<&mut Node<W>> {
        if !self.nodes.contains_key(addr) {
            let wire = W::dial(self.info_for(addr), deadline, self.max_reply).await?;
            self.nodes.insert(addr.to_owned(), Node { wire, unread: 0 });
        }
        Ok(self.nodes.get_mut(addr).expect("just inserted"))
    }

    /// One round trip of `batch` on the node at `addr`; a connection that failed or was cut
    /// part way is dropped (the next call opens a new one).
    async fn on_node(
        &mut self,
        addr: &str,
        batch: &Batch,
        deadline: Option<Instant>,
    ) -> RedisResult<Replies> {
        let node = self.node(addr, deadline).await?;
        let mut round = Round {
            deadline,
            unread: node.unread,
            broken: false,
        };
        let out = run_wire(&mut node.wire, batch, &mut round).await;
        node.unread = round.unread;
        if round.broken || out.is_err() {
            self.nodes.remove(addr);
        }
        out
    }

    /// Learns the slots from the first node that answers `CLUSTER SLOTS`: the nodes known,
    /// then the seeds.
    async fn refresh(&mut self, deadline: Option<Instant>) -> RedisResult<()> {
        let mut ask = Batch::new();
        ask.group();
        ask.start(2);
        ask.arg(b"CLUSTER");
        ask.arg(b"SLOTS");
        ask.end_command();
        let mut candidates: Vec<String> = self.nodes.keys().cloned().collect();
        for seed in &self.seeds {
            if let ConnectionAddr::Tcp(host, port) = seed.addr() {
                candidates.push(format!("{host}:{port}"));
            }
        }
        let mut last = redis::RedisError::from((
            redis::ErrorKind::ClusterConnectionNotFound,
            "no node of the cluster answered CLUSTER SLOTS",
        ));
        for addr in candidates {
            if left(deadline).is_some_and(|l| l.is_zero()) {
                break;
            }
            match self.on_node(&addr, &ask, deadline).await {
                Ok(replies) => match replies.groups.into_iter().flatten().next() {
                    Some(v) => match slot_map(&v, &addr) {
                        Some(map) if !map.is_empty() => {
                            self.slots = map;
                            return Ok(());
                        }
                        _ => {
                            last = redis::RedisError::from((
                                redis::ErrorKind::UnexpectedReturnType,
                                "CLUSTER SLOTS answered no slot map",
                                addr.clone(),
                            ))
                        }
                    },
                    None => {
                        last = io_timeout(&addr).into();
                    }
                },
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// One call: each group to the node of its slot, one pipeline per node, redirected and
    /// retried as the type's docs say.
    async fn run_groups(&mut self, batch: &Batch, round: &Round) -> RedisResult<Replies> {
        let deadline = round.deadline;
        let groups = batch.groups();
        let sizes: Vec<usize> = batch.group_ranges().map(|(_, n)| n).collect();
        let mut answers: Vec<Option<Vec<Value>>> = sizes
            .iter()
            .map(|&n| if n == 0 { Some(Vec::new()) } else { None })
            .collect();
        let mut pending: Vec<usize> = (0..groups).filter(|&g| answers[g].is_none()).collect();
        let mut last_error = None;
        let mut stale = self.slots.is_empty();
        for _ in 0..MAX_SENDS {
            if pending.is_empty() || left(deadline).is_some_and(|l| l.is_zero()) {
                break;
            }
            if stale {
                if let Err(e) = self.refresh(deadline).await {
                    last_error = Some(e);
                    continue;
                }
                stale = false;
            }
            let mut by_node: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for &g in &pending {
                let slot = batch.group_key(g).map_or(0, slot_of);
                let addr = match self.owner(slot) {
                    Some(addr) => addr.to_owned(),
                    None => {
                        stale = true;
                        continue;
                    }
                };
                by_node.entry(addr).or_default().push(g);
            }
            let mut again = Vec::new();
            for (addr, members) in by_node {
                let sub = batch.inlined(&members, |_| None);
                match self.on_node(&addr, &sub, deadline).await {
                    Ok(replies) => {
                        let answered = replies.groups.len();
                        for (values, &g) in replies.groups.into_iter().zip(&members) {
                            if values.iter().any(redirected) {
                                stale = true;
                                again.push(g);
                            } else {
                                answers[g] = Some(values);
                            }
                        }
                        if replies.timed_out {
                            again.extend(&members[answered..]);
                        }
                    }
                    Err(e) => {
                        // Nothing of these groups is known to have run; each is safe to
                        // send again whole.
                        stale = true;
                        again.extend(&members);
                        last_error = Some(e);
                    }
                }
            }
            pending = again;
        }
        // The answers, as the prefix of groups answered: a group left unanswered cuts the
        // call there (the deadline passed, or the sends ran out).
        let mut out = Vec::with_capacity(groups);
        for answer in answers {
            match answer {
                Some(values) => out.push(values),
                None => break,
            }
        }
        if out.len() == groups {
            return Ok(Replies {
                groups: out,
                timed_out: false,
            });
        }
        match last_error {
            Some(e) if left(deadline).is_none_or(|l| !l.is_zero()) => Err(e),
            _ => Ok(Replies {
                groups: out,
                timed_out: true,
            }),
        }
    }
}

fn io_timeout(addr: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{addr} did not answer in time"),
    )
}

/// Whether a reply sends the command elsewhere (`MOVED`, `ASK`): the slot map is stale.
fn redirected(v: &Value) -> bool {
    matches!(v, Value::ServerError(e) if matches!(e.code(), "MOVED" | "ASK"))
}

/// The slot map in a `CLUSTER SLOTS` reply from the node at `asked` (whose host stands for
/// an empty or unknown one in the reply).
fn slot_map(v: &Value, asked: &str) -> Option<Vec<(u16, u16, String)>> {
    let asked_host = asked.rsplit_once(':').map_or(asked, |(h, _)| h);
    let Value::Array(ranges) = v else {
        return None;
    };
    let mut map = Vec::with_capacity(ranges.len());
    for range in ranges {
        let Value::Array(fields) = range else {
            return None;
        };
        let (Some(Value::Int(first)), Some(Value::Int(last)), Some(Value::Array(primary))) =
            (fields.first(), fields.get(1), fields.get(2))
        else {
            return None;
        };
        let host = match primary.first() {
            Some(Value::BulkString(h)) if !h.is_empty() && h.as_slice() != b"?" => {
                String::from_utf8_lossy(h).into_owned()
            }
            _ => asked_host.to_owned(),
        };
        let Some(Value::Int(port)) = primary.get(1) else {
            return None;
        };
        let (first, last) = (u16::try_from(*first).ok()?, u16::try_from(*last).ok()?);
        if first > last || last >= 16_384 {
            return None;
        }
        map.push((first, last, format!("{host}:{port}")));
    }
    map.sort();
    Some(map)
}

impl Connection for RespCluster<RespConnection> {
    /// Each group to the node of its slot (see the type's docs), by the deadline.
    fn run(
        &mut self,
        batch: &Batch,
        round: &mut Round,
    ) -> impl Future<Output = RedisResult<Replies>> {
        let round = *round;
        async move { self.run_groups(batch, &round).await }
    }
}

#[cfg(feature = "tokio")]
mod tokio_cluster {
    use super::*;
    use crate::wire::AsyncRespConnection;

    impl Dial for AsyncRespConnection {
        async fn dial(
            info: ConnectionInfo,
            deadline: Option<Instant>,
            max_reply: u64,
        ) -> RedisResult<Self> {
            let mut con = AsyncRespConnection::open(info, left(deadline)).await?;
            con.set_max_reply_bytes(max_reply);
            Ok(con)
        }
    }

    impl RespCluster<AsyncRespConnection> {
        /// As [`RespCluster::open`], on tokio.
        ///
        /// # Errors
        /// As [`RespCluster::open`].
        pub async fn open_async<T: IntoConnectionInfo>(
            seeds: impl IntoIterator<Item = T>,
            timeout: Option<Duration>,
        ) -> RedisResult<Self> {
            let mut cluster = RespCluster::new(seeds)?;
            cluster.refresh(crate::transport::deadline(timeout)).await?;
            Ok(cluster)
        }
    }

    impl Connection for RespCluster<AsyncRespConnection> {
        async fn run(&mut self, batch: &Batch, round: &mut Round) -> RedisResult<Replies> {
            let round = *round;
            self.run_groups(batch, &round).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_redis_cluster_hash_tags() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(slot_of(b"123456789"), 12_739);
        assert_eq!(slot_of(b"foo"), 12_182);
        assert_eq!(slot_of(b"{user1000}.following"), slot_of(b"user1000"));
        assert_eq!(slot_of(b"foo{}{bar}"), slot_of(b"foo{}{bar}"));
        assert_eq!(slot_of(b"{}foo"), slot_of(b"{}foo"));
        assert_ne!(slot_of(b"{}foo"), slot_of(b"foo"));
    }

    #[test]
    fn a_slot_map_is_read_from_cluster_slots() {
        let node = |host: &[u8], port| {
            Value::Array(vec![Value::BulkString(host.to_vec()), Value::Int(port)])
        };
        let reply = Value::Array(vec![
            Value::Array(vec![Value::Int(5461), Value::Int(16383), node(b"", 7001)]),
            Value::Array(vec![
                Value::Int(0),
                Value::Int(5460),
                node(b"10.0.0.1", 7000),
            ]),
        ]);
        let map = slot_map(&reply, "127.0.0.1:7000").unwrap();
        assert_eq!(
            map,
            vec![
                (0, 5460, "10.0.0.1:7000".to_owned()),
                (5461, 16383, "127.0.0.1:7001".to_owned()),
            ]
        );
        let cluster = RespCluster::<RespConnection> {
            seeds: vec!["redis://127.0.0.1:7000/".into_connection_info().unwrap()],
            nodes: HashMap::new(),
            slots: map,
            max_reply: 64,
        };
        assert_eq!(cluster.owner(0), Some("10.0.0.1:7000"));
        assert_eq!(cluster.owner(5461), Some("127.0.0.1:7001"));
        assert_eq!(cluster.owner(16383), Some("127.0.0.1:7001"));
        for bad in [
            Value::Int(1),
            Value::Array(vec![Value::Array(vec![
                Value::Int(9),
                Value::Int(3),
                node(b"", 1),
            ])]),
            Value::Array(vec![Value::Array(vec![
                Value::Int(0),
                Value::Int(20_000),
                node(b"", 1),
            ])]),
        ] {
            assert!(slot_map(&bad, "h:1").is_none(), "{bad:?}");
        }
    }
}
