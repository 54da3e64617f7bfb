//! The rank-select quotient filter's table (Pandey, Bender, Johnson, Patro, "A General-Purpose
//! Counting Filter: Making Every Bit Count", SIGMOD 2017), over fingerprints split into a
//! quotient (the home slot) and a remainder (what the slot stores).
//!
//! Every fingerprint with quotient `x` lives in the *run* of `x`: consecutive slots, in the
//! order of quotients, starting at `x` or later (after the runs of smaller quotients). Two bits
//! a slot say where runs are: `occupied[x]` (some fingerprint has quotient `x`) and
//! `runend[i]` (slot `i` ends a run). The `k`-th occupied quotient's run ends at the `k`-th
//! run end, so a run is found by a rank (of occupieds) and a select (of run ends), started
//! from a per-block count (`spill`: the slots at the start of a 64-slot block used by runs of
//! quotients before it) so that both stay within a word or two.
//!
//! The slots are stored in blocks of 64, each `3 + r` words: its spill count, its occupied
//! bits, its run-end bits, then its 64 remainders packed `r` bits each (slot `j` at bit
//! `j * r` of the `r` words). A lookup reads one block (two cache lines at most for `r <= 13`)
//! where separate arrays would cost a miss each; the same words are the byte format's
//! payload, so a view answers from them in place.
//!
//! Within a run remainders are kept sorted, and a remainder appears once per copy: the
//! table is a multiset of fingerprints, exact at that level (a false positive is two keys
//! sharing a fingerprint, never the table's doing).

use bloomkit_core::bits::select;
use bloomkit_core::Error;

/// Slots per block (one word of each bitmap).
pub(crate) const BLOCK: usize = 64;

/// Words of a block before its remainders: the spill count, the occupied bits, the run-end
/// bits.
const HEAD: usize = 3;

/// The table: `quotients` home slots in blocks of [`BLOCK`] (the extra blocks at the end
/// hold runs pushed past the last home slot). `W` holds the words: a `Vec<u64>` for a
/// filter, a borrowed slice for a view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table<W = Vec<u64>> {
    /// Bits of remainder per slot, `1..=` the bits a hash has left after its home slot.
    pub(crate) remainder_bits: u32,
    /// Home slots: a multiple of [`BLOCK`].
    pub(crate) quotients: usize,
    /// Fingerprints stored (copies counted).
    pub(crate) len: u64,
    /// Distinct fingerprints stored.
    pub(crate) distinct: u64,
    /// Slots in use (a fingerprint held in several copies takes one to a few, see
    /// [`entry_len`]).
    pub(crate) used: u64,
    /// Blocks, home and extra (the words over `3 + remainder_bits`, kept to spare a
    /// division on every lookup).
    pub(crate) blocks: usize,
    /// The blocks, `3 + remainder_bits` words each (see the module docs).
    pub(crate) words: W,
}

/// The 64 bits of `words` from bit `start` on (bits past the end read as zeros).
#[inline(always)]
fn window(words: &[u64], start: usize) -> u64 {
    let (i, o) = (start / 64, start % 64);
    let lo = words.get(i).map_or(0, |w| w >> o);
    if o == 0 {
        lo
    } else {
        lo | words.get(i + 1).map_or(0, |w| w << (64 - o))
    }
}

/// The bits of a word in `from..to` (positions within the word, `to > from`).
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
        let src = if start >= d {
            window(words, start - d)
        } else if d - start < 64 {
            words[0] << (d - start)
        } else {
            0
        };
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
        let src = window(words, start + d);
        words[w] = (words[w] & !mask) | (src & mask);
        if start + 64 >= dhi {
            return;
        }
        w += 1;
    }
}

/// Home slots, blocks in all, and words of a table of `quotients` home slots (a multiple of
/// [`BLOCK`]): room after the last home slot for the runs pushed past it (a few times the
/// longest cluster at 95% load, which grows as the log of the size).
fn shape_of(quotients: usize, remainder_bits: u32) -> (usize, usize, usize) {
    let log = usize::BITS - (quotients - 1).leading_zeros();
    let extra = (BLOCK * (2 + log as usize)).max(quotients / 64);
    let blocks = (quotients + extra).div_ceil(BLOCK);
    (quotients, blocks, blocks * (HEAD + remainder_bits as usize))
}

impl Table {
    /// An empty table of `2^quotient_bits` home slots, with room after the last one for the
    /// runs pushed past it.
    #[cfg(test)]
    pub(crate) fn new(quotient_bits: u32, remainder_bits: u32) -> Result<Table, Error> {
        Table::with_home_slots(1 << quotient_bits, remainder_bits)
    }

    /// An empty table of `quotients` home slots (a multiple of [`BLOCK`]).
    pub(crate) fn with_home_slots(quotients: usize, remainder_bits: u32) -> Result<Table, Error> {
        let (quotients, blocks, words) = shape_of(quotients, remainder_bits);
        Ok(Table {
            remainder_bits,
            quotients,
            len: 0,
            distinct: 0,
            used: 0,
            blocks,
            words: crate::zeroed(words)?,
        })
    }

    /// A table holding `entries` (fingerprint and copies), at most `limit` slots used. In
    /// order (by quotient, then remainder) each lands after the ones before it, so nothing
    /// moves (any order is correct, only slower). `None` when they do not fit.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] (inside the `Some`).
    pub(crate) fn from_sorted(
        quotients: usize,
        remainder_bits: u32,
        limit: u64,
        entries: impl Iterator<Item = (usize, u64, u64)>,
    ) -> Option<Result<Table, Error>> {
        let mut t = match Table::with_home_slots(quotients, remainder_bits) {
            Ok(t) => t,
            Err(e) => return Some(Err(e)),
        };
        for (x, rem, copies) in entries {
            t.add(x, rem, copies, limit)?;
        }
        Some(Ok(t))
    }

    /// The heap bytes of a table of `quotients` home slots (a multiple of [`BLOCK`]), known
    /// before allocating.
    pub(crate) fn heap_bytes_for(quotients: usize, remainder_bits: u32) -> u64 {
        shape_of(quotients, remainder_bits).2 as u64 * 8
    }

    /// Removes every fingerprint.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.distinct = 0;
        self.used = 0;
        self.words.fill(0);
    }

    #[inline(always)]
    fn set_remainder(&mut self, i: usize, value: u64) {
        let r = self.remainder_bits as usize;
        let at = (i % BLOCK) * r;
        let (w, s) = ((i / BLOCK) * self.stride() + HEAD + at / 64, at % 64);
        let mask = u64::MAX >> (64 - r);
        self.words[w] = (self.words[w] & !(mask << s)) | (value << s);
        if s + r > 64 {
            let high = r - (64 - s);
            let hmask = u64::MAX >> (64 - high);
            self.words[w + 1] = (self.words[w + 1] & !hmask) | (value >> (64 - s));
        }
    }

    /// Sets bit `i % 64` of word `field` (1: occupied, 2: run end) of `i`'s block.
    #[inline(always)]
    fn set_bit(&mut self, field: usize, i: usize, value: bool) {
        let w = (i / BLOCK) * self.stride() + field;
        let mask = 1u64 << (i % BLOCK);
        if value {
            self.words[w] |= mask;
        } else {
            self.words[w] &= !mask;
        }
    }

    /// Adds `delta` (one, or minus one as `u64::MAX`) to the spill count of every block
    /// from `from` through `to`.
    fn add_spill(&mut self, from: usize, to: usize, delta: u64) {
        let stride = self.stride();
        for b in from..=to {
            self.words[b * stride] = self.words[b * stride].wrapping_add(delta);
        }
    }

    /// Slots `at..empty` (remainders and run-end bits) moved up one, to `at + 1..=empty`,
    /// block by block from the top so that every slot is read before it is overwritten.
    #[inline(always)]
    fn shift_slots_up(&mut self, at: usize, empty: usize) {
        if empty <= at {
            return;
        }
        let r = self.remainder_bits as usize;
        let stride = self.stride();
        for c in ((at + 1) / BLOCK..=empty / BLOCK).rev() {
            let first = c * BLOCK;
            let dlo = (at + 1).max(first);
            let dhi = empty.min(first + BLOCK - 1);
            // Destinations whose source is in this block.
            let ilo = dlo.max(first + 1);
            if ilo <= dhi {
                let (a, b) = (ilo - first, dhi - first);
                let base = c * stride;
                let mask = span_mask(a, b + 1);
                let ends = self.words[base + 2];
                self.words[base + 2] = (ends & !mask) | ((ends << 1) & mask);
                shift_up(
                    &mut self.words[base + HEAD..base + stride],
                    (a - 1) * r,
                    b * r,
                    r,
                );
            }
            if dlo == first {
                // The block's first slot takes the previous block's last (not moved yet).
                let (rem, end) = (self.remainder(first - 1), self.is_runend(first - 1));
                self.set_remainder(first, rem);
                self.set_bit(2, first, end);
            }
        }
    }

    /// Slots `at + 1..=last` moved down one, to `at..last`, block by block from the bottom;
    /// slot `last` is left for the caller.
    #[inline(always)]
    fn shift_slots_down(&mut self, at: usize, last: usize) {
        if last <= at {
            return;
        }
        let r = self.remainder_bits as usize;
        let stride = self.stride();
        for c in at / BLOCK..=(last - 1) / BLOCK {
            let first = c * BLOCK;
            let dlo = at.max(first);
            let dhi = (last - 1).min(first + BLOCK - 1);
            // Destinations whose source is in this block.
            let ihi = dhi.min(first + BLOCK - 2);
            if dlo <= ihi {
                let (a, b) = (dlo - first, ihi - first);
                let base = c * stride;
                let mask = span_mask(a, b + 1);
                let ends = self.words[base + 2];
                self.words[base + 2] = (ends & !mask) | ((ends >> 1) & mask);
                shift_down(
                    &mut self.words[base + HEAD..base + stride],
                    (a + 1) * r,
                    (b + 2) * r,
                    r,
                );
            }
            if dhi == first + BLOCK - 1 {
                // The block's last slot takes the next block's first (not moved yet).
                let next = first + BLOCK;
                let (rem, end) = (self.remainder(next), self.is_runend(next));
                self.set_remainder(next - 1, rem);
                self.set_bit(2, next - 1, end);
            }
        }
    }

    /// Writes `copies` of remainder `x` as [`entry_len`] slots from `head` on (see
    /// [`entry_len`] for the encoding).
    fn write_entry(&mut self, head: usize, x: u64, copies: u64) {
        let (r, top) = (self.remainder_bits, max_remainder(self.remainder_bits));
        let b = top - x;
        self.set_remainder(head, x);
        if copies == 1 {
            return;
        }
        let len = entry_len(r, x, copies) as usize;
        if copies == 2 || b <= 1 {
            // Copies side by side; or, past two with one digit value, the largest remainder
            // between two of `x` (one a copy).
            let fill = if copies == 2 || b == 0 { x } else { top };
            for i in head + 1..head + len - 1 {
                self.set_remainder(i, fill);
            }
        } else {
            // The digits of `copies - 3` in base `b`, most significant first, each as a value
            // above `x`.
            let mut v = copies - 3;
            for i in (head + 1..head + len - 1).rev() {
                self.set_remainder(i, x + 1 + v % b);
                v /= b;
            }
        }
        self.set_remainder(head + len - 1, x);
    }

    /// Opens slot `at` in the run of quotient `x` (a new run when `end` is `None`, else the
    /// run that ends at `end`, with `at <= end + 1`): the slots from `at` up to the first
    /// empty one move up one. The new slot's remainder is left for the caller. `None`, and
    /// nothing changed, when no slot is empty from `at` on.
    #[inline(always)]
    fn open_slot(&mut self, x: usize, at: usize, end: Option<usize>) -> Option<()> {
        let empty = self.first_empty(at)?;
        self.shift_slots_up(at, empty);
        match end {
            // Appended after the old end, which no longer ends the run.
            Some(end) if at == end + 1 => {
                self.set_bit(2, end, false);
                self.set_bit(2, at, true);
            }
            Some(_) => self.set_bit(2, at, false),
            None => {
                self.set_bit(2, at, true);
                self.set_bit(1, x, true);
            }
        }
        // Blocks after `x`'s, up to the empty slot's, gained one slot of earlier runs.
        if empty / BLOCK > x / BLOCK {
            self.add_spill(x / BLOCK + 1, empty / BLOCK, 1);
        }
        self.used += 1;
        Some(())
    }

    /// Closes slot `at` of the run of quotient `x` that ends at `end`: the rest of the run,
    /// and every following run that sits right after it and away from its home slot, move
    /// down one.
    #[inline(always)]
    fn close_slot(&mut self, x: usize, at: usize, end: usize) {
        let last = self.first_unshifted(end + 1).unwrap_or(self.slots()) - 1;
        let run_of_one = self.is_run_start(x, end);
        self.shift_slots_down(at, last);
        self.set_bit(2, last, false);
        self.set_remainder(last, 0);
        if run_of_one {
            self.set_bit(1, x, false);
        } else if at == end {
            // The run's last slot went: the one before now ends it.
            self.set_bit(2, end - 1, true);
        }
        if last / BLOCK > x / BLOCK {
            self.add_spill(x / BLOCK + 1, last / BLOCK, u64::MAX);
        }
        self.used -= 1;
    }

    /// Adds `copies` (at least one) of `(x, rem)`, using at most `limit` slots in all:
    /// `Some(true)` when the table held no copy of it before, `None` when it does not fit.
    /// One copy needs one slot at most, and then `None` changes nothing; more copies are for
    /// building a table ([`from_sorted`](Self::from_sorted)), which a `None` leaves unusable.
    #[inline(always)]
    pub(crate) fn add(&mut self, x: usize, rem: u64, copies: u64, limit: u64) -> Option<bool> {
        let r = self.remainder_bits;
        // Counted copies take fewer slots than copies: the total, not the slots, can reach
        // 2^64 (a decoded table, or unions of unions).
        self.len.checked_add(copies)?;
        if !self.is_occupied(x) {
            let need = entry_len(r, rem, copies);
            if self.used + need > limit {
                return None;
            }
            let at = (self.last_end(x) + 1).max(x as isize) as usize;
            self.open_slot(x, at, None)?;
            for i in 1..need as usize {
                self.open_slot(x, at + i, Some(at + i - 1))?;
            }
            self.write_entry(at, rem, copies);
            self.distinct += 1;
            self.len += copies;
            return Some(true);
        }
        let end = self.run_end(x);
        let (head, held, at) = match self.find(x, end, rem) {
            Found::Entry { head, last, copies } => (head, copies, last + 1),
            Found::Before(at) => (at, 0, at),
        };
        let total = held.checked_add(copies)?;
        let need = entry_len(r, rem, total) - entry_len(r, rem, held);
        if self.used + need > limit {
            return None;
        }
        for i in 0..need as usize {
            self.open_slot(x, at + i, Some(end + i))?;
        }
        self.write_entry(head, rem, total);
        // An `if`, not `+= u64::from(held == 0)` next to the flag's use (rust-lang/rust#158206).
        let new = held == 0;
        if new {
            self.distinct += 1;
        }
        self.len += copies;
        Some(new)
    }

    /// Removes one copy of `(x, rem)`; `false` (and nothing changed) when there is none.
    /// Never needs a slot: fewer copies never take more.
    #[inline(always)]
    pub(crate) fn remove(&mut self, x: usize, rem: u64) -> bool {
        if !self.is_occupied(x) {
            return false;
        }
        let end = self.run_end(x);
        let Found::Entry { head, last, copies } = self.find(x, end, rem) else {
            return false;
        };
        if copies == 1 {
            self.close_slot(x, head, end);
            self.distinct -= 1;
        } else {
            let r = self.remainder_bits;
            let spare = (last - head + 1) - entry_len(r, rem, copies - 1) as usize;
            for i in 0..spare {
                self.close_slot(x, head + 1, end - i);
            }
            self.write_entry(head, rem, copies - 1);
        }
        self.len -= 1;
        true
    }

    /// Raw mode (the expandable filter's): a slot is an entry, a run is sorted by value and
    /// may repeat one. Adds `value` to the run of `x`, in order, while at most `limit` slots
    /// are used; `None`, and nothing changed, when it does not fit.
    pub(crate) fn push_raw(&mut self, x: usize, value: u64, limit: u64) -> Option<()> {
        if self.used >= limit {
            return None;
        }
        if self.is_occupied(x) {
            let end = self.run_end(x);
            let mut at = end + 1;
            while self.remainder(at - 1) > value {
                at -= 1;
                if self.is_run_start(x, at) {
                    break;
                }
            }
            self.open_slot(x, at, Some(end))?;
            self.set_remainder(at, value);
        } else {
            let at = (self.last_end(x) + 1).max(x as isize) as usize;
            self.open_slot(x, at, None)?;
            self.set_remainder(at, value);
        }
        self.len += 1;
        self.distinct += 1;
        Some(())
    }

    /// Raw mode: the most slots a table of `quotients` home slots may have once runs pushed
    /// past its last home slot made it add blocks ([`grow_tail`](Self::grow_tail)): a run
    /// that starts at a home slot ends within the slots in use past it, and at most
    /// [`room`](crate::room) of them are in use.
    pub(crate) fn max_slots(quotients: usize) -> usize {
        (quotients + crate::room(quotients) as usize + 1).next_multiple_of(BLOCK)
    }

    /// The heap bytes of a table of `slots` slots in all (home and extra, rounded up to whole
    /// blocks), `remainder_bits` wide.
    pub(crate) fn heap_bytes_with(slots: usize, remainder_bits: u32) -> u64 {
        (slots.div_ceil(BLOCK) * (HEAD + remainder_bits as usize)) as u64 * 8
    }

    /// Raw mode: the slots to grow to when a push found no empty slot after its run: twice
    /// the extra slots (so that a long run of one key's copies grows the table a logarithmic
    /// number of times), and at least enough for any run ([`max_slots`](Self::max_slots)
    /// caps it). `None` when the table already has that many: then no push can fail.
    pub(crate) fn next_tail(&self) -> Option<usize> {
        let cap = Table::max_slots(self.quotients);
        let slots = self.slots();
        (slots < cap).then(|| (slots + (slots - self.quotients).max(BLOCK)).min(cap))
    }

    /// Raw mode: adds empty blocks after the last one so that the table has at least
    /// `slots` slots. No run reaches past the old end (a push that found no empty slot
    /// changed nothing), so every new block's spill count is zero, as it is written.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`]; nothing is changed then.
    pub(crate) fn grow_tail(&mut self, slots: usize) -> Result<(), Error> {
        let blocks = slots.div_ceil(BLOCK).max(self.blocks);
        let words = blocks * self.stride();
        let more = words - self.words.len();
        self.words
            .try_reserve_exact(more)
            .map_err(|_| Error::AllocationFailed {
                bytes: words as u64 * 8,
            })?;
        self.words.resize(words, 0);
        self.blocks = blocks;
        Ok(())
    }

    /// Raw mode: removes slot `at` of the run of `x`.
    pub(crate) fn remove_raw(&mut self, x: usize, at: usize) {
        let end = self.run_end(x);
        self.close_slot(x, at, end);
        self.len -= 1;
        self.distinct -= 1;
    }
}

/// The largest remainder of `r` bits.
#[inline(always)]
fn max_remainder(r: u32) -> u64 {
    u64::MAX >> (64 - r)
}

/// The slots `copies` of remainder `x` take in a run (remainders of `r` bits), the counter
/// encoding: one copy is `x`, two are `x x`, more are `x`, the digits of `copies - 3` in
/// base `b = 2^r - 1 - x` (most significant first, at least one, digit `d` stored as
/// `x + 1 + d`), then `x` again. Every value between the two `x` is above `x`, and a run
/// is sorted by its first values, so:
/// - every slot of a later entry is above `x`, and the last slot of `x`'s entry is `x`: a
///   lookup walking back from the run's end stops at the first value not above the key's,
///   as if each copy took a slot;
/// - read backwards from its last slot, an entry ends where a value below `x` (or the run's
///   start) comes: a value above `x` before the last slot is a digit, `x` a second copy.
///
/// The two largest remainders have too few values above them for digits (`b` of 0 or 1):
/// their copies take a slot each (for `2^r - 2`, past two, as `x`, the largest remainder
/// `copies - 2` times, then `x`).
#[inline(always)]
pub(crate) fn entry_len(r: u32, x: u64, copies: u64) -> u64 {
    let b = max_remainder(r) - x;
    if copies <= 2 || b <= 1 {
        return copies;
    }
    let (mut v, mut digits) = ((copies - 3) / b, 1);
    while v > 0 {
        v /= b;
        digits += 1;
    }
    2 + digits
}

/// Where a remainder stands in a run (see [`Table::find`]).
enum Found {
    /// Its entry: first and last slot, copies.
    Entry {
        head: usize,
        last: usize,
        copies: u64,
    },
    /// Not held: the slot a new entry for it would take.
    Before(usize),
}

impl<W: AsRef<[u64]>> Table<W> {
    /// [`from_words_in`](Self::from_words_in) in counter mode for `2^quotient_bits` home
    /// slots (the tests' shorthand).
    #[cfg(all(test, feature = "serde"))]
    pub(crate) fn from_words(
        quotient_bits: u32,
        remainder_bits: u32,
        len: u64,
        words: W,
    ) -> Result<Table<W>, String> {
        Table::from_words_in(1 << quotient_bits, remainder_bits, Some(len), words)
    }

    /// A table of `quotients` home slots (a multiple of [`BLOCK`]) over decoded words,
    /// checked as a constructor would have left it: the size from the shape, every occupied
    /// quotient with a run that starts at or after it and after the previous run, runs
    /// sorted, the count theirs, every spill count the one the runs give, empty slots and
    /// the extra blocks' occupied bits zero. Only reads: a view checks its bytes in place.
    /// `len` `None` reads the table in raw mode (the expandable filter's: a slot an entry,
    /// every value non-zero, runs sorted by value), else in counter mode with `len` copies.
    #[cfg(feature = "serde")]
    pub(crate) fn from_words_in(
        quotients: usize,
        remainder_bits: u32,
        len: Option<u64>,
        words: W,
    ) -> Result<Table<W>, String> {
        let raw = len.is_none();
        let len = len.unwrap_or(0);
        let (quotients, blocks, want) = shape_of(quotients, remainder_bits);
        let got = words.as_ref().len();
        // Raw mode: blocks added past the shape's for runs that reached its end, up to the
        // most any run can need (`max_slots`).
        let stride = HEAD + remainder_bits as usize;
        let most = Table::max_slots(quotients).div_ceil(BLOCK).max(blocks) * stride;
        let blocks = if got == want || (raw && got > want && got <= most && got % stride == 0) {
            got / stride
        } else if raw {
            return Err(format!(
                "{got} words, expected {want} to {most} in blocks of {stride}"
            ));
        } else {
            return Err(format!("{got} words, expected {want}"));
        };
        let mut t = Table {
            remainder_bits,
            quotients,
            len,
            distinct: 0,
            used: 0,
            blocks,
            words,
        };
        if (quotients / BLOCK..blocks).any(|b| t.occ(b) != 0) {
            return Err("a quotient past the home slots is occupied".into());
        }
        let zero_between = |t: &Table<W>, from: usize, to: usize| -> Result<(), String> {
            match (from..to).find(|&i| t.remainder(i) != 0) {
                Some(i) => Err(format!("empty slot {i} holds a remainder")),
                None => Ok(()),
            }
        };
        // A block's spill count is final once a run of a quotient in or after it is seen:
        // the slots at its start that the runs before reach.
        let mut checked = 0usize;
        let check_spills =
            |t: &Table<W>, checked: &mut usize, to: usize, prev_end: Option<usize>| {
                while *checked < to {
                    let first = *checked * BLOCK;
                    let want = prev_end.map_or(0, |e| (e + 1).saturating_sub(first));
                    if t.spill(*checked) != want {
                        return Err(format!(
                            "block {checked}: spill {}, runs give {want}",
                            t.spill(*checked)
                        ));
                    }
                    *checked += 1;
                }
                Ok(())
            };
        let mut prev_end: Option<usize> = None;
        let (mut copies, mut distinct, mut used) = (0u64, 0u64, 0u64);
        let mut q = t.next_occupied(0);
        while let Some(x) = q {
            check_spills(&t, &mut checked, x / BLOCK + 1, prev_end)?;
            let start = prev_end.map_or(x, |e| (e + 1).max(x));
            let end = t
                .runend_from(prev_end.map_or(0, |e| e + 1), 0)
                .ok_or_else(|| format!("quotient {x} has no run end"))?;
            if end < start {
                return Err(format!(
                    "the run of quotient {x} ends at {end}, before it starts"
                ));
            }
            zero_between(&t, prev_end.map_or(0, |e| e + 1), start)?;
            if raw {
                if (start..=end).any(|i| t.remainder(i) == 0) {
                    return Err(format!("quotient {x}: an entry without its one bit"));
                }
                if (start + 1..=end).any(|i| t.remainder(i) < t.remainder(i - 1)) {
                    return Err(format!("quotient {x}: a run is not sorted"));
                }
                distinct += (end - start + 1) as u64;
                copies = distinct;
            } else {
                let mut overflow = false;
                t.entries_back(x, start, end, |_, c| {
                    distinct += 1;
                    copies = copies.checked_add(c).unwrap_or_else(|| {
                        overflow = true;
                        0
                    });
                })
                .map_err(|e| format!("quotient {x}: {e}"))?;
                if overflow {
                    return Err("more than 2^64 copies".into());
                }
            }
            used += (end - start + 1) as u64;
            prev_end = Some(end);
            q = t.next_occupied(x + 1);
        }
        check_spills(&t, &mut checked, blocks, prev_end)?;
        if t.runend_from(prev_end.map_or(0, |e| e + 1), 0).is_some() {
            return Err("more run ends than occupied quotients".into());
        }
        let room = crate::room(quotients);
        if used > room {
            return Err(format!("{used} slots used, more than the {room} it takes"));
        }
        if raw {
            t.len = copies;
        } else {
            if copies != len {
                return Err(format!("{len} fingerprints announced, {copies} stored"));
            }
        }
        zero_between(&t, prev_end.map_or(0, |e| e + 1), t.slots())?;
        (t.distinct, t.used) = (distinct, used);
        Ok(t)
    }

    #[inline(always)]
    fn w(&self) -> &[u64] {
        self.words.as_ref()
    }

    /// Words per block.
    #[inline(always)]
    fn stride(&self) -> usize {
        HEAD + self.remainder_bits as usize
    }

    #[inline(always)]
    fn spill(&self, b: usize) -> usize {
        self.w()[b * self.stride()] as usize
    }

    #[inline(always)]
    fn occ(&self, b: usize) -> u64 {
        self.w()[b * self.stride() + 1]
    }

    #[inline(always)]
    fn ends(&self, b: usize) -> u64 {
        self.w()[b * self.stride() + 2]
    }

    #[inline(always)]
    pub(crate) fn is_occupied(&self, x: usize) -> bool {
        self.occ(x / BLOCK) >> (x % BLOCK) & 1 == 1
    }

    #[inline(always)]
    fn is_runend(&self, i: usize) -> bool {
        self.ends(i / BLOCK) >> (i % BLOCK) & 1 == 1
    }

    /// Blocks, home and extra.
    #[inline(always)]
    fn blocks(&self) -> usize {
        self.blocks
    }

    /// All slots, home and extra.
    #[inline(always)]
    pub(crate) fn slots(&self) -> usize {
        self.blocks() * BLOCK
    }

    /// Heap memory held (a view's words are borrowed: its own figure is zero).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.w().len() * 8
    }

    /// Requests the cache lines a lookup of quotient `x` starts with: its block's counts
    /// and bits, and the remainders at its home slot (for a batch, whose keys' lines are
    /// asked for before any is read).
    #[inline(always)]
    pub(crate) fn prefetch(&self, x: usize) {
        bloomkit_core::batch::prefetch_at(self.w(), (x / BLOCK) * self.stride());
        self.prefetch_remainders(x);
    }

    /// Requests the cache line of the remainders at quotient `x`'s home slot: for one key at
    /// a time, whose block's counts and bits are read next anyway, so that the two misses
    /// overlap.
    #[inline(always)]
    pub(crate) fn prefetch_remainders(&self, x: usize) {
        let at =
            (x / BLOCK) * self.stride() + HEAD + (x % BLOCK) * self.remainder_bits as usize / 64;
        bloomkit_core::batch::prefetch_at(self.w(), at);
    }

    #[inline(always)]
    fn remainder(&self, i: usize) -> u64 {
        let r = self.remainder_bits as usize;
        let at = (i % BLOCK) * r;
        let (w, s) = ((i / BLOCK) * self.stride() + HEAD + at / 64, at % 64);
        let words = self.w();
        let lo = words[w] >> s;
        let v = if s + r > 64 {
            lo | (words[w + 1] << (64 - s))
        } else {
            lo
        };
        v & (u64::MAX >> (64 - r))
    }

    /// The position of the `k`-th run end (0-based) at or after slot `from`, or `None` past
    /// the table.
    #[inline(always)]
    fn runend_from(&self, from: usize, mut k: u32) -> Option<usize> {
        let (words, stride) = (self.w(), self.stride());
        // The run-end word of `from`'s block, then of each next block.
        let mut b = from / BLOCK;
        let mut word = *words.get(b * stride + 2)? & (u64::MAX << (from % BLOCK));
        loop {
            let ones = word.count_ones();
            if k < ones {
                return Some(b * BLOCK + select(word, k) as usize);
            }
            k -= ones;
            b += 1;
            word = *words.get(b * stride + 2)?;
        }
    }

    /// The first run end at or after slot `from`: [`runend_from`](Self::runend_from) with
    /// `k = 0`, by trailing zeros.
    #[inline(always)]
    fn next_runend(&self, from: usize) -> Option<usize> {
        let (words, stride) = (self.w(), self.stride());
        let mut b = from / BLOCK;
        let mut word = *words.get(b * stride + 2)? & (u64::MAX << (from % BLOCK));
        while word == 0 {
            b += 1;
            word = *words.get(b * stride + 2)?;
        }
        Some(b * BLOCK + word.trailing_zeros() as usize)
    }

    /// The end of the run of the largest occupied quotient `<= x`, if that is at or after the
    /// block of `x`; otherwise a position before `x`'s block (all that matters then is that
    /// it is below `x`).
    #[inline(always)]
    fn last_end(&self, x: usize) -> isize {
        let b = x / BLOCK;
        let start = b * BLOCK + self.spill(b);
        // Quotients past the home slots are never occupied: their bits are zero.
        let below = (self.occ(b) & (u64::MAX >> (63 - x % BLOCK))).count_ones();
        if below == 0 {
            start as isize - 1
        } else {
            self.runend_from(start, below - 1)
                .map_or(isize::MAX, |e| e as isize)
        }
    }

    /// The first empty slot at or after `s`, if the table has one.
    #[inline(always)]
    fn first_empty(&self, s: usize) -> Option<usize> {
        self.first_free(s, 0)
    }

    /// The first slot at or after `s` that no run of an earlier quotient holds: empty, or
    /// the start of a run at its own home slot. What follows a removed slot moves left up
    /// to it (a run at home cannot move left of it).
    #[inline(always)]
    fn first_unshifted(&self, s: usize) -> Option<usize> {
        self.first_free(s, 1)
    }

    /// The first slot at or after `s` that no run of a quotient up to that slot, less
    /// `before` (0: the slot's own quotient counts; 1: only earlier ones), holds.
    ///
    /// A lower bound on the slots still used from `s` on, from its block alone: past the
    /// block's spill, every run of the block's quotients counted that has not ended before
    /// `s` still needs a slot (at most one run ends a slot); inside the spill, the rest of it
    /// and every such run. Zero means `s` is free; otherwise jump that far and look again.
    #[inline(always)]
    fn first_free(&self, mut s: usize, before: u32) -> Option<usize> {
        let slots = self.slots();
        while s < slots {
            let (b, j) = (s / BLOCK, s % BLOCK);
            let spill = self.spill(b);
            let up_to = u64::MAX >> (63 - j);
            let occupied = (self.occ(b) & (up_to >> before)).count_ones() as usize;
            let used = if spill <= j {
                let ended = (self.ends(b) & (up_to >> 1) & (u64::MAX << spill)).count_ones();
                occupied - ended as usize
            } else {
                spill + occupied - j
            };
            if used == 0 {
                return Some(s);
            }
            s += used;
        }
        None
    }

    /// The last slot of the run of quotient `x` (which must be occupied): one rank and one
    /// select from its block's spill count.
    #[inline(always)]
    fn run_end(&self, x: usize) -> usize {
        self.try_run_end(x)
            .expect("an occupied quotient has a run end")
    }

    /// [`run_end`](Self::run_end) for the lookups, which may read bytes that changed after
    /// they were checked (a mapped file rewritten under a view): `None` when the bits hold
    /// no run end for `x`, and the lookup answers "maybe" instead of panicking. (A run end
    /// before `x` is returned as found: the walks back stop at `x` or before, see
    /// [`is_run_start`](Self::is_run_start).)
    #[inline(always)]
    fn try_run_end(&self, x: usize) -> Option<usize> {
        let b = x / BLOCK;
        // A spill count past the table (any u64, in damaged bits) starts no run; one below
        // it keeps `start` under twice the slots, which `runend_from` reads no further than
        // the words go. One comparison: this is every lookup's path.
        let spill = self.spill(b);
        if spill >= self.blocks * BLOCK {
            return None;
        }
        let start = b * BLOCK + spill;
        let before = (self.occ(b) & ((1u64 << (x % BLOCK)) - 1)).count_ones();
        self.runend_from(start, before)
    }

    /// Whether slot `i` starts the run of quotient `x` that holds it. (`<=`, not `==`: a
    /// run starts at or after its home slot, so in a valid table they agree; over damaged
    /// bits, whose run end may lie before `x`, every walk back still stops there.)
    #[inline(always)]
    fn is_run_start(&self, x: usize, i: usize) -> bool {
        i <= x || self.is_runend(i - 1)
    }

    /// The entry of `x`'s run whose last slot is `last` (see [`entry_len`]): its first slot
    /// and copies. Checks what a decoder checks (the values between the two copies above
    /// them, the digits' form and size), so an `Err` says what is wrong with the bytes.
    #[inline(always)]
    fn entry_back(&self, x: usize, last: usize) -> Result<(usize, u64), &'static str> {
        let v = self.remainder(last);
        if self.is_run_start(x, last) || self.remainder(last - 1) < v {
            return Ok((last, 1));
        }
        let top = max_remainder(self.remainder_bits);
        let b = top - v;
        let before = self.remainder(last - 1);
        if before == v && b > 0 {
            return Ok((last - 1, 2));
        }
        // A value above `v` before the last slot: digits, back to the first copy (for the
        // largest remainder, copies side by side back to the first).
        let mut head = last - 1;
        loop {
            let h = self.remainder(head);
            if h == v && (b > 0 || self.is_run_start(x, head) || self.remainder(head - 1) < v) {
                break;
            }
            if h < v || self.is_run_start(x, head) {
                return Err("a run's counter has no first copy");
            }
            head -= 1;
        }
        let len = (last - head + 1) as u64;
        if b <= 1 {
            return Ok((head, len));
        }
        let mut value = 0u64;
        for i in head + 1..last {
            value = value
                .checked_mul(b)
                .and_then(|m| m.checked_add(self.remainder(i) - v - 1))
                .ok_or("a run's counter passes 2^64 copies")?;
        }
        let copies = value
            .checked_add(3)
            .ok_or("a run's counter passes 2^64 copies")?;
        if entry_len(self.remainder_bits, v, copies) != len {
            return Err("a run's counter has leading zero digits");
        }
        Ok((head, copies))
    }

    /// The entry of `rem` in the run of `x` that ends at `end`, or where a new one goes:
    /// walking back from the end, the first slot whose value is not above `rem` is the last
    /// of an entry (see [`entry_len`]).
    #[inline(always)]
    fn find(&self, x: usize, end: usize, rem: u64) -> Found {
        let mut i = end;
        loop {
            let v = self.remainder(i);
            if v <= rem {
                if v < rem {
                    return Found::Before(i + 1);
                }
                let (head, copies) = self.entry_back(x, i).unwrap_or((i, 1));
                return Found::Entry {
                    head,
                    last: i,
                    copies,
                };
            }
            if self.is_run_start(x, i) {
                return Found::Before(i);
            }
            i -= 1;
        }
    }

    /// How many copies of the fingerprint `(x, rem)` the table holds.
    #[inline(always)]
    pub(crate) fn count(&self, x: usize, rem: u64) -> u64 {
        if !self.is_occupied(x) {
            return 0;
        }
        // Damaged bits (see `try_run_end`): as many copies as anyone could have inserted.
        let Some(end) = self.try_run_end(x) else {
            return u64::MAX;
        };
        match self.find(x, end, rem) {
            Found::Entry { copies, .. } => copies,
            Found::Before(_) => 0,
        }
    }

    /// Visits the entries `(remainder, copies)` of the run of `x` in `first..=end`, last
    /// first, allocating nothing; an `Err` for a run no table leaves (unsorted, or a counter
    /// out of form).
    fn entries_back(
        &self,
        x: usize,
        first: usize,
        end: usize,
        mut visit: impl FnMut(u64, u64),
    ) -> Result<(), &'static str> {
        let mut last = end;
        loop {
            let (head, copies) = self.entry_back(x, last)?;
            visit(self.remainder(last), copies);
            if head == first {
                return Ok(());
            }
            if self.remainder(head - 1) >= self.remainder(last) {
                return Err("a run is not sorted");
            }
            last = head - 1;
        }
    }

    /// Whether the fingerprint `(x, rem)` is present.
    #[inline(always)]
    pub(crate) fn contains(&self, x: usize, rem: u64) -> bool {
        if !self.is_occupied(x) {
            return false;
        }
        // Backwards from the end: the first remainder not above `rem` decides. Damaged
        // bits (see `try_run_end`): maybe.
        let Some(mut i) = self.try_run_end(x) else {
            return true;
        };
        loop {
            let r = self.remainder(i);
            if r <= rem {
                return r == rem;
            }
            if self.is_run_start(x, i) {
                return false;
            }
            i -= 1;
        }
    }

    /// Every run: its quotient, first and last slot, in order.
    fn runs(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let mut next = self.next_occupied(0);
        let mut prev_end: Option<usize> = None;
        core::iter::from_fn(move || {
            let x = next?;
            let first = prev_end.map_or(x, |e| (e + 1).max(x));
            let end = self
                .next_runend(first)
                .expect("an occupied quotient has a run end");
            prev_end = Some(end);
            next = self.next_occupied(x + 1);
            Some((x, first, end))
        })
    }

    /// Every fingerprint `(quotient, remainder, copies)`, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
        self.runs().flat_map(|(x, first, end)| {
            // A table's runs are in form (a decoded one was checked).
            let mut run = Vec::new();
            let _ = self.entries_back(x, first, end, |rem, copies| run.push((x, rem, copies)));
            run.into_iter().rev()
        })
    }

    /// Raw mode: every slot's `(quotient, value)`, in order.
    pub(crate) fn iter_raw(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.runs()
            .flat_map(move |(x, first, end)| (first..=end).map(move |i| (x, self.remainder(i))))
    }

    /// Raw mode: the slots of the run of `x` and their values, from its end back to its
    /// start (none when `x` is not occupied).
    #[inline(always)]
    pub(crate) fn run_back(&self, x: usize) -> impl Iterator<Item = (usize, u64)> + '_ {
        let mut i = if self.is_occupied(x) {
            self.try_run_end(x)
        } else {
            None
        };
        core::iter::from_fn(move || {
            let at = i?;
            i = (!self.is_run_start(x, at)).then(|| at - 1);
            Some((at, self.remainder(at)))
        })
    }

    /// The smallest occupied quotient `>= q`.
    fn next_occupied(&self, q: usize) -> Option<usize> {
        if q >= self.quotients {
            return None;
        }
        let home_blocks = self.quotients / BLOCK;
        let mut b = q / BLOCK;
        let mut word = self.occ(b) & (u64::MAX << (q % BLOCK));
        loop {
            if word != 0 {
                return Some(b * BLOCK + word.trailing_zeros() as usize);
            }
            b += 1;
            if b >= home_blocks {
                return None;
            }
            word = self.occ(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn splitmix(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let z = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z ^ (z >> 31)
        }
    }

    /// The word-at-a-time shifts move exactly the bits a bit-at-a-time loop moves, and
    /// leave every other bit alone.
    #[test]
    fn shifts_match_a_bit_loop() {
        let mut next = splitmix(11);
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

    /// Moving slots across blocks keeps every other slot and every block's head: checked
    /// against a slot-by-slot copy on random tables and ranges.
    #[test]
    fn slot_shifts_match_a_slot_loop() {
        let mut next = splitmix(5);
        for r in [1u32, 3, 7, 13, 33, 58] {
            for _ in 0..300 {
                let mut t = Table::new(8, r).unwrap();
                for w in t.words.iter_mut() {
                    *w = next();
                }
                let slots = t.slots();
                let at = next() as usize % (slots - 1);
                let end = at + 1 + next() as usize % (slots - at - 1).min(300);
                let snapshot = |t: &Table| -> Vec<(u64, bool)> {
                    (0..slots)
                        .map(|i| (t.remainder(i), t.is_runend(i)))
                        .collect()
                };
                let heads = |t: &Table| -> Vec<(usize, u64)> {
                    (0..t.blocks()).map(|b| (t.spill(b), t.occ(b))).collect()
                };
                let before = snapshot(&t);
                let mut up = t.clone();
                up.shift_slots_up(at, end);
                let mut want = before.clone();
                for i in (at..end).rev() {
                    want[i + 1] = want[i];
                }
                assert_eq!(snapshot(&up), want, "up r {r} at {at} end {end}");
                assert_eq!(heads(&up), heads(&t));
                let mut down = t.clone();
                down.shift_slots_down(at, end);
                let mut want = before.clone();
                for i in at..end {
                    want[i] = want[i + 1];
                }
                assert_eq!(snapshot(&down), want, "down r {r} at {at} end {end}");
                assert_eq!(heads(&down), heads(&t));
            }
        }
    }

    /// Every count a run can hold is written and read back as itself, for every remainder
    /// of small widths (the largest two included) and counts around every digit boundary.
    #[test]
    fn counters_read_back() {
        for r in [2u32, 3, 4, 7] {
            let top = max_remainder(r);
            for x in 0..=top {
                let b = top - x;
                let mut counts: Vec<u64> = (1..40).collect();
                if b >= 2 {
                    let mut p = b;
                    for _ in 0..3 {
                        counts.extend([p + 1, p + 2, p + 3, p + 4]);
                        p = p.saturating_mul(b);
                    }
                }
                for &c in &counts {
                    let len = entry_len(r, x, c);
                    // A run of one entry in a table big enough for it.
                    let mut t = Table::new(8, r).unwrap();
                    t.open_slot(5, 5, None).unwrap();
                    for i in 1..len as usize {
                        t.open_slot(5, 5 + i, Some(4 + i)).unwrap();
                    }
                    t.write_entry(5, x, c);
                    let last = 5 + len as usize - 1;
                    assert_eq!(t.entry_back(5, last), Ok((5, c)), "r {r} x {x} copies {c}");
                    assert_eq!(t.count(5, x), c);
                    assert!(len <= c, "r {r} x {x}: {c} copies in {len} slots");
                }
            }
        }
    }

    /// Copies past 2^64 in all are refused, and change nothing.
    /// Bits that changed after the table was checked (a file rewritten under a view):
    /// every lookup and count answers, never panics, and a damaged run answers "maybe".
    #[test]
    fn lookups_over_damaged_words_answer_and_never_panic() {
        let mut next = splitmix(0xdead);
        for rbits in [2u32, 5, 8, 13] {
            let mut clean = Table::new(7, rbits).unwrap();
            let top = max_remainder(rbits);
            for _ in 0..100 {
                let (x, r) = (next() as usize % 128, next() % top);
                clean.add(x, r, 1 + next() % 3, u64::MAX);
            }
            for round in 0..300 {
                let mut t = clean.clone();
                // A few words replaced by random ones, all ones or zeros.
                for _ in 0..1 + round % 4 {
                    let i = next() as usize % t.words.len();
                    t.words[i] = match round % 3 {
                        0 => next(),
                        1 => u64::MAX,
                        _ => 0,
                    };
                }
                for x in 0..t.quotients {
                    for r in [0, 1, top / 2, top - 1] {
                        let _ = t.contains(x, r);
                        let _ = t.count(x, r);
                    }
                }
            }
        }
    }

    #[test]
    fn the_total_of_copies_stays_below_2_64() {
        let mut t = Table::new(6, 8).unwrap();
        assert_eq!(t.add(3, 0, u64::MAX - 1, 60), Some(true));
        assert!(t.used <= 14, "{} slots", t.used);
        let before = t.clone();
        assert_eq!(t.add(5, 9, 2, 60), None);
        assert_eq!(t, before);
        assert_eq!(t.add(5, 9, 1, 60), Some(true));
        assert_eq!(t.count(3, 0), u64::MAX - 1);
    }

    /// Many copies of few fingerprints (the remainders' extremes among them): counts,
    /// lookups and listings match a model while counters grow and shrink, in runs shared
    /// with other fingerprints; removing every copy empties the table.
    /// The table against its model after `step`: whether it holds each fingerprint of the
    /// `(home slots, remainders)` grid `probe`, its listing in order, and (with serde) its
    /// words accepted by the decoder's checks as a table of `qbits` quotient bits.
    fn check_listing(
        t: &Table,
        model: &BTreeMap<(usize, u64), u64>,
        step: usize,
        probe: (usize, u64),
        qbits: u32,
    ) {
        for q in 0..probe.0 {
            for r in 0..probe.1 {
                let held = model.contains_key(&(q, r));
                assert_eq!(t.contains(q, r), held, "step {step}: ({q}, {r})");
            }
        }
        let listed: Vec<(usize, u64, u64)> = t.iter().collect();
        let want: Vec<(usize, u64, u64)> = model.iter().map(|(&(q, r), &c)| (q, r, c)).collect();
        assert_eq!(listed, want, "step {step}: iter");
        #[cfg(feature = "serde")]
        if let Err(e) = Table::from_words(qbits, t.remainder_bits, t.len, &t.words[..]) {
            panic!("step {step}: a table the steps left is refused: {e}");
        }
        #[cfg(not(feature = "serde"))]
        let _ = qbits;
    }

    #[test]
    fn counters_follow_a_model() {
        let mut rng = bloomkit_testkit::seeded_rng("counters_follow_a_model");
        let mut next = move || rng.next_u64();
        for rbits in [2u32, 3, 5, 8] {
            let mut t = Table::new(6, rbits).unwrap();
            let top = max_remainder(rbits);
            let mut model: BTreeMap<(usize, u64), u64> = BTreeMap::new();
            let cap = (t.quotients as f64 * 0.95) as u64;
            let rems = [0, 1, top / 2, top - 1, top];
            let mut fewest_slots_a_copy = 1.0f64;
            for step in 0..20_000 {
                let h = next();
                let q = (h >> 50) as usize % 4 * 3;
                let r = rems[(h >> 20) as usize % rems.len()];
                let held = model.get(&(q, r)).copied().unwrap_or(0);
                if h % 7 < 3 && held > 0 {
                    assert!(t.remove(q, r), "step {step}: remove ({q}, {r})");
                    if held > 1 {
                        model.insert((q, r), held - 1);
                    } else {
                        model.remove(&(q, r));
                    }
                } else {
                    let copies = 1 + h % 3 * (h >> 30) % 50;
                    let used = t.used;
                    match t.add(
                        q,
                        r,
                        1 + (copies - 1) * u64::from(held > 0 || h % 2 == 0),
                        cap,
                    ) {
                        Some(new) => {
                            let added = t.len - model.values().sum::<u64>();
                            assert_eq!(new, held == 0, "step {step}: new");
                            *model.entry((q, r)).or_default() += added;
                        }
                        None => {
                            assert_eq!(t.used, used, "step {step}: a refused add changed the table")
                        }
                    }
                }
                for (&(q, r), &c) in &model {
                    assert_eq!(t.count(q, r), c, "r {rbits} step {step}: count ({q}, {r})");
                }
                assert_eq!(t.len, model.values().sum::<u64>());
                assert_eq!(t.distinct, model.len() as u64);
                if t.len > 0 {
                    fewest_slots_a_copy = fewest_slots_a_copy.min(t.used as f64 / t.len as f64);
                }
                if step % 50 == 0 {
                    check_listing(&t, &model, step, (16, top.min(16) + 1), 6);
                }
            }
            // The counters did count: at some point far fewer slots than copies.
            assert!(
                fewest_slots_a_copy < 0.5,
                "r {rbits}: {fewest_slots_a_copy} slots a copy"
            );
            for ((q, r), c) in model {
                for _ in 0..c {
                    assert!(t.remove(q, r));
                }
            }
            assert_eq!((t.len, t.used, t.distinct), (0, 0, 0));
            assert!(
                t.words.iter().all(|&w| w == 0),
                "an emptied table is all zeros"
            );
        }
    }

    /// Every fingerprint's count against a model, after each step, on a table small enough
    /// for clusters to reach block boundaries and the extra slots; and the checks a decoder
    /// runs accept every table the steps leave. A new seed each run (printed; replay with
    /// `BLOOMKIT_QC_SEED`).
    #[test]
    fn follows_a_multiset_model() {
        let mut rng = bloomkit_testkit::seeded_rng("follows_a_multiset_model");
        let mut next = move || rng.next_u64();
        for (qbits, rbits, steps) in [(6, 3, 3000), (8, 5, 20_000), (10, 8, 20_000), (7, 13, 5000)]
        {
            let mut t = Table::new(qbits, rbits).unwrap();
            let mut model: BTreeMap<(usize, u64), u64> = BTreeMap::new();
            let cap = (t.quotients as f64 * 0.95) as u64;
            for step in 0..steps {
                let h = next();
                let q = (h >> 40) as usize % t.quotients;
                let r = h & ((1 << rbits) - 1);
                if h % 3 == 0 || t.used >= cap {
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
                    let new = t.add(q, r, 1, cap + 1);
                    assert!(new.is_some(), "step {step}: full at {}", t.used);
                    assert_eq!(new, Some(!model.contains_key(&(q, r))), "step {step}: new");
                    *model.entry((q, r)).or_default() += 1;
                }
                if step % 97 == 0 || steps < 4000 {
                    for (&(q, r), &c) in &model {
                        assert_eq!(t.count(q, r), c, "step {step}: count ({q}, {r})");
                        assert!(t.contains(q, r));
                    }
                    assert_eq!(t.len, model.values().sum::<u64>());
                    check_listing(
                        &t,
                        &model,
                        step,
                        (t.quotients, (1u64 << rbits).min(8)),
                        qbits,
                    );
                }
            }
        }
    }
}
