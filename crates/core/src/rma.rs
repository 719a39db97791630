//! One-sided data movement: put, get, strided and scalar forms, quiet and fence.
//!
//! Every call is "blocking" in the strong sense: the data is in the target's memory when it
//! returns (the copy is done by this CPU), so the `_nbi` forms are the same operation and
//! [`quiet`]/[`fence`] only need a full memory fence to order what follows. Checks on the hot path:
//! the current instance (two atomic loads), the PE range, the remote range against the heap bounds
//! (one subtraction and compare), the peer's base (one load). No lock, no allocation, no hashing.
//!
//! `unsafe`: copies through the translated addresses, checked against the heap bounds first.

use crate::error::{Error, Result};
use crate::runtime::{self, Instance};
use crate::transport::shm;

/// The address in PE `pe`'s copy of the symmetric range `[addr, addr + len)` of this PE.
#[inline]
fn remote(inst: &Instance, addr: usize, len: usize, pe: i32, what: &str) -> Result<*mut u8> {
    if pe < 0 || pe as usize >= inst.n_pes {
        return Err(Error::InvalidParam(format!(
            "pe {pe} is outside [0, {})",
            inst.n_pes
        )));
    }
    let Some((heap, off)) = inst.locate(addr, len) else {
        return Err(Error::InvalidParam(format!(
            "{what} {addr:#x} (+{len} bytes) is not inside the symmetric heap"
        )));
    };
    heap.peer_addr(off, pe as usize).ok_or_else(|| {
        Error::NotSupported(format!(
            "PE {pe} is on another node, which this build cannot reach"
        ))
    })
}

/// The address in PE `pe`'s copy of this PE's symmetric range `[addr, addr + len)` (current instance).
#[inline]
pub fn remote_addr(addr: usize, len: usize, pe: i32, what: &str) -> Result<*mut u8> {
    remote(runtime::current()?, addr, len, pe, what)
}

/// Checks a local buffer of `len` bytes at `addr`: not NULL, not wrapping around.
#[inline]
fn local(addr: usize, len: usize, what: &str) -> Result<*mut u8> {
    if addr == 0 {
        return Err(Error::InvalidParam(format!("{what} is NULL")));
    }
    if addr.checked_add(len).is_none() {
        return Err(Error::InvalidValue(format!(
            "{what} {addr:#x} + {len} bytes wraps around"
        )));
    }
    Ok(addr as *mut u8)
}

/// Bytes of `n` elements of `elem` bytes, or an error when that overflows.
#[inline]
pub fn bytes(n: usize, elem: usize) -> Result<usize> {
    n.checked_mul(elem)
        .ok_or_else(|| Error::InvalidValue(format!("{n} elements of {elem} bytes overflow")))
}

/// Copies `len` bytes from local `src` to symmetric `dest` on PE `pe`.
#[inline]
pub fn put(dest: usize, src: usize, len: usize, pe: i32) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let inst = runtime::current()?;
    let d = remote(inst, dest, len, pe, "dest")?;
    let s = local(src, len, "source")?;
    // SAFETY: `d..d+len` lies in PE pe's mapped heap (checked by `remote`), `s..s+len` is the
    // caller's buffer (non-NULL, not wrapping); overlap is allowed.
    unsafe { shm::copy(s, d, len) };
    Ok(())
}

/// Copies `len` bytes from symmetric `src` on PE `pe` to local `dest`.
#[inline]
pub fn get(dest: usize, src: usize, len: usize, pe: i32) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let inst = runtime::current()?;
    let s = remote(inst, src, len, pe, "source")?;
    let d = local(dest, len, "dest")?;
    // SAFETY: as in `put`, with the roles exchanged.
    unsafe { shm::copy(s, d, len) };
    Ok(())
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
/// (stride `dst`) on PE `pe`. Strides are in elements.
pub fn iput(dest: usize, src: usize, elem: usize, dst: isize, sst: isize, n: usize, pe: i32) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let inst = runtime::current()?;
    let (dlo, dlen) = strided_span(dest, elem, dst, n)?;
    let rlo = remote(inst, dlo, dlen, pe, "dest")?;
    let (slo, slen) = strided_span(src, elem, sst, n)?;
    local(slo, slen, "source")?;
    if src == 0 {
        return Err(Error::InvalidParam("source is NULL".into()));
    }
    // SAFETY: every destination element lies in [rlo, rlo + dlen) inside the peer's heap and every
    // source element in [slo, slo + slen), both checked above.
    unsafe { shm::copy_strided(src as *const u8, rlo.add(dest - dlo), elem, dst, sst, n) };
    Ok(())
}

/// Strided get: element `i` of symmetric `src` (stride `sst`) on PE `pe` goes to element `i` of
/// local `dest` (stride `dst`).
pub fn iget(dest: usize, src: usize, elem: usize, dst: isize, sst: isize, n: usize, pe: i32) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let inst = runtime::current()?;
    let (slo, slen) = strided_span(src, elem, sst, n)?;
    let rlo = remote(inst, slo, slen, pe, "source")?;
    let (dlo, dlen) = strided_span(dest, elem, dst, n)?;
    local(dlo, dlen, "dest")?;
    if dest == 0 {
        return Err(Error::InvalidParam("dest is NULL".into()));
    }
    // SAFETY: as in `iput`, with the roles exchanged.
    unsafe { shm::copy_strided(rlo.add(src - slo), dest as *mut u8, elem, dst, sst, n) };
    Ok(())
}

/// Stores one value at symmetric `dest` on PE `pe`.
#[inline]
pub fn p<T: Copy>(dest: *mut T, value: T, pe: i32) -> Result<()> {
    put(
        dest as usize,
        &value as *const T as usize,
        std::mem::size_of::<T>(),
        pe,
    )
}

/// Loads one value from symmetric `src` on PE `pe`.
#[inline]
pub fn g<T: Copy + Default>(src: *const T, pe: i32) -> Result<T> {
    let mut v = T::default();
    get(
        &mut v as *mut T as usize,
        src as usize,
        std::mem::size_of::<T>(),
        pe,
    )?;
    Ok(v)
}

/// Completes every put/get this PE issued: all are already in place, so a full fence orders them
/// before anything that follows (a flag store another PE reads, for instance).
pub fn quiet() -> Result<()> {
    runtime::current()?;
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    Ok(())
}

/// Orders earlier puts before later ones to the same PE; the same fence as [`quiet`].
pub fn fence() -> Result<()> {
    quiet()
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
