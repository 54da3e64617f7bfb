//! What the static filters share: the mixing of a key's hash with a construction seed, the
//! seeds themselves, and gathering the input hashes.

use core::borrow::Borrow;
use core::hash::{BuildHasher, Hash};

use bloomkit_core::{bits, Error};

/// How many seeds a build tries before it reports [`Error::ConstructionFailed`]. With
/// distinct keys one attempt fails with a probability of a few percent at most (binary fuse
/// below 10^3 keys; far less above), so 64 failures in a row do not happen by chance.
pub(crate) const MAX_ATTEMPTS: u32 = 64;

/// The murmur3 64-bit finalizer of `hash + seed`: a bijection for a fixed seed, so two keys
/// share a mixed hash only when they share their 64-bit hash.
#[inline(always)]
pub(crate) fn mix(hash: u64, seed: u64) -> u64 {
    let mut h = hash.wrapping_add(seed);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The seeds a build tries, in order: a fixed splitmix64 stream, so the same keys always
/// give the same filter (and the same bytes).
#[derive(Debug, Clone)]
pub(crate) struct Seeds(u64);

impl Seeds {
    pub(crate) fn new() -> Seeds {
        Seeds(0x726b_2b9d_438b_9d4d)
    }
}

impl Iterator for Seeds {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Some(z ^ (z >> 31))
    }
}

/// The hashes of `keys` under `hasher`, in a vector allocated fallibly (its capacity from
/// the iterator's lower bound, grown as needed).
pub(crate) fn hash_keys<K, I, S>(keys: I, hasher: &S) -> Result<Vec<u64>, Error>
where
    K: Hash + ?Sized,
    I: IntoIterator,
    I::Item: Borrow<K>,
    S: BuildHasher,
{
    collect(keys.into_iter().map(|k| hasher.hash_one::<&K>(k.borrow())))
}

/// `hashes` in a vector, allocated fallibly: reserved for the iterator's lower bound, filled
/// without a capacity test per value, grown (fallibly) when more come.
pub(crate) fn collect(mut hashes: impl Iterator<Item = u64>) -> Result<Vec<u64>, Error> {
    let mut v = with_capacity(hashes.size_hint().0)?;
    loop {
        let room = v.capacity() - v.len();
        v.extend(hashes.by_ref().take(room));
        match hashes.next() {
            None => return Ok(v),
            Some(h) => {
                let more = v.len().max(1024);
                v.try_reserve(more).map_err(|_| Error::AllocationFailed {
                    bytes: ((v.len() + more) as u64).saturating_mul(8),
                })?;
                v.push(h);
            }
        }
    }
}

/// An empty vector with room for `len` values, allocated fallibly.
pub(crate) fn with_capacity<T>(len: usize) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Error::AllocationFailed {
            bytes: (len as u64).saturating_mul(core::mem::size_of::<T>() as u64),
        })?;
    Ok(v)
}

/// `len` zeroed values, allocated fallibly.
pub(crate) fn zeroed<T: Default + Clone>(len: usize) -> Result<Vec<T>, Error> {
    bits::filled_vec(len as u64, T::default)
}

/// The keys' `hashes` mixed with `seed` ([`mix`]), written to `out` (as long as `hashes`)
/// in the order of their top `bits` bits: a counting sort into `2^bits` buckets, so that a
/// build that places each key by its mixed hash's top bits (a binary fuse filter's first
/// segment, a ribbon filter's start row) then walks its tables in order, in cache, instead
/// of at random.
pub(crate) fn mixed_by_top_bits(hashes: &[u64], seed: u64, bits: u32, out: &mut [u64]) {
    debug_assert!((1..=32).contains(&bits) && out.len() == hashes.len());
    let buckets = 1usize << bits;
    let shift = 64 - bits;
    let mut starts = vec![0usize; buckets + 1];
    for &h in hashes {
        starts[(mix(h, seed) >> shift) as usize + 1] += 1;
    }
    for i in 0..buckets {
        starts[i + 1] += starts[i];
    }
    for &h in hashes {
        let m = mix(h, seed);
        let b = (m >> shift) as usize;
        out[starts[b]] = m;
        starts[b] += 1;
    }
}

/// The high 64 bits of `a * b`: a value in `0..b` from a uniform `a`, without a division.
#[inline(always)]
pub(crate) fn mul_high(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_fixed() {
        let a: Vec<u64> = Seeds::new().take(3).collect();
        let b: Vec<u64> = Seeds::new().take(3).collect();
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
    }

    #[test]
    fn mix_is_a_bijection_on_a_sample() {
        let mut seen: Vec<u64> = (0..100_000u64).map(|h| mix(h, 7)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 100_000);
    }
}
