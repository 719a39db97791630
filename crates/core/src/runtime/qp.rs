//! The process-wide queue-pair count of the SDMA, RoCE and UDMA engines (`aclshmemx_set_qp_num`).
//!
//! On NPUs each engine connection has `qp_num` queues, and the `aclshmemx_sdma_qp_*` device calls
//! name one of them. On the CPU every engine copy completes when issued, so queues change no
//! data path; the count is kept so that the calls check their queue index as the original does,
//! and so that the configuration follows the original's rules: set before init, frozen while any
//! instance is initialized, back to 1 when the last instance is finalized.

use std::sync::atomic::{AtomicU32, Ordering};

use super::{LIFECYCLE, SLOT0, SLOTS};
use crate::error::{Error, Result};
use crate::util::Locked;

use aclshmem_abi::{ACLSHMEM_MAX_QP_NUM, ACLSHMEM_SDMA_MAX_CHAN};

/// `data_op_engine_type_t` values (shmem.h).
const ENGINE_MTE: i32 = 0x01;
const ENGINE_SDMA: i32 = 0x02;
const ENGINE_ROCE: i32 = 0x04;
const ENGINE_UDMA: i32 = 0x08;

static QP_NUM: AtomicU32 = AtomicU32::new(1);

/// The configured count (1 unless set).
pub fn qp_num() -> u32 {
    QP_NUM.load(Ordering::Acquire)
}

/// Whether an instance is initialized (caller holds LIFECYCLE).
fn any_live() -> bool {
    !SLOT0.live.load(Ordering::Acquire).is_null()
        || SLOTS
            .locked()
            .iter()
            .any(|s| !s.live.load(Ordering::Acquire).is_null())
}

/// `aclshmemx_set_qp_num(engine, qp_num)`: the engine must have queue pairs (SDMA, RoCE, UDMA;
/// MTE: `NotSupported`), `qp_num` in 1..=`ACLSHMEM_SDMA_MAX_CHAN` (40) for SDMA and
/// 1..=`ACLSHMEM_MAX_QP_NUM` (32) for RoCE and UDMA (else `InvalidValue`), and no instance may be
/// initialized (else `NotSupported`).
pub fn set_qp_num(engine: i32, qp_num: u32) -> Result<()> {
    let _g = LIFECYCLE.locked();
    let (max, limit) = match engine {
        ENGINE_SDMA => (ACLSHMEM_SDMA_MAX_CHAN, "ACLSHMEM_SDMA_MAX_CHAN"),
        ENGINE_ROCE | ENGINE_UDMA => (ACLSHMEM_MAX_QP_NUM, "ACLSHMEM_MAX_QP_NUM"),
        ENGINE_MTE => {
            return Err(Error::NotSupported(
                "the MTE engine has no queue pairs to configure".into(),
            ));
        }
        e => {
            return Err(Error::InvalidValue(format!(
                "engine {e:#x} is not a data_op_engine_type_t"
            )));
        }
    };
    if qp_num == 0 || qp_num > max {
        return Err(Error::InvalidValue(format!(
            "qp_num {qp_num} is outside 1..={max} ({limit})"
        )));
    }
    if any_live() {
        return Err(Error::NotSupported(
            "the queue-pair count cannot change while an instance is initialized".into(),
        ));
    }
    QP_NUM.store(qp_num, Ordering::Release);
    Ok(())
}

/// Checks a device call's queue index against the configured count.
pub fn check_qp(qp_idx: u32) -> Result<()> {
    let n = qp_num();
    if qp_idx >= n {
        return Err(Error::InvalidValue(format!(
            "queue pair {qp_idx} does not exist: {n} configured (aclshmemx_set_qp_num)"
        )));
    }
    Ok(())
}

/// After a finalize (caller holds LIFECYCLE): the count returns to 1 once no instance is left.
pub(super) fn reset_if_idle() {
    if !any_live() {
        QP_NUM.store(1, Ordering::Release);
    }
}
