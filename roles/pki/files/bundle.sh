#!/usr/bin/env bash
# On the Ansible controller: pack the PKI files one host needs into BUNDLE (a tar with
# fixed owner, times and order, so it only changes when a file does), renaming them
# to what the host uses. Keys are 0600, certificates 0644. Prints "changed" when
# BUNDLE was rewritten.
# Usage: bundle.sh PKI_DIR BUNDLE SRC:DEST...
set -euo pipefail
pki="$1"; bundle="$2"; shift 2
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
for pair in "$@"; do
    src="${pair%%:*}"; dest="${pair#*:}"
    install -m "$(case "$dest" in *.key) echo 0600 ;; *) echo 0644 ;; esac)" "$pki/$src" "$stage/$dest"
done
(cd "$stage" && tar --sort=name --mtime='2000-01-01 00:00Z' --owner=0 --group=0 --numeric-owner -cf "$stage.tar" -- *)
if cmp -s "$stage.tar" "$bundle"; then
    rm -f "$stage.tar"
else
    mv -f "$stage.tar" "$bundle"
    chmod 0600 "$bundle"
    echo changed
fi
