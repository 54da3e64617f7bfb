//! The rank-select quotient filter's table (Pandey, Bender, Johnson, Patro, "A General-Purpose
//! Counting Filter: Making Every Bit Count", SIGMOD 2017), over fingerprints split into a
//! quotient (the home slot) and a remainder (what the slot stores).
//!
//! Every fingerprint with quotient `x` lives in the *run* of `x`: consecutive slots, in the
//! order of quotients, starting at `x` or later (after the runs of smaller quotients). Two bits
//! a slot say where runs are: `occupieds[x]` (some fingerprint has quotient `x`) and
//! `runends[i]` (slot `i` ends a run). The `k`-th occupied quotient's run ends at the `k`-th
//! run end, so a run is found by a rank (of occupieds) and a select (of runends), started
//! from a per-block count (`spill`: the slots at the start of a 64-slot block used by runs of
//! quotients before it) so that both stay within a word or two.
//!
//! Within a run remainders are kept sorted, and a remainder appears once per copy: the
//! table is a multiset of fingerprints, exact at that level (a false positive is two keys
//! sharing a fingerprint, never the table's doing).

use bloomkit_core::Error;

/// Slots per block (one word of each bitmap).
pub(crate) const BLOCK: usize = 64;

/// The table: `quotients` home slots, `slots` in all (the extra ones at the end hold runs
/// pushed past the last home slot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    /// Bits of remainder per slot, `1..=64 - quotient bits`.
    pub(crate) remainder_bits: u32,
    /// Home slots: `2^quotient_bits`.
    pub(crate) quotients: usize,
    /// Fingerprints stored (copies counted).
    pub(crate) len: u64,
    /// Bit `x` set: some fingerprint has quotient `x`.
    pub(crate) occupieds: Vec<u64>,
    /// Bit `i` set: slot `i` ends a run.
    pub(crate) runends: Vec<u64>,
    /// Per block: the slots at its start used by runs of quotients before the block.
    pub(crate) spill: Vec<u32>,
    /// The remainders, `remainder_bits` bits each, slot `i` at bit `i * remainder_bits`.
    pub(crate) remainders: Vec<u64>,
}

#[inline(always)]
fn bit(words: &[u64], i: usize) -> bool {
    words[i / 64] >> (i % 64) & 1 == 1
}

#[inline(always)]
fn set_bit(words: &mut [u64], i: usize, value: bool) {
    let mask = 1u64 << (i % 64);
    if value {
        words[i / 64] |= mask;
    } else {
        words[i / 64] &= !mask;
    }
}

/// The 64 bits of `words` from bit `start` on (bits before bit 0 read as zeros, past the
/// end as zeros).
#[inline(always)]
fn window(words: &[u64], start: isize) -> u64 {
    if start <= -64 {
        return 0;
    }
    if start < 0 {
        return words[0] << (-start);
    }
    let s = start as usize;
    let (i, o) = (s / 64, s % 64);
    let lo = words.get(i).map_or(0, |w| w >> o);
    if o == 0 {
        lo
    } else {
        lo | words.get(i + 1).map_or(0, |w| w << (64 - o))
    }
}

/// The bits of the destination word `w` in `from..to` (positions within the word, `to > from`).
#[inline(always)]
fn span_mask(from: usize, to: usize) -> u64 {
    (u64::MAX >> (64 - (to - from))) << from
}

/// Bits `lo..hi` moved up by `d` (`1..=64`) to `lo + d..hi + d`, a word at a time from the
/// top (so every source is read before it is written); the bits below `lo + d` are left for
/// the caller to set.
fn shift_up(words: &mut [u64], lo: usize, hi: usize, d: usize) {
    if hi <= lo {
        return;
    }
    let (dlo, dhi) = (lo + d, hi + d);
    let mut w = (dhi - 1) / 64;
    loop {
        let start = w * 64;
        let mask = span_mask(dlo.max(start) - start, dhi.min(start + 64) - start);
        let src = window(words, start as isize - d as isize);
        words[w] = (words[w] & !mask) | (src & mask);
        if start <= dlo {
            return;
        }
        w -= 1;
    }
}

/// Bits `lo..hi` moved down by `d` (`1..=64`, `d <= lo`) to `lo - d..hi - d`, a word at a
/// time from the bottom; the bits from `hi - d` up are left for the caller to set.
fn shift_down(words: &mut [u64], lo: usize, hi: usize, d: usize) {
    if hi <= lo {
        return;
    }
    let (dlo, dhi) = (lo - d, hi - d);
    let mut w = dlo / 64;
    loop {
        let start = w * 64;
        let mask = span_mask(dlo.max(start) - start, dhi.min(start + 64) - start);
        let src = window(words, (start + d) as isize);
        words[w] = (words[w] & !mask) | (src & mask);
        if start + 64 >= dhi {
            return;
        }
        w += 1;
    }
}

/// The position of the `k`-th set bit (0-based `k`) of `word`.
#[inline(always)]
fn select(mut word: u64, k: u32) -> u32 {
    for _ in 0..k {
        word &= word - 1;
    }
    word.trailing_zeros()
}

impl Table {
    /// An empty table of `2^quotient_bits` home slots, with room after the last one for the
    /// runs pushed past it.
    pub(crate) fn new(quotient_bits: u32, remainder_bits: u32) -> Result<Table, Error> {
        let (quotients, slots, words) = Self::shape(quotient_bits, remainder_bits);
        Ok(Table {
            remainder_bits,
            quotients,
            len: 0,
            occupieds: crate::zeroed(quotients.div_ceil(64))?,
            runends: crate::zeroed(slots / 64)?,
            spill: crate::zeroed(slots / BLOCK)?,
            remainders: crate::zeroed(words)?,
        })
    }

    /// The heap bytes of a table of this shape ([`heap_bytes`](Self::heap_bytes) once
    /// made), known before allocating.
    pub(crate) fn heap_bytes_of(quotient_bits: u32, remainder_bits: u32) -> u64 {
        let (quotients, slots, words) = Self::shape(quotient_bits, remainder_bits);
        ((quotients.div_ceil(64) + slots / 64 + words) * 8 + slots / BLOCK * 4) as u64
    }

    /// Home slots, all slots, and words of remainders of a table: room after the last home
    /// slot for the runs pushed past it (a few times the longest cluster at 95% load, which
    /// grows as the log of the size).
    fn shape(quotient_bits: u32, remainder_bits: u32) -> (usize, usize, usize) {
        let quotients = 1usize << quotient_bits;
        let extra = (BLOCK * (2 + quotient_bits as usize)).max(quotients / 16);
        let slots = (quotients + extra).div_ceil(BLOCK) * BLOCK;
        let words = (slots * remainder_bits as usize).div_ceil(64) + 1;
        (quotients, slots, words)
    }

    /// A table from decoded parts, checked as a constructor would have left it: every
    /// occupied quotient has a run that starts at or after it and after the previous run,
    /// runs are sorted, the count is theirs, empty slots and padding hold zeros. The
    /// per-block counts are derived, not read.
    #[cfg(feature = "serde")]
    pub(crate) fn from_parts(
        quotient_bits: u32,
        remainder_bits: u32,
        len: u64,
        occupieds: Vec<u64>,
        runends: Vec<u64>,
        remainders: Vec<u64>,
    ) -> Result<Table, String> {
        // The sizes first, from arithmetic: nothing is allocated for what the input claims.
        let (quotients, slots, words) = Self::shape(quotient_bits, remainder_bits);
        for (what, got, want) in [
            ("occupieds", occupieds.len(), quotients.div_ceil(64)),
            ("runends", runends.len(), slots / 64),
            ("remainders", remainders.len(), words),
        ] {
            if got != want {
                return Err(format!("{what}: {got} words, expected {want}"));
            }
        }
        let mut t = Table {
            remainder_bits,
            quotients,
            len,
            occupieds,
            runends,
            spill: crate::zeroed(slots / BLOCK).map_err(|e| e.to_string())?,
            remainders,
        };
        let zero_between = |t: &Table, from: usize, to: usize| -> Result<(), String> {
            match (from..to).find(|&i| t.remainder(i) != 0) {
                Some(i) => Err(format!("empty slot {i} holds a remainder")),
                None => Ok(()),
            }
        };
        let mut prev_end: Option<usize> = None;
        let mut total = 0u64;
        let mut next_end = 0usize; // where the search for the next run end starts
        let mut q = t.next_occupied(0);
        while let Some(x) = q {
            let start = prev_end.map_or(x, |e| (e + 1).max(x));
            let end = t
                .runend_from(next_end, 0)
                .ok_or_else(|| format!("quotient {x} has no run end"))?;
            if end < start {
                return Err(format!(
                    "the run of quotient {x} ends at {end}, before it starts"
                ));
            }
            zero_between(&t, prev_end.map_or(0, |e| e + 1), start)?;
            for i in start + 1..=end {
                if t.remainder(i) < t.remainder(i - 1) {
                    return Err(format!("the run of quotient {x} is not sorted"));
                }
            }
            // Blocks after `x` that this run reaches start with its slots.
            for b in (x / BLOCK + 1)..=(end / BLOCK) {
                t.spill[b] = u32::try_from(end + 1 - b * BLOCK)
                    .map_err(|_| format!("the run of quotient {x} spans over 2^32 slots"))?;
            }
            total += (end - start + 1) as u64;
            prev_end = Some(end);
            next_end = end + 1;
            q = t.next_occupied(x + 1);
        }
        if t.runend_from(next_end, 0).is_some() {
            return Err("more run ends than occupied quotients".into());
        }
        if total != len {
            return Err(format!("{len} fingerprints announced, {total} stored"));
        }
        zero_between(&t, prev_end.map_or(0, |e| e + 1), slots)?;
        let bits = slots * remainder_bits as usize;
        let tail = t.remainders[bits / 64] >> (bits % 64);
        if tail != 0 || t.remainders[bits / 64 + 1..].iter().any(|&w| w != 0) {
            return Err("bits past the last slot are set".into());
        }
        Ok(t)
    }

    /// Removes every fingerprint.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.occupieds.fill(0);
        self.runends.fill(0);
        self.spill.fill(0);
        self.remainders.fill(0);
    }

    /// Requests the cache lines a lookup of quotient `x` starts with: its occupied and
    /// run-end words, its block's count and the remainders at its home slot.
    #[inline(always)]
    pub(crate) fn prefetch(&self, x: usize) {
        use bloomkit_core::batch::prefetch;
        prefetch(&self.occupieds[x / 64]);
        prefetch(&self.runends[x / 64]);
        prefetch(&self.spill[x / BLOCK]);
        prefetch(&self.remainders[x * self.remainder_bits as usize / 64]);
    }

    /// Heap memory held.
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.occupieds.len() + self.runends.len() + self.remainders.len()) * 8
            + self.spill.len() * 4
    }

    /// All slots, home and extra.
    #[inline(always)]
    pub(crate) fn slots(&self) -> usize {
        self.runends.len() * 64
    }

    #[inline(always)]
    fn remainder(&self, i: usize) -> u64 {
        let r = self.remainder_bits as usize;
        let at = i * r;
        let (w, s) = (at / 64, at % 64);
        let lo = self.remainders[w] >> s;
        let v = if s + r > 64 {
            lo | (self.remainders[w + 1] << (64 - s))
        } else {
            lo
        };
        v & (u64::MAX >> (64 - r))
    }

    #[inline(always)]
    fn set_remainder(&mut self, i: usize, value: u64) {
        let r = self.remainder_bits as usize;
        let at = i * r;
        let (w, s) = (at / 64, at % 64);
        let mask = u64::MAX >> (64 - r);
        self.remainders[w] = (self.remainders[w] & !(mask << s)) | (value << s);
        if s + r > 64 {
            let high = r - (64 - s);
            let hmask = u64::MAX >> (64 - high);
            self.remainders[w + 1] = (self.remainders[w + 1] & !hmask) | (value >> (64 - s));
        }
    }

    /// The position of the `k`-th run end (0-based) at or after slot `from`, or `None` past
    /// the table.
    #[inline]
    fn runend_from(&self, from: usize, mut k: u32) -> Option<usize> {
        let mut w = from / 64;
        let mut word = self.runends.get(w)? & (u64::MAX << (from % 64));
        loop {
            let ones = word.count_ones();
            if k < ones {
                return Some(w * 64 + select(word, k) as usize);
            }
            k -= ones;
            w += 1;
            word = *self.runends.get(w)?;
        }
    }

    /// The end of the run of the largest occupied quotient `<= x`, if that is at or after the
    /// block of `x`; otherwise a position before `x`'s block (all that matters then is that
    /// it is below `x`).
    #[inline]
    fn last_end(&self, x: usize) -> isize {
        let b = x / BLOCK;
        let start = b * BLOCK + self.spill[b] as usize;
        let below = if x < self.quotients {
            let j = x % 64;
            (self.occupieds[b] & (u64::MAX >> (63 - j))).count_ones()
        } else {
            // Past the home slots: every occupied quotient of the last blocks is below.
            self.occupieds.get(b).map_or(0, |w| w.count_ones())
        };
        if below == 0 {
            start as isize - 1
        } else {
            self.runend_from(start, below - 1)
                .map_or(isize::MAX, |e| e as isize)
        }
    }

    /// The run of quotient `x` (which must be occupied): its first and last slot.
    #[inline]
    fn run(&self, x: usize) -> (usize, usize) {
        let b = x / BLOCK;
        let start = b * BLOCK + self.spill[b] as usize;
        let before = (self.occupieds[b] & ((1u64 << (x % 64)) - 1)).count_ones();
        let end = self
            .runend_from(start, before)
            .expect("an occupied quotient has a run end");
        let first = if before == 0 {
            start.max(x)
        } else {
            let prev = self
                .runend_from(start, before - 1)
                .expect("an earlier run end");
            (prev + 1).max(x)
        };
        (first, end)
    }

    /// The first empty slot at or after `i`, if the table has one.
    fn first_empty(&self, mut i: usize) -> Option<usize> {
        loop {
            if i >= self.slots() {
                return None;
            }
            let end = self.last_end(i);
            if end < i as isize {
                return Some(i);
            }
            i = end as usize + 1;
        }
    }

    /// How many copies of the fingerprint `(x, rem)` the table holds.
    pub(crate) fn count(&self, x: usize, rem: u64) -> u64 {
        if !bit(&self.occupieds, x) {
            return 0;
        }
        let (first, end) = self.run(x);
        (first..=end).filter(|&i| self.remainder(i) == rem).count() as u64
    }

    /// Whether the fingerprint `(x, rem)` is present.
    pub(crate) fn contains(&self, x: usize, rem: u64) -> bool {
        if !bit(&self.occupieds, x) {
            return false;
        }
        let (first, end) = self.run(x);
        for i in first..=end {
            let r = self.remainder(i);
            if r >= rem {
                return r == rem;
            }
        }
        false
    }

    /// Adds one copy of `(x, rem)`; `false` (and nothing changed) when no slot is left.
    pub(crate) fn insert(&mut self, x: usize, rem: u64) -> bool {
        let occupied = bit(&self.occupieds, x);
        // Where the fingerprint goes, and whether it ends its run.
        let (at, ends_run, old_end) = if occupied {
            let (first, end) = self.run(x);
            let mut at = end + 1;
            for i in first..=end {
                if self.remainder(i) > rem {
                    at = i;
                    break;
                }
            }
            (at, at == end + 1, Some(end))
        } else {
            let prev = self.last_end(x);
            (((prev + 1).max(x as isize)) as usize, true, None)
        };
        let Some(empty) = self.first_empty(at) else {
            return false;
        };
        // A cluster spanning 2^32 slots (never at 95% load) would overflow a block's count.
        if (x / BLOCK + 1..=empty / BLOCK).any(|c| self.spill[c] == u32::MAX) {
            return false;
        }
        // Slots at..empty move one to the right, with their run ends, a word at a time.
        let r = self.remainder_bits as usize;
        shift_up(&mut self.remainders, at * r, empty * r, r);
        shift_up(&mut self.runends, at, empty, 1);
        self.set_remainder(at, rem);
        if occupied {
            if ends_run {
                // Appended after the old end, which no longer ends the run.
                set_bit(&mut self.runends, old_end.expect("occupied"), false);
                set_bit(&mut self.runends, at, true);
            } else {
                set_bit(&mut self.runends, at, false);
            }
        } else {
            set_bit(&mut self.runends, at, true);
            set_bit(&mut self.occupieds, x, true);
        }
        // Blocks from after `x`'s up to the empty slot gained one slot of earlier runs.
        for c in (x / BLOCK + 1)..=(empty / BLOCK) {
            if c * BLOCK > x && c * BLOCK <= empty {
                self.spill[c] += 1;
            }
        }
        self.len += 1;
        true
    }

    /// Removes one copy of `(x, rem)`; `false` (and nothing changed) when there is none.
    pub(crate) fn remove(&mut self, x: usize, rem: u64) -> bool {
        if !bit(&self.occupieds, x) {
            return false;
        }
        let (first, end) = self.run(x);
        let Some(at) = (first..=end).find(|&i| self.remainder(i) == rem) else {
            return false;
        };
        // The last slot that moves left: the rest of this run, then every following run
        // that sits after its home slot (a run at its home cannot move left of it).
        let mut last = end;
        let mut q = x + 1;
        // Each next occupied quotient's run, while it sits right after and away from home.
        while let Some(y) = self.next_occupied(q) {
            let (ys, ye) = self.run(y);
            if ys != last + 1 || ys == y {
                break;
            }
            last = ye;
            q = y + 1;
        }
        let run_of_one = first == end;
        let r = self.remainder_bits as usize;
        shift_down(&mut self.remainders, (at + 1) * r, (last + 1) * r, r);
        shift_down(&mut self.runends, at + 1, last + 1, 1);
        set_bit(&mut self.runends, last, false);
        self.set_remainder(last, 0);
        if run_of_one {
            set_bit(&mut self.occupieds, x, false);
        } else if at == end {
            // The last copy of the run went: the one before now ends it.
            set_bit(&mut self.runends, end - 1, true);
        }
        for c in (x / BLOCK + 1)..=(last / BLOCK) {
            if c * BLOCK > x && c * BLOCK <= last {
                self.spill[c] -= 1;
            }
        }
        self.len -= 1;
        true
    }

    /// Every fingerprint `(quotient, remainder)`, in order (a copy per copy).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let mut next = self.next_occupied(0);
        let mut prev_end: Option<usize> = None;
        core::iter::from_fn(move || {
            let x = next?;
            let first = prev_end.map_or(x, |e| (e + 1).max(x));
            let end = self
                .runend_from(first, 0)
                .expect("an occupied quotient has a run end");
            prev_end = Some(end);
            next = self.next_occupied(x + 1);
            Some((first..=end).map(move |i| (x, self.remainder(i))))
        })
        .flatten()
    }

    /// The smallest occupied quotient `>= q`.
    fn next_occupied(&self, q: usize) -> Option<usize> {
        if q >= self.quotients {
            return None;
        }
        let mut w = q / 64;
        let mut word = self.occupieds[w] & (u64::MAX << (q % 64));
        loop {
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
            w += 1;
            word = *self.occupieds.get(w)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The word-at-a-time shifts move exactly the bits a bit-at-a-time loop moves, and
    /// leave every other bit alone.
    #[test]
    fn shifts_match_a_bit_loop() {
        let mut x = 11u64;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let z = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z ^ (z >> 31)
        };
        for _ in 0..20_000 {
            let words: Vec<u64> = (0..6).map(|_| next()).collect();
            let total = 64 * words.len();
            let d = 1 + (next() % 64) as usize;
            let lo = (next() as usize) % (total - d);
            let hi = lo + (next() as usize) % (total - d - lo + 1);
            let get = |w: &[u64], i: usize| w[i / 64] >> (i % 64) & 1;
            let put = |w: &mut [u64], i: usize, b: u64| {
                w[i / 64] = (w[i / 64] & !(1 << (i % 64))) | (b << (i % 64));
            };
            let mut fast = words.clone();
            let mut slow = words.clone();
            shift_up(&mut fast, lo, hi, d);
            for i in (lo..hi).rev() {
                let b = get(&slow, i);
                put(&mut slow, i + d, b);
            }
            assert_eq!(fast, slow, "up lo {lo} hi {hi} d {d}");
            if lo >= d {
                let mut fast = words.clone();
                let mut slow = words.clone();
                shift_down(&mut fast, lo, hi, d);
                for i in lo..hi {
                    let b = get(&slow, i);
                    put(&mut slow, i - d, b);
                }
                assert_eq!(fast, slow, "down lo {lo} hi {hi} d {d}");
            }
        }
    }

    /// Every fingerprint's count against a model, after each step, on a table small enough
    /// for clusters to reach block boundaries and the extra slots.
    #[test]
    fn follows_a_multiset_model() {
        let mut x = 7u64;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let z = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z ^ (z >> 31)
        };
        for (qbits, rbits, steps) in [(6, 3, 3000), (8, 5, 20_000), (10, 8, 20_000), (7, 13, 5000)]
        {
            let mut t = Table::new(qbits, rbits).unwrap();
            let mut model: BTreeMap<(usize, u64), u64> = BTreeMap::new();
            let cap = (t.quotients as f64 * 0.95) as u64;
            for step in 0..steps {
                let h = next();
                let q = (h >> 40) as usize % t.quotients;
                let r = h & ((1 << rbits) - 1);
                if h % 3 == 0 || t.len >= cap {
                    // Remove one held (or absent) fingerprint.
                    let pick = model.keys().nth(h as usize % model.len().max(1)).copied();
                    let (q, r) = if h % 5 == 0 {
                        (q, r)
                    } else {
                        pick.unwrap_or((q, r))
                    };
                    let had = model.get(&(q, r)).copied().unwrap_or(0);
                    assert_eq!(t.remove(q, r), had > 0, "step {step}: remove ({q}, {r})");
                    if had > 1 {
                        model.insert((q, r), had - 1);
                    } else {
                        model.remove(&(q, r));
                    }
                } else {
                    assert!(t.insert(q, r), "step {step}: full at {}", t.len);
                    *model.entry((q, r)).or_default() += 1;
                }
                if step % 97 == 0 || steps < 4000 {
                    for (&(q, r), &c) in &model {
                        assert_eq!(t.count(q, r), c, "step {step}: count ({q}, {r})");
                        assert!(t.contains(q, r));
                    }
                    assert_eq!(t.len, model.values().sum::<u64>());
                    for q in 0..t.quotients {
                        for r in 0..(1u64 << rbits).min(8) {
                            let held = model.contains_key(&(q, r));
                            assert_eq!(t.contains(q, r), held, "step {step}: ({q}, {r})");
                        }
                    }
                }
            }
        }
    }
}
