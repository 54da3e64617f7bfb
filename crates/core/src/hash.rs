//! One 64-bit hash per key, and the k probe positions derived from it.
//!
//! Every bloomkit filter hashes a key exactly once, with a [`BuildHasher`] (by default
//! [`Xxh3Builder`]: XXH3-64 with a seed), and derives all k bit positions from that one
//! value: a classic-layout filter by its [`ProbeScheme`] ([`WideProbes`], or [`Probes`] for
//! filters written before format version 3), a blocked filter with [`BlockProbe`]. Callers
//! who query several filters with the same key can hash it
//! once with [`Lookup::hash_key`](crate::Lookup::hash_key) and reuse the value.
//!
//! # Portability
//!
//! [`Xxh3Hasher`] writes every integer in little-endian order and every `usize`/`isize`
//! as 64 bits, so a key whose `Hash` impl is built from integers, strings and slices
//! hashes to the same value on every platform, in every process, on every run, and
//! (pinned by golden tests) across bloomkit releases. That is what lets a filter built in
//! one process answer identically in another ([`PortableHasher`] records the hasher and
//! seed in the serialized bytes).

use core::hash::{BuildHasher, Hash, Hasher};

pub use crate::xxh3::xxh64;
use crate::xxh3::{load_word, xxh3, xxh3_word, WORD};

/// The integer writes of bloomkit's hashers: little-endian on every platform, `usize` and
/// `isize` as 64 bits, so 32- and 64-bit, little- and big-endian machines agree.
macro_rules! little_endian_writes {
    () => {
        #[inline(always)]
        fn write_u8(&mut self, i: u8) {
            self.write(&[i]);
        }
        #[inline(always)]
        fn write_u16(&mut self, i: u16) {
            self.write(&i.to_le_bytes());
        }
        #[inline(always)]
        fn write_u32(&mut self, i: u32) {
            self.write(&i.to_le_bytes());
        }
        #[inline(always)]
        fn write_u64(&mut self, i: u64) {
            self.write(&i.to_le_bytes());
        }
        #[inline(always)]
        fn write_u128(&mut self, i: u128) {
            self.write(&i.to_le_bytes());
        }
        #[inline(always)]
        fn write_usize(&mut self, i: usize) {
            self.write(&(i as u64).to_le_bytes());
        }
        #[inline(always)]
        fn write_isize(&mut self, i: isize) {
            self.write(&(i as i64).to_le_bytes());
        }
    };
}

pub use crate::arch::{
    block_contains_fast, block_contains_inlined, portable_split_block_contains,
    portable_split_block_insert, split_block_contains, split_block_contains_inlined,
    split_block_insert, split_block_mask, SPLIT_BLOCK_SALT,
};

/// A [`BuildHasher`] whose output depends only on the key and a recorded seed, never on the
/// process, platform or Rust release, so that a filter using it can be serialized.
///
/// bloomkit reserves ids `0..=127`; pick an id of 128 or more for a hasher of your own.
///
/// # Implementing
///
/// Return the same `hash_one` for the same key and seed everywhere, and rebuild exactly
/// that hasher in [`from_spec`](PortableHasher::from_spec). Changing the output of an
/// existing id silently breaks every filter stored with it: use a new id instead.
pub trait PortableHasher: BuildHasher {
    /// The id written into serialized filters.
    const ID: u8;
    /// A short name for messages.
    const NAME: &'static str;

    /// The seed this hasher was built with (for [`KeyedHasher`], a check value of its key).
    fn seed(&self) -> u64;

    /// The (id, seed) pair that identifies this hasher.
    fn spec(&self) -> HasherSpec {
        HasherSpec {
            id: Self::ID,
            seed: self.seed(),
        }
    }

    /// A hasher of the same kind (the same id, the same key if it has one) with another
    /// seed: what a filter made of parts seeded apart (the multi-attribute filter) gives each
    /// part.
    fn reseeded(&self, seed: u64) -> Self
    where
        Self: Sized;

    /// The hasher a serialized filter names, if it is this type and needs nothing the bytes
    /// do not hold.
    ///
    /// # Errors
    /// [`DecodeError::HasherMismatch`](crate::DecodeError::HasherMismatch) when `spec` names
    /// another hasher; [`DecodeError::KeyRequired`](crate::DecodeError::KeyRequired) for a
    /// keyed hasher, whose key the bytes do not hold.
    fn from_spec(spec: HasherSpec) -> Result<Self, crate::DecodeError>
    where
        Self: Sized;

    /// As [`from_spec`](PortableHasher::from_spec), with the secret key a keyed hasher
    /// needs (ignored by unkeyed hashers).
    ///
    /// # Errors
    /// As [`from_spec`](PortableHasher::from_spec), and
    /// [`DecodeError::WrongKey`](crate::DecodeError::WrongKey) when `key` is not the key the
    /// filter was written with.
    fn from_spec_with_key(spec: HasherSpec, key: &HashKey) -> Result<Self, crate::DecodeError>
    where
        Self: Sized,
    {
        let _ = key;
        Self::from_spec(spec)
    }
}

/// The error of a hasher that is not the one `spec` names.
fn mismatch<S: PortableHasher>(spec: HasherSpec) -> crate::DecodeError {
    crate::DecodeError::HasherMismatch {
        expected: S::ID,
        found: spec.id,
    }
}

/// A 128-bit secret key for [`KeyedHasher`]. Its `Debug` shows no key material.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HashKey([u64; 2]);

impl HashKey {
    /// The key of these 16 bytes (little-endian halves). Keep them secret, and as long as
    /// filters built with them must be read back: the bytes of such a filter do not hold
    /// the key.
    pub const fn new(bytes: [u8; 16]) -> Self {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        let mut i = 0;
        while i < 8 {
            lo[i] = bytes[i];
            hi[i] = bytes[8 + i];
            i += 1;
        }
        HashKey([u64::from_le_bytes(lo), u64::from_le_bytes(hi)])
    }

    /// A key from the operating system's randomness (through the keys of std's
    /// `RandomState`, which the OS seeds), different in every call.
    pub fn random() -> Self {
        use std::collections::hash_map::RandomState;
        let a = RandomState::new().hash_one(0x6b65_795f_6c6f_u64);
        let b = RandomState::new().hash_one(0x6b65_795f_6869_u64);
        HashKey([a, b])
    }

    /// The key's 16 bytes, to store it (in a secret store, not beside the filter).
    pub const fn to_bytes(&self) -> [u8; 16] {
        let lo = self.0[0].to_le_bytes();
        let hi = self.0[1].to_le_bytes();
        let mut out = [0u8; 16];
        let mut i = 0;
        while i < 8 {
            out[i] = lo[i];
            out[8 + i] = hi[i];
            i += 1;
        }
        out
    }

    /// SipHash-1-3 of `bytes` under this key.
    fn prf(&self, bytes: &[u8]) -> u64 {
        let mut h = siphasher::sip::SipHasher13::new_with_keys(self.0[0], self.0[1]);
        h.write(bytes);
        h.finish()
    }
}

impl core::fmt::Debug for HashKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("HashKey(<secret>)")
    }
}

/// A keyed hasher for filters exposed to keys an adversary chooses: SipHash-1-3 (the PRF
/// behind Rust's own `HashMap`) under a 128-bit secret [`HashKey`].
///
/// With a plain seed ([`Xxh3Builder`]), someone who can query a filter and see its answers
/// can search offline for keys that collide with its bits (XXH3 is not a keyed function:
/// the seed is recoverable from outputs), and so craft false positives, or fill a filter
/// with few keys. Under a secret key, the positions of a key are unpredictable without the
/// key. The key is never written into the filter's bytes: they record hasher id 3 and a
/// check value of the key (SipHash of a constant under it, which reveals nothing of the
/// key), so reading them needs the key ([`Codec::from_bytes_with_key`]), and a wrong key is
/// refused ([`DecodeError::WrongKey`]) instead of answering with other bits.
///
/// It costs more per key than XXH3 (see `docs/performance.md`, "Keyed hashing").
///
/// [`Codec::from_bytes_with_key`]: crate::Codec::from_bytes_with_key
/// [`DecodeError::WrongKey`]: crate::DecodeError::WrongKey
///
/// # Examples
///
/// ```
/// use bloomkit_classic::BloomFilter;
/// use bloomkit_core::hash::{HashKey, KeyedHasher};
/// use bloomkit_core::{Codec, DecodeError, Error};
///
/// let key = HashKey::random(); // keep it secret, and keep it to read the filter back
/// let mut f = BloomFilter::<str>::builder(1_000, 0.01).hasher(KeyedHasher::new(key)).build()?;
/// f.insert("203.0.113.7");
///
/// let bytes = f.to_bytes();
/// let g = BloomFilter::<str, KeyedHasher>::from_bytes_with_key(&bytes, &key)?;
/// assert!(g.contains("203.0.113.7"));
/// // Without the key, or with another, the bytes are refused.
/// assert_eq!(
///     BloomFilter::<str, KeyedHasher>::from_bytes(&bytes).unwrap_err(),
///     Error::Decode(DecodeError::KeyRequired)
/// );
/// assert_eq!(
///     BloomFilter::<str, KeyedHasher>::from_bytes_with_key(&bytes, &HashKey::random()).unwrap_err(),
///     Error::Decode(DecodeError::WrongKey)
/// );
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct KeyedHasher {
    /// The key the hashes use (the given key, or one derived from it by `reseeded`).
    key: HashKey,
    /// The check value of `key`, what the bytes record as the seed.
    check: u64,
}

impl KeyedHasher {
    /// A hasher under `key`.
    pub fn new(key: HashKey) -> Self {
        KeyedHasher {
            key,
            check: key.prf(b"bloomkit keyed hasher: key check"),
        }
    }
}

impl core::fmt::Debug for KeyedHasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeyedHasher")
            .field("check", &format_args!("{:#018x}", self.check))
            .finish_non_exhaustive()
    }
}

impl BuildHasher for KeyedHasher {
    type Hasher = KeyedState;

    #[inline]
    fn build_hasher(&self) -> KeyedState {
        KeyedState(siphasher::sip::SipHasher13::new_with_keys(
            self.key.0[0],
            self.key.0[1],
        ))
    }
}

/// The [`Hasher`] behind [`KeyedHasher`]: SipHash-1-3, integers written little-endian and
/// `usize`/`isize` as 64 bits, so a filter answers alike on every platform.
#[derive(Debug, Clone)]
pub struct KeyedState(siphasher::sip::SipHasher13);

impl Hasher for KeyedState {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0.finish()
    }

    little_endian_writes!();
}

impl PortableHasher for KeyedHasher {
    const ID: u8 = 3;
    const NAME: &'static str = "siphash-1-3 (keyed)";

    fn seed(&self) -> u64 {
        self.check
    }

    /// A hasher under a key derived from this one and `seed` (by the PRF itself), so parts
    /// seeded apart stay independent and stay secret.
    fn reseeded(&self, seed: u64) -> Self {
        let mut derive = [0u8; 17];
        derive[..8].copy_from_slice(&seed.to_le_bytes());
        let k0 = self.key.prf(&derive);
        derive[16] = 1;
        let k1 = self.key.prf(&derive);
        KeyedHasher::new(HashKey([k0, k1]))
    }

    /// Always an error: the bytes of a keyed filter do not hold its key. Use
    /// [`from_spec_with_key`](PortableHasher::from_spec_with_key).
    fn from_spec(spec: HasherSpec) -> Result<Self, crate::DecodeError> {
        if spec.id == Self::ID {
            Err(crate::DecodeError::KeyRequired)
        } else {
            Err(mismatch::<Self>(spec))
        }
    }

    fn from_spec_with_key(spec: HasherSpec, key: &HashKey) -> Result<Self, crate::DecodeError> {
        if spec.id != Self::ID {
            return Err(mismatch::<Self>(spec));
        }
        let hasher = KeyedHasher::new(*key);
        if hasher.check == spec.seed {
            Ok(hasher)
        } else {
            Err(crate::DecodeError::WrongKey)
        }
    }
}

/// Which hash function, with which seed: two filters can only be combined, and a serialized
/// filter can only be read back, when these match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HasherSpec {
    /// The [`PortableHasher::ID`].
    pub id: u8,
    /// The seed.
    pub seed: u64,
}

impl HasherSpec {
    /// No hashing: keys are their own positions (the bitmap). Id 0, seed 0.
    pub const IDENTITY: HasherSpec = HasherSpec { id: 0, seed: 0 };

    /// Parquet's hash: XXH64, seed 0, over a value's plain encoding (the split-block
    /// filter, whose bits a Parquet reader must find). Id 5, seed 0.
    pub const PARQUET_XXH64: HasherSpec = HasherSpec { id: 5, seed: 0 };

    /// Whether this is [`KeyedHasher`] (SipHash under a secret key): its key is not in a
    /// filter's bytes, so only a reader given the key can answer.
    pub const fn is_keyed(self) -> bool {
        self.id == <KeyedHasher as PortableHasher>::ID
    }
}

/// Builds [`Xxh3Hasher`]s: XXH3-64 with a 64-bit seed, bloomkit's default hash.
///
/// XXH3 is among the fastest good 64-bit hashes for short keys (smhasher: about 30 cycles
/// per short key, against about 108 for SipHash-1-3). It is not keyed against a
/// determined adversary: if attackers choose your keys and can learn the seed, they can
/// manufacture false positives. Keep the seed secret ([`Xxh3Builder::random`]) in that
/// setting.
///
/// Three schemes feed a key's bytes to XXH3 ([`Xxh3Scheme`]); they give the same hash for
/// every key that writes only integers, at most 128 bytes of them, and differ for strings
/// and slices. New builders use [`Xxh3Scheme::OneShot`] (hasher id 4): a string or byte
/// slice key costs one XXH3 call over its bytes, and its hash is exactly XXH3-64 of them.
/// Filters serialized with [`Xxh3Scheme::Chained`] (id 2) or [`Xxh3Scheme::Buffered`]
/// (id 1, bloomkit 0.1) load with their scheme and keep hashing with it.
///
/// # Examples
///
/// ```
/// use std::hash::BuildHasher;
/// use bloomkit_core::hash::Xxh3Builder;
///
/// let h = Xxh3Builder::with_seed(7);
/// assert_eq!(h.hash_one("key"), Xxh3Builder::with_seed(7).hash_one("key"));
/// assert_ne!(h.hash_one("key"), Xxh3Builder::with_seed(8).hash_one("key"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Xxh3Builder {
    seed: u64,
    /// Absent from serde data written before hasher id 2 existed: those builders buffered.
    #[cfg_attr(feature = "serde", serde(default = "Xxh3Scheme::buffered"))]
    scheme: Xxh3Scheme,
}

/// How an [`Xxh3Builder`]'s hasher feeds the bytes a key's `Hash` impl writes to XXH3-64.
///
/// All give exactly `XXH3_64bits_withSeed(bytes, seed)` of the bytes written (integers
/// little-endian, `usize`/`isize` as 64 bits) when the key writes only integers, at most 128
/// bytes of them: integer keys and tuples of them hash alike in every scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Xxh3Scheme {
    /// Hasher id 1 (bloomkit 0.1): every byte written is copied to a buffer (on the heap past
    /// 128 bytes) and the buffer hashed once at the end. A 36-byte string costs about three
    /// times XXH3 of its bytes.
    Buffered,
    /// Hasher id 2 (bloomkit 0.2 until the one-shot scheme): a write of more than 16 bytes
    /// (a string's or a byte slice's contents) is hashed where it lies, in one shot, with the
    /// hash of everything before it as the seed; shorter writes are buffered as by
    /// `Buffered`, and a buffer that would pass 128 bytes is hashed into the chain the same
    /// way. Never allocates; a string costs two XXH3 calls past 16 bytes.
    Chained,
    /// Hasher id 4, the default: a key's byte contents are hashed in one XXH3 call, where
    /// they lie. A `str`, `String`, `[u8]`, `Vec<u8>` or `[u8; N]` key hashes to exactly
    /// `XXH3_64bits_withSeed(bytes, seed)` of its bytes, what a user of XXH3 (or of sbbf-rs)
    /// computes by hand:
    ///
    /// - a *run* (a `write` of bytes: a string's or a slice's contents) is hashed in one shot
    ///   with the value of everything before it as the seed (the builder's seed when nothing
    ///   came before);
    /// - integers (`write_u8` .. `write_u128`, `usize` as 64 bits) gather, up to 128 bytes,
    ///   and are hashed into that value in one call before a run, when 128 would be passed,
    ///   or at the end;
    /// - two writes that only delimit a run are implied by the run's own call and dropped:
    ///   the `0xff` a string writes after its contents, and a slice's length written just
    ///   before its contents (8 bytes equal to the run's length).
    ///
    /// Keys that write only integers hash as in the other schemes (up to 128 bytes of them).
    #[default]
    OneShot,
}

impl Xxh3Scheme {
    /// [`Xxh3Scheme::Buffered`], as a function (serde's default for data without a scheme).
    pub const fn buffered() -> Xxh3Scheme {
        Xxh3Scheme::Buffered
    }

    /// The hasher id this scheme is recorded under.
    pub const fn id(self) -> u8 {
        match self {
            Xxh3Scheme::Buffered => 1,
            Xxh3Scheme::Chained => 2,
            Xxh3Scheme::OneShot => 4,
        }
    }
}

impl Xxh3Builder {
    /// The seed used by the filters' plain constructors: 0.
    pub const DEFAULT_SEED: u64 = 0;

    /// XXH3-64 with this seed, [`Xxh3Scheme::OneShot`].
    pub const fn with_seed(seed: u64) -> Self {
        Xxh3Builder::with_scheme(seed, Xxh3Scheme::OneShot)
    }

    /// XXH3-64 with this seed and scheme: [`Xxh3Scheme::Buffered`] hashes as bloomkit 0.1
    /// did (hasher id 1), [`Xxh3Scheme::Chained`] as filters of hasher id 2 do.
    pub const fn with_scheme(seed: u64, scheme: Xxh3Scheme) -> Self {
        Xxh3Builder { seed, scheme }
    }

    /// The scheme.
    pub const fn scheme(&self) -> Xxh3Scheme {
        self.scheme
    }

    /// XXH3-64 with a seed drawn from the operating system's randomness (through
    /// `std`'s `RandomState`), for filters exposed to keys an adversary chooses. The seed is
    /// still recorded when the filter is serialized.
    pub fn random() -> Self {
        let seed = std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64);
        Xxh3Builder::with_seed(seed)
    }
}

impl BuildHasher for Xxh3Builder {
    type Hasher = Xxh3Hasher;

    #[inline]
    fn build_hasher(&self) -> Xxh3Hasher {
        Xxh3Hasher(match self.scheme {
            Xxh3Scheme::OneShot => Inner::OneShot(OneShotHasher::new(self.seed)),
            scheme => Inner::Buffer(BufferHasher {
                seed: self.seed,
                chained: matches!(scheme, Xxh3Scheme::Chained),
                len: 0,
                inline: [0; INLINE],
                spill: Vec::new(),
            }),
        })
    }

    /// The hash [`build_hasher`](BuildHasher::build_hasher)'s hasher gives `x`, computed
    /// with a hasher that lives in registers: no 128-byte buffer to zero and no byte stored
    /// only to be read back. A key that gathers more than 16 integer bytes (a tuple of three
    /// `u64`s) is hashed again with the full hasher; `Hash` impls are deterministic, so the
    /// answer is the same either way.
    #[inline(always)]
    // This is `hash_one`: the lint's suggestion would recurse.
    #[allow(clippy::manual_hash_one)]
    fn hash_one<T: Hash>(&self, x: T) -> u64 {
        match self.scheme {
            Xxh3Scheme::OneShot => {
                let mut h = OneShotHasher::<Word>::new(self.seed);
                x.hash(&mut h);
                if !h.gave_up {
                    return h.finish();
                }
                let mut full = OneShotHasher::<Buffer>::new(self.seed);
                x.hash(&mut full);
                return full.finish();
            }
            Xxh3Scheme::Chained => {
                let mut word = WordHasher {
                    seed: self.seed,
                    word: 0,
                    len: 0,
                    overflowed: false,
                };
                x.hash(&mut word);
                if !word.overflowed {
                    return word.finish();
                }
            }
            Xxh3Scheme::Buffered => {}
        }
        let mut full = self.build_hasher();
        x.hash(&mut full);
        full.finish()
    }
}

/// Where [`OneShotHasher`] gathers integer bytes until they are hashed.
trait Gathered: Clone + core::fmt::Debug {
    /// No byte gathered.
    const EMPTY: Self;
    /// What one hasher of this kind holds at most; past it, [`Word`] gives up (the caller
    /// starts over with [`Buffer`]) and [`Buffer`] hashes what it holds into the chain.
    const CAPACITY: usize;
    /// Whether more than [`CAPACITY`](Self::CAPACITY) makes the hasher give up.
    const GIVES_UP: bool;
    /// Appends the low `bytes` little-endian bytes of `value`; `len + bytes` fits.
    fn push(&mut self, len: usize, value: u128, bytes: usize);
    /// XXH3 of the first `len` bytes, with `seed`.
    fn hash(&self, seed: u64, len: usize) -> u64;
    /// Whether the first `len` bytes are the 8-byte little-endian `run`.
    fn is_length(&self, len: usize, run: usize) -> bool;
}

/// Up to 16 bytes in one register: what `hash_one` tries first.
#[derive(Debug, Clone, Copy)]
struct Word(u128);

impl Gathered for Word {
    const EMPTY: Self = Word(0);
    const CAPACITY: usize = WORD;
    const GIVES_UP: bool = true;
    #[inline(always)]
    fn push(&mut self, len: usize, value: u128, _bytes: usize) {
        // `len` is below 16 here (`bytes` is at least 1), so the shift is in range.
        self.0 |= value << (8 * len);
    }
    #[inline(always)]
    fn hash(&self, seed: u64, len: usize) -> u64 {
        xxh3_word(seed, self.0, len)
    }
    #[inline(always)]
    fn is_length(&self, len: usize, run: usize) -> bool {
        len == 8 && self.0 == run as u128
    }
}

/// Up to 128 bytes on the stack: keys that write more integers than a register holds (a
/// tuple of three `u64`s), hashed in one call as the other schemes do.
#[derive(Debug, Clone)]
struct Buffer([u8; INLINE]);

impl Gathered for Buffer {
    const EMPTY: Self = Buffer([0; INLINE]);
    const CAPACITY: usize = INLINE;
    const GIVES_UP: bool = false;
    #[inline(always)]
    fn push(&mut self, len: usize, value: u128, bytes: usize) {
        self.0[len..len + bytes].copy_from_slice(&value.to_le_bytes()[..bytes]);
    }
    #[inline(always)]
    fn hash(&self, seed: u64, len: usize) -> u64 {
        xxh3(seed, &self.0[..len])
    }
    #[inline(always)]
    fn is_length(&self, len: usize, run: usize) -> bool {
        len == 8 && self.0[..8] == (run as u64).to_le_bytes()
    }
}

/// [`Xxh3Scheme::OneShot`]'s hasher: one XXH3 call per run of bytes, none per delimiter,
/// integers gathered in `G` ([`Word`]: every field in registers; [`Buffer`]: up to 128
/// bytes, for keys that write more integers than that holds).
#[derive(Debug, Clone)]
struct OneShotHasher<G: Gathered> {
    /// The builder's seed; after a run or a full buffer, the value of everything so far.
    chain: u64,
    /// Integer bytes not yet hashed.
    gathered: G,
    len: usize,
    /// The last write was a run: a string's `0xff` may follow, and is implied.
    after_run: bool,
    /// A run was hashed into `chain`: with no integer bytes after it, `chain` is the hash.
    any_run: bool,
    /// More integer bytes than a [`Word`] holds: the answer is [`Buffer`]'s to give.
    gave_up: bool,
}

impl<G: Gathered> OneShotHasher<G> {
    #[inline(always)]
    fn new(seed: u64) -> Self {
        OneShotHasher {
            chain: seed,
            gathered: G::EMPTY,
            len: 0,
            after_run: false,
            any_run: false,
            gave_up: false,
        }
    }

    /// The gathered bytes hashed into the chain (unless they are `run`'s length prefix).
    #[inline(always)]
    fn flush(&mut self, run: Option<usize>) {
        if self.len > 0 {
            if !run.is_some_and(|run| self.gathered.is_length(self.len, run)) {
                self.chain = self.gathered.hash(self.chain, self.len);
            }
            self.gathered = G::EMPTY;
            self.len = 0;
        }
    }

    /// [`flush`](Self::flush) before a run of `run` bytes, out of line (see `write`).
    #[cold]
    #[inline(never)]
    fn flush_before_run(&mut self, run: usize) {
        self.flush(Some(run));
    }

    /// `bytes` (at most 16) little-endian bytes of an integer, gathered.
    #[inline(always)]
    fn gather(&mut self, value: u128, bytes: usize) {
        if self.len + bytes > G::CAPACITY {
            if G::GIVES_UP {
                self.gave_up = true;
                return;
            }
            self.flush(None);
        }
        self.gathered.push(self.len, value, bytes);
        self.len += bytes;
        self.after_run = false;
    }
}

impl<G: Gathered> Hasher for OneShotHasher<G> {
    /// A run of bytes, hashed where it lies.
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        if self.gave_up {
            return;
        }
        // A slice's length, written just before its contents, is implied by the run. Out
        // of line: a string key has nothing gathered, and this `write` must stay small for
        // its `Hash` impl to inline into `hash_one` (and the state to live in registers).
        if self.len > 0 {
            self.flush_before_run(bytes.len());
        }
        self.chain = crate::xxh3::xxh3_run(self.chain, bytes);
        self.after_run = true;
        self.any_run = true;
    }

    #[inline(always)]
    fn finish(&self) -> u64 {
        if self.len == 0 && self.any_run {
            self.chain
        } else {
            self.gathered.hash(self.chain, self.len)
        }
    }

    #[inline(always)]
    fn write_u8(&mut self, i: u8) {
        // The `0xff` a string writes after its contents (`Hasher::write_str`).
        if self.after_run && i == 0xff {
            self.after_run = false;
        } else {
            self.gather(u128::from(i), 1);
        }
    }
    #[inline(always)]
    fn write_u16(&mut self, i: u16) {
        self.gather(u128::from(i), 2);
    }
    #[inline(always)]
    fn write_u32(&mut self, i: u32) {
        self.gather(u128::from(i), 4);
    }
    #[inline(always)]
    fn write_u64(&mut self, i: u64) {
        self.gather(u128::from(i), 8);
    }
    #[inline(always)]
    fn write_u128(&mut self, i: u128) {
        self.gather(i, 16);
    }
    #[inline(always)]
    fn write_usize(&mut self, i: usize) {
        self.gather(u128::from(i as u64), 8);
    }
    #[inline(always)]
    fn write_isize(&mut self, i: isize) {
        self.gather(u128::from(i as i64 as u64), 8);
    }
}

/// [`Xxh3Scheme::Chained`]'s hasher for keys that buffer at most 16 bytes at a time: the
/// buffer is one `u128`, so the whole state stays in registers. It gives what
/// [`Xxh3Hasher`] gives, or says it cannot (`overflowed`) and the caller starts over.
struct WordHasher {
    /// The builder's seed; after a long write, the chain's value.
    seed: u64,
    /// The buffered bytes, byte i in bits `8i..8i+8`.
    word: u128,
    len: usize,
    /// More than [`WORD`] bytes were to be buffered: the answer is [`Xxh3Hasher`]'s to give.
    overflowed: bool,
}

impl Hasher for WordHasher {
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        // As `Xxh3Hasher::write` in the chained scheme (CHAIN_MIN is WORD). Once overflowed,
        // nothing more is worth hashing: the full hasher starts over.
        if self.overflowed {
            return;
        }
        if bytes.len() > CHAIN_MIN {
            if self.len > 0 {
                self.seed = xxh3_word(self.seed, self.word, self.len);
                self.word = 0;
                self.len = 0;
            }
            self.seed = xxh3(self.seed, bytes);
            return;
        }
        let end = self.len + bytes.len();
        if end > WORD {
            self.overflowed = true;
        } else if !bytes.is_empty() {
            // `self.len` is below 16 here (`bytes` is not empty), so the shift is in range.
            self.word |= load_word(bytes) << (8 * self.len);
            self.len = end;
        }
    }

    #[inline(always)]
    fn finish(&self) -> u64 {
        xxh3_word(self.seed, self.word, self.len)
    }

    little_endian_writes!();
}

const _: () = assert!(CHAIN_MIN == WORD);

impl PortableHasher for Xxh3Builder {
    /// The id of [`Xxh3Scheme::OneShot`], what new builders use; a builder's own id is in
    /// its [`spec`](PortableHasher::spec).
    const ID: u8 = Xxh3Scheme::OneShot.id();
    const NAME: &'static str = "xxh3-64";

    fn seed(&self) -> u64 {
        self.seed
    }

    fn spec(&self) -> HasherSpec {
        HasherSpec {
            id: self.scheme.id(),
            seed: self.seed,
        }
    }

    /// Ids 1 ([`Xxh3Scheme::Buffered`]), 2 ([`Xxh3Scheme::Chained`]) and 4
    /// ([`Xxh3Scheme::OneShot`]).
    fn from_spec(spec: HasherSpec) -> Result<Self, crate::DecodeError> {
        match spec.id {
            1 => Ok(Xxh3Builder::with_scheme(spec.seed, Xxh3Scheme::Buffered)),
            2 => Ok(Xxh3Builder::with_scheme(spec.seed, Xxh3Scheme::Chained)),
            4 => Ok(Xxh3Builder::with_scheme(spec.seed, Xxh3Scheme::OneShot)),
            _ => Err(mismatch::<Self>(spec)),
        }
    }

    fn reseeded(&self, seed: u64) -> Self {
        Xxh3Builder::with_scheme(seed, self.scheme)
    }
}

/// Keys up to this many bytes are hashed from a stack buffer with XXH3's one-shot routine.
const INLINE: usize = 128;

/// In the chained scheme, a write longer than this is hashed where it lies. 16 keeps every
/// integer (up to `u128`) in the buffer, so integer keys hash as in the buffered scheme.
const CHAIN_MIN: usize = 16;

/// The [`Hasher`] behind [`Xxh3Builder`], in the builder's scheme ([`Xxh3Scheme`]).
#[derive(Debug, Clone)]
pub struct Xxh3Hasher(Inner);

#[derive(Debug, Clone)]
enum Inner {
    OneShot(OneShotHasher<Buffer>),
    Buffer(BufferHasher),
}

/// `Hasher`'s integer writes, each passed to the scheme's hasher.
macro_rules! forward_integer_writes {
    ($($method:ident: $ty:ty),*) => {$(
        #[inline(always)]
        fn $method(&mut self, i: $ty) {
            match &mut self.0 {
                Inner::OneShot(h) => h.$method(i),
                Inner::Buffer(h) => h.$method(i),
            }
        }
    )*};
}

impl Hasher for Xxh3Hasher {
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        match &mut self.0 {
            Inner::OneShot(h) => h.write(bytes),
            Inner::Buffer(h) => h.write(bytes),
        }
    }

    #[inline(always)]
    fn finish(&self) -> u64 {
        match &self.0 {
            Inner::OneShot(h) => h.finish(),
            Inner::Buffer(h) => h.finish(),
        }
    }

    forward_integer_writes!(
        write_u8: u8,
        write_u16: u16,
        write_u32: u32,
        write_u64: u64,
        write_u128: u128,
        write_usize: usize,
        write_isize: isize
    );
}

/// The buffered and chained schemes' hasher.
///
/// It collects the key's bytes and hashes them in one shot at [`finish`](Hasher::finish):
/// XXH3's one-shot path for short inputs is several times faster than its streaming state,
/// which also allocates. In the buffered scheme the result is exactly
/// `XXH3_64bits_withSeed(bytes, seed)` of the bytes written, with integers written
/// little-endian and `usize`/`isize` as 64 bits; in the chained scheme a long write is
/// hashed in place instead of copied (see [`Xxh3Scheme::Chained`]).
#[derive(Debug, Clone)]
struct BufferHasher {
    /// The builder's seed; in the chained scheme, after a long write, the chain's value.
    seed: u64,
    chained: bool,
    len: usize,
    inline: [u8; INLINE],
    /// Holds the whole key once it outgrows `inline` (buffered scheme only).
    spill: Vec<u8>,
}

impl BufferHasher {
    /// The rest of [`Hasher::write`]: the key outgrew the inline buffer. Buffered: the
    /// whole key moves to the heap. Chained: the buffer is hashed into the chain and
    /// emptied (`bytes` is at most `CHAIN_MIN` long, so it then fits).
    #[cold]
    #[inline(never)]
    fn write_spilled(&mut self, bytes: &[u8]) {
        if self.chained {
            self.seed = xxh3(self.seed, &self.inline[..self.len]);
            self.inline[..bytes.len()].copy_from_slice(bytes);
            self.len = bytes.len();
            return;
        }
        if self.spill.is_empty() {
            self.spill.extend_from_slice(&self.inline[..self.len]);
        }
        self.spill.extend_from_slice(bytes);
        self.len += bytes.len();
    }

    /// A write of more than `CHAIN_MIN` bytes in the chained scheme: what is buffered
    /// becomes the seed (the builder's seed when nothing is), and `bytes` is hashed with it
    /// where it lies.
    #[inline]
    fn write_chained(&mut self, bytes: &[u8]) {
        if self.len > 0 {
            self.seed = xxh3(self.seed, &self.inline[..self.len]);
            self.len = 0;
        }
        self.seed = xxh3(self.seed, bytes);
    }

    /// XXH3 of every byte written, for a key that outgrew the buffer (buffered scheme).
    #[cold]
    #[inline(never)]
    fn finish_spilled(&self) -> u64 {
        xxh3(self.seed, &self.spill)
    }
}

// The methods are `inline(always)`: a key that writes one integer then folds, through
// `hash_one`, to the arithmetic of XXH3's 4-to-8-byte path (the buffer and the length
// disappear), which LLVM's inliner does not find on its own (measured: 2.9 ns per u64 key with `#[inline]`).
impl Hasher for BufferHasher {
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        if self.chained && bytes.len() > CHAIN_MIN {
            self.write_chained(bytes);
            return;
        }
        let end = self.len + bytes.len();
        if self.spill.is_empty() && end <= INLINE {
            self.inline[self.len..end].copy_from_slice(bytes);
            self.len = end;
        } else {
            self.write_spilled(bytes);
        }
    }

    #[inline(always)]
    fn finish(&self) -> u64 {
        if self.spill.is_empty() {
            // Integer keys: when the key's `Hash` writes one integer, the length is known
            // here and this folds to a few multiplies. A string in the chained scheme
            // leaves one byte (its 0xff) here.
            xxh3(self.seed, &self.inline[..self.len])
        } else {
            self.finish_spilled()
        }
    }

    little_endian_writes!();
}

/// Maps a 64-bit value to `[0, n)` with Lemire's multiply-shift ("fastrange"): the high 64
/// bits of the 128-bit product. Unbiased to within `n / 2^64`, correct for every `n`
/// (including `n > 2^32`), and cheaper than `%`.
#[inline]
pub const fn reduce(hash: u64, n: u64) -> u64 {
    ((hash as u128 * n as u128) >> 64) as u64
}

/// The second hash of the double-hashing pair, derived from the first by a multiplicative
/// mix so that its high bits (the ones [`reduce`] keeps) depend on all 64 bits of the key's
/// hash, not on the same bits that place the first probe.
#[inline]
pub const fn second_hash(hash: u64) -> u64 {
    (hash ^ (hash >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

/// The k probe positions in `[0, m)` of one key, by enhanced double hashing.
///
/// With `a = reduce(h1, m)` and `b = reduce(h2, m)` (`h1` the key's hash, `h2` from
/// [`second_hash`]), the i-th position is
///
/// ```text
/// g(i) = a + i*b + (i^3 - i)/6   (mod m)
/// ```
///
/// computed incrementally with additions and conditional subtractions only (Dillinger &
/// Manolios 2004, "Bloom filters in probabilistic verification", Fig. 4). The cubic term is
/// what "enhanced" adds to Kirsch–Mitzenmacher double hashing: even when `b` is 0 or has a
/// small order modulo `m`, the positions keep moving, so the k positions of a key stay
/// (nearly) distinct and the filter's false-positive rate stays close to that of k
/// independent hashes, also at small `m`.
///
/// Filters choose `m` with no prime factor below `k` ([`crate::sizing::coprime_bits`]):
/// then every step `1..k` is invertible mod `m`, and two probes coincide no more often than
/// independent probes would. (With `m` a power of two they coincide far more often.)
///
/// The pair `(a, b)` takes at most `m^2` values, so two keys share all their positions with
/// probability about `1/m^2`; [`crate::sizing::fpr_model`] accounts for that floor, which
/// only matters for tiny filters.
///
/// # Examples
///
/// ```
/// use bloomkit_core::hash::Probes;
///
/// let positions: Vec<u64> = Probes::new(0x0123_4567_89ab_cdef, 1000, 7).collect();
/// assert_eq!(positions.len(), 7);
/// assert!(positions.iter().all(|&p| p < 1000));
/// ```
#[derive(Debug, Clone)]
pub struct Probes {
    x: u64,
    y: u64,
    /// `i mod m`, the increment of `y` for the next step.
    step: u64,
    m: u64,
    left: u32,
}

impl Probes {
    /// The `k` positions in `[0, m)` for a key whose hash is `hash`; `k = 0` gives none.
    ///
    /// # Panics
    /// If `m` is 0 or above `2^63` (filters never pass such a size: see
    /// [`crate::bits::MAX_BITS`]); [`try_new`](Probes::try_new) returns an error instead.
    #[inline]
    pub fn new(hash: u64, m: u64, k: u32) -> Probes {
        Probes::with_second_hash(hash, second_hash(hash), m, k)
    }

    /// As [`new`](Probes::new), or [`Error::ZeroBits`](crate::Error::ZeroBits) /
    /// [`Error::TooLarge`](crate::Error::TooLarge) for an `m` no filter can have.
    ///
    /// # Errors
    /// As said.
    pub fn try_new(hash: u64, m: u64, k: u32) -> Result<Probes, crate::Error> {
        match m {
            0 => Err(crate::Error::ZeroBits),
            m if m > 1 << 63 => Err(crate::Error::TooLarge {
                what: crate::Unit::Bits,
                size: m as f64,
                max: 1 << 63,
            }),
            m => Ok(Probes::new(hash, m, k)),
        }
    }

    /// As [`new`](Probes::new), with `second_hash(hash)` computed by the caller once for
    /// several filters of different sizes. `second` must be `second_hash(hash)` (checked in
    /// debug builds only, since computing it is what this saves): another value gives the
    /// positions of another key.
    ///
    /// # Panics
    /// As [`new`](Probes::new).
    #[inline]
    pub fn with_second_hash(hash: u64, second: u64, m: u64, k: u32) -> Probes {
        check_probe_bits(m);
        debug_assert_eq!(second, second_hash(hash));
        Probes {
            x: reduce(hash, m),
            y: reduce(second, m),
            step: 0,
            m,
            left: k,
        }
    }
}

/// Panics unless `m` is in `1..=2^63`, the sizes a filter can have. Checked in release too:
/// past 2^63, `add_mod` would overflow and give positions outside [0, m). Free where it
/// matters: callgrind counted the same instructions per classic and counting lookup with and
/// without it (the check leaves the loop).
#[inline]
fn check_probe_bits(m: u64) {
    assert!(
        m.wrapping_sub(1) < 1 << 63,
        "a filter of {m} bits: probes need 1..=2^63"
    );
}

/// `(a + b) mod m` for `a, b < m <= 2^63`.
#[inline]
fn add_mod(a: u64, b: u64, m: u64) -> u64 {
    let s = a + b;
    // Below m, `s - m` wraps above s; otherwise it is the reduced value and below s.
    s.min(s.wrapping_sub(m))
}

impl Iterator for Probes {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let out = self.x;
        // x(i+1) = x(i) + y(i);  y(i+1) = y(i) + (i + 1).
        self.x = add_mod(self.x, self.y, self.m);
        self.step += 1;
        if self.step == self.m {
            self.step = 0;
        }
        self.y = add_mod(self.y, self.step, self.m);
        Some(out)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Probes {}

/// How a filter of `m` bits derives the k positions of a key from its hash: recorded in the
/// filter (and in its bytes from format version 3 on), since the same hash gives other
/// positions under another scheme.
///
/// Both are enhanced double hashing (Dillinger & Manolios 2004) from the key's hash `h1` and
/// `h2 =` [`second_hash`]`(h1)`, `g(i) = h1 + i*h2 + (i^3 - i)/6 * c`; they differ in
/// where the arithmetic happens:
///
/// - [`Wide`](ProbeScheme::Wide) (id 2, the default): `g(i)` in 64-bit wrapping arithmetic
///   (`c` a fixed odd constant), each reduced to `[0, m)` by [`reduce`] on its own
///   ([`WideProbes`]). From one probe to the next the only serial steps are additions of
///   one cycle, so the k positions, and the k memory reads, are ready almost at once
///   (measured against `Enhanced` in `docs/performance.md`). Without the cubic term a key
///   whose `h2` is near 0 (or near a fraction of 2^64 with a small denominator) would put
///   all its probes on one or a few bits: the filter of one key at `p = 1e-6` measured
///   1.6e-6 so; with it, the rate is the model's.
/// - [`Enhanced`](ProbeScheme::Enhanced) (id 1): enhanced double hashing mod m
///   ([`Probes`]), each position computed from the previous with modular additions: a
///   chain of about three cycles per probe that every lookup waits on. Every filter
///   written before format version 3 (and every Redis filter created before it) uses it,
///   and keeps using it when loaded.
///
/// # Examples
///
/// ```
/// use bloomkit_core::hash::ProbeScheme;
///
/// let wide: Vec<u64> = ProbeScheme::Wide.positions(0x0123_4567_89ab_cdef, 1000, 7).collect();
/// assert_eq!(wide.len(), 7);
/// assert!(wide.iter().all(|&p| p < 1000));
/// assert_eq!(ProbeScheme::default(), ProbeScheme::Wide);
/// assert_eq!(ProbeScheme::from_id(1), Some(ProbeScheme::Enhanced));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProbeScheme {
    /// Enhanced double hashing mod m ([`Probes`]): filters of format versions 1 and 2.
    Enhanced,
    /// Double hashing over 64 bits, each probe reduced on its own ([`WideProbes`]).
    #[default]
    Wide,
}

impl ProbeScheme {
    /// The id recorded in the byte format, serde and Redis: 1 for
    /// [`Enhanced`](ProbeScheme::Enhanced), 2 for [`Wide`](ProbeScheme::Wide).
    pub const fn id(self) -> u8 {
        match self {
            ProbeScheme::Enhanced => 1,
            ProbeScheme::Wide => 2,
        }
    }

    /// The scheme with this id, or `None` for an id this build does not know.
    pub const fn from_id(id: u8) -> Option<ProbeScheme> {
        match id {
            1 => Some(ProbeScheme::Enhanced),
            2 => Some(ProbeScheme::Wide),
            _ => None,
        }
    }

    /// The k positions in `[0, m)` of the key whose hash is `hash`.
    ///
    /// # Panics
    /// If `m` is 0 or above `2^63`, as [`Probes::new`].
    #[inline]
    pub fn positions(self, hash: u64, m: u64, k: u32) -> Positions {
        match self {
            ProbeScheme::Enhanced => Positions::Enhanced(Probes::new(hash, m, k)),
            ProbeScheme::Wide => Positions::Wide(WideProbes::new(hash, m, k)),
        }
    }

    /// Whether `f` holds for every position of the key, stopping at the first that fails:
    /// the scheme is matched once, and each arm runs its own loop with `f` inlined.
    ///
    /// # Panics
    /// As [`positions`](Self::positions).
    #[inline(always)]
    pub fn all(self, hash: u64, m: u64, k: u32, f: impl FnMut(u64) -> bool) -> bool {
        match self {
            ProbeScheme::Enhanced => Probes::new(hash, m, k).all(f),
            ProbeScheme::Wide => WideProbes::new(hash, m, k).all(f),
        }
    }

    /// Calls `f` with every position of the key, in probe order (the scheme matched once).
    ///
    /// # Panics
    /// As [`positions`](Self::positions).
    #[inline(always)]
    pub fn for_each(self, hash: u64, m: u64, k: u32, f: impl FnMut(u64)) {
        match self {
            ProbeScheme::Enhanced => Probes::new(hash, m, k).for_each(f),
            ProbeScheme::Wide => WideProbes::new(hash, m, k).for_each(f),
        }
    }
}

impl core::fmt::Display for ProbeScheme {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            ProbeScheme::Enhanced => "enhanced double hashing mod m (id 1)",
            ProbeScheme::Wide => "64-bit double hashing (id 2)",
        })
    }
}

/// The positions of one key under [`ProbeScheme::Wide`]: `reduce(g(i), m)` for `i = 0..k`,
/// with `g(i) = h1 + i*h2 + (i^3 - i)/6 * WIDE_CUBIC` in wrapping 64-bit arithmetic and
/// `h2 =` [`second_hash`]`(h1)`, computed with three additions per probe.
///
/// # Examples
///
/// ```
/// use bloomkit_core::hash::{reduce, second_hash, WideProbes, WIDE_CUBIC};
///
/// let h = 0x0123_4567_89ab_cdef_u64;
/// let positions: Vec<u64> = WideProbes::new(h, 1000, 4).collect();
/// let g = |i: u64| {
///     let cubic = (i * i * i - i) / 6;
///     h.wrapping_add(i.wrapping_mul(second_hash(h)))
///         .wrapping_add(cubic.wrapping_mul(WIDE_CUBIC))
/// };
/// assert_eq!(positions, [0, 1, 2, 3].map(|i| reduce(g(i), 1000)));
/// ```
#[derive(Debug, Clone)]
pub struct WideProbes {
    /// `g(i)`.
    next: u64,
    /// `g(i + 1) - g(i) = h2 + i(i+1)/2 * c`.
    step: u64,
    /// `step(i + 1) - step(i) = (i + 1) * c`.
    accel: u64,
    m: u64,
    left: u32,
}

/// The constant `c` of [`WideProbes`]' cubic term: splitmix64's first multiplier (odd, its
/// bits well mixed), a fixed part of [`ProbeScheme::Wide`].
pub const WIDE_CUBIC: u64 = 0xbf58_476d_1ce4_e5b9;

impl WideProbes {
    /// The `k` positions in `[0, m)` for a key whose hash is `hash`; `k = 0` gives none.
    ///
    /// # Panics
    /// If `m` is 0 or above `2^63`, as [`Probes::new`] (no filter has such a size; the
    /// positions themselves would be right up to `2^64 - 1`).
    #[inline]
    pub fn new(hash: u64, m: u64, k: u32) -> WideProbes {
        WideProbes::with_second_hash(hash, second_hash(hash), m, k)
    }

    /// As [`new`](WideProbes::new), with `second_hash(hash)` computed by the caller (see
    /// [`Probes::with_second_hash`]).
    ///
    /// # Panics
    /// As [`new`](WideProbes::new).
    #[inline]
    pub fn with_second_hash(hash: u64, second: u64, m: u64, k: u32) -> WideProbes {
        check_probe_bits(m);
        debug_assert_eq!(second, second_hash(hash));
        WideProbes {
            next: hash,
            step: second,
            accel: WIDE_CUBIC,
            m,
            left: k,
        }
    }
}

impl Iterator for WideProbes {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let out = reduce(self.next, self.m);
        self.next = self.next.wrapping_add(self.step);
        self.step = self.step.wrapping_add(self.accel);
        self.accel = self.accel.wrapping_add(WIDE_CUBIC);
        Some(out)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for WideProbes {}

/// The positions of one key under either [`ProbeScheme`] ([`ProbeScheme::positions`]).
#[derive(Debug, Clone)]
pub enum Positions {
    /// [`ProbeScheme::Enhanced`].
    Enhanced(Probes),
    /// [`ProbeScheme::Wide`].
    Wide(WideProbes),
}

impl Iterator for Positions {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        match self {
            Positions::Enhanced(p) => p.next(),
            Positions::Wide(p) => p.next(),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Positions::Enhanced(p) => p.size_hint(),
            Positions::Wide(p) => p.size_hint(),
        }
    }
}

impl ExactSizeIterator for Positions {}

/// The splitmix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mix.
#[inline]
pub(crate) const fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The word whose seven 9-bit chunks (from the low end) are positions `7 * round ..
/// 7 * round + 7` of a key in its block (see [`block_positions`]).
#[inline(always)]
pub(crate) const fn block_word(hash: u64, round: u64) -> u64 {
    if round == 0 {
        hash.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    } else {
        splitmix(hash.wrapping_add(round.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    }
}

/// Bits in one block of a blocked Bloom filter: a 64-byte cache line.
pub const BLOCK_BITS: u64 = 512;

/// Where a key goes in a blocked Bloom filter (Putze, Sanders & Singler 2007): one 512-bit
/// block, chosen from the high bits of the key's hash by [`reduce`], and k bit positions in
/// it, as a mask of eight words (what an insert ORs into the block; lookups test the
/// positions one at a time with [`block_contains`], stopping early).
///
/// The positions are 9-bit chunks of a stream derived from the hash (seven per 64-bit
/// word, the stream refilled by a multiplicative mix), drawn uniformly and independently
/// with replacement, which is what [`crate::sizing::blocked_fpr_model`] assumes.
///
/// # Examples
///
/// ```
/// use bloomkit_core::hash::BlockProbe;
///
/// let probe = BlockProbe::new(0x0123_4567_89ab_cdef, 1_000, 7);
/// assert!(probe.block < 1_000);
/// let bits: u32 = probe.mask.iter().map(|w| w.count_ones()).sum();
/// assert!((1..=7).contains(&bits)); // 7 positions, a few may coincide
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockProbe {
    /// The block, in `[0, blocks)`.
    pub block: u64,
    /// The key's bits in that block, word by word.
    pub mask: [u64; 8],
}

impl BlockProbe {
    /// The block among `blocks` and the `k` positions of the key whose hash is `hash`.
    ///
    /// # Panics
    /// If `blocks` is 0 (no block to choose).
    #[inline]
    pub fn new(hash: u64, blocks: u64, k: u32) -> BlockProbe {
        assert!(blocks > 0, "a blocked filter needs at least one block");
        let mut mask = [0u64; 8];
        for position in block_positions(hash, k) {
            mask[(position >> 6) as usize] |= 1 << (position & 63);
        }
        BlockProbe {
            block: reduce(hash, blocks),
            mask,
        }
    }
}

/// The `k` bit positions in `[0, 512)` of the key whose hash is `hash`, inside its block
/// (see [`BlockProbe`]), one at a time, so a lookup can stop at the first clear bit.
///
/// The first word is the hash times an odd constant: its low 63 bits are a bijection of the
/// hash's, so its seven 9-bit chunks are uniform and independent. Each further word is a
/// splitmix64 round of the whole hash (not of the shifted-out remainder, which by then holds
/// a single bit).
#[inline]
pub fn block_positions(hash: u64, k: u32) -> impl Iterator<Item = u64> {
    let mut word = block_word(hash, 0);
    let mut left_in_word = 7;
    let mut round = 0u64;
    (0..k).map(move |_| {
        if left_in_word == 0 {
            round += 1;
            word = block_word(hash, round);
            left_in_word = 7;
        }
        let position = word & (BLOCK_BITS - 1);
        word >>= 9;
        left_in_word -= 1;
        position
    })
}

/// The eight words of one block, read one at a time: what [`block_contains`] and
/// [`block_contains_all`] test. A plain block reads its words; a block of atomics (a filter
/// that threads insert into through `&self`) loads each word it needs, in place, with no
/// copy of the block.
pub trait BlockWords {
    /// Word `i` of the block, `i < 8`.
    fn word(&self, i: usize) -> u64;
}

impl BlockWords for [u64; 8] {
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        self[i]
    }
}

#[cfg(target_has_atomic = "64")]
impl BlockWords for [core::sync::atomic::AtomicU64; 8] {
    /// A `Relaxed` load: bits only go from 0 to 1 while threads insert, so any value read
    /// holds every bit set by an insert that happened before the read.
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        self[i].load(core::sync::atomic::Ordering::Relaxed)
    }
}

/// Whether all `k` positions of the key whose hash is `hash` are set in `block`, testing
/// every position without a branch on any of them.
///
/// For blocks already in L1, as batched lookups have them after their prefetch: there, what
/// costs is a mispredicted branch on an absent key, and this has none. (On a warm filter of
/// 10^6 keys, one lookup at a time: absent keys 7.9 ns against 13.8 for [`block_contains`],
/// members 8.2 against 7.2; on cold lines the early exit won, see `docs/performance.md`.)
#[inline]
pub fn block_contains_all<B: BlockWords + ?Sized>(block: &B, hash: u64, k: u32) -> bool {
    let has = |p: u64| block.word((p >> 6) as usize) & (1 << (p & 63)) != 0;
    // The first seven positions straight from one word (as `block_positions` draws them),
    // without the iterator's refill bookkeeping; the rest, for k > 7, through it.
    let mut word = hash.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut all = true;
    for _ in 0..k.min(7) {
        all &= has(word & (BLOCK_BITS - 1));
        word >>= 9;
    }
    if k > 7 {
        all &= block_positions(hash, k)
            .skip(7)
            .fold(true, |all, p| all & has(p));
    }
    all
}

/// Whether all `k` positions of the key whose hash is `hash` are set in `block` (its block
/// of a blocked filter), testing them one at a time and stopping at the first clear one.
/// The first seven positions come from one multiplication, so testing one block costs one
/// cache line and, for an absent key, usually one or two bit tests.
#[inline]
pub fn block_contains<B: BlockWords + ?Sized>(block: &B, hash: u64, k: u32) -> bool {
    let has = |p: u64| block.word((p >> 6) as usize) & (1 << (p & 63)) != 0;
    let mut word = hash.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // The first two positions together, with one branch: an absent key fails it three
    // times in four, and one hard-to-predict branch costs less than two. With k = 1 the
    // loop below tests the one position (it once tested none, and every key was found).
    let mut tested = 0;
    if k >= 2 {
        if !(has(word & (BLOCK_BITS - 1)) & has((word >> 9) & (BLOCK_BITS - 1))) {
            return false;
        }
        word >>= 18;
        tested = 2;
    }
    for _ in tested..k.min(7) {
        if !has(word & (BLOCK_BITS - 1)) {
            return false;
        }
        word >>= 9;
    }
    k <= 7 || block_positions(hash, k).skip(7).all(has)
}

#[cfg(test)]
mod tests {
    use super::*;
    use twox_hash::XxHash3_64;

    /// Both block tests agree with the key's mask (a key is present when every bit of its
    /// `BlockProbe` mask is set) for every k bloomkit supports, on blocks from nearly
    /// empty to nearly full. Regression: with k = 1, `block_contains` tested no bit and
    /// answered `true` for every key.
    #[test]
    fn block_tests_agree_with_the_mask_for_every_k() {
        let mut state = 0x5eed_u64;
        let mut next = || {
            state = splitmix(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            state
        };
        for k in 1..=crate::sizing::MAX_HASHES {
            let (mut present, mut absent) = (0, 0);
            for round in 0..2_000u64 {
                // Density from 1/64 to about 7/8 of the bits set.
                let mut block = [0u64; 8];
                for w in &mut block {
                    for _ in 0..(round % 3 + 1) {
                        *w |= next() & next() & next();
                    }
                    if round % 7 == 0 {
                        *w |= next() | next();
                    }
                    if round % 11 == 0 {
                        *w |= !(next() & next() & next() & next());
                    }
                }
                let hash = next();
                let mask = BlockProbe::new(hash, 1, k).mask;
                let expected = mask.iter().zip(&block).all(|(m, b)| m & b == *m);
                assert_eq!(block_contains(&block, hash, k), expected, "k = {k}");
                assert_eq!(block_contains_all(&block, hash, k), expected, "k = {k}");
                // A key whose bits are all set is always found.
                let mut with_key = block;
                for (w, m) in with_key.iter_mut().zip(mask) {
                    *w |= m;
                }
                assert!(block_contains(&with_key, hash, k), "k = {k}");
                assert!(block_contains_all(&with_key, hash, k), "k = {k}");
                if expected {
                    present += 1;
                } else {
                    absent += 1;
                }
            }
            // Both answers occurred, so the comparison tested something.
            assert!(present > 0 && absent > 0, "k = {k}: {present} / {absent}");
        }
    }

    /// Sizes no filter can have are refused in release builds too, by `try_new` as errors
    /// and by `new` as a panic (it once computed positions outside `[0, m)` past 2^63).
    #[test]
    fn probe_sizes_are_checked_in_release() {
        assert!(matches!(
            Probes::try_new(1, 0, 3),
            Err(crate::Error::ZeroBits)
        ));
        assert!(matches!(
            Probes::try_new(1, (1 << 63) + 1, 3),
            Err(crate::Error::TooLarge { .. })
        ));
        let edge: Vec<u64> = Probes::try_new(u64::MAX, 1 << 63, 20).unwrap().collect();
        assert!(edge.iter().all(|&p| p < 1 << 63) && edge.len() == 20);
        for m in [0, (1 << 63) + 1, u64::MAX] {
            assert!(
                std::panic::catch_unwind(|| Probes::new(7, m, 3)).is_err(),
                "m = {m}"
            );
            assert!(
                std::panic::catch_unwind(|| WideProbes::new(7, m, 3)).is_err(),
                "m = {m}"
            );
        }
        let edge: Vec<u64> = WideProbes::new(u64::MAX, 1 << 63, 20).collect();
        assert!(edge.iter().all(|&p| p < 1 << 63) && edge.len() == 20);
        assert!(std::panic::catch_unwind(|| BlockProbe::new(7, 0, 3)).is_err());
    }

    /// `hash_one` (the register hasher, and the full one again when a key buffers more than
    /// 16 bytes) gives what the full hasher gives, for keys of many shapes around the limits:
    /// strings and slices of 0 to 200 bytes, alone and in tuples, and integer tuples of 8 to
    /// 40 bytes, in both schemes.
    #[test]
    fn hash_one_agrees_with_the_full_hasher() {
        // The hasher `hash_one` stands in for, by hand.
        #[allow(clippy::manual_hash_one)]
        fn full<T: Hash>(b: &Xxh3Builder, x: T) -> u64 {
            let mut h = b.build_hasher();
            x.hash(&mut h);
            h.finish()
        }
        let text: String = (0..200u8).map(|i| char::from(b'a' + i % 26)).collect();
        for seed in [0, 7, u64::MAX] {
            for scheme in [
                Xxh3Scheme::Buffered,
                Xxh3Scheme::Chained,
                Xxh3Scheme::OneShot,
            ] {
                let b = Xxh3Builder::with_scheme(seed, scheme);
                macro_rules! check {
                    ($key:expr) => {{
                        let key = $key;
                        assert_eq!(b.hash_one(&key), full(&b, &key), "{key:?}, {scheme:?}");
                    }};
                }
                // Under miri, the lengths around the limits only (16, 17: the chain; 32).
                let longest = if cfg!(miri) { 40 } else { text.len() };
                for len in 0..=longest {
                    let s = &text[..len];
                    check!(s);
                    check!(s.as_bytes());
                    check!((len as u8, s));
                    check!((s, len as u64));
                    check!((len as u64, len as u32, s));
                    check!((s, s));
                    check!(vec![s; 3]);
                    // Buffered bytes, a long write that chains them, then more buffered.
                    let x = splitmix(len as u64);
                    check!((x, s, x));
                    // Past 16 buffered bytes (the full hasher's case), then a long write.
                    check!((x, x, x, s));
                }
                for x in (0..if cfg!(miri) { 10 } else { 200 }).map(splitmix) {
                    check!(x);
                    check!(u128::from(x));
                    check!((x, x));
                    check!((x, x, x));
                    check!((x as u8, x as u16, x as u32, x));
                    check!([x; 5]);
                    check!(());
                }
            }
        }
    }

    /// Through the `Hash` trait, integer keys of every width hash to XXH3 of their
    /// little-endian bytes, whichever path `finish` takes.
    #[test]
    fn integer_keys_hash_to_xxh3_of_their_bytes() {
        let b = Xxh3Builder::with_seed(99);
        let xxh = |bytes: &[u8]| XxHash3_64::oneshot_with_seed(99, bytes);
        for x in [0u64, 1, 42, u64::MAX, 0x8000_0000_0000_0000] {
            assert_eq!(b.hash_one(x), xxh(&x.to_le_bytes()));
            assert_eq!(b.hash_one(x as u32), xxh(&(x as u32).to_le_bytes()));
            assert_eq!(b.hash_one(x as u16), xxh(&(x as u16).to_le_bytes()));
            assert_eq!(b.hash_one(x as u8), xxh(&[x as u8]));
            assert_eq!(b.hash_one(x as i64), xxh(&x.to_le_bytes()));
            assert_eq!(b.hash_one(x as usize), xxh(&x.to_le_bytes()));
            assert_eq!(b.hash_one(u128::from(x)), xxh(&u128::from(x).to_le_bytes()));
            let pair = [(x as u32).to_le_bytes(), 7u32.to_le_bytes()].concat();
            assert_eq!(b.hash_one((x as u32, 7u32)), xxh(&pair));
        }
    }

    /// In the one-shot scheme, every byte-string key type hashes to XXH3-64 of its bytes
    /// alone (checked against twox-hash, an independent XXH3), at every length from 0 to 300
    /// (all of XXH3's length paths); integer keys hash as in the chained scheme.
    #[test]
    fn one_shot_byte_keys_hash_to_xxh3_of_their_bytes() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        let text: String = (0..300u32)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        for seed in [0, 7, u64::MAX] {
            let b = Xxh3Builder::with_scheme(seed, Xxh3Scheme::OneShot);
            let xxh = |bytes: &[u8]| XxHash3_64::oneshot_with_seed(seed, bytes);
            let longest = if cfg!(miri) { 40 } else { 300 };
            for len in 0..=longest {
                let (s, v) = (&text[..len], &bytes[..len]);
                assert_eq!(b.hash_one(s), xxh(s.as_bytes()), "str of {len}");
                assert_eq!(
                    b.hash_one(s.to_string()),
                    xxh(s.as_bytes()),
                    "String of {len}"
                );
                assert_eq!(b.hash_one(v), xxh(v), "[u8] of {len}");
                assert_eq!(b.hash_one(v.to_vec()), xxh(v), "Vec<u8> of {len}");
            }
            assert_eq!(b.hash_one([1u8, 2, 3]), xxh(&[1, 2, 3]));
            let chained = Xxh3Builder::with_scheme(seed, Xxh3Scheme::Chained);
            for x in (0..200).map(splitmix) {
                assert_eq!(b.hash_one(x), chained.hash_one(x));
                assert_eq!(b.hash_one((x, x as u32)), chained.hash_one((x, x as u32)));
                assert_eq!(b.hash_one(u128::from(x)), chained.hash_one(u128::from(x)));
                assert_eq!(b.hash_one((x, x, x)), chained.hash_one((x, x, x)));
                let many = (x, x as u32, (x, x, x), u128::from(x), (x, x, x, x, x));
                assert_eq!(b.hash_one(many), chained.hash_one(many));
            }
        }
    }

    /// The one-shot scheme's values, pinned: XXH3-64 of the bytes as Python's `xxhash`
    /// package computes it (`xxhash.xxh3_64_intdigest(bytes, seed)`), so that a change to the
    /// scheme or to our XXH3 cannot pass unnoticed.
    #[test]
    fn one_shot_values_are_pinned() {
        let h = |seed: u64| Xxh3Builder::with_seed(seed);
        assert_eq!(h(0).hash_one(""), 0x2d06800538d394c2);
        assert_eq!(h(0).hash_one("a"), 0xe6c632b61e964e1f);
        assert_eq!(h(0).hash_one("numpy"), 0x7c6a658bb770ce1f);
        assert_eq!(
            h(7).hash_one("https://example.com/0042"),
            0x2f424b3ea32c1751
        );
        assert_eq!(
            h(99).hash_one(b"0123456789abcdef".to_vec()),
            0x01ff5971608ed56c
        );
        let long: Vec<u8> = (0..200u8).collect();
        assert_eq!(
            h(0xdeadbeefcafef00d).hash_one(&long[..]),
            0x52bcd4c9e1586e16
        );
    }

    /// The delimiters the one-shot scheme drops keep keys of one type apart: strings in
    /// tuples, a slice's length before other integers, a `0xff` that is data.
    #[test]
    fn one_shot_keeps_structured_keys_apart() {
        let b = Xxh3Builder::with_seed(1);
        let distinct = |hashes: &[u64]| {
            let set: std::collections::HashSet<_> = hashes.iter().collect();
            set.len() == hashes.len()
        };
        assert!(distinct(&[
            b.hash_one(("ab", "c")),
            b.hash_one(("a", "bc")),
            b.hash_one(("abc", "")),
            b.hash_one(("", "abc")),
        ]));
        assert!(distinct(&[
            b.hash_one((3u64, "abc")),
            b.hash_one((4u64, "abc")),
            b.hash_one((3u64, "abd")),
        ]));
        assert!(distinct(&[
            b.hash_one(("ab", 0xffu8)),
            b.hash_one(("ab", 0xfeu8)),
            b.hash_one(("ab", 0u8)),
        ]));
        assert!(distinct(&[
            b.hash_one(vec!["a", "b"]),
            b.hash_one(vec!["ab"]),
            b.hash_one(vec!["a", "b", ""]),
        ]));
    }
}
