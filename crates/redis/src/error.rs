//! What can go wrong, as one typed error.

/// An error of a shared filter. Every variant names the filter or key concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Invalid sizing parameters (items = 0, a rate outside (0, 1) or NaN, sizes that
    /// overflow), or a local filter that cannot be made from the bytes downloaded.
    #[error(transparent)]
    Filter(#[from] bloomkit_core::Error),

    /// A filter name that cannot be used in a key.
    #[error("invalid filter name {name:?}: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// Sharding that cannot be done: more shards than blocks, a shard over Redis's 512 MiB
    /// string limit, or a classic filter split in several shards.
    #[error("filter {name}: {reason}")]
    InvalidShards {
        /// The filter.
        name: String,
        /// Why.
        reason: String,
    },

    /// [`open`](crate::RedisFilter::open) of a filter that does not exist (or whose creation
    /// never finished).
    #[error("filter {name} does not exist: {detail}")]
    NotFound {
        /// The filter.
        name: String,
        /// What was looked for.
        detail: String,
    },

    /// [`create`](crate::RedisFilter::create) of a filter that exists.
    #[error("filter {name} exists already: open it, or destroy it first")]
    AlreadyExists {
        /// The filter.
        name: String,
    },

    /// A filter larger than the client accepts ([`Options::max_bytes`](crate::Options::max_bytes),
    /// or a local chain's [`max_bytes`](crate::RedisBloomChain::with_max_bytes)), asked for,
    /// reported by the server or declared by a dump: refused before anything is allocated.
    #[error("filter {name}: {} bytes ({bits} bits) is over the limit of {max_bytes} bytes", bits.div_ceil(8))]
    TooLarge {
        /// The filter.
        name: String,
        /// Its size in bits.
        bits: u64,
        /// The limit, in bytes.
        max_bytes: u64,
    },

    /// The server would not allocate the filter's bits (`proto-max-bulk-len`, `maxmemory`):
    /// nothing was written.
    #[error("filter {name}: the server refused to allocate its bits: {detail}")]
    Refused {
        /// The filter.
        name: String,
        /// The server's words.
        detail: String,
    },

    /// Fewer replicas acknowledged an insert within the deadline than
    /// [`Limits::wait_replicas`](crate::Limits::wait_replicas) asks: the primary has the
    /// keys, but a failover now could lose them. Insert them again (inserting is idempotent).
    #[error("filter {name}: {acked} replicas acknowledged the insert, {wanted} asked")]
    Unreplicated {
        /// The filter.
        name: String,
        /// Replicas that acknowledged (the fewest over the batch's groups).
        acked: u64,
        /// Replicas asked for.
        wanted: u32,
    },

    /// The call's deadline ([`Options::timeout`](crate::Options::timeout)) passed before it
    /// finished. A lookup changed nothing; of an insert, the keys in `inserted` are certainly
    /// in the filter, and the others may or may not be: insert them again (inserting is
    /// idempotent).
    #[error("filter {name}: no answer within {limit:?} ({detail})")]
    Timeout {
        /// The filter.
        name: String,
        /// The deadline, from the start of the call.
        limit: std::time::Duration,
        /// Indices in the batch of the keys an insert certainly put in (ascending).
        inserted: Vec<usize>,
        /// How far the call got.
        detail: String,
    },

    /// The filter exists with other parameters than the ones asked for (or than the local
    /// filter given): the field that differs, first in the order `format`, `layout`, `bits`,
    /// `hashes`, `hasher`, `seed`, `items`, `fpr`, `shards`.
    #[error("filter {name}: {field} is {found} in Redis, {expected} here")]
    Mismatch {
        /// The filter.
        name: String,
        /// The configuration field.
        field: &'static str,
        /// The value asked for.
        expected: String,
        /// The value Redis holds.
        found: String,
    },

    /// A key of the filter is gone (a restart without persistence, an eviction, `FLUSHALL`,
    /// a `DEL`): its bits cannot be trusted to answer "absent", so nothing is answered.
    #[error("filter {name}: {detail}; re-create it (its keys are lost) or restore it")]
    Missing {
        /// The filter.
        name: String,
        /// Which key, from the server.
        detail: String,
    },

    /// The filter was deleted and created again (perhaps with other parameters) since this
    /// client opened it: open it again.
    #[error("filter {name} was re-created since it was opened: {detail}; open it again")]
    Recreated {
        /// The filter.
        name: String,
        /// The server's words.
        detail: String,
    },

    /// A key at the filter's name holds another type of value.
    #[error("filter {name}: {detail}")]
    WrongType {
        /// The filter.
        name: String,
        /// The server's words.
        detail: String,
    },

    /// The filter's keys are inconsistent (bits of the wrong length, a configuration field
    /// that does not parse).
    #[error("filter {name}: corrupt: {detail}")]
    Corrupt {
        /// The filter.
        name: String,
        /// What is wrong.
        detail: String,
    },

    /// Redis is over its `maxmemory` and refuses writes (lookups still work).
    #[error("filter {name}: Redis is out of memory (maxmemory reached): {detail}")]
    OutOfMemory {
        /// The filter.
        name: String,
        /// The server's words.
        detail: String,
    },

    /// The server refused the credentials (wrong password or user).
    #[error("authentication failed: {0}")]
    Auth(redis::RedisError),

    /// The user lacks a permission (ACL) the filter's commands need.
    #[error("filter {name}: permission denied: {detail}")]
    NoPermission {
        /// The filter.
        name: String,
        /// The server's words.
        detail: String,
    },

    /// The server lacks the RedisBloom module (or the commands a
    /// [`RedisBloomFilter`](crate::RedisBloomFilter) needs are renamed or forbidden): load
    /// it (`--loadmodule redisbloom.so`), or use Redis 8 or Redis Stack, or use the
    /// module-free [`RedisFilter`](crate::RedisFilter).
    #[error("the server has no RedisBloom module: {detail}")]
    NoModule {
        /// What was missing.
        detail: String,
    },

    /// A RedisBloom filter created `NONSCALING` is full: RedisBloom refuses more keys. Keys
    /// before the one refused in the batch may be in.
    #[error("filter {name} is full: {detail}")]
    Full {
        /// The filter.
        name: String,
        /// The server's words.
        detail: String,
    },

    /// The filter kept changing under a call that needs it still for a moment (a download
    /// while other clients insert): nothing is wrong with it; try again when it is quieter.
    #[error("filter {name} kept changing: {detail}; try again")]
    Busy {
        /// The filter.
        name: String,
        /// What moved.
        detail: String,
    },

    /// A reply larger than the connection reads
    /// ([`RespConnection::max_reply_bytes`](crate::RespConnection::max_reply_bytes)): a
    /// broken proxy or server. The connection is retired ([`Error::Retired`] from then on).
    #[error("filter {name}: a reply of {size} bytes or more, over the limit of {max} bytes")]
    ReplyTooLarge {
        /// The filter.
        name: String,
        /// Bytes the reply has or declares, at least.
        size: u64,
        /// The limit.
        max: u64,
    },

    /// The filter's connection can no longer be trusted: an earlier call was cut by its
    /// deadline in the middle of a command, or its replies did not match its commands (a
    /// proxy that replays, drops or reorders replies), or were too large. Give the filter a
    /// new connection (`replace_connection`).
    #[error("filter {name}: the connection was retired ({detail}); give the filter a new connection with replace_connection")]
    Retired {
        /// The filter.
        name: String,
        /// Why.
        detail: String,
    },

    /// Anything else from the connection or the server: I/O errors, a server stopped, a
    /// refused connection.
    #[error("redis: {0}")]
    Redis(redis::RedisError),
}

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Error {
        match e.kind() {
            redis::ErrorKind::AuthenticationFailed => Error::Auth(e),
            _ if e.code() == Some("WRONGPASS") => Error::Auth(e),
            _ => Error::Redis(e),
        }
    }
}

impl Error {
    /// The typed error for a server error reply to one of the filter's scripts.
    pub(crate) fn from_server(name: &str, code: &str, detail: Option<&str>) -> Option<Error> {
        let name = name.to_owned();
        let detail = detail.unwrap_or("").to_owned();
        Some(match code {
            "BKMISSING" => Error::Missing { name, detail },
            "BKEXISTS" => Error::AlreadyExists { name },
            "BKRECREATED" => Error::Recreated { name, detail },
            "BKWRONGTYPE" | "WRONGTYPE" => Error::WrongType { name, detail },
            "BKREFUSED" => Error::Refused { name, detail },
            "BKCORRUPT" => Error::Corrupt { name, detail },
            "OOM" => Error::OutOfMemory { name, detail },
            "NOPERM" => Error::NoPermission { name, detail },
            _ => return None,
        })
    }

    /// Whether the error says the filter's keys are gone.
    pub fn is_missing(&self) -> bool {
        matches!(self, Error::Missing { .. } | Error::NotFound { .. })
    }

    /// Whether the call's deadline passed ([`Error::Timeout`]).
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }
}
