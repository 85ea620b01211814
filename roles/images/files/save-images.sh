#!/usr/bin/env bash
# On the Ansible controller: make sure each image exists (building it with
# scripts/build-images.sh when allowed) and that OUT_DIR/<name>.tar is a `docker save`
# of its current ID. Prints one JSON object {image: {"id": ..., "archive": ...}}, and
# "CHANGED" on stderr when an archive was (re)written.
#
# Usage: save-images.sh OUT_DIR BUILD_SCRIPT|"" IMAGE...
set -euo pipefail
OUT="$1"; BUILD="$2"; shift 2
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9
changed=0
json="{"
sep=""
for image in "$@"; do
    if ! docker image inspect "$image" >/dev/null 2>&1; then
        if [ -n "$BUILD" ]; then
            echo "images: $image is missing on the controller; building it with $BUILD" >&2
            bash "$BUILD" "$image" >&2
        fi
        docker image inspect "$image" >/dev/null 2>&1 \
            || { echo "images: $image is not on the controller (build it with scripts/build-images.sh)" >&2; exit 1; }
    fi
    id="$(docker image inspect -f '{{.Id}}' "$image")"
    base="$(echo "$image" | tr '/:' '__')"
    archive="$OUT/$base.tar"
    if [ ! -f "$archive" ] || [ "$(cat "$archive.id" 2>/dev/null)" != "$id" ]; then
        docker save -o "$archive.tmp" "$image"
        mv -f "$archive.tmp" "$archive"
        echo "$id" >"$archive.id"
        changed=1
    fi
    json="$json$sep\"$image\": {\"id\": \"$id\", \"archive\": \"$archive\"}"
    sep=", "
done
echo "$json}"
[ "$changed" -eq 0 ] || echo "CHANGED" >&2
