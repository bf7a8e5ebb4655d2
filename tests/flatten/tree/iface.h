#pragma once
#include <cstdio>
class tcb;
class tcb_iface {
public:
    virtual int state() const = 0;
    virtual void set_state(int s) = 0;
    virtual void init() = 0;
protected:
    ~tcb_iface() = default;
};
