// tcb_mixin.h - thread control block composed from configuration mix-ins.
//
// Models Fig. 1 of "Managing code complexity in a portable microkernel":
// a common virtual base class (tcb_interface) defines the interface between
// the mix-ins; each configuration dimension contributes a mix-in with data
// members and virtual member functions:
//
//   base_tcb      generic, configuration independent: ids, state, partner,
//                 queues, scheduling, statistics
//   arch_tcb      architecture (x86-like): kernel stack, page directory
//                 cache, FPU/debug resources, thread switch
//   api_tcb       kernel API (L4 V4-like): message/buffer registers, thread
//                 ids of pager/scheduler/exception handler, timeouts
//   platform_tcb  platform (pc99-like): CPU/APIC, IRQ, wakeup queue, time
//
//   tcb           the most derived class, the only one used outside
//
// Mix-ins call each other through the virtual interface, so the IPC path
// dispatches virtually.  The hierarchy follows the preconditions for
// transparent class flattening: only `tcb` is used outside the hierarchy,
// data member names are unique, and no base-class qualifier is needed to
// resolve a name (the qualified calls in tcb::init() select base versions).
#pragma once

#include "kernel.h"

class tcb_interface {
public:
    // generic part (base_tcb)
    virtual thread_state_t get_state() const = 0;
    virtual void set_state(thread_state_t state) = 0;
    virtual word_t get_partner() const = 0;
    virtual void set_partner(word_t tid) = 0;
    virtual word_t get_global_id() const = 0;
    virtual std::uint32_t get_thread_flags() const = 0;
    virtual space* get_space() const = 0;
    virtual std::uint8_t get_priority() const = 0;
    virtual bool is_waiting_for(word_t sender_tid) const = 0;
    virtual tcb* get_ready_next() const = 0;
    virtual void set_ready_next(tcb* t) = 0;
    virtual tcb* get_ready_prev() const = 0;
    virtual void set_ready_prev(tcb* t) = 0;
    virtual tcb* get_send_next() const = 0;
    virtual void set_send_next(tcb* t) = 0;
    virtual tcb* get_send_prev() const = 0;
    virtual void set_send_prev(tcb* t) = 0;
    virtual void enqueue_send(tcb* sender) = 0;
    virtual tcb* dequeue_send() = 0;
    virtual bool charge_timeslice(std::uint64_t ticks) = 0;
    virtual void count_blocked() = 0;
    virtual void count_received_queued() = 0;
    virtual void link_present(tcb* prev, tcb* next) = 0;

    // architecture part (arch_tcb)
    virtual void init() = 0;
    virtual word_t get_saved_sp() const = 0;
    virtual word_t get_pdir_cache() const = 0;
    virtual std::uint32_t get_resources() const = 0;
    virtual void switch_to(tcb* dst, cpu_context& cpu) = 0;

    // API part (api_tcb)
    virtual word_t get_mr(unsigned index) const = 0;
    virtual void set_mr(unsigned index, word_t value) = 0;
    virtual void copy_mrs_to(tcb* dst, unsigned first, unsigned count) const = 0;
    virtual std::uint16_t get_recv_timeout() const = 0;
    virtual void set_timeouts(std::uint16_t snd, std::uint16_t rcv) = 0;
    virtual void set_ipc_error(std::uint32_t error) = 0;

    // platform part (platform_tcb)
    virtual std::uint16_t get_cpu() const = 0;
    virtual void set_wakeup(std::uint64_t when) = 0;
    virtual void stamp_schedule(std::uint64_t now) = 0;
    virtual void account_cpu_time(std::uint64_t ticks) = 0;

    // kernel debugger (tcb)
    virtual void dump(kdb_sink& sink) const = 0;

protected:
    ~tcb_interface() = default;
};

// ---------------------------------------------------------------------------
// generic part
class base_tcb : public virtual tcb_interface {
public:
    base_tcb(word_t global_id, space* as, std::uint8_t prio, std::uint64_t now)
        : myself_global(global_id),
          myself_local(0),
          thread_state(TS_ABORTED),
          thread_flags(0),
          partner_tid(tid_nil),
          addr_space(as),
          ready_next(nullptr),
          ready_prev(nullptr),
          priority(prio),
          max_controlled_prio(prio),
          suspend_count(0),
          timeslice_length(64),
          current_timeslice(64),
          total_quantum(1000000),
          send_head(nullptr),
          send_next(nullptr),
          send_prev(nullptr),
          present_next(nullptr),
          present_prev(nullptr),
          debug_name{},
          create_time(now),
          stat_blocked(0),
          stat_preemptions(0),
          stat_received_queued(0) {
    }

    thread_state_t get_state() const override { return thread_state; }
    void set_state(thread_state_t state) override { thread_state = state; }
    word_t get_partner() const override { return partner_tid; }
    void set_partner(word_t tid) override { partner_tid = tid; }
    word_t get_global_id() const override { return myself_global; }
    std::uint32_t get_thread_flags() const override { return thread_flags; }
    space* get_space() const override { return addr_space; }
    std::uint8_t get_priority() const override { return priority; }
    bool is_waiting_for(word_t sender_tid) const override {
        return thread_state == TS_WAITING &&
               (partner_tid == sender_tid || partner_tid == tid_any);
    }
    tcb* get_ready_next() const override { return ready_next; }
    void set_ready_next(tcb* t) override { ready_next = t; }
    tcb* get_ready_prev() const override { return ready_prev; }
    void set_ready_prev(tcb* t) override { ready_prev = t; }
    tcb* get_send_next() const override { return send_next; }
    void set_send_next(tcb* t) override { send_next = t; }
    tcb* get_send_prev() const override { return send_prev; }
    void set_send_prev(tcb* t) override { send_prev = t; }
    void enqueue_send(tcb* sender) override;
    tcb* dequeue_send() override;
    bool charge_timeslice(std::uint64_t ticks) override;
    void count_blocked() override { ++stat_blocked; }
    void count_received_queued() override { ++stat_received_queued; }
    void link_present(tcb* prev, tcb* next) override {
        present_prev = prev;
        present_next = next;
    }

protected:
    void set_debug_name(const char* name);
    void dump_base(kdb_sink& sink) const;

    word_t myself_global;
    word_t myself_local;
    thread_state_t thread_state;
    std::uint32_t thread_flags;
    word_t partner_tid;
    space* addr_space;
    tcb* ready_next;
    tcb* ready_prev;
    std::uint8_t priority;
    std::uint8_t max_controlled_prio;
    std::uint16_t suspend_count;
    std::uint64_t timeslice_length;
    std::uint64_t current_timeslice;
    std::uint64_t total_quantum;
    tcb* send_head;
    tcb* send_next;
    tcb* send_prev;
    tcb* present_next;
    tcb* present_prev;
    char debug_name[24];
    std::uint64_t create_time;
    std::uint64_t stat_blocked;
    std::uint64_t stat_preemptions;
    std::uint64_t stat_received_queued;
};

// ---------------------------------------------------------------------------
// architecture part (x86-like)
class arch_tcb : public virtual tcb_interface {
public:
    explicit arch_tcb(word_t pdir)
        : saved_sp(0),
          pdir_cache(pdir),
          resource_bits(0),
          arch_flags(0),
          exc_ip(0),
          fault_addr(0),
          fpu_state(nullptr),
          debug_regs{},
          tls_base{},
          iopb_addr(0),
          ldt_selector(0),
          fpu_generation(0) {
    }

    void init() override;
    word_t get_saved_sp() const override { return saved_sp; }
    word_t get_pdir_cache() const override { return pdir_cache; }
    std::uint32_t get_resources() const override { return resource_bits; }
    void switch_to(tcb* dst, cpu_context& cpu) override;

protected:
    void switch_resources(std::uint32_t dst_resources, cpu_context& cpu);
    void dump_arch(kdb_sink& sink) const;

    word_t saved_sp;
    word_t pdir_cache;
    std::uint32_t resource_bits;
    std::uint32_t arch_flags;
    word_t exc_ip;
    word_t fault_addr;
    void* fpu_state;
    word_t debug_regs[8];
    word_t tls_base[3];
    word_t iopb_addr;
    std::uint16_t ldt_selector;
    std::uint16_t fpu_generation;
};

// ---------------------------------------------------------------------------
// API part (L4 V4-like)
class api_tcb : public virtual tcb_interface {
public:
    api_tcb(word_t utcb, word_t pager)
        : mr{},
          br{},
          utcb_location(utcb),
          pager_tid(pager),
          exception_tid(pager),
          scheduler_tid(pager),
          acceptor(0),
          intended_receiver(tid_nil),
          virtual_sender(tid_nil),
          send_timeout(timeout_never),
          recv_timeout(timeout_never),
          ipc_error(0) {
    }

    word_t get_mr(unsigned index) const override { return mr[index]; }
    void set_mr(unsigned index, word_t value) override { mr[index] = value; }
    void copy_mrs_to(tcb* dst, unsigned first, unsigned count) const override;
    std::uint16_t get_recv_timeout() const override { return recv_timeout; }
    void set_timeouts(std::uint16_t snd, std::uint16_t rcv) override {
        send_timeout = snd;
        recv_timeout = rcv;
    }
    void set_ipc_error(std::uint32_t error) override { ipc_error = error; }

protected:
    void dump_api(kdb_sink& sink) const;

    word_t mr[num_mrs];
    word_t br[num_brs];
    word_t utcb_location;
    word_t pager_tid;
    word_t exception_tid;
    word_t scheduler_tid;
    word_t acceptor;
    word_t intended_receiver;
    word_t virtual_sender;
    std::uint16_t send_timeout;
    std::uint16_t recv_timeout;
    std::uint32_t ipc_error;
};

// ---------------------------------------------------------------------------
// platform part (pc99-like)
class platform_tcb : public virtual tcb_interface {
public:
    explicit platform_tcb(std::uint16_t cpu)
        : home_cpu(cpu),
          apic_id(0),
          irq_line(no_irq),
          wakeup_time(0),
          wakeup_next(nullptr),
          wakeup_prev(nullptr),
          switch_stamp(0),
          cpu_time_used(0),
          perf_ctr{} {
    }

    void init() override;
    std::uint16_t get_cpu() const override { return home_cpu; }
    void set_wakeup(std::uint64_t when) override { wakeup_time = when; }
    void stamp_schedule(std::uint64_t now) override { switch_stamp = now; }
    void account_cpu_time(std::uint64_t ticks) override { cpu_time_used += ticks; }

protected:
    void dump_platform(kdb_sink& sink) const;

    std::uint16_t home_cpu;
    std::uint16_t apic_id;
    std::uint32_t irq_line;
    std::uint64_t wakeup_time;
    tcb* wakeup_next;
    tcb* wakeup_prev;
    std::uint64_t switch_stamp;
    std::uint64_t cpu_time_used;
    std::uint64_t perf_ctr[2];
};

// ---------------------------------------------------------------------------
// the thread control block used by the kernel
class tcb : public base_tcb, public arch_tcb, public api_tcb, public platform_tcb {
public:
    tcb(word_t global_id, space* as, std::uint8_t prio, const char* name, std::uint64_t now)
        : tcb_interface(),
          base_tcb(global_id, as, prio, now),
          arch_tcb(as->pdir_phys),
          api_tcb(as->utcb_area + (global_id & 0xff) * 512, tid_nil),
          platform_tcb(0),
          tcb_magic(tcb_magic_value),
          kdb_flags(0) {
        set_debug_name(name);
        init();
    }

    void init() override;
    void dump(kdb_sink& sink) const override;

private:
    std::uint32_t tcb_magic;
    std::uint32_t kdb_flags;
};

// ---------------------------------------------------------------------------
// out-of-line member functions

inline void base_tcb::set_debug_name(const char* name) {
    unsigned i = 0;
    for (; name != nullptr && name[i] != '\0' && i + 1 < sizeof(debug_name); ++i)
        debug_name[i] = name[i];
    for (; i < sizeof(debug_name); ++i)
        debug_name[i] = '\0';
}

// The send queue is a circular list through send_next/send_prev of the
// blocked senders; send_head lives in the receiver.
inline void base_tcb::enqueue_send(tcb* sender) {
    tcb* head = send_head;
    if (head == nullptr) {
        send_head = sender;
        sender->set_send_next(sender);
        sender->set_send_prev(sender);
    } else {
        tcb* tail = head->get_send_prev();
        sender->set_send_next(head);
        sender->set_send_prev(tail);
        tail->set_send_next(sender);
        head->set_send_prev(sender);
    }
}

inline tcb* base_tcb::dequeue_send() {
    tcb* sender = send_head;
    if (sender == nullptr)
        return nullptr;
    tcb* next = sender->get_send_next();
    if (next == sender) {
        send_head = nullptr;
    } else {
        tcb* prev = sender->get_send_prev();
        next->set_send_prev(prev);
        prev->set_send_next(next);
        send_head = next;
    }
    sender->set_send_next(nullptr);
    sender->set_send_prev(nullptr);
    return sender;
}

// Returns true when the time slice ran out and was refilled.
inline bool base_tcb::charge_timeslice(std::uint64_t ticks) {
    if (current_timeslice > ticks) {
        current_timeslice -= ticks;
        return false;
    }
    account_cpu_time(timeslice_length);
    current_timeslice = timeslice_length;
    if (total_quantum > timeslice_length)
        total_quantum -= timeslice_length;
    ++stat_preemptions;
    return true;
}

inline void base_tcb::dump_base(kdb_sink& sink) const {
    sink.put(myself_global);
    sink.put(myself_local);
    sink.put(thread_state);
    sink.put(thread_flags);
    sink.put(partner_tid);
    sink.put_ptr(addr_space);
    sink.put_ptr(ready_next);
    sink.put_ptr(ready_prev);
    sink.put(priority);
    sink.put(max_controlled_prio);
    sink.put(suspend_count);
    sink.put(timeslice_length);
    sink.put(current_timeslice);
    sink.put(total_quantum);
    sink.put_ptr(send_head);
    sink.put_ptr(send_next);
    sink.put_ptr(send_prev);
    sink.put_ptr(present_next);
    sink.put_ptr(present_prev);
    sink.put_str(debug_name, sizeof(debug_name));
    sink.put(create_time);
    sink.put(stat_blocked);
    sink.put(stat_preemptions);
    sink.put(stat_received_queued);
}

// Build the initial kernel stack frame: the thread starts "switched out".
inline void arch_tcb::init() {
    word_t* frame = reinterpret_cast<word_t*>(tcb_stack_top(this)) - 4;
    for (unsigned i = 0; i < 4; ++i)
        frame[i] = 0;
    saved_sp = reinterpret_cast<word_t>(frame);
    resource_bits = 0;
    fpu_state = nullptr;
    arch_flags = 0;
}

// Lazy FPU and debug register switching (not taken in the benchmark).
inline void arch_tcb::switch_resources(std::uint32_t dst_resources, cpu_context& cpu) {
    if ((resource_bits & res_fpu) != 0)
        ++fpu_generation;
    if ((dst_resources & res_debug_regs) != 0)
        cpu.regs[3] ^= debug_regs[7];
    if (((resource_bits | dst_resources) & res_iopb) != 0)
        arch_flags |= 1u;
}

inline void arch_tcb::switch_to(tcb* dst, cpu_context& cpu) {
    const std::uint32_t dst_resources = dst->get_resources();
    if ((resource_bits | dst_resources) != 0)
        switch_resources(dst_resources, cpu);

    // push the callee-saved registers onto our kernel stack
    word_t* sp = reinterpret_cast<word_t*>(cpu.kernel_sp) - 4;
    for (unsigned i = 0; i < 4; ++i)
        sp[i] = cpu.regs[i];
    saved_sp = reinterpret_cast<word_t>(sp);

    // address space switch
    space* dst_space = dst->get_space();
    if (dst_space != get_space()) {
        cpu.cr3 = dst->get_pdir_cache();
        cpu.current_space = dst_space;
        ++cpu.space_switches;
    }

    // continue on the destination's kernel stack
    const word_t* dst_sp = reinterpret_cast<const word_t*>(dst->get_saved_sp());
    for (unsigned i = 0; i < 4; ++i)
        cpu.regs[i] = dst_sp[i];
    cpu.kernel_sp = reinterpret_cast<word_t>(dst_sp + 4);
    cpu.esp0 = tcb_stack_top(dst);
    cpu.current = dst;
}

inline void arch_tcb::dump_arch(kdb_sink& sink) const {
    sink.put(saved_sp & (tcb_stride - 1));
    sink.put(pdir_cache);
    sink.put(resource_bits);
    sink.put(arch_flags);
    sink.put(exc_ip);
    sink.put(fault_addr);
    sink.put_ptr(fpu_state);
    for (word_t r : debug_regs)
        sink.put(r);
    for (word_t b : tls_base)
        sink.put(b);
    sink.put(iopb_addr);
    sink.put(ldt_selector);
    sink.put(fpu_generation);
}

inline void api_tcb::copy_mrs_to(tcb* dst, unsigned first, unsigned count) const {
    for (unsigned i = first; i < first + count; ++i)
        dst->set_mr(i, mr[i]);
}

inline void api_tcb::dump_api(kdb_sink& sink) const {
    for (word_t m : mr)
        sink.put(m);
    for (word_t b : br)
        sink.put(b);
    sink.put(utcb_location);
    sink.put(pager_tid);
    sink.put(exception_tid);
    sink.put(scheduler_tid);
    sink.put(acceptor);
    sink.put(intended_receiver);
    sink.put(virtual_sender);
    sink.put(send_timeout);
    sink.put(recv_timeout);
    sink.put(ipc_error);
}

inline void platform_tcb::init() {
    apic_id = home_cpu;
    wakeup_time = 0;
    wakeup_next = nullptr;
    wakeup_prev = nullptr;
    switch_stamp = 0;
}

inline void platform_tcb::dump_platform(kdb_sink& sink) const {
    sink.put(home_cpu);
    sink.put(apic_id);
    sink.put(irq_line);
    sink.put(wakeup_time);
    sink.put_ptr(wakeup_next);
    sink.put_ptr(wakeup_prev);
    sink.put(switch_stamp);
    sink.put(cpu_time_used);
    sink.put(perf_ctr[0]);
    sink.put(perf_ctr[1]);
}

inline void tcb::init() {
    arch_tcb::init();
    platform_tcb::init();
    myself_local = utcb_location;
    tls_base[0] = utcb_location;
    kdb_flags = 0;
}

inline void tcb::dump(kdb_sink& sink) const {
    dump_base(sink);
    dump_arch(sink);
    dump_api(sink);
    dump_platform(sink);
    sink.put(tcb_magic);
    sink.put(kdb_flags);
}
