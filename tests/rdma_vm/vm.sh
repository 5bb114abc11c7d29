#!/bin/bash
# The RDMA VM harness (host side): runs project binaries over real verbs on Soft-RoCE inside a
# qemu VM that boots Debian's own kernel (it builds rdma_rxe; the host's kernel has no RDMA).
#   vm.sh PLAN [BINARY...]
# PLAN: lines "name<TAB>timeout_s<TAB>command" run in the VM by guest.sh after the smoke checks
# (rxe0 active, ibv_rc_pingpong); BINARY: files copied to the VM's $BIN (/guest/bin). The host's
# /usr and /etc are shared read-only, so binaries built here run there unchanged (Bazel links
# the project statically: --dynamic_mode=off).
#
# Cached under MPIGPU_RDMA_VM_CACHE (default /var/cache/mpigpu-rdma-vm, locked with flock): the
# kernel package (apt-get download of the linux-image-6.1.0-*-amd64 that linux-image-amd64 names;
# dpkg -x, never installed) and the initramfs (busybox-static + the modules). Reruns boot at once.
# Accel: TCG (this kind of machine's /dev/kvm, kvm_pvm, cannot boot a stock kernel); KVM where a
# real one exists. Exit status: the guest's (0: every step passed); 200: the VM died or timed
# out. Where qemu, busybox-static or the kernel cannot be had, it prints "SKIPPED: <reason>",
# writes a skipped test.xml and exits 0 (the project's convention: GPU tests skip and pass).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PLAN=$1; shift
CACHE=${MPIGPU_RDMA_VM_CACHE:-/var/cache/mpigpu-rdma-vm}
OUTDIR=${TEST_UNDECLARED_OUTPUTS_DIR:-${TMPDIR:-/tmp}/mpigpu-rdma-vm-out}
T0=$(date +%s.%N)
log() { printf '[rdma-vm %6.1fs] %s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*"; }
skip() {
  echo "SKIPPED: $*"
  if [ -n "${XML_OUTPUT_FILE:-}" ]; then
    cat > "$XML_OUTPUT_FILE" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" errors="0" skipped="1"><testsuite name="rdma_vm" tests="1" skipped="1">
<testcase name="rdma_vm" status="notrun"><skipped message="$*"/></testcase></testsuite></testsuites>
XML
  fi
  exit 0
}

for t in qemu-system-x86_64 cpio gzip modprobe depmod dpkg bc; do
  command -v $t >/dev/null || skip "$t not found (tools/setup.sh installs qemu-system-x86, cpio, kmod)"
done
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || skip "no static /bin/busybox (package busybox-static)"
for t in ibv_devinfo ibv_rc_pingpong rdma; do
  command -v $t >/dev/null || skip "$t not found (packages ibverbs-utils, iproute2)"
done
mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] || skip "cache folder $CACHE not writable (set MPIGPU_RDMA_VM_CACHE)"

# ---- kernel and initramfs (cached; one preparer at a time)
exec 9>"$CACHE/.lock"
flock 9
if ! ls "$CACHE"/debs/linux-image-*-amd64_*.deb >/dev/null 2>&1; then
  log "fetching Debian's kernel package (once; cached in $CACHE)"
  PKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  if [ -z "$PKG" ]; then apt-get update -q >/dev/null 2>&1
    PKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'); fi
  [ -n "$PKG" ] || skip "apt knows no linux-image-amd64 (no Debian archive reachable)"
  mkdir -p "$CACHE/debs.tmp" && (cd "$CACHE/debs.tmp" && apt-get download -q "$PKG" >/dev/null 2>&1) \
    || skip "apt-get download $PKG failed (no network to the Debian archive?)"
  rm -rf "$CACHE/debs" && mv "$CACHE/debs.tmp" "$CACHE/debs"
fi
DEB=$(ls "$CACHE"/debs/linux-image-*-amd64_*.deb | head -1)
KROOT=$CACHE/kroot
if [ ! -f "$KROOT/.done" ]; then
  log "unpacking $(basename "$DEB")"
  rm -rf "$KROOT" && dpkg -x "$DEB" "$KROOT" || skip "dpkg -x $DEB failed"
  touch "$KROOT/.done"
fi
K=$(ls "$KROOT/lib/modules" | head -1)
KEY=$(cat "$HERE/init" "$HERE/finish.sh" /bin/busybox | md5sum | cut -c1-12)-$K
IRD=$CACHE/initramfs-$KEY.cpio.gz
if [ ! -f "$IRD" ]; then
  log "building the initramfs for kernel $K"
  depmod -b "$KROOT" "$K" || exit 1
  IR=$(mktemp -d); mkdir -p "$IR/bin" "$IR/mods"
  cp /bin/busybox "$IR/bin/busybox"
  : > "$IR/mods/order"
  for m in virtio_pci 9pnet_virtio 9p crc32_generic crc32-pclmul rdma_rxe rdma_ucm dummy; do
    modprobe -d "$KROOT" -S "$K" --show-depends "$m" | awk '$1=="insmod"{print $2}' | while read -r f; do
      b=$(basename "$f"); grep -qx "$b" "$IR/mods/order" || { cp "$f" "$IR/mods/"; echo "$b" >> "$IR/mods/order"; }
    done
  done
  install -m 755 "$HERE/init" "$IR/init"; install -m 755 "$HERE/finish.sh" "$IR/finish.sh"
  (cd "$IR" && find . | cpio -o -H newc --quiet | gzip -1) > "$IRD.tmp" && mv "$IRD.tmp" "$IRD"
  rm -rf "$IR"
fi
flock -u 9

# ---- the guest's folder: guest.sh, the plan, the binaries
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/mpigpu-rdma-vm.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/out"
install -m 755 "$HERE/guest.sh" "$STAGE/guest.sh"
cp "$PLAN" "$STAGE/plan"
for b in "$@"; do cp -L "$b" "$STAGE/bin/" || exit 1; done
chmod -R a+rX "$STAGE"

# ---- boot
if [ -z "${ACCEL:-}" ]; then
  if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ]; then ACCEL=kvm; else ACCEL=tcg; fi
fi
if [ "$ACCEL" = kvm ]; then ACC="-accel kvm -cpu host"; else ACC="-accel tcg,thread=multi -cpu max"; fi
SMP=${RDMA_VM_SMP:-2}; MEM=${RDMA_VM_MEM:-2048}; TIMEOUT=${RDMA_VM_TIMEOUT:-840}
log "booting kernel $K (accel=$ACCEL smp=$SMP mem=${MEM}M, limit ${TIMEOUT}s)"
share() { echo "-virtfs local,path=$1,mount_tag=$2,security_model=none,multidevs=remap$3"; }
timeout --foreground -k 5 "$TIMEOUT" qemu-system-x86_64 -nodefaults -no-user-config -machine q35 $ACC \
  -smp "$SMP" -m "$MEM" -display none -serial stdio -no-reboot \
  -kernel "$KROOT/boot/vmlinuz-$K" -initrd "$IRD" \
  -append "console=ttyS0 panic=-1 quiet loglevel=4" \
  -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
  $(share /usr hostusr ,readonly=on) $(share /etc hostetc ,readonly=on) \
  $(share "$STAGE" guest ,readonly=on) $(share "$STAGE/out" out "") \
  </dev/null > "$STAGE/console.log" 2>&1
q=$?
if [ $((q & 1)) -eq 1 ]; then rc=$((q >> 1)); else rc=200; fi
mkdir -p "$OUTDIR" && cp -r "$STAGE/console.log" "$STAGE/out/." "$OUTDIR/" 2>/dev/null
grep -vE '^\s*$' "$STAGE/console.log" | sed 's/^/  vm| /' | tail -n 400
log "guest rc=$rc (qemu $q); logs in $OUTDIR"
[ $rc -eq 200 ] && log "the VM died or ran past ${TIMEOUT}s before reporting"
exit $rc
