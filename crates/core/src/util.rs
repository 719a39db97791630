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
