
/* shmem_sync: the team form (C11, one argument) and the deprecated active-set form (four) */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
#define shmemi_sync_1(team) shmem_team_sync(team)
#define shmemi_sync_4(a0, a1, a2, a3) shmem_sync(a0, a1, a2, a3)
#define shmem_sync(...) SHMEMI_CAT(shmemi_sync_, SHMEMI_NARGS(__VA_ARGS__))(__VA_ARGS__)
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#ifdef __cplusplus
/* std::complex<float> / std::complex<double> (the layout of the C complex types), as programs
   written for Open MPI's OSHMEM pass them to the complex reductions */
#include <complex>
/* (one macro for the 4 typed names x 3 forms: complexf/complexd, sum/prod) */
#define SHMEMI_CXX_COMPLEX(T, t, op)                                                                          \
    inline int shmem_complex##t##_##op##_reduce(shmem_team_t team, std::complex<T> *dest,                     \
                                                const std::complex<T> *source, size_t nreduce)                \
    {                                                                                                         \
        return shmem_complex##t##_##op##_reduce(team, reinterpret_cast<shmemi_complex##t *>(dest),            \
                                                reinterpret_cast<const shmemi_complex##t *>(source), nreduce); \
    }                                                                                                         \
    inline int shmem_##op##_reduce(shmem_team_t team, std::complex<T> *dest, const std::complex<T> *source,   \
                                   size_t nreduce)                                                            \
    {                                                                                                         \
        return shmem_complex##t##_##op##_reduce(team, dest, source, nreduce);                                 \
    }                                                                                                         \
    inline void shmem_complex##t##_##op##_to_all(std::complex<T> *dest, const std::complex<T> *source,        \
                                                 int nreduce, int PE_start, int logPE_stride, int PE_size,   \
                                                 std::complex<T> *pWrk, long *pSync)                          \
    {                                                                                                         \
        shmem_complex##t##_##op##_to_all(reinterpret_cast<shmemi_complex##t *>(dest),                         \
                                         reinterpret_cast<const shmemi_complex##t *>(source), nreduce,        \
                                         PE_start, logPE_stride, PE_size,                                     \
                                         reinterpret_cast<shmemi_complex##t *>(pWrk), pSync);                 \
    }
SHMEMI_CXX_COMPLEX(float, f, sum)
SHMEMI_CXX_COMPLEX(float, f, prod)
SHMEMI_CXX_COMPLEX(double, d, sum)
SHMEMI_CXX_COMPLEX(double, d, prod)
#undef SHMEMI_CXX_COMPLEX
#endif

#endif /* ACLSHMEM_OPENSHMEM_SHMEM_H */
