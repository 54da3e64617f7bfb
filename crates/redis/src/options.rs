//! What a caller chooses and what a filter reports, for both backends: the deadline and
//! size limits of every call ([`Limits`]), a new filter's parameters ([`Options`],
//! [`RedisBloomOptions`]) and a filter's figures ([`Info`], [`RedisBloomInfo`]). The
//! engines read these; nothing here depends on an engine or a front.

use std::time::Duration;

use bloomkit_core::sizing::Design;

use crate::engine::DEFAULT_MAX_BYTES;
use crate::layout::Layout;
use crate::redisbloom::DEFAULT_EXPANSION;
use crate::Error;

/// What a client accepts from a call: how long it may take, and how large a filter it opens.
///
/// The defaults: a [`DEFAULT_TIMEOUT`] deadline per call, filters up to
/// [`DEFAULT_MAX_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_bytes: u64,
    pub(crate) replicas: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Some(DEFAULT_TIMEOUT),
            max_bytes: DEFAULT_MAX_BYTES,
            replicas: 0,
        }
    }
}

impl Limits {
    /// The default limits.
    pub fn new() -> Limits {
        Limits::default()
    }

    /// The deadline of each call, from its start to its end, all its round trips together
    /// ([`Error::Timeout`] past it); `None`: no deadline (a stalled server stalls the call).
    /// Moving a whole filter ([`RedisFilter::download`](crate::RedisFilter::download), [`RedisFilter::upload`](crate::RedisFilter::upload)) is one
    /// call: give large filters the time they need.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Limits {
        self.timeout = timeout;
        self
    }

    /// The largest filter, in bytes of bits, this client creates or opens
    /// ([`Error::TooLarge`] past it): a server (or a proxy) that reports a larger one cannot
    /// make the client allocate it.
    pub fn max_bytes(mut self, max_bytes: u64) -> Limits {
        self.max_bytes = max_bytes;
        self
    }

    /// Inserts succeed only once `replicas` replicas of each shard's primary hold them
    /// (`WAIT`, within the deadline), [`Error::Unreplicated`] otherwise. Redis replicates
    /// asynchronously: a primary that dies (a crash, a SIGKILL) before its replica has a
    /// write loses it in the failover, and a key a client was told is in would then answer
    /// "absent". With 1 here, an insert that succeeded survives the loss of any one node.
    /// Default 0: inserts return as soon as the primary has them.
    pub fn wait_replicas(mut self, replicas: u32) -> Limits {
        self.replicas = replicas;
        self
    }
}

/// How to create a shared filter: the items and rate it is sized for, the hasher's seed, the
/// number of shards, and the client's [`Limits`].
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub(crate) items: u64,
    pub(crate) fpr: f64,
    pub(crate) seed: u64,
    pub(crate) shards: Option<u32>,
    pub(crate) limits: Limits,
}

impl Options {
    /// A filter for `items` keys at false-positive rate `fpr`, seed 0, as few shards as fit,
    /// the default limits. Checked when the filter is opened ([`Error::Filter`]).
    pub fn new(items: u64, fpr: f64) -> Options {
        Options {
            items,
            fpr,
            seed: bloomkit_core::Xxh3Builder::DEFAULT_SEED,
            shards: None,
            limits: Limits::default(),
        }
    }

    /// The hasher's seed (the local filter must use the same one to have the same bits).
    pub fn seed(mut self, seed: u64) -> Options {
        self.seed = seed;
        self
    }

    /// Splits the bits into `shards` Redis strings by block index (blocked layout only), so
    /// a filter can exceed 512 MiB or spread its load over a cluster's nodes.
    pub fn shards(mut self, shards: u32) -> Options {
        self.shards = Some(shards);
        self
    }

    /// The client's limits ([`Limits`]).
    pub fn limits(mut self, limits: Limits) -> Options {
        self.limits = limits;
        self
    }

    /// The deadline of each call: see [`Limits::timeout`].
    pub fn timeout(mut self, timeout: Option<Duration>) -> Options {
        self.limits.timeout = timeout;
        self
    }

    /// The largest filter this client accepts: see [`Limits::max_bytes`].
    pub fn max_bytes(mut self, max_bytes: u64) -> Options {
        self.limits.max_bytes = max_bytes;
        self
    }

    /// Replicas that must hold an insert before it succeeds: see [`Limits::wait_replicas`].
    pub fn wait_replicas(mut self, replicas: u32) -> Options {
        self.limits.replicas = replicas;
        self
    }
}

/// The deadline of a call unless [`Limits::timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// What [`RedisFilter::info`](crate::RedisFilter::info) reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    /// The layout.
    pub layout: Layout,
    /// `m`, all shards together.
    pub bits: u64,
    /// `k`.
    pub hashes: u32,
    /// Bytes of the bit strings.
    pub bytes: u64,
    /// The number of shards.
    pub shards: u32,
    /// Set bits (`BITCOUNT`).
    pub ones: u64,
    /// Keys inserted, estimated from the set bits (Swamidass & Baldi); infinite once full.
    pub estimated_items: f64,
    /// The false-positive rate at the estimated count.
    pub estimated_fpr: f64,
    /// The items and rate the filter was sized for.
    pub design: Design,
}

/// How to create a RedisBloom filter ([`RedisBloomFilter::reserve`](crate::RedisBloomFilter::reserve), `BF.RESERVE`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedisBloomOptions {
    pub(crate) capacity: u64,
    pub(crate) error_rate: f64,
    pub(crate) expansion: Option<u32>,
    pub(crate) limits: Limits,
}

impl RedisBloomOptions {
    /// A filter for `capacity` keys at false-positive rate `error_rate` that grows by
    /// RedisBloom's default factor ([`DEFAULT_EXPANSION`]) when more come.
    pub fn new(capacity: u64, error_rate: f64) -> RedisBloomOptions {
        RedisBloomOptions {
            capacity,
            error_rate,
            expansion: Some(DEFAULT_EXPANSION),
            limits: Limits::default(),
        }
    }

    /// Each new sub-filter holds `factor` times the keys of the one before (`EXPANSION`);
    /// `None`: the filter never grows (`NONSCALING`) and refuses keys past its capacity
    /// ([`Error::Full`]).
    pub fn expansion(mut self, factor: Option<u32>) -> RedisBloomOptions {
        self.expansion = factor;
        self
    }

    /// The client's limits (deadline per call, largest filter downloaded).
    pub fn limits(mut self, limits: Limits) -> RedisBloomOptions {
        self.limits = limits;
        self
    }

    /// The sizing checked as RedisBloom would, before anything is sent.
    pub(crate) fn check(&self) -> Result<(), Error> {
        crate::redisbloom::chain::check_sizing(self.capacity, self.error_rate, self.expansion)?;
        Ok(())
    }
}

/// What `BF.INFO` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedisBloomInfo {
    /// Keys the filter holds before it grows again (all sub-filters together).
    pub capacity: u64,
    /// Bytes the server uses for it.
    pub size: u64,
    /// Sub-filters.
    pub filters: u64,
    /// Keys inserted (those that were not already answered present).
    pub items: u64,
    /// The growth factor; `None` for a `NONSCALING` filter.
    pub expansion: Option<u64>,
}
