/*
 * Host-side platform queries of CANN's tiling library (`tiling/platform/platform_ascendc.h`), as the
 * CPU device mode of libaclshmem answers them. Host tiling code of kernels asks the platform how many
 * cores and how much on-chip memory a kernel may use; on the CPU the answers describe the emulated
 * device (an Ascend 910B-like NPU):
 *   - 20 cube cores (AIC) and 40 vector cores (AIV): `GetCoreNumAic()`, `GetCoreNumAiv()`;
 *     `GetCoreNum()` is the AIC count (what MIX kernels count blocks in);
 *   - 192 KiB of UB per core, the size every block context of the CPU device mode gets; L1 512 KiB,
 *     L0A/L0B 64 KiB, L0C 128 KiB, L2 192 MiB, HBM 64 GiB;
 *   - SocVersion::ASCEND910B, a 16 MiB library workspace.
 * Header-only: nothing here needs the library.
 */
#ifndef ACLSHMEM_PLATFORM_ASCENDC_H
#define ACLSHMEM_PLATFORM_ASCENDC_H

#include <cstdint>

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };

enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,
    ASCEND310P,
    ASCEND310B,
    ASCEND910_95 = 4,
    ASCEND950 = 4,
    RESERVED_VERSION = 99999
};

class PlatformAscendC {
public:
    uint32_t GetCoreNum(void) const { return kAic; }
    uint32_t GetCoreNumAic(void) const { return kAic; }
    uint32_t GetCoreNumAiv(void) const { return kAiv; }
    /* vector-only devices (none emulated here) */
    uint32_t GetCoreNumVector(void) const { return 0; }
    /* Blocks to launch for sliceNum slices: MIX kernels (both counts given) count a block as one cube
       core with its two vector cores, so vector slices are grouped in pairs. */
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        if (aicCoreNum == 0 || aivCoreNum == 0 || aivCoreNum <= aicCoreNum) {
            return sliceNum;
        }
        uint32_t ratio = aivCoreNum / aicCoreNum;
        return (sliceNum + ratio - 1) / ratio;
    }
    uint32_t GetLibApiWorkSpaceSize(void) const { return 16u * 1024u * 1024u; }
    uint32_t GetResCubeGroupWorkSpaceSize(void) const { return 0; }
    uint32_t GetResGroupBarrierWorkSpaceSize(void) const { return 0; }
    void GetCoreMemSize(const CoreMemType &memType, uint64_t &size) const
    {
        switch (memType) {
            case CoreMemType::L0_A:
            case CoreMemType::L0_B: size = 64ull * 1024; break;
            case CoreMemType::L0_C: size = 128ull * 1024; break;
            case CoreMemType::L1: size = 512ull * 1024; break;
            case CoreMemType::L2: size = 192ull * 1024 * 1024; break;
            case CoreMemType::UB: size = 192ull * 1024; break;
            case CoreMemType::HBM: size = 64ull * 1024 * 1024 * 1024; break;
            default: size = 0; break;
        }
    }
    /* bandwidths are not modelled: 0 */
    void GetCoreMemBw(const CoreMemType &memType, uint64_t &bwSize) const
    {
        (void)memType;
        bwSize = 0;
    }
    SocVersion GetSocVersion(void) const { return SocVersion::ASCEND910B; }

private:
    static constexpr uint32_t kAic = 20;
    static constexpr uint32_t kAiv = 40;
};

class PlatformAscendCManager {
public:
    static PlatformAscendC *GetInstance()
    {
        static PlatformAscendC platform;
        return &platform;
    }
    /* the CPU emulates one device whatever version is asked for */
    static PlatformAscendC *GetInstance(const char *customSocVersion)
    {
        (void)customSocVersion;
        return GetInstance();
    }
};

}  // namespace platform_ascendc

#endif
