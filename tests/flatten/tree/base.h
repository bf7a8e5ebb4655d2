#pragma once
#include "iface.h"
class base_tcb : public virtual tcb_iface {
public:
    int state() const override { return st_; }
    void set_state(int s) override { st_ = s; }
protected:
    int st_ = 0;
};
