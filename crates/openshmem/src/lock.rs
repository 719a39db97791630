//! Distributed locks (OpenSHMEM 1.5 chapter 9.11): a ticket lock in PE 0's copy of the symmetric
//! `long` (the upper 32 bits: next ticket, the lower 32: ticket being served). Fair (first come,
//! first served) and without lost wake-ups: a waiter polls the word with bounded back-off until its
//! ticket is served. The lock word must be zero before first use, as the specification says; a
//! waiter that finds its ticket passed (the program wrote the lock word) reports an error instead
//! of waiting forever.

use std::ffi::c_long;
use std::time::Duration;

use crate::guard;
use aclshmem_core::atomic;
use aclshmem_core::error::{Error, Result};

const HOME: i32 = 0;
const TICKET: u64 = 1 << 32;

fn word(lock: *mut c_long) -> Result<*mut u64> {
    crate::non_null(lock, "lock")?;
    Ok(lock.cast())
}

/// Whether the ticket being served is ahead of `ticket` (counters wrap: "ahead" is by less than
/// half their range; a correct lock never has 2^31 waiters).
fn passed(serving: u32, ticket: u32) -> bool {
    (1..1 << 31).contains(&serving.wrapping_sub(ticket))
}

/// One wait step: drives the transports first (with UCX's progress thread off, another PE's
/// atomic on this PE's lock word, or the clear that serves this PE's ticket, lands only while this
/// PE is inside a library call that progresses), then spins, yields or sleeps.
fn snooze(round: &mut u32) {
    aclshmem_core::rma::progress();
    *round += 1;
    match *round {
        0..64 => std::hint::spin_loop(),
        64..1024 => std::thread::yield_now(),
        r => std::thread::sleep(Duration::from_micros(u64::from((r - 1024).min(20) * 50))),
    }
}

/// Acquires the lock (blocking; fair). Earlier memory accesses of the previous holder are visible
/// once it returns.
///
/// # Safety
/// `lock` must be NULL or a symmetric `long` used only as a lock.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_set_lock(lock: *mut c_long) {
    guard("shmem_set_lock", (), || {
        let w = word(lock)?;
        let mine = (atomic::fetch_add(w, TICKET, HOME)? >> 32) as u32;
        let mut round = 0;
        loop {
            let serving = atomic::fetch(w.cast_const(), HOME)? as u32;
            if serving == mine {
                return Ok(());
            }
            // the served ticket never passes a waiting one: if it did, the program wrote the
            // lock variable (undefined), and this wait would never end
            if passed(serving, mine) {
                return Err(Error::InvalidValue(format!(
                    "lock: inconsistent lock state (ticket {mine}, already serving {serving}): \
                     the lock variable must be zero before first use and then changed only by \
                     the lock routines"
                )));
            }
            snooze(&mut round);
        }
    })
}

/// Releases the lock after completing this PE's outstanding puts and AMOs (quiet), so the next
/// holder sees them.
///
/// # Safety
/// As for [`shmem_set_lock`]; this PE must hold the lock.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_clear_lock(lock: *mut c_long) {
    guard("shmem_clear_lock", (), || {
        let w = word(lock)?;
        aclshmem_core::rma::quiet()?;
        let mut v = atomic::fetch(w.cast_const(), HOME)?;
        loop {
            // serve the next ticket without carrying into the ticket counter
            let next = (v & !0xffff_ffff) | u64::from((v as u32).wrapping_add(1));
            let old = atomic::compare_swap(w, v, next, HOME)?;
            if old == v {
                return Ok(());
            }
            v = old;
        }
    })
}

/// Takes the lock if it is free: returns 0 when it did, 1 when the lock is held (nothing changes).
///
/// # Safety
/// As for [`shmem_set_lock`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_test_lock(lock: *mut c_long) -> std::ffi::c_int {
    guard("shmem_test_lock", 1, || {
        let w = word(lock)?;
        let v = atomic::fetch(w.cast_const(), HOME)?;
        if (v >> 32) as u32 != v as u32 {
            return Ok(1);
        }
        let old = atomic::compare_swap(w, v, v.wrapping_add(TICKET), HOME)?;
        Ok(if old == v { 0 } else { 1 })
    })
}

#[cfg(test)]
mod tests {
    use super::passed;

    #[test]
    fn a_waiting_ticket_is_not_passed_and_a_passed_one_is_across_the_wrap() {
        assert!(!passed(0, 0));
        assert!(!passed(0, 2), "two tickets ahead of the served one: waiting");
        assert!(!passed(u32::MAX, 1), "waiting across the wrap");
        assert!(passed(2, 0));
        assert!(passed(1, u32::MAX), "passed across the wrap");
    }
}
