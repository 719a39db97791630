//! ACL runtime entry points the library uses when the program links an ACL runtime (CANN's or this
//! repository's CPU libascendcl), resolved at run time in the process (`dlsym(RTLD_DEFAULT)`): the
//! library never links one itself.
//!
//! `unsafe`: dlsym, and calls through the resolved function pointers.

use std::ffi::{CString, c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The address of the function `name` in the process, if some loaded object exports it.
pub(crate) fn resolve(name: &str) -> Option<*mut c_void> {
    let c = CString::new(name).ok()?;
    // SAFETY: dlsym in the global namespace with a NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Entry points of the process's ACL runtime, resolved on first use and kept once found. A miss is
/// not kept for ever: a program may load its runtime after init (`dlopen(RTLD_GLOBAL)`, as the
/// Python package's `shmem.streams` does), so a miss is retried once the process has loaded more
/// objects (glibc's count of objects loaded, one `dl_iterate_phdr` step: no symbol lookup per
/// call while nothing new was loaded).
pub(crate) struct Lazy<T> {
    found: OnceLock<T>,
    /// The loaded-objects count at the last miss (`u64::MAX`: never looked).
    missed_at: AtomicU64,
}

impl<T> Lazy<T> {
    pub(crate) const fn new() -> Self {
        Self {
            found: OnceLock::new(),
            missed_at: AtomicU64::new(u64::MAX),
        }
    }

    /// The entry points, resolving them with `look` unless found before or nothing was loaded
    /// since the last miss.
    pub(crate) fn get(&self, look: impl FnOnce() -> Option<T>) -> Option<&T> {
        if let Some(v) = self.found.get() {
            return Some(v);
        }
        let loaded = objects_loaded();
        if loaded == self.missed_at.load(Ordering::Acquire) {
            return None;
        }
        match look() {
            Some(v) => Some(self.found.get_or_init(|| v)),
            None => {
                self.missed_at.store(loaded, Ordering::Release);
                None
            }
        }
    }
}

/// How many objects the process has loaded so far (glibc's `dlpi_adds`; it only grows).
fn objects_loaded() -> u64 {
    unsafe extern "C" fn first(info: *mut libc::dl_phdr_info, _size: usize, out: *mut c_void) -> c_int {
        // SAFETY: the loader passes a valid record; `out` is the u64 below.
        unsafe { *out.cast::<u64>() = (*info).dlpi_adds };
        1
    }
    let mut n: u64 = 0;
    // SAFETY: the callback only reads the first record and stops the walk.
    unsafe { libc::dl_iterate_phdr(Some(first), (&raw mut n).cast()) };
    n
}

type RangeIsLive = unsafe extern "C" fn(*const c_void, usize) -> c_int;

/// Whether `[ptr, ptr + len)` lies inside a live device allocation (`aclrtMalloc`) of the ACL
/// runtime, as far as the runtime can tell: the CPU libascendcl answers through its extension
/// `aclshimDeviceRangeIsLive`; without it (no runtime, or one without the extension) the answer is no.
pub(crate) fn device_range_is_live(ptr: *const u8, len: usize) -> bool {
    static F: Lazy<RangeIsLive> = Lazy::new();
    let f = F.get(|| {
        // SAFETY: the shim exports this symbol with exactly this C signature (acl/acl_shim.h).
        resolve("aclshimDeviceRangeIsLive")
            .map(|p| unsafe { std::mem::transmute::<*mut c_void, RangeIsLive>(p) })
    });
    // SAFETY: the function only compares the range with its allocation table.
    f.is_some_and(|f| unsafe { f(ptr.cast(), len) } == 1)
}

type PhysicalBacking = unsafe extern "C" fn(*const c_void, usize, *mut c_void, *mut c_int, *mut u64) -> c_int;

/// What backs `[ptr, ptr + len)` of the program's device memory: a descriptor of the physical
/// allocation (an `aclrtMapMem` mapping of it holds the whole range; of `handle` when given) and
/// the range's offset in it. The CPU libascendcl answers through its extension
/// `aclshimPhysicalBacking`; `None` when the process's ACL runtime has no such extension, `Some(Err)`
/// with the runtime's error code when the range is not such memory.
pub(crate) fn physical_backing(
    ptr: *const u8,
    len: usize,
    handle: Option<usize>,
) -> Option<Result<(std::os::fd::OwnedFd, u64), c_int>> {
    static F: Lazy<PhysicalBacking> = Lazy::new();
    let f = F.get(|| {
        // SAFETY: the shim exports this symbol with exactly this C signature (acl/acl_shim.h).
        resolve("aclshimPhysicalBacking")
            .map(|p| unsafe { std::mem::transmute::<*mut c_void, PhysicalBacking>(p) })
    });
    let f = *f?;
    let mut fd: c_int = -1;
    let mut off = 0u64;
    let h = handle.map_or(std::ptr::null_mut(), std::ptr::with_exposed_provenance_mut);
    // SAFETY: valid out-pointers; the function only reads its allocation tables.
    let rc = unsafe { f(ptr.cast(), len, h, &mut fd, &mut off) };
    if rc != 0 || fd < 0 {
        return Some(Err(rc));
    }
    // SAFETY: on success the runtime hands over a new descriptor that nobody else owns.
    Some(Ok((unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) }, off)))
}

type SetExceptionCallback = unsafe extern "C" fn(Option<unsafe extern "C" fn(*mut c_void)>) -> c_int;

/// `aclrtSetExceptionInfoCallback` of the process's ACL runtime, if it has one.
pub(crate) fn set_exception_callback(cb: Option<unsafe extern "C" fn(*mut c_void)>) -> Option<c_int> {
    static F: Lazy<SetExceptionCallback> = Lazy::new();
    let f = F.get(|| {
        // SAFETY: CANN's (and the CPU libascendcl's) aclrtSetExceptionInfoCallback has exactly this
        // C signature (acl/acl_rt.h).
        resolve("aclrtSetExceptionInfoCallback")
            .map(|p| unsafe { std::mem::transmute::<*mut c_void, SetExceptionCallback>(p) })
    });
    // SAFETY: a valid (or NULL) callback; the runtime stores it.
    f.map(|f| unsafe { f(cb) })
}

type ExceptionField = unsafe extern "C" fn(*const c_void) -> u32;

/// The fields of a runtime exception info (`aclrtGet{Task,Stream,Thread,Device,ErrorCode}IdFromExceptionInfo`,
/// in that order); `u32::MAX` for a field the runtime cannot read.
pub(crate) fn exception_fields(info: *const c_void) -> [u32; 5] {
    const NAMES: [&str; 5] = [
        "aclrtGetTaskIdFromExceptionInfo",
        "aclrtGetStreamIdFromExceptionInfo",
        "aclrtGetThreadIdFromExceptionInfo",
        "aclrtGetDeviceIdFromExceptionInfo",
        "aclrtGetErrorCodeFromExceptionInfo",
    ];
    static F: OnceLock<[Option<ExceptionField>; 5]> = OnceLock::new();
    let fs = F.get_or_init(|| {
        // SAFETY: these readers have exactly this C signature (acl/acl_rt.h).
        NAMES.map(|n| resolve(n).map(|p| unsafe { std::mem::transmute::<*mut c_void, ExceptionField>(p) }))
    });
    // SAFETY: `info` is the pointer the runtime passed to the exception callback, read during it.
    fs.map(|f| f.map_or(u32::MAX, |f| unsafe { f(info) }))
}
