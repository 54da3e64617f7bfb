//! Batched lookups and inserts: hash a group of keys, prefetch their cache lines, then probe.
//!
//! One lookup into a filter much larger than the last-level cache waits for a miss to DRAM
//! (about 100 ns). A loop of single lookups overlaps some misses, as far as the CPU can
//! speculate past the previous key's branches. Batched calls make the overlap explicit:
//! [`pipeline`] runs a *stage* on [`LANES`] keys (hash, find the cache lines, [`prefetch`]
//! them), then a *finish* on the same keys in the same order (test or set the bits), by which
//! time the lines are arriving. Two groups are in flight: the next group is staged before
//! the current one is finished, so the first keys of a group do not wait for lines requested
//! just before them (at 10^7 keys, out of cache, this took the blocked filter's batched
//! lookups from 8.5-8.7 to 5.4-6.6 ns a key; `docs/performance.md`). Every Bloom variant's
//! `contains_batch` and `insert_batch` is built on it.

pub use crate::arch::{prefetch, prefetch_at, with_popcnt, with_simd};

/// Keys staged ahead of their probes: enough to cover a DRAM miss with the work of hashing
/// and prefetching the others, few enough that the lines are still in L1 when the finish
/// comes (chosen by measurement in `benches/`, see `docs/performance.md`).
pub const LANES: usize = 64;

/// Runs `stage` on each key and `finish` on each staged value, [`LANES`] keys at a time:
/// `stage` for a whole group and for the group after it, then `finish` for the first group,
/// in key order. Both get the
/// context `ctx`, `stage` to read (the filter, to hash and prefetch), `finish` to change (the
/// filter for inserts, the output for lookups).
///
/// # Examples
///
/// ```
/// use bloomkit_core::batch::{pipeline, prefetch};
///
/// let table = vec![10u64, 20, 30, 40];
/// let mut out = Vec::new();
/// pipeline(
///     &mut out,
///     [3usize, 0, 2],
///     |_, i| {
///         prefetch(&table[i]);
///         i
///     },
///     |out, i| out.push(table[i]),
/// );
/// assert_eq!(out, [40, 10, 30]);
/// ```
#[inline]
pub fn pipeline<C: ?Sized, K, P: Copy + Default>(
    ctx: &mut C,
    keys: impl IntoIterator<Item = K>,
    stage: impl FnMut(&C, K) -> P,
    mut finish: impl FnMut(&mut C, P),
) {
    pipeline_groups(ctx, keys, stage, |ctx, group| {
        for &p in group {
            finish(ctx, p);
        }
    });
}

/// [`pipeline`] with `finish` given each staged group at once (up to [`LANES`] values, in
/// key order): for a finish that is cheaper run over a whole group, as the blocked filter's
/// SIMD tests are inside one [`with_simd`] scope per group.
#[inline]
pub fn pipeline_groups<C: ?Sized, K, P: Copy + Default>(
    ctx: &mut C,
    keys: impl IntoIterator<Item = K>,
    mut stage: impl FnMut(&C, K) -> P,
    mut finish: impl FnMut(&mut C, &[P]),
) {
    // Two groups in flight: the next group is staged (its lines requested) before the
    // current one is finished, so no finish waits for lines requested just before it. One
    // place stages, so it inlines once, with the key iterator in registers.
    let mut keys = keys.into_iter();
    let (mut current, mut next) = ([P::default(); LANES], [P::default(); LANES]);
    let (mut len, mut more) = (0, true);
    loop {
        // After a group shorter than LANES the iterator is not asked again (it need not be
        // fused).
        let next_len = if more {
            fill(ctx, &mut next, &mut keys, &mut stage)
        } else {
            0
        };
        more = next_len == LANES;
        if len > 0 {
            finish(ctx, &current[..len]);
        }
        if next_len == 0 {
            break;
        }
        core::mem::swap(&mut current, &mut next);
        len = next_len;
    }
}

/// Stages keys from `keys` into `staged` until either runs out; returns how many.
#[inline(always)]
fn fill<C: ?Sized, K, P>(
    ctx: &C,
    staged: &mut [P; LANES],
    keys: &mut impl Iterator<Item = K>,
    stage: &mut impl FnMut(&C, K) -> P,
) -> usize {
    let mut len = 0;
    for (slot, key) in staged.iter_mut().zip(keys) {
        *slot = stage(ctx, key);
        len += 1;
    }
    len
}

/// [`pipeline`] for inserts: stages every key, then inserts it with `insert`, which says
/// whether the key was certainly new; returns how many were. The batched inserts of the
/// Bloom variants are this with their own `stage` and `insert`.
#[inline]
pub fn insert_counting<C: ?Sized, K, P: Copy + Default>(
    ctx: &mut C,
    keys: impl IntoIterator<Item = K>,
    stage: impl FnMut(&C, K) -> P,
    mut insert: impl FnMut(&mut C, P) -> bool,
) -> usize {
    let mut new = 0;
    pipeline(ctx, keys, stage, |ctx, p| {
        // `if`, not `new += usize::from(flag)`: rust-lang/rust#158206 miscompiles
        // bool-to-integer increments in release builds (see `bits::BitArray::set`).
        if insert(ctx, p) {
            new += 1;
        }
    });
    new
}

/// [`insert_counting`] for inserts that can be refused: stops at the first refusal and
/// returns its error (the keys before it are in, it and the keys after it are not; the
/// rest of `keys` is drained without being hashed), else how many keys were certainly new.
/// The batched `try_insert_batch` of the quotient, expandable and scalable filters.
#[inline]
pub fn try_insert_counting<C: ?Sized, K, P: Copy + Default, E>(
    ctx: &mut C,
    keys: impl IntoIterator<Item = K>,
    mut stage: impl FnMut(&C, K) -> P,
    mut insert: impl FnMut(&mut C, P) -> Result<bool, E>,
) -> Result<usize, E> {
    let mut new = 0;
    let refused = core::cell::Cell::new(false);
    let mut error = None;
    pipeline(
        ctx,
        keys,
        |ctx, key| {
            if refused.get() {
                P::default()
            } else {
                stage(ctx, key)
            }
        },
        |ctx, p| {
            if refused.get() {
                return;
            }
            match insert(ctx, p) {
                Ok(true) => new += 1,
                Ok(false) => {}
                Err(e) => {
                    refused.set(true);
                    error = Some(e);
                }
            }
        },
    );
    match error {
        Some(e) => Err(e),
        None => Ok(new),
    }
}

#[cfg(test)]
mod tests {
    use super::{pipeline, pipeline_groups, try_insert_counting, LANES};

    /// A refusal stops the inserts there: the keys before it are in, none after it, and
    /// the keys after it are not even staged.
    #[test]
    fn a_refusal_stops_the_batch_at_that_key() {
        for stop in [0usize, 1, LANES - 1, LANES, 2 * LANES + 3] {
            let mut taken = Vec::new();
            let mut staged = 0;
            let result = try_insert_counting(
                &mut taken,
                0..(3 * LANES + 7),
                |_, k| {
                    staged += 1;
                    k
                },
                |taken, k| {
                    if k == stop {
                        Err(k)
                    } else {
                        taken.push(k);
                        Ok(k % 2 == 0)
                    }
                },
            );
            assert_eq!(result, Err(stop));
            assert_eq!(taken, (0..stop).collect::<Vec<_>>());
            assert!(
                staged <= stop + 2 * LANES,
                "{staged} staged for a stop at {stop}"
            );
        }
        let mut taken = Vec::new();
        let all = try_insert_counting(
            &mut taken,
            0..10usize,
            |_, k| k,
            |t, k| {
                t.push(k);
                Ok::<_, ()>(k < 4)
            },
        );
        assert_eq!(all, Ok(4));
        assert_eq!(taken.len(), 10);
    }

    /// Every key is finished once, in order, whatever the count's remainder modulo the
    /// group size.
    #[test]
    fn finishes_every_key_once_in_order() {
        for n in [0, 1, LANES - 1, LANES, LANES + 1, 3 * LANES + 5] {
            let mut finished = Vec::new();
            pipeline(
                &mut finished,
                0..n,
                |_, k| k,
                |f: &mut Vec<usize>, k| f.push(k),
            );
            assert_eq!(finished, (0..n).collect::<Vec<_>>());
        }
    }

    /// A whole group is staged before any of it is finished.
    #[test]
    fn a_group_and_the_next_are_staged_before_it_is_finished() {
        for n in [LANES, 2 * LANES, 2 * LANES + 3] {
            let mut events = Vec::new();
            let staged = core::cell::Cell::new(0usize);
            pipeline(
                &mut events,
                0..n,
                |_, k| {
                    staged.set(staged.get() + 1);
                    k
                },
                |events: &mut Vec<(usize, usize)>, k| events.push((k, staged.get())),
            );
            assert_eq!(events.len(), n);
            for (k, staged_then) in events {
                let group_end = ((k / LANES + 1) * LANES).min(n);
                assert_eq!(staged_then, (group_end + LANES).min(n), "key {k} of {n}");
            }
        }
    }

    /// After a group shorter than `LANES` the keys are not asked again: an iterator that is
    /// not fused (here one that panics if asked after its end) is safe to pass.
    #[test]
    fn a_short_group_ends_the_keys() {
        struct Once {
            left: usize,
            ended: bool,
        }
        impl Iterator for Once {
            type Item = usize;
            fn next(&mut self) -> Option<usize> {
                assert!(!self.ended, "asked again after its end");
                if self.left == 0 {
                    self.ended = true;
                    return None;
                }
                self.left -= 1;
                Some(self.left)
            }
        }
        for n in [0, 1, LANES - 1, LANES, LANES + 1, 2 * LANES, 3 * LANES + 5] {
            let mut count = 0;
            pipeline(
                &mut count,
                Once {
                    left: n,
                    ended: false,
                },
                |_, k| k,
                |c: &mut usize, _| *c += 1,
            );
            assert_eq!(count, n);
        }
    }

    /// `pipeline_groups` hands over full groups in order, then the remainder.
    #[test]
    fn groups_are_full_but_the_last() {
        for n in [0, 1, LANES, LANES + 1, 3 * LANES + 5] {
            let mut groups: Vec<Vec<usize>> = Vec::new();
            pipeline_groups(
                &mut groups,
                0..n,
                |_, k| k,
                |g, group| g.push(group.to_vec()),
            );
            let flat: Vec<usize> = groups.iter().flatten().copied().collect();
            assert_eq!(flat, (0..n).collect::<Vec<_>>());
            let (last, full) = groups
                .split_last()
                .map_or((None, &[][..]), |(l, f)| (Some(l), f));
            assert!(full.iter().all(|g| g.len() == LANES), "{n}");
            assert!(
                last.map_or(n == 0, |l| !l.is_empty() && l.len() <= LANES),
                "{n}"
            );
        }
    }
}
