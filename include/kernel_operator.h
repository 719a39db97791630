/*
 * kernel_operator.h - the subset of AscendC that SHMEM kernels use, for the CPU device mode of
 * libaclshmem (spec device-api section 4). Written for this project; not AscendC's header.
 *
 * Model: every block context of a launch is a CPU thread (GetBlockIdx/GetBlockNum from the
 * launcher), with a private 192 KiB UB. UB addresses are byte offsets into it, as on the device:
 * LocalTensor::GetPhyAddr() returns the offset, and the calls below translate it to the calling
 * block's buffer. Pipe events and barriers order nothing that the CPU does not already order
 * (each block runs its calls one after another); PipeBarrier is a full memory fence and SyncAll a
 * real rendezvous of all block contexts of the launch.
 */
#ifndef ACLSHMEM_KERNEL_OPERATOR_H
#define ACLSHMEM_KERNEL_OPERATOR_H

#include "device/aclshmem_cpu.h"

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#define ACLSHMEM_UB_SIZE (192u * 1024u)

/* the vector-core build of an A2/A3 kernel (the CUBE part is compiled out, spec 4.1). A source that
   names g_coreType is compiled a second time by aclshmem-cxx with ACLSHMEMI_AIC_BUILD, the cube-core
   build whose kernels the AIC contexts of MIX launches run. */
#if defined(ACLSHMEMI_AIC_BUILD)
#ifndef __DAV_C220_CUBE__
#define __DAV_C220_CUBE__ 1
#endif
#elif !defined(__DAV_C220_VEC__)
#define __DAV_C220_VEC__ 1
#endif

/* the core kinds and the kind this build is for: compile-time, as in the device compiler's builds
   (`if constexpr (g_coreType == AscendC::AIC)`, `template <int32_t C = g_coreType>`) */
namespace AscendC {
constexpr int32_t MIX = 0;
constexpr int32_t AIC = 1;
constexpr int32_t AIV = 2;
} // namespace AscendC
#if defined(ACLSHMEMI_AIC_BUILD)
constexpr int32_t g_coreType = AscendC::AIC;
#else
constexpr int32_t g_coreType = AscendC::AIV;
#endif

enum pipe_t : uint8_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2, PIPE_FIX };

enum event_t : int8_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

/* CCE intrinsic form of PipeBarrier */
inline void pipe_barrier(pipe_t)
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

/* CCE intrinsic forms of SetFlag / WaitFlag between pipes: a block's work is in program order on
   the CPU, so they only order memory */
inline void set_flag(pipe_t, pipe_t, event_t)
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void wait_flag(pipe_t, pipe_t, event_t)
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

/* AscendC asserts and traps end the block; the stream's next synchronize reports it */
inline void trap()
{
    throw std::runtime_error("trap() called in the kernel");
}

#define ASCEND_IS_AIV (::AscendC::aclshmemi_is_aiv())
#define ASCEND_IS_AIC (!::AscendC::aclshmemi_is_aiv())
#define ASCEND_IS_NOT_AIV (!::AscendC::aclshmemi_is_aiv())
#define ASCEND_IS_NOT_AIC (::AscendC::aclshmemi_is_aiv())

namespace AscendC {

typedef int8_t TEventID;

/* MIX kernels run one AIC context per block next to the two AIVs; AIV-only kernels only AIVs */
inline bool aclshmemi_is_aiv()
{
    return aclshmemx_dev_is_aic() == 0;
}

enum class HardEvent : uint8_t {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3,
    MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3,
    MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};

enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX };
using QuePosition = TPosition;

enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 };
enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
enum class MemDsbT : uint8_t { ALL = 0, DDR, UB, SEQ };

/* ---- index and system queries ---- */
inline int64_t GetBlockIdx()
{
    return aclshmemx_dev_block_idx();
}
inline int64_t GetBlockNum()
{
    return aclshmemx_dev_block_num();
}
inline int64_t GetSubBlockIdx()
{
    return aclshmemx_dev_sub_block_idx();
}
inline int64_t GetSubBlockNum()
{
    return aclshmemx_dev_sub_block_num();
}
/* the UB bytes a block context may use (Ascend950 API; here each context's 192 KiB) */
constexpr uint32_t GetUBSizeInBytes()
{
    return ACLSHMEM_UB_SIZE;
}
inline int64_t GetTaskRation()
{
    return aclshmemx_dev_sub_block_num();
}
inline int64_t GetTaskRatio()
{
    return aclshmemx_dev_sub_block_num();
}
/* a free-running counter at 50 MHz (0.02 us per cycle, as the examples convert it) */
inline int64_t GetSystemCycle()
{
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now().time_since_epoch())
                  .count();
    return static_cast<int64_t>(ns / 20);
}

/* ---- synchronisation ---- */
template <HardEvent E>
inline void SetFlag(int32_t)
{
    std::atomic_signal_fence(std::memory_order_seq_cst);
}
template <HardEvent E>
inline void WaitFlag(int32_t)
{
    std::atomic_signal_fence(std::memory_order_seq_cst);
}
template <pipe_t P>
inline void PipeBarrier()
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
template <MemDsbT M>
inline void DataSyncBarrier()
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
/* SyncAll() / SyncAll<true>(): the AIV contexts of the launch (an AIC's call returns at once);
   SyncAll<false>(): every context, AIV and AIC. Contexts that returned from the kernel no longer
   count. */
template <bool isAIVOnly = true>
inline void SyncAll()
{
    if ((isAIVOnly ? aclshmemx_dev_sync_all() : aclshmemx_dev_sync_all_cores()) != 0) {
        throw std::runtime_error("SyncAll: another block of the launch failed, or called outside a kernel");
    }
}
inline void SetSyncBaseAddr(uint64_t)
{
}

/* ---- printing and dumps ---- */
inline void InitDump(bool, GM_ADDR, uint32_t)
{
}
inline void InitDump(bool, uint32_t, GM_ADDR, uint32_t)
{
}
/* stdout, prefixed with the block index inside a kernel (host code that ends up here through
   `using namespace AscendC` prints as with std::printf) */
template <typename... Args>
inline void PRINTF(const char *fmt, Args... args)
{
    if (aclshmemx_dev_in_kernel() != 0) {
        std::printf("[block %lld] ", static_cast<long long>(GetBlockIdx()));
    }
    std::printf(fmt, args...);
}
template <typename... Args>
inline void printf(const char *fmt, Args... args)
{
    PRINTF(fmt, args...);
}

namespace aclshmemi_detail {
/* the calling block's UB byte `off` .. `off + len`, checked; an address at or above the UB's size is
   an ordinary address, as for the API's local operands: a `__ubuf__` array declared in the kernel
   (a stack array where `__ubuf__` is empty: g++, aarch64, SIMT sources) whose address a kernel puts
   into a LocalTensor */
inline uint8_t *ub_at(uint64_t off, uint64_t len, const char *what)
{
    if (off >= ACLSHMEM_UB_SIZE) {
        return reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(off));
    }
    uint8_t *base = static_cast<uint8_t *>(aclshmemx_dev_ub_base());
    if (base == nullptr) {
        throw std::runtime_error(std::string(what) + ": UB used outside a kernel block");
    }
    if (len > ACLSHMEM_UB_SIZE - off) {
        throw std::runtime_error(std::string(what) + ": UB range [" + std::to_string(off) + ", +" +
                                 std::to_string(len) + ") ends beyond the 192 KiB UB");
    }
    return base + off;
}
inline uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}
} // namespace aclshmemi_detail

/* ---- tensors ---- */
struct TBufAddr {
    uint8_t logicPos;
    uint64_t bufferAddr; /* UB byte offset */
    uint32_t dataLen;    /* bytes */
    uint64_t absAddr;
};

template <typename T>
class LocalTensor {
public:
    typedef T PrimType;
    TBufAddr address_;

    LocalTensor() : address_{static_cast<uint8_t>(TPosition::VECCALC), 0, 0, 0}
    {
    }
    /* `len` in elements */
    LocalTensor(TPosition pos, uint32_t addr, uint32_t len)
        : address_{static_cast<uint8_t>(pos), addr, static_cast<uint32_t>(len * sizeof(T)), 0}
    {
    }
    uint64_t GetPhyAddr() const
    {
        return address_.bufferAddr;
    }
    uint64_t GetPhyAddr(uint32_t offset) const
    {
        return address_.bufferAddr + offset * sizeof(T);
    }
    uint32_t GetSize() const
    {
        return static_cast<uint32_t>(address_.dataLen / sizeof(T));
    }
    uint32_t GetLength() const
    {
        return address_.dataLen;
    }
    TPosition GetPosition() const
    {
        return static_cast<TPosition>(address_.logicPos);
    }
    void SetSize(uint32_t n)
    {
        address_.dataLen = static_cast<uint32_t>(n * sizeof(T));
    }
    void SetAddrWithOffset(LocalTensor<T> &src, uint32_t offset)
    {
        *this = src[offset];
    }
    LocalTensor operator[](uint32_t offset) const
    {
        LocalTensor t = *this;
        t.address_.bufferAddr += offset * sizeof(T);
        t.address_.dataLen = offset * sizeof(T) < address_.dataLen
                                 ? static_cast<uint32_t>(address_.dataLen - offset * sizeof(T))
                                 : 0;
        return t;
    }
    /* the element pointer in the calling block's UB */
    T *data(uint32_t index = 0) const
    {
        return reinterpret_cast<T *>(
            aclshmemi_detail::ub_at(address_.bufferAddr + index * sizeof(T), sizeof(T), "LocalTensor"));
    }
    T GetValue(uint32_t index) const
    {
        T v;
        std::memcpy(&v, data(index), sizeof(T));
        return v;
    }
    void SetValue(uint32_t index, T value) const
    {
        std::memcpy(data(index), &value, sizeof(T));
    }
    T &operator()(uint32_t index) const
    {
        return *data(index);
    }
    template <typename U>
    LocalTensor<U> ReinterpretCast() const
    {
        LocalTensor<U> t;
        t.address_ = address_;
        return t;
    }
};

template <typename T>
class GlobalTensor {
public:
    typedef T PrimType;
    T *address_ = nullptr;
    uint64_t size_ = 0;

    void SetGlobalBuffer(__gm__ T *buffer, uint64_t size)
    {
        address_ = buffer;
        size_ = size;
    }
    void SetGlobalBuffer(__gm__ T *buffer)
    {
        address_ = buffer;
        size_ = 0;
    }
    __gm__ T *GetPhyAddr() const
    {
        return address_;
    }
    __gm__ T *GetPhyAddr(uint64_t offset) const
    {
        return address_ + offset;
    }
    uint64_t GetSize() const
    {
        return size_;
    }
    void SetL2CacheHint(CacheMode)
    {
    }
    GlobalTensor operator[](uint64_t offset) const
    {
        GlobalTensor t;
        t.address_ = address_ + offset;
        t.size_ = size_ > offset ? size_ - offset : 0;
        return t;
    }
    T GetValue(uint64_t index) const
    {
        return address_[index];
    }
    void SetValue(uint64_t index, T value) const
    {
        address_[index] = value;
    }
    T &operator()(uint64_t index) const
    {
        return address_[index];
    }
};

/* ---- UB allocation: TPipe, TBuf, TQue ---- */
template <TPosition P = TPosition::VECCALC>
class TBuf {
public:
    uint64_t addr_ = 0;
    uint32_t len_ = 0;

    template <typename T>
    LocalTensor<T> Get(uint32_t count) const
    {
        LocalTensor<T> t;
        t.address_.logicPos = static_cast<uint8_t>(P);
        t.address_.bufferAddr = addr_;
        t.address_.dataLen = static_cast<uint32_t>(count * sizeof(T));
        return t;
    }
    template <typename T>
    LocalTensor<T> Get() const
    {
        return Get<T>(static_cast<uint32_t>(len_ / sizeof(T)));
    }
    template <typename T>
    LocalTensor<T> GetWithOffset(uint32_t count, uint32_t byte_offset) const
    {
        LocalTensor<T> t = Get<T>(count);
        t.address_.bufferAddr += byte_offset;
        return t;
    }
};

template <TPosition P, int32_t DEPTH = 1>
class TQue {
public:
    static constexpr int32_t MAX_BUFS = 8;
    uint64_t addr_[MAX_BUFS] = {};
    uint32_t len_ = 0;
    int32_t num_ = 0;
    int32_t next_alloc_ = 0;
    bool busy_[MAX_BUFS] = {};
    uint64_t fifo_[MAX_BUFS] = {};
    int32_t head_ = 0, count_ = 0;

    /* The queue's buffers are handed out in turn, each until FreeTensor gives it back (AscendC's
       allocator): a buffer still allocated is never handed out again. */
    template <typename T>
    LocalTensor<T> AllocTensor()
    {
        if (num_ == 0) {
            throw std::runtime_error("TQue::AllocTensor before TPipe::InitBuffer");
        }
        int32_t i = next_alloc_;
        for (int32_t tried = 0; busy_[i]; tried++) {
            if (tried == num_) {
                throw std::runtime_error("TQue::AllocTensor: every buffer of the queue is allocated "
                                         "(FreeTensor one first)");
            }
            i = (i + 1) % num_;
        }
        busy_[i] = true;
        next_alloc_ = (i + 1) % num_;
        LocalTensor<T> t;
        t.address_.logicPos = static_cast<uint8_t>(P);
        t.address_.bufferAddr = addr_[i];
        t.address_.dataLen = len_;
        return t;
    }
    template <typename T>
    void FreeTensor(LocalTensor<T> &t)
    {
        for (int32_t i = 0; i < num_; i++) {
            if (t.address_.bufferAddr >= addr_[i] && t.address_.bufferAddr < addr_[i] + len_) {
                if (!busy_[i]) {
                    throw std::runtime_error("TQue::FreeTensor of a buffer that is not allocated");
                }
                busy_[i] = false;
                return;
            }
        }
        throw std::runtime_error("TQue::FreeTensor of a tensor that is not this queue's");
    }
    template <typename T>
    bool EnQue(const LocalTensor<T> &t)
    {
        if (count_ == MAX_BUFS) {
            return false;
        }
        fifo_[(head_ + count_) % MAX_BUFS] = t.address_.bufferAddr;
        count_++;
        return true;
    }
    template <typename T>
    LocalTensor<T> DeQue()
    {
        if (count_ == 0) {
            throw std::runtime_error("TQue::DeQue on an empty queue");
        }
        LocalTensor<T> t;
        t.address_.logicPos = static_cast<uint8_t>(P);
        t.address_.bufferAddr = fifo_[head_];
        t.address_.dataLen = len_;
        head_ = (head_ + 1) % MAX_BUFS;
        count_--;
        return t;
    }
    bool VacantInQue() const
    {
        return count_ < MAX_BUFS;
    }
    bool HasTensorInQue() const
    {
        return count_ > 0;
    }
};

template <TPosition SRC, TPosition DST, int32_t DEPTH = 1>
class TQueBind : public TQue<SRC, DEPTH> {
};

/* Hands out UB from offset 0 upwards, 32-byte aligned, per pipe (a kernel declares one). */
class TPipe {
public:
    uint64_t next_ = 0;

    template <TPosition P>
    bool InitBuffer(TBuf<P> &buf, uint32_t bytes)
    {
        buf.addr_ = take(bytes);
        buf.len_ = bytes;
        return true;
    }
    template <TPosition P, int32_t D>
    bool InitBuffer(TQue<P, D> &que, uint8_t num, uint32_t bytes)
    {
        if (num == 0 || num > TQue<P, D>::MAX_BUFS) {
            throw std::runtime_error("TPipe::InitBuffer: a queue holds 1 to 8 buffers here");
        }
        for (uint8_t i = 0; i < num; i++) {
            que.addr_[i] = take(bytes);
            que.busy_[i] = false;
        }
        que.next_alloc_ = 0;
        que.len_ = bytes;
        que.num_ = num;
        return true;
    }
    void Reset()
    {
        next_ = 0;
    }
    void Destroy()
    {
        next_ = 0;
    }

private:
    uint64_t take(uint32_t bytes)
    {
        uint64_t at = next_;
        next_ = aclshmemi_detail::round_up(next_ + bytes, 32);
        if (next_ > ACLSHMEM_UB_SIZE) {
            throw std::runtime_error("TPipe::InitBuffer: the buffers exceed the 192 KiB UB");
        }
        return at;
    }
};

/* ---- data movement ---- */
struct DataCopyParams {
    uint16_t blockCount = 1;
    uint16_t blockLen = 0; /* in 32-byte blocks */
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t src_stride, uint16_t dst_stride)
        : blockCount(count), blockLen(len), srcStride(src_stride), dstStride(dst_stride)
    {
    }
};

struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0; /* bytes per row */
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t src_stride, uint32_t dst_stride, uint32_t r)
        : blockCount(count), blockLen(len), srcStride(src_stride), dstStride(dst_stride), rsv(r)
    {
    }
};

template <typename T>
struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = T();
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
        : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value)
    {
    }
};

/* How DataCopyPad lays rows out in UB (Ascend950): Normal, each row starts on a 32-byte block and the
   UB-side stride counts 32-byte blocks; Compact, rows follow each other byte for byte and the
   UB-side stride counts bytes */
enum class PaddingMode : uint8_t { Normal = 0, Compact };

namespace aclshmemi_detail {
/* distance in UB between the starts of two rows of blockLen bytes with the UB-side stride */
template <PaddingMode mode>
inline uint64_t ub_row_bytes(uint32_t block_len, uint32_t ub_stride)
{
    return mode == PaddingMode::Compact ? uint64_t(block_len) + ub_stride
                                        : round_up(block_len, 32) + uint64_t(ub_stride) * 32;
}
} // namespace aclshmemi_detail

/* GM -> UB: row i read at GM byte i * (blockLen + srcStride), written at UB byte
   i * (roundup(blockLen, 32) + dstStride * 32) (Compact: i * (blockLen + dstStride)) */
template <typename T, PaddingMode mode = PaddingMode::Normal>
inline void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const DataCopyExtParams &p,
                        const DataCopyPadExtParams<T> &pad = DataCopyPadExtParams<T>())
{
    const uint8_t *g = reinterpret_cast<const uint8_t *>(src.GetPhyAddr());
    uint64_t ub_row = aclshmemi_detail::ub_row_bytes<mode>(p.blockLen, p.dstStride);
    for (uint32_t i = 0; i < p.blockCount; i++) {
        uint8_t *u = aclshmemi_detail::ub_at(dst.GetPhyAddr() + i * ub_row, p.blockLen, "DataCopyPad");
        std::memcpy(u, g + uint64_t(i) * (p.blockLen + p.srcStride), p.blockLen);
        if (pad.isPad && mode == PaddingMode::Normal) {
            uint64_t padded = aclshmemi_detail::round_up(p.blockLen, 32);
            T *row = reinterpret_cast<T *>(u);
            for (uint64_t b = p.blockLen; b + sizeof(T) <= padded; b += sizeof(T)) {
                row[b / sizeof(T)] = pad.paddingValue;
            }
        }
    }
}

/* UB -> GM: row i read at UB byte i * (roundup(blockLen, 32) + srcStride * 32) (Compact:
   i * (blockLen + srcStride)), written at GM byte i * (blockLen + dstStride) */
template <typename T, PaddingMode mode = PaddingMode::Normal>
inline void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyExtParams &p)
{
    uint8_t *g = reinterpret_cast<uint8_t *>(dst.GetPhyAddr());
    uint64_t ub_row = aclshmemi_detail::ub_row_bytes<mode>(p.blockLen, p.srcStride);
    for (uint32_t i = 0; i < p.blockCount; i++) {
        const uint8_t *u = aclshmemi_detail::ub_at(src.GetPhyAddr() + i * ub_row, p.blockLen, "DataCopyPad");
        std::memcpy(g + uint64_t(i) * (p.blockLen + p.dstStride), u, p.blockLen);
    }
}

template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, uint32_t count)
{
    std::memcpy(aclshmemi_detail::ub_at(dst.GetPhyAddr(), uint64_t(count) * sizeof(T), "DataCopy"),
                src.GetPhyAddr(), uint64_t(count) * sizeof(T));
}
template <typename T>
inline void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, uint32_t count)
{
    std::memcpy(dst.GetPhyAddr(),
                aclshmemi_detail::ub_at(src.GetPhyAddr(), uint64_t(count) * sizeof(T), "DataCopy"),
                uint64_t(count) * sizeof(T));
}
template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src, uint32_t count)
{
    std::memmove(aclshmemi_detail::ub_at(dst.GetPhyAddr(), uint64_t(count) * sizeof(T), "DataCopy"),
                 aclshmemi_detail::ub_at(src.GetPhyAddr(), uint64_t(count) * sizeof(T), "DataCopy"),
                 uint64_t(count) * sizeof(T));
}
/* blockLen and strides in 32-byte blocks on both sides */
template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const DataCopyParams &p)
{
    const uint8_t *g = reinterpret_cast<const uint8_t *>(src.GetPhyAddr());
    for (uint32_t i = 0; i < p.blockCount; i++) {
        uint64_t len = uint64_t(p.blockLen) * 32;
        uint8_t *u = aclshmemi_detail::ub_at(dst.GetPhyAddr() + i * (len + p.dstStride * 32ull), len, "DataCopy");
        std::memcpy(u, g + i * (len + p.srcStride * 32ull), len);
    }
}
template <typename T>
inline void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyParams &p)
{
    uint8_t *g = reinterpret_cast<uint8_t *>(dst.GetPhyAddr());
    for (uint32_t i = 0; i < p.blockCount; i++) {
        uint64_t len = uint64_t(p.blockLen) * 32;
        const uint8_t *u =
            aclshmemi_detail::ub_at(src.GetPhyAddr() + i * (len + p.srcStride * 32ull), len, "DataCopy");
        std::memcpy(g + i * (len + p.dstStride * 32ull), u, len);
    }
}

/* ---- element-wise compute on UB tensors (the few the examples use) ---- */
template <typename T>
inline void Add(const LocalTensor<T> &z, const LocalTensor<T> &x, const LocalTensor<T> &y, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        z.SetValue(i, static_cast<T>(x.GetValue(i) + y.GetValue(i)));
    }
}
template <typename T>
inline void Sub(const LocalTensor<T> &z, const LocalTensor<T> &x, const LocalTensor<T> &y, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        z.SetValue(i, static_cast<T>(x.GetValue(i) - y.GetValue(i)));
    }
}
template <typename T>
inline void Mul(const LocalTensor<T> &z, const LocalTensor<T> &x, const LocalTensor<T> &y, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        z.SetValue(i, static_cast<T>(x.GetValue(i) * y.GetValue(i)));
    }
}
template <typename T, typename U>
inline void Adds(const LocalTensor<T> &z, const LocalTensor<T> &x, U scalar, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        z.SetValue(i, static_cast<T>(x.GetValue(i) + scalar));
    }
}
template <typename T, typename U>
inline void Muls(const LocalTensor<T> &z, const LocalTensor<T> &x, U scalar, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        z.SetValue(i, static_cast<T>(x.GetValue(i) * scalar));
    }
}
template <typename T, typename U>
inline void Duplicate(const LocalTensor<T> &z, U scalar, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        z.SetValue(i, static_cast<T>(scalar));
    }
}

/* ---- cache maintenance: a full fence (every GM access is coherent on the CPU) ---- */
template <typename T, CacheLine C, DcciDst D>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T> &)
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
template <typename T, CacheLine C, DcciDst D>
inline void DataCacheCleanAndInvalid(const LocalTensor<T> &)
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

template <typename A, typename B>
struct IsSameType {
    static constexpr bool value = std::is_same<A, B>::value;
};

} // namespace AscendC

#define ASCENDC_ASSERT(cond, behavior)                                                                           \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            behavior;                                                                                          \
            throw std::runtime_error("ASCENDC_ASSERT failed: " #cond);                                         \
        }                                                                                                      \
    } while (0)

#endif /* ACLSHMEM_KERNEL_OPERATOR_H */
