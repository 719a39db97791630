
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
inline int shmem_complexf_sum_reduce(shmem_team_t team, std::complex<float> *dest, const std::complex<float> *source, size_t nreduce)
{
    return shmem_complexf_sum_reduce(team, reinterpret_cast<shmemi_complexf *>(dest), reinterpret_cast<const shmemi_complexf *>(source), nreduce);
}
inline int shmem_sum_reduce(shmem_team_t team, std::complex<float> *dest, const std::complex<float> *source, size_t nreduce)
{
    return shmem_complexf_sum_reduce(team, dest, source, nreduce);
}
inline void shmem_complexf_sum_to_all(std::complex<float> *dest, const std::complex<float> *source, int nreduce, int PE_start, int logPE_stride, int PE_size, std::complex<float> *pWrk, long *pSync)
{
    shmem_complexf_sum_to_all(reinterpret_cast<shmemi_complexf *>(dest), reinterpret_cast<const shmemi_complexf *>(source), nreduce, PE_start, logPE_stride, PE_size, reinterpret_cast<shmemi_complexf *>(pWrk), pSync);
}
inline int shmem_complexf_prod_reduce(shmem_team_t team, std::complex<float> *dest, const std::complex<float> *source, size_t nreduce)
{
    return shmem_complexf_prod_reduce(team, reinterpret_cast<shmemi_complexf *>(dest), reinterpret_cast<const shmemi_complexf *>(source), nreduce);
}
inline int shmem_prod_reduce(shmem_team_t team, std::complex<float> *dest, const std::complex<float> *source, size_t nreduce)
{
    return shmem_complexf_prod_reduce(team, dest, source, nreduce);
}
inline void shmem_complexf_prod_to_all(std::complex<float> *dest, const std::complex<float> *source, int nreduce, int PE_start, int logPE_stride, int PE_size, std::complex<float> *pWrk, long *pSync)
{
    shmem_complexf_prod_to_all(reinterpret_cast<shmemi_complexf *>(dest), reinterpret_cast<const shmemi_complexf *>(source), nreduce, PE_start, logPE_stride, PE_size, reinterpret_cast<shmemi_complexf *>(pWrk), pSync);
}
inline int shmem_complexd_sum_reduce(shmem_team_t team, std::complex<double> *dest, const std::complex<double> *source, size_t nreduce)
{
    return shmem_complexd_sum_reduce(team, reinterpret_cast<shmemi_complexd *>(dest), reinterpret_cast<const shmemi_complexd *>(source), nreduce);
}
inline int shmem_sum_reduce(shmem_team_t team, std::complex<double> *dest, const std::complex<double> *source, size_t nreduce)
{
    return shmem_complexd_sum_reduce(team, dest, source, nreduce);
}
inline void shmem_complexd_sum_to_all(std::complex<double> *dest, const std::complex<double> *source, int nreduce, int PE_start, int logPE_stride, int PE_size, std::complex<double> *pWrk, long *pSync)
{
    shmem_complexd_sum_to_all(reinterpret_cast<shmemi_complexd *>(dest), reinterpret_cast<const shmemi_complexd *>(source), nreduce, PE_start, logPE_stride, PE_size, reinterpret_cast<shmemi_complexd *>(pWrk), pSync);
}
inline int shmem_complexd_prod_reduce(shmem_team_t team, std::complex<double> *dest, const std::complex<double> *source, size_t nreduce)
{
    return shmem_complexd_prod_reduce(team, reinterpret_cast<shmemi_complexd *>(dest), reinterpret_cast<const shmemi_complexd *>(source), nreduce);
}
inline int shmem_prod_reduce(shmem_team_t team, std::complex<double> *dest, const std::complex<double> *source, size_t nreduce)
{
    return shmem_complexd_prod_reduce(team, dest, source, nreduce);
}
inline void shmem_complexd_prod_to_all(std::complex<double> *dest, const std::complex<double> *source, int nreduce, int PE_start, int logPE_stride, int PE_size, std::complex<double> *pWrk, long *pSync)
{
    shmem_complexd_prod_to_all(reinterpret_cast<shmemi_complexd *>(dest), reinterpret_cast<const shmemi_complexd *>(source), nreduce, PE_start, logPE_stride, PE_size, reinterpret_cast<shmemi_complexd *>(pWrk), pSync);
}
#endif

#endif /* ACLSHMEM_OPENSHMEM_SHMEM_H */
