// tcb_flat.h - the thread control block as one hand-written flat class.
//
// Same data members and member functions as the mix-in hierarchy in
// tcb_mixin.h, but no inheritance and no virtual functions.  This is the
// "original kernel": the member order was tuned by hand.  The fields the IPC
// path touches on every message come first: line 0 holds the per-IPC state
// (written by every IPC: thread_state, partner_tid, saved_sp,
// current_timeslice), line 1 the message registers, line 2 the scheduler and
// send-queue links used by the slower IPC paths.  Like the kernel developers
// in the paper, the tuning was done for intra-address-space IPC: pdir_cache,
// which only the address space switch reads, sits with the other
// architecture fields in line 4.
//
// Layout rules for tools that rewrite this class: one data member per
// declaration and per line, no preprocessor conditionals in the member list,
// and no constructor member-initializer list (the constructor assigns in its
// body), so the members can be reordered freely.
#pragma once

#include "kernel.h"

class tcb {
public:
    tcb(word_t global_id, space* as, std::uint8_t prio, const char* name, std::uint64_t now);

    // generic part
    thread_state_t get_state() const { return thread_state; }
    void set_state(thread_state_t state) { thread_state = state; }
    word_t get_partner() const { return partner_tid; }
    void set_partner(word_t tid) { partner_tid = tid; }
    word_t get_global_id() const { return myself_global; }
    std::uint32_t get_thread_flags() const { return thread_flags; }
    space* get_space() const { return addr_space; }
    std::uint8_t get_priority() const { return priority; }
    bool is_waiting_for(word_t sender_tid) const {
        return thread_state == TS_WAITING &&
               (partner_tid == sender_tid || partner_tid == tid_any);
    }
    tcb* get_ready_next() const { return ready_next; }
    void set_ready_next(tcb* t) { ready_next = t; }
    tcb* get_ready_prev() const { return ready_prev; }
    void set_ready_prev(tcb* t) { ready_prev = t; }
    tcb* get_send_next() const { return send_next; }
    void set_send_next(tcb* t) { send_next = t; }
    tcb* get_send_prev() const { return send_prev; }
    void set_send_prev(tcb* t) { send_prev = t; }
    void enqueue_send(tcb* sender);
    tcb* dequeue_send();
    bool charge_timeslice(std::uint64_t ticks);
    void count_blocked() { ++stat_blocked; }
    void count_received_queued() { ++stat_received_queued; }
    void link_present(tcb* prev, tcb* next) {
        present_prev = prev;
        present_next = next;
    }

    // architecture part
    void init();
    word_t get_saved_sp() const { return saved_sp; }
    word_t get_pdir_cache() const { return pdir_cache; }
    std::uint32_t get_resources() const { return resource_bits; }
    void switch_to(tcb* dst, cpu_context& cpu);

    // API part
    word_t get_mr(unsigned index) const { return mr[index]; }
    void set_mr(unsigned index, word_t value) { mr[index] = value; }
    void copy_mrs_to(tcb* dst, unsigned first, unsigned count) const;
    std::uint16_t get_recv_timeout() const { return recv_timeout; }
    void set_timeouts(std::uint16_t snd, std::uint16_t rcv) {
        send_timeout = snd;
        recv_timeout = rcv;
    }
    void set_ipc_error(std::uint32_t error) { ipc_error = error; }

    // platform part
    std::uint16_t get_cpu() const { return home_cpu; }
    void set_wakeup(std::uint64_t when) { wakeup_time = when; }
    void stamp_schedule(std::uint64_t now) { switch_stamp = now; }
    void account_cpu_time(std::uint64_t ticks) { cpu_time_used += ticks; }

    // kernel debugger
    void dump(kdb_sink& sink) const;

private:
    void set_debug_name(const char* name);
    void switch_resources(std::uint32_t dst_resources, cpu_context& cpu);

    thread_state_t thread_state;
    std::uint32_t thread_flags;
    word_t partner_tid;
    word_t myself_global;
    space* addr_space;
    word_t saved_sp;
    std::uint64_t current_timeslice;
    tcb* send_head;
    std::uint32_t resource_bits;
    std::uint16_t recv_timeout;
    std::uint16_t home_cpu;
    word_t mr[num_mrs];
    tcb* ready_next;
    tcb* ready_prev;
    tcb* send_next;
    tcb* send_prev;
    std::uint64_t timeslice_length;
    std::uint64_t total_quantum;
    std::uint64_t switch_stamp;
    std::uint8_t priority;
    std::uint8_t max_controlled_prio;
    std::uint16_t suspend_count;
    std::uint32_t ipc_error;
    word_t utcb_location;
    word_t myself_local;
    word_t pager_tid;
    word_t exception_tid;
    word_t scheduler_tid;
    word_t acceptor;
    word_t intended_receiver;
    word_t virtual_sender;
    word_t pdir_cache;
    void* fpu_state;
    word_t exc_ip;
    word_t fault_addr;
    word_t iopb_addr;
    std::uint32_t arch_flags;
    std::uint16_t fpu_generation;
    std::uint16_t ldt_selector;
    std::uint16_t send_timeout;
    std::uint16_t apic_id;
    std::uint32_t irq_line;
    std::uint32_t tcb_magic;
    std::uint32_t kdb_flags;
    word_t tls_base[3];
    std::uint64_t wakeup_time;
    tcb* wakeup_next;
    tcb* wakeup_prev;
    std::uint64_t cpu_time_used;
    std::uint64_t create_time;
    word_t debug_regs[8];
    word_t br[num_brs];
    std::uint64_t perf_ctr[2];
    tcb* present_next;
    tcb* present_prev;
    char debug_name[24];
    std::uint64_t stat_blocked;
    std::uint64_t stat_preemptions;
    std::uint64_t stat_received_queued;
};

// ---------------------------------------------------------------------------
// out-of-line member functions

inline tcb::tcb(word_t global_id, space* as, std::uint8_t prio, const char* name,
                std::uint64_t now) {
    // generic part
    myself_global = global_id;
    myself_local = 0;
    thread_state = TS_ABORTED;
    thread_flags = 0;
    partner_tid = tid_nil;
    addr_space = as;
    ready_next = nullptr;
    ready_prev = nullptr;
    priority = prio;
    max_controlled_prio = prio;
    suspend_count = 0;
    timeslice_length = 64;
    current_timeslice = 64;
    total_quantum = 1000000;
    send_head = nullptr;
    send_next = nullptr;
    send_prev = nullptr;
    present_next = nullptr;
    present_prev = nullptr;
    for (char& c : debug_name)
        c = '\0';
    create_time = now;
    stat_blocked = 0;
    stat_preemptions = 0;
    stat_received_queued = 0;
    // architecture part
    saved_sp = 0;
    pdir_cache = as->pdir_phys;
    resource_bits = 0;
    arch_flags = 0;
    exc_ip = 0;
    fault_addr = 0;
    fpu_state = nullptr;
    for (word_t& r : debug_regs)
        r = 0;
    for (word_t& b : tls_base)
        b = 0;
    iopb_addr = 0;
    ldt_selector = 0;
    fpu_generation = 0;
    // API part
    for (word_t& m : mr)
        m = 0;
    for (word_t& b : br)
        b = 0;
    utcb_location = as->utcb_area + (global_id & 0xff) * 512;
    pager_tid = tid_nil;
    exception_tid = tid_nil;
    scheduler_tid = tid_nil;
    acceptor = 0;
    intended_receiver = tid_nil;
    virtual_sender = tid_nil;
    send_timeout = timeout_never;
    recv_timeout = timeout_never;
    ipc_error = 0;
    // platform part
    home_cpu = 0;
    apic_id = 0;
    irq_line = no_irq;
    wakeup_time = 0;
    wakeup_next = nullptr;
    wakeup_prev = nullptr;
    switch_stamp = 0;
    cpu_time_used = 0;
    perf_ctr[0] = 0;
    perf_ctr[1] = 0;
    // the tcb itself
    tcb_magic = tcb_magic_value;
    kdb_flags = 0;

    set_debug_name(name);
    init();
}

inline void tcb::set_debug_name(const char* name) {
    unsigned i = 0;
    for (; name != nullptr && name[i] != '\0' && i + 1 < sizeof(debug_name); ++i)
        debug_name[i] = name[i];
    for (; i < sizeof(debug_name); ++i)
        debug_name[i] = '\0';
}

// The send queue is a circular list through send_next/send_prev of the
// blocked senders; send_head lives in the receiver.
inline void tcb::enqueue_send(tcb* sender) {
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

inline tcb* tcb::dequeue_send() {
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
inline bool tcb::charge_timeslice(std::uint64_t ticks) {
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

// Build the initial kernel stack frame: the thread starts "switched out".
inline void tcb::init() {
    word_t* frame = reinterpret_cast<word_t*>(tcb_stack_top(this)) - 4;
    for (unsigned i = 0; i < 4; ++i)
        frame[i] = 0;
    saved_sp = reinterpret_cast<word_t>(frame);
    resource_bits = 0;
    fpu_state = nullptr;
    arch_flags = 0;

    apic_id = home_cpu;
    wakeup_time = 0;
    wakeup_next = nullptr;
    wakeup_prev = nullptr;
    switch_stamp = 0;

    myself_local = utcb_location;
    tls_base[0] = utcb_location;
    kdb_flags = 0;
}

// Lazy FPU and debug register switching (not taken in the benchmark).
inline void tcb::switch_resources(std::uint32_t dst_resources, cpu_context& cpu) {
    if ((resource_bits & res_fpu) != 0)
        ++fpu_generation;
    if ((dst_resources & res_debug_regs) != 0)
        cpu.regs[3] ^= debug_regs[7];
    if (((resource_bits | dst_resources) & res_iopb) != 0)
        arch_flags |= 1u;
}

inline void tcb::switch_to(tcb* dst, cpu_context& cpu) {
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

inline void tcb::copy_mrs_to(tcb* dst, unsigned first, unsigned count) const {
    for (unsigned i = first; i < first + count; ++i)
        dst->set_mr(i, mr[i]);
}

inline void tcb::dump(kdb_sink& sink) const {
    // generic part
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
    // architecture part
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
    // API part
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
    // platform part
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
    // the tcb itself
    sink.put(tcb_magic);
    sink.put(kdb_flags);
}
