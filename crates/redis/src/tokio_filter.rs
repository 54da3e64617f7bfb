//! [`AsyncRedisFilter`]: the same operations on tokio connections.

use core::borrow::Borrow;
use core::fmt;

use crate::shared::{Core, KeyOp};
use crate::{Connection, Error, Info, Options, Shape, SharedLayout};

/// [`RedisFilter`](crate::RedisFilter) on an async connection
/// ([`redis::aio::MultiplexedConnection`] or [`redis::cluster_async::ClusterConnection`]):
/// the same operations, the same scripts and the same errors, awaited.
pub struct AsyncRedisFilter<F: SharedLayout, C> {
    core: Core<F>,
    con: C,
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
    pub async fn open_or_create(mut con: C, name: &str, options: &Options) -> Result<Self, Error> {
        let core = Core::open_or_create(&mut con, name, options).await?;
        Ok(AsyncRedisFilter { core, con })
    }

    /// See [`RedisFilter::open`](crate::RedisFilter::open).
    ///
    /// # Errors
    /// As there.
    pub async fn open(mut con: C, name: &str) -> Result<Self, Error> {
        let core = Core::open(&mut con, name).await?;
        Ok(AsyncRedisFilter { core, con })
    }

    /// See [`RedisFilter::insert`](crate::RedisFilter::insert).
    ///
    /// # Errors
    /// As there.
    pub async fn insert(&mut self, key: &F::Key) -> Result<bool, Error> {
        let mut out = Vec::with_capacity(1);
        self.insert_batch_reporting([key], &mut out).await?;
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

    /// See [`RedisFilter::insert_batch`](crate::RedisFilter::insert_batch).
    ///
    /// # Errors
    /// As there.
    pub async fn insert_batch<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        I: IntoIterator,
        I::Item: Borrow<F::Key>,
    {
        let mut out = Vec::new();
        self.insert_batch_reporting(keys, &mut out).await?;
        Ok(out.iter().filter(|&&new| new).count())
    }

    /// See [`RedisFilter::insert_batch_reporting`](crate::RedisFilter::insert_batch_reporting).
    ///
    /// # Errors
    /// As there.
    pub async fn insert_batch_reporting<I>(
        &mut self,
        keys: I,
        out: &mut Vec<bool>,
    ) -> Result<(), Error>
    where
        I: IntoIterator,
        I::Item: Borrow<F::Key>,
    {
        self.core
            .per_key(&mut self.con, KeyOp::Insert, keys, out)
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
            .per_key(&mut self.con, KeyOp::Contains, keys, out)
            .await
    }

    /// See [`RedisFilter::info`](crate::RedisFilter::info).
    ///
    /// # Errors
    /// As there.
    pub async fn info(&mut self) -> Result<Info, Error> {
        self.core.info(&mut self.con).await
    }

    /// See [`RedisFilter::clear`](crate::RedisFilter::clear).
    ///
    /// # Errors
    /// As there.
    pub async fn clear(&mut self) -> Result<(), Error> {
        self.core.clear(&mut self.con).await
    }

    /// See [`RedisFilter::delete`](crate::RedisFilter::delete).
    ///
    /// # Errors
    /// As there.
    pub async fn delete(mut self) -> Result<C, Error> {
        self.core.delete(&mut self.con).await?;
        Ok(self.con)
    }

    /// See [`RedisFilter::download`](crate::RedisFilter::download).
    ///
    /// # Errors
    /// As there.
    pub async fn download(&mut self) -> Result<F, Error> {
        self.core.download(&mut self.con).await
    }

    /// See [`RedisFilter::upload`](crate::RedisFilter::upload).
    ///
    /// # Errors
    /// As there.
    pub async fn upload(&mut self, local: &F) -> Result<(), Error> {
        self.core.put(&mut self.con, local, false).await
    }

    /// See [`RedisFilter::merge`](crate::RedisFilter::merge).
    ///
    /// # Errors
    /// As there.
    pub async fn merge(&mut self, local: &F) -> Result<(), Error> {
        self.core.put(&mut self.con, local, true).await
    }

    accessors!();
}
