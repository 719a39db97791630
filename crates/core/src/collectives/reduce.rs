//! Element-wise reduction operators (OpenSHMEM 1.5: and, or, xor, max, min, sum, prod).

/// A reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    And,
    Or,
    Xor,
    Max,
    Min,
    Sum,
    Prod,
}

/// An element type that can be reduced. Integer sums and products wrap; bitwise operators on
/// floats are never generated.
pub trait Element: Copy + Send + 'static {
    fn apply(op: Op, a: Self, b: Self) -> Self;
}

macro_rules! int_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            #[inline]
            fn apply(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::And => a & b,
                    Op::Or => a | b,
                    Op::Xor => a ^ b,
                    Op::Max => a.max(b),
                    Op::Min => a.min(b),
                    Op::Sum => a.wrapping_add(b),
                    Op::Prod => a.wrapping_mul(b),
                }
            }
        }
    )*};
}

int_element!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! float_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            #[inline]
            fn apply(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Max => a.max(b),
                    Op::Min => a.min(b),
                    Op::Sum => a + b,
                    Op::Prod => a * b,
                    // not generated for floats (OpenSHMEM has no bitwise float reductions)
                    Op::And | Op::Or | Op::Xor => a,
                }
            }
        }
    )*};
}

float_element!(f32, f64);

/// `acc[i] = acc[i] op x[i]`.
#[inline]
pub fn combine<T: Element>(acc: &mut [T], x: &[T], op: Op) {
    for (a, b) in acc.iter_mut().zip(x) {
        *a = T::apply(op, *a, *b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators() {
        let mut a = vec![1i32, 5, -3];
        combine(&mut a, &[2, 5, 7], Op::Sum);
        assert_eq!(a, vec![3, 10, 4]);
        combine(&mut a, &[2, 20, 1], Op::Max);
        assert_eq!(a, vec![3, 20, 4]);
        combine(&mut a, &[2, 2, 2], Op::Prod);
        assert_eq!(a, vec![6, 40, 8]);
        let mut b = vec![0b1100u8];
        combine(&mut b, &[0b1010], Op::Xor);
        assert_eq!(b, vec![0b0110]);
        assert_eq!(i8::apply(Op::Sum, 127, 1), -128);
        assert_eq!(f64::apply(Op::Min, 1.5, -2.0), -2.0);
    }
}
