//! Opaque handles. C sees `void *` values; each is a key into a registry, never an address, so a
//! destroyed or foreign handle is detected (`ACL_ERROR_RT_INVALID_HANDLE`) instead of dereferenced.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Handle values are shared by all registries (a stream handle is never a valid event handle).
/// They start high and step by 16 so they look like aligned pointers and are never NULL.
static NEXT: AtomicUsize = AtomicUsize::new(0x5c1_0000);

/// A fresh, never-reused handle value.
pub fn next_handle() -> usize {
    NEXT.fetch_add(16, Ordering::Relaxed)
}

/// Handle → object table.
pub struct Registry<T> {
    map: Mutex<Option<HashMap<usize, Arc<T>>>>,
}

impl<T> Registry<T> {
    pub const fn new() -> Self {
        Self {
            map: Mutex::new(None),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<HashMap<usize, Arc<T>>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn insert(&self, handle: usize, value: Arc<T>) {
        self.lock().get_or_insert_with(HashMap::new).insert(handle, value);
    }

    pub fn get(&self, handle: usize) -> Option<Arc<T>> {
        self.lock().as_ref()?.get(&handle).cloned()
    }

    pub fn remove(&self, handle: usize) -> Option<Arc<T>> {
        self.lock().as_mut()?.remove(&handle)
    }

    /// Removes every entry matching `pred` and returns them.
    pub fn remove_where(&self, mut pred: impl FnMut(&T) -> bool) -> Vec<Arc<T>> {
        let mut guard = self.lock();
        let Some(map) = guard.as_mut() else {
            return Vec::new();
        };
        let keys: Vec<usize> = map.iter().filter(|(_, v)| pred(v)).map(|(k, _)| *k).collect();
        keys.into_iter().filter_map(|k| map.remove(&k)).collect()
    }

    /// Every live entry.
    pub fn values(&self) -> Vec<Arc<T>> {
        self.lock()
            .as_ref()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}
