
#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACLSHMEM_OPENSHMEM_SHMEM_H */
