/* cachefit.h - optional annotations for cachefit profile builds.
 *
 * cachefit finds global and static objects of the target types itself (from the
 * debug information) and registers heap objects at malloc/calloc/realloc/free
 * sites and in C++ constructors and destructors.  Use these macros only for
 * objects it cannot see: objects carved out of a custom allocator, objects on
 * the stack, or arrays whose elements are further apart than their size.
 *
 * Outside profile builds (CACHEFIT_PROFILE not defined; `cachefit cc` defines it
 * in profile mode) every macro expands to ((void)0) and its arguments are not
 * evaluated.  The header is self-contained: copy it into a project or add
 * runtime/include to the include path.
 *
 *   CACHEFIT_OBJECT(ptr, type)                  one object of `type` at ptr
 *   CACHEFIT_ARRAY(ptr, type, count, stride)    `count` objects, `stride` bytes apart
 *   CACHEFIT_FORGET(ptr)                        ptr no longer holds an object
 *   CACHEFIT_BEGIN() / CACHEFIT_END()           mark an invocation by hand
 *   CACHEFIT_DUMP()                             write the trace collected so far
 *
 * `type` is written as in cachefit.toml (`obj`, `struct obj` and typedef names
 * that the link step found in the debug information are all accepted).
 */
#ifndef CACHEFIT_H
#define CACHEFIT_H

#if defined(CACHEFIT_PROFILE) && CACHEFIT_PROFILE
#ifdef __cplusplus
extern "C" {
#endif
void cachefit_object(const void *ptr, unsigned long size, const char *type);
void cachefit_array(const void *ptr, unsigned long count, unsigned long size,
                    unsigned long stride, const char *type);
void cachefit_forget(const void *ptr);
void cachefit_begin(void);
void cachefit_end(void);
void cachefit_dump(void);
#ifdef __cplusplus
}
#endif
#define CACHEFIT_OBJECT(ptr, type) cachefit_object((const void *)(ptr), sizeof(type), #type)
#define CACHEFIT_ARRAY(ptr, type, count, stride) \
    cachefit_array((const void *)(ptr), (count), sizeof(type), (stride), #type)
#define CACHEFIT_FORGET(ptr) cachefit_forget((const void *)(ptr))
#define CACHEFIT_BEGIN() cachefit_begin()
#define CACHEFIT_END() cachefit_end()
#define CACHEFIT_DUMP() cachefit_dump()
#else
#define CACHEFIT_OBJECT(ptr, type) ((void)0)
#define CACHEFIT_ARRAY(ptr, type, count, stride) ((void)0)
#define CACHEFIT_FORGET(ptr) ((void)0)
#define CACHEFIT_BEGIN() ((void)0)
#define CACHEFIT_END() ((void)0)
#define CACHEFIT_DUMP() ((void)0)
#endif

#endif /* CACHEFIT_H */
