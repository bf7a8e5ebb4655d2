#pragma once
#include "iface.h"
class arch_tcb : public virtual tcb_iface {
public:
    arch_tcb(long sp);
    void init() override;
    long stack() const { return sp_; }
protected:
    long sp_;
};
