# Lua 5.4.4 (Debian source lua5.4) without Debian's libtool: the objects of src/ (less
# luac.c) compiled with $CC, two at a time, and linked into src/lua. Run from the top of
# the source tree; $CC is the compiler (clang-19, or a cachefit wrapper).
set -e
printf '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n' > src/lua5.4-deb-multiarch.h
ls src/l*.c | grep -v '/luac\.c$' | sed 's/\.c$//' |
  xargs -P2 -I{} sh -c "$CC -std=gnu99 -O2 -g -Wall -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -c {}.c -o {}.o"
$CC -o src/lua $(ls src/l*.o | grep -v '/luac\.o$') -lm -ldl -Wl,-E
