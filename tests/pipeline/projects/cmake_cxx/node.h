// node.h - a class built from a small hierarchy; only `node` is used outside it, so the
// hierarchy can be flattened (cachefit.flatten) and then reordered.
#pragma once

class node_iface {
public:
    virtual ~node_iface() = default;
    virtual long weight() const = 0;
    virtual void touch(long t) = 0;
};

class node_base : public node_iface {
public:
    explicit node_base(int id) : id_(id) {}
    long weight() const override { return w_ + id_; }
    int id_;
    long w_ = 0;
};

class node_stats : public node_base {
public:
    explicit node_stats(int id) : node_base(id) {}
    void touch(long t) override { hits_ += t; last_ = t; }
    long hits_ = 0;
    char kind_ = 'n';
    long last_ = 0;
};

class node : public node_stats {
public:
    explicit node(int id) : node_stats(id) {}
    long score() const { return weight() * 3 + hits_ + key_ + kind_ + flag_; }
    long key_ = 0;
    char flag_ = 0;
    node* next_ = nullptr;
};

long schedule(node* head, int rounds);
long checksum(long a, long b);
