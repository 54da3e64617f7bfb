//! One Bloom filter shared by many processes and machines, kept in Redis.
//!
//! A [`RedisFilter`] keeps the bits of a local bloomkit filter, a [`BlockedBloomFilter`] or a
//! [`BloomFilter`], in a Redis string: the positions come from bloomkit's own hashing on the
//! client, and the string's bytes are exactly the local filter's bit array, so
//! [`download`](RedisFilter::download) gives a local filter equal to one built from the same
//! keys, and [`upload`](RedisFilter::upload) / [`union_with`](RedisFilter::union_with) take one (a
//! filter built offline by a batch job, merged into the shared one).
//!
//! # Examples
//!
//! ```no_run
//! use bloomkit_classic::BlockedBloomFilter;
//! use bloomkit_redis::{Options, RedisFilter};
//!
//! let options = Options::new(10_000_000, 0.01).timeout(Some(std::time::Duration::from_secs(2)));
//! // A connection whose every reply is bounded by the deadline and in size (RespConnection);
//! // any redis::Connection works too, through `open_or_create`.
//! let mut seen: RedisFilter<BlockedBloomFilter<str>> =
//!     RedisFilter::connect_or_create("redis://127.0.0.1:6379/", "crawler:seen", &options)?;
//!
//! // One round trip per batch.
//! let urls = ["https://example.com/", "https://example.org/"];
//! seen.try_insert_batch(urls)?;
//! let mut answers = Vec::new();
//! seen.try_contains_batch(["https://example.com/", "https://example.net/"], &mut answers)?;
//! assert!(answers[0]);
//!
//! // The same bits as a local filter with these parameters.
//! let local: BlockedBloomFilter<str> = seen.download()?;
//! assert!(local.contains("https://example.org/"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What cannot go wrong
//!
//! - **The configuration cannot drift.** The parameters (layout, bits, k, hasher id, seed,
//!   design items and rate, shard count, format version, and for the classic layout the
//!   probe scheme) live in a hash next to the bits. Opening a filter with other parameters
//!   is [`Error::Mismatch`], naming the field. A filter created by an earlier release
//!   (format 2, hasher id 1, a classic filter without the `probes` field) opens as it is.
//! - **Every write checks the filter first, atomically with its work**: an insert is a
//!   transaction (`MULTI`) of a guard script that checks the creation id and the bits' type
//!   and length, the native writes, and a closing script; a failed guard moves the bits
//!   aside so the writes fail, and the closing script puts them back. The writes are one
//!   `BITFIELD SET` per bit, or, when the batch sets a bit for every few hundred bytes of the
//!   shard, a read of the bytes the keys fall in (which keys are new) and one `BITOP OR` of a
//!   string holding the batch's bits. A lookup is that check, native reads (`GETRANGE` of
//!   the bytes the keys' bits are in, merged into few ranges) and the check again. A filter
//!   deleted and re-created underneath a running client gives [`Error::Recreated`], never
//!   answers about other bits, never writes into the new filter.
//! - **A filter whose keys are gone** (a restart without persistence, an eviction,
//!   `FLUSHALL`, a `DEL`) is [`Error::Missing`] on every operation and at
//!   [`open`](RedisFilter::open), naming the key; never "absent".
//! - **Creation is explicit and whole.** [`connect`](RedisFilter::connect) and
//!   [`open`](RedisFilter::open) never create ([`Error::NotFound`]); [`create`](RedisFilter::create),
//!   [`open_or_create`](RedisFilter::open_or_create) and
//!   [`connect_or_create`](RedisFilter::connect_or_create) do. A shard's bits are made
//!   before its configuration, so a refused allocation ([`Error::Refused`]) writes nothing; a
//!   sharded filter is marked complete only when every shard exists, and a creation that
//!   fails half way takes back what it made.
//! - **A way out of every broken state**: [`clear`](RedisFilter::try_clear) and
//!   [`delete`](RedisFilter::delete) work on a filter with lost keys, and
//!   [`destroy`](RedisFilter::destroy) removes whatever is left of a name without opening it.
//! - **One deadline per call** ([`Limits::timeout`], default [`DEFAULT_TIMEOUT`]) over all
//!   its round trips: [`Error::Timeout`] says how far the call got. Inserts can wait for
//!   replicas ([`Limits::wait_replicas`]) so a crashed primary loses no acknowledged key.
//! - **Bounded by the client**: every size, count and bit the server sends is checked
//!   before use ([`Limits::max_bytes`]: [`Error::TooLarge`]; impossible values:
//!   [`Error::Corrupt`]), and [`download`](RedisFilter::download) streams into the local
//!   filter.
//! - **Scripts survive any cache loss**: a call refused for want of a script (`NOSCRIPT`:
//!   a restart, a failover, `SCRIPT FLUSH`) is sent again with the script inline, to the node
//!   that refused it.
//! - Nothing a caller passes is spliced into a script: names are validated and travel as
//!   `KEYS`, everything else as `ARGV`.
//!
//! # Redis Cluster and size
//!
//! Keys carry hash tags (`bloomkit:{name#shard}:cfg` and `bloomkit:{name#shard}:bits`, see
//! [`RedisFilter::keys`]), so a shard's bits and configuration share a slot. Keys starting
//! `bloomkit:{` are this crate's: a RedisBloom filter may not be named so
//! ([`Error::InvalidName`]), so the two backends' keys never meet. A blocked filter can be split at creation into S shards by
//! block index ([`Options::shards`]); by default it gets as few as keep every shard within
//! Redis's 512 MiB string limit. Batches group keys by shard, and a cluster connection
//! pipelines them per node. Use a [`redis::cluster::ClusterConnection`] as the connection.
//!
//! # RedisBloom
//!
//! Where the RedisBloom module runs (Redis 8, Redis Stack, managed services),
//! [`RedisBloomFilter`] drives its filters (`BF.*`) with the same guards, typed errors,
//! deadlines and batching, and [`RedisBloomChain`] is RedisBloom's filter locally: read from
//! a `BF.SCANDUMP` to answer without a round trip, or built offline and loaded with
//! `BF.LOADCHUNK`. The server hashes, so keys are bytes and any client in any language
//! agrees on them. See [`RedisBloomFilter`] for what each promises.
//!
//! # Requirements
//!
//! Redis 7.0 or later (or Valkey): the scripts declare their flags (`#!lua`) so lookups
//! run under `maxmemory` and on read-only nodes. With the `tokio` feature,
//! `AsyncRedisFilter` offers the same operations on tokio connections; with `tls`,
//! `rediss://` URLs work.

#![forbid(unsafe_code)]

mod cluster;
mod engine;
mod error;
mod exec;
mod front;
mod layout;
mod options;
mod redisbloom;
mod scripts;
mod slot;
mod transport;
mod wire;

use core::borrow::Borrow;
use core::fmt;

pub use bloomkit_classic::{BlockedBloomFilter, BloomFilter};
pub use bloomkit_core::sizing::Design;
pub use cluster::RespCluster;
pub use engine::{DEFAULT_MAX_BYTES, MAX_SHARDS, MAX_SHARD_BYTES};
pub use error::Error;
pub use exec::{Batch, Connection};
pub use exec::{Replies, Round};
pub use layout::{Layout, Shape, SharedLayout};
pub use options::{Info, Limits, Options, RedisBloomInfo, RedisBloomOptions, DEFAULT_TIMEOUT};
#[cfg(feature = "tokio")]
pub use redisbloom::AsyncRedisBloomFilter;
pub use redisbloom::{
    RedisBloomChain, RedisBloomFilter, RedisBloomLink, DEFAULT_EXPANSION, MAX_CHUNK_BYTES,
};
#[cfg(feature = "tokio")]
pub use wire::AsyncRespConnection;
pub use wire::{RespConnection, DEFAULT_MAX_REPLY_BYTES};

use std::time::Duration;

use engine::Core;
use exec::block_on;
use transport::Link;

/// The module-free filter's own accessors, for its synchronous and tokio fronts (what both
/// backends share is [`front::ops!`]'s).
macro_rules! accessors {
    () => {
        /// The filter's shape (which bits a key sets).
        pub fn shape(&self) -> &Shape {
            self.core.shape()
        }

        /// The number of shards.
        pub fn shards(&self) -> u32 {
            self.core.shard_count()
        }

        /// The Redis keys of each shard, in order: its configuration hash and its bits string
        /// (`bloomkit:{name#shard}:cfg`, `bloomkit:{name#shard}:bits`; a filter of format 2
        /// has `bits:<creation id>`). For
        /// monitoring (`MEMORY USAGE`), ACL rules and backups; the filter's own calls are the
        /// only safe way to change them.
        pub fn keys(&self) -> Vec<(&str, &str)> {
            self.core.keys()
        }
    };
}

/// A Redis Cluster client of the redis crate whose own retries fit the filter's deadline, as
/// far as they can: [`RespCluster`] is the cluster connection whose every step ends by the
/// deadline (a primary killed and left dead held one insert through this client 8.9 s
/// against a 2 s deadline, inside the redis crate's reconnects).
///
/// The redis crate's cluster connections retry a refused or redirected command on their own
/// (16 times by default, with waits growing to a minute): inside one round trip, where the
/// filter's deadline cannot reach, a failover or a node that comes back can hold a call for
/// minutes. This client retries 4 times with waits of at most 250 ms, connects within a
/// second (or the deadline, if shorter) and waits for a reply at most the deadline, so a call
/// ends close to [`Limits::timeout`] whatever the cluster does. `nodes` are the seed nodes'
/// URLs, as [`redis::cluster::ClusterClient::new`] takes them.
///
/// # Errors
/// [`Error::Redis`] for a node URL the redis crate does not accept.
pub fn cluster_client<T: redis::IntoConnectionInfo>(
    nodes: impl IntoIterator<Item = T>,
    limits: &Limits,
) -> Result<redis::cluster::ClusterClient, Error> {
    let mut builder = redis::cluster::ClusterClient::builder(nodes)
        .retries(4)
        .min_retry_wait(10)
        .max_retry_wait(250)
        .retry_wait_formula(20, 2)
        .connection_timeout(
            limits
                .timeout
                .map_or(Duration::from_secs(1), |t| t.min(Duration::from_secs(1))),
        );
    if let Some(timeout) = limits.timeout {
        builder = builder.response_timeout(timeout);
    }
    Ok(builder.build()?)
}

/// A filter shared through Redis, whose bits are those of the local filter type `F`
/// ([`BlockedBloomFilter`] or [`BloomFilter`]), over the connection `C` (a
/// [`redis::Connection`] or a [`redis::cluster::ClusterConnection`]).
///
/// Each operation is one round trip (per node, in a cluster) and every error is typed
/// ([`Error`]). Share a filter between threads by opening it once per thread, each with its
/// own connection.
pub struct RedisFilter<F: SharedLayout, C = RespConnection> {
    core: Core<F>,
    link: Link<C>,
}

impl<F: SharedLayout, C> fmt::Debug for RedisFilter<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.core.fmt(f)
    }
}

impl<F: SharedLayout> RedisFilter<F, RespConnection> {
    /// Connects to `url` and opens the existing filter `name` (default [`Limits`]): never
    /// creates one. `url` is `redis://[user:password@]host:port[/db]` or `unix:///path`;
    /// the connection is a [`RespConnection`], which bounds every reply by the deadline and
    /// in size. Connecting obeys the deadline too. For `rediss://` (TLS), open a
    /// [`redis::Connection`] and pass it to [`open`](RedisFilter::open).
    ///
    /// # Errors
    /// [`Error::Auth`] for refused credentials, [`Error::Redis`] for a bad URL or a server
    /// that cannot be reached (or does not answer within [`DEFAULT_TIMEOUT`]), and as
    /// [`open`](RedisFilter::open).
    pub fn connect(url: &str, name: &str) -> Result<Self, Error> {
        let con = RespConnection::open(url, Limits::default().timeout)?;
        Self::open(con, name)
    }

    /// Connects to `url` and opens the filter `name` if it exists with these parameters, or
    /// creates it: see [`open_or_create`](RedisFilter::open_or_create).
    ///
    /// # Errors
    /// As [`connect`](RedisFilter::connect) and
    /// [`open_or_create`](RedisFilter::open_or_create).
    pub fn connect_or_create(url: &str, name: &str, options: &Options) -> Result<Self, Error> {
        let con = RespConnection::open(url, options.limits.timeout)?;
        Self::open_or_create(con, name, options)
    }
}

impl<F: SharedLayout, C: Connection> RedisFilter<F, C> {
    front::ops!(
        sync [],
        key: &F::Key,
        item: [Borrow<F::Key>],
        info: Info,
        local: F,
        engine: Core<F>,
    );

    /// Opens the filter `name` if it exists with these parameters, or creates it (every
    /// shard, each atomically; the filter is marked complete once every shard exists, and a
    /// creation that fails half way takes back what it made).
    ///
    /// A server restarted without persistence, flushed or evicted has lost the filter: this
    /// creates it again, empty, and every key inserted before is gone. Where that must not
    /// happen silently, [`open`](Self::open) the filter (an error when it is gone) and
    /// [`create`](Self::create) it only on purpose.
    ///
    /// # Errors
    /// [`Error::Filter`] for invalid options, [`Error::InvalidName`],
    /// [`Error::InvalidShards`], [`Error::TooLarge`] past [`Limits::max_bytes`],
    /// [`Error::Mismatch`] when it exists with other parameters, [`Error::WrongType`] when
    /// a key of another type is in the way, [`Error::Missing`] when a key of an existing
    /// filter is gone, [`Error::Refused`] when the server will not allocate the bits,
    /// [`Error::Timeout`], and connection errors.
    pub fn open_or_create(con: C, name: &str, options: &Options) -> Result<Self, Error> {
        let mut link = Link::new(con);
        let (core, _) = block_on(Core::open_or_create(&mut link, name, options))?;
        Ok(RedisFilter { core, link })
    }

    /// Creates the filter `name`, empty.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`] when a filter of that name exists, and as
    /// [`open_or_create`](Self::open_or_create).
    pub fn create(con: C, name: &str, options: &Options) -> Result<Self, Error> {
        let mut link = Link::new(con);
        let core = block_on(Core::create(&mut link, name, options))?;
        Ok(RedisFilter { core, link })
    }

    /// Removes every key of the filter `name` that can be found, whatever state it is in (a
    /// lost configuration, lost bits, an unfinished creation), without opening it: the way
    /// out for a filter [`open`](Self::open) refuses. Returns how many keys were removed (0:
    /// there was nothing). Other clients of the filter get [`Error::Missing`] from then on.
    ///
    /// # Errors
    /// [`Error::InvalidName`], [`Error::Timeout`] past `timeout`, and connection errors.
    pub fn destroy(con: &mut C, name: &str, timeout: Option<Duration>) -> Result<u64, Error> {
        let mut link = Link::new(con);
        block_on(engine::destroy(&mut link, name, timeout))
    }

    /// Whether no bit is set in any shard (nothing was inserted since the filter was created
    /// or cleared): [`info`](Self::info)'s `ones == 0`, one `BITCOUNT` per shard.
    ///
    /// # Errors
    /// As [`info`](Self::info).
    pub fn try_is_empty(&mut self) -> Result<bool, Error> {
        Ok(self.info()?.ones == 0)
    }

    /// Removes every key (zeroes the bits, each shard atomically), keeping the filter.
    ///
    /// # Errors
    /// As [`try_insert`](Self::try_insert).
    pub fn try_clear(&mut self) -> Result<(), Error> {
        block_on(self.core.clear(&mut self.link))
    }

    /// Makes the shared bits equal to `local`'s (same parameters required). The bytes are
    /// staged next to each shard and swapped in atomically per shard; keys other clients
    /// insert during the upload and that `local` lacks are lost (use
    /// [`union_with`](Self::union_with) when others write).
    ///
    /// # Errors
    /// [`Error::Mismatch`] when `local` has other parameters, and as
    /// [`try_insert`](Self::try_insert).
    pub fn upload(&mut self, local: &F) -> Result<(), Error> {
        block_on(self.core.put(&mut self.link, local, false))
    }

    /// ORs `local`'s bits into the shared ones (same parameters required): afterwards the
    /// shared filter holds the keys of both, and no key another client inserts meanwhile is
    /// lost.
    ///
    /// # Errors
    /// As [`upload`](Self::upload).
    pub fn union_with(&mut self, local: &F) -> Result<(), Error> {
        block_on(self.core.put(&mut self.link, local, true))
    }

    accessors!();
}

#[cfg(feature = "tokio")]
mod tokio_filter;
#[cfg(feature = "tokio")]
pub use tokio_filter::AsyncRedisFilter;
