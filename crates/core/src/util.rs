//! Small helpers shared by the core's modules.

use std::sync::{Mutex, MutexGuard};

/// Locking that survives a poisoned mutex: a panic caught at the C boundary must not make every
/// later call fail, and the data behind the core's mutexes stays consistent between statements.
pub(crate) trait Locked<T> {
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T> Locked<T> for Mutex<T> {
    #[inline]
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }
}

static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Ends this process with `status` because its job is ending (a global exit, a lost peer):
/// exit handlers that would talk to the other PEs (the implicit finalize of `start_pes`) see
/// [`ending`] and do nothing.
pub fn exit_process(status: i32) -> ! {
    EXIT_STATUS.store(status, std::sync::atomic::Ordering::SeqCst);
    ENDING.store(true, std::sync::atomic::Ordering::SeqCst);
    let hooks: Vec<fn(i32)> = BEFORE_EXIT.locked().clone();
    for h in hooks {
        h(status);
    }
    std::process::exit(status)
}

/// What [`exit_process`] runs before `exit`: a network engine stops every thread of this process
/// from driving it, since `exit` runs the engine library's destructors while such a thread may
/// be inside it (UCX then aborted with "failed to modify event handler").
static BEFORE_EXIT: Mutex<Vec<fn(i32)>> = Mutex::new(Vec::new());

/// Registers `hook` with [`exit_process`] (once); it gets the exit status.
pub fn before_exit(hook: fn(i32)) {
    let mut hooks = BEFORE_EXIT.locked();
    if !hooks.iter().any(|&h| std::ptr::fn_addr_eq(h, hook)) {
        hooks.push(hook);
    }
}

static EXIT_STATUS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(1);

/// The status [`exit_process`] was called with (1 before).
pub fn exit_status() -> i32 {
    EXIT_STATUS.load(std::sync::atomic::Ordering::SeqCst)
}

/// Whether [`exit_process`] was called: the job is ending, no collective may run.
pub fn ending() -> bool {
    ENDING.load(std::sync::atomic::Ordering::SeqCst)
}
