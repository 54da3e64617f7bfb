//! bloomkit's default hasher: XXH3-64 with a seed, in three schemes of feeding it a key.

use core::hash::{BuildHasher, Hash, Hasher};

use super::{mismatch, HasherSpec, PortableHasher};
use crate::xxh3::{load_word, xxh3, xxh3_word, WORD};

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
        // Integers only, at most 16 bytes of them (an integer key, a pair of `u64`s): every
        // scheme gives XXH3 of those bytes, so none is consulted.
        let mut ints = IntegerWord::default();
        x.hash(&mut ints);
        if !ints.ran && !ints.overflowed {
            return xxh3_word(self.seed, ints.word, ints.len);
        }
        // More than 16 integer bytes: every scheme's register-sized try below would give up
        // too, so the full hasher it falls back to answers at once.
        let overflowed = ints.overflowed;
        match self.scheme {
            Xxh3Scheme::OneShot if overflowed => {
                let mut full = OneShotHasher::<Buffer>::new(self.seed);
                x.hash(&mut full);
                return full.finish();
            }
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
            Xxh3Scheme::Chained if !overflowed => {
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
            Xxh3Scheme::Chained | Xxh3Scheme::Buffered => {}
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

/// The first try of [`Xxh3Builder::hash_one`] in every scheme: the integers a key writes,
/// gathered in one register while they fit in 16 bytes. It stops at the first run of bytes
/// (`ran`: a string's or a slice's contents, where the schemes differ) or at more than 16
/// bytes (`overflowed`).
#[derive(Default)]
struct IntegerWord {
    /// The bytes gathered, byte i in bits `8i..8i+8` (as [`load_word`] reads them).
    word: u128,
    len: usize,
    ran: bool,
    overflowed: bool,
}

impl IntegerWord {
    #[inline(always)]
    fn push(&mut self, value: u128, bytes: usize) {
        if self.ran || self.overflowed {
            return;
        }
        if self.len + bytes > WORD {
            self.overflowed = true;
            return;
        }
        // `self.len` is at most 15 when `bytes` is not 0 (the check above), so the shift is
        // in range; a value of `bytes` bytes has no bits above them.
        self.word |= value << (8 * (self.len % WORD));
        self.len += bytes;
    }
}

impl Hasher for IntegerWord {
    #[inline(always)]
    fn write(&mut self, _bytes: &[u8]) {
        if !self.overflowed {
            self.ran = true;
        }
    }

    /// Not used: [`Xxh3Builder::hash_one`] reads the fields.
    #[inline(always)]
    fn finish(&self) -> u64 {
        xxh3_word(0, self.word, self.len)
    }

    #[inline(always)]
    fn write_u8(&mut self, i: u8) {
        self.push(u128::from(i), 1);
    }
    #[inline(always)]
    fn write_u16(&mut self, i: u16) {
        self.push(u128::from(i), 2);
    }
    #[inline(always)]
    fn write_u32(&mut self, i: u32) {
        self.push(u128::from(i), 4);
    }
    #[inline(always)]
    fn write_u64(&mut self, i: u64) {
        self.push(u128::from(i), 8);
    }
    #[inline(always)]
    fn write_u128(&mut self, i: u128) {
        self.push(i, 16);
    }
    #[inline(always)]
    fn write_usize(&mut self, i: usize) {
        self.push(u128::from(i as u64), 8);
    }
    #[inline(always)]
    fn write_isize(&mut self, i: isize) {
        self.push(u128::from(i as i64 as u64), 8);
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
