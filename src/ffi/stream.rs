//! C entry points of the stream-ordered calls (spec 8.3.6, 8.3.8, 8.4, 8.5.1, 8.6) and profiling
//! (8.8). Each validates what it can now, then queues ONE core operation on the stream
//! (src/stream.rs), where it runs after everything queued before it, without blocking the caller.

use std::ffi::{c_int, c_void};

use super::types::{Handle, ProfPe, aclrtStream, aclshmem_team_t};
use super::{arg_mut, guard};
use aclshmem_core::error::Result;
use aclshmem_core::p2p::{self, Cmp, SignalOp};
use aclshmem_core::runtime::{self, Instance};
use aclshmem_core::stream::{self, Frame, NullStream};
use aclshmem_core::{rma, sync};

/// Queues `op` on `stream`; it runs on the instance current now (see `stream::enqueue`).
fn queue(
    call: &'static str,
    stream: aclrtStream,
    null: NullStream,
    frame: Frame,
    op: impl Fn(&Instance) -> Result<()> + Send + Sync + 'static,
) -> Result<()> {
    stream::enqueue(
        runtime::current()?.share(),
        stream,
        null,
        call,
        frame,
        std::sync::Arc::new(op),
    )
}

/// Queues on `stream` (NULL: the library's internal stream) a copy of `elem_size` **bytes** from
/// local `src` to symmetric `dst` on PE `pe`; returns at once. Complete when the stream has run it
/// (synchronize the stream). Bad arguments are logged when it runs and reported by the stream's
/// next synchronize (with the CPU libascendcl).
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_putmem_on_stream(
    dst: *mut c_void,
    src: *mut c_void,
    elem_size: usize,
    pe: i32,
    stream: aclrtStream,
) {
    let (d, s) = (dst as usize, src as usize);
    guard("aclshmemx_putmem_on_stream", || {
        queue(
            "aclshmemx_putmem_on_stream",
            stream,
            NullStream::Internal,
            Frame::Put,
            // SAFETY: the program keeps both buffers alive until the stream has run the copy
            // (the contract of every stream-ordered call).
            move |inst| unsafe { rma::put_in(inst, d as *mut u8, s as *const u8, elem_size, pe, false) },
        )
    })
}

/// Queues on `stream` (NULL: internal stream) a copy of `elem_size` bytes from symmetric `src` on PE
/// `pe` to local `dst`; returns at once.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_getmem_on_stream(
    dst: *mut c_void,
    src: *mut c_void,
    elem_size: usize,
    pe: i32,
    stream: aclrtStream,
) {
    let (d, s) = (dst as usize, src as usize);
    guard("aclshmemx_getmem_on_stream", || {
        queue(
            "aclshmemx_getmem_on_stream",
            stream,
            NullStream::Internal,
            Frame::Get,
            // SAFETY: as for aclshmemx_putmem_on_stream.
            move |inst| unsafe { rma::get_in(inst, d as *mut u8, s as *const u8, elem_size, pe, false) },
        )
    })
}

/// Queues on `stream` (NULL: internal stream) a quiet: when the stream reaches it, every put, get
/// and signal this PE issued before is complete and visible.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_quiet_on_stream(stream: aclrtStream) {
    guard("aclshmemx_quiet_on_stream", || {
        queue(
            "aclshmemx_quiet_on_stream",
            stream,
            NullStream::Internal,
            Frame::Quiet,
            rma::quiet_in,
        )
    })
}

/// Queues on `stream` (NULL: internal stream) an update of the 32-bit signal word at symmetric
/// `sig_addr` on PE `pe`: ACLSHMEM_SIGNAL_SET stores `signal` (release), ACLSHMEM_SIGNAL_ADD adds it
/// atomically. Another `sig_op`: logged now, nothing queued.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_signal_op_on_stream(
    sig_addr: *mut i32,
    signal: i32,
    sig_op: c_int,
    pe: c_int,
    stream: aclrtStream,
) {
    let addr = sig_addr as usize;
    guard("aclshmemx_signal_op_on_stream", || {
        let op = SignalOp::from_c(sig_op)?;
        queue(
            "aclshmemx_signal_op_on_stream",
            stream,
            NullStream::Internal,
            Frame::Signal,
            move |inst| p2p::signal_in(inst, addr as *mut i32, signal, op, pe),
        )
    })
}

/// Queues on `stream` (NULL: internal stream) a wait until the local 32-bit word `*sig_addr`
/// satisfies `<cmp> cmp_val`; the host returns at once (so it can issue the put that satisfies it),
/// later work on the stream runs after the wait. `cmp` outside 0..5: logged now, nothing queued. A
/// `sig_addr` neither symmetric nor in local device memory fails the queued wait (logged; the
/// stream's synchronize reports it) instead of waiting forever.
///
/// # Safety
/// Pointer arguments must be NULL or valid as this documentation describes (symmetric
/// addresses: inside this PE's heap; local buffers: live for the bytes the call names).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_signal_wait_until_on_stream(
    sig_addr: *mut i32,
    cmp: c_int,
    cmp_val: i32,
    stream: aclrtStream,
) {
    let addr = sig_addr as usize;
    guard("aclshmemx_signal_wait_until_on_stream", || {
        let cmp = Cmp::from_c(cmp)?;
        queue(
            "aclshmemx_signal_wait_until_on_stream",
            stream,
            NullStream::Internal,
            Frame::SignalWait,
            move |inst| {
                p2p::check_signal_word(inst, addr as *const i32, "sig_addr")?;
                // SAFETY: the program keeps its signal word alive until the stream has run this wait.
                unsafe { p2p::wait_until_in(inst, addr as *mut i32, "sig_addr", cmp, cmp_val) }
            },
        )
    })
}

/// Queues a barrier over `team` on `stream` (NULL: the ACL default stream, as the original);
/// returns at once. ACLSHMEM_TEAM_INVALID: a no-op in stream order.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_barrier_on_stream(team: aclshmem_team_t, stream: aclrtStream) {
    guard("aclshmemx_barrier_on_stream", || {
        queue(
            "aclshmemx_barrier_on_stream",
            stream,
            NullStream::Default,
            Frame::Barrier,
            move |inst| aclshmem_core::collectives::team_barrier(inst, team),
        )
    })
}

/// Queues a barrier over all PEs on `stream` (NULL: the ACL default stream); returns at once.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_barrier_all_on_stream(stream: aclrtStream) {
    guard("aclshmemx_barrier_all_on_stream", || {
        queue(
            "aclshmemx_barrier_all_on_stream",
            stream,
            NullStream::Default,
            Frame::Barrier,
            aclshmem_core::collectives::barrier_all,
        )
    })
}

/// Queues on `stream` (NULL: the ACL default stream) the completion of this PE's outstanding
/// operations towards the members of `handle.team_id`, then a barrier of the team, as the
/// original's handle-wait kernel ends with one: once it has run on every member, every member's
/// operations into this PE have landed too (upstream demos read what their peers put right after
/// it). Collective over the team; ACLSHMEM_TEAM_INVALID: only the completion.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_handle_wait(handle: Handle, stream: aclrtStream) {
    let team = handle.team_id;
    guard("aclshmemx_handle_wait", || {
        queue(
            "aclshmemx_handle_wait",
            stream,
            NullStream::Default,
            Frame::HandleWait,
            move |inst| {
                let members = match team {
                    super::types::ACLSHMEM_TEAM_INVALID => None,
                    t => Some(inst.team(t)?),
                };
                rma::quiet_in(inst)?;
                match members {
                    Some(t) => sync::barrier(inst, &t),
                    None => Ok(()),
                }
            },
        )
    })
}

/// The FFTS/C2C control base address for device MIX kernels: there is none on the CPU, so 0 (the
/// value the original returns before init and on Ascend950).
#[unsafe(no_mangle)]
pub extern "C" fn util_get_ffts_config() -> u64 {
    0
}

/// Profiling readout. On the PE named by SHMEM_CYCLE_PROF_PE at init, `*out_profs` (when non-NULL)
/// receives a library-owned record: block 0 holds this PE's stream-ordered operations, frame =
/// kind (0 put, 1 get, 2 quiet, 3 signal, 4 signal wait, 5 barrier, 6 handle wait), `ccount` = how
/// many ran, `cycles` = nanoseconds spent; `verbose` prints `BlockID FrameID Cycles Count
/// AvgTime(us)`. Other PEs: nothing is written.
///
/// # Safety
/// `out_profs` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_get_prof(out_profs: *mut *mut ProfPe, verbose: bool) {
    guard("aclshmemx_get_prof", || {
        if !verbose && out_profs.is_null() {
            return Ok(());
        }
        if let Some(rec) = stream::get_prof(stream::prof_of(runtime::effective_slot().id()), verbose)
            && !out_profs.is_null()
        {
            // SAFETY: documented requirement of this function.
            *unsafe { arg_mut(out_profs, "out_profs") }? = rec;
        }
        Ok(())
    })
}

/// Deprecated: `aclshmemx_get_prof(NULL, true)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_show_prof() {
    guard("aclshmemx_show_prof", || {
        stream::get_prof(stream::prof_of(runtime::effective_slot().id()), true);
        Ok(())
    })
}
