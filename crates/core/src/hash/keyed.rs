//! The keyed hasher: SipHash-1-3 under a secret 128-bit key.

use core::hash::{BuildHasher, Hasher};

use super::{mismatch, HasherSpec, PortableHasher};

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
/// With a plain seed ([`Xxh3Builder`](super::Xxh3Builder)), someone who can query a filter and see its answers
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
