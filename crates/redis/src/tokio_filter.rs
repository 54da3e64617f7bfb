//! [`AsyncRedisFilter`]: the same operations on tokio connections.

use core::borrow::Borrow;
use core::fmt;

use std::time::Duration;

use crate::engine::Core;
use crate::transport::{KeyOp, Link};
use crate::{Connection, Error, Info, Limits, Options, Shape, SharedLayout};

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

    /// See [`RedisFilter::open`](crate::RedisFilter::open).
    ///
    /// # Errors
    /// As there.
    pub async fn open(con: C, name: &str) -> Result<Self, Error> {
        Self::open_with(con, name, &Limits::default()).await
    }

    /// See [`RedisFilter::open_with`](crate::RedisFilter::open_with).
    ///
    /// # Errors
    /// As there.
    pub async fn open_with(con: C, name: &str, limits: &Limits) -> Result<Self, Error> {
        let mut link = Link::new(con);
        let core = Core::open(&mut link, name, limits).await?;
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

    /// See [`RedisFilter::try_insert`](crate::RedisFilter::try_insert).
    ///
    /// # Errors
    /// As there.
    pub async fn try_insert(&mut self, key: &F::Key) -> Result<bool, Error> {
        let mut out = Vec::with_capacity(1);
        self.try_insert_batch_reporting([key], &mut out).await?;
        Ok(out[0])
    }

    /// See [`RedisFilter::contains`](crate::RedisFilter::contains).
    ///
    /// # Errors
    /// As there.
    pub async fn contains(&mut self, key: &F::Key) -> Result<bool, Error> {
        let mut out = Vec::with_capacity(1);
        self.contains_batch([key], &mut out).await?;
        Ok(out[0])
    }

    /// See [`RedisFilter::try_insert_batch`](crate::RedisFilter::try_insert_batch).
    ///
    /// # Errors
    /// As there.
    pub async fn try_insert_batch<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        I: IntoIterator,
        I::Item: Borrow<F::Key>,
    {
        let mut out = Vec::new();
        self.try_insert_batch_reporting(keys, &mut out).await?;
        Ok(out.iter().filter(|&&new| new).count())
    }

    /// See [`RedisFilter::try_insert_batch_reporting`](crate::RedisFilter::try_insert_batch_reporting).
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
        I::Item: Borrow<F::Key>,
    {
        self.core
            .per_key(&mut self.link, KeyOp::Insert, keys, out)
            .await
    }

    /// See [`RedisFilter::contains_batch`](crate::RedisFilter::contains_batch).
    ///
    /// # Errors
    /// As there.
    pub async fn contains_batch<I>(&mut self, keys: I, out: &mut Vec<bool>) -> Result<(), Error>
    where
        I: IntoIterator,
        I::Item: Borrow<F::Key>,
    {
        self.core
            .per_key(&mut self.link, KeyOp::Contains, keys, out)
            .await
    }

    /// See [`RedisFilter::info`](crate::RedisFilter::info).
    ///
    /// # Errors
    /// As there.
    pub async fn info(&mut self) -> Result<Info, Error> {
        self.core.info(&mut self.link).await
    }

    /// See [`RedisFilter::is_empty`](crate::RedisFilter::is_empty).
    ///
    /// # Errors
    /// As there.
    pub async fn is_empty(&mut self) -> Result<bool, Error> {
        Ok(self.info().await?.ones == 0)
    }

    /// See [`RedisFilter::clear`](crate::RedisFilter::clear).
    ///
    /// # Errors
    /// As there.
    pub async fn clear(&mut self) -> Result<(), Error> {
        self.core.clear(&mut self.link).await
    }

    /// See [`RedisFilter::delete`](crate::RedisFilter::delete).
    ///
    /// # Errors
    /// As there.
    pub async fn delete(mut self) -> Result<C, Error> {
        self.core.delete(&mut self.link).await?;
        Ok(self.link.con)
    }

    /// See [`RedisFilter::download`](crate::RedisFilter::download).
    ///
    /// # Errors
    /// As there.
    pub async fn download(&mut self) -> Result<F, Error> {
        self.core.download(&mut self.link).await
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
