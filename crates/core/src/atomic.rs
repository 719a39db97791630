//! Host-side atomic memory operations on a PE's symmetric heap (extension; OpenSHMEM 1.5 AMO set).
//!
//! Every operation is one CPU atomic instruction on the target's mapped heap, sequentially
//! consistent, so it is atomic with respect to every other atomic on the same word from any PE of
//! the node. The `_nbi` fetching forms complete before returning.
//!
//! `unsafe`: the atomics act on the target's mapped word, whose address was checked here.

use crate::error::Result;
use crate::p2p::check_word;
use crate::rma;
use crate::word::{IntWord, Word};

/// The target word on PE `pe` for symmetric `dest`.
#[inline]
fn target<T>(dest: *const T, pe: i32) -> Result<*mut T> {
    check_word(dest, "dest")?;
    Ok(rma::remote_addr(dest as usize, std::mem::size_of::<T>(), pe, "dest")? as *mut T)
}

// SAFETY (every block below): `target` returned an aligned address of a whole `T` inside PE pe's
// mapped heap.

pub fn fetch<T: Word>(source: *const T, pe: i32) -> Result<T> {
    let t = target(source, pe)?;
    // SAFETY: see above.
    Ok(unsafe { T::load(t) })
}

pub fn set<T: Word>(dest: *mut T, value: T, pe: i32) -> Result<()> {
    let t = target(dest, pe)?;
    // SAFETY: see above.
    unsafe { T::store(t, value) };
    Ok(())
}

pub fn swap<T: Word>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    let t = target(dest, pe)?;
    // SAFETY: see above.
    Ok(unsafe { T::swap(t, value) })
}

pub fn compare_swap<T: Word>(dest: *mut T, cond: T, value: T, pe: i32) -> Result<T> {
    let t = target(dest, pe)?;
    // SAFETY: see above.
    Ok(unsafe { T::compare_swap(t, cond, value) })
}

pub fn fetch_add<T: IntWord>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    let t = target(dest, pe)?;
    // SAFETY: see above.
    Ok(unsafe { T::fetch_add(t, value) })
}

pub fn fetch_inc<T: IntWord>(dest: *mut T, pe: i32) -> Result<T> {
    fetch_add(dest, T::one(), pe)
}

pub fn fetch_and<T: IntWord>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    let t = target(dest, pe)?;
    // SAFETY: see above.
    Ok(unsafe { T::fetch_and(t, value) })
}

pub fn fetch_or<T: IntWord>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    let t = target(dest, pe)?;
    // SAFETY: see above.
    Ok(unsafe { T::fetch_or(t, value) })
}

pub fn fetch_xor<T: IntWord>(dest: *mut T, value: T, pe: i32) -> Result<T> {
    let t = target(dest, pe)?;
    // SAFETY: see above.
    Ok(unsafe { T::fetch_xor(t, value) })
}
