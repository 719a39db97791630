//! Events: `aclrtCreateEvent[WithFlag]`, `aclrtRecordEvent`, `aclrtSynchronizeEvent[WithTimeout]`,
//! `aclrtQueryEventStatus`, the deprecated `aclrtQueryEvent`, `aclrtEventElapsedTime`,
//! `aclrtStreamWaitEvent`, `aclrtDestroyEvent`.
#![allow(non_snake_case)]

use std::ffi::c_void;
use std::sync::Arc;

use super::{from_c, require, status, timeout_ms, to_c, write_out};
use crate::device;
use crate::error::{AclError, Error, Result};
use crate::event::{self, Event, Status};
use crate::handle::{Registry, next_handle};

static EVENTS: Registry<Event> = Registry::new();

/// `aclrtEventRecordedStatus` values (note: the reverse of `aclrtStreamStatus`).
const RECORDED_STATUS_NOT_READY: i32 = 0;
const RECORDED_STATUS_COMPLETE: i32 = 1;
/// `aclrtEventStatus` values (the deprecated `aclrtQueryEvent`).
const EVENT_STATUS_COMPLETE: i32 = 0;
const EVENT_STATUS_NOT_READY: i32 = 1;

fn lookup(event: *mut c_void, name: &str) -> Result<Arc<Event>> {
    require(event, name)?;
    EVENTS
        .get(from_c(event))
        .ok_or_else(|| Error::bad_handle("event"))
}

/// # Safety
/// `event` must be NULL or valid for a write of `aclrtEvent`.
unsafe fn create(event: *mut *mut c_void, ev: Arc<Event>) -> Result<()> {
    require(event, "event")?;
    let handle = next_handle();
    EVENTS.insert(handle, ev);
    // SAFETY: valid for writes per the caller's contract.
    unsafe { write_out(event, "event", to_c(handle)) }
}

/// `aclError aclrtCreateEvent(aclrtEvent *event);` — a new event (with timestamps, usable by
/// stream waits). NULL → 100000.
///
/// # Safety
/// `event` must be NULL or valid for a write of `aclrtEvent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEvent(event: *mut *mut c_void) -> AclError {
    // SAFETY: forwarded contract.
    status("aclrtCreateEvent", || unsafe { create(event, Event::new()) })
}

/// `aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);` — a new event with the
/// `ACL_EVENT_*` flags OR-ed in `flag` (`ACL_EVENT_EXTERNAL` alone): without `ACL_EVENT_SYNC` no
/// stream may wait for it, without `ACL_EVENT_TIME_LINE` it has no timestamps (both then →
/// `ACL_ERROR_RT_PARAM_INVALID`, 107000); the other flags change nothing on the CPU. NULL or an
/// unknown flag → 100000.
///
/// # Safety
/// `event` must be NULL or valid for a write of `aclrtEvent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventWithFlag(event: *mut *mut c_void, flag: u32) -> AclError {
    status("aclrtCreateEventWithFlag", || {
        require(event, "event")?;
        event::check_flags(flag)?;
        // SAFETY: forwarded contract.
        unsafe { create(event, Event::with_flags(flag)) }
    })
}

/// `aclError aclrtDestroyEvent(aclrtEvent event);` — does not block; a pending record still
/// completes. NULL → 100000; unknown/destroyed → `ACL_ERROR_RT_INVALID_HANDLE` (107017).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyEvent(event: *mut c_void) -> AclError {
    status("aclrtDestroyEvent", || {
        require(event, "event")?;
        EVENTS
            .remove(from_c(event))
            .map(drop)
            .ok_or_else(|| Error::bad_handle("event"))
    })
}

/// `aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);` — the event completes when
/// everything queued on `stream` (NULL = default stream) so far has run; re-recording replaces it.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtRecordEvent(event: *mut c_void, stream: *mut c_void) -> AclError {
    status("aclrtRecordEvent", || {
        let ev = lookup(event, "event")?;
        ev.record(&*device::stream(from_c(stream))?)
    })
}

/// `aclError aclrtSynchronizeEvent(aclrtEvent event);` — waits for the latest record; a never
/// recorded event returns at once.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeEvent(event: *mut c_void) -> AclError {
    status("aclrtSynchronizeEvent", || {
        lookup(event, "event")?.synchronize(None)
    })
}

/// `aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout);` — within
/// `timeout` ms (−1 = forever; < −1 → 107000; expiry → `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT` 507047).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeEventWithTimeout(event: *mut c_void, timeout: i32) -> AclError {
    status("aclrtSynchronizeEventWithTimeout", || {
        let ev = lookup(event, "event")?;
        ev.synchronize(timeout_ms(timeout)?)
    })
}

/// `aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);` —
/// `ACL_EVENT_RECORDED_STATUS_COMPLETE` (1) once the latest record has completed, else
/// `ACL_EVENT_RECORDED_STATUS_NOT_READY` (0), also for a never recorded event. NULL → 100000.
///
/// # Safety
/// `status` must be NULL or valid for a write of a C `enum` (`int`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEventStatus(event: *mut c_void, status: *mut i32) -> AclError {
    // SAFETY: forwarded contract.
    unsafe {
        query(
            "aclrtQueryEventStatus",
            event,
            status,
            [RECORDED_STATUS_COMPLETE, RECORDED_STATUS_NOT_READY],
        )
    }
}

/// Writes `values[0]` through `status` when the event's latest record has completed, else
/// `values[1]` (the two query calls number their answers the other way round).
///
/// # Safety
/// `status` must be NULL or valid for a write of a C `enum` (`int`).
unsafe fn query(call: &'static str, event: *mut c_void, status: *mut i32, values: [i32; 2]) -> AclError {
    super::status(call, || {
        require(status, "status")?;
        let value = match lookup(event, "event")?.query() {
            Status::Complete => values[0],
            Status::NotReady => values[1],
        };
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(status, "status", value) }
    })
}

/// `aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status);` (deprecated, as
/// `aclrtQueryEventStatus` with the other numbering) — `ACL_EVENT_STATUS_COMPLETE` (0) once the
/// latest record has completed, else `ACL_EVENT_STATUS_NOT_READY` (1), also for a never recorded
/// event. NULL → 100000.
///
/// # Safety
/// `status` must be NULL or valid for a write of a C `enum` (`int`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEvent(event: *mut c_void, status: *mut i32) -> AclError {
    // SAFETY: forwarded contract.
    unsafe {
        query(
            "aclrtQueryEvent",
            event,
            status,
            [EVENT_STATUS_COMPLETE, EVENT_STATUS_NOT_READY],
        )
    }
}

/// `aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);` —
/// milliseconds between the completions of the two events' latest records. NULL → 100000; never
/// recorded → 507000; not complete yet → `ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID` (107006); end
/// before start → `ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL` (107007).
///
/// # Safety
/// `ms` must be NULL or valid for a write of `float`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventElapsedTime(
    ms: *mut f32,
    startEvent: *mut c_void,
    endEvent: *mut c_void,
) -> AclError {
    status("aclrtEventElapsedTime", || {
        require(ms, "ms")?;
        let (a, b) = (lookup(startEvent, "startEvent")?, lookup(endEvent, "endEvent")?);
        let value = Event::elapsed_ms(&a, &b)?;
        // SAFETY: valid for writes per this function's contract.
        unsafe { write_out(ms, "ms", value) }
    })
}

/// `aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);` — work queued on `stream`
/// (NULL = default stream) after this call waits for the event's latest record; a never recorded
/// event adds no wait.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamWaitEvent(stream: *mut c_void, event: *mut c_void) -> AclError {
    status("aclrtStreamWaitEvent", || {
        let ev = lookup(event, "event")?;
        ev.wait_on(&*device::stream(from_c(stream))?)
    })
}
