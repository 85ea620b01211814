#!/usr/bin/env bash
# Molecule's dependency step (runs before create, in `molecule test` and `converge`):
#  - the host image (scripts/build-molecule-image.sh), the pod images
#    (scripts/build-images.sh) and the Slurm login node's (scripts/build-slurm-image.sh);
#    each returns at once when its image exists;
#  - a snapshot of the sources site.yml installs, so that converge and the idempotence
#    run deploy the same code even while the work tree is being edited.
set -euo pipefail
# Usage (molecule.yml): dependency.sh PROJECT_DIRECTORY EPHEMERAL_DIRECTORY
project="${1:?usage: $0 PROJECT_DIRECTORY EPHEMERAL_DIRECTORY}"
ephemeral="${2:?usage: $0 PROJECT_DIRECTORY EPHEMERAL_DIRECTORY}"
cd "$project"
bash scripts/build-molecule-image.sh
bash scripts/build-images.sh
bash scripts/build-slurm-image.sh
snapshot="$ephemeral/source"
rm -rf "$snapshot.tmp"
mkdir -p "$snapshot.tmp"
tar -c --exclude=__pycache__ --exclude='*.pyc' --exclude='*.egg-info' pyproject.toml README.md minik8s scripts \
    | tar -x -C "$snapshot.tmp"
rm -rf "$snapshot"
mv "$snapshot.tmp" "$snapshot"
echo "dependency: sources snapshot in $snapshot"
