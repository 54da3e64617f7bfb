//! One builder for every Bloom variant.
//!
//! [`Builder`] collects the settings a filter is made with — expected items, target rate,
//! hasher or seed, counter width, growth and limits — and checks them all at once, in
//! [`build`](Builder::build). A setting that a variant has no use for is not a method of
//! its builder: `growth` on a classic filter does not compile, rather than being ignored.
//! The variants name it through their `builder(items, fpr)` constructor, so the chain reads
//! the same for each, and switching variants changes one type name:
//!
//! ```text
//! BloomFilter::builder(n, p).seed(7).max_bytes(1 << 20).build()?
//! CountingBloomFilter::builder(n, p).seed(7).counter::<U8>().build()?
//! ScalableBloomFilter::builder(n, p).seed(7).growth(4).max_items(1 << 30).build()?
//! ```
//!
//! The traits here are how a variant tells the builder what it accepts: [`FromSettings`]
//! (every buildable filter), [`WithHasher`] and [`WithCounter`] (the same filter with another
//! hasher or counter type), and [`Growable`] (a filter that grows, so takes growth,
//! tightening and an item limit).
//!
//! # Examples
//!
//! A stand-in filter (the real ones live in the variant crates) shows the contract:
//!
//! ```
//! use bloomkit_core::build::{Builder, FromSettings, Settings};
//! use bloomkit_core::{Error, Xxh3Builder};
//!
//! #[derive(Debug)]
//! struct Sized { bits: u64, hasher: Xxh3Builder }
//!
//! impl FromSettings for Sized {
//!     type Hasher = Xxh3Builder;
//!     fn from_settings(settings: &Settings, hasher: Xxh3Builder) -> Result<Self, Error> {
//!         let plan = settings.plan()?;             // checks items and rate
//!         settings.check_bytes(plan.bits / 8)?;    // and the memory limit
//!         Ok(Sized { bits: plan.bits, hasher })
//!     }
//! }
//!
//! let f: Sized = Builder::new(1_000, 0.01).seed(7).build()?;
//! assert_eq!(f.hasher, Xxh3Builder::with_seed(7));
//! assert!(Builder::<Sized>::new(1_000, 0.01).max_bytes(100).build().is_err());
//! assert!(Builder::<Sized>::new(0, 0.01).build().is_err());
//! # Ok::<(), Error>(())
//! ```

use core::fmt;

use crate::error::{Error, Limit};
use crate::hash::{ProbeScheme, Xxh3Builder};
use crate::sizing::{self, Design, Plan};

/// The settings a [`Builder`] collected, as a filter's [`FromSettings`] reads them.
///
/// Only the builder makes one, so a filter can trust that the fields a variant does not
/// accept (growth on a classic filter) are `None`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// The number of items the filter is sized for (for a scalable filter, its first slice).
    pub items: u64,
    /// The target false-positive rate.
    pub fpr: f64,
    /// For a [`Growable`] filter: how many times the items of the last slice the next holds.
    pub growth: Option<u32>,
    /// For a [`Growable`] filter: how many times the rate of the last slice the next has.
    pub tightening: Option<f64>,
    /// For a [`Growable`] filter: the most items it takes before refusing inserts.
    pub max_items: Option<u64>,
    /// The most heap memory the filter may take: `build` fails if it needs more, and a
    /// growable filter refuses to grow past it.
    pub max_bytes: Option<u64>,
    /// For a [`Probing`] filter: how keys' positions follow from their hashes (`None`: the
    /// default, [`ProbeScheme::Wide`]).
    pub probes: Option<ProbeScheme>,
    /// For a [`Windowed`] filter: a window over time rather than over inserts, spanning
    /// this many of the caller's time units (the filter cuts it into generations; `None`: a
    /// window of the last `items` inserts).
    pub span: Option<u64>,
    /// For a [`Windowed`] filter: how far past its window a key may still be remembered,
    /// as a fraction of the window (`None`: the filter's default).
    pub slack: Option<f64>,
}

impl Settings {
    /// The design point (items, rate), checked.
    ///
    /// # Errors
    /// [`Error::ZeroItems`], [`Error::InvalidFpr`].
    pub fn design(&self) -> Result<Design, Error> {
        Design::new(self.items, self.fpr)
    }

    /// The classic filter's bits and probes for these items and rate
    /// ([`sizing::plan`]).
    ///
    /// # Errors
    /// As [`sizing::plan`].
    pub fn plan(&self) -> Result<Plan, Error> {
        sizing::plan(self.items, self.fpr)
    }

    /// The design point and the classic plan for a filter of one slot per bit position
    /// (bits, or counters), its size rounded by [`sizing::coprime_bits`] and checked against
    /// [`max_bytes`](Self::max_bytes), where `slots` slots take `bytes(slots)` bytes.
    ///
    /// # Errors
    /// As [`design`](Self::design), [`plan`](Self::plan), [`sizing::coprime_bits`] and
    /// [`check_bytes`](Self::check_bytes).
    pub fn slot_plan(&self, bytes: impl FnOnce(u64) -> u64) -> Result<(Design, Plan), Error> {
        let design = self.design()?;
        let plan = self.plan()?;
        let slots = sizing::coprime_bits(plan.bits, plan.hashes)?;
        self.check_bytes(bytes(slots))?;
        let plan = Plan {
            bits: slots,
            hashes: plan.hashes,
        };
        Ok((design, plan))
    }

    /// `Ok` if `bytes` of heap are within [`max_bytes`](Self::max_bytes).
    ///
    /// # Errors
    /// [`Error::OverLimit`] when they are not.
    pub fn check_bytes(&self, bytes: u64) -> Result<(), Error> {
        match self.max_bytes {
            Some(limit) if bytes > limit => Err(Error::OverLimit {
                what: Limit::Bytes,
                needed: bytes,
                limit,
            }),
            _ => Ok(()),
        }
    }
}

/// A filter a [`Builder`] can make.
pub trait FromSettings: Sized {
    /// The hasher the filter hashes its keys with.
    type Hasher;

    /// The filter for `settings`, hashing with `hasher`: every setting checked here, once.
    ///
    /// # Errors
    /// Whatever is wrong with the settings: invalid items or rate, a growth out of range,
    /// a size over the memory limit or beyond the allocator.
    fn from_settings(settings: &Settings, hasher: Self::Hasher) -> Result<Self, Error>;
}

/// The same filter hashing with `H`: what [`Builder::hasher`] turns a builder into.
pub trait WithHasher<H>: FromSettings {
    /// The filter with hasher `H`.
    type Output: FromSettings<Hasher = H>;
}

/// The same filter with counters of type `C`: what [`Builder::counter`] turns a builder
/// into (counting filters only).
pub trait WithCounter<C>: FromSettings {
    /// The filter with counters `C`.
    type Output: FromSettings<Hasher = Self::Hasher>;
}

/// A filter whose k positions per key come from a [`ProbeScheme`] (the classic and counting
/// filters), so takes [`Builder::probe_scheme`].
pub trait Probing: FromSettings {}

/// A filter that grows as it fills, so takes [`Builder::growth`],
/// [`Builder::tightening`] and [`Builder::max_items`].
pub trait Growable: FromSettings {}

/// A filter over a sliding window (the window filter): it takes a time window and a slack.
pub trait Windowed: FromSettings {}

/// Builds a filter of type `F` with settings other than the defaults; see the
/// [module docs](self).
///
/// Setters only record; [`build`](Self::build) checks everything, so the order of the calls
/// does not matter and a bad value is reported once, by the call that would use it.
#[must_use = "a builder does nothing until `build` is called"]
pub struct Builder<F: FromSettings> {
    settings: Settings,
    hasher: F::Hasher,
}

impl<F: FromSettings> fmt::Debug for Builder<F>
where
    F::Hasher: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("filter", &core::any::type_name::<F>())
            .field("settings", &self.settings)
            .field("hasher", &self.hasher)
            .finish()
    }
}

impl<F: FromSettings> Clone for Builder<F>
where
    F::Hasher: Clone,
{
    fn clone(&self) -> Self {
        Builder {
            settings: self.settings,
            hasher: self.hasher.clone(),
        }
    }
}

impl<F: FromSettings> Builder<F>
where
    F::Hasher: Default,
{
    /// A builder for `items` expected items at false-positive rate `fpr`, with the default
    /// hasher and no limits. Nothing is checked until [`build`](Self::build).
    pub fn new(items: u64, fpr: f64) -> Self {
        Builder {
            settings: Settings {
                items,
                fpr,
                growth: None,
                tightening: None,
                max_items: None,
                max_bytes: None,
                probes: None,
                span: None,
                slack: None,
            },
            hasher: F::Hasher::default(),
        }
    }
}

impl<F: FromSettings> Builder<F> {
    /// The settings recorded so far.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Hash with XXH3-64 seeded with `seed` (the default hasher has seed 0). Filters with
    /// different seeds put keys in different places and cannot be combined.
    pub fn seed(mut self, seed: u64) -> Self
    where
        F: FromSettings<Hasher = Xxh3Builder>,
    {
        self.hasher = Xxh3Builder::with_seed(seed);
        self
    }

    /// Hash with `hasher` instead: the builder then makes the same filter over `H`.
    pub fn hasher<H>(self, hasher: H) -> Builder<F::Output>
    where
        F: WithHasher<H>,
    {
        Builder {
            settings: self.settings,
            hasher,
        }
    }

    /// Use counters of type `C` (a counting filter's width: `U4`, `u8`, `u16`, ...).
    pub fn counter<C>(self) -> Builder<F::Output>
    where
        F: WithCounter<C>,
    {
        Builder {
            settings: self.settings,
            hasher: self.hasher,
        }
    }

    /// Take at most `bytes` of heap: [`build`](Self::build) fails with
    /// [`Error::OverLimit`] if the filter would need more, and a growable filter refuses to
    /// grow past it ([`Error::LimitReached`]).
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.settings.max_bytes = Some(bytes);
        self
    }

    /// Place each key's positions by `scheme` instead of the default
    /// ([`ProbeScheme::Wide`]). [`ProbeScheme::Enhanced`] gives the bits filters of format
    /// versions 1 and 2 have (bloomkit before the wide scheme), so that a new filter can be
    /// combined with, or compared bit for bit against, ones written then.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::hash::ProbeScheme;
    ///
    /// let f = BloomFilter::<u64>::builder(1_000, 0.01)
    ///     .probe_scheme(ProbeScheme::Enhanced)
    ///     .build()?;
    /// assert_eq!(f.probe_scheme(), ProbeScheme::Enhanced);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn probe_scheme(mut self, scheme: ProbeScheme) -> Self
    where
        F: Probing,
    {
        self.settings.probes = Some(scheme);
        self
    }

    /// Each new slice holds `growth` times the items of the last.
    pub fn growth(mut self, growth: u32) -> Self
    where
        F: Growable,
    {
        self.settings.growth = Some(growth);
        self
    }

    /// Each new slice's rate is `ratio` times the last's.
    pub fn tightening(mut self, ratio: f64) -> Self
    where
        F: Growable,
    {
        self.settings.tightening = Some(ratio);
        self
    }

    /// Refuse inserts of new items past `items` in total ([`Error::LimitReached`]).
    pub fn max_items(mut self, items: u64) -> Self
    where
        F: Growable,
    {
        self.settings.max_items = Some(items);
        self
    }

    /// A window over time: the filter remembers the keys of the last `window` time units
    /// (in whatever unit the caller passes its times in). The window is cut into `l`
    /// generations of `window / l` units, each taking `items / l` inserts (rounded up): the
    /// filter is sized for `items` inserts a window arriving evenly, and refuses an insert
    /// past a generation's share (`Error::WindowFull`). See the window filter's docs.
    pub fn over_time(mut self, window: u64) -> Self
    where
        F: Windowed,
    {
        self.settings.span = Some(window);
        self
    }

    /// How far past its window a key may still answer "present", as a fraction of the
    /// window (a window filter's default is 0.1: keys are forgotten by 1.1 windows). A
    /// larger slack means fewer generations: faster lookups, a little less memory.
    pub fn slack(mut self, slack: f64) -> Self
    where
        F: Windowed,
    {
        self.settings.slack = Some(slack);
        self
    }

    /// The filter, every setting checked.
    ///
    /// # Errors
    /// As the filter's [`FromSettings::from_settings`]: [`Error::ZeroItems`] and
    /// [`Error::InvalidFpr`] for bad items or rate, [`Error::OverLimit`] past `max_bytes`,
    /// and the variant's own.
    pub fn build(self) -> Result<F, Error> {
        F::from_settings(&self.settings, self.hasher)
    }
}

/// `new(expected_items, fpr)` and `builder(expected_items, fpr)` for a variant made through
/// [`Builder`] (its type with the default generic parameters: `impl<K> Type<K>`), with their
/// docs and a doctest written once for all variants. The second argument is the crate the
/// type is exported from, for the doctest's `use` line:
///
/// ```text
/// bloomkit_core::impl_builder_entry!(BloomFilter, "bloomkit_classic");
/// ```
///
/// With a third argument `hasher`, also [`WithHasher`] for a type `Type<K, S>` whose last
/// parameter is its hasher (what [`Builder::hasher`] and [`Builder::keyed`] switch).
///
/// Exported only so the variant crates can use it: not part of the public API.
#[doc(hidden)]
#[macro_export]
macro_rules! impl_builder_entry {
    ($ty:ident, $krate:literal, hasher) => {
        $crate::impl_builder_entry!($ty, $krate);

        impl<K, S, H> $crate::build::WithHasher<H> for $ty<K, S>
        where
            K: ?::core::marker::Sized,
            S: ::core::hash::BuildHasher,
            H: ::core::hash::BuildHasher,
        {
            type Output = $ty<K, H>;
        }
    };
    ($ty:ident, $krate:literal) => {
        impl<K: ?::core::marker::Sized> $ty<K> {
            #[doc = concat!(
                "A filter for `expected_items` at false-positive rate `fpr` with the default ",
                "settings: `builder(expected_items, fpr).build()` (see [`", stringify!($ty),
                "::builder`] for the others)."
            )]
            ///
            /// # Errors
            /// [`Error::ZeroItems`](bloomkit_core::Error::ZeroItems),
            /// [`Error::InvalidFpr`](bloomkit_core::Error::InvalidFpr) (outside (0, 1), NaN),
            /// [`Error::UnreachableFpr`](bloomkit_core::Error::UnreachableFpr),
            /// [`Error::TooLarge`](bloomkit_core::Error::TooLarge) or
            /// [`Error::AllocationFailed`](bloomkit_core::Error::AllocationFailed) when it
            /// cannot be stored.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use ", $krate, "::", stringify!($ty), ";")]
            ///
            #[doc = concat!("let f = ", stringify!($ty), "::<u64>::new(1_000_000, 0.01)?;")]
            /// assert!(!f.contains(&7));
            #[doc = concat!("assert!(", stringify!($ty), "::<u64>::new(0, 0.01).is_err());")]
            #[doc = concat!("assert!(", stringify!($ty), "::<u64>::new(10, 1.5).is_err());")]
            /// # Ok::<(), bloomkit_core::Error>(())
            /// ```
            pub fn new(
                expected_items: u64,
                fpr: f64,
            ) -> ::core::result::Result<Self, $crate::Error> {
                Self::builder(expected_items, fpr).build()
            }

            /// A [`Builder`](bloomkit_core::build::Builder) for a filter of `expected_items` at
            /// rate `fpr` with other settings: a memory limit, and where the variant has them
            /// a seed or hasher, a probe scheme, a counter width, growth.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use ", $krate, "::", stringify!($ty), ";")]
            ///
            #[doc = concat!(
                "let f = ", stringify!($ty),
                "::<u64>::builder(10_000, 0.01).max_bytes(1 << 20).build()?;"
            )]
            /// assert!(f.heap_bytes() <= 1 << 20);
            /// // 100 million items at 1% need more than the limit: refused before allocating.
            #[doc = concat!(
                "assert!(", stringify!($ty),
                "::<u64>::builder(100_000_000, 0.01).max_bytes(1 << 20).build().is_err());"
            )]
            /// # Ok::<(), bloomkit_core::Error>(())
            /// ```
            pub fn builder(expected_items: u64, fpr: f64) -> $crate::build::Builder<Self> {
                $crate::build::Builder::new(expected_items, fpr)
            }
        }
    };
}
