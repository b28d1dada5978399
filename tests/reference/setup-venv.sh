#!/usr/bin/env bash
# Creates .venv-ref/ (repo root) with the pinned reference stack from
# tests/reference/requirements-ref.txt. Idempotent: does nothing when the venv
# was already built from the same requirements file (stamp = its SHA-256).
#   tests/reference/setup-venv.sh && .venv-ref/bin/python tests/reference/make_golden_smollm2.py
set -euo pipefail
cd "$(dirname "$0")/../.."
export HF_HUB_OFFLINE=1 PIP_DISABLE_PIP_VERSION_CHECK=1

req=tests/reference/requirements-ref.txt
venv=.venv-ref
stamp=$venv/.requirements-ref.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "setup-venv: $venv is up to date"
  exit 0
fi

py=${PYTHON:-python3}
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
rm -f "$stamp"
"$venv/bin/python" -m pip install --upgrade --quiet pip
# torch from PyPI brings its CUDA runtime wheels (several GB); only the CPU is used.
"$venv/bin/python" -m pip install --progress-bar off -r "$req"
echo "$want" > "$stamp"
echo "setup-venv: $venv ready"
