//! Pointer arguments of the C surfaces, checked before the library reads or writes through them:
//! NULL, alignment for the element type, and an element count no array can have. A pointer that
//! is misaligned for its type is not a valid C object pointer: the library refuses it with an
//! error instead of reading or writing through it (a debug build would abort there, and atomic
//! access needs alignment on every target).

use crate::error::{Error, Result};

/// `p` is non-NULL and aligned for `T`.
pub fn check<T>(p: *const T, what: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::InvalidParam(format!("{what} is NULL")));
    }
    if !p.is_aligned() {
        return Err(Error::InvalidParam(format!(
            "{what} {p:p} is not aligned for its {}-byte elements",
            std::mem::align_of::<T>()
        )));
    }
    Ok(())
}

/// [`check`], and `n` elements of `T` fit in memory at all.
fn check_array<T>(p: *const T, n: usize, what: &str) -> Result<()> {
    check(p, what)?;
    if n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(Error::InvalidValue(format!(
            "{what}: {n} elements are more than memory holds"
        )));
    }
    Ok(())
}

/// `n` elements at `p` (checked as for [`check`] when `n > 0`).
///
/// # Safety
/// When the checks pass, `p` must be readable for `n` elements for `'a`.
pub unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    check_array(p, n, what)?;
    // SAFETY: non-NULL, aligned, a possible length; readable per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// As [`slice`], writable.
///
/// # Safety
/// When the checks pass, `p` must be writable for `n` elements for `'a`, and not aliased.
pub unsafe fn slice_mut<'a, T>(p: *mut T, n: usize, what: &str) -> Result<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    check_array(p, n, what)?;
    // SAFETY: as in `slice`, writable per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// Stores `v` at `p` (checked as for [`check`]).
///
/// # Safety
/// When the checks pass, `p` must be writable.
pub unsafe fn store<T>(p: *mut T, v: T, what: &str) -> Result<()> {
    check(p, what)?;
    // SAFETY: non-NULL, aligned, writable per the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_null_misaligned_and_impossible_counts() {
        let mut words = [0u32; 4];
        let p = words.as_mut_ptr();
        assert!(check(p, "p").is_ok());
        assert!(check(std::ptr::null::<u32>(), "p").is_err());
        let odd = p.cast::<u8>().wrapping_add(1).cast::<u32>();
        assert!(check(odd, "p").unwrap_err().to_string().contains("not aligned"));
        // SAFETY: `words` holds 4 elements; the refused calls do not touch memory.
        unsafe {
            assert_eq!(slice(p, 4, "p").unwrap().len(), 4);
            assert!(slice(odd, 1, "p").is_err());
            assert!(slice(odd, 0, "p").unwrap().is_empty());
            assert!(slice_mut(p, usize::MAX / 2, "p").is_err());
            store(p.add(3), 7, "p").unwrap();
            assert!(store(odd, 7, "p").is_err());
        }
        assert_eq!(words[3], 7);
    }
}
