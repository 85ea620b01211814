#!/usr/bin/env bash
# Build the test Slurm site: a stand-in for a remote HPC login node, without any registry
# (debootstrap from Debian 12 packages + `docker import`).
#
#   minik8s/slurm:latest   Debian bookworm minbase with slurmctld, slurmd, slurm-client, munge,
#                          openssh-server, gcc/g++ and a start script (/usr/local/sbin/slurm-site)
#                          that brings up a one-host Slurm cluster (partition `dgx2`, one node
#                          with Gres=gpu:2) and sshd with key authentication for the user `hpc`.
#
# The GPUs of this site are FAKE: gres.conf points at /dev/nvidia0 and /dev/nvidia1, which the
# start script creates as empty placeholder files, so Slurm schedules `--gres=gpu:N` jobs on a
# machine that has no GPU.  CUDA programs compile (nvcc) but fail at run time with the CUDA
# runtime's error, which is what the tests expect.
#
# nvcc: when this machine has the CUDA toolkit at /usr/local/cuda, the image carries only a
# /usr/local/bin/nvcc wrapper and containers mount the toolkit read-only at /usr/local/cuda
# (see run_slurm_site in tests/integration/slurm_site.py).  When it has not (or with
# MINIK8S_SLURM_CUDA=wheels) the toolkit is assembled from NVIDIA's PyPI wheels
# (nvidia-cuda-nvcc, -crt, -runtime, -cccl, nvidia-nvvm) into the image's /usr/local/cuda.
#
# Container contract (environment of `docker run`):
#   SSH_AUTHORIZED_KEYS   public key line(s) for /home/hpc/.ssh/authorized_keys (required)
#   SLURM_GPUS            number of fake GPUs of the node (default 2)
#   SLURM_CPUS            CPUs of the node, as Boards=1 SocketsPerBoard=1 CoresPerSocket=N (default 8)
# Host keys and the munge key are made at first start.  sshd listens on port 22.
#
# Usage (as root):  scripts/build-slurm-image.sh [--force]
#   Rebuilt only when missing or built from another recipe (label org.minik8s.fingerprint).
# Environment:
#   MINIK8S_DEBIAN_MIRROR   mirror for debootstrap (default: this machine's Debian archive)
#   MINIK8S_DEBIAN_SUITE    suite (default: bookworm)
#   MINIK8S_SLURM_IMAGE     image name (default: minik8s/slurm:latest)
#   MINIK8S_SLURM_CUDA      host (default when /usr/local/cuda/bin/nvcc exists) or wheels
set -euo pipefail

IMAGE="${MINIK8S_SLURM_IMAGE:-minik8s/slurm:latest}"
SUITE="${MINIK8S_DEBIAN_SUITE:-bookworm}"
# Bump when the rootfs recipe below changes (part of the fingerprint).
RECIPE_VERSION=2
PACKAGES=(slurmctld slurmd slurm-client munge openssh-server gcc g++ libc6-dev procps)
# NVIDIA's wheels for the fallback toolkit (one CUDA release, 13.0, as on the lent GPU machines).
CUDA_WHEELS=(nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96
             nvidia-cuda-cccl==13.0.85 nvidia-nvvm==13.0.88)

say() { echo "build-slurm-image: $*"; }
die() { echo "build-slurm-image: ERROR: $*" >&2; exit 1; }

FORCE=0
for arg in "$@"; do
    case "$arg" in
        --force|-f) FORCE=1 ;;
        -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
        *) die "unknown argument: $arg (usage: $0 [--force])" ;;
    esac
done

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap)"
docker info >/dev/null 2>&1 || die "'docker info' fails; run scripts/start-dockerd.sh first"

CUDA_MODE="${MINIK8S_SLURM_CUDA:-}"
if [ -z "$CUDA_MODE" ]; then
    if [ -x /usr/local/cuda/bin/nvcc ]; then CUDA_MODE=host; else CUDA_MODE=wheels; fi
fi
case "$CUDA_MODE" in host|wheels) ;; *) die "MINIK8S_SLURM_CUDA must be host or wheels, not $CUDA_MODE" ;; esac

FINGERPRINT="$(printf '%s\n' "$RECIPE_VERSION" "$SUITE" "$CUDA_MODE" "${PACKAGES[@]}" \
    "${CUDA_WHEELS[@]}" | sha256sum | cut -c1-16)"

# shellcheck source=lib/debian-mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-mirror.sh"
# shellcheck source=lib/debootstrap.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debootstrap.sh"
# One build at a time on this machine (parallel test runs may call this).
exit_if_current "$IMAGE" "$FINGERPRINT" "$FORCE" /tmp/minik8s-build-slurm-image.lock

ensure_debootstrap

WORK="$(mktemp -d /tmp/minik8s-slurm-image.XXXXXX)"
cleanup() { rm -rf --one-file-system "$WORK"; }
trap cleanup EXIT
ROOT="$WORK/rootfs"
MIRROR="$(debian_mirror)"
start=$SECONDS

debootstrap_minbase "$ROOT" "$SUITE" "$MIRROR" "${PACKAGES[@]}"

# --- the HPC user, sshd, Slurm directories ------------------------------------------------
chroot "$ROOT" useradd --create-home --uid 1000 --shell /bin/bash hpc
# '*' : no password can match, but the account is not "locked" (sshd without PAM refuses
# locked accounts even for key authentication).
chroot "$ROOT" usermod -p '*' hpc
install -d -m 0700 -o 1000 -g 1000 "$ROOT/home/hpc/.ssh"
rm -f "$ROOT"/etc/ssh/ssh_host_*
cat >"$ROOT/etc/ssh/sshd_config.d/minik8s-slurm-site.conf" <<'EOF'
# Test Slurm site: key authentication only, no PAM (no login sessions in a plain container).
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
PubkeyAuthentication yes
UsePAM no
PrintMotd no
MaxSessions 64
MaxStartups 64:30:128
EOF
mkdir -p "$ROOT/run/sshd" "$ROOT/var/spool/slurmctld" "$ROOT/var/spool/slurmd" "$ROOT/var/log/slurm" \
    "$ROOT/run/munge"

# nvcc on PATH for non-interactive SSH commands and batch jobs (sshd's default PATH has
# /usr/local/bin); the toolkit itself is at /usr/local/cuda (mounted or bundled).
cat >"$ROOT/usr/local/bin/nvcc" <<'EOF'
#!/bin/sh
# The CUDA toolkit lives at /usr/local/cuda (mounted read-only from the host, or bundled).
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "nvcc: the CUDA toolkit is not available at /usr/local/cuda on this site" >&2
    exit 127
fi
exec /usr/local/cuda/bin/nvcc "$@"
EOF
chmod 0755 "$ROOT/usr/local/bin/nvcc"

if [ "$CUDA_MODE" = wheels ]; then
    say "assembling the CUDA toolkit from PyPI wheels: ${CUDA_WHEELS[*]}"
    PY="$(command -v python3)" || die "python3 is needed to download the CUDA wheels"
    "$PY" -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
        --platform manylinux_2_17_x86_64 --python-version 3.11 -d "$WORK/wheels" "${CUDA_WHEELS[@]}" \
        || die "pip download of the CUDA wheels failed"
    mkdir -p "$WORK/unpacked"
    for whl in "$WORK"/wheels/*.whl; do
        "$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$WORK/unpacked"
    done
    TOOLKIT="$ROOT/usr/local/cuda-13.0"
    cp -a "$WORK/unpacked/nvidia/cu13" "$TOOLKIT"
    chmod -R a+rX "$TOOLKIT"
    find "$TOOLKIT/bin" "$TOOLKIT/nvvm/bin" -type f -exec chmod 0755 {} +
    [ -e "$TOOLKIT/lib64" ] || ln -s lib "$TOOLKIT/lib64"
    mkdir -p "$TOOLKIT/targets/x86_64-linux"
    ln -sfn ../../include "$TOOLKIT/targets/x86_64-linux/include"
    ln -sfn ../../lib "$TOOLKIT/targets/x86_64-linux/lib"
    ln -sfn cuda-13.0 "$ROOT/usr/local/cuda"
    [ -x "$TOOLKIT/bin/nvcc" ] || die "the CUDA wheels did not provide bin/nvcc"
fi

# --- the start script ------------------------------------------------------------------------
cat >"$ROOT/usr/local/sbin/slurm-site" <<'EOF'
#!/bin/bash
# Start the test Slurm site (a stand-in for an HPC login node): munge, slurmctld, slurmd
# and sshd in one container.  The node's GPUs are FAKE (placeholder files /dev/nvidia*).
set -euo pipefail
GPUS="${SLURM_GPUS:-2}"
CPUS="${SLURM_CPUS:-8}"
NODE="$(hostname -s)"

if [ -z "${SSH_AUTHORIZED_KEYS:-}" ]; then
    echo "slurm-site: SSH_AUTHORIZED_KEYS is empty; nobody could log in" >&2
    exit 2
fi
printf '%s\n' "$SSH_AUTHORIZED_KEYS" >/home/hpc/.ssh/authorized_keys
chown hpc:hpc /home/hpc/.ssh/authorized_keys
chmod 0600 /home/hpc/.ssh/authorized_keys
ssh-keygen -A >/dev/null

if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
fi
chown munge:munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true

# FAKE GPUs: placeholder files that gres.conf names; there is no GPU behind them.
gpu_files=""
for ((i = 0; i < GPUS; i++)); do
    : >"/dev/nvidia$i"
    gpu_files="$gpu_files /dev/nvidia$i"
done
last=$((GPUS - 1))

cat >/etc/slurm/slurm.conf <<CONF
# Test Slurm site (one host, fake GPUs) written by slurm-site at container start.
ClusterName=minik8s-test
SlurmctldHost=$NODE
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/spool/slurmctld
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
# No slurmdbd: accounting (sacct) is disabled, as on sites without a database.
AccountingStorageType=accounting_storage/none
# No cgroups in a plain container: memory limits are scheduling figures only (a job is never
# killed for its memory use, so this site cannot produce OUT_OF_MEMORY).
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
DefMemPerCPU=256
# Finished jobs stay visible to squeue/scontrol for 5 minutes.
MinJobAge=300
KillWait=5
InactiveLimit=0
# The node's size comes from this file, not from the container's hardware.
SlurmdParameters=config_overrides
NodeName=$NODE Boards=1 SocketsPerBoard=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=4096 Gres=gpu:$GPUS State=UNKNOWN
PartitionName=dgx2 Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=debug Nodes=$NODE MaxTime=INFINITE State=UP
CONF
if [ "$GPUS" -gt 0 ]; then
    echo "NodeName=$NODE Name=gpu File=/dev/nvidia[0-$last]" >/etc/slurm/gres.conf
else
    : >/etc/slurm/gres.conf
fi
chown slurm:slurm /var/spool/slurmctld /var/log/slurm

/usr/sbin/munged --force
/usr/sbin/slurmctld
/usr/sbin/slurmd
echo "slurm-site: node $NODE, partitions dgx2 (default) and debug, $GPUS fake GPU(s):$gpu_files, sshd on :22"
exec /usr/sbin/sshd -D -e
EOF
chmod 0755 "$ROOT/usr/local/sbin/slurm-site"

# --- keep it small ---------------------------------------------------------------------------
: >"$ROOT/etc/hostname"
: >"$ROOT/etc/resolv.conf"
rm -rf "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* \
    "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
    "$ROOT"/usr/share/locale/* "$ROOT"/var/log/*.log "$ROOT"/var/log/apt/* "$ROOT"/tmp/* "$ROOT"/var/tmp/*
rm -f "$ROOT/etc/munge/munge.key"

old_id="$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
tar --numeric-owner -C "$ROOT" -c . \
    | docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'EXPOSE 22' \
        --change 'CMD ["/usr/local/sbin/slurm-site"]' \
        --change "LABEL org.minik8s.fingerprint=$FINGERPRINT" \
        --change "LABEL org.minik8s.cuda=$CUDA_MODE" \
        --change 'LABEL org.minik8s.built-by=scripts/build-slurm-image.sh' \
        - "$IMAGE" >/dev/null
new_id="$(docker image inspect -f '{{.Id}}' "$IMAGE")"
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
    docker image rm "$old_id" >/dev/null 2>&1 || true
fi
size="$(docker image inspect -f '{{.Size}}' "$IMAGE")"
say "$IMAGE built in $((SECONDS - start))s ($((size / 1024 / 1024)) MiB, cuda=$CUDA_MODE, fingerprint $FINGERPRINT)"
