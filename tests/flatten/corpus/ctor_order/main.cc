// Construction and destruction order: virtual bases first, then bases in declaration order,
// then members; destructors in reverse. A virtual call during a base constructor runs the
// base's own version.
#include <cstdio>

struct log_base {
    log_base(const char* who) : tag(who) { printf("log_base(%s)\n", who); }
    ~log_base() { printf("~log_base(%s)\n", tag); }
    const char* tag;
};

struct a : virtual log_base {
    a(int v) : log_base("from a"), x(v * 2) { printf("a x=%d who=%s\n", x, whoami()); }
    virtual ~a() { printf("~a x=%d\n", x); }
    virtual const char* whoami() const { return "a"; }
    int x;
};

struct b {
    b() : y{7}, z(y + 1) { printf("b y=%d z=%d\n", y, z); }
    ~b() { printf("~b\n"); }
    int y;
    int z;
};

struct c : a, b {
    c(int v) : log_base("from c"), a(v), b() { printf("c x=%d\n", x); }
    ~c() { printf("~c\n"); }
};

struct top : c, virtual log_base {
    top() : log_base("from top"), c(21), w(x + y) { printf("top w=%d who=%s\n", w, whoami()); }
    ~top() override { printf("~top\n"); }
    const char* whoami() const override { return "top"; }
    int w;
};

int main() {
    {
        top t;
        printf("tag=%s x=%d y=%d z=%d w=%d\n", t.tag, t.x, t.y, t.z, t.w);
    }
    printf("done\n");
    return 0;
}
