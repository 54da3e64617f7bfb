//! Which local filter a shared filter mirrors, bit for bit: [`SharedLayout`], implemented by
//! [`BlockedBloomFilter`] and [`BloomFilter`].

use core::hash::Hash;

use bloomkit_classic::{BlockedBloomFilter, BloomFilter};
use bloomkit_core::bits::BitArray;
use bloomkit_core::hash::{block_positions, reduce, ProbeScheme, BLOCK_BITS};
use bloomkit_core::sizing::{self, Design};
use bloomkit_core::PortableHasher;

/// How the bits are laid out: a property of the local filter type a shared filter mirrors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// [`BlockedBloomFilter`]: all k bits of a key in one 512-bit block. Can be sharded.
    Blocked,
    /// [`BloomFilter`]: k bits anywhere in the array. One shard (one Redis string) only,
    /// since every key touches the whole array.
    Classic,
}

impl Layout {
    /// The name kept in the filter's configuration.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Blocked => "blocked",
            Layout::Classic => "classic",
        }
    }

    /// The bits of one indivisible unit: a shard boundary falls on a multiple of it.
    pub(crate) fn unit_bits(self) -> u64 {
        match self {
            Layout::Blocked => BLOCK_BITS,
            Layout::Classic => 64,
        }
    }
}

/// The shape of a filter: what must agree for two filters to have the same bits for the same
/// keys.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// The layout.
    pub layout: Layout,
    /// `m`, all shards together: a multiple of 512 (blocked), any size (classic; its string
    /// holds whole 64-bit words).
    pub bits: u64,
    /// `k`, positions per key.
    pub hashes: u32,
    /// The hasher's id (its [`PortableHasher::spec`]).
    pub hasher_id: u8,
    /// The hasher's seed.
    pub seed: u64,
    /// How the classic layout places a key's positions ([`BloomFilter::probe_scheme`]):
    /// `Some` for the classic layout (a filter created before the scheme was recorded in
    /// Redis reads as [`ProbeScheme::Enhanced`]), `None` for the blocked layout, whose
    /// positions have one scheme.
    pub probes: Option<ProbeScheme>,
    /// The items and rate the filter was sized for.
    pub design: Design,
}

/// A local filter type whose bits a shared filter keeps in Redis: the shared filter hashes
/// keys and places their bits exactly as this type does, so [`download`] gives this type's
/// filter, equal to one built locally from the same keys, and [`upload`] / [`union_with`] take
/// one.
///
/// [`download`]: crate::RedisFilter::download
/// [`upload`]: crate::RedisFilter::upload
/// [`union_with`]: crate::RedisFilter::union_with
pub trait SharedLayout: Sized {
    /// The key type.
    type Key: Hash + ?Sized;
    /// The hasher, recorded in the configuration by id and seed.
    type Hasher: PortableHasher + Clone;
    /// The layout.
    const LAYOUT: Layout;

    /// `(m, k)` for `items` at rate `fpr`, as this type's builder sizes them.
    ///
    /// # Errors
    /// The sizing module's: `items` = 0, `fpr` outside (0, 1) or NaN, sizes that overflow.
    fn plan(items: u64, fpr: f64) -> Result<(u64, u32), bloomkit_core::Error>;

    /// The filter's shape.
    fn shape(&self) -> Shape;

    /// The bit array, as words (bit `i` is bit `i % 64` of word `i / 64`).
    fn words(&self) -> &[u64];

    /// An empty filter of `shape`, hashing with `hasher`.
    ///
    /// # Errors
    /// When no filter of this type has this shape, or it cannot be allocated.
    fn zeroed(shape: &Shape, hasher: Self::Hasher) -> Result<Self, bloomkit_core::Error>;

    /// ORs `words` into the bit array's words from word `at` on (bit `i` is bit `i % 64` of
    /// word `i / 64`).
    ///
    /// # Errors
    /// When the words run past the end of the array (or set bits past it).
    fn or_words(&mut self, at: usize, words: &[u64]) -> Result<(), bloomkit_core::Error>;

    /// Appends the `k` bit positions in `[0, m)` of the key whose hash is `hash` in a
    /// filter of `shape` to `out`.
    fn positions(hash: u64, shape: &Shape, out: &mut Vec<u64>);
}

impl<K: Hash + ?Sized, S: PortableHasher + Clone> SharedLayout for BlockedBloomFilter<K, S> {
    type Key = K;
    type Hasher = S;
    const LAYOUT: Layout = Layout::Blocked;

    fn plan(items: u64, fpr: f64) -> Result<(u64, u32), bloomkit_core::Error> {
        Design::new(items, fpr)?;
        let plan = sizing::blocked_plan(items, fpr)?;
        let bits = plan
            .bits
            .checked_mul(BLOCK_BITS)
            .ok_or(bloomkit_core::Error::TooLarge {
                what: bloomkit_core::Unit::Bits,
                size: plan.bits as f64 * BLOCK_BITS as f64,
                max: bloomkit_core::bits::MAX_BITS,
            })?;
        Ok((bits, plan.hashes))
    }

    fn shape(&self) -> Shape {
        shape_of(
            Layout::Blocked,
            self.num_bits(),
            self.num_hashes(),
            None,
            self.hasher(),
            self.design(),
        )
    }

    fn words(&self) -> &[u64] {
        BlockedBloomFilter::words(self)
    }

    fn zeroed(shape: &Shape, hasher: S) -> Result<Self, bloomkit_core::Error> {
        BlockedBloomFilter::empty(
            shape.bits / BLOCK_BITS,
            shape.hashes,
            hasher,
            Some(shape.design),
        )
    }

    fn or_words(&mut self, at: usize, words: &[u64]) -> Result<(), bloomkit_core::Error> {
        BlockedBloomFilter::or_words(self, at, words)
    }

    #[inline]
    fn positions(hash: u64, shape: &Shape, out: &mut Vec<u64>) {
        let base = reduce(hash, shape.bits / BLOCK_BITS) * BLOCK_BITS;
        out.extend(block_positions(hash, shape.hashes).map(|p| base + p));
    }
}

impl<K: Hash + ?Sized, S: PortableHasher + Clone> SharedLayout for BloomFilter<K, S> {
    type Key = K;
    type Hasher = S;
    const LAYOUT: Layout = Layout::Classic;

    fn plan(items: u64, fpr: f64) -> Result<(u64, u32), bloomkit_core::Error> {
        Design::new(items, fpr)?;
        let plan = sizing::plan(items, fpr)?;
        Ok((sizing::coprime_bits(plan.bits, plan.hashes)?, plan.hashes))
    }

    fn shape(&self) -> Shape {
        shape_of(
            Layout::Classic,
            self.num_bits(),
            self.num_hashes(),
            Some(self.probe_scheme()),
            self.hasher(),
            self.design(),
        )
    }

    fn words(&self) -> &[u64] {
        self.bits().words()
    }

    fn zeroed(shape: &Shape, hasher: S) -> Result<Self, bloomkit_core::Error> {
        BloomFilter::from_bit_array(
            BitArray::new(shape.bits)?,
            shape.hashes,
            classic_probes(shape),
            hasher,
            Some(shape.design),
        )
    }

    fn or_words(&mut self, at: usize, words: &[u64]) -> Result<(), bloomkit_core::Error> {
        BloomFilter::or_words(self, at, words)
    }

    #[inline]
    fn positions(hash: u64, shape: &Shape, out: &mut Vec<u64>) {
        out.extend(classic_probes(shape).positions(hash, shape.bits, shape.hashes));
    }
}

/// The classic layout's scheme: a shape without one is of a filter created before it was
/// recorded.
fn classic_probes(shape: &Shape) -> ProbeScheme {
    shape.probes.unwrap_or(ProbeScheme::Enhanced)
}

fn shape_of<S: PortableHasher>(
    layout: Layout,
    bits: u64,
    hashes: u32,
    probes: Option<ProbeScheme>,
    hasher: &S,
    design: Option<Design>,
) -> Shape {
    Shape {
        layout,
        bits,
        hashes,
        hasher_id: hasher.spec().id,
        seed: hasher.seed(),
        probes,
        // A filter built with `with_bits` has no design point: its capacity at 1% stands in.
        design: design.unwrap_or_else(|| {
            let capacity = sizing::capacity(bits, hashes, 0.01).unwrap_or(1).max(1);
            Design::new(capacity, 0.01).expect("a capacity of at least 1 at 1% is valid")
        }),
    }
}
