/* C records for the front-end comparison tests (tests/frontend/test_corpus_layouts.py).
 *
 * Only type definitions: the tests include this file in a generated probe program that
 * prints sizeof/_Alignof/offsetof and bit positions, compile it with gcc and clang, and
 * compare the figures with what cachefit's front ends read. Keep every record default-
 * initialisable and free of initialisers; add a new record to C_RECORDS in the test too.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct plain {
    char c;
    int i;
    double d;
    short s;
};

struct fixed_ints {
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d;
    int8_t e;
    size_t n;
};

struct ptrs {
    struct ptrs *next;
    const char *name;
    void (*cb)(int, char *);
    char *const cp;
    volatile long vl;
    int (*cmp)(const void *, const void *);
    void (*table[4])(void);
};

struct bits_basic {
    unsigned a : 3;
    unsigned b : 5;
    unsigned c : 24;
    int d : 4;
};

/* y does not fit in the rest of x's unit and starts a new one; z and w likewise. */
struct bits_cross {
    unsigned char f;
    unsigned x : 20;
    unsigned y : 20;
    unsigned long long z : 40;
    unsigned long long w : 30;
};

/* Zero-width bit-fields force the next bit-field to the next unit. */
struct bits_zero {
    unsigned a : 4;
    unsigned : 0;
    unsigned b : 4;
    char c;
    unsigned : 0;
    unsigned char d : 3;
    unsigned : 5;
    unsigned char e : 2;
};

struct bits_mixed {
    char tag;
    uint16_t lo : 7;
    uint16_t hi : 9;
    uint8_t flag : 1;
    bool on : 1;
    signed char sc : 3;
    long l;
    long long big : 33;
};

struct __attribute__((packed)) packed_hdr {
    uint8_t type;
    uint32_t len;
    uint16_t port;
    uint64_t seq;
};

/* Packed, but every member happens to sit at its natural alignment. */
struct __attribute__((packed)) packed_aligned {
    uint32_t a;
    uint16_t b;
};

struct __attribute__((packed)) packed_bits {
    uint8_t kind;
    uint32_t val : 20;
    uint16_t id;
};

struct cacheline {
    long counter;
} __attribute__((aligned(64)));

struct per_cpu {
    int id;
    long hot __attribute__((aligned(64)));
    int cold;
};

struct c11_align {
    char c;
    _Alignas(16) int x;
    char tail;
};

union value {
    int i;
    double d;
    char bytes[12];
};

union tagged_bits {
    struct {
        unsigned a : 4;
        unsigned b : 4;
    } s;
    unsigned raw;
    unsigned short lo : 9;
};

/* Anonymous members: an anonymous union holding an anonymous struct, and a named member
 * of an unnamed struct type (which is not expanded). */
struct packet {
    int kind;
    union {
        struct {
            uint16_t sport;
            uint16_t dport;
        };
        uint32_t ports;
    };
    struct {
        char flags;
        short window;
    };
    struct {
        int px;
        int py;
    } pos;
    char payload[8];
};

struct inner_c {
    int a;
    char b;
};

struct outer_c {
    char tag;
    struct inner_c in;
    struct inner_c arr[3];
    struct {
        double w;
    } anon_typed;
};

struct msg {
    uint32_t len;
    uint16_t type;
    char data[];
};

struct fam_aligned {
    char c;
    double vals[];
};

typedef struct {
    float x, y, z;
} vec3_t;

typedef struct list_head {
    struct list_head *next, *prev;
} list_head_t;

enum color { RED, GREEN, BLUE };

struct with_enum {
    enum color c;
    char x;
    enum color bits : 2;
    vec3_t where;
    list_head_t link;
};

struct big_arrays {
    char name[100];
    int vals[16];
    double m[4][4];
    struct plain cells[3][2];
};

struct wide {
    char c;
    long double ld;
    __int128 i128;
    _Complex double z;
    char tail;
};

struct empty_c {
};

struct after_empty {
    char c;
    struct empty_c e;
    int x;
};
