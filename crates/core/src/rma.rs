//! One-sided data movement: put, get, strided and scalar forms, quiet and fence.
//!
//! Checks on the hot path: the current instance (two atomic loads), the PE range, the remote range
//! against the heap bounds (one subtraction and compare), then either the fast path — the peer's
//! heap is mapped for direct access: one table load and the copy — or the peer's transport
//! ([`crate::transport`]). No lock, no allocation, no hashing. Blocking calls complete before they
//! return; the `_nbi` forms go to the transport's non-blocking operations and complete at
//! [`quiet`] (same-node copies complete at once).
//!
//! The functions that take the caller's buffers are `unsafe fn`: the library can check a
//! symmetric address against its heaps, but not that a local buffer is valid.
//!
//! `unsafe`: copies between the caller's buffers and the checked symmetric ranges.

use crate::error::{Error, Result};
use crate::runtime::{self, Instance};
use crate::transport::{Remote, Strides, shm};

/// Checks a local buffer of `len` bytes at `addr`: not NULL, not wrapping around.
#[inline]
fn local<T>(addr: *const T, len: usize, what: &str) -> Result<()> {
    if addr.is_null() {
        return Err(Error::InvalidParam(format!("{what} is NULL")));
    }
    if (addr as usize).checked_add(len).is_none() {
        return Err(Error::InvalidValue(format!(
            "{what} {addr:p} + {len} bytes wraps around"
        )));
    }
    Ok(())
}

/// Bytes of `n` elements of `elem` bytes, or an error when that overflows.
#[inline]
pub fn bytes(n: usize, elem: usize) -> Result<usize> {
    n.checked_mul(elem)
        .ok_or_else(|| Error::InvalidValue(format!("{n} elements of {elem} bytes overflow")))
}

/// Drives the current instance's transports once: for a wait loop of a surface (the OpenSHMEM
/// locks) that polls with AMOs, so operations of other PEs on this PE's memory land meanwhile
/// (UCX without its progress thread). Before init, nothing.
pub fn progress() {
    if let Ok(inst) = runtime::current() {
        inst.routes().progress();
    }
}

/// When a transfer is complete as far as its caller is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    /// Issued: complete at the next quiet (`_nbi`).
    Issued,
    /// The local buffer is free again at return (a get: it holds the data); a put's data reaches
    /// the target by the next quiet (OpenSHMEM's blocking put).
    Local,
    /// A put's data is in the target's memory at return (the aclshmem API's blocking put: its
    /// kernel waits until the transfer is complete, spec 7): a put through a transport whose puts
    /// complete at the target later (UCX) is followed by its quiet. Direct copies are complete
    /// anyway.
    Target,
}

/// Copies `len` bytes from local `src` to symmetric `dest` on PE `pe` (current instance).
/// Blocking: the data is in PE `pe`'s memory at return.
///
/// # Safety
/// A non-NULL `src` must be readable for `len` bytes.
#[inline(always)]
pub unsafe fn put(dest: *mut u8, src: *const u8, len: usize, pe: i32) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { put_in(&*runtime::current()?, dest, src, len, pe, false) }
}

/// OpenSHMEM's blocking put: `src` may be reused at return; the data is in PE `pe`'s memory at
/// the latest after [`quiet`] (at return when the peer is reached directly).
///
/// # Safety
/// As for [`put`].
#[inline(always)]
pub unsafe fn put_local(dest: *mut u8, src: *const u8, len: usize, pe: i32) -> Result<()> {
    let inst = &*runtime::current()?;
    // SAFETY: forwarded; a put only reads the local buffer.
    unsafe {
        transfer::<CALLER_LOCAL>(
            inst,
            Dir::Put,
            dest as usize,
            src.cast_mut(),
            len,
            pe,
            Done::Local,
        )
    }
}

/// Non-blocking [`put`]: complete (and `src` reusable) at the latest after [`quiet`].
///
/// # Safety
/// As for [`put`], and `src` stays readable and unchanged until the next quiet.
#[inline(always)]
pub unsafe fn put_nbi(dest: *mut u8, src: *const u8, len: usize, pe: i32) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { put_in(&*runtime::current()?, dest, src, len, pe, true) }
}

/// [`put`] / [`put_nbi`] on instance `inst`.
///
/// # Safety
/// As for [`put_nbi`].
#[inline(always)]
pub unsafe fn put_in(
    inst: &Instance,
    dest: *mut u8,
    src: *const u8,
    len: usize,
    pe: i32,
    nbi: bool,
) -> Result<()> {
    let done = if nbi { Done::Issued } else { Done::Target };
    // SAFETY: forwarded; a put only reads the local buffer.
    unsafe { transfer::<CALLER_LOCAL>(inst, Dir::Put, dest as usize, src.cast_mut(), len, pe, done) }
}

/// Which way a transfer moves the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    /// local → symmetric
    Put,
    /// symmetric → local
    Get,
}

/// `OWN_LOCAL` of [`transfer`]: the local side is the caller's buffer, checked (NULL,
/// wrap-around, a UB offset inside a kernel block).
const CALLER_LOCAL: bool = false;
/// `OWN_LOCAL` of [`transfer`]: the local side is a value of the library's own on the stack (`p`,
/// `g`): nothing to check.
const OWN_LOCAL: bool = true;

/// One contiguous transfer of `len` bytes between local `local` and symmetric `sym` on PE `pe`:
/// inline when the peer's heap is mapped for direct access, else through its transport.
///
/// # Safety
/// `local` must be readable (put) or writable (get) for `len` bytes, and for `nbi` stay so until
/// the next quiet.
#[inline(always)]
unsafe fn transfer<const OWN_LOCAL: bool>(
    inst: &Instance,
    dir: Dir,
    sym: usize,
    local: *mut u8,
    len: usize,
    pe: i32,
    done: Done,
) -> Result<()> {
    // The common case in a handful of instructions: the device heap, a peer mapped for direct
    // access, an ordinary local buffer. Anything else (other heaps, transports, UB offsets, every
    // error) takes the full path, out of line, so the fast path needs no stack frame of its own.
    if let Some(p) = inst.direct_fast(sym, len, pe)
        && (OWN_LOCAL || plain_local(local, len))
    {
        // SAFETY: `p..p+len` lies in PE pe's mapped heap (`direct_fast`), `local..local+len` is the
        // caller's buffer (this function's contract); overlap is allowed.
        unsafe {
            match dir {
                Dir::Put => shm::copy(local, p, len),
                Dir::Get => shm::copy(p, local, len),
            }
        }
        return Ok(());
    }
    // SAFETY: forwarded.
    unsafe { transfer_full::<OWN_LOCAL>(inst, dir, sym, local, len, pe, done) }
}

/// A local buffer the fast path can use as it is: not a kernel block's UB offset (nor NULL, which
/// is below every UB offset), not wrapping around.
#[inline(always)]
fn plain_local(local: *mut u8, len: usize) -> bool {
    (local as usize) >= crate::block::UB_SIZE && (local as usize).checked_add(len).is_some()
}

/// [`transfer`] with every check and every route.
///
/// # Safety
/// As for [`transfer`].
#[inline(never)]
unsafe fn transfer_full<const OWN_LOCAL: bool>(
    inst: &Instance,
    dir: Dir,
    sym: usize,
    local: *mut u8,
    len: usize,
    pe: i32,
    done: Done,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let (sym_name, local_name) = match dir {
        Dir::Put => ("dest", "source"),
        Dir::Get => ("source", "dest"),
    };
    // the fast path never builds a `Remote` (keeps the pieces in registers)
    let pe = inst.check_pe(pe)?;
    let Some((heap, off)) = inst.locate(sym, len) else {
        return Err(Error::InvalidParam(inst.not_symmetric(sym_name, sym, len)));
    };
    let (local, in_ub) = if OWN_LOCAL {
        (local, false)
    } else {
        // inside a kernel block a small local address is an offset into the block's UB
        let translated = crate::block::local_operand(local, len, local_name)?;
        self::local(translated, len, local_name)?;
        (translated, translated != local)
    };
    if let Some(p) = heap.direct_addr(off, pe) {
        // SAFETY: `p..p+len` lies in PE pe's mapped heap (checked by `remote`), `local..local+len`
        // is the caller's buffer (this function's contract); overlap is allowed.
        unsafe {
            match dir {
                Dir::Put => shm::copy(local, p, len),
                Dir::Get => shm::copy(p, local, len),
            }
        }
        return Ok(());
    }
    let r = Remote { heap, off, pe };
    let t = inst.routes().to(pe)?;
    // A kernel block's UB is scratch the block reads or reuses as soon as its pipes are drained
    // (`PipeBarrier`, `WaitFlag`: fences in this emulation, spec device-api 2.4). Direct copies
    // are complete at return anyway; over a transport, a transfer to or from UB completes before
    // the call returns too, so the block never reads a UB destination before the data lands nor
    // overwrites a UB source still being sent.
    let done = if in_ub && done == Done::Issued {
        Done::Local
    } else {
        done
    };
    // SAFETY: as above.
    unsafe {
        match (dir, done) {
            (Dir::Put, Done::Local) => t.put(r, local, len),
            (Dir::Put, Done::Target) => {
                t.put(r, local, len)?;
                delivered(t)
            }
            (Dir::Put, Done::Issued) => t.put_nbi(r, local, len),
            (Dir::Get, Done::Local | Done::Target) => t.get(r, local, len),
            (Dir::Get, Done::Issued) => t.get_nbi(r, local, len),
        }
    }
}

/// After a [`Done::Target`] put through transport `t`: its quiet, unless `t`'s puts are in the
/// target's memory when they return.
#[inline]
fn delivered(t: &dyn crate::transport::Transport) -> Result<()> {
    if t.completes_at_once() { Ok(()) } else { t.quiet() }
}

/// Copies `len` bytes from symmetric `src` on PE `pe` to local `dest` (current instance).
/// Blocking: `dest` holds the data at return.
///
/// # Safety
/// A non-NULL `dest` must be writable for `len` bytes.
#[inline(always)]
pub unsafe fn get(dest: *mut u8, src: *const u8, len: usize, pe: i32) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { get_in(&*runtime::current()?, dest, src, len, pe, false) }
}

/// Non-blocking [`get`]: `dest` holds the data at the latest after [`quiet`].
///
/// # Safety
/// As for [`get`], and `dest` stays writable until the next quiet.
#[inline(always)]
pub unsafe fn get_nbi(dest: *mut u8, src: *const u8, len: usize, pe: i32) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { get_in(&*runtime::current()?, dest, src, len, pe, true) }
}

/// [`get`] / [`get_nbi`] on instance `inst`.
///
/// # Safety
/// As for [`get_nbi`].
#[inline(always)]
pub unsafe fn get_in(
    inst: &Instance,
    dest: *mut u8,
    src: *const u8,
    len: usize,
    pe: i32,
    nbi: bool,
) -> Result<()> {
    let done = if nbi { Done::Issued } else { Done::Local };
    // SAFETY: forwarded.
    unsafe { transfer::<CALLER_LOCAL>(inst, Dir::Get, src as usize, dest, len, pe, done) }
}

/// Lowest address and length of the bytes touched by `n` elements of `elem` bytes, `stride`
/// elements apart, starting at `addr` (the stride may be negative).
pub fn strided_span(addr: usize, elem: usize, stride: isize, n: usize) -> Result<(usize, usize)> {
    let overflow = || {
        Error::InvalidValue(format!(
            "{n} elements with stride {stride} overflow the address space"
        ))
    };
    let step = stride.unsigned_abs().checked_mul(elem).ok_or_else(overflow)?;
    let extent = step.checked_mul(n - 1).ok_or_else(overflow)?;
    let lo = if stride < 0 {
        addr.checked_sub(extent).ok_or_else(overflow)?
    } else {
        addr
    };
    let len = extent.checked_add(elem).ok_or_else(overflow)?;
    lo.checked_add(len).ok_or_else(overflow)?;
    Ok((lo, len))
}

/// Strided put: element `i` of local `src` (stride `sst`) goes to element `i` of symmetric `dest`
/// (stride `dst`) on PE `pe`. Strides are in elements. Blocking: the data is in PE `pe`'s memory
/// at return.
///
/// # Safety
/// Every source element (`src + i * sst * elem`, `i < n`) must be readable.
pub unsafe fn iput(
    dest: *mut u8,
    src: *const u8,
    elem: usize,
    dst: isize,
    sst: isize,
    n: usize,
    pe: i32,
) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { iput_done(dest, src, elem, dst, sst, n, pe, Done::Target) }
}

/// OpenSHMEM's strided put ([`iput`] with [`Done::Local`]: the data is in PE `pe`'s memory at
/// the latest after [`quiet`]).
///
/// # Safety
/// As for [`iput`].
pub unsafe fn iput_local(
    dest: *mut u8,
    src: *const u8,
    elem: usize,
    dst: isize,
    sst: isize,
    n: usize,
    pe: i32,
) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { iput_done(dest, src, elem, dst, sst, n, pe, Done::Local) }
}

/// [`iput`] complete as `done` says.
///
/// # Safety
/// As for [`iput`].
#[allow(clippy::too_many_arguments)]
unsafe fn iput_done(
    dest: *mut u8,
    src: *const u8,
    elem: usize,
    dst: isize,
    sst: isize,
    n: usize,
    pe: i32,
    done: Done,
) -> Result<()> {
    let s = Strides {
        elem,
        dst_stride: dst,
        src_stride: sst,
        n,
    };
    // SAFETY: forwarded; a put only reads the local elements.
    unsafe { strided(Dir::Put, dest as usize, src.cast_mut(), s, pe, done) }
}

/// Strided get: element `i` of symmetric `src` (stride `sst`) on PE `pe` goes to element `i` of
/// local `dest` (stride `dst`). Blocking.
///
/// # Safety
/// Every destination element (`dest + i * dst * elem`, `i < n`) must be writable.
pub unsafe fn iget(
    dest: *mut u8,
    src: *const u8,
    elem: usize,
    dst: isize,
    sst: isize,
    n: usize,
    pe: i32,
) -> Result<()> {
    let s = Strides {
        elem,
        dst_stride: dst,
        src_stride: sst,
        n,
    };
    // SAFETY: forwarded.
    unsafe { strided(Dir::Get, src as usize, dest, s, pe, Done::Local) }
}

/// One strided transfer between local `local` and symmetric `sym` (each the first element's
/// address) on PE `pe`; `s.dst_stride` is the destination's stride, `s.src_stride` the source's.
///
/// # Safety
/// Every local element must be readable (put) or writable (get).
unsafe fn strided(dir: Dir, sym: usize, local: *mut u8, s: Strides, pe: i32, done: Done) -> Result<()> {
    if s.n == 0 {
        return Ok(());
    }
    let inst = runtime::current()?;
    let (sym_stride, local_stride, sym_name, local_name) = match dir {
        Dir::Put => (s.dst_stride, s.src_stride, "dest", "source"),
        Dir::Get => (s.src_stride, s.dst_stride, "source", "dest"),
    };
    let (rlo, rlen) = strided_span(sym, s.elem, sym_stride, s.n)?;
    let r = inst.remote(rlo, rlen, pe, sym_name)?;
    let (llo, llen) = strided_span(local as usize, s.elem, local_stride, s.n)?;
    self::local(llo as *const u8, llen, local_name)?;
    if local.is_null() {
        return Err(Error::InvalidParam(format!("{local_name} is NULL")));
    }
    let first = r.at(sym - rlo);
    match (first.direct(), dir) {
        // SAFETY: every symmetric element lies in [rlo, rlo + rlen) inside the peer's heap, every
        // local element in [llo, llo + llen), the caller's buffer (both checked above).
        (Some(p), Dir::Put) => unsafe {
            shm::copy_strided(local, p, s.elem, s.dst_stride, s.src_stride, s.n)
        },
        // SAFETY: as above.
        (Some(p), Dir::Get) => unsafe {
            shm::copy_strided(p, local, s.elem, s.dst_stride, s.src_stride, s.n)
        },
        // SAFETY: as above.
        (None, Dir::Put) => unsafe {
            let t = inst.routes().to(first.pe)?;
            t.iput(first, local, s)?;
            if done == Done::Target {
                delivered(t)?;
            }
        },
        // SAFETY: as above.
        (None, Dir::Get) => unsafe { inst.routes().to(first.pe)?.iget(first, local, s)? },
    }
    Ok(())
}

/// Stores one value at symmetric `dest` on PE `pe`: in PE `pe`'s memory at return.
#[inline(always)]
pub fn p<T: Copy>(dest: *mut T, value: T, pe: i32) -> Result<()> {
    p_done(dest, value, pe, Done::Target)
}

/// OpenSHMEM's `p`: [`p`] with [`Done::Local`] (in PE `pe`'s memory at the latest after
/// [`quiet`]).
#[inline(always)]
pub fn p_local<T: Copy>(dest: *mut T, value: T, pe: i32) -> Result<()> {
    p_done(dest, value, pe, Done::Local)
}

#[inline(always)]
fn p_done<T: Copy>(dest: *mut T, value: T, pe: i32, done: Done) -> Result<()> {
    let src = (&value as *const T).cast::<u8>().cast_mut();
    let inst = &*runtime::current()?;
    // SAFETY: the source is `value`, a live local of `size_of::<T>()` bytes.
    unsafe {
        transfer::<OWN_LOCAL>(
            inst,
            Dir::Put,
            dest as usize,
            src,
            std::mem::size_of::<T>(),
            pe,
            done,
        )
    }
}

/// Loads one value from symmetric `src` on PE `pe`.
#[inline(always)]
pub fn g<T: Copy + Default>(src: *const T, pe: i32) -> Result<T> {
    let mut v = T::default();
    let dest = (&mut v as *mut T).cast::<u8>();
    let inst = &*runtime::current()?;
    if crate::transport::polling_drives() {
        // a loop of `g` on a word of this node is how a program may wait (see `Routes`)
        progress_polled();
    }
    // SAFETY: the destination is `v`, a live local of `size_of::<T>()` bytes.
    unsafe {
        transfer::<OWN_LOCAL>(
            inst,
            Dir::Get,
            src as usize,
            dest,
            std::mem::size_of::<T>(),
            pe,
            Done::Local,
        )?
    };
    Ok(v)
}

/// The transports' progress of the calling thread's instance when they advance only inside
/// library calls (`Routes::driven_by_calls`: UCX without its progress thread), for the calls a
/// program may poll in a loop of its own (`g`, fetching atomics); out of line, so their hot path
/// keeps nothing alive for it.
#[cold]
#[inline(never)]
pub(crate) fn progress_polled() {
    if let Ok(inst) = runtime::current()
        && inst.routes().driven_by_calls()
    {
        inst.routes().progress();
    }
}

/// Completes every put, get and atomic this PE issued, on every transport; their effects are
/// visible to every PE afterwards (same-node copies are already in place: a full fence orders them
/// before anything that follows).
pub fn quiet() -> Result<()> {
    quiet_in(&*runtime::current()?)
}

/// [`quiet`] on instance `inst`.
pub fn quiet_in(inst: &Instance) -> Result<()> {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    inst.routes().quiet()
}

/// Orders earlier puts before later ones to the same PE.
pub fn fence() -> Result<()> {
    let inst = runtime::current()?;
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    inst.routes().fence()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_every_element() {
        assert_eq!(strided_span(1000, 4, 1, 10).unwrap(), (1000, 40));
        assert_eq!(strided_span(1000, 4, 3, 2).unwrap(), (1000, 16));
        assert_eq!(strided_span(1000, 4, -2, 3).unwrap(), (984, 20));
        assert_eq!(strided_span(1000, 8, 0, 5).unwrap(), (1000, 8));
        assert!(strided_span(10, 4, -2, 3).is_err());
        assert!(strided_span(usize::MAX - 8, 4, 1, 4).is_err());
        assert!(strided_span(0, 8, isize::MAX, 3).is_err());
    }

    #[test]
    fn byte_counts_are_64_bit() {
        // 2^32 + 16 bytes: a 32-bit length would be 16
        assert_eq!(bytes((1usize << 29) + 2, 8).unwrap(), (1usize << 32) + 16);
        assert_eq!(
            strided_span(0x1000, 8, 1, (1 << 29) + 2).unwrap().1,
            (1usize << 32) + 16
        );
        assert!(bytes(usize::MAX, 2).is_err());
    }
}
