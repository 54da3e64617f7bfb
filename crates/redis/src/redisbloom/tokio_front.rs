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
    /// See [`RedisBloomFilter::reserve`](super::RedisBloomFilter::reserve).
    ///
    /// # Errors
    /// As there.
    pub async fn reserve(con: C, name: &str, options: &RedisBloomOptions) -> Result<Self, Error> {
        let mut link = Link::new(con);
        let core = RbCore::reserve(&mut link, name, options).await?;
        Ok(AsyncRedisBloomFilter { core, link })
    }

    /// See [`RedisBloomFilter::open`](super::RedisBloomFilter::open).
    ///
    /// # Errors
    /// As there.
    pub async fn open(con: C, name: &str) -> Result<Self, Error> {
        Self::open_with(con, name, &Limits::default()).await
    }

    /// See [`RedisBloomFilter::open_with`](super::RedisBloomFilter::open_with).
    ///
    /// # Errors
    /// As there.
    pub async fn open_with(con: C, name: &str, limits: &Limits) -> Result<Self, Error> {
        let mut link = Link::new(con);
        let core = RbCore::open(&mut link, name, limits).await?;
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

    /// See [`RedisBloomFilter::try_insert_batch_reporting`](super::RedisBloomFilter::try_insert_batch_reporting).
    ///
    /// # Errors
    /// As there.
    pub async fn try_insert_batch_reporting<I>(
        &mut self,
        keys: I,
        out: &mut Vec<bool>,
    ) -> Result<(), Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        self.core.per_key(&mut self.link, true, keys, out).await
    }

    /// See [`RedisBloomFilter::try_insert_batch`](super::RedisBloomFilter::try_insert_batch).
    ///
    /// # Errors
    /// As there.
    pub async fn try_insert_batch<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let mut out = Vec::new();
        self.try_insert_batch_reporting(keys, &mut out).await?;
        Ok(out.iter().filter(|&&new| new).count())
    }

    /// See [`RedisBloomFilter::contains_batch`](super::RedisBloomFilter::contains_batch).
    ///
    /// # Errors
    /// As there.
    pub async fn contains_batch<I>(&mut self, keys: I, out: &mut Vec<bool>) -> Result<(), Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        self.core.per_key(&mut self.link, false, keys, out).await
    }

    /// See [`RedisBloomFilter::info`](super::RedisBloomFilter::info).
    ///
    /// # Errors
    /// As there.
    pub async fn info(&mut self) -> Result<RedisBloomInfo, Error> {
        self.core.info(&mut self.link).await
    }

    /// See [`RedisBloomFilter::count`](super::RedisBloomFilter::count).
    ///
    /// # Errors
    /// As there.
    pub async fn count(&mut self) -> Result<u64, Error> {
        self.core.card(&mut self.link).await
    }

    /// See [`RedisBloomFilter::download`](super::RedisBloomFilter::download).
    ///
    /// # Errors
    /// As there.
    pub async fn download(&mut self) -> Result<RedisBloomChain, Error> {
        self.core.download(&mut self.link).await
    }

    /// See [`RedisBloomFilter::delete`](super::RedisBloomFilter::delete).
    ///
    /// # Errors
    /// As there.
    pub async fn delete(mut self) -> Result<C, Error> {
        self.core.delete(&mut self.link).await?;
        Ok(self.link.con)
    }

    /// The filter's key.
    pub fn name(&self) -> &str {
        &self.core.name
    }

    /// Sets the deadline of each call.
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.core.timeout = timeout;
    }

    /// The connection, for commands of the caller's own (see
    /// [`RedisFilter::connection`](crate::RedisFilter::connection)).
    pub fn connection(&mut self) -> &mut C {
        &mut self.link.con
    }

    /// Gives the filter `con` in place of its connection, and returns the old one: the way
    /// on after [`Error::Retired`] or a call cut by its deadline.
    pub fn replace_connection(&mut self, con: C) -> C {
        self.link.replace(con)
    }
}
