//! The Redis Cluster harness against real servers: 3 primaries with a replica each, roles
//! read live, a manual failover, a crashed primary, and the slot map through both.

use std::time::Instant;

use bloomkit_testkit::redis_server::RedisCluster;
use bloomkit_testkit::resp::Value;

/// A key whose slot node `node` serves now.
fn key_on(cluster: &RedisCluster, node: usize) -> String {
    (0..)
        .map(|i| format!("key:{i}"))
        .find(|k| cluster.node_for_key(k) == node)
        .expect("a key on every node")
}

#[test]
fn a_cluster_with_replicas_survives_a_failover_and_a_crashed_primary() {
    let started = Instant::now();
    let Some(mut cluster) = RedisCluster::start_with_replicas(3, 1) else {
        return;
    };
    let ready = started.elapsed();
    assert_eq!(cluster.nodes.len(), 6);
    let primaries = cluster.primaries();
    let replicas = cluster.replicas();
    assert_eq!(
        (primaries.len(), replicas.len()),
        (3, 3),
        "{primaries:?} {replicas:?}"
    );
    let pairs: Vec<(usize, usize)> = primaries
        .iter()
        .map(|&p| {
            (
                p,
                cluster.replica_of(p).expect("every primary has a replica"),
            )
        })
        .collect();
    let mut paired: Vec<usize> = pairs.iter().map(|&(_, r)| r).collect();
    paired.sort_unstable();
    assert_eq!(paired, replicas, "one replica each");
    for &r in &replicas {
        assert_eq!(cluster.replica_of(r), None, "a replica has no replica");
    }

    // slot_of is Redis's own CLUSTER KEYSLOT, and node_for_slot the node that takes the key:
    // every other primary redirects to it.
    for i in 0..200 {
        let key = format!("item:{i}");
        let keyslot = cluster.nodes[0].query(&["CLUSTER", "KEYSLOT", &key]);
        assert_eq!(
            keyslot,
            Value::Int(RedisCluster::slot_of(&key).into()),
            "{key}"
        );
    }
    for key in ["foo", "bar", "{user1000}.following", "{user1000}.followers"] {
        let owner = cluster.node_for_key(key);
        assert!(primaries.contains(&owner));
        let value = format!("value of {key}");
        assert_eq!(
            cluster.nodes[owner].query(&["SET", key, &value]),
            Value::Simple("OK".into())
        );
        for &p in primaries.iter().filter(|&&p| p != owner) {
            let moved = cluster.nodes[p].query(&["GET", key]);
            let expected = format!(
                "MOVED {} 127.0.0.1:{}",
                RedisCluster::slot_of(key),
                cluster.nodes[owner].port()
            );
            assert_eq!(moved, Value::Error(expected));
        }
    }

    // A manual failover swaps a primary and its replica; the data went with the slots.
    let (p0, r0) = pairs[0];
    let key0 = key_on(&cluster, p0);
    cluster.nodes[p0].query(&["SET", &key0, "before the failover"]);
    let t = Instant::now();
    cluster.failover(r0);
    let failover = t.elapsed();
    assert!(cluster.primaries().contains(&r0));
    assert!(cluster.replicas().contains(&p0));
    assert_eq!(cluster.replica_of(r0), Some(p0));
    assert_eq!(cluster.node_for_key(&key0), r0);
    assert_eq!(
        cluster.nodes[r0].query(&["GET", &key0]),
        Value::Bulk(b"before the failover".to_vec())
    );

    // A crashed primary: its replica takes over, the crashed node has no role.
    let (p1, r1) = pairs[1];
    let key1 = key_on(&cluster, p1);
    cluster.nodes[p1].query(&["SET", &key1, "before the crash"]);
    assert_eq!(
        cluster.nodes[p1].query(&["WAIT", "1", "5000"]),
        Value::Int(1)
    );
    let t = Instant::now();
    let promoted = cluster.kill_primary(p1);
    let crash = t.elapsed();
    assert_eq!(promoted, r1);
    assert!(cluster.nodes[p1].is_stopped());
    let mut after = cluster.primaries();
    after.sort_unstable();
    let mut expected = vec![r0, r1, pairs[2].0];
    expected.sort_unstable();
    assert_eq!(after, expected);
    let mut replicas_after = cluster.replicas();
    replicas_after.sort_unstable();
    let mut expected = vec![p0, pairs[2].1];
    expected.sort_unstable();
    assert_eq!(replicas_after, expected);
    assert_eq!(cluster.replica_of(r1), None, "its primary is gone");
    assert_eq!(cluster.node_for_key(&key1), r1);
    assert_eq!(
        cluster.nodes[r1].query(&["GET", &key1]),
        Value::Bulk(b"before the crash".to_vec())
    );
    for i in (0..cluster.nodes.len()).filter(|&i| i != p1) {
        assert!(cluster.nodes[i]
            .command(&["CLUSTER", "INFO"])
            .contains("cluster_state:ok"));
    }
    eprintln!(
        "cluster ready in {ready:?}, failover in {failover:?}, crashed primary replaced in \
         {crash:?}, {:?} in all",
        started.elapsed()
    );
}

#[test]
fn a_cluster_without_replicas_still_starts() {
    let Some(cluster) = RedisCluster::start(3) else {
        return;
    };
    assert_eq!(cluster.primaries(), vec![0, 1, 2]);
    assert!(cluster.replicas().is_empty());
    assert_eq!(cluster.replica_of(0), None);
    let owners: Vec<usize> = [0, 8000, 16383]
        .iter()
        .map(|&s| cluster.node_for_slot(s))
        .collect();
    assert_eq!(owners.len(), 3);
}
