#!/usr/bin/env bash
# Puts the qemu-plugin.h that matches the installed QEMU into $1 (default build/include):
# downloads Debian's qemu source package with apt-get and extracts only that header, with the
# Debian patches that touch it applied. Needs deb-src entries in apt's sources: when they are
# missing and we are root, they are derived from the existing deb entries (same archives).
set -euo pipefail
dest=${1:-build/include}
hdr=include/qemu/qemu-plugin.h

pkg=
for p in qemu-system-x86 qemu-user qemu-system-common qemu-user-static; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    pkg=$p; break
  fi
done
if [ -z "$pkg" ]; then
  echo "fetch-qemu-header: QEMU is not installed; apt-get install qemu-system-x86 qemu-user" >&2
  exit 1
fi
ver=$(dpkg-query -W -f='${source:Version}' "$pkg")
if [ -f "$dest/qemu/qemu-plugin.h" ] && [ "$(cat "$dest/qemu/.version" 2>/dev/null)" = "$ver" ]; then
  exit 0
fi

if ! apt-cache showsrc qemu >/dev/null 2>&1 || ! apt-cache showsrc qemu 2>/dev/null | grep -q '^Package:'; then
  if [ "$(id -u)" != 0 ]; then
    echo "fetch-qemu-header: apt has no deb-src entries; as root, add 'deb-src' next to the" \
         "'deb' entries of apt's sources and run apt-get update (or run this script as root)" >&2
    exit 1
  fi
  echo "fetch-qemu-header: adding deb-src entries (copies of the deb entries) to apt's sources"
  src822=/etc/apt/sources.list.d/cachefit-deb-src.sources
  : > "$src822.tmp"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] && [ "$f" != "$src822" ] || continue
    # deb822 stanzas: the same archives, with Types: deb-src
    grep -q '^Types:.*deb' "$f" || continue
    sed -E 's/^Types:.*/Types: deb-src/' "$f" >> "$src822.tmp"
    echo >> "$src822.tmp"
  done
  if [ -s "$src822.tmp" ]; then mv "$src822.tmp" "$src822"; else rm -f "$src822.tmp"; fi
  srclist=/etc/apt/sources.list.d/cachefit-deb-src.list
  if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > "$srclist"
  fi
  apt-get update -qq
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetch-qemu-header: downloading Debian's qemu source package $ver (only $hdr is kept)"
( cd "$work" && { apt-get source -qq --download-only "qemu=$ver" >/dev/null 2>&1 \
                  || apt-get source -qq --download-only qemu >/dev/null; } )
orig=$(ls "$work"/qemu_*.orig.tar.* | head -n1)
mkdir -p "$work/src"
tar -xf "$orig" -C "$work/src" --wildcards "*/$hdr" "*/COPYING"
top=$(ls "$work/src")
# Debian patches that touch the header (applied in series order)
deb=$(ls "$work"/qemu_*.debian.tar.* 2>/dev/null | head -n1 || true)
if [ -n "$deb" ]; then
  tar -xf "$deb" -C "$work/src/$top" debian/patches 2>/dev/null || true
  series="$work/src/$top/debian/patches/series"
  if [ -f "$series" ]; then
    grep -v '^\s*#' "$series" | while read -r p _; do
      [ -n "$p" ] || continue
      if grep -q "^+++ [^ ]*/$hdr" "$work/src/$top/debian/patches/$p" 2>/dev/null; then
        echo "fetch-qemu-header: applying Debian patch $p"
        ( cd "$work/src/$top" && filterdiff -i "*/$hdr" "debian/patches/$p" 2>/dev/null \
            | patch -p1 -s ) || ( cd "$work/src/$top" && patch -p1 -s --dry-run < "debian/patches/$p" >/dev/null && patch -p1 -s < "debian/patches/$p" )
      fi
    done
  fi
fi
mkdir -p "$dest/qemu"
cp "$work/src/$top/$hdr" "$dest/qemu/qemu-plugin.h"
cp "$work/src/$top/COPYING" "$dest/qemu/COPYING"
echo "$ver" > "$dest/qemu/.version"
echo "fetch-qemu-header: $dest/qemu/qemu-plugin.h from qemu $ver"
