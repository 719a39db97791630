//! Instances and the init/finalize state machine.
//!
//! Every instance id has a [`Slot`] that lives for the whole process (its status and the
//! `aclshmem_instance_ctx` handed to C stay valid). The data path reads the current slot and its
//! live [`Instance`] with two atomic loads: no lock, no lookup, no reference count.
//!
//! Lifetime: a live instance is an `Arc<Instance>` whose pointer the slot holds. [`current`] lends
//! it as a [`Current`], which is neither `Send` nor `'static`, so a borrow cannot outlive the call
//! that made it or move to another thread; whatever must outlive the call (a stream-queued
//! operation) takes its own `Arc` with [`Current::share`] when it is queued. Finalize removes the
//! pointer from the slot first, then waits (bounded) until no queued operation holds the instance,
//! and only then releases it. A call on another thread *while* finalize runs is a program error
//! (spec 11.2), as in every OpenSHMEM, but it does not crash: finalize also waits (bounded) for
//! every thread inside a library call ([`calls`]), and a call that starts after the pointer was
//! removed fails with `NotInited`.
//!
//! `unsafe`: the current instance is read through raw pointers published with Release stores.

pub(crate) mod buffers;
mod calls;
pub mod exception;
mod init;
pub mod qp;

pub use crate::collectives::WorldAgreement;
pub use crate::instance::{Agreement, AllocRequest, Engine, Instance, LibraryCall, StaticRegion};
pub use crate::sync::BootstrapAgreement;
pub use crate::util::{at_normal_exit, ending, exit_process};
pub use init::{
    finalize, finalize_api, finalizing_at_exit, global_exit, init, init_with_buffers, openshmem_hold,
    openshmem_release,
};

use crate::util::Locked;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use aclshmem_abi::{ACLSHMEM_STATUS_NOT_INITIALIZED, InstanceCtx};

/// Per-instance-id state that outlives init/finalize cycles.
pub struct Slot {
    id: u64,
    status: AtomicI32,
    live: AtomicPtr<Instance>,
    ctx: UnsafeCell<InstanceCtx>,
}

// SAFETY: `ctx` is written only at construction; C callers receive a pointer to it and may read it.
unsafe impl Sync for Slot {}

impl Slot {
    const fn new(id: u64) -> Slot {
        Slot {
            id,
            status: AtomicI32::new(ACLSHMEM_STATUS_NOT_INITIALIZED),
            live: AtomicPtr::new(std::ptr::null_mut()),
            ctx: UnsafeCell::new(InstanceCtx {
                id,
                instance: std::ptr::null_mut(),
            }),
        }
    }

    /// The instance id of this slot.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The `aclshmem_instance_ctx` of this id, as handed to C.
    pub fn ctx_ptr(&self) -> *mut InstanceCtx {
        self.ctx.get()
    }
}

static SLOT0: Slot = Slot::new(0);
static CURRENT: AtomicPtr<Slot> = AtomicPtr::new(&SLOT0 as *const Slot as *mut Slot);

/// Serialises init, finalize and instance switching (spec 11.2).
pub(crate) static LIFECYCLE: Mutex<()> = Mutex::new(());

/// my_pe / n_pes of the last initialised instance: -1 before the first init, kept after finalize
/// as in the original.
static LAST_PE: AtomicI32 = AtomicI32::new(-1);
static LAST_N_PES: AtomicI32 = AtomicI32::new(-1);

/// The slot of the current instance.
#[inline]
pub fn current_slot() -> &'static Slot {
    // SAFETY: CURRENT always points at SLOT0 or at a leaked (never freed) slot.
    unsafe { &*CURRENT.load(Ordering::Acquire) }
}

/// Slots of the instances other than 0, by creation. A slot is never freed (its context pointer was
/// handed to C), only forgotten when an init that created it fails.
static SLOTS: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

/// The slot of `id`, if it exists.
pub fn slot(id: u64) -> Option<&'static Slot> {
    if id == 0 {
        return Some(&SLOT0);
    }
    SLOTS.locked().iter().copied().find(|s| s.id == id)
}

/// Creates the slot of a new instance id.
fn create_slot(id: u64) -> &'static Slot {
    let s: &'static Slot = Box::leak(Box::new(Slot::new(id)));
    SLOTS.locked().push(s);
    s
}

/// Forgets the slot of `id` (an init that created it failed).
fn forget_slot(id: u64) {
    SLOTS.locked().retain(|s| s.id != id);
}

fn make_current(s: &'static Slot) {
    CURRENT.store(s as *const Slot as *mut Slot, Ordering::Release);
}

/// The current instance, lent for the duration of one call on one thread (see the module docs).
pub struct Current {
    inst: NonNull<Instance>,
    entry: Option<&'static calls::Entry>,
    /// Not `Send`/`Sync`: the loan stays on the calling thread.
    _local: PhantomData<*const Instance>,
}

impl std::ops::Deref for Current {
    type Target = Instance;
    #[inline]
    fn deref(&self) -> &Instance {
        // SAFETY: the pointer came from the slot, where init published an `Arc::into_raw`; finalize
        // releases the instance only after removing it from the slot and draining every holder of
        // a shared `Arc`, and a `Current` lives within one library call of the thread that made it.
        unsafe { self.inst.as_ref() }
    }
}

impl Drop for Current {
    #[inline]
    fn drop(&mut self) {
        calls::leave(self.entry);
    }
}

impl Current {
    /// A counted reference for work that outlives this call (stream-queued operations).
    pub fn share(&self) -> Arc<Instance> {
        let p = self.inst.as_ptr() as *const Instance;
        // SAFETY: `p` is the `Arc::into_raw` pointer the slot owns one count of; adding a count and
        // rebuilding an `Arc` from it leaves the slot's count untouched.
        unsafe {
            Arc::increment_strong_count(p);
            Arc::from_raw(p)
        }
    }
}

/// The current instance, or `NotInited`.
#[inline]
pub fn current() -> Result<Current> {
    let (entry, slot) = calls::enter();
    let p = slot.live.load(Ordering::Acquire);
    match NonNull::new(p) {
        Some(inst) => Ok(Current {
            inst,
            entry,
            _local: PhantomData,
        }),
        None => not_inited(entry),
    }
}

#[cold]
#[inline(never)]
fn not_inited(entry: Option<&'static calls::Entry>) -> Result<Current> {
    calls::leave(entry);
    Err(Error::NotInited)
}

/// Logs a failed call with the PE (of the current instance, if any) and the call's name: what the
/// C boundary does with an error.
pub fn report(call: &str, e: &Error) {
    match current_pe() {
        Some(pe) => log::error!("[PE {pe}] {call}: {e}"),
        None => log::error!("{call}: {e}"),
    }
}

/// The current instance if initialised (for the log prefix).
pub fn current_pe() -> Option<usize> {
    current().ok().map(|i| i.my_pe())
}

/// This PE's number in the current instance, else the last initialised one's (-1 before the
/// first init), as `aclshmem_my_pe` reports it.
pub fn my_pe_or_last() -> i32 {
    current().map_or_else(|_| last_pe(), |i| i.my_pe() as i32)
}

/// The number of PEs of the current instance, else of the last initialised one (-1 before).
pub fn n_pes_or_last() -> i32 {
    current().map_or_else(|_| last_n_pes(), |i| i.n_pes() as i32)
}

/// Status of the current instance (`aclshmemx_init_status`).
pub fn status() -> i32 {
    effective_slot().status.load(Ordering::Acquire)
}

pub fn last_pe() -> i32 {
    LAST_PE.load(Ordering::Relaxed)
}

pub fn last_n_pes() -> i32 {
    LAST_N_PES.load(Ordering::Relaxed)
}

/// Makes `id` the current instance.
pub fn set_current(id: u64) -> Result<()> {
    let _g = LIFECYCLE.locked();
    make_current(switchable(id)?);
    Ok(())
}

/// The slot of instance `id` for a switch: instance 0 always (it exists from load time, as the
/// original's), another one only while it is initialised (a finalized instance is gone: the
/// original's context is destroyed, so its id is unknown again).
fn switchable(id: u64) -> Result<&'static Slot> {
    match slot(id) {
        Some(s) if id == 0 || !s.live.load(Ordering::Acquire).is_null() => Ok(s),
        Some(_) => Err(Error::Inner(format!("instance {id} was finalized"))),
        None => Err(Error::Inner(format!("instance {id} does not exist"))),
    }
}

/// Makes instance `id` current for the calling thread only (a kernel block: the device-side
/// `aclshmemx_instance_ctx_set`), until [`clear_thread_current`]; other threads keep the
/// process-wide current instance.
pub fn set_thread_current(id: u64) -> Result<()> {
    let s = switchable(id)?;
    calls::set_override(Some(s));
    Ok(())
}

/// Ends [`set_thread_current`] on the calling thread (the end of each kernel block).
pub fn clear_thread_current() {
    calls::set_override(None);
}

/// The slot the calling thread's calls use: its own ([`set_thread_current`]) or the process-wide
/// current one.
pub fn effective_slot() -> &'static Slot {
    calls::override_slot().unwrap_or_else(current_slot)
}
