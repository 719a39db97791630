//! C entry points of `host/init/shmem_host_init.h` (spec 8.1) and the init extension.

use std::ffi::{c_char, c_int};

use super::types::*;
use super::{arg_mut, guard};
use aclshmem_core::error::Error;
use aclshmem_core::job_from_env;
use aclshmem_core::runtime;

/// Phase of the current instance: `ACLSHMEM_STATUS_NOT_INITIALIZED` (0) before init and after
/// finalize, `ACLSHMEM_STATUS_SHM_CREATED` (1) while init runs after the heap exists,
/// `ACLSHMEM_STATUS_IS_INITIALIZED` (2) after a successful init. Not collective.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_init_status() -> c_int {
    guard("aclshmemx_init_status", || Ok(runtime::status()))
}

/// Initialises the library. Collective over all PEs of the instance; every PE passes the same
/// attributes except `my_pe`. DEFAULT mode: PE 0 runs the config store at `attributes->ip_port`
/// (`tcp://host:port` or `tcp6://[addr]:port`, port 1025..65535) and every PE connects to it,
/// retrying for `option_attr.shm_init_timeout` seconds; each bootstrap collective is bounded by
/// `option_attr.control_operation_timeout` seconds. A connection must present `ACLSHMEM_JOB_TOKEN`
/// (set by aclshmrun) when the job has one.
///
/// Returns 0; `ACLSHMEM_INVALID_PARAM` (NULL attributes, my_pe >= n_pes, unknown flags, bad
/// ip_port); `ACLSHMEM_INVALID_VALUE` (my_pe < 0, n_pes <= 0 or > ACLSHMEM_MAX_PES, local_mem_size
/// 0 or > ACLSHMEM_MAX_LOCAL_SIZE, a zero timeout, data_op_engine_type outside 0x1..0xF);
/// `ACLSHMEM_INNER_ERROR` (already initialised, config store unreachable or refusing);
/// `ACLSHMEM_SMEM_ERROR` (shared memory cannot be created, e.g. /dev/shm too small);
/// `ACLSHMEM_TIMEOUT_ERROR` (a PE did not arrive in time).
///
/// # Safety
/// `attributes` must be NULL or point to a valid `aclshmemx_init_attr_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_init_attr(
    bootstrap_flags: aclshmemx_bootstrap_t,
    attributes: *mut InitAttr,
) -> c_int {
    guard("aclshmemx_init_attr", || {
        // SAFETY: documented requirement of this function.
        let attr = unsafe { arg_mut(attributes, "attributes") }?;
        runtime::init(bootstrap_flags, attr)?;
        super::kernel::fill_host_state();
        super::kernel::publish_state();
        Ok(0)
    })
}

/// Initialises the library as [`aclshmemx_init_attr`] does, with `buffer_count` device buffers of
/// the program (`buffers`: each mapped by `aclrtMapMem` of the CPU libascendcl, a non-zero multiple
/// of 2 MiB long) as the fixed part of the symmetric heap, in descriptor order, at the same offsets
/// on every PE; `aclshmemx_get_buffer_ptr` gives a buffer's address in the heap. That part of the
/// heap is the buffer's own memory (a second view of it, not a copy). `local_mem_size` (0 allowed,
/// else a multiple of `ACLSHMEM_PAGE_SIZE`) is what `aclshmem_malloc` can hand out besides, after
/// the buffers; every PE must give the same `local_mem_size`, buffer count and sizes. Collective.
///
/// Returns 0; `ACLSHMEM_INVALID_PARAM` (NULL attributes or buffers, no buffers, NULL `addr`, size 0
/// or not a multiple of 2 MiB, non-zero reserved fields, overlapping buffers, a range that is not
/// mapped device memory (of `mem_handle` when given), `local_mem_size` not a multiple of
/// `ACLSHMEM_PAGE_SIZE`, a layout that differs between PEs: then on every PE);
/// `ACLSHMEM_INVALID_VALUE` (more than 1024 buffers, a total above `ACLSHMEM_MAX_LOCAL_SIZE`, and
/// the attribute checks of `aclshmemx_init_attr`); `ACLSHMEM_NOT_SUPPORTED` (an engine other than
/// MTE and UDMA (SDMA, RoCE), a `fabric_handle`, an ACL runtime other than this project's); the other codes of
/// `aclshmemx_init_attr`. The checks that need no other PE come first: a PE that fails them leaves
/// the library uninitialised without contacting the others.
///
/// # Safety
/// `attributes` must be NULL or point to a valid `aclshmemx_init_attr_t`; `buffers` NULL or point to
/// `buffer_count` valid `aclshmemx_buffer_desc_t`s whose `optional_attr` is NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_init_attr_with_buffers(
    bootstrap_flags: aclshmemx_bootstrap_t,
    attributes: *mut InitAttr,
    buffers: *const BufferDesc,
    buffer_count: usize,
) -> c_int {
    guard("aclshmemx_init_attr_with_buffers", || {
        // SAFETY: documented requirement of this function.
        let attr = unsafe { arg_mut(attributes, "attributes") }?;
        if buffers.is_null() {
            return Err(Error::InvalidParam("buffers is NULL".into()));
        }
        if buffer_count > aclshmem_abi::ACLSHMEM_MAX_USER_BUFFERS {
            return Err(Error::InvalidValue(format!(
                "buffer_count {buffer_count} exceeds {}",
                aclshmem_abi::ACLSHMEM_MAX_USER_BUFFERS
            )));
        }
        // SAFETY: `buffer_count` valid descriptors (documented requirement).
        let descs = unsafe { std::slice::from_raw_parts(buffers, buffer_count) };
        runtime::init_with_buffers(bootstrap_flags, attr, descs)?;
        super::kernel::fill_host_state();
        super::kernel::publish_state();
        Ok(0)
    })
}

/// Releases the current instance. Collective. Returns 0 (also when the library was never
/// initialised) or the first failing step's code. Re-init is allowed afterwards.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_finalize() -> c_int {
    guard("aclshmem_finalize", || {
        let r = runtime::finalize_api(None);
        super::kernel::publish_state();
        r.map(|_| 0)
    })
}

/// Releases instance `instance_id`. Collective. Unknown id: `ACLSHMEM_INNER_ERROR`, nothing released.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_finalize(instance_id: u64) -> c_int {
    guard("aclshmemx_finalize", || {
        let r = runtime::finalize_api(Some(instance_id));
        super::kernel::publish_state();
        r.map(|_| 0)
    })
}

/// Sets the number of queue pairs per peer connection of `engine` (SDMA, RoCE or UDMA), process
/// wide, before init; every PE must give the same. Returns 0; ACLSHMEM_INVALID_VALUE for a count
/// outside 1..=ACLSHMEM_SDMA_MAX_CHAN (40, SDMA) or 1..=ACLSHMEM_MAX_QP_NUM (32, RoCE and UDMA),
/// or an unknown engine; ACLSHMEM_NOT_SUPPORTED for MTE or
/// while an instance is initialized. The count returns to 1 when the last instance is finalized.
/// On the CPU every engine copy completes when issued: the count only bounds the queue index the
/// `aclshmemx_sdma_qp_*` device calls accept.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_set_qp_num(engine: data_op_engine_type_t, qp_num: u32) -> c_int {
    guard("aclshmemx_set_qp_num", || {
        aclshmem_core::runtime::qp::set_qp_num(engine, qp_num).map(|()| 0)
    })
}

/// Writes ACLSHMEM_MAJOR_VERSION and ACLSHMEM_MINOR_VERSION (1, 1). If either pointer is NULL,
/// nothing is written.
///
/// # Safety
/// Non-NULL pointers must be valid for writing an `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_info_get_version(major: *mut c_int, minor: *mut c_int) {
    guard("aclshmem_info_get_version", || {
        aclshmem_core::args::check(major, "major")?;
        aclshmem_core::args::check(minor, "minor")?;
        // SAFETY: both pointers are checked and valid per the documented contract.
        unsafe {
            *major = ACLSHMEM_MAJOR_VERSION;
            *minor = ACLSHMEM_MINOR_VERSION;
        }
        Ok(())
    })
}

/// Writes the NUL-terminated name "ACLSHMEM v1.1.1" (at most ACLSHMEM_MAX_NAME_LEN bytes). NULL: no-op.
///
/// # Safety
/// A non-NULL `name` must be valid for writing ACLSHMEM_MAX_NAME_LEN bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmem_info_get_name(name: *mut c_char) {
    guard("aclshmem_info_get_name", || {
        if name.is_null() {
            return Err(Error::InvalidParam("name is NULL".into()));
        }
        let text = format!(
            "ACLSHMEM v{ACLSHMEM_VENDOR_MAJOR_VER}.{ACLSHMEM_VENDOR_MINOR_VER}.{ACLSHMEM_VENDOR_PATCH_VER}\0"
        );
        let n = text.len().min(ACLSHMEM_MAX_NAME_LEN);
        // SAFETY: name is non-NULL and valid for ACLSHMEM_MAX_NAME_LEN bytes; n is within both.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), name, n) };
        Ok(())
    })
}

/// Stores `my_pe`, `n_pes`, `local_mem_size` and `comm_args = uid` into `*aclshmem_attr` (no
/// communication; the other fields are left as they are). Returns 0, `ACLSHMEM_INVALID_VALUE` when
/// local_mem_size > ACLSHMEM_MAX_LOCAL_SIZE, n_pes > ACLSHMEM_MAX_PES or my_pe >= ACLSHMEM_MAX_PES,
/// `ACLSHMEM_INVALID_PARAM` for a NULL pointer. Lower bounds (a negative `my_pe`, `n_pes` or
/// `local_mem_size` below 1) are stored as given and refused by init, as in the original.
///
/// # Safety
/// `uid` and `aclshmem_attr` must be NULL or valid; `*uid` must stay alive until init returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_set_attr_uniqueid_args(
    my_pe: c_int,
    n_pes: c_int,
    local_mem_size: i64,
    uid: *mut UniqueId,
    aclshmem_attr: *mut InitAttr,
) -> c_int {
    guard("aclshmemx_set_attr_uniqueid_args", || {
        if uid.is_null() {
            return Err(Error::InvalidParam("uid is NULL".into()));
        }
        // SAFETY: documented requirement of this function.
        let attr = unsafe { arg_mut(aclshmem_attr, "aclshmem_attr") }?;
        if local_mem_size as u64 > ACLSHMEM_MAX_LOCAL_SIZE && local_mem_size > 0 {
            return Err(Error::InvalidValue(format!(
                "local_mem_size {local_mem_size} exceeds ACLSHMEM_MAX_LOCAL_SIZE"
            )));
        }
        if n_pes as i64 > ACLSHMEM_MAX_PES as i64 || my_pe as i64 >= ACLSHMEM_MAX_PES as i64 {
            return Err(Error::InvalidValue(format!(
                "my_pe {my_pe} / n_pes {n_pes} exceed ACLSHMEM_MAX_PES"
            )));
        }
        // lower bounds (a negative PE, no PEs, no heap) are init's to refuse, as in the original
        // (spec 8.1): the values are stored as given (a negative size as the huge unsigned value
        // init refuses)
        attr.my_pe = my_pe;
        attr.n_pes = n_pes;
        attr.local_mem_size = local_mem_size as u64;
        attr.comm_args = uid.cast();
        Ok(0)
    })
}

/// **Extension** (not in the original): fills `my_pe`, `n_pes`, `ip_port` and `local_mem_size` of
/// `*attr` from the launcher's environment, and resets `option_attr`, `comm_args` and `instance_id`
/// to the C++ defaults. Sources, first match wins: aclshmrun (ACLSHMEM_MY_PE, ACLSHMEM_N_PES,
/// ACLSHMEM_IP_PORT), torchrun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT + 1), Open MPI
/// (OMPI_COMM_WORLD_RANK/SIZE), PMI (PMI_RANK/PMI_SIZE, PMIX_RANK); the rendezvous address comes
/// from ACLSHMEM_IP_PORT or MASTER_ADDR/MASTER_PORT. `local_mem_size` comes from
/// ACLSHMEM_LOCAL_MEM_SIZE (bytes or K/M/G suffix; default 128M). Returns 0, or
/// `ACLSHMEM_INVALID_PARAM` (NULL, no launcher variables, no rendezvous address) /
/// `ACLSHMEM_INVALID_VALUE` (malformed variable); `*attr` is only written on success. A program
/// that `mpirun` starts directly has rank and size but no rendezvous address: initialise it with
/// ACLSHMEMX_INIT_WITH_MPI instead (the log says so).
///
/// # Safety
/// `attr` must be NULL or point to a writable `aclshmemx_init_attr_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_set_attr_from_env(attr: *mut InitAttr) -> c_int {
    guard("aclshmemx_set_attr_from_env", || {
        // SAFETY: documented requirement of this function.
        let attr = unsafe { arg_mut(attr, "attr") }?;
        let job = job_from_env()?;
        let mut filled = InitAttr {
            my_pe: job.my_pe,
            n_pes: job.n_pes,
            local_mem_size: job.local_mem_size,
            ..InitAttr::default()
        };
        for (dst, src) in filled.ip_port.iter_mut().zip(job.ip_port.bytes()) {
            *dst = src as c_char;
        }
        *attr = filled;
        Ok(0)
    })
}

/// Context of the current instance (`id`, `instance` = NULL). Never NULL; the pointer stays valid
/// for the life of the process.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_instance_ctx_get() -> *mut InstanceCtx {
    guard("aclshmemx_instance_ctx_get", || {
        Ok(runtime::effective_slot().ctx_ptr())
    })
}

/// Makes `instance_id` current for all later host calls. Returns 0 or `ACLSHMEM_INNER_ERROR` for an
/// unknown id. Called inside a kernel block (the device-side form of `MULTI_INSTANCE` kernels), it
/// selects the instance for that block only, until the block ends.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmemx_instance_ctx_set(instance_id: u64) -> c_int {
    guard("aclshmemx_instance_ctx_set", || {
        if aclshmem_core::block::current().is_some() {
            runtime::set_thread_current(instance_id).map(|_| 0)
        } else {
            runtime::set_current(instance_id)?;
            super::kernel::publish_state();
            Ok(0)
        }
    })
}

/// Ends the whole job: every PE of the current instance exits with `status` (the others are told
/// through the bootstrap and exit within moments; under aclshmrun the launcher then exits with
/// `status`). Never returns. Before init only the calling process exits.
#[unsafe(no_mangle)]
pub extern "C" fn aclshmem_global_exit(status: c_int) {
    guard("aclshmem_global_exit", || runtime::global_exit(status))
}

/// Run by the process that will be PE 0, before init: picks its rendezvous address
/// (SHMEM_UID_SESSION_ID `host:port`, else the interface named by SHMEM_UID_SOCK_IFNAME
/// `<ifname>[:inet4|inet6]`, else the first up non-loopback, non-virtual interface, else loopback),
/// binds a listening socket there now (kept for init) and writes into `*uid` that address and a
/// random job secret. Copy the 136 bytes to every PE and pass them in `comm_args` with
/// ACLSHMEMX_INIT_WITH_UNIQUEID (see aclshmemx_set_attr_uniqueid_args); only PEs presenting that
/// secret can join. Returns 0, ACLSHMEM_INVALID_PARAM (NULL uid, malformed variable, no address or
/// port), ACLSHMEM_NOT_INITED (host name not resolvable).
///
/// # Safety
/// `uid` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_get_uniqueid(uid: *mut UniqueId) -> c_int {
    guard("aclshmemx_get_uniqueid", || {
        // SAFETY: documented requirement of this function.
        let uid = unsafe { arg_mut(uid, "uid") }?;
        let _ = aclshmem_core::logging::set_level(aclshmem_core::logging::ERROR);
        // zero-filled with the version first (spec 8.1): a failure leaves no stale address behind
        *uid = UniqueId {
            version: aclshmem_abi::ACLSHMEM_UNIQUEID_VERSION,
            my_pe: 0,
            n_pes: 0,
            internal: [0; aclshmem_abi::ACLSHMEM_UNIQUE_ID_INNER_LEN],
        };
        aclshmem_core::get_uniqueid(uid).map(|_| 0)
    })
}

/// Turns TLS on or off for the config store of the next init. `tls_info` (at most 10 KiB, not
/// needed to stay valid after the call) is either the original's `tlsCaPath: <dir>; tlsCaFile:
/// <names>; tlsCert: <file>[; tlsCrlPath: <dir>; tlsCrlFile: <names>]` (key from
/// aclshmemx_set_config_store_tls_key; checked at init) or `ca=<CA PEM file>;cert=<certificate
/// chain PEM file>[;key=<private key PEM file>][;server_name=<name in PE 0's
/// certificate>][;crl=<CRL file>]` (README "TLS settings"). With TLS on, every PE authenticates the
/// other side against the CA and the CRLs (mutual TLS 1.3) and it really is used — unlike the
/// original, which silently turns it off. Returns 0, or ACLSHMEM_INVALID_PARAM for a malformed or
/// missing tls_info (named in the log). Files are read at init.
///
/// # Safety
/// `tls_info` must be NULL or valid for `tls_info_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_set_conf_store_tls(
    enable: bool,
    tls_info: *const c_char,
    tls_info_len: u32,
) -> i32 {
    guard("aclshmemx_set_conf_store_tls", || {
        let info = (!tls_info.is_null()).then(|| {
            // SAFETY: documented requirement of this function.
            unsafe { std::slice::from_raw_parts(tls_info.cast::<u8>(), tls_info_len as usize) }
        });
        aclshmem_core::tls::configure(enable, info).map(|_| 0)
    })
}

/// Gives the config store's TLS private key as PEM text (`tls_pk`, PKCS#8, PKCS#1, SEC1 or
/// encrypted PKCS#8), its password (`tls_pk_pw`, may be NULL) and an optional `decrypt_handler` that
/// turns the stored password into the real one before use. Everything is copied. Applies to the
/// next init. Returns 0, or ACLSHMEM_INVALID_PARAM when a length exceeds 10 KiB or tls_pk is NULL.
///
/// # Safety
/// `tls_pk` and `tls_pk_pw` must be NULL or valid for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclshmemx_set_config_store_tls_key(
    tls_pk: *const c_char,
    tls_pk_len: u32,
    tls_pk_pw: *const c_char,
    tls_pk_pw_len: u32,
    decrypt_handler: DecryptHandler,
) -> i32 {
    guard("aclshmemx_set_config_store_tls_key", || {
        if tls_pk.is_null() {
            return Err(Error::InvalidParam("tls_pk is NULL".into()));
        }
        // SAFETY: documented requirement of this function.
        let key = unsafe { std::slice::from_raw_parts(tls_pk.cast::<u8>(), tls_pk_len as usize) };
        let pw = (!tls_pk_pw.is_null()).then(|| {
            // SAFETY: documented requirement of this function.
            unsafe { std::slice::from_raw_parts(tls_pk_pw.cast::<u8>(), tls_pk_pw_len as usize) }
        });
        aclshmem_core::tls::set_key(key, pw, decrypt_handler).map(|_| 0)
    })
}
