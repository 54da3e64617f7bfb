//! [`AsyncRedisBloomFilter`]: [`RedisBloomFilter`](super::RedisBloomFilter) on tokio
//! connections.

use std::time::Duration;

use super::{RbCore, RedisBloomChain};
use crate::options::RedisBloomInfo;
use crate::transport::Link;
use crate::{Connection, Error};

/// [`RedisBloomFilter`](super::RedisBloomFilter) on an async connection
/// ([`redis::aio::MultiplexedConnection`] or [`redis::cluster_async::ClusterConnection`]):
/// the same operations, guards and errors, awaited.
pub struct AsyncRedisBloomFilter<C> {
    core: RbCore,
    link: Link<C>,
}

impl<C> std::fmt::Debug for AsyncRedisBloomFilter<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

impl<C: Connection> AsyncRedisBloomFilter<C> {
    crate::front::ops!(
        tokio [async],
        key: impl AsRef<[u8]>,
        item: [AsRef<[u8]>],
        info: RedisBloomInfo,
        local: RedisBloomChain,
        engine: RbCore,
    );
    super::rb_ops!(tokio [async]);
}
