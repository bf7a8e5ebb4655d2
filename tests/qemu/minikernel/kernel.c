/* The system-mode test "kernel" (qemu-system-i386 -kernel, multiboot): code in .ktext is the
 * kernel (kernel_range = [__ktext_start, __ktext_end]), the rest plays the user. */
struct obj { int a, b, c; char pad[52]; int d; };   /* 68 bytes */
struct obj x, y, z;

/* "kernel" code: the functions in .ktext; everything else is "user" code */
#define KERNEL __attribute__((section(".ktext"), noinline))
KERNEL void k_op(struct obj *p, struct obj *q) { p->a = 1; q->b = p->b + 2; q->d = 3; }
KERNEL void k_one(struct obj *p) { p->c = 4; }

__attribute__((noinline)) void phase_begin(void) { __asm__ volatile(""); }
__attribute__((noinline)) void phase_done(void) { __asm__ volatile(""); }

void kmain(void)
{
    k_one(&x);
    phase_begin();
    k_op(&x, &y);
    k_op(&z, &x);
    k_one(&y);
    phase_done();
    k_one(&z);
}
