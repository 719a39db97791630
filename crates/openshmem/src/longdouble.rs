//! `long double` reductions. Rust has no `long double` (x86-64: the 80-bit x87 format stored in
//! 16 bytes; AArch64 Linux: IEEE binary128), so [`LongDouble`] is 16 opaque, 16-byte aligned bytes
//! and the arithmetic of max/min/sum/prod is done by the C compiler of the target in
//! `csrc/longdouble.c` (compiled by this crate's build script with the `cc` crate).

use std::os::raw::{c_int, c_ulong};

use aclshmem_core::collectives::{Element, Op};

/// `long double` of the C ABI (x86-64 and AArch64 Linux: 16 bytes, 16-byte aligned). Moved as
/// bytes by RMA and collectives; reductions compute through [`combine_c`].
#[repr(C, align(16))]
#[derive(Clone, Copy, Default)]
pub struct LongDouble(pub [u8; 16]);

// operation codes of csrc/longdouble.c
const LD_MAX: c_int = 0;
const LD_MIN: c_int = 1;
const LD_SUM: c_int = 2;
const LD_PROD: c_int = 3;

unsafe extern "C" {
    fn aclshmemi_osh_longdouble_combine(
        op: c_int,
        acc: *mut LongDouble,
        x: *const LongDouble,
        n: c_ulong,
    ) -> c_int;
    fn aclshmemi_osh_longdouble_size() -> c_ulong;
    fn aclshmemi_osh_longdouble_align() -> c_ulong;
    fn aclshmemi_osh_longdouble_from_double(out: *mut LongDouble, v: f64);
    fn aclshmemi_osh_longdouble_to_double(v: *const LongDouble) -> f64;
}

fn code(op: Op) -> Option<c_int> {
    match op {
        Op::Max => Some(LD_MAX),
        Op::Min => Some(LD_MIN),
        Op::Sum => Some(LD_SUM),
        Op::Prod => Some(LD_PROD),
        // OpenSHMEM has no bitwise reductions of floating types; none is generated
        Op::And | Op::Or | Op::Xor => None,
    }
}

/// `acc[i] = acc[i] op x[i]` in C `long double` arithmetic (`acc` unchanged for a bitwise `op`,
/// which is never generated).
pub fn combine_c(acc: &mut [LongDouble], x: &[LongDouble], op: Op) {
    let Some(op) = code(op) else { return };
    let n = acc.len().min(x.len());
    // SAFETY: both slices hold at least n elements of 16 bytes each, the size of C's long double
    // (checked by the unit test `layout_matches_c`); the C function reads and writes exactly n.
    let rc = unsafe { aclshmemi_osh_longdouble_combine(op, acc.as_mut_ptr(), x.as_ptr(), n as c_ulong) };
    debug_assert_eq!(rc, 0);
}

impl Element for LongDouble {
    const NUMBER: aclshmem_core::collectives::Number = aclshmem_core::collectives::Number::Extended;
    #[inline]
    fn apply(op: Op, a: Self, b: Self) -> Self {
        let mut acc = [a];
        combine_c(&mut acc, &[b], op);
        acc[0]
    }
}

impl LongDouble {
    /// The `long double` equal to `v` (C conversion).
    pub fn from_f64(v: f64) -> Self {
        let mut out = LongDouble::default();
        // SAFETY: `out` is one writable, aligned long double.
        unsafe { aclshmemi_osh_longdouble_from_double(&mut out, v) };
        out
    }

    /// The nearest `double` (C conversion).
    pub fn to_f64(self) -> f64 {
        // SAFETY: `self` is one readable, aligned long double.
        unsafe { aclshmemi_osh_longdouble_to_double(&self) }
    }
}

/// Size and alignment of C's `long double` on this target.
pub fn c_layout() -> (usize, usize) {
    // SAFETY: the functions take no arguments and only return constants.
    unsafe {
        (
            aclshmemi_osh_longdouble_size() as usize,
            aclshmemi_osh_longdouble_align() as usize,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_c() {
        assert_eq!(
            c_layout(),
            (
                std::mem::size_of::<LongDouble>(),
                std::mem::align_of::<LongDouble>()
            )
        );
    }

    #[test]
    fn operators() {
        let v = |x: f64| LongDouble::from_f64(x);
        let mut acc = vec![v(1.5), v(-2.0), v(3.0)];
        combine_c(&mut acc, &[v(2.25), v(5.0), v(-4.0)], Op::Sum);
        assert_eq!(
            acc.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            vec![3.75, 3.0, -1.0]
        );
        combine_c(&mut acc, &[v(2.0), v(2.0), v(2.0)], Op::Prod);
        assert_eq!(
            acc.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            vec![7.5, 6.0, -2.0]
        );
        combine_c(&mut acc, &[v(8.0), v(1.0), v(f64::NAN)], Op::Max);
        assert_eq!(
            acc.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            vec![8.0, 6.0, -2.0]
        );
        combine_c(&mut acc, &[v(9.0), v(-7.0), v(-2.5)], Op::Min);
        assert_eq!(
            acc.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            vec![8.0, -7.0, -2.5]
        );
        // precision beyond double: 1 + 2^-60 - 1 is 2^-60 in x87 extended and binary128, 0 in double
        let mut a = [v(1.0)];
        combine_c(&mut a, &[v(2f64.powi(-60))], Op::Sum);
        combine_c(&mut a, &[v(-1.0)], Op::Sum);
        assert_eq!(a[0].to_f64(), 2f64.powi(-60));
        assert_eq!(LongDouble::apply(Op::Xor, v(1.0), v(2.0)).to_f64(), 1.0);
    }
}

/// `shmem_longdouble_p`, `shmem_longdouble_g` and their `ctx_` forms pass or return a `long
/// double` by value, which Rust cannot declare: each exported symbol is a jump to the C function
/// of `csrc/longdouble.c` that does the call (arguments and return value untouched on the way).
macro_rules! long_double_by_value {
    ($($name:ident => $target:ident),* $(,)?) => {
        unsafe extern "C" {
            $(fn $target();)*
        }
        $(
            #[doc = concat!("`", stringify!($name), "`: a jump to `", stringify!($target), "` in `csrc/longdouble.c`.")]
            #[unsafe(naked)]
            #[unsafe(no_mangle)]
            pub extern "C" fn $name() {
                #[cfg(target_arch = "x86_64")]
                core::arch::naked_asm!("jmp {}", sym $target);
                #[cfg(target_arch = "aarch64")]
                core::arch::naked_asm!("b {}", sym $target);
            }
        )*
    };
}

long_double_by_value! {
    shmem_longdouble_p => aclshmemi_osh_longdouble_p,
    shmem_longdouble_g => aclshmemi_osh_longdouble_g,
    shmem_ctx_longdouble_p => aclshmemi_osh_ctx_longdouble_p,
    shmem_ctx_longdouble_g => aclshmemi_osh_ctx_longdouble_g,
}
