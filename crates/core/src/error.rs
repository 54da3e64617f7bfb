//! The one error type every bloomkit filter returns.

use core::fmt;

use crate::Variant;

/// Everything that can go wrong when building, combining, filling or decoding a filter.
///
/// Messages are lowercase and name the offending value, so they read well inside a
/// larger error chain: `false-positive rate must be in (0, 1), got 1.5`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A filter was sized for zero items.
    #[error("expected number of items must be at least 1, got 0")]
    ZeroItems,
    /// A static filter (binary fuse, ribbon) could not be built from its keys in the
    /// bounded number of attempts it makes, each with a new seed. Distinct keys fail all of
    /// them only with negligible probability; see the static filter's docs for when.
    #[error("cannot build a {variant} from {items} keys: every one of {attempts} attempts (each with a new seed) failed")]
    ConstructionFailed {
        /// The structure that was being built.
        variant: Variant,
        /// The number of keys given (duplicates included).
        items: u64,
        /// The number of attempts made.
        attempts: u32,
    },
    /// A filter with a fixed number of slots (the quotient filter) has no room for another
    /// item; nothing was changed. Resize it, or build it for more items.
    #[error("the filter is full: {items} items in {slots} slots (load {:.1}%); nothing was inserted", *.items as f64 * 100.0 / (*.slots).max(1) as f64)]
    Full {
        /// Items held.
        items: u64,
        /// Slots for items.
        slots: u64,
    },
    /// A false-positive rate below the smallest a structure supports (a ribbon filter
    /// compares at most 32 bits per key: 2^-32).
    #[error("false-positive rate {} is below the minimum of {} for {}", Num(*.fpr), Num(*.min), variant.with_article())]
    FprBelowMinimum {
        /// The rate asked for.
        fpr: f64,
        /// The smallest rate the structure supports.
        min: f64,
        /// The structure.
        variant: Variant,
    },
    /// A false-positive rate outside the open interval (0, 1), or NaN.
    #[error("false-positive rate must be in (0, 1), got {}", Num(*.0))]
    InvalidFpr(f64),
    /// A filter of zero bits (or zero counters, or an empty key range).
    #[error("number of bits must be at least 1, got 0")]
    ZeroBits,
    /// A hash-function count outside `1..=max`.
    #[error("number of hash functions must be in 1..={max}, got {got}")]
    InvalidHashCount {
        /// The count that was asked for.
        got: u64,
        /// The largest count bloomkit supports.
        max: u32,
    },
    /// A filter larger than its layout or this platform allows (bits past
    /// [`crate::bits::MAX_BITS`], home slots past a quotient table's 2^40 or past what the
    /// hash's 64 bits can address, items past `u64`): the message names the unit and the
    /// limit that was passed.
    #[error("a filter of {} {what} is larger than the maximum of {max} {what}", Past(*.size, *.max))]
    TooLarge {
        /// What the size counts.
        what: Unit,
        /// The size asked for (a float because it may exceed `u64`; infinite when it
        /// overflows).
        size: f64,
        /// The largest size supported, in the same unit.
        max: u64,
    },
    /// A resize the filter cannot make: the layout's limit, named in `reason`; nothing
    /// was changed.
    #[error("cannot {op} the filter: {reason}")]
    CannotResize {
        /// The resize asked for (`"resize"`, `"shrink"`).
        op: &'static str,
        /// Why not, with the limit.
        reason: String,
    },
    /// A false-positive rate no filter can reach for this many items, because two of them
    /// share their whole 64-bit hash with probability `items / 2^64`.
    #[error("false-positive rate {} is unreachable for {items} items: a 64-bit hash alone gives at least {}", Num(*.fpr), Num(*.floor))]
    UnreachableFpr {
        /// The rate asked for.
        fpr: f64,
        /// The number of items.
        items: u64,
        /// The hash-collision floor, `items / 2^64`.
        floor: f64,
    },
    /// The allocator refused the memory a filter needs.
    #[error("cannot allocate {bytes} bytes for the filter")]
    AllocationFailed {
        /// The size of the refused allocation.
        bytes: u64,
    },
    /// Two filters that cannot be combined (union, intersection) because they were built
    /// differently.
    #[error("cannot combine filters: {what} differ ({left} vs {right})")]
    Incompatible {
        /// Which parameter differs.
        what: Parameter,
        /// The value in the left-hand filter.
        left: u64,
        /// The value in the right-hand filter.
        right: u64,
    },
    /// [`Union::merge_all`](crate::Union::merge_all) was given no filter to merge.
    #[error("cannot merge an empty list of filters: there is no shape to give the result")]
    NoFilters,
    /// [`Union::merge_all`](crate::Union::merge_all) met a filter it cannot merge with the
    /// ones before it; no result was made and no input was changed.
    #[error("cannot merge filter {index} (counting from 0) into the ones before it: {source}")]
    MergeFailed {
        /// The position of the filter in the input.
        index: u64,
        /// Why it could not be merged (usually [`Error::Incompatible`]).
        source: Box<Error>,
    },
    /// A key outside the range a bitmap was built for; nothing was changed.
    #[error("key {key} is outside the bitmap's range {lo}..={hi}")]
    KeyOutOfRange {
        /// The key, formatted.
        key: String,
        /// The lowest key of the range.
        lo: String,
        /// The highest key of the range.
        hi: String,
    },
    /// A key range with no keys in it (`lo > hi`).
    #[error("key range {lo}..={hi} is empty")]
    EmptyRange {
        /// The lower bound given.
        lo: String,
        /// The upper bound given.
        hi: String,
    },
    /// Two bitmaps over different key ranges, which cannot be combined.
    #[error("cannot combine bitmaps over different key ranges: {left} vs {right}")]
    RangeMismatch {
        /// The left-hand range, formatted.
        left: String,
        /// The right-hand range, formatted.
        right: String,
    },
    /// An insert that would take a filter past the hard limit it was built with; nothing
    /// was changed.
    #[error("the filter is at its limit of {limit} {what}; nothing was inserted")]
    LimitReached {
        /// What is limited.
        what: Limit,
        /// The limit.
        limit: u64,
    },
    /// A filter that would need more than the limit it was built with; nothing was
    /// allocated.
    #[error("the filter would need {needed} {what}, over its limit of {limit}")]
    OverLimit {
        /// What is limited.
        what: Limit,
        /// What the filter would need.
        needed: u64,
        /// The limit.
        limit: u64,
    },
    /// A window filter's slack (how far past its window a key may be remembered, as a
    /// fraction of the window) that is not a positive number.
    #[error("a window filter's slack must be a positive fraction of its window, got {}", Num(*.0))]
    InvalidSlack(f64),
    /// A window over time that spans no time.
    #[error("a window over time must span at least one time unit, got 0")]
    ZeroSpan,
    /// A window filter over time whose current generation holds all the inserts it was
    /// sized for: taking more would raise its rate past the target, shifting early would
    /// forget keys still inside the window. Nothing was inserted; build it for more items.
    #[error(
        "the window takes at most {limit} inserts in each span of {span} time units (one \
         generation) and this one is full; nothing was inserted (build it for more items)"
    )]
    WindowFull {
        /// Inserts a generation takes.
        limit: u64,
        /// A generation's span, in the caller's time units.
        span: u64,
    },
    /// A growth factor or tightening ratio a scalable filter cannot use.
    #[error("{} must be {expected}, got {}", .what.name(), Num(*.got))]
    InvalidGrowth {
        /// Which setting: [`Setting::Growth`] or [`Setting::Tightening`].
        what: Setting,
        /// What it must be.
        expected: &'static str,
        /// The value given.
        got: f64,
    },
    /// Two filters whose settings differ, so their union would keep neither's promise (two
    /// scalable filters with different targets, growth or tightening).
    #[error("cannot combine filters: {} differ ({} vs {})", .what.plural(), Num(*.left), Num(*.right))]
    IncompatibleSettings {
        /// Which setting differs.
        what: Setting,
        /// The value in the left-hand filter.
        left: f64,
        /// The value in the right-hand filter.
        right: f64,
    },
    /// A scalable filter could not add the slice a new item needed; nothing was inserted.
    /// The slice's rate is its share of the filter's target (the target times the
    /// tightening ratio to the slice's position, times `1 - ratio`).
    #[error(
        "the scalable filter cannot grow: its slice {slice} would hold {capacity} items at a \
         false-positive rate of {}; {source}",
        Num(*.fpr)
    )]
    GrowthStopped {
        /// The position of the slice in the filter's sequence (0 for the first).
        slice: u32,
        /// The items the slice would be sized for (`u64::MAX` if that overflows).
        capacity: u64,
        /// The slice's own false-positive rate.
        fpr: f64,
        /// Why the slice cannot be had: its size or rate, or the allocator.
        source: Box<Error>,
    },
    /// Words given for a bit array of another length.
    #[error("{bits} bits need {expected} words, got {found}")]
    WordCount {
        /// The length of the array, in bits.
        bits: u64,
        /// The words it needs.
        expected: u64,
        /// The words given.
        found: u64,
    },
    /// Words with bits set at or past the end of the array they are for.
    #[error("bits are set past the end of a {bits}-bit array")]
    StrayBits {
        /// The length of the array, in bits.
        bits: u64,
    },
    /// Words for a blocked filter that do not make whole 512-bit blocks.
    #[error("{words} words do not make whole 512-bit blocks (8 words each)")]
    PartialBlock {
        /// The number of words given.
        words: u64,
    },
    /// A count of set bits larger than the filter they are said to be in.
    #[error("{ones} set bits cannot be in a {bits}-bit filter")]
    InvalidFill {
        /// The set bits given.
        ones: u64,
        /// The filter's bits.
        bits: u64,
    },
    /// A removal of an item that is certainly not in the filter; nothing was changed.
    #[error("the item is not in the filter; nothing was removed")]
    NotPresent,
    /// A record with another number of attributes than the multi-attribute filter holds
    /// (a dynamic record, such as a `Vec<String>`, checked at run time); nothing was changed.
    #[error("the record has {found} attributes, the filter holds records of {expected}")]
    WrongArity {
        /// The attributes of the filter's records.
        expected: usize,
        /// The attributes of the record given.
        found: usize,
    },
    /// An attribute index past the last attribute of a multi-attribute filter's records.
    #[error("there is no attribute {index}: records have {arity} (0..{arity})")]
    NoSuchAttribute {
        /// The index given.
        index: usize,
        /// The attributes of the filter's records.
        arity: usize,
    },
    /// A multi-attribute filter over too few or too many attributes.
    #[error("a multi-attribute filter holds records of 1..={max} attributes, got {arity}")]
    InvalidArity {
        /// The number of attributes asked for.
        arity: usize,
        /// The most a filter supports.
        max: usize,
    },
    /// A declared attribute subset a multi-attribute filter cannot use.
    #[error("attribute subset {subset:?}: {reason}")]
    InvalidSubset {
        /// The subset, as attribute indices.
        subset: Vec<usize>,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An operation the filter, as it was built, cannot do; nothing was changed.
    #[error("not supported by this filter: {0}")]
    Unsupported(&'static str),
    /// Serialized bytes that could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// For generic code that turns any variant's insert error into [`Error`] (the
/// [`Unified`](crate::Unified) adapter): the variants that never refuse have
/// `InsertError = Infallible`.
impl From<core::convert::Infallible> for Error {
    fn from(never: core::convert::Infallible) -> Error {
        match never {}
    }
}

impl Error {
    /// [`DecodeError::Invalid`]: bytes whose structure decoded but whose content is
    /// inconsistent, saying what (for the crates that write a variant's decoder).
    pub fn invalid_bytes(what: impl Into<String>) -> Error {
        Error::Decode(DecodeError::Invalid(what.into()))
    }

    /// This error, found while decoding: a bad parameter read from serialized bytes becomes
    /// [`DecodeError::Parameter`], which keeps it whole (match on it, or follow
    /// [`source`](std::error::Error::source)); decode errors stay as they are.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_core::{DecodeError, Error};
    ///
    /// let e = Error::ZeroItems.into_decode();
    /// assert!(matches!(&e, Error::Decode(DecodeError::Parameter(cause)) if **cause == Error::ZeroItems));
    /// assert_eq!(e.to_string(), "serialized filter has an invalid parameter: expected number of items must be at least 1, got 0");
    /// ```
    pub fn into_decode(self) -> Error {
        match self {
            Error::Decode(_) => self,
            other => Error::Decode(DecodeError::Parameter(Box::new(other))),
        }
    }
}

/// A parameter two filters must share to be combined ([`Error::Incompatible`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Parameter {
    /// The number of bits.
    Bits,
    /// The number of 512-bit blocks.
    Blocks,
    /// The number of counters.
    Counters,
    /// The number of probes per key.
    HashFunctions,
    /// The hash function ([`crate::PortableHasher::ID`]).
    Hashers,
    /// The hasher's seed.
    Seeds,
    /// The number of attributes of a multi-attribute filter's records.
    Attributes,
    /// The attribute subsets a multi-attribute filter keeps a filter for (as bit masks).
    Subsets,
    /// How positions follow from a key's hash ([`crate::hash::ProbeScheme::id`]).
    ProbeSchemes,
    /// The number of home slots of a quotient table.
    HomeSlots,
    /// The fingerprint a key's hash gives: its home slot count times two to its remainder
    /// bits (two quotient tables whose fingerprints agree can be resized to one shape).
    Fingerprints,
}

impl fmt::Display for Parameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Parameter::Bits => "bits",
            Parameter::Blocks => "blocks",
            Parameter::Counters => "counters",
            Parameter::HashFunctions => "hash functions",
            Parameter::Hashers => "hashers",
            Parameter::Seeds => "seeds",
            Parameter::Attributes => "attribute counts",
            Parameter::Subsets => "attribute subsets",
            Parameter::ProbeSchemes => "probe schemes",
            Parameter::HomeSlots => "home slots",
            Parameter::Fingerprints => "fingerprints (home slots times 2^remainder bits)",
        })
    }
}

/// A setting of a growing filter ([`Error::InvalidGrowth`], [`Error::IncompatibleSettings`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// The target false-positive rate.
    TargetFpr,
    /// The number of items the first slice holds.
    InitialCapacity,
    /// The growth factor between slices.
    Growth,
    /// The tightening ratio between slices' rates.
    Tightening,
}

impl Setting {
    /// The setting's name, as in "growth must be ...".
    pub const fn name(self) -> &'static str {
        match self {
            Setting::TargetFpr => "target false-positive rate",
            Setting::InitialCapacity => "initial capacity",
            Setting::Growth => "growth",
            Setting::Tightening => "tightening ratio",
        }
    }

    /// The name of two of them, as in "growth factors differ".
    pub const fn plural(self) -> &'static str {
        match self {
            Setting::TargetFpr => "target false-positive rates",
            Setting::InitialCapacity => "initial capacities",
            Setting::Growth => "growth factors",
            Setting::Tightening => "tightening ratios",
        }
    }
}

/// What the size of [`Error::TooLarge`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unit {
    /// Bits of a bit array or of blocks.
    Bits,
    /// Home slots of a quotient table.
    HomeSlots,
    /// Counters of a counting filter.
    Counters,
    /// Items a filter is sized for.
    Items,
    /// Bytes of a filter's memory.
    Bytes,
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unit::Bits => "bits",
            Unit::HomeSlots => "home slots",
            Unit::Counters => "counters",
            Unit::Items => "items",
            Unit::Bytes => "bytes",
        })
    }
}

/// A size past a maximum: the number, or "more than" the maximum when it overflowed.
struct Past(f64, u64);

impl fmt::Display for Past {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_finite() {
            Num(self.0).fmt(f)
        } else {
            write!(f, "more than {}", self.1)
        }
    }
}

/// A hard limit a filter was built with ([`Error::LimitReached`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The number of items.
    Items,
    /// Bytes of heap memory.
    Bytes,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::Items => "items",
            Limit::Bytes => "bytes",
        })
    }
}

/// A number as a person reads it in a message: plain between 1e-4 and 1e15, in scientific
/// notation outside (`{}` on an `f64` would print 1e-300 as a 300-digit decimal).
#[derive(Clone, Copy)]
pub(crate) struct Num(pub(crate) f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) {
            write!(f, "{x}")
        } else {
            write!(f, "{x:e}")
        }
    }
}

/// Why a serialized filter was rejected by `from_bytes` (see `docs/format.md`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ends before the structure it announces.
    #[error("serialized filter is truncated: needed {needed} bytes, got {available}")]
    Truncated {
        /// How many bytes the structure needs.
        needed: u64,
        /// How many bytes there were.
        available: u64,
    },
    /// The input does not start with bloomkit's magic bytes.
    #[error("not a bloomkit filter: magic bytes are {found:02x?}, expected {expected:02x?}")]
    BadMagic {
        /// The first four bytes of the input.
        found: [u8; 4],
        /// The magic bloomkit writes.
        expected: [u8; 4],
    },
    /// A format version this build cannot read.
    #[error("unsupported format version {found} (this build reads versions 1 to {supported})")]
    UnsupportedVersion {
        /// The version in the input.
        found: u16,
        /// The newest version this build reads (and the one it writes).
        supported: u16,
    },
    /// A variant tag this build does not know.
    #[error("unknown filter variant tag {0}")]
    UnknownVariant(u8),
    /// Bytes of another kind of filter.
    #[error("serialized filter is a {found}, expected a {expected}")]
    WrongVariant {
        /// The variant that was asked for.
        expected: Variant,
        /// The variant the bytes hold.
        found: Variant,
    },
    /// Bytes of a filter built with a keyed hasher ([`KeyedHasher`](crate::hash::KeyedHasher)),
    /// read without its key: the bytes do not hold it.
    #[error(
        "the filter was built with a keyed hasher: read it with its key (from_bytes_with_key)"
    )]
    KeyRequired,
    /// Bytes of a filter built with a keyed hasher, read with another key than its own.
    #[error("the key given is not the key the filter was built with")]
    WrongKey,
    /// Bytes written with another hash function than the one asked for.
    #[error("serialized filter uses hasher id {found}, expected hasher id {expected}")]
    HasherMismatch {
        /// The hasher id of the type being decoded.
        expected: u8,
        /// The hasher id in the input.
        found: u8,
    },
    /// The trailing checksum does not match the content: the bytes were corrupted.
    #[error("serialized filter is corrupted: checksum {stored:#018x} does not match content {computed:#018x}")]
    ChecksumMismatch {
        /// The checksum stored in the input.
        stored: u64,
        /// The checksum of the content as received.
        computed: u64,
    },
    /// Bytes after the end of the announced structure.
    #[error("serialized filter has {0} unexpected trailing bytes")]
    TrailingBytes(u64),
    /// The structure decoded but its content is inconsistent (slices that do not follow their
    /// settings, counts that disagree, padding that is not zero, ...).
    #[error("serialized filter is invalid: {0}")]
    Invalid(String),
    /// A parameter read from the bytes that no filter can have: the error building a filter
    /// with it would give, kept whole.
    #[error("serialized filter has an invalid parameter: {0}")]
    Parameter(Box<Error>),
    /// Reading the bytes from a stream (`Codec::read_from`) failed.
    #[error("cannot read the serialized filter: {message} ({kind:?})")]
    Io {
        /// The kind of the I/O error.
        kind: std::io::ErrorKind,
        /// The I/O error's message.
        message: String,
    },
    /// A zero-copy view cannot use these bytes in place; the owned decoder
    /// (`Codec::from_bytes`) still reads them.
    #[error("cannot view the serialized filter in place: {0}")]
    NotViewable(String),
    /// The bytes are not a Parquet split-block Bloom filter this build reads (a header that
    /// does not parse, a size that is not whole 32-byte blocks, or an algorithm, hash or
    /// compression other than `BLOCK`, `XXHASH`, `UNCOMPRESSED`).
    #[error("not a Parquet split-block Bloom filter: {0}")]
    NotSplitBlock(String),
    /// A probe scheme id this build does not know ([`crate::hash::ProbeScheme::from_id`]).
    #[error("unknown probe scheme id {0} (this build reads 1 and 2)")]
    UnknownProbeScheme(u8),
}

/// Checks that `p` is a usable false-positive rate: finite and strictly between 0 and 1.
///
/// # Errors
/// [`Error::InvalidFpr`] for NaN, infinities, and anything outside (0, 1).
pub fn check_fpr(p: f64) -> Result<f64, Error> {
    if p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(Error::InvalidFpr(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rates and sizes print as a person reads them. Regression: 1e-300 printed as a
    /// 300-digit decimal, and `UnreachableFpr` mixed the two notations.
    #[test]
    fn numbers_in_messages_are_readable() {
        let shown = |x: f64| Num(x).to_string();
        assert_eq!(shown(1.5), "1.5");
        assert_eq!(shown(0.01), "0.01");
        assert_eq!(shown(0.0001), "0.0001");
        assert_eq!(shown(1e-7), "1e-7");
        assert_eq!(shown(9.000000000000014e-16), "9.000000000000014e-16");
        assert_eq!(shown(1e-300), "1e-300");
        assert_eq!(shown(f64::INFINITY), "inf");
        assert_eq!(shown(f64::NAN), "NaN");
        assert_eq!(shown(18446744073709551615.0), "1.8446744073709552e19");
        assert_eq!(
            Error::InvalidFpr(1e-300).to_string(),
            "false-positive rate must be in (0, 1), got 1e-300"
        );
        let e = Error::UnreachableFpr {
            fpr: 1e-19,
            items: 1 << 60,
            floor: 0.0625,
        };
        assert_eq!(
            e.to_string(),
            "false-positive rate 1e-19 is unreachable for 1152921504606846976 items: a 64-bit hash alone gives at least 0.0625"
        );
        assert!(Error::InvalidFpr(1e-300).to_string().len() < 60);
    }
}
