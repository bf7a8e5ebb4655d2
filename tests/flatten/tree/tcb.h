#pragma once
#include "arch.h"
#include "base.h"
class tcb : public base_tcb, public arch_tcb {
public:
    tcb(int id);
    void init() override;
    int id() const { return id_; }
private:
    int id_;
};
