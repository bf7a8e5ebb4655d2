/* Issue 31: helpers that get pointers into a traced object from another unit
   (touch_filter_escape.c) and do not know its type; triple() touches no memory. */
void add_long(long *p, long v) { *p += v; }
char first_byte(const void *p) { return ((const char *)p)[0]; }
long sum_longs(long *const *ps, int n) {
    long s = 0;
    for (int i = 0; i < n; i++)
        s += *ps[i];
    return s;
}
int triple(int x) { return 3 * x; }
