//! [`AsyncRedisFilter`]: the same operations on tokio connections.

use core::borrow::Borrow;
use core::fmt;

use std::time::Duration;

use crate::engine::Core;
use crate::transport::Link;
use crate::{Connection, Error, Info, Options, Shape, SharedLayout};

/// [`RedisFilter`](crate::RedisFilter) on an async connection
/// ([`redis::aio::MultiplexedConnection`] or [`redis::cluster_async::ClusterConnection`]):
/// the same operations, the same scripts and the same errors, awaited.
pub struct AsyncRedisFilter<F: SharedLayout, C> {
    core: Core<F>,
    link: Link<C>,
}

impl<F: SharedLayout, C> fmt::Debug for AsyncRedisFilter<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.core.fmt(f)
    }
}

impl<F: SharedLayout, C: Connection> AsyncRedisFilter<F, C> {
    crate::front::ops!(
        tokio [async],
        key: &F::Key,
        item: [Borrow<F::Key>],
        info: Info,
        local: F,
        engine: Core<F>,
    );

    /// See [`RedisFilter::open_or_create`](crate::RedisFilter::open_or_create).
    ///
    /// # Errors
    /// As there.
    pub async fn open_or_create(con: C, name: &str, options: &Options) -> Result<Self, Error> {
        let mut link = Link::new(con);
        let (core, _) = Core::open_or_create(&mut link, name, options).await?;
        Ok(AsyncRedisFilter { core, link })
    }

    /// See [`RedisFilter::create`](crate::RedisFilter::create).
    ///
    /// # Errors
    /// As there.
    pub async fn create(con: C, name: &str, options: &Options) -> Result<Self, Error> {
        let mut link = Link::new(con);
        let core = Core::create(&mut link, name, options).await?;
        Ok(AsyncRedisFilter { core, link })
    }

    /// See [`RedisFilter::destroy`](crate::RedisFilter::destroy).
    ///
    /// # Errors
    /// As there.
    pub async fn destroy(con: &mut C, name: &str, timeout: Option<Duration>) -> Result<u64, Error> {
        let mut link = Link::new(con);
        crate::engine::destroy(&mut link, name, timeout).await
    }

    /// See [`RedisFilter::try_is_empty`](crate::RedisFilter::try_is_empty).
    ///
    /// # Errors
    /// As there.
    pub async fn try_is_empty(&mut self) -> Result<bool, Error> {
        Ok(self.info().await?.ones == 0)
    }

    /// See [`RedisFilter::try_clear`](crate::RedisFilter::try_clear).
    ///
    /// # Errors
    /// As there.
    pub async fn try_clear(&mut self) -> Result<(), Error> {
        self.core.clear(&mut self.link).await
    }

    /// See [`RedisFilter::upload`](crate::RedisFilter::upload).
    ///
    /// # Errors
    /// As there.
    pub async fn upload(&mut self, local: &F) -> Result<(), Error> {
        self.core.put(&mut self.link, local, false).await
    }

    /// See [`RedisFilter::union_with`](crate::RedisFilter::union_with).
    ///
    /// # Errors
    /// As there.
    pub async fn union_with(&mut self, local: &F) -> Result<(), Error> {
        self.core.put(&mut self.link, local, true).await
    }

    accessors!();
}
