//! The only `unsafe` code in bloomkit, fenced in this module: a software prefetch, the SIMD
//! test and insert of a split-block filter's block, and the AVX2 test of a blocked filter's
//! block, chosen for the CPU at run time.
//!
//! Batched lookups ([`crate::batch`]) hash a group of keys, ask the memory system for each
//! key's cache lines, then probe: the misses overlap instead of being paid one after another.
//! On x86-64 the request is SSE's `prefetcht0`; a plain load in its place was measured and
//! does not do the job (see `docs/performance.md`). On other targets this is a no-op, and
//! batched calls still give the right answers.
//!
//! A split-block filter's block test and insert ([`split_block_contains`],
//! [`split_block_insert`]) are eight multiplications, shifts and bit tests: one AVX2
//! instruction each for all eight lanes, or a short SSE2 sequence (four lanes at a time,
//! with the multiplications and the shifts done another way: SSE2 has no 32-bit lane
//! multiply and no per-lane shift) on an x86-64 CPU without AVX2. The build targets baseline
//! x86-64 (no `target-cpu=native` needed), so code built for it cannot inline an AVX2
//! function: one key at a time, the test is chosen once, on the first call, and kept as a
//! function pointer, so a key pays a load and an indirect call, not a feature test and a
//! call. Inside a [`with_simd`] loop, [`split_block_contains_inlined`] tests the cached flag
//! and inlines the AVX2 test instead; a build with AVX2 enabled inlines it everywhere.
//! Elsewhere, and under miri, the portable path runs. All give the same answers, bit for
//! bit (tested here, on every key of a sweep).
//!
//! A blocked filter's 512-bit block test ([`block_contains_fast`]) tests k positions spread
//! over eight 64-bit words: seven positions per round, one 32-bit lane each, the lane's word
//! fetched with two permutes and a blend. That needs AVX2's variable shifts and permutes:
//! the AVX2 path is taken when the CPU has it (`is_x86_feature_detected!`, a cached flag),
//! or always when the crate is built with AVX2 enabled.
//!
//! [`with_simd`] runs a closure in a function compiled with AVX2 (when the CPU has it), so
//! those tests inline into a batch's loop instead of being called once per key.
//!
//! [`with_popcnt`] runs a closure in a function compiled with POPCNT, and with BMI1 and BMI2
//! too on a CPU that runs BMI2's `pdep` fast (every Intel CPU with BMI2, AMD from Zen 3 on;
//! not AMD or Hygon before family 0x19, whose `pdep` is microcode): there the quotient
//! table's select ([`crate::bits::select`]) is one `pdep` and one `tzcnt` instead of about
//! thirty instructions. The CPU is asked once (CPUID and the standard library's feature
//! test) and the answer cached.
//!
//! [`advise_huge_pages`] asks Linux to back a large filter's memory with 2 MiB pages: a
//! lookup in a filter larger than the TLB's reach otherwise pays a page walk besides its
//! cache miss.
//!
//! Tested under miri (`cargo +nightly miri test -p bloomkit-core --lib -- arch batch`):
//! the prefetch and the portable paths. The x86-64 SIMD code (the AVX2 and SSE2 functions
//! and the function pointers that choose between them) is compiled out under miri; it is
//! tested against the portable paths in every native test run instead.
#![allow(unsafe_code)]

/// The size of a transparent huge page on x86-64 and most aarch64 Linux systems.
#[cfg(target_os = "linux")]
#[cfg_attr(miri, allow(dead_code))]
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Whether [`advise_huge_pages`] advises (`crate::bits::set_huge_pages`).
pub(crate) static HUGE_PAGES: core::sync::atomic::AtomicBool =
    core::sync::atomic::AtomicBool::new(true);

/// Asks the kernel to back the whole 2 MiB pages inside `memory` with transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`), when `memory` spans at least two of them. A lookup in a
/// filter of tens of megabytes or more reads a random page each time: with 4 KiB pages
/// almost every one misses the TLB and pays a page walk (two levels of them in a virtual
/// machine); with 2 MiB pages the TLB covers 512 times as much. A hint only: it changes no
/// byte, and where the kernel has no transparent huge pages (or is told `never`), or on
/// another system, nothing happens. Call it before the memory is first written, so the
/// pages are huge from their first fault.
///
/// What it buys, measured: `docs/performance.md`, "Huge pages".
#[inline]
pub(crate) fn advise_huge_pages<T>(memory: &mut [T]) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        let bytes = core::mem::size_of_val(memory);
        if bytes < 2 * HUGE_PAGE || !HUGE_PAGES.load(core::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let start = memory.as_mut_ptr() as usize;
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > first {
            // SAFETY: `madvise` with `MADV_HUGEPAGE` is advice: it reads and writes no byte
            // and leaves every mapping valid. The range is whole pages inside `memory`,
            // which this function borrows mutably, so no other code relies on its pages'
            // size meanwhile. A refusal (a kernel without transparent huge pages) is
            // ignored: the memory stays as it was.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    let _ = memory;
}

/// Asks for the cache line holding `value` to be brought into every cache level, without
/// waiting for it. A hint only: it changes no value and never faults.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (value as *const T).cast::<i8>();
        // SAFETY: `_mm_prefetch` needs SSE, part of every x86-64 target's baseline features
        // (it is unsafe only because of `#[target_feature(enable = "sse")]`); it reads and
        // writes nothing the program can observe, and `p` comes from a live reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Asks for the cache line of `items[index]`, as [`prefetch`], without checking `index`
/// against the length (a hint only: an address past the slice is asked for and nothing is
/// read), so a lookup pays no bounds check for it.
#[inline(always)]
pub fn prefetch_at<T>(items: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = items.as_ptr().wrapping_add(index).cast::<i8>();
        // SAFETY: as in `prefetch`; a prefetch never faults, whatever the address, and the
        // pointer is never read through.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, index);
}

/// The eight odd constants of Parquet's split-block Bloom filter (and Impala's and Kudu's
/// before it): a key's bit in word `i` of its block is `(x * SALT[i]) >> 27`, `x` the low
/// 32 bits of its hash.
pub const SPLIT_BLOCK_SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// The key's bit in each of the eight words of its split block, `x` being the low 32 bits
/// of its hash: one bit per word.
#[inline(always)]
pub fn split_block_mask(x: u32) -> [u32; 8] {
    let mut mask = [0u32; 8];
    for (m, salt) in mask.iter_mut().zip(SPLIT_BLOCK_SALT) {
        *m = 1 << (x.wrapping_mul(salt) >> 27);
    }
    mask
}

/// Whether every bit of `x`'s mask is set in `block`, with no branch on any of them: one
/// key, through the test chosen for this CPU the first time one is asked (AVX2 where the CPU
/// has it, else SSE2; no feature test per call). In a loop inside [`with_simd`], call
/// [`split_block_contains_inlined`] instead: there the AVX2 test inlines into the loop.
#[inline(always)]
pub fn split_block_contains(block: &[u32; 8], x: u32) -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        chosen::split_block_contains(block, x)
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        portable_split_block_contains(block, x)
    }
}

/// [`split_block_contains`] written to inline into a loop compiled with AVX2 (inside
/// [`with_simd`]): there the CPU's AVX2 is a cached flag tested per key, and the AVX2 test
/// is inlined. Outside such a scope each key would pay that test and a call, so
/// [`split_block_contains`] is the faster choice there.
#[inline(always)]
pub fn split_block_contains_inlined(block: &[u32; 8], x: u32) -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        if avx2::available() {
            // SAFETY: the CPU has AVX2 (just checked), all the function needs.
            return unsafe { avx2::split_block_contains(block, x) };
        }
        sse2::split_block_contains(block, x)
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        portable_split_block_contains(block, x)
    }
}

/// Sets `x`'s bits in `block`; returns the number of them that were clear before (0 when the
/// key was already "maybe"). Through the insert chosen for this CPU the first time one is
/// made (AVX2 with POPCNT where the CPU has them, else SSE2; no feature test per call).
#[inline(always)]
pub fn split_block_insert(block: &mut [u32; 8], x: u32) -> u32 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        chosen::split_block_insert(block, x)
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        portable_split_block_insert(block, x)
    }
}

/// The split-block test and insert, and the blocked filter's test, chosen once for this CPU:
/// each is a function pointer, set on the first call (AVX2 where the CPU has it, else SSE2
/// for the split-block ones and the portable test for the blocked one) and called through
/// from then on, so a key pays one load and an indirect call instead of a feature test and a
/// direct call (a build with AVX2 enabled calls the AVX2 functions directly, inlined). Measured against that (the code before this), one key at a time: 0.91-0.95x the
/// time of lookups and 0.65-0.96x of inserts, at 128 KB, 1.3 MB and 13 MB of blocks (see
/// `docs/performance.md`).
#[cfg(all(target_arch = "x86_64", not(miri)))]
mod chosen {
    use core::sync::atomic::{AtomicPtr, Ordering};

    type Contains = unsafe fn(&[u32; 8], u32) -> bool;
    type Insert = unsafe fn(&mut [u32; 8], u32) -> u32;
    type BlockContains = unsafe fn(&[u64; 8], u64, u32) -> bool;

    /// A [`Contains`]: [`first_contains`] until the first call, then the chosen test.
    static CONTAINS: AtomicPtr<()> = AtomicPtr::new(first_contains as Contains as *mut ());
    /// An [`Insert`]: [`first_insert`] until the first call, then the chosen insert.
    static INSERT: AtomicPtr<()> = AtomicPtr::new(first_insert as Insert as *mut ());

    /// A [`BlockContains`]: [`first_block_contains`] until the first call, then the chosen
    /// blocked-filter test.
    static BLOCK_CONTAINS: AtomicPtr<()> =
        AtomicPtr::new(first_block_contains as BlockContains as *mut ());

    /// Chooses the blocked filter's test, keeps it for later calls, and answers this one.
    unsafe fn first_block_contains(block: &[u64; 8], hash: u64, k: u32) -> bool {
        let chosen: BlockContains = if super::avx2::available() {
            super::avx2::block_contains
        } else {
            super::portable_block_contains
        };
        BLOCK_CONTAINS.store(chosen as *mut (), Ordering::Relaxed);
        // SAFETY: `chosen` needs AVX2 only when the CPU has it (just checked).
        unsafe { chosen(block, hash, k) }
    }

    #[inline(always)]
    pub(super) fn block_contains(block: &[u64; 8], hash: u64, k: u32) -> bool {
        if cfg!(target_feature = "avx2") {
            // SAFETY: the build enables AVX2, so every CPU it runs on has it.
            return unsafe { super::avx2::block_contains(block, hash, k) };
        }
        let f = BLOCK_CONTAINS.load(Ordering::Relaxed);
        // SAFETY: as in `split_block_contains`: `BLOCK_CONTAINS` only ever holds a
        // `BlockContains` that runs on this CPU.
        unsafe { core::mem::transmute::<*mut (), BlockContains>(f)(block, hash, k) }
    }

    /// Chooses the test, keeps it for later calls, and answers this one.
    unsafe fn first_contains(block: &[u32; 8], x: u32) -> bool {
        let chosen: Contains = if super::avx2::available() {
            super::avx2::split_block_contains
        } else {
            super::sse2::split_block_contains
        };
        CONTAINS.store(chosen as *mut (), Ordering::Relaxed);
        // SAFETY: `chosen` needs AVX2 only when the CPU has it (just checked).
        unsafe { chosen(block, x) }
    }

    /// Chooses the insert, keeps it for later calls, and makes this one.
    unsafe fn first_insert(block: &mut [u32; 8], x: u32) -> u32 {
        let chosen: Insert = if super::avx2::available_with_popcnt() {
            super::avx2::split_block_insert
        } else {
            super::sse2::split_block_insert
        };
        INSERT.store(chosen as *mut (), Ordering::Relaxed);
        // SAFETY: `chosen` needs AVX2 and POPCNT only when the CPU has them (just checked).
        unsafe { chosen(block, x) }
    }

    #[inline(always)]
    pub(super) fn split_block_contains(block: &[u32; 8], x: u32) -> bool {
        if cfg!(target_feature = "avx2") {
            // SAFETY: the build enables AVX2, so every CPU it runs on has it; the caller is
            // compiled with AVX2 too, so the test inlines.
            return unsafe { super::avx2::split_block_contains(block, x) };
        }
        let f = CONTAINS.load(Ordering::Relaxed);
        // SAFETY: `CONTAINS` only ever holds a `Contains` (its initial value and the stores
        // in `first_contains`), so the pointer is that function's; each function it can
        // hold runs on this CPU (`first_contains` is safe anywhere, the AVX2 test is stored
        // only when the CPU has AVX2). A race between two first calls stores the same choice.
        unsafe { core::mem::transmute::<*mut (), Contains>(f)(block, x) }
    }

    #[inline(always)]
    pub(super) fn split_block_insert(block: &mut [u32; 8], x: u32) -> u32 {
        if cfg!(all(target_feature = "avx2", target_feature = "popcnt")) {
            // SAFETY: the build enables AVX2 and POPCNT, so every CPU it runs on has them.
            return unsafe { super::avx2::split_block_insert(block, x) };
        }
        let f = INSERT.load(Ordering::Relaxed);
        // SAFETY: as in `split_block_contains`: `INSERT` only ever holds an `Insert` that
        // runs on this CPU.
        unsafe { core::mem::transmute::<*mut (), Insert>(f)(block, x) }
    }
}

/// Whether all `k` positions of the key whose hash is `hash` are set in `block` (its block of
/// a blocked filter): [`block_contains_all`](crate::hash::block_contains_all)'s answer, with
/// no branch on any bit, in AVX2 when the CPU has it (seven positions per round of about
/// fifteen instructions: the positions as eight 32-bit lanes, each lane's word fetched from
/// the block's two registers by `vpermd`, its bit tested with `vptest`). One key: through the
/// test chosen for this CPU on the first call (no feature test per call). In a loop inside
/// [`with_simd`], call [`block_contains_inlined`] instead.
#[inline(always)]
pub fn block_contains_fast(block: &[u64; 8], hash: u64, k: u32) -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        chosen::block_contains(block, hash, k)
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        portable_block_contains(block, hash, k)
    }
}

/// [`block_contains_fast`] written to inline into a loop compiled with AVX2 (inside
/// [`with_simd`]): the CPU's AVX2 is a cached flag tested per key, and the AVX2 test is
/// inlined.
#[inline]
pub fn block_contains_inlined(block: &[u64; 8], hash: u64, k: u32) -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 (just checked), all the function needs.
        return unsafe { avx2::block_contains(block, hash, k) };
    }
    portable_block_contains(block, hash, k)
}

/// [`block_contains_fast`]'s path without AVX2, out of line: kept out of
/// [`block_contains_inlined`] so that it inlines into every loop.
#[inline(never)]
fn portable_block_contains(block: &[u64; 8], hash: u64, k: u32) -> bool {
    crate::hash::block_contains_all(block, hash, k)
}

/// Runs `f` compiled with AVX2 enabled when the CPU has it, so that the SIMD block tests it
/// calls ([`block_contains_inlined`], [`split_block_contains_inlined`]) are inlined into its
/// loop instead of being called once per key. Without AVX2 (or under miri) `f` runs as it
/// is; the answers are the same either way.
///
/// A single AVX2 test cannot be inlined into code built for baseline x86-64: each lookup
/// then pays a call. The blocked and split-block filters' batched lookups pay it once per
/// group of [`LANES`](crate::batch::LANES) keys through this scope.
///
/// # Examples
///
/// ```
/// use bloomkit_core::batch::with_simd;
/// use bloomkit_core::hash::split_block_contains_inlined;
///
/// let block = [!0u32; 8];
/// let found =
///     with_simd(|| (0..100u32).filter(|&x| split_block_contains_inlined(&block, x)).count());
/// assert_eq!(found, 100);
/// ```
#[inline]
pub fn with_simd<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(all(target_arch = "x86_64", not(miri), not(target_feature = "avx2")))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 (just checked), all the function needs.
        return unsafe { avx2::scope(f) };
    }
    f()
}

/// Runs `f` compiled with POPCNT enabled when the CPU has it, so that the `count_ones` in
/// it (and in what it inlines) is one instruction instead of a dozen: baseline x86-64 has
/// no POPCNT. For the ribbon filter's parity tests. Without POPCNT (or under miri) `f` runs
/// as it is; the answers are the same either way.
///
/// # Examples
///
/// ```
/// use bloomkit_core::batch::with_popcnt;
///
/// let ones = with_popcnt(|| (0..100u64).map(|x| x.count_ones()).sum::<u32>());
/// assert_eq!(ones, (0..100u64).map(|x| x.count_ones()).sum::<u32>());
/// ```
#[inline]
pub fn with_popcnt<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if bmi::fast_pdep() {
        // SAFETY: the CPU has POPCNT, BMI1 and BMI2 (`fast_pdep` checked them).
        return unsafe { bmi::popcnt_bmi2_scope(f) };
    }
    #[cfg(all(target_arch = "x86_64", not(miri), not(target_feature = "popcnt")))]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT (just checked), all the function needs.
        return unsafe { popcnt_scope(f) };
    }
    f()
}

/// Runs `f` in a function compiled with POPCNT, so its `count_ones` use the instruction.
///
/// # Safety
/// The CPU must have POPCNT.
#[cfg(all(target_arch = "x86_64", not(miri), not(target_feature = "popcnt")))]
#[inline]
#[target_feature(enable = "popcnt")]
unsafe fn popcnt_scope<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The position of the `k`-th set bit of `word` by BMI2's `pdep` (deposit bit `k` of a
/// one-hot mask into the word's set bits, then count trailing zeros), where the CPU runs
/// `pdep` fast; `None` elsewhere ([`crate::bits::select`] then counts by bytes). Two
/// instructions where the caller is compiled with BMI2 (inside [`with_popcnt`]); a call
/// elsewhere. `k` must be below 64; past the word's ones the answer is 64.
#[inline(always)]
pub(crate) fn select_pdep(word: u64, k: u32) -> Option<u32> {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if bmi::fast_pdep() {
        // SAFETY: the CPU has BMI2 (`fast_pdep` checked it).
        return Some(unsafe { bmi::select(word, k) });
    }
    let _ = (word, k);
    None
}

/// BMI2, and whether this CPU's `pdep` is fast.
#[cfg(all(target_arch = "x86_64", not(miri)))]
mod bmi {
    use core::sync::atomic::{AtomicU8, Ordering};

    /// 0: not asked yet; 1: no fast `pdep`; 2: fast `pdep` (and POPCNT, BMI1, BMI2).
    static FAST_PDEP: AtomicU8 = AtomicU8::new(0);

    /// Whether the CPU has POPCNT, BMI1 and BMI2 and runs `pdep` in a few cycles: not an AMD
    /// (or Hygon) CPU before Zen 3 (family 0x19), whose `pdep` is microcode taking tens to
    /// hundreds of cycles. Asked once, then a load and a compare.
    #[inline(always)]
    pub(super) fn fast_pdep() -> bool {
        match FAST_PDEP.load(Ordering::Relaxed) {
            0 => ask(),
            known => known == 2,
        }
    }

    #[cold]
    fn ask() -> bool {
        let fast = std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && !microcoded_pdep();
        FAST_PDEP.store(if fast { 2 } else { 1 }, Ordering::Relaxed);
        fast
    }

    /// An AMD or Hygon CPU before family 0x19 (Zen 3), from CPUID leaves 0 and 1.
    // `__cpuid` is a safe function from Rust 1.89 on and unsafe before (the MSRV is older).
    #[allow(unused_unsafe)]
    fn microcoded_pdep() -> bool {
        use core::arch::x86_64::__cpuid;
        // SAFETY: CPUID exists on every x86-64 CPU; leaves 0 and 1 always.
        let vendor = unsafe { __cpuid(0) };
        let name = [vendor.ebx, vendor.edx, vendor.ecx];
        let is = |s: &[u8; 12]| {
            name.iter()
                .zip(s.chunks(4))
                .all(|(&r, c)| r == u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        };
        if !is(b"AuthenticAMD") && !is(b"HygonGenuine") {
            return false;
        }
        // SAFETY: as above.
        let eax = unsafe { __cpuid(1) }.eax;
        let base = (eax >> 8) & 0xf;
        let family = if base == 0xf {
            base + ((eax >> 20) & 0xff)
        } else {
            base
        };
        family < 0x19
    }

    /// [`super::select_pdep`]'s two instructions.
    ///
    /// # Safety
    /// The CPU must have BMI2.
    #[inline]
    #[target_feature(enable = "bmi2")]
    pub(super) unsafe fn select(word: u64, k: u32) -> u32 {
        core::arch::x86_64::_pdep_u64(1u64 << k, word).trailing_zeros()
    }

    /// [`super::popcnt_scope`] with BMI1 and BMI2 too, so [`select`] inlines.
    ///
    /// # Safety
    /// The CPU must have POPCNT, BMI1 and BMI2.
    #[inline]
    #[target_feature(enable = "popcnt,bmi1,bmi2")]
    pub(super) unsafe fn popcnt_bmi2_scope<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
}

/// [`split_block_contains`] without SIMD: what runs off x86-64, and under miri.
#[inline(always)]
pub fn portable_split_block_contains(block: &[u32; 8], x: u32) -> bool {
    let mask = split_block_mask(x);
    let mut missing = 0;
    for (word, m) in block.iter().zip(mask) {
        missing |= m & !word;
    }
    missing == 0
}

/// [`split_block_insert`] without SIMD.
#[inline(always)]
pub fn portable_split_block_insert(block: &mut [u32; 8], x: u32) -> u32 {
    let mask = split_block_mask(x);
    let mut added = 0;
    for (word, m) in block.iter_mut().zip(mask) {
        added += (m & !*word).count_ones();
        *word |= m;
    }
    added
}

/// The split-block test and insert in SSE2, part of every x86-64 CPU's baseline: what an
/// x86-64 CPU without AVX2 runs. (Inlined into every lookup, they measured slower than the
/// AVX2 functions chosen once, and faster than those tested for per call, depending on the
/// filter's size: see `docs/performance.md`.)
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[allow(unused_unsafe)]
mod sse2 {
    use core::arch::x86_64::{
        __m128i, _mm_add_epi32, _mm_and_si128, _mm_andnot_si128, _mm_castps_si128,
        _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_cvtsi128_si32, _mm_cvttps_epi32, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_mul_epu32, _mm_or_si128, _mm_packs_epi16, _mm_packs_epi32,
        _mm_sad_epu8, _mm_set1_epi32, _mm_set1_epi8, _mm_setr_epi32, _mm_setzero_si128,
        _mm_shuffle_ps, _mm_slli_epi32, _mm_srli_epi32, _mm_storeu_si128,
    };

    use super::SPLIT_BLOCK_SALT as SALT;

    /// Lanes i of `(low, high)`: `1 << ((x * SALT[i]) >> 27)`, for i in 0..4 and 4..8.
    #[inline(always)]
    fn mask(x: u32) -> (__m128i, __m128i) {
        // SAFETY: SSE2 register arithmetic on constants and `x`; SSE2 is in every x86-64
        // target's baseline (the intrinsics are unsafe only through their
        // `#[target_feature(enable = "sse2")]`).
        unsafe {
            let x = _mm_set1_epi32(x as i32);
            (
                four(x, [SALT[0], SALT[1], SALT[2], SALT[3]]),
                four(x, [SALT[4], SALT[5], SALT[6], SALT[7]]),
            )
        }
    }

    /// Four lanes of the mask. (For n = 31 the conversion also sets MXCSR's sticky "invalid"
    /// flag, which Rust's default floating-point environment never reads.) `_mm_mul_epu32`
    /// multiplies lanes 0 and 2 into 64-bit
    /// products, whose low halves are the 32-bit products: salts 0 and 1 in one multiply,
    /// 2 and 3 in the other, and one shuffle puts the four products in order. The top five
    /// bits of each are the lane's bit position, and `1 << n` is 2^n read as a float
    /// (exponent `n + 127`) and truncated to an integer (2^31 is out of `i32`'s range, where
    /// the conversion gives `0x8000_0000`: exactly `1 << 31`).
    #[inline(always)]
    fn four(x: __m128i, salt: [u32; 4]) -> __m128i {
        // SAFETY: SSE2 register arithmetic, as in `mask`.
        unsafe {
            let first = _mm_mul_epu32(x, _mm_setr_epi32(salt[0] as i32, 0, salt[1] as i32, 0));
            let second = _mm_mul_epu32(x, _mm_setr_epi32(salt[2] as i32, 0, salt[3] as i32, 0));
            // Dwords 0 and 2 of each: the four low halves, in lane order.
            let products = _mm_castps_si128(_mm_shuffle_ps::<0b10_00_10_00>(
                _mm_castsi128_ps(first),
                _mm_castsi128_ps(second),
            ));
            let n = _mm_srli_epi32::<27>(products);
            let float = _mm_slli_epi32::<23>(_mm_add_epi32(n, _mm_set1_epi32(127)));
            _mm_cvttps_epi32(_mm_castsi128_ps(float))
        }
    }

    /// [`super::split_block_contains`] in SSE2.
    #[inline(always)]
    pub(super) fn split_block_contains(block: &[u32; 8], x: u32) -> bool {
        let (low, high) = mask(x);
        let ptr = block.as_ptr().cast::<__m128i>();
        // SAFETY: `block` is 32 readable bytes (a `&[u32; 8]`): two 16-byte halves; `loadu`
        // needs no alignment. The rest is SSE2 register arithmetic, as in `mask`.
        unsafe {
            let missing = _mm_or_si128(
                _mm_andnot_si128(_mm_loadu_si128(ptr), low),
                _mm_andnot_si128(_mm_loadu_si128(ptr.add(1)), high),
            );
            _mm_movemask_epi8(_mm_cmpeq_epi32(missing, _mm_setzero_si128())) == 0xffff
        }
    }

    /// [`super::split_block_insert`] in SSE2.
    #[inline(always)]
    pub(super) fn split_block_insert(block: &mut [u32; 8], x: u32) -> u32 {
        let (low, high) = mask(x);
        let ptr = block.as_mut_ptr().cast::<__m128i>();
        // SAFETY: `block` is 32 readable and writable bytes, borrowed mutably: two 16-byte
        // halves; `loadu` / `storeu` need no alignment. The rest is SSE2 register
        // arithmetic, as in `mask`.
        let old = unsafe {
            let (a, b) = (_mm_loadu_si128(ptr), _mm_loadu_si128(ptr.add(1)));
            _mm_storeu_si128(ptr, _mm_or_si128(a, low));
            _mm_storeu_si128(ptr.add(1), _mm_or_si128(b, high));
            // One bit per lane in the mask, so a lane whose bit was already set is all ones
            // after the compare: packed to a byte a lane, masked to 0 or 1 and summed by
            // `psadbw` (baseline x86-64 has no POPCNT).
            let zero = _mm_setzero_si128();
            let old_low = _mm_cmpeq_epi32(_mm_andnot_si128(a, low), zero);
            let old_high = _mm_cmpeq_epi32(_mm_andnot_si128(b, high), zero);
            let bytes = _mm_packs_epi16(_mm_packs_epi32(old_low, old_high), zero);
            let sum = _mm_sad_epu8(_mm_and_si128(bytes, _mm_set1_epi8(1)), zero);
            _mm_cvtsi128_si32(sum) as u32
        };
        8 - old
    }
}

// Since Rust 1.87 register-only intrinsics are safe to call inside a function that enables
// their feature, and their `unsafe` blocks are "unnecessary"; the workspace's MSRV (1.80)
// still needs them.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[allow(unused_unsafe)]
mod avx2 {
    use core::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_andnot_si256, _mm256_blendv_ps, _mm256_castps_si256,
        _mm256_castsi256_ps, _mm256_cmpeq_epi32, _mm256_loadu_si256, _mm256_movemask_ps,
        _mm256_mullo_epi32, _mm256_or_si256, _mm256_permutevar8x32_epi32, _mm256_set1_epi32,
        _mm256_set1_epi64x, _mm256_setr_epi32, _mm256_setr_epi64x, _mm256_setzero_si256,
        _mm256_shuffle_ps, _mm256_slli_epi32, _mm256_sllv_epi32, _mm256_srli_epi32,
        _mm256_srlv_epi64, _mm256_storeu_si256, _mm256_testc_si256, _mm256_testz_si256,
    };

    use crate::hash::block_word;

    use super::SPLIT_BLOCK_SALT as SALT;

    /// Whether the CPU has AVX2: fixed at compile time when the build enables it, otherwise
    /// asked once and cached by the standard library (a load and a bit test per call).
    #[inline(always)]
    pub(super) fn available() -> bool {
        #[cfg(target_feature = "avx2")]
        {
            true
        }
        #[cfg(not(target_feature = "avx2"))]
        {
            std::arch::is_x86_feature_detected!("avx2")
        }
    }

    /// Whether the CPU has AVX2 and POPCNT (every AVX2 CPU has it; asked all the same), for
    /// the split-block insert, which counts with both.
    #[inline(always)]
    pub(super) fn available_with_popcnt() -> bool {
        #[cfg(all(target_feature = "avx2", target_feature = "popcnt"))]
        {
            true
        }
        #[cfg(not(all(target_feature = "avx2", target_feature = "popcnt")))]
        {
            available() && std::arch::is_x86_feature_detected!("popcnt")
        }
    }

    /// Runs `f` in a function compiled with AVX2, so the AVX2 functions it calls can be
    /// inlined into it.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(not(target_feature = "avx2"))]
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn scope<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    /// The key's mask in one register: lane i is `1 << ((x * SALT[i]) >> 27)`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn mask(x: u32) -> __m256i {
        // SAFETY: register-only AVX2 arithmetic on constants and `x`; the caller guarantees
        // AVX2. (The salts are a constant the compiler loads from read-only data.)
        unsafe {
            let salt = _mm256_setr_epi32(
                SALT[0] as i32,
                SALT[1] as i32,
                SALT[2] as i32,
                SALT[3] as i32,
                SALT[4] as i32,
                SALT[5] as i32,
                SALT[6] as i32,
                SALT[7] as i32,
            );
            let product = _mm256_mullo_epi32(salt, _mm256_set1_epi32(x as i32));
            _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32::<27>(product))
        }
    }

    /// [`super::split_block_contains`] in AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn split_block_contains(block: &[u32; 8], x: u32) -> bool {
        // SAFETY: `block` is 32 readable bytes (a `&[u32; 8]`); `loadu` needs no alignment.
        let words = unsafe { _mm256_loadu_si256(block.as_ptr().cast::<__m256i>()) };
        // SAFETY: AVX2 arithmetic on registers; the caller guarantees AVX2.
        unsafe { _mm256_testc_si256(words, mask(x)) != 0 }
    }

    /// [`super::block_contains_fast`] in AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn block_contains(block: &[u64; 8], hash: u64, k: u32) -> bool {
        let ptr = block.as_ptr();
        // SAFETY: `block` is 64 readable bytes (a `&[u64; 8]`): words 0..4 and 4..8 are 32
        // bytes each; `loadu` needs no alignment.
        let (low, high) = unsafe {
            (
                _mm256_loadu_si256(ptr.cast::<__m256i>()),
                _mm256_loadu_si256(ptr.add(4).cast::<__m256i>()),
            )
        };
        // SAFETY: AVX2 arithmetic on registers; the caller guarantees AVX2.
        let mut missing = unsafe { seven(low, high, block_word(hash, 0), k.min(7)) };
        // Past seven positions (k above 7, rates below about 0.5%), seven more per round.
        let mut round = 1;
        while k > 7 * round {
            let count = (k - 7 * round).min(7);
            // SAFETY: as above.
            missing = unsafe {
                _mm256_or_si256(
                    missing,
                    seven(low, high, block_word(hash, u64::from(round)), count),
                )
            };
            round += 1;
        }
        // SAFETY: as above.
        unsafe { _mm256_testz_si256(missing, missing) != 0 }
    }

    /// The bits among the first `count` (0 to 7) positions of `word` (9-bit chunks from
    /// the low end) that are clear in the block whose words 0..4 are `low` and 4..8 `high`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn seven(low: __m256i, high: __m256i, word: u64, count: u32) -> __m256i {
        // Row `count`: 1 in the lanes of the first `count` positions, 0 in the others, so
        // shifting it by a lane's bit gives the bit, or nothing past `count`. Lanes hold
        // positions in the order 0 1 4 5 2 3 6 7 (see below).
        const ONES: [[i32; 8]; 8] = {
            let order = [0, 1, 4, 5, 2, 3, 6, 7];
            let mut table = [[0; 8]; 8];
            let mut count = 0;
            while count < 8 {
                let mut lane = 0;
                while lane < 8 {
                    if order[lane] < count {
                        table[count][lane] = 1;
                    }
                    lane += 1;
                }
                count += 1;
            }
            table
        };
        // SAFETY: register-only AVX2 arithmetic, and a 32-byte load from a constant table
        // row (`count` is at most 7, checked by the index); the caller guarantees AVX2.
        unsafe {
            let ones = _mm256_loadu_si256(ONES[count as usize].as_ptr().cast::<__m256i>());
            let w = _mm256_set1_epi64x(word as i64);
            // Positions 0-3 and 4-7 in the low halves of 64-bit lanes (position 7 is junk,
            // never valid), then packed to 32-bit lanes in the order 0 1 4 5 2 3 6 7.
            let a = _mm256_srlv_epi64(w, _mm256_setr_epi64x(0, 9, 18, 27));
            let b = _mm256_srlv_epi64(w, _mm256_setr_epi64x(36, 45, 54, 63));
            let p = _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(
                _mm256_castsi256_ps(a),
                _mm256_castsi256_ps(b),
            ));
            // A position's 32-bit word is bits 5..9: bits 5..8 pick it within a register
            // (`vpermd` reads the low three bits of each index), bit 8 the register.
            let index = _mm256_srli_epi32::<5>(p);
            let from_low = _mm256_permutevar8x32_epi32(low, index);
            let from_high = _mm256_permutevar8x32_epi32(high, index);
            let words = _mm256_castps_si256(_mm256_blendv_ps(
                _mm256_castsi256_ps(from_low),
                _mm256_castsi256_ps(from_high),
                _mm256_castsi256_ps(_mm256_slli_epi32::<23>(p)),
            ));
            let bit = _mm256_sllv_epi32(ones, _mm256_and_si256(p, _mm256_set1_epi32(31)));
            _mm256_andnot_si256(words, bit)
        }
    }

    /// [`super::split_block_insert`] in AVX2 (with POPCNT).
    ///
    /// # Safety
    /// The CPU must have AVX2 and POPCNT.
    #[inline]
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn split_block_insert(block: &mut [u32; 8], x: u32) -> u32 {
        let ptr = block.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `block` is 32 readable bytes; `loadu` needs no alignment.
        let words = unsafe { _mm256_loadu_si256(ptr) };
        // SAFETY: register arithmetic; the caller guarantees AVX2.
        let (m, new) = unsafe {
            let m = mask(x);
            (m, _mm256_andnot_si256(words, m))
        };
        // SAFETY: `block` is 32 writable bytes, borrowed mutably; no alignment needed.
        unsafe { _mm256_storeu_si256(ptr, _mm256_or_si256(words, m)) };
        // One bit per lane in the mask, so the new bits are the lanes of `new` that are not
        // zero: one compare, one movemask and one popcount.
        // SAFETY: register arithmetic; the caller guarantees AVX2 and POPCNT.
        let zero_lanes = unsafe {
            _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(
                new,
                _mm256_setzero_si256(),
            )))
        };
        8 - (zero_lanes as u32).count_ones()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream of well-mixed words for the tests.
    fn stream(seed: u64) -> impl FnMut() -> u64 {
        let mut state = seed;
        move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    /// The split-block tests and inserts (the chosen ones, the inlined one in and out of a
    /// SIMD scope, the SSE2 ones) agree with the portable ones on blocks from empty to full,
    /// and an inserted key is always found. Under miri every side is portable; the test still
    /// checks insert-then-contains.
    #[test]
    fn arch_split_block_paths_agree() {
        let mut next = stream(7);
        let cases = if cfg!(miri) { 60 } else { 20_000 };
        let (mut yes, mut no) = (0, 0);
        for round in 0..cases {
            let mut block = [0u32; 8];
            for w in &mut block {
                let mut word = next() as u32;
                for _ in 0..round % 4 {
                    word &= next() as u32;
                }
                if round % 9 == 0 {
                    word |= next() as u32;
                }
                *w = word;
            }
            let x = next() as u32;
            if round % 4 == 0 {
                // Every fourth block holds the key already: both answers occur, also in
                // miri's 60 cases.
                for (w, m) in block.iter_mut().zip(split_block_mask(x)) {
                    *w |= m;
                }
            }
            let expected = portable_split_block_contains(&block, x);
            assert_eq!(
                split_block_contains(&block, x),
                expected,
                "{block:x?} {x:#x}"
            );
            assert_eq!(split_block_contains_inlined(&block, x), expected);
            assert_eq!(
                with_simd(|| split_block_contains_inlined(&block, x)),
                expected
            );
            // The SSE2 paths too, which this CPU may not choose (it has AVX2).
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            {
                assert_eq!(sse2::split_block_contains(&block, x), expected);
                let (mut a, mut b) = (block, block);
                assert_eq!(
                    sse2::split_block_insert(&mut a, x),
                    portable_split_block_insert(&mut b, x)
                );
                assert_eq!(a, b);
            }
            if expected {
                yes += 1;
            } else {
                no += 1;
            }
            let (mut a, mut b) = (block, block);
            assert_eq!(
                split_block_insert(&mut a, x),
                portable_split_block_insert(&mut b, x)
            );
            assert_eq!(a, b);
            assert!(split_block_contains(&a, x) && portable_split_block_contains(&a, x));
            assert_eq!(
                split_block_insert(&mut a, x),
                0,
                "a second insert adds nothing"
            );
        }
        assert!(yes > 0 && no > 0, "{yes} / {no}");
    }

    /// The dispatched blocked test (AVX2 where the CPU has it) agrees with the portable
    /// branch-free one for every k bloomkit allows, on blocks from nearly empty to full.
    #[test]
    fn arch_block_paths_agree() {
        let mut next = stream(13);
        // Under miri (which checks the unsafe calls, not the answers' spread) six blocks a k.
        let per_k = if cfg!(miri) { 6 } else { 3_000 };
        for k in 1..=crate::sizing::MAX_HASHES {
            let (mut yes, mut no) = (0, 0);
            for round in 0..per_k {
                let mut block = [0u64; 8];
                for w in &mut block {
                    *w = !0;
                    for _ in 0..round % 5 {
                        *w &= next();
                    }
                }
                let hash = next();
                if round % 3 == 0 {
                    // The key's own bits: both answers occur at every k.
                    let mask = crate::hash::BlockProbe::new(hash, 1, k).mask;
                    for (w, m) in block.iter_mut().zip(mask) {
                        *w |= m;
                    }
                }
                let expected = crate::hash::block_contains_all(&block, hash, k);
                assert_eq!(
                    block_contains_fast(&block, hash, k),
                    expected,
                    "k {k}, hash {hash:#x}, {block:x?}"
                );
                assert_eq!(block_contains_inlined(&block, hash, k), expected);
                assert_eq!(
                    with_simd(|| block_contains_inlined(&block, hash, k)),
                    expected
                );
                if expected {
                    yes += 1;
                } else {
                    no += 1;
                }
            }
            assert!(yes > 0 && no > 0, "k {k}: {yes} / {no}");
        }
    }

    /// One bit per word, at the position Parquet's spec gives.
    #[test]
    fn arch_split_block_mask_is_one_bit_per_word() {
        let mut next = stream(11);
        for _ in 0..if cfg!(miri) { 100 } else { 1_000 } {
            let x = next() as u32;
            let mask = split_block_mask(x);
            for (i, m) in mask.iter().enumerate() {
                assert_eq!(*m, 1 << (x.wrapping_mul(SPLIT_BLOCK_SALT[i]) >> 27));
                assert!(m.is_power_of_two());
            }
        }
        // x = 0: every product is 0, so bit 0 of every word.
        assert_eq!(split_block_mask(0), [1; 8]);
    }

    /// A prefetch of any live value, at any alignment, leaves every value as it was.
    #[test]
    fn prefetch_changes_nothing() {
        let words: Vec<u64> = (0..64).collect();
        let bytes = [7u8; 100];
        for w in &words {
            prefetch(w);
        }
        for b in &bytes[1..] {
            prefetch(b);
        }
        prefetch(&words);
        prefetch(&());
        assert_eq!(words, (0..64).collect::<Vec<u64>>());
        assert!(bytes.iter().all(|&b| b == 7));
    }
}
