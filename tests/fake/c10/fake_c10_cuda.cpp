// A stand-in for torch's libc10_cuda.so, for the CPU tests of vramtrace's torch trace tracker
// (lib/hooks/vt_torch.c): the allocator object c10::cuda::CUDACachingAllocator::allocator, a native
// caching allocator with torch 2.11's segment rules (2 MiB small segments for requests up to 1 MiB,
// 20 MiB ones for requests under 10 MiB, else the request rounded to 2 MiB; blocks rounded to 512 bytes,
// split, free neighbours merged) taking its segments from the fake CUDA runtime, or, with expandable
// segments, growing one reserved range a pool by mapping pages of physical memory, and telling every
// attached trace tracker what it does, with torch 2.11's TraceEntry, as torch does.
// As torch's, its classes export no names: the allocator's vtable is laid out as 2.11's (c10::Allocator,
// DeviceAllocator, then CUDAAllocator's own virtuals: attachAllocatorTraceTracker at slot 44, name() last
// at 49), with c10::Allocator::is_simple_data_ptr the one exported function it points to.
// VRAMTRACE_FAKE_C10 picks a variant: expandable (expandable segments), pluggable (the allocator object
// is another class, named "pluggable", whose attachAllocatorTraceTracker must never be called: it
// aborts), layout (the entries handed to trackers are laid out as no torch lays them out), vtable (the
// native allocator's vtable has a slot more, as another version's would). Programs call the extern "C"
// functions at the end; the fake torch (tests/fake/torch) does with VRAMTRACE_FAKE_TORCH=native.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#pragma GCC visibility push(hidden)

namespace c10 {

struct DataPtr;

// c10/core/Allocator.h's virtuals, in order: slots 0 to 5.
class Allocator {
  public:
    virtual ~Allocator() {}
    virtual void *allocate(size_t n) = 0;
    FAKE_EXPORT virtual bool is_simple_data_ptr(const DataPtr &ptr) const;
    virtual void *raw_deleter() const { return nullptr; }
    virtual void copy_data(void *dest, const void *src, size_t count) const = 0;
};

FAKE_EXPORT bool Allocator::is_simple_data_ptr(const DataPtr &) const
{
    return false;
}

// c10/core/CachingDeviceAllocator.h's: slots 6 to 12.
class DeviceAllocator : public Allocator {
  public:
    virtual bool initialized() = 0;
    virtual void emptyCache() = 0;
    virtual void recordStream() {}
    virtual void getDeviceStats() {}
    virtual void resetAccumulatedStats() {}
    virtual void resetPeakStats() {}
    virtual void getMemoryInfo() {}
    void *allocate(size_t) override { return nullptr; }
    void copy_data(void *, const void *, size_t) const override {}
};

namespace cuda {
namespace CUDACachingAllocator {

typedef std::pair<unsigned long long, unsigned long long> MempoolId_t;

struct TraceEntry {
    enum Action { ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP, SNAPSHOT, OOM };
    Action action_;
    int8_t device_;
    size_t addr_;
    std::shared_ptr<void> context_;
    void *stream_;
    size_t size_;
    MempoolId_t mempool_;
    uint64_t time_;
    std::string compile_context_;
    std::string user_metadata_;
};

// No torch lays an entry out like this: what a tracker reading 2.11's offsets must refuse.
struct OtherEntry {
    int action_;
    int device_;
    size_t size_;
    size_t addr_;
    char rest[64];
};

typedef std::function<void(const TraceEntry &)> AllocatorTraceTracker;

// Virtuals of 2.11's CUDAAllocator the fake has no use for, each a slot.
#define FAKE_SLOT(n) \
    virtual void unused_##n() {}

// c10/cuda/CUDACachingAllocator.h's own, slots 13 to 49 (the fake's totals are not virtuals: torch
// spends no slot on them).
class CUDAAllocator : public DeviceAllocator {
  public:
    virtual void *raw_alloc(size_t nbytes) = 0;
    FAKE_SLOT(14)
    virtual void raw_delete(void *ptr) = 0;
    virtual void init(int device_count) = 0;
    FAKE_SLOT(17) FAKE_SLOT(18) FAKE_SLOT(19) FAKE_SLOT(20) FAKE_SLOT(21) FAKE_SLOT(22) FAKE_SLOT(23)
    FAKE_SLOT(24) FAKE_SLOT(25) FAKE_SLOT(26) FAKE_SLOT(27) FAKE_SLOT(28) FAKE_SLOT(29) FAKE_SLOT(30)
    FAKE_SLOT(31) FAKE_SLOT(32) FAKE_SLOT(33) FAKE_SLOT(34) FAKE_SLOT(35) FAKE_SLOT(36) FAKE_SLOT(37)
    FAKE_SLOT(38) FAKE_SLOT(39) FAKE_SLOT(40) FAKE_SLOT(41) FAKE_SLOT(42) FAKE_SLOT(43)
    virtual void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) = 0;
    FAKE_SLOT(45) FAKE_SLOT(46) FAKE_SLOT(47) FAKE_SLOT(48)
    virtual std::string name() = 0;

    bool native = false;
};

FAKE_EXPORT std::atomic<CUDAAllocator *> allocator;

namespace Native {

static const size_t MiB = 1 << 20;

struct Block {
    size_t addr, size;
    bool used;
    size_t requested; // what was asked for: the trace entries' size
};

struct Segment {
    size_t addr, size;
    bool small;
    std::vector<Block> blocks; // in address order
};

class DeviceCachingAllocator {
  public:
    DeviceCachingAllocator(bool expandable, bool other_layout) : expandable_(expandable), other_layout_(other_layout) {}

    void attach(AllocatorTraceTracker t)
    {
        std::lock_guard<std::recursive_mutex> g(mu_);
        trackers_.push_back(std::move(t));
    }

    void *malloc(size_t nbytes)
    {
        std::lock_guard<std::recursive_mutex> g(mu_);
        size_t size = nbytes < 512 ? 512 : (nbytes + 511) / 512 * 512;
        bool small = size <= MiB;
        for (auto &s : segs_)
            if (s.small == small)
                for (size_t i = 0; i < s.blocks.size(); i++)
                    if (!s.blocks[i].used && s.blocks[i].size >= size)
                        return take(s, i, size, nbytes);
        Segment *s = expandable_ ? grow(small, size) : fresh(small, size);
        if (!s)
            return nullptr;
        for (size_t i = 0; i < s->blocks.size(); i++)
            if (!s->blocks[i].used && s->blocks[i].size >= size)
                return take(*s, i, size, nbytes);
        return nullptr;
    }

    void free(void *p)
    {
        std::lock_guard<std::recursive_mutex> g(mu_);
        for (auto &s : segs_)
            for (size_t i = 0; i < s.blocks.size(); i++) {
                Block &b = s.blocks[i];
                if (b.addr != (size_t)p || !b.used)
                    continue;
                trace(TraceEntry::FREE_REQUESTED, b.addr, b.requested);
                allocated_ -= b.size;
                b.used = false;
                trace(TraceEntry::FREE_COMPLETED, b.addr, b.requested);
                if (i + 1 < s.blocks.size() && !s.blocks[i + 1].used) {
                    b.size += s.blocks[i + 1].size;
                    s.blocks.erase(s.blocks.begin() + (long)i + 1);
                }
                if (i > 0 && !s.blocks[i - 1].used) {
                    s.blocks[i - 1].size += s.blocks[i].size;
                    s.blocks.erase(s.blocks.begin() + (long)i);
                }
                return;
            }
    }

    void empty_cache()
    {
        std::lock_guard<std::recursive_mutex> g(mu_);
        for (size_t k = 0; k < segs_.size();) {
            Segment &s = segs_[k];
            if (expandable_) {
                // The free pages at the end of the mapped range go back.
                Block &last = s.blocks.back();
                size_t page = s.small ? 2 * MiB : 20 * MiB;
                size_t keep = last.used ? s.size : (last.addr - s.addr + page - 1) / page * page;
                if (keep < s.size) {
                    size_t from = s.addr + keep, len = s.size - keep;
                    trace(TraceEntry::SEGMENT_UNMAP, from, len);
                    for (size_t off = 0; off < len; off += page) {
                        cuMemUnmap(from + off, page);
                        cuMemRelease(handles_[from + off]);
                        handles_.erase(from + off);
                    }
                    reserved_ -= len;
                    s.size = keep;
                    last.size = keep - (last.addr - s.addr);
                    if (!last.size)
                        s.blocks.pop_back();
                    if (s.blocks.empty())
                        s.blocks.push_back(Block{s.addr, 0, false, 0});
                }
                k++;
                continue;
            }
            if (s.blocks.size() == 1 && !s.blocks[0].used) {
                trace(TraceEntry::SEGMENT_FREE, s.addr, s.size);
                cudaFree((void *)s.addr);
                reserved_ -= s.size;
                segs_.erase(segs_.begin() + (long)k);
            } else {
                k++;
            }
        }
    }

    size_t allocated_ = 0, reserved_ = 0;

  private:
    void trace(TraceEntry::Action a, size_t addr, size_t size)
    {
        if (trackers_.empty())
            return;
        TraceEntry te{a, 0, addr, nullptr, nullptr, size, MempoolId_t{0, 0}, 0, "N/A", ""};
        OtherEntry other{};
        other.action_ = (int)a;
        other.size_ = addr; // the fields swapped: a reader at 2.11's offsets sees garbage
        other.addr_ = size;
        const TraceEntry &given = other_layout_ ? *reinterpret_cast<const TraceEntry *>(&other) : te;
        for (const auto &cb : trackers_)
            cb(given);
    }

    // As torch's should_split: what is left is split off when a small block could be made of it (the
    // small pool, and expandable segments), else only when it is more than 1 MiB; the block is counted
    // whole, the entry says what was asked for.
    void *take(Segment &s, size_t i, size_t size, size_t nbytes)
    {
        Block &b = s.blocks[i];
        size_t rest_size = b.size - size;
        if (s.small || expandable_ ? rest_size >= 512 : rest_size > MiB) {
            Block rest{b.addr + size, rest_size, false, 0};
            b.size = size;
            s.blocks.insert(s.blocks.begin() + (long)i + 1, rest);
        }
        Block &got = s.blocks[i];
        got.used = true;
        got.requested = nbytes;
        allocated_ += got.size;
        trace(TraceEntry::ALLOC, got.addr, nbytes);
        return (void *)got.addr;
    }

    Segment *fresh(bool small, size_t size)
    {
        size_t seg = small ? 2 * MiB : size < 10 * MiB ? 20 * MiB : (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
        void *p = nullptr;
        if (cudaMalloc(&p, seg) != cudaSuccess)
            return nullptr;
        reserved_ += seg;
        trace(TraceEntry::SEGMENT_ALLOC, (size_t)p, seg);
        segs_.push_back(Segment{(size_t)p, seg, small, {Block{(size_t)p, seg, false, 0}}});
        return &segs_.back();
    }

    // One reserved range a pool, mapped page by page as it grows.
    Segment *grow(bool small, size_t size)
    {
        size_t page = small ? 2 * MiB : 20 * MiB;
        Segment *s = nullptr;
        for (auto &x : segs_)
            if (x.small == small)
                s = &x;
        if (!s) {
            CUdeviceptr base = 0;
            if (cuMemAddressReserve(&base, 64 * 20 * MiB, 0, 0, 0) != CUDA_SUCCESS)
                return nullptr;
            segs_.push_back(Segment{(size_t)base, 0, small, {}});
            s = &segs_.back();
        }
        size_t free_tail = !s->blocks.empty() && !s->blocks.back().used ? s->blocks.back().size : 0;
        size_t need = (size - free_tail + page - 1) / page * page;
        size_t from = s->addr + s->size;
        for (size_t off = 0; off < need; off += page) {
            CUmemAllocationProp prop;
            memset(&prop, 0, sizeof prop);
            prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
            prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            prop.location.id = 0;
            CUmemGenericAllocationHandle h = 0;
            if (cuMemCreate(&h, page, &prop, 0) != CUDA_SUCCESS || cuMemMap(from + off, page, 0, h, 0) != CUDA_SUCCESS)
                return nullptr;
            CUmemAccessDesc acc;
            memset(&acc, 0, sizeof acc);
            acc.location = prop.location;
            acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
            cuMemSetAccess(from + off, page, &acc, 1);
            handles_.push_back(from + off, h);
        }
        s->size += need;
        reserved_ += need;
        trace(TraceEntry::SEGMENT_MAP, from, need);
        if (free_tail)
            s->blocks.back().size += need;
        else
            s->blocks.push_back(Block{from, need, false, 0});
        return s;
    }

    struct Handles {
        std::vector<std::pair<size_t, CUmemGenericAllocationHandle>> v;
        void push_back(size_t a, CUmemGenericAllocationHandle h) { v.emplace_back(a, h); }
        CUmemGenericAllocationHandle operator[](size_t a)
        {
            for (auto &x : v)
                if (x.first == a)
                    return x.second;
            return 0;
        }
        void erase(size_t a)
        {
            for (size_t i = 0; i < v.size(); i++)
                if (v[i].first == a) {
                    v.erase(v.begin() + (long)i);
                    return;
                }
        }
    };

    bool expandable_, other_layout_;
    std::recursive_mutex mu_;
    std::vector<AllocatorTraceTracker> trackers_;
    std::vector<Segment> segs_;
    Handles handles_;
};

class NativeCachingAllocator : public CUDAAllocator {
  public:
    void *raw_alloc(size_t nbytes) override
    {
        return devs_.empty() ? nullptr : devs_[0]->malloc(nbytes);
    }
    void raw_delete(void *ptr) override
    {
        if (!devs_.empty())
            devs_[0]->free(ptr);
    }
    void init(int device_count) override
    {
        const char *mode = getenv("VRAMTRACE_FAKE_C10");
        bool expandable = mode && !strcmp(mode, "expandable"), other = mode && !strcmp(mode, "layout");
        while ((int)devs_.size() < device_count)
            devs_.emplace_back(new DeviceCachingAllocator(expandable, other));
    }
    bool initialized() override { return !devs_.empty(); }
    void emptyCache() override
    {
        for (auto &d : devs_)
            d->empty_cache();
    }
    // As torch's: one tracker for each device allocator there is, none before init().
    void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) override
    {
        for (auto &d : devs_)
            d->attach(tracker);
    }
    std::string name() override { return "native"; }
    size_t allocated_bytes() { return devs_.empty() ? 0 : devs_[0]->allocated_; }
    size_t reserved_bytes() { return devs_.empty() ? 0 : devs_[0]->reserved_; }

  private:
    std::vector<std::unique_ptr<DeviceCachingAllocator>> devs_;
};

// Another version's vtable: one virtual more at its end.
class NativeCachingAllocatorPlus : public NativeCachingAllocator {
  public:
    virtual void one_more() {}
};

} // namespace Native

// An allocator of another kind (a pluggable one): a cudaMalloc a tensor, and no trace tracker.
class CUDAPluggableAllocator : public CUDAAllocator {
  public:
    void *raw_alloc(size_t nbytes) override
    {
        void *p = nullptr;
        if (cudaMalloc(&p, nbytes) != cudaSuccess)
            return nullptr;
        allocated_ += nbytes;
        sizes_.emplace_back(p, nbytes);
        return p;
    }
    void raw_delete(void *ptr) override
    {
        for (size_t i = 0; i < sizes_.size(); i++)
            if (sizes_[i].first == ptr) {
                allocated_ -= sizes_[i].second;
                sizes_.erase(sizes_.begin() + (long)i);
                cudaFree(ptr);
                return;
            }
    }
    void init(int) override { up_ = true; }
    bool initialized() override { return up_; }
    void emptyCache() override {}
    void attachAllocatorTraceTracker(AllocatorTraceTracker) override { abort(); }
    std::string name() override { return "pluggable"; }
    size_t allocated_bytes() { return allocated_; }
    size_t reserved_bytes() { return allocated_; }

  private:
    bool up_ = false;
    size_t allocated_ = 0;
    std::vector<std::pair<void *, size_t>> sizes_;
};

// Set when the library is loaded, as torch's BackendStaticInitializer does.
static struct Backend {
    Backend()
    {
        const char *mode = getenv("VRAMTRACE_FAKE_C10");
        CUDAAllocator *a;
        if (mode && !strcmp(mode, "pluggable"))
            a = new CUDAPluggableAllocator();
        else if (mode && !strcmp(mode, "vtable"))
            a = new Native::NativeCachingAllocatorPlus();
        else
            a = new Native::NativeCachingAllocator();
        a->native = !mode || strcmp(mode, "pluggable");
        allocator.store(a);
    }
} backend;

} // namespace CUDACachingAllocator
} // namespace cuda
} // namespace c10

#pragma GCC visibility pop

using c10::cuda::CUDACachingAllocator::allocator;
using c10::cuda::CUDACachingAllocator::CUDAPluggableAllocator;
using c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator;

// What a program calls (the fake torch through ctypes, or a C program): the device is initialised
// lazily, at the first allocation, as torch initialises CUDA.
extern "C" void *fake_c10_malloc(size_t nbytes)
{
    if (!allocator.load()->initialized())
        allocator.load()->init(1);
    return allocator.load()->raw_alloc(nbytes);
}

extern "C" void fake_c10_free(void *p)
{
    allocator.load()->raw_delete(p);
}

extern "C" void fake_c10_empty_cache(void)
{
    allocator.load()->emptyCache();
}

extern "C" unsigned long long fake_c10_allocated(void)
{
    auto *a = allocator.load();
    return a->native ? static_cast<NativeCachingAllocator *>(a)->allocated_bytes()
                     : static_cast<CUDAPluggableAllocator *>(a)->allocated_bytes();
}

extern "C" unsigned long long fake_c10_reserved(void)
{
    auto *a = allocator.load();
    return a->native ? static_cast<NativeCachingAllocator *>(a)->reserved_bytes()
                     : static_cast<CUDAPluggableAllocator *>(a)->reserved_bytes();
}
