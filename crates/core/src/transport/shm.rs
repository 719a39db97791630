//! Same-node transport: the peer's heap is mapped into this process, so a put or get is a copy.
//!
//! `unsafe` because it copies through raw addresses; callers (src/rma.rs) have checked that every
//! byte touched lies in a mapped heap (remote side) or in the caller's buffer (local side).

/// Copies `len` bytes; the ranges may overlap (a put to oneself from inside one's own heap).
///
/// # Safety
/// `src` must be readable and `dst` writable for `len` bytes.
#[inline]
pub unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
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
pub unsafe fn copy_strided(
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
