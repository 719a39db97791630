
/* shmem_sync: the team form (C11, one argument) and the deprecated active-set form (four) */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
#define shmemi_sync_1(team) shmem_team_sync(team)
#define shmemi_sync_4(a0, a1, a2, a3) shmem_sync(a0, a1, a2, a3)
#define shmem_sync(...) SHMEMI_CAT(shmemi_sync_, SHMEMI_NARGS(__VA_ARGS__))(__VA_ARGS__)
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACLSHMEM_OPENSHMEM_SHMEM_H */
