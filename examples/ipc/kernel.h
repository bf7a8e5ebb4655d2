// kernel.h - types and constants shared by both tcb variants and the benchmark.
//
// A user-space model of the kernel objects around an L4-style IPC fast path.
// Nothing in here depends on how `tcb` is implemented (mixin hierarchy or
// flat class); both tcb_mixin.h and tcb_flat.h include this header.
#pragma once

#include <cstddef>
#include <cstdint>

// Size and alignment of one entry in the linear TCB array.  The tcb object
// sits at the start of the block; the rest of the block is the thread's
// kernel stack (as in most L4 kernels).  Must be a power of two.
#ifndef TCB_STRIDE
#define TCB_STRIDE 2048
#endif

using word_t = std::uint64_t;

class tcb;
struct cpu_context;

constexpr word_t tcb_stride = TCB_STRIDE;
static_assert((tcb_stride & (tcb_stride - 1)) == 0, "TCB_STRIDE must be a power of two");

constexpr unsigned num_mrs = 8;   // message registers kept in the TCB
constexpr unsigned num_brs = 4;   // buffer registers (string receive buffers)

// Thread states.
enum thread_state_t : std::uint32_t {
    TS_ABORTED = 0,
    TS_RUNNING = 1,
    TS_READY = 2,     // runnable, in the ready queue
    TS_WAITING = 3,   // blocked in the receive phase (partner_tid: whom from)
    TS_POLLING = 4,   // blocked in the send phase (in the partner's send queue)
    TS_HALTED = 5,
};

// Thread ids.
constexpr word_t tid_nil = 0;
constexpr word_t tid_any = ~word_t(0);

// Message tag, passed to ipc() in a register and delivered in MR0
// (L4 V4 style): bits 0-5 untyped words, bit 15 send-only, bits 16-31 label.
constexpr unsigned ipc_tag_words_mask = 0x3f;
constexpr unsigned ipc_tag_send_only = 1u << 15;
constexpr unsigned ipc_tag_label_shift = 16;

// 16-bit relative timeouts (0 = never).
constexpr std::uint16_t timeout_never = 0;

// thread_flags
constexpr std::uint32_t tf_cancel_ipc = 1u << 0;
constexpr std::uint32_t tf_abort_ipc = 1u << 1;
constexpr std::uint32_t tf_suspended = 1u << 2;
constexpr std::uint32_t tf_kdb_break = 1u << 8;

// resource_bits: per-thread resources that need work on a thread switch.
constexpr std::uint32_t res_fpu = 1u << 0;
constexpr std::uint32_t res_debug_regs = 1u << 1;
constexpr std::uint32_t res_iopb = 1u << 2;

constexpr std::uint32_t tcb_magic_value = 0x7463624bu;   // "tcbK"
constexpr std::uint32_t no_irq = 0xffffffffu;

// ipc() results (the path taken through the kernel).
enum ipc_result : int {
    IPC_CALL = 1,           // fast path: receiver was waiting, direct switch
    IPC_SEND = 2,           // send-only to a waiting receiver: wake it (ready queue)
    IPC_BLOCKED = 3,        // receiver not ready: sender queued, switch to next ready
    IPC_RECV = 4,           // receive-only: message taken from the send queue
    IPC_RECV_BLOCKED = 5,   // receive-only, nobody sending: block (open wait)
    IPC_ERR_NOT_CURRENT = -1,
    IPC_ERR_CANCELED = -2,
    IPC_ERR_IDLE = -3,      // nothing left to run (would idle)
    IPC_ERR_CPU = -4,       // cross-CPU IPC is not modelled
};

// A simulated address space.
struct space {
    word_t pdir_phys;        // physical address of the page directory
    word_t asid;
    std::uint32_t space_id;
    std::uint32_t thread_count;
    word_t kip_area;
    word_t utcb_area;
};

// Simulated per-CPU kernel state (registers, scheduler queue, clock).
struct cpu_context {
    tcb* current;
    space* current_space;
    word_t cr3;              // active page directory
    word_t kernel_sp;        // kernel stack pointer register
    word_t esp0;             // TSS: kernel stack top of the current thread
    word_t regs[4];          // callee-saved registers (pushed on a switch)
    tcb* ready_head;         // single-priority FIFO ready queue
    tcb* ready_tail;
    std::uint64_t clock;     // simulated time, one tick per kernel entry
    std::uint64_t space_switches;
    std::uint16_t cpu_id;
};

// Accumulates a deterministic digest of the values the kernel debugger
// prints (tcb::dump).  Pointers are reduced to null/non-null so that the
// digest does not depend on where things are allocated.
struct kdb_sink {
    word_t hash = 0xcbf29ce484222325ull;
    void put(word_t v) {
        for (int i = 0; i < 8; ++i) {
            hash ^= (v >> (8 * i)) & 0xff;
            hash *= 0x100000001b3ull;
        }
    }
    void put_ptr(const void* p) { put(p != nullptr ? 1 : 0); }
    void put_str(const char* s, std::size_t max) {
        for (std::size_t i = 0; i < max && s[i] != '\0'; ++i)
            put(static_cast<unsigned char>(s[i]));
    }
};

// Base of the TCB block that contains an address inside it (TCBs and kernel
// stacks live in TCB_STRIDE-aligned blocks).
inline word_t tcb_block_base(const void* p) {
    return reinterpret_cast<word_t>(p) & ~(tcb_stride - 1);
}
inline word_t tcb_stack_top(const void* p) {
    return tcb_block_base(p) + tcb_stride;
}
