//! A 3-node Redis Cluster started by the test: a filter of 6 shards has keys on every node
//! and answers as the local filter with the same parameters.

use std::collections::HashSet;

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_redis::{Error, Options, RedisFilter};
use bloomkit_testkit::redis_server::RedisCluster;

#[test]
fn a_six_shard_filter_spreads_over_three_nodes_and_answers_as_the_local_one() {
    let Some(cluster) = RedisCluster::start(3) else {
        return;
    };
    let client = redis::cluster::ClusterClient::new(cluster.urls()).unwrap();
    let options = Options::new(100_000, 0.01).shards(6);
    let mut f: RedisFilter<BlockedBloomFilter<str>, _> =
        RedisFilter::open_or_create(client.get_connection().unwrap(), "cluster", &options).unwrap();
    assert_eq!(f.shards(), 6);

    let keys: Vec<String> = (0..50_000).map(|i| format!("item:{i}")).collect();
    let mut local = BlockedBloomFilter::<str>::new(100_000, 0.01).unwrap();
    f.insert_batch(keys.iter().map(String::as_str)).unwrap();
    for k in &keys {
        local.insert(k);
    }
    for k in keys.iter().take(100) {
        assert!(f.contains(k).unwrap());
    }

    // Every node holds some of the shards' keys.
    let mut nodes_with_keys = HashSet::new();
    for node in &cluster.nodes {
        let count = node.command(&["DBSIZE"]);
        if count != ":0" {
            nodes_with_keys.insert(node.port());
        }
    }
    assert_eq!(nodes_with_keys.len(), 3, "keys on every node");

    // Members and non-members answer as the local filter; the bytes are the local bytes.
    let probes: Vec<String> = (0..100_000).map(|i| format!("item:{i}")).collect();
    let mut out = Vec::new();
    f.contains_batch(probes.iter().map(String::as_str), &mut out)
        .unwrap();
    for (k, got) in probes.iter().zip(&out) {
        assert_eq!(*got, local.contains(k.as_str()), "{k}");
    }
    assert!(f.download().unwrap() == local);

    // A second client sees the same filter; a flushed node is an error, not "absent".
    let mut g: RedisFilter<BlockedBloomFilter<str>, _> =
        RedisFilter::open(client.get_connection().unwrap(), "cluster").unwrap();
    assert!(g.contains("item:7").unwrap());
    cluster.nodes[1].command(&["FLUSHALL"]);
    let mut out = Vec::new();
    let err = g
        .contains_batch(keys.iter().map(String::as_str), &mut out)
        .unwrap_err();
    assert!(matches!(err, Error::Missing { .. }), "{err:?}");
}
