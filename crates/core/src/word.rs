//! Atomic access to a value in (possibly another process's view of) the symmetric heap.
//!
//! The heap is shared memory mapped by every PE of the node, so the CPU's atomic instructions on
//! it are atomic with respect to every PE. `unsafe` because a raw address becomes an atomic
//! reference; callers check that the address is non-NULL, aligned and inside a mapped heap.

use std::sync::atomic::Ordering::{Acquire, Release, SeqCst};
use std::sync::atomic::*;

/// A value that can be loaded, stored, swapped and compared-and-swapped atomically.
pub trait Word: Copy + PartialOrd + Default + Send + 'static {
    /// # Safety
    /// `p` must be non-NULL, aligned for `Self`, and point into live memory.
    unsafe fn load(p: *const Self) -> Self;
    /// # Safety
    /// As for `load`, and writable.
    unsafe fn store(p: *mut Self, v: Self);
    /// # Safety
    /// As for `store`.
    unsafe fn swap(p: *mut Self, v: Self) -> Self;
    /// Stores `v` if the value equals `cond` (bitwise for floats); returns the old value.
    ///
    /// # Safety
    /// As for `store`.
    unsafe fn compare_swap(p: *mut Self, cond: Self, v: Self) -> Self;
    /// The value's bits, zero-extended (what a transport's atomic carries).
    fn to_bits64(self) -> u64;
    /// The value of the low `size_of::<Self>()` bytes of `v`.
    fn from_bits64(v: u64) -> Self;
}

/// Integer words also support the arithmetic and bitwise read-modify-writes.
pub trait IntWord: Word {
    /// # Safety
    /// As for [`Word::store`].
    unsafe fn fetch_add(p: *mut Self, v: Self) -> Self;
    /// # Safety
    /// As for [`Word::store`].
    unsafe fn fetch_and(p: *mut Self, v: Self) -> Self;
    /// # Safety
    /// As for [`Word::store`].
    unsafe fn fetch_or(p: *mut Self, v: Self) -> Self;
    /// # Safety
    /// As for [`Word::store`].
    unsafe fn fetch_xor(p: *mut Self, v: Self) -> Self;
    fn one() -> Self;
}

macro_rules! int_word {
    ($($t:ty => $a:ty, $u:ty),*) => {$(
        impl Word for $t {
            unsafe fn load(p: *const Self) -> Self {
                // SAFETY: forwarded from the caller (aligned, live).
                unsafe { <$a>::from_ptr(p as *mut $t) }.load(Acquire)
            }
            unsafe fn store(p: *mut Self, v: Self) {
                // SAFETY: as above.
                unsafe { <$a>::from_ptr(p) }.store(v, Release)
            }
            unsafe fn swap(p: *mut Self, v: Self) -> Self {
                // SAFETY: as above.
                unsafe { <$a>::from_ptr(p) }.swap(v, SeqCst)
            }
            unsafe fn compare_swap(p: *mut Self, cond: Self, v: Self) -> Self {
                // SAFETY: as above.
                match unsafe { <$a>::from_ptr(p) }.compare_exchange(cond, v, SeqCst, SeqCst) {
                    Ok(old) | Err(old) => old,
                }
            }
            fn to_bits64(self) -> u64 {
                // through the unsigned type of the same width: zero-extended, no sign extension
                (self as $u) as u64
            }
            fn from_bits64(v: u64) -> Self {
                v as $u as $t
            }
        }
        impl IntWord for $t {
            unsafe fn fetch_add(p: *mut Self, v: Self) -> Self {
                // SAFETY: as above.
                unsafe { <$a>::from_ptr(p) }.fetch_add(v, SeqCst)
            }
            unsafe fn fetch_and(p: *mut Self, v: Self) -> Self {
                // SAFETY: as above.
                unsafe { <$a>::from_ptr(p) }.fetch_and(v, SeqCst)
            }
            unsafe fn fetch_or(p: *mut Self, v: Self) -> Self {
                // SAFETY: as above.
                unsafe { <$a>::from_ptr(p) }.fetch_or(v, SeqCst)
            }
            unsafe fn fetch_xor(p: *mut Self, v: Self) -> Self {
                // SAFETY: as above.
                unsafe { <$a>::from_ptr(p) }.fetch_xor(v, SeqCst)
            }
            fn one() -> Self {
                1
            }
        }
    )*};
}

int_word!(i8 => AtomicI8, u8, i16 => AtomicI16, u16, i32 => AtomicI32, u32, i64 => AtomicI64, u64,
    isize => AtomicIsize, usize, u8 => AtomicU8, u8, u16 => AtomicU16, u16, u32 => AtomicU32, u32,
    u64 => AtomicU64, u64, usize => AtomicUsize, usize);

macro_rules! float_word {
    ($($t:ty => $a:ty, $bits:ty),*) => {$(
        impl Word for $t {
            unsafe fn load(p: *const Self) -> Self {
                // SAFETY: forwarded from the caller; the float has the size and alignment of its bits.
                <$t>::from_bits(unsafe { <$a>::from_ptr(p as *mut $bits) }.load(Acquire))
            }
            unsafe fn store(p: *mut Self, v: Self) {
                // SAFETY: as above.
                unsafe { <$a>::from_ptr(p as *mut $bits) }.store(v.to_bits(), Release)
            }
            unsafe fn swap(p: *mut Self, v: Self) -> Self {
                // SAFETY: as above.
                <$t>::from_bits(unsafe { <$a>::from_ptr(p as *mut $bits) }.swap(v.to_bits(), SeqCst))
            }
            unsafe fn compare_swap(p: *mut Self, cond: Self, v: Self) -> Self {
                // SAFETY: as above.
                let a = unsafe { <$a>::from_ptr(p as *mut $bits) };
                match a.compare_exchange(cond.to_bits(), v.to_bits(), SeqCst, SeqCst) {
                    Ok(old) | Err(old) => <$t>::from_bits(old),
                }
            }
            fn to_bits64(self) -> u64 {
                self.to_bits() as u64
            }
            fn from_bits64(v: u64) -> Self {
                <$t>::from_bits(v as $bits)
            }
        }
    )*};
}

float_word!(f32 => AtomicU32, u32, f64 => AtomicU64, u64);
