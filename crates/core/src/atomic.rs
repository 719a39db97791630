//! Host-side atomic memory operations on a PE's symmetric heap (extension; OpenSHMEM 1.5 AMO set).
//!
//! Fast path (the target's heap is mapped here): one CPU atomic instruction on the target's word,
//! sequentially consistent, so it is atomic with respect to every other atomic on the same word
//! from any PE of the node. Otherwise the operation goes to the target's transport as a 32- or
//! 64-bit atomic on the word's bits. The `_nbi` fetching forms complete before returning.
//!
//! `unsafe`: the fast path's atomics act on the target's mapped word, whose address was checked.

use crate::error::{Error, Result};
use crate::p2p::check_word;
use crate::runtime;
use crate::transport::{AmoOp, Remote, Width};
use crate::word::{IntWord, Word};

/// Runs `op` on the word at symmetric `dest` on PE `pe`: `direct` on the mapped word when the fast
/// path applies, else the transport's atomic.
#[inline(always)]
fn amo<T: Word>(dest: *const T, pe: i32, op: AmoOp, direct: impl FnOnce(*mut T) -> T) -> Result<T> {
    let inst = runtime::current()?;
    // the common case first: an aligned word of the device heap of a peer mapped here (NULL is in
    // no heap); everything else, errors included, out of line
    if (dest as usize).is_multiple_of(std::mem::align_of::<T>())
        && let Some(p) = inst.direct_fast(dest as usize, std::mem::size_of::<T>(), pe)
    {
        let old = direct(p.cast());
        // a loop of fetches, swaps or compare-swaps on a word of this node is how a program may
        // wait (a CAS lock); `op` is known where this is inlined, so the other operations test
        // nothing, and these only a flag (the progress call is out of line)
        if matches!(op, AmoOp::Fetch | AmoOp::Swap(_) | AmoOp::CompareSwap { .. })
            && crate::transport::polling_drives()
        {
            crate::rma::progress_polled();
        }
        return Ok(old);
    }
    amo_full(&inst, dest, pe, op, direct)
}

/// [`amo`] with every check and every route.
#[inline(never)]
fn amo_full<T: Word>(
    inst: &crate::runtime::Instance,
    dest: *const T,
    pe: i32,
    op: AmoOp,
    direct: impl FnOnce(*mut T) -> T,
) -> Result<T> {
    check_word(dest, "dest")?;
    if inst.routes().driven_by_calls() {
        // (as in `amo`: a word of this node reached through a transport that completes at once,
        // this PE's own with `ACLSHMEM_TRANSPORT=ucx`, or of the program's data)
        inst.routes().progress();
    }
    let len = std::mem::size_of::<T>();
    let pe = inst.check_pe(pe)?;
    let Some((heap, off)) = inst.locate(dest as usize, len) else {
        return Err(Error::InvalidParam(inst.not_symmetric(
            "dest",
            dest as usize,
            len,
        )));
    };
    if let Some(p) = heap.direct_addr(off, pe) {
        return Ok(direct(p.cast()));
    }
    let r = Remote { heap, off, pe };
    let width = match std::mem::size_of::<T>() {
        4 => Width::W32,
        8 => Width::W64,
        n => {
            return Err(Error::NotSupported(format!(
                "{n}-byte atomics reach only PEs whose heap is mapped on this node (PE {pe})"
            )));
        }
    };
    let old = inst.routes().to(pe)?.atomic(r, width, op)?;
    Ok(T::from_bits64(old))
}

// SAFETY (every `unsafe` block below): `amo` passes an aligned address of a whole `T` inside PE
// pe's mapped heap.

#[inline]
pub fn fetch<T: Word>(source: *const T, pe: i32) -> Result<T> {
    // SAFETY: see above.
    amo(source, pe, AmoOp::Fetch, |t| unsafe { T::load(t) })
}

#[inline]
pub fn set<T: Word>(dest: *mut T, value: T, pe: i32) -> Result<()> {
    let op = AmoOp::Set(value.to_bits64());
    // SAFETY: see above.
    amo(dest, pe, op, |t| unsafe {
        T::store(t, value);
        value
    })
    .map(|_| ())
}

#[inline]
pub fn swap<T: Word>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    // SAFETY: see above.
    amo(dest, pe, AmoOp::Swap(value.to_bits64()), |t| unsafe {
        T::swap(t, value)
    })
}

#[inline]
pub fn compare_swap<T: Word>(dest: *mut T, cond: T, value: T, pe: i32) -> Result<T> {
    let op = AmoOp::CompareSwap {
        cond: cond.to_bits64(),
        value: value.to_bits64(),
    };
    // SAFETY: see above.
    amo(dest, pe, op, |t| unsafe { T::compare_swap(t, cond, value) })
}

#[inline]
pub fn fetch_add<T: IntWord>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    // SAFETY: see above.
    amo(dest, pe, AmoOp::FetchAdd(value.to_bits64()), |t| unsafe {
        T::fetch_add(t, value)
    })
}

#[inline]
pub fn fetch_inc<T: IntWord>(dest: *mut T, pe: i32) -> Result<T> {
    fetch_add(dest, T::one(), pe)
}

#[inline]
pub fn fetch_and<T: IntWord>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    // SAFETY: see above.
    amo(dest, pe, AmoOp::FetchAnd(value.to_bits64()), |t| unsafe {
        T::fetch_and(t, value)
    })
}

#[inline]
pub fn fetch_or<T: IntWord>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    // SAFETY: see above.
    amo(dest, pe, AmoOp::FetchOr(value.to_bits64()), |t| unsafe {
        T::fetch_or(t, value)
    })
}

#[inline]
pub fn fetch_xor<T: IntWord>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    // SAFETY: see above.
    amo(dest, pe, AmoOp::FetchXor(value.to_bits64()), |t| unsafe {
        T::fetch_xor(t, value)
    })
}
