//! Notifies: `aclrtCreateNotify`, `aclrtDestroyNotify`, `aclrtRecordNotify`,
//! `aclrtWaitAndResetNotify`, `aclrtGetNotifyId`, and the shim's own `aclshimNotifySet` (declared in
//! `acl/acl_shim.h`); cache maintenance `aclrtCmoAsync`.
#![allow(non_snake_case)]

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::{from_c, require, status, to_c, write_out};
use crate::device;
use crate::error::{AclError, Error, Result};
use crate::handle::{Registry, next_handle};
use crate::notify::Notify;

static NOTIFIES: Registry<Notify> = Registry::new();
static NEXT_ID: AtomicU32 = AtomicU32::new(0);

fn lookup(notify: *mut c_void) -> Result<Arc<Notify>> {
    require(notify, "notify")?;
    NOTIFIES
        .get(from_c(notify))
        .ok_or_else(|| Error::bad_handle("notify"))
}

/// `aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag);` — a new notify, not set.
/// `flag` is accepted and ignored. NULL → 100000.
///
/// # Safety
/// `notify` must be NULL or valid for a write of `aclrtNotify`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateNotify(notify: *mut *mut c_void, flag: u64) -> AclError {
    let _ = flag;
    status("aclrtCreateNotify", || {
        require(notify, "notify")?;
        let handle = next_handle();
        NOTIFIES.insert(handle, Notify::new(NEXT_ID.fetch_add(1, Ordering::Relaxed)));
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(notify, "notify", to_c(handle)) }
    })
}

/// `aclError aclrtDestroyNotify(aclrtNotify notify);` — queued records and waits still complete.
/// NULL → 100000; unknown → 107017.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyNotify(notify: *mut c_void) -> AclError {
    status("aclrtDestroyNotify", || {
        require(notify, "notify")?;
        NOTIFIES
            .remove(from_c(notify))
            .map(drop)
            .ok_or_else(|| Error::bad_handle("notify"))
    })
}

/// `aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream);` — the notify is set when
/// `stream` (NULL = default stream) reaches this point.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtRecordNotify(notify: *mut c_void, stream: *mut c_void) -> AclError {
    status("aclrtRecordNotify", || {
        lookup(notify)?.record(&*device::stream(from_c(stream))?)
    })
}

/// `aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout);` —
/// later work on `stream` waits until the notify is set, then the notify is cleared. `timeout` in
/// seconds, 0 = forever; on expiry the stream's next synchronize returns `ACL_ERROR_RT_WAIT_TIMEOUT`
/// (107019) and the stream goes on.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtWaitAndResetNotify(
    notify: *mut c_void,
    stream: *mut c_void,
    timeout: u32,
) -> AclError {
    status("aclrtWaitAndResetNotify", || {
        let limit = (timeout > 0).then(|| Duration::from_secs(u64::from(timeout)));
        lookup(notify)?.wait_and_reset(&*device::stream(from_c(stream))?, limit)
    })
}

/// `aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t *notifyId);` — a number unique among
/// this process's notifies. NULL → 100000.
///
/// # Safety
/// `notifyId` must be NULL or valid for a write of `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetNotifyId(notify: *mut c_void, notifyId: *mut u32) -> AclError {
    status("aclrtGetNotifyId", || {
        require(notifyId, "notifyId")?;
        let id = lookup(notify)?.id;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(notifyId, "notifyId", id) }
    })
}

/// `aclError aclshimNotifySet(aclrtNotify notify);` (shim extension, `acl/acl_shim.h`) — sets the
/// notify now, from any thread (libaclshmem's kernel blocks record their per-core notifies with it).
#[unsafe(no_mangle)]
pub extern "C" fn aclshimNotifySet(notify: *mut c_void) -> AclError {
    status("aclshimNotifySet", || {
        lookup(notify)?.set_now();
        Ok(())
    })
}

/// `aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType, aclrtStream stream);` —
/// cache maintenance (prefetch, write-back, invalidate, flush) of `[src, src + size)`, in stream
/// order. Host memory is coherent: it is a memory fence when the stream reaches it. NULL `src` or
/// `size` 0 → 100000; `cmoType` outside 0..3 → 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoAsync(
    src: *mut c_void,
    size: usize,
    cmoType: i32,
    stream: *mut c_void,
) -> AclError {
    status("aclrtCmoAsync", || {
        require(src, "src")?;
        if size == 0 {
            return Err(Error::invalid_param("size is 0"));
        }
        if !(0..=3).contains(&cmoType) {
            return Err(Error::invalid_param(format!(
                "cmoType {cmoType} is not an aclrtCmoType"
            )));
        }
        device::stream(from_c(stream))?.enqueue_replayable(|| {
            std::sync::atomic::fence(Ordering::SeqCst);
            Ok(())
        })
    })
}
