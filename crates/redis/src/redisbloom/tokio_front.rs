//! [`AsyncRedisBloomFilter`]: [`RedisBloomFilter`](super::RedisBloomFilter) on tokio
//! connections.

use std::time::Duration;

use super::{RbCore, RedisBloomChain};
use crate::options::{RedisBloomInfo, RedisBloomOptions};
use crate::transport::Link;
use crate::{Connection, Error, Limits};

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

    /// See [`RedisBloomFilter::reserve`](super::RedisBloomFilter::reserve).
    ///
    /// # Errors
    /// As there.
    pub async fn reserve(con: C, name: &str, options: &RedisBloomOptions) -> Result<Self, Error> {
        let mut link = Link::new(con);
        let core = RbCore::reserve(&mut link, name, options).await?;
        Ok(AsyncRedisBloomFilter { core, link })
    }

    /// See [`RedisBloomFilter::load`](super::RedisBloomFilter::load).
    ///
    /// # Errors
    /// As there.
    pub async fn load(
        con: C,
        name: &str,
        chain: &RedisBloomChain,
        limits: &Limits,
    ) -> Result<Self, Error> {
        let mut link = Link::new(con);
        let core = RbCore::load(&mut link, name, chain, limits).await?;
        Ok(AsyncRedisBloomFilter { core, link })
    }

    /// See [`RedisBloomFilter::count`](super::RedisBloomFilter::count).
    ///
    /// # Errors
    /// As there.
    pub async fn count(&mut self) -> Result<u64, Error> {
        self.core.card(&mut self.link).await
    }
}
