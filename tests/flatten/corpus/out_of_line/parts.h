// Bases with out-of-line definitions in the header (inline and template).
#pragma once
#include <cstdio>

class engine {
public:
    engine(int hp);
    virtual ~engine();
    virtual int power() const;
    void start();
    static int built;

protected:
    int hp_;
    bool running_ = false;
};

inline engine::engine(int hp) : hp_(hp) { ++built; }
inline engine::~engine() { printf("engine stopped\n"); }
inline int engine::power() const { return hp_; }
inline void engine::start() {
    running_ = true;
    printf("start power=%d\n", power());
}

template <class T>
class wheels {
public:
    void set(int n);
    int count() const { return n_; }

private:
    int n_ = 0;
};

template <class T>
void wheels<T>::set(int n) {
    n_ = n;
    printf("%d wheels\n", n);
}
