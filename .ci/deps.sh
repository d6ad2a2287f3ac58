#!/usr/bin/env bash
# Installs every Debian package np needs (make deps). Idempotent: with --check it
# only installs when something is missing, so 'make test' can call it each time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${1:-}" = "--check" ] && [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all ${#pkgs[@]} packages installed" >&2
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing packages: ${missing[*]}; run 'make deps' as root" >&2
    exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# nginx-light's package starts a system nginx on :80; the tests start their own.
systemctl disable --now nginx >/dev/null 2>&1 || service nginx stop >/dev/null 2>&1 || true
echo "deps: done" >&2
