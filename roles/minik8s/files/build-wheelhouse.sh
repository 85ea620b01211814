#!/usr/bin/env bash
# Build (once) a wheelhouse for the nodes on the Ansible controller: the minik8s wheel
# of a source tree plus every dependency as binary wheels for the nodes' Python
# (CPython X.Y on x86_64/aarch64 glibc), packed into one tar so that hosts need no PyPI.
#
# Usage: build-wheelhouse.sh PYTHON SRC_DIR OUT_DIR PY_VERSION ARCH GLIBC [EXTRA_REQUIREMENT...]
#   PYTHON      the controller's python with pip (ansible_playbook_python)
#   SRC_DIR     the minik8s source tree (pyproject.toml, README.md, minik8s/)
#   OUT_DIR     where wheelhouse.tar and wheelhouse.stamp are kept
#   PY_VERSION  the nodes' Python, e.g. 3.11
#   ARCH        x86_64 or aarch64
#   GLIBC       the nodes' glibc, e.g. 2.36 (manylinux wheels up to it are accepted)
# Prints "wheelhouse: unchanged <fingerprint>" or "wheelhouse: built <fingerprint>".
# The fingerprint covers the sources, the extra requirements and the target; the
# wheelhouse is rebuilt only when it changes.
set -euo pipefail

[ "$#" -ge 6 ] || { echo "usage: $0 PYTHON SRC_DIR OUT_DIR PY_VERSION ARCH GLIBC [EXTRA...]" >&2; exit 2; }
PYTHON="$1"; SRC="$2"; OUT="$3"; PYVER="$4"; ARCH="$5"; GLIBC="$6"; shift 6
EXTRA=("$@")

cd "$SRC"
if [ ! -f pyproject.toml ] || [ ! -d minik8s ]; then
    echo "wheelhouse: $SRC is not the minik8s source tree" >&2
    exit 2
fi
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9

fingerprint="$( {
    printf '%s\n' "target $PYVER $ARCH $GLIBC" "extra ${EXTRA[*]:-}"
    find pyproject.toml README.md minik8s -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path '*.egg-info/*' \
        -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
} | sha256sum | cut -c1-32)"

if [ -f "$OUT/wheelhouse.tar" ] && [ "$(cat "$OUT/wheelhouse.stamp" 2>/dev/null)" = "$fingerprint" ]; then
    echo "wheelhouse: unchanged $fingerprint"
    exit 0
fi

work="$(mktemp -d "$OUT/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/wheels"
# Build from a copy, so that the source tree gets no build/ or *.egg-info.
tar -c --exclude=__pycache__ --exclude='*.pyc' --exclude='*.egg-info' pyproject.toml README.md minik8s \
    | tar -x -C "$work/src"
"$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$work/wheels" "$work/src" >"$work/pip.log" 2>&1 \
    || { cat "$work/pip.log" >&2; echo "wheelhouse: pip wheel of $SRC failed" >&2; exit 1; }

# Binary wheels of the dependencies for the nodes' interpreter and platform (pip
# does not expand manylinux_2_Y to older glibc levels by itself, so list them).
platforms=()
glibc_minor="${GLIBC#*.}"
for ((minor = glibc_minor; minor >= 5; minor--)); do
    platforms+=(--platform "manylinux_2_${minor}_${ARCH}")
done
platforms+=(--platform "manylinux2014_${ARCH}")
[ "$ARCH" = x86_64 ] && platforms+=(--platform manylinux2010_x86_64 --platform manylinux1_x86_64)
abi="cp${PYVER/./}"
"$PYTHON" -m pip download --quiet --only-binary=:all: --dest "$work/wheels" \
    --python-version "$PYVER" --implementation cp --abi "$abi" "${platforms[@]}" \
    "$work"/wheels/minik8s-*.whl "${EXTRA[@]}" >"$work/pip.log" 2>&1 \
    || { cat "$work/pip.log" >&2; echo "wheelhouse: pip download of the dependencies failed" >&2; exit 1; }

# One tar with stable member order and times: copying it is one file per host.
tar -C "$work/wheels" --sort=name --mtime='2000-01-01 00:00Z' --owner=0 --group=0 --numeric-owner \
    -cf "$work/wheelhouse.tar" .
mv -f "$work/wheelhouse.tar" "$OUT/wheelhouse.tar"
echo "$fingerprint" >"$OUT/wheelhouse.stamp"
echo "wheelhouse: built $fingerprint ($(find "$work/wheels" -name '*.whl' | wc -l) wheels)"
