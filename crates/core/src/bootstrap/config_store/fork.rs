//! A PE that forks must not lend its store connections to the child: a child that inherits them
//! keeps them open after the PE died, so the store would never see the PE's connections end.
//!
//! Every client socket of the store is registered here; in a forked child (pthread_atfork) each
//! registered descriptor is replaced by /dev/null, which closes the child's reference to the
//! socket and keeps the number taken, so nothing the child opens later gets it. Every socket of
//! the library is also close-on-exec (the standard library opens them so), so a child that execs
//! keeps none. The store's own sockets (PE 0) are not registered: when PE 0 dies with a child
//! holding them, the heartbeat tells the others, and when the store ends a connection (at
//! finalize too) it shuts the socket down rather than only closing its descriptor, so the child's
//! copy does not keep the connection open.
//!
//! `unsafe`: pthread_atfork, open and dup3 through libc.

use std::os::fd::RawFd;
use std::sync::Once;
use std::sync::atomic::{AtomicI32, Ordering};

/// Registered descriptors (-1: free slot). Each instance registers three.
static SLOTS: [AtomicI32; 96] = [const { AtomicI32::new(-1) }; 96];
/// /dev/null, opened once (close-on-exec) for the child handler.
static DEV_NULL: AtomicI32 = AtomicI32::new(-1);

/// Runs in the child right after fork, with only the forking thread alive: uses only
/// async-signal-safe calls (atomic loads, dup3).
unsafe extern "C" fn in_child() {
    let null = DEV_NULL.load(Ordering::Acquire);
    if null < 0 {
        return;
    }
    for slot in &SLOTS {
        let fd = slot.load(Ordering::Acquire);
        if fd >= 0 {
            // SAFETY: dup3 has no memory-safety preconditions; a stale number fails harmlessly.
            unsafe { libc::dup3(null, fd, libc::O_CLOEXEC) };
        }
    }
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: the path is a valid NUL-terminated string.
        let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if null < 0 {
            log::warn!("cannot open /dev/null: a forked child will keep the store connections");
            return;
        }
        DEV_NULL.store(null, Ordering::Release);
        // SAFETY: in_child is an async-signal-safe function with the required signature.
        if unsafe { libc::pthread_atfork(None, None, Some(in_child)) } != 0 {
            log::warn!("pthread_atfork failed: a forked child will keep the store connections");
        }
    });
}

/// Keeps a descriptor registered while it lives; declare it before the socket it guards, so it
/// is dropped (unregistered) before the socket is closed.
pub struct ForkGuard(Option<usize>);

impl ForkGuard {
    /// Registers `fd` (when every slot is taken, the descriptor is left to the heartbeat).
    pub fn register(fd: RawFd) -> ForkGuard {
        install();
        let slot = SLOTS.iter().position(|s| {
            s.compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        });
        ForkGuard(slot)
    }
}

impl Drop for ForkGuard {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            SLOTS[i].store(-1, Ordering::Release);
        }
    }
}
