#!/usr/bin/env bash
# Installs the Debian packages cachefit needs that are missing, printing what it installs.
# Runs apt-get only as root; otherwise it names the missing packages and exits non-zero.
set -euo pipefail
want=("$@")
missing=()
for pkg in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "cachefit: missing Debian packages: ${missing[*]}" >&2
  echo "cachefit: run as root, or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "cachefit: installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "cachefit: installed: ${missing[*]}"
