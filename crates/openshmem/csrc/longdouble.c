/*
 * long double arithmetic for the OpenSHMEM surface's reductions. Rust has no long double
 * (x86-64: 80-bit x87 extended in 16 bytes; AArch64 Linux: IEEE binary128), so the element
 * operation is done here by the C compiler of the target, and the Rust side only moves bytes.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

/* Operation codes: kept equal to the constants in crates/openshmem/src/longdouble.rs. */
enum { LD_MAX = 0, LD_MIN = 1, LD_SUM = 2, LD_PROD = 3 };

/*
 * acc[i] = acc[i] OP x[i] for i < n. Max and min return the other operand when one is a NaN,
 * as Rust's f64::max and f64::min do for the other floating types. Returns 0, or -1 for an
 * unknown operation (acc unchanged).
 */
int aclshmemi_osh_longdouble_combine(int op, void *acc, const void *x, unsigned long n)
{
    long double a, b;
    unsigned long i;

    if (op < LD_MAX || op > LD_PROD)
        return -1;
    for (i = 0; i < n; i++) {
        memcpy(&a, (char *)acc + i * sizeof(long double), sizeof a);
        memcpy(&b, (const char *)x + i * sizeof(long double), sizeof b);
        switch (op) {
        case LD_MAX:
            a = isnan(a) ? b : isnan(b) ? a : (b > a ? b : a);
            break;
        case LD_MIN:
            a = isnan(a) ? b : isnan(b) ? a : (b < a ? b : a);
            break;
        case LD_SUM:
            a = a + b;
            break;
        default:
            a = a * b;
            break;
        }
        memcpy((char *)acc + i * sizeof(long double), &a, sizeof a);
    }
    return 0;
}

/* sizeof and alignment of long double, checked against the Rust type by a unit test. */
unsigned long aclshmemi_osh_longdouble_size(void) { return sizeof(long double); }
unsigned long aclshmemi_osh_longdouble_align(void) { return _Alignof(long double); }

/* Test helpers: long double from and to double (exact for the values the tests use). */
void aclshmemi_osh_longdouble_from_double(void *out, double v)
{
    long double x = v;
    memcpy(out, &x, sizeof x);
}

double aclshmemi_osh_longdouble_to_double(const void *in)
{
    long double x;
    memcpy(&x, in, sizeof x);
    return (double)x;
}

/*
 * shmem_[ctx_]longdouble_p/g: the exported symbols are Rust trampolines (src/longdouble.rs) that
 * jump here, because only the C compiler knows how the target passes and returns a long double
 * by value. These call the array forms, which the Rust side exports.
 */
typedef void *aclshmemi_osh_ctx;
void shmem_longdouble_put(long double *dest, const long double *source, size_t nelems, int pe);
void shmem_longdouble_get(long double *dest, const long double *source, size_t nelems, int pe);
void shmem_ctx_longdouble_put(aclshmemi_osh_ctx ctx, long double *dest, const long double *source,
                              size_t nelems, int pe);
void shmem_ctx_longdouble_get(aclshmemi_osh_ctx ctx, long double *dest, const long double *source,
                              size_t nelems, int pe);

void aclshmemi_osh_longdouble_p(long double *dest, long double value, int pe)
{
    shmem_longdouble_put(dest, &value, 1, pe);
}

long double aclshmemi_osh_longdouble_g(const long double *source, int pe)
{
    long double v = 0;
    shmem_longdouble_get(&v, source, 1, pe);
    return v;
}

void aclshmemi_osh_ctx_longdouble_p(aclshmemi_osh_ctx ctx, long double *dest, long double value, int pe)
{
    shmem_ctx_longdouble_put(ctx, dest, &value, 1, pe);
}

long double aclshmemi_osh_ctx_longdouble_g(aclshmemi_osh_ctx ctx, const long double *source, int pe)
{
    long double v = 0;
    shmem_ctx_longdouble_get(ctx, &v, source, 1, pe);
    return v;
}
