//! Same-node transport: every peer's heap is mapped into this process, so a put or get is a copy and
//! an atomic is one CPU instruction on the peer's word.
//!
//! `unsafe` because it copies and runs atomics through raw addresses; each heap checked the offset
//! range when it built the [`Remote`], and callers guarantee their local buffers.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use super::{AmoOp, Remote, Strides, Transport, Width};
use crate::error::{Error, Result};

/// Shared memory between the processes of one node.
pub(crate) struct Shm {
    same_node: Vec<bool>,
}

impl Shm {
    pub fn new(_my_pe: usize, same_node: &[bool]) -> Shm {
        Shm {
            same_node: same_node.to_vec(),
        }
    }
}

/// The mapped address of `r`.
#[inline]
fn addr(r: &Remote<'_>) -> Result<*mut u8> {
    r.heap
        .mapped_addr(r.off, r.pe)
        .ok_or_else(|| Error::NotSupported(format!("PE {} has no mapping of this heap on this node", r.pe)))
}

impl Transport for Shm {
    fn name(&self) -> &'static str {
        "shm"
    }

    fn reaches(&self, pe: usize) -> bool {
        self.same_node.get(pe).copied().unwrap_or(false)
    }

    unsafe fn put(&self, dst: Remote<'_>, src: *const u8, len: usize) -> Result<()> {
        let d = addr(&dst)?;
        // SAFETY: `d..d+len` is inside the peer's mapping (the heap checked the range), `src` is
        // readable (this function's contract).
        unsafe { copy(src, d, len) };
        Ok(())
    }

    unsafe fn get(&self, src: Remote<'_>, dst: *mut u8, len: usize) -> Result<()> {
        let s = addr(&src)?;
        // SAFETY: as in `put`, roles exchanged.
        unsafe { copy(s, dst, len) };
        Ok(())
    }

    unsafe fn iput(&self, dst: Remote<'_>, src: *const u8, s: Strides) -> Result<()> {
        let d = addr(&dst)?;
        // SAFETY: every element lies in the checked spans (this function's contract).
        unsafe { copy_strided(src, d, s.elem, s.dst_stride, s.src_stride, s.n) };
        Ok(())
    }

    unsafe fn iget(&self, src: Remote<'_>, dst: *mut u8, s: Strides) -> Result<()> {
        let p = addr(&src)?;
        // SAFETY: as in `iput`, roles exchanged.
        unsafe { copy_strided(p, dst, s.elem, s.dst_stride, s.src_stride, s.n) };
        Ok(())
    }

    fn atomic(&self, at: Remote<'_>, width: Width, op: AmoOp) -> Result<u64> {
        let p = addr(&at)?;
        // SAFETY: an aligned word of `width` inside the peer's mapping (checked by the callers),
        // shared memory that every PE accesses only atomically for AMOs.
        Ok(unsafe {
            match width {
                Width::W32 => amo(AtomicU32::from_ptr(p.cast()), op, |v| v as u32) as u64,
                Width::W64 => amo(AtomicU64::from_ptr(p.cast()), op, |v| v),
            }
        })
    }

    fn fence(&self) -> Result<()> {
        fence(Ordering::SeqCst);
        Ok(())
    }

    fn quiet(&self) -> Result<()> {
        // every copy is complete when it returns; the fence orders them before what follows
        fence(Ordering::SeqCst);
        Ok(())
    }

    fn completes_at_once(&self) -> bool {
        true
    }
}

/// The atomic operations of [`AmoOp`] on one CPU atomic type.
trait CpuAtomic {
    type V: Copy;
    fn load(&self) -> Self::V;
    fn store(&self, v: Self::V);
    fn swap(&self, v: Self::V) -> Self::V;
    fn cas(&self, cond: Self::V, v: Self::V) -> Self::V;
    fn add(&self, v: Self::V) -> Self::V;
    fn and(&self, v: Self::V) -> Self::V;
    fn or(&self, v: Self::V) -> Self::V;
    fn xor(&self, v: Self::V) -> Self::V;
}

macro_rules! cpu_atomic {
    ($($a:ty => $v:ty),*) => {$(
        // Acquire loads and Release stores pair with waiters and signallers; read-modify-writes
        // are SeqCst, as the AMO contract asks.
        impl CpuAtomic for $a {
            type V = $v;
            fn load(&self) -> $v { <$a>::load(self, Ordering::Acquire) }
            fn store(&self, v: $v) { <$a>::store(self, v, Ordering::Release) }
            fn swap(&self, v: $v) -> $v { <$a>::swap(self, v, Ordering::SeqCst) }
            fn cas(&self, c: $v, v: $v) -> $v {
                match self.compare_exchange(c, v, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(o) | Err(o) => o,
                }
            }
            fn add(&self, v: $v) -> $v { self.fetch_add(v, Ordering::SeqCst) }
            fn and(&self, v: $v) -> $v { self.fetch_and(v, Ordering::SeqCst) }
            fn or(&self, v: $v) -> $v { self.fetch_or(v, Ordering::SeqCst) }
            fn xor(&self, v: $v) -> $v { self.fetch_xor(v, Ordering::SeqCst) }
        }
    )*};
}
cpu_atomic!(AtomicU32 => u32, AtomicU64 => u64);

fn amo<A: CpuAtomic>(a: &A, op: AmoOp, conv: impl Fn(u64) -> A::V) -> A::V
where
    A::V: Into<u64>,
{
    match op {
        AmoOp::Fetch => a.load(),
        AmoOp::Set(v) => {
            let old = a.load();
            a.store(conv(v));
            old
        }
        AmoOp::Swap(v) => a.swap(conv(v)),
        AmoOp::CompareSwap { cond, value } => a.cas(conv(cond), conv(value)),
        AmoOp::FetchAdd(v) => a.add(conv(v)),
        AmoOp::FetchAnd(v) => a.and(conv(v)),
        AmoOp::FetchOr(v) => a.or(conv(v)),
        AmoOp::FetchXor(v) => a.xor(conv(v)),
    }
}

/// Copies `len` bytes; the ranges may overlap (a put to oneself from inside one's own heap).
///
/// # Safety
/// `src` must be readable and `dst` writable for `len` bytes.
#[inline]
pub(crate) unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    let (s, d) = (src as usize, dst as usize);
    if s + len <= d || d + len <= s {
        // disjoint (the normal case): memcpy, whose large-size path streams past the caches
        // SAFETY: forwarded from the caller; the ranges do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { std::ptr::copy(src, dst, len) }
    }
}

/// Copies `n` elements of `elem` bytes: element `i` goes from `src + i*sst*elem` to
/// `dst + i*dst_stride*elem` (strides in elements, may be negative or zero), in order of `i`.
///
/// # Safety
/// Every element address computed this way must be valid (checked by the caller).
#[inline]
pub(crate) unsafe fn copy_strided(
    src: *const u8,
    dst: *mut u8,
    elem: usize,
    dst_stride: isize,
    sst: isize,
    n: usize,
) {
    let ds = dst_stride * elem as isize;
    let ss = sst * elem as isize;
    macro_rules! each {
        ($t:ty) => {
            for i in 0..n as isize {
                // SAFETY: the caller validated every element address; unaligned access is allowed.
                unsafe {
                    let v = (src.offset(i * ss) as *const $t).read_unaligned();
                    (dst.offset(i * ds) as *mut $t).write_unaligned(v);
                }
            }
        };
    }
    match elem {
        1 => each!(u8),
        2 => each!(u16),
        4 => each!(u32),
        8 => each!(u64),
        16 => each!(u128),
        _ => {
            for i in 0..n as isize {
                // SAFETY: as above.
                unsafe { std::ptr::copy(src.offset(i * ss), dst.offset(i * ds), elem) };
            }
        }
    }
}
