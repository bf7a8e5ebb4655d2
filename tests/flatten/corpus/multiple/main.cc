// Multiple non-virtual inheritance with mixed member sizes (base padding disappears).
#include <cstdio>

struct counter {
    void bump() { ++count; flag = 1; }
    long count = 0;
    char flag = 0;
};

struct named {
    void set(const char* n) { name = n; }
    const char* name = "anon";
    short tag = 3;
};

struct stamped {
    virtual void stamp(int t) { when = t; }
    virtual int age(int now) const { return now - when; }
    int when = 0;
    char kind = 'x';
};

struct thing : counter, named, stamped {
    void stamp(int t) override { when = t * 2; bump(); }
    char mark = 'm';
    void print() const { printf("%s count=%ld flag=%d tag=%d when=%d kind=%c mark=%c\n", name, count, flag, tag, when, kind, mark); }
};

int main() {
    thing t;
    t.set("box");
    t.stamp(5);
    t.bump();
    t.print();
    printf("age=%d\n", t.age(100));
    return 0;
}
