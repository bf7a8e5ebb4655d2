/* A second program with only the library's `struct dict` (twodefs_lib.c): its profile
 * build names the type plainly, `dict`. */
void *lib_new(void);
void lib_use(void *p);
void lib_use_global(void);

int main(void)
{
    void *h = lib_new();
    lib_use(h);
    lib_use_global();
    return 0;
}
