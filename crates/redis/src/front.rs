//! The front ends, written once: [`RedisFilter`](crate::RedisFilter) and
//! [`RedisBloomFilter`](crate::RedisBloomFilter), and their tokio twins, hold an engine
//! (`core`: [`crate::engine`] or [`crate::redisbloom`]'s) and a [`Link`](crate::transport::Link)
//! (`link`), and share every operation on keys, the reports, the deadline and the
//! connection. [`ops!`] writes them, with their docs, for one front: `sync` drives the
//! engine's `async fn`s with [`crate::exec::block_on`], `tokio` awaits them. What only one
//! backend has (the module-free filter's shards and shape, `BF.CARD`) stays with its front.

/// The operations every front has. `$mode` is `sync` or `tokio` (with `async` in brackets
/// for the latter); `key` is how one key is taken, `item` the bound on a batch's items,
/// `info` and `local` what [`info`] and [`download`] return.
macro_rules! ops {
    // An engine future, driven: blocked on in a synchronous front, awaited in a tokio one.
    (@engine sync, $future:expr) => {
        $crate::exec::block_on($future)
    };
    (@engine tokio, $future:expr) => {
        $future.await
    };
    // A call of the front's own method (`async` in a tokio front).
    (@own sync, $call:expr) => {
        $call
    };
    (@own tokio, $call:expr) => {
        $call.await
    };
    (
        $mode:ident [$($async:ident)?],
        key: $key:ty,
        item: [$($item:tt)+],
        info: $info:ty,
        local: $local:ty,
        engine: $engine:ty $(,)?
    ) => {
        /// Opens the existing filter `name` with the default
        /// [`Limits`](crate::Limits), checking everything Redis holds before using it.
        ///
        /// # Errors
        /// [`Error::NotFound`](crate::Error::NotFound) when there is no such filter,
        /// [`Error::Missing`](crate::Error::Missing) naming a key of it that is gone,
        /// [`Error::Mismatch`](crate::Error::Mismatch) or
        /// [`Error::WrongType`](crate::Error::WrongType) when it is another kind of filter,
        /// [`Error::TooLarge`](crate::Error::TooLarge),
        /// [`Error::Corrupt`](crate::Error::Corrupt) for what cannot be,
        /// [`Error::Timeout`](crate::Error::Timeout), and connection errors.
        pub $($async)? fn open(con: C, name: &str) -> Result<Self, Error> {
            $crate::front::ops!(@own $mode, Self::open_with(con, name, &crate::Limits::default()))
        }

        /// [`open`](Self::open) with these limits.
        ///
        /// # Errors
        /// As [`open`](Self::open).
        pub $($async)? fn open_with(con: C, name: &str, limits: &crate::Limits) -> Result<Self, Error> {
            let mut link = $crate::transport::Link::new(con);
            let core = $crate::front::ops!(@engine $mode, <$engine>::open(&mut link, name, limits))?;
            Ok(Self { core, link })
        }

        /// Inserts `key`. Returns `true` if it was certainly not present before.
        ///
        /// # Errors
        /// [`Error::Missing`](crate::Error::Missing) and
        /// [`Error::Recreated`](crate::Error::Recreated) when the filter was lost or made
        /// again, [`Error::WrongType`](crate::Error::WrongType),
        /// [`Error::Full`](crate::Error::Full) (a full RedisBloom filter that does not
        /// scale), [`Error::OutOfMemory`](crate::Error::OutOfMemory),
        /// [`Error::Timeout`](crate::Error::Timeout), and connection errors.
        pub $($async)? fn try_insert(&mut self, key: $key) -> Result<bool, Error> {
            let mut out = Vec::with_capacity(1);
            $crate::front::ops!(@own $mode, self.try_insert_batch_reporting([key], &mut out))?;
            Ok(out[0])
        }

        /// Whether `key` may be in the filter (`try_`: a remote lookup can fail).
        ///
        /// # Errors
        /// As [`try_insert`](Self::try_insert), but for the errors of a full server.
        pub $($async)? fn try_contains(&mut self, key: $key) -> Result<bool, Error> {
            let mut out = Vec::with_capacity(1);
            $crate::front::ops!(@own $mode, self.try_contains_batch([key], &mut out))?;
            Ok(out[0])
        }

        /// Inserts `keys` in one round trip (very large batches are several transactions in
        /// one pipeline). Returns how many were certainly not present before.
        ///
        /// # Errors
        /// As [`try_insert`](Self::try_insert). On an error some keys may be in and others
        /// not: insert the batch again (inserting is idempotent).
        pub $($async)? fn try_insert_batch<I>(&mut self, keys: I) -> Result<usize, Error>
        where
            I: IntoIterator,
            I::Item: $($item)+,
        {
            let mut out = Vec::new();
            $crate::front::ops!(@own $mode, self.try_insert_batch_reporting(keys, &mut out))?;
            Ok(out.iter().filter(|&&new| new).count())
        }

        /// Inserts `keys` in one round trip, appending to `out`, for each in order, whether
        /// it was certainly not present before: a test-and-set, atomic per key, so of
        /// several processes inserting the same key at once exactly one is told it is new
        /// (unless it was a false positive already). De-duplicating workers fetch only what
        /// this says is new.
        ///
        /// # Errors
        /// As [`try_insert_batch`](Self::try_insert_batch); `out` is left as it was.
        pub $($async)? fn try_insert_batch_reporting<I>(
            &mut self,
            keys: I,
            out: &mut Vec<bool>,
        ) -> Result<(), Error>
        where
            I: IntoIterator,
            I::Item: $($item)+,
        {
            let len = out.len();
            $crate::front::ops!(@engine $mode, $crate::transport::per_key(&self.core, &mut self.link, $crate::transport::KeyOp::Insert, keys, out))
                .inspect_err(|_| out.truncate(len))
        }

        /// Appends to `out`, for each of `keys` in order, whether it may be in the filter:
        /// one round trip.
        ///
        /// # Errors
        /// As [`try_contains`](Self::try_contains); `out` is left as it was.
        pub $($async)? fn try_contains_batch<I>(&mut self, keys: I, out: &mut Vec<bool>) -> Result<(), Error>
        where
            I: IntoIterator,
            I::Item: $($item)+,
        {
            let len = out.len();
            $crate::front::ops!(@engine $mode, $crate::transport::per_key(&self.core, &mut self.link, $crate::transport::KeyOp::Contains, keys, out))
                .inspect_err(|_| out.truncate(len))
        }

        /// The filter's figures, read from the server.
        ///
        /// # Errors
        /// As [`try_contains`](Self::try_contains).
        pub $($async)? fn info(&mut self) -> Result<$info, Error> {
            $crate::front::ops!(@engine $mode, self.core.info(&mut self.link))
        }

        /// The whole filter as a local one, answering exactly as the server for every key.
        ///
        /// # Errors
        /// [`Error::TooLarge`](crate::Error::TooLarge) past the limits'
        /// [`max_bytes`](crate::Limits::max_bytes),
        /// [`Error::Corrupt`](crate::Error::Corrupt), and as
        /// [`try_contains`](Self::try_contains).
        pub $($async)? fn download(&mut self) -> Result<$local, Error> {
            $crate::front::ops!(@engine $mode, self.core.download(&mut self.link))
        }

        /// Deletes the filter (every key of it, each step atomic). Other clients get
        /// [`Error::Missing`](crate::Error::Missing) from then on. Returns the connection.
        ///
        /// # Errors
        /// As [`try_insert`](Self::try_insert).
        pub $($async)? fn delete(mut self) -> Result<C, Error> {
            $crate::front::ops!(@engine $mode, self.core.delete(&mut self.link))?;
            Ok(self.link.con)
        }

        /// The filter's name.
        pub fn name(&self) -> &str {
            self.core.name()
        }

        /// The deadline of each call ([`Limits::timeout`](crate::Limits::timeout)).
        pub fn timeout(&self) -> Option<Duration> {
            self.core.timeout()
        }

        /// Changes the deadline of each call from now on.
        pub fn set_timeout(&mut self, timeout: Option<Duration>) {
            self.core.set_timeout(timeout);
        }

        /// The connection, for other commands. After a call that ended at its deadline,
        /// the replies it did not read are still on their way: the filter's next call
        /// passes over them, but a command sent here directly would take one of them for
        /// its own. Send other commands on another connection, or only after a call of the
        /// filter has succeeded. A connection assigned here in place of the old one works
        /// (the next call finds it has nothing unread), but one the filter retired stays
        /// retired: use [`replace_connection`](Self::replace_connection).
        pub fn connection(&mut self) -> &mut C {
            &mut self.link.con
        }

        /// Gives the filter `con` in place of its connection, and returns the old one: the
        /// way on after [`Error::Retired`](crate::Error::Retired) or a call cut by its
        /// deadline.
        pub fn replace_connection(&mut self, con: C) -> C {
            self.link.replace(con)
        }
    };
}

pub(crate) use ops;
