//! A filter shared by Python threads, read and written without atomic instructions when only
//! the thread holding the GIL can reach it.
//!
//! Every class holds its filter in a [`Locked`]. Work done without the GIL (a batch's
//! chunks, `bytes(f)`) registers first ([`Locked::detach`], with the GIL held), takes the
//! lock for each access, and unregisters with the GIL held again. A call made with the GIL
//! held (`key in f`, `f.add(key)`, the getters: [`Locked::with`], [`Locked::with_mut`])
//! reads the filter directly when nothing is registered, and takes the lock when something
//! is.
//!
//! Why not the lock every time: an uncontended `RwLock` read is two locked instructions, and
//! on x86 a locked instruction waits for every load before it, so one lookup's cache misses
//! can no longer overlap the next lookup's. One lookup at a time in a `BloomFilter<str>` of
//! 10^7 keys (Rust, the same loop with and without a read lock around each call): 86-104 ns
//! a key without, 117-134 ns with; from Python, `key in f` was 0.86-0.92x rbloom's speed with
//! the lock.
//!
//! Why it is sound: in a CPython with a GIL one thread holds it at a time, and a thread
//! holding it lets it go only by calling into Python (or `Python::detach`). A thread that
//! reaches the filter without the GIL does so inside a registered [`Detached`], which was
//! counted with the GIL held before the access and is uncounted with the GIL held after the
//! last one (the worker threads are joined first). So a thread holding the GIL that reads
//! the count as 0 knows no other thread touches the filter until it lets the GIL go, and
//! the closures given to [`Locked::with`] and [`Locked::with_mut`] run Rust code only (they
//! are given the filter, never a Python object: they must not call into Python). The GIL's
//! own lock orders the count's loads and stores (relaxed atomics, plain moves on x86) and
//! makes a detached writer's last writes visible to the next holder. A build of CPython
//! without a GIL (`Py_GIL_DISABLED`) takes the lock every time.

#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use pyo3::Python;

/// A filter and what guards it (see the module's docs).
pub(crate) struct Locked<F> {
    filter: UnsafeCell<F>,
    /// Held by every access made while something is registered.
    lock: RwLock<()>,
    /// How many registered [`Detached`] operations are in flight: read and written only by
    /// a thread holding the GIL.
    detached: AtomicUsize,
}

// SAFETY: the filter is reached through `&Locked` only as the module's docs say: shared by
// readers or held by one writer, by the lock or by holding the GIL alone; so `Locked<F>` is
// `Sync` where an `RwLock<F>` is (`F: Send + Sync`).
unsafe impl<F: Send + Sync> Sync for Locked<F> {}

impl<F> Locked<F> {
    /// The filter, guarded.
    pub(crate) fn new(filter: F) -> Self {
        Locked {
            filter: UnsafeCell::new(filter),
            lock: RwLock::new(()),
            detached: AtomicUsize::new(0),
        }
    }

    /// Whether the thread holding the GIL (`_py` proves it) may reach the filter without
    /// the lock: no registered operation is in flight. (The GIL already orders the count;
    /// acquire and release cost nothing more on x86 and keep the argument local.)
    fn alone(&self, _py: Python<'_>) -> bool {
        if !cfg!(Py_GIL_DISABLED) && self.detached.load(Ordering::Acquire) == 0 {
            return true;
        }
        LOCKED_CALLS.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Runs `f` on the filter, with the GIL held. `f` must not call into Python (it is
    /// `Send`, so it cannot hold the GIL's token or a Python object).
    pub(crate) fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&F) -> R + Send) -> R {
        self.reach(py, f)
    }

    /// Runs `f` on the filters `a` and `b`, with the GIL held; as [`with`](Self::with).
    pub(crate) fn with_both<R>(
        py: Python<'_>,
        a: &Self,
        b: &Self,
        f: impl FnOnce(&F, &F) -> R + Send,
    ) -> R {
        a.reach(py, |a| b.reach(py, |b| f(a, b)))
    }

    /// `with` without the `Send` bound, for this module's own closures.
    fn reach<R>(&self, py: Python<'_>, f: impl FnOnce(&F) -> R) -> R {
        if self.alone(py) {
            // SAFETY: no registered operation is in flight and this thread holds the GIL,
            // which it keeps while `f` runs (`f` does not call into Python): no other
            // thread reaches the filter meanwhile (the module's docs).
            return f(unsafe { &*self.filter.get() });
        }
        f(&self.read())
    }

    /// Runs `f` on the filter, alone, with the GIL held; as [`with`](Self::with).
    pub(crate) fn with_mut<R>(&self, py: Python<'_>, f: impl FnOnce(&mut F) -> R + Send) -> R {
        if self.alone(py) {
            // SAFETY: as in `reach`; and this thread holds no other reference to the filter
            // (the references `with`, `with_both` and `with_mut` give do not outlive their
            // closures, which are `Send` and get no `Python` token to nest a call on, and a
            // `Detached` of this thread is counted, so `alone` is false while it lives).
            return f(unsafe { &mut *self.filter.get() });
        }
        f(&mut self.write())
    }

    /// Registers an operation that will reach the filter without the GIL (on this thread
    /// inside `Python::detach`, or on threads it starts); it ends when the handle is
    /// dropped, which happens on this thread, with the GIL held again (the handle lives no
    /// longer than the token: one made inside a nested attach cannot leave it).
    pub(crate) fn detach<'py>(&'py self, _py: Python<'py>) -> Detached<'py, F> {
        self.detached.fetch_add(1, Ordering::Relaxed);
        Detached {
            locked: self,
            not_send: PhantomData,
        }
    }

    fn read(&self) -> Guard<RwLockReadGuard<'_, ()>, &F> {
        let guard = self.lock.read().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: the read lock is held for as long as the reference (both in the `Guard`),
        // and every writer without the GIL holds the write lock; a writer with the GIL
        // holds the lock too while anything is registered, which is the case here or the
        // caller holds the GIL (`with`).
        Guard(guard, unsafe { &*self.filter.get() })
    }

    // The write lock, held by the returned guard as long as the reference, makes it unique.
    #[allow(clippy::mut_from_ref)]
    fn write(&self) -> Guard<RwLockWriteGuard<'_, ()>, &mut F> {
        let guard = self.lock.write().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: as in `read`, with the write lock: no other reference while it is held.
        Guard(guard, unsafe { &mut *self.filter.get() })
    }
}

/// How many calls made with the GIL held took the lock because a batch was registered
/// (`bloomkit._native._locked_calls`, for the tests: the locked path already pays for atomic
/// instructions).
pub(crate) static LOCKED_CALLS: AtomicU64 = AtomicU64::new(0);

impl<F> std::fmt::Debug for Locked<F> {
    // Not the filter: formatting may happen anywhere, and reaching it needs the rules above.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Locked").finish_non_exhaustive()
    }
}

/// A lock guard and the filter it guards (the guard is held for the reference's life).
pub(crate) struct Guard<G, R>(G, R);

impl<G, F> Deref for Guard<G, &F> {
    type Target = F;
    fn deref(&self) -> &F {
        self.1
    }
}

impl<G, F> Deref for Guard<G, &mut F> {
    type Target = F;
    fn deref(&self) -> &F {
        self.1
    }
}

impl<G, F> DerefMut for Guard<G, &mut F> {
    fn deref_mut(&mut self) -> &mut F {
        self.1
    }
}

/// A registered operation that reaches the filter without the GIL, taking the lock for each
/// access. Shared with the threads it starts (`Sync`), never moved to one (not `Send`), so it
/// is dropped, and uncounted, where it was made: with the GIL held.
pub(crate) struct Detached<'a, F> {
    locked: &'a Locked<F>,
    not_send: PhantomData<*const ()>,
}

// SAFETY: shared, it gives only `read` and `write`, which take the lock (as `&RwLock<F>`
// would be shared: `F: Send + Sync`); the count it holds is changed only by its creation
// and its drop, on the thread holding the GIL.
unsafe impl<F: Send + Sync> Sync for Detached<'_, F> {}

impl<F> Detached<'_, F> {
    /// The filter, shared.
    pub(crate) fn read(&self) -> impl Deref<Target = F> + '_ {
        self.locked.read()
    }

    /// The filter, alone.
    pub(crate) fn write(&self) -> impl DerefMut<Target = F> + '_ {
        self.locked.write()
    }
}

impl<F> Drop for Detached<'_, F> {
    fn drop(&mut self) {
        // With the GIL held: a `Detached` is made with it and never leaves its thread, and
        // `Python::detach` gives the GIL back before it returns or unwinds.
        self.locked.detached.fetch_sub(1, Ordering::Release);
    }
}
