#!/usr/bin/env bash
# Build the Debian 12 systemd image the Molecule scenario boots its hosts from,
# without any registry: debootstrap (minbase) + `docker import`.
#
#   minik8s/molecule-debian:12   Debian bookworm minbase, systemd as PID 1 (CMD /sbin/init),
#                                python3 (+ venv) for Ansible and the minik8s virtualenv,
#                                and -- so that converge is fast and needs no network --
#                                the Debian packages site.yml installs: docker.io,
#                                etcd-server, iptables, iproute2, busybox-static, ...
#   (Docker's import cannot set STOPSIGNAL: containers of it should be run with
#   --stop-signal SIGRTMIN+3 so that `docker stop` shuts systemd down cleanly.)
#
# Usage (as root):  scripts/build-molecule-image.sh [--force]
#   The image is rebuilt only when it is missing or was built from another
#   package list / suite / version of this script (label org.minik8s.fingerprint),
#   so a second call returns at once. --force rebuilds anyway.
# Environment:
#   MINIK8S_DEBIAN_MIRROR     mirror for debootstrap (default: the main Debian archive
#                             from this machine's apt sources)
#   MINIK8S_DEBIAN_SUITE      suite (default: bookworm)
#   MINIK8S_MOLECULE_IMAGE    image name (default: minik8s/molecule-debian:12)
set -euo pipefail

IMAGE="${MINIK8S_MOLECULE_IMAGE:-minik8s/molecule-debian:12}"
SUITE="${MINIK8S_DEBIAN_SUITE:-bookworm}"
# Bump when the rootfs tweaks below change (part of the fingerprint).
RECIPE_VERSION=3
PACKAGES=(
    systemd systemd-sysv
    python3 python3-venv
    iproute2 iptables kmod procps
    ca-certificates
    docker.io
    etcd-server
    busybox-static
)

say() { echo "build-molecule-image: $*"; }
die() { echo "build-molecule-image: ERROR: $*" >&2; exit 1; }

FORCE=0
for arg in "$@"; do
    case "$arg" in
        --force|-f) FORCE=1 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) die "unknown argument: $arg (usage: $0 [--force])" ;;
    esac
done

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap)"
docker info >/dev/null 2>&1 || die "'docker info' fails; run scripts/start-dockerd.sh first"

FINGERPRINT="$(printf '%s\n' "$RECIPE_VERSION" "$SUITE" "${PACKAGES[@]}" | sha256sum | cut -c1-16)"

# shellcheck source=lib/debian-mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-mirror.sh"
# shellcheck source=lib/debootstrap.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debootstrap.sh"
# One build at a time on this machine (parallel test runs may call this).
exit_if_current "$IMAGE" "$FINGERPRINT" "$FORCE" /tmp/minik8s-build-molecule-image.lock

ensure_debootstrap

WORK="$(mktemp -d /tmp/minik8s-molecule-image.XXXXXX)"
cleanup() { rm -rf --one-file-system "$WORK"; }
trap cleanup EXIT
ROOT="$WORK/rootfs"
MIRROR="$(debian_mirror)"
start=$SECONDS

debootstrap_minbase "$ROOT" "$SUITE" "$MIRROR" "${PACKAGES[@]}"

# --- make it a good container host for systemd -------------------------------------
# Units that make no sense (or hang) in a container.
for unit in getty@.service console-getty.service serial-getty@.service getty.target \
        systemd-firstboot.service systemd-udevd.service systemd-udev-trigger.service \
        systemd-remount-fs.service systemd-networkd-wait-online.service \
        sys-kernel-debug.mount sys-kernel-tracing.mount dev-hugepages.mount dev-mqueue.mount \
        sys-fs-fuse-connections.mount systemd-journald-audit.socket \
        apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
        fstrim.timer; do
    ln -sf /dev/null "$ROOT/etc/systemd/system/$unit"
done
# The playbook decides where etcd and Docker run and with which settings:
# do not start them before it has configured them.
rm -f "$ROOT"/etc/systemd/system/multi-user.target.wants/etcd.service \
      "$ROOT"/etc/systemd/system/multi-user.target.wants/docker.service \
      "$ROOT"/etc/systemd/system/sockets.target.wants/docker.socket \
      "$ROOT"/etc/systemd/system/multi-user.target.wants/containerd.service
# Docker and the container runtime provide these at run time.
: >"$ROOT/etc/machine-id"
rm -f "$ROOT/var/lib/dbus/machine-id"
: >"$ROOT/etc/hostname"
: >"$ROOT/etc/resolv.conf"
# Keep it small: no package caches, lists, docs, man pages, logs.
rm -rf "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* \
    "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
    "$ROOT"/usr/share/locale/* "$ROOT"/var/log/*.log "$ROOT"/var/log/apt/* "$ROOT"/tmp/* "$ROOT"/var/tmp/*
# Apt sources of the image: the same mirror (only used when a role really installs
# a package that is missing; the Molecule network has no way out anyway).
echo "deb $MIRROR $SUITE main" >"$ROOT/etc/apt/sources.list"

old_id="$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
tar --numeric-owner -C "$ROOT" -c . \
    | docker import \
        --change 'ENV container=docker' \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["/sbin/init"]' \
        --change "LABEL org.minik8s.fingerprint=$FINGERPRINT" \
        --change 'LABEL org.minik8s.built-by=scripts/build-molecule-image.sh' \
        - "$IMAGE" >/dev/null
new_id="$(docker image inspect -f '{{.Id}}' "$IMAGE")"
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
    docker image rm "$old_id" >/dev/null 2>&1 || true
fi
size="$(docker image inspect -f '{{.Size}}' "$IMAGE")"
say "$IMAGE built in $((SECONDS - start))s ($((size / 1024 / 1024)) MiB, fingerprint $FINGERPRINT)"
