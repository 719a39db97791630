//! Instances and the init/finalize state machine.
//!
//! Every instance id has a [`Slot`] that lives for the whole process (its status and the
//! `aclshmem_instance_ctx` handed to C stay valid). The data path reads the current slot and its
//! live [`Instance`] with two atomic loads: no lock, no lookup.
//!
//! `unsafe`: the current instance is read through raw pointers published with Release stores.

mod init;
pub mod instance;

pub use init::{finalize, global_exit, init};
pub use instance::{AllocRequest, Engine, Instance};

use std::cell::UnsafeCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use crate::error::{Error, Result};
use aclshmem_abi::{ACLSHMEM_STATUS_NOT_INITIALIZED, InstanceCtx};

/// Per-instance-id state that outlives init/finalize cycles.
pub struct Slot {
    pub id: u64,
    pub status: AtomicI32,
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
    SLOTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .copied()
        .find(|s| s.id == id)
}

/// Creates the slot of a new instance id.
fn create_slot(id: u64) -> &'static Slot {
    let s: &'static Slot = Box::leak(Box::new(Slot::new(id)));
    SLOTS.lock().unwrap_or_else(|e| e.into_inner()).push(s);
    s
}

/// Forgets the slot of `id` (an init that created it failed).
fn forget_slot(id: u64) {
    SLOTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|s| s.id != id);
}

fn make_current(s: &'static Slot) {
    CURRENT.store(s as *const Slot as *mut Slot, Ordering::Release);
}

/// The current instance, or `NotInited`.
#[inline]
pub fn current() -> Result<&'static Instance> {
    let p = current_slot().live.load(Ordering::Acquire);
    if p.is_null() {
        return Err(Error::NotInited);
    }
    // SAFETY: a live pointer comes from Box::into_raw in init and is freed by finalize only after it
    // was swapped out of the slot; using the library from another thread during finalize is not
    // supported (spec 11.2).
    Ok(unsafe { &*p })
}

/// The current instance if initialised (for the log prefix).
pub fn current_pe() -> Option<usize> {
    current().ok().map(|i| i.my_pe)
}

pub fn last_pe() -> i32 {
    LAST_PE.load(Ordering::Relaxed)
}

pub fn last_n_pes() -> i32 {
    LAST_N_PES.load(Ordering::Relaxed)
}

/// Makes `id` the current instance.
pub fn set_current(id: u64) -> Result<()> {
    let _g = LIFECYCLE.lock().unwrap_or_else(|e| e.into_inner());
    let s = slot(id).ok_or_else(|| Error::Inner(format!("instance {id} does not exist")))?;
    make_current(s);
    Ok(())
}
