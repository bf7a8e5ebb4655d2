// pingpong.cc - user-space model of an L4-style IPC fast path.
//
// Two threads in different address spaces (ping, pong) exchange short
// messages through ipc(), the model of the kernel's IPC system call.  The
// TCBs live in a linear array of TCB_STRIDE-aligned blocks (tcb_array); the
// part of a block behind the tcb object is the thread's kernel stack.  Before
// every IPC the two TCBs are flushed from the caches (clflush, like the WBINVD
// in the paper) or evicted by touching a large buffer, or left alone.
//
// The program is single-threaded and deterministic: the checksum of the
// delivered messages and the final TCB state digest are the same for every
// tcb variant and compiler.  The benchmark only uses the public interface of
// class tcb and sizeof(tcb).
//
// Output lines are key=value (see usage()).

#include "tcb.h"

#include <x86intrin.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unistd.h>
#include <vector>

#if defined(__clang__)
#define IPC_ENTRY __attribute__((noinline))
#else
#define IPC_ENTRY __attribute__((noinline, noclone))
#endif

// ---------------------------------------------------------------------------
// kernel data

// One entry of the linear TCB array: the tcb object followed by the thread's
// kernel stack.
struct alignas(TCB_STRIDE) tcb_block {
    unsigned char tcb_storage[sizeof(tcb)];
    unsigned char kernel_stack[TCB_STRIDE - sizeof(tcb)];
};
static_assert(sizeof(tcb) + 256 <= TCB_STRIDE, "tcb does not leave room for a kernel stack");
static_assert(sizeof(tcb_block) == TCB_STRIDE, "TCB blocks must have a fixed stride");

constexpr unsigned max_threads = 8;
constexpr std::uint64_t ipc_cost = 1;   // time slice ticks charged per IPC

tcb_block tcb_array[max_threads];       // the linear TCB array
space spaces[3];                        // kernel/roottask, ping, pong
cpu_context cpu;                        // the (only) CPU

static tcb* threads[max_threads];

static inline word_t thread_id(unsigned number) {
    return (word_t(number) << 14) | 1;   // L4 style: thread number, version 1
}

// ---------------------------------------------------------------------------
// scheduler: single-priority FIFO ready queue through ready_next/ready_prev

static inline void ready_enqueue(tcb* t) {
    t->set_ready_next(nullptr);
    t->set_ready_prev(cpu.ready_tail);
    if (cpu.ready_tail != nullptr)
        cpu.ready_tail->set_ready_next(t);
    else
        cpu.ready_head = t;
    cpu.ready_tail = t;
}

static inline tcb* ready_dequeue() {
    tcb* t = cpu.ready_head;
    if (t == nullptr)
        return nullptr;
    tcb* next = t->get_ready_next();
    cpu.ready_head = next;
    if (next != nullptr)
        next->set_ready_prev(nullptr);
    else
        cpu.ready_tail = nullptr;
    t->set_ready_next(nullptr);
    t->set_ready_prev(nullptr);
    return t;
}

// `self` has blocked: run the next ready thread.
static inline int schedule_next(tcb* self, int result) {
    tcb* next = ready_dequeue();
    if (next == nullptr)
        return IPC_ERR_IDLE;
    next->set_state(TS_RUNNING);
    next->stamp_schedule(cpu.clock);
    self->switch_to(next, cpu);
    return result;
}

static inline unsigned tag_words(word_t tag) {
    const unsigned words = static_cast<unsigned>(tag & ipc_tag_words_mask);
    return words < num_mrs ? words : num_mrs - 1;
}

// Receive-only IPC (open wait): take the first blocked sender from the send
// queue, or block.
static inline int ipc_receive(tcb* self) {
    tcb* sender = self->dequeue_send();
    if (sender == nullptr) {
        self->set_partner(tid_any);
        self->set_state(TS_WAITING);
        self->charge_timeslice(ipc_cost);
        return schedule_next(self, IPC_RECV_BLOCKED);
    }
    const word_t sender_tag = sender->get_mr(0);
    sender->copy_mrs_to(self, 0, tag_words(sender_tag) + 1);
    self->set_partner(sender->get_global_id());
    self->count_received_queued();
    if ((sender_tag & ipc_tag_send_only) != 0) {
        sender->set_state(TS_READY);
        ready_enqueue(sender);
    } else {
        sender->set_state(TS_WAITING);   // a call: now waits for our reply
    }
    self->charge_timeslice(ipc_cost);
    return IPC_RECV;
}

// The IPC system call (tracing entry point).  from: the calling (current)
// thread; to: the destination, or nullptr for a receive-only IPC; tag: the
// message tag (words, send-only flag, label) that is delivered in MR0.
// Without the send-only flag the IPC is a call: send, then wait for a reply
// from `to`.
IPC_ENTRY int ipc(tcb* from, tcb* to, unsigned tag) {
    ++cpu.clock;
    cpu.kernel_sp = cpu.esp0;   // kernel entry: on the current kernel stack
    if (from != cpu.current)
        return IPC_ERR_NOT_CURRENT;
    if ((from->get_thread_flags() & (tf_cancel_ipc | tf_abort_ipc)) != 0) {
        from->set_ipc_error(1);
        return IPC_ERR_CANCELED;
    }
    if (to == nullptr)
        return ipc_receive(from);

    const unsigned words = tag_words(tag);
    const word_t from_id = from->get_global_id();
    if (to->is_waiting_for(from_id)) {
        if (to->get_cpu() != from->get_cpu())
            return IPC_ERR_CPU;
        // transfer the message: MR0 is the tag, MR1..words the payload
        from->copy_mrs_to(to, 1, words);
        to->set_mr(0, tag);
        to->set_partner(from_id);

        if ((tag & ipc_tag_send_only) == 0) {
            // call: the sender waits for the reply, switch directly to the receiver
            from->set_partner(to->get_global_id());
            const std::uint16_t timeout = from->get_recv_timeout();
            if (timeout != timeout_never)
                from->set_wakeup(cpu.clock + timeout);
            from->set_state(TS_WAITING);
            to->set_state(TS_RUNNING);
            from->charge_timeslice(ipc_cost);
            from->switch_to(to, cpu);
            return IPC_CALL;
        }

        // send only: wake the receiver; the sender continues unless the
        // receiver has a higher priority
        to->set_state(TS_READY);
        from->charge_timeslice(ipc_cost);
        if (to->get_priority() > from->get_priority()) {
            from->set_state(TS_READY);
            ready_enqueue(from);
            to->set_state(TS_RUNNING);
            from->switch_to(to, cpu);
        } else {
            ready_enqueue(to);
        }
        return IPC_SEND;
    }

    // the receiver is not waiting for us: block in its send queue
    from->set_mr(0, tag);
    from->set_partner(to->get_global_id());
    from->set_state(TS_POLLING);
    to->enqueue_send(from);
    from->count_blocked();
    from->charge_timeslice(ipc_cost);
    return schedule_next(from, IPC_BLOCKED);
}

// ---------------------------------------------------------------------------
// benchmark driver ("user level")

enum class flush_mode { clflush, evict, none };

struct options {
    unsigned iterations = 5000;   // ping-pong rounds per repetition
    unsigned reps = 21;
    flush_mode flush = flush_mode::clflush;
    std::size_t evict_bytes = 0;  // 0: 2 x last-level cache, at most 64 MiB
    bool intra = false;           // both threads in the same address space
    unsigned special_every = 8;   // every n-th round uses the other IPC kinds
};

static const char* kind_name(int kind) {
    switch (kind) {
    case IPC_CALL: return "call";
    case IPC_SEND: return "send";
    case IPC_BLOCKED: return "blocked";
    case IPC_RECV: return "recv";
    case IPC_RECV_BLOCKED: return "recv_blocked";
    default: return "error";
    }
}
constexpr int num_kinds = 6;

struct rep_stats {
    std::uint64_t cycles = 0;
    std::uint64_t count = 0;
    std::uint64_t kind_cycles[num_kinds] = {};
    std::uint64_t kind_count[num_kinds] = {};
};

struct bench {
    options opt;
    tcb* ping = nullptr;
    tcb* pong = nullptr;
    std::uint64_t rng = 0x9e3779b97f4a7c15ull;
    std::uint64_t checksum = 0xcbf29ce484222325ull;
    std::uint64_t total_ipcs = 0;
    std::uint64_t total_kind[num_kinds] = {};
    std::vector<unsigned char> evict_buf;
    volatile unsigned char evict_sink = 0;
    rep_stats* cur = nullptr;

    std::uint64_t next_random() {
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return rng * 0x2545f4914f6cdd1dull;
    }
    void mix(std::uint64_t v) {
        checksum ^= v;
        checksum *= 0x100000001b3ull;
        checksum ^= checksum >> 29;
    }

    void flush_tcb(const tcb* t) {
        const char* p = reinterpret_cast<const char*>(t);
        for (std::size_t off = 0; off < sizeof(tcb); off += 64)
            _mm_clflush(p + off);
    }
    void apply_cache_pressure() {
        switch (opt.flush) {
        case flush_mode::clflush:
            flush_tcb(ping);
            flush_tcb(pong);
            break;
        case flush_mode::evict: {
            unsigned char acc = 0;
            const unsigned char* b = evict_buf.data();
            for (std::size_t i = 0; i < evict_buf.size(); i += 64)
                acc = static_cast<unsigned char>(acc + b[i]);
            evict_sink = acc;
            break;
        }
        case flush_mode::none:
            break;
        }
        _mm_mfence();
    }

    int timed_ipc(tcb* from, tcb* to, unsigned tag, int expected) {
        apply_cache_pressure();
        _mm_lfence();
        const std::uint64_t t0 = __rdtsc();
        _mm_lfence();
        const int kind = ipc(from, to, tag);
        unsigned aux;
        const std::uint64_t t1 = __rdtscp(&aux);
        _mm_lfence();
        if (kind != expected) {
            std::fprintf(stderr, "pingpong: ipc returned %d (%s), expected %d (%s)\n", kind,
                         kind_name(kind), expected, kind_name(expected));
            std::exit(2);
        }
        cur->cycles += t1 - t0;
        cur->count += 1;
        cur->kind_cycles[kind] += t1 - t0;
        cur->kind_count[kind] += 1;
        total_kind[kind] += 1;
        ++total_ipcs;
        mix(static_cast<std::uint64_t>(kind));
        return kind;
    }

    // user code: write a message into the sender's message registers
    void compose(tcb* sender, unsigned words) {
        for (unsigned i = 1; i <= words; ++i)
            sender->set_mr(i, next_random());
    }
    // user code: consume a delivered message
    void consume(const tcb* receiver, unsigned words) {
        for (unsigned i = 0; i <= words; ++i)
            mix(receiver->get_mr(i));
    }
    static unsigned make_tag(unsigned words, unsigned round, unsigned flags) {
        return words | flags | ((round & 0xffffu) << ipc_tag_label_shift);
    }

    void round(unsigned r) {
        const bool special = opt.special_every != 0 && r % opt.special_every == opt.special_every - 1;
        if (!special) {
            compose(ping, 4);
            timed_ipc(ping, pong, make_tag(4, r, 0), IPC_CALL);
            consume(pong, 4);
            compose(pong, 4);
            timed_ipc(pong, ping, make_tag(4, r, 0), IPC_CALL);
            consume(ping, 4);
            return;
        }
        // notification to the waiting pong: pong becomes ready, ping continues
        compose(ping, 2);
        timed_ipc(ping, pong, make_tag(2, r, ipc_tag_send_only), IPC_SEND);
        consume(pong, 2);
        // pong is not waiting now: ping blocks in pong's send queue, pong runs
        compose(ping, 4);
        timed_ipc(ping, pong, make_tag(4, r, 0), IPC_BLOCKED);
        // pong receives the queued message, then replies as usual
        timed_ipc(pong, nullptr, 0, IPC_RECV);
        consume(pong, 4);
        compose(pong, 4);
        timed_ipc(pong, ping, make_tag(4, r, 0), IPC_CALL);
        consume(ping, 4);
    }
};

static void setup_kernel(bench& b) {
    for (unsigned i = 0; i < 3; ++i) {
        spaces[i].pdir_phys = 0x100000u * (i + 1);
        spaces[i].asid = i;
        spaces[i].space_id = i;
        spaces[i].thread_count = 0;
        spaces[i].kip_area = 0xbfff0000u;
        spaces[i].utcb_area = 0xbf000000u;
    }
    space* ping_space = &spaces[1];
    space* pong_space = b.opt.intra ? &spaces[1] : &spaces[2];

    struct thread_desc {
        const char* name;
        space* as;
        std::uint8_t prio;
    };
    const thread_desc desc[4] = {
        {"idle", &spaces[0], 0},
        {"ping", ping_space, 100},
        {"pong", pong_space, 100},
        {"roottask", &spaces[0], 255},
    };
    for (unsigned i = 0; i < 4; ++i) {
        threads[i] = new (tcb_array[i].tcb_storage)
            tcb(thread_id(i), desc[i].as, desc[i].prio, desc[i].name, 0);
        desc[i].as->thread_count += 1;
    }
    for (unsigned i = 0; i < 4; ++i)
        threads[i]->link_present(i > 0 ? threads[i - 1] : nullptr,
                                 i + 1 < 4 ? threads[i + 1] : nullptr);

    threads[0]->set_state(TS_HALTED);
    threads[3]->set_partner(tid_any);   // roottask: waiting for anybody
    threads[3]->set_state(TS_WAITING);

    b.ping = threads[1];
    b.pong = threads[2];
    b.ping->set_timeouts(timeout_never, timeout_never);
    b.pong->set_timeouts(timeout_never, timeout_never);
    b.ping->set_state(TS_RUNNING);
    b.pong->set_partner(b.ping->get_global_id());   // pong waits for ping
    b.pong->set_state(TS_WAITING);

    cpu.current = b.ping;
    cpu.current_space = ping_space;
    cpu.cr3 = ping_space->pdir_phys;
    cpu.esp0 = tcb_stack_top(b.ping);
    cpu.kernel_sp = cpu.esp0;
    for (unsigned i = 0; i < 4; ++i)
        cpu.regs[i] = 0x1000 + i;
    cpu.ready_head = nullptr;
    cpu.ready_tail = nullptr;
    cpu.clock = 0;
    cpu.space_switches = 0;
    cpu.cpu_id = 0;
}

static std::uint64_t timer_overhead() {
    std::vector<std::uint64_t> v;
    for (int i = 0; i < 1001; ++i) {
        _mm_mfence();
        _mm_lfence();
        const std::uint64_t t0 = __rdtsc();
        _mm_lfence();
        unsigned aux;
        const std::uint64_t t1 = __rdtscp(&aux);
        _mm_lfence();
        v.push_back(t1 - t0);
    }
    std::nth_element(v.begin(), v.begin() + 500, v.end());
    return v[500];
}

static double median(std::vector<double> v) {
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static std::size_t default_evict_bytes() {
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0)
        llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    std::size_t bytes = llc > 0 ? 2 * static_cast<std::size_t>(llc) : (16u << 20);
    return std::min<std::size_t>(bytes, 64u << 20);
}

static void usage(std::FILE* out, const char* prog) {
    std::fprintf(out,
        "usage: %s [options]\n"
        "  -n, --iterations N     ping-pong rounds per repetition (default 5000)\n"
        "  -r, --reps N           repetitions; cycles/IPC is the median (default 21)\n"
        "  -f, --flush MODE       cache pressure before each IPC: clflush (default),\n"
        "                         evict (touch a buffer larger than the LLC), none\n"
        "      --evict-bytes N    size of the eviction buffer (default 2 x LLC, <= 64 MiB)\n"
        "      --intra            both threads in the same address space\n"
        "      --special-every K  every K-th round uses send-only, blocking send and\n"
        "                         receive-only IPC (default 8, 0 = never)\n"
        "output (key=value): variant, sizeof_tcb, tcb_stride, flush, iterations, reps,\n"
        "  ipcs, kind_<kind>, timer_overhead_cycles, ipc_cycles_median (per IPC, incl.\n"
        "  timer overhead), ipc_cycles_min/max, ipc_cycles_median_<kind>,\n"
        "  checksum (delivered messages), state_checksum (final TCB state)\n",
        prog);
}

static bool parse_uint(const char* s, unsigned long long& out) {
    if (s == nullptr || *s == '\0')
        return false;
    char* end = nullptr;
    out = std::strtoull(s, &end, 0);
    return *end == '\0';
}

static bool parse_args(int argc, char** argv, options& opt) {
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        const char* value = nullptr;
        const char* eq = std::strchr(arg, '=');
        char name[64];
        if (eq != nullptr && std::strncmp(arg, "--", 2) == 0) {
            const std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(eq - arg), 63);
            std::memcpy(name, arg, len);
            name[len] = '\0';
            value = eq + 1;
        } else {
            std::snprintf(name, sizeof(name), "%s", arg);
        }
        auto need_value = [&]() -> const char* {
            if (value != nullptr)
                return value;
            if (i + 1 < argc)
                return argv[++i];
            return nullptr;
        };
        unsigned long long n = 0;
        if (!std::strcmp(name, "-h") || !std::strcmp(name, "--help")) {
            usage(stdout, argv[0]);
            std::exit(0);
        } else if (!std::strcmp(name, "-n") || !std::strcmp(name, "--iterations")) {
            if (!parse_uint(need_value(), n) || n == 0)
                return false;
            opt.iterations = static_cast<unsigned>(n);
        } else if (!std::strcmp(name, "-r") || !std::strcmp(name, "--reps")) {
            if (!parse_uint(need_value(), n) || n == 0)
                return false;
            opt.reps = static_cast<unsigned>(n);
        } else if (!std::strcmp(name, "-f") || !std::strcmp(name, "--flush")) {
            const char* m = need_value();
            if (m == nullptr)
                return false;
            if (!std::strcmp(m, "clflush"))
                opt.flush = flush_mode::clflush;
            else if (!std::strcmp(m, "evict"))
                opt.flush = flush_mode::evict;
            else if (!std::strcmp(m, "none"))
                opt.flush = flush_mode::none;
            else
                return false;
        } else if (!std::strcmp(name, "--evict-bytes")) {
            if (!parse_uint(need_value(), n) || n < 64)
                return false;
            opt.evict_bytes = static_cast<std::size_t>(n);
        } else if (!std::strcmp(name, "--intra")) {
            opt.intra = true;
        } else if (!std::strcmp(name, "--special-every")) {
            if (!parse_uint(need_value(), n))
                return false;
            opt.special_every = static_cast<unsigned>(n);
        } else {
            return false;
        }
    }
    return true;
}

int main(int argc, char** argv) {
    bench b;
    if (!parse_args(argc, argv, b.opt)) {
        usage(stderr, argv[0]);
        return 1;
    }
    if (b.opt.flush == flush_mode::evict) {
        if (b.opt.evict_bytes == 0)
            b.opt.evict_bytes = default_evict_bytes();
        b.evict_buf.assign(b.opt.evict_bytes, 1);
    }
    setup_kernel(b);

    const std::uint64_t overhead = timer_overhead();
    std::vector<double> per_ipc;
    std::vector<double> per_kind[num_kinds];
    unsigned r = 0;
    for (unsigned rep = 0; rep < b.opt.reps; ++rep) {
        rep_stats st;
        b.cur = &st;
        for (unsigned i = 0; i < b.opt.iterations; ++i)
            b.round(r++);
        per_ipc.push_back(static_cast<double>(st.cycles) / static_cast<double>(st.count));
        for (int k = 0; k < num_kinds; ++k)
            if (st.kind_count[k] != 0)
                per_kind[k].push_back(static_cast<double>(st.kind_cycles[k]) /
                                      static_cast<double>(st.kind_count[k]));
    }

    kdb_sink sink;
    for (unsigned i = 0; i < 4; ++i)
        threads[i]->dump(sink);
    sink.put(cpu.cr3);
    sink.put(cpu.clock);
    sink.put(cpu.space_switches);
    for (word_t reg : cpu.regs)
        sink.put(reg);
    sink.put(cpu.current == b.ping ? 1 : cpu.current == b.pong ? 2 : 0);

    const char* flush_names[] = {"clflush", "evict", "none"};
    std::printf("variant=%s\n", TCB_VARIANT_NAME);
    std::printf("compiler=%s\n", __VERSION__);
    std::printf("sizeof_tcb=%zu\n", sizeof(tcb));
    std::printf("tcb_stride=%u\n", static_cast<unsigned>(TCB_STRIDE));
    std::printf("flush=%s\n", flush_names[static_cast<int>(b.opt.flush)]);
    if (b.opt.flush == flush_mode::evict)
        std::printf("evict_bytes=%zu\n", b.opt.evict_bytes);
    std::printf("intra_space=%d\n", b.opt.intra ? 1 : 0);
    std::printf("iterations=%u\n", b.opt.iterations);
    std::printf("reps=%u\n", b.opt.reps);
    std::printf("ipcs=%" PRIu64 "\n", b.total_ipcs);
    for (int k = 1; k < num_kinds; ++k)
        std::printf("kind_%s=%" PRIu64 "\n", kind_name(k), b.total_kind[k]);
    std::printf("space_switches=%" PRIu64 "\n", cpu.space_switches);
    std::printf("timer_overhead_cycles=%" PRIu64 "\n", overhead);
    std::printf("ipc_cycles_median=%.1f\n", median(per_ipc));
    std::printf("ipc_cycles_min=%.1f\n", *std::min_element(per_ipc.begin(), per_ipc.end()));
    std::printf("ipc_cycles_max=%.1f\n", *std::max_element(per_ipc.begin(), per_ipc.end()));
    for (int k = 1; k < num_kinds; ++k)
        if (!per_kind[k].empty())
            std::printf("ipc_cycles_median_%s=%.1f\n", kind_name(k), median(per_kind[k]));
    std::printf("checksum=0x%016" PRIx64 "\n", b.checksum);
    std::printf("state_checksum=0x%016" PRIx64 "\n", sink.hash);
    return 0;
}
