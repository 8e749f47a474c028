#!/usr/bin/env bash
# Lays out the build context of deploy/container/Containerfile in OUT: the manager binary, the
# shared libraries the dynamic loader resolves for it on this machine (ldd), the CA bundle (the
# manager trusts the system's roots for amqps://, smtps:// and webhooks), a passwd entry for the
# user it runs as, and the browser bundle SITE (target/site after a build; without it the pages
# render but do not hydrate). Taking the libraries from the build machine keeps them the ones
# the binary was linked against.
#
#   deploy/container/stage.sh BINARY SITE OUT
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: $0 BINARY SITE OUT" >&2; exit 2; }
bin=$1 site=$2 out=$3
[ -x "$bin" ] || { echo "$bin: not an executable" >&2; exit 1; }

rm -rf "$out"
root="$out/rootfs"
mkdir -p "$root/usr/bin" "$root/etc/ssl/certs" "$root/tmp" "$root/usr/share/agent-manager/site" \
  "$out/state"
chmod 1777 "$root/tmp"
cp "$bin" "$root/usr/bin/agent-manager"

# Every library by the path the loader looks it up at, the loader itself included; -L copies
# the file a versioned symlink points to under the name the binary asks for.
ldd "$bin" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
# The loader is also looked up by its canonical path, whatever ldd printed.
case "$(uname -m)" in
  x86_64) loader=/lib64/ld-linux-x86-64.so.2 ;;
  aarch64) loader=/lib/ld-linux-aarch64.so.1 ;;
  *) loader= ;;
esac
if [ -n "$loader" ] && [ ! -e "$root$loader" ]; then
  mkdir -p "$root$(dirname "$loader")"
  cp -L "$loader" "$root$loader"
fi

cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
printf 'root:x:0:0::/:/nonexistent\nnonroot:x:65532:65532::/var/lib/agent-manager:/nonexistent\n' \
  > "$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$root/etc/group"
# Name resolution by glibc: the files, then DNS (both built into libc since 2.34).
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
if [ -d "$site" ]; then
  cp -a "$site/." "$root/usr/share/agent-manager/site/"
fi
