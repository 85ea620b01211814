# Shared by the image build scripts that start from a debootstrap'd Debian rootfs
# (sourced; needs `say` and `die`, and lib/debian-mirror.sh for the mirror).
# shellcheck shell=bash

# image_fingerprint IMAGE : the org.minik8s.fingerprint label of IMAGE ("" when absent).
image_fingerprint() {
    docker image inspect -f '{{ index .Config.Labels "org.minik8s.fingerprint" }}' "$1" 2>/dev/null || true
}

# ensure_debootstrap : install debootstrap with apt-get when it is missing.
ensure_debootstrap() {
    command -v debootstrap >/dev/null 2>&1 && return 0
    say "installing debootstrap"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q debootstrap >/dev/null \
        || { apt-get update -q >/dev/null && apt-get install -y -q debootstrap >/dev/null; } \
        || die "apt-get install debootstrap failed"
}

# debootstrap_minbase ROOT SUITE MIRROR PACKAGE... : a minbase rootfs with PACKAGES in ROOT
# (its log next to ROOT); dies with the log's tail when debootstrap fails.
debootstrap_minbase() {
    local root="$1" suite="$2" mirror="$3" include log started=$SECONDS
    shift 3
    include="$(IFS=,; echo "$*")"
    log="$root.debootstrap.log"
    say "debootstrap $suite from $mirror with $include (a few minutes)"
    if ! debootstrap --variant=minbase --include="$include" "$suite" "$root" "$mirror" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        [ -f "$root/debootstrap/debootstrap.log" ] && tail -n 30 "$root/debootstrap/debootstrap.log" >&2
        die "debootstrap failed (mirror $mirror)"
    fi
    say "debootstrap done in $((SECONDS - started))s"
}

# exit_if_current IMAGE FINGERPRINT FORCE LOCKFILE : end the script (exit 0) when IMAGE already
# carries FINGERPRINT and FORCE is 0; otherwise take LOCKFILE (one build at a time on this
# machine, on fd 9, held until the script ends) and check once more (a concurrent run may
# have built it meanwhile).
exit_if_current() {
    local image="$1" fingerprint="$2" force="$3" lock="$4"
    if [ "$force" -eq 0 ] && [ "$(image_fingerprint "$image")" = "$fingerprint" ]; then
        say "$image already present (fingerprint $fingerprint)"
        exit 0
    fi
    exec 9>"$lock"
    flock 9
    if [ "$force" -eq 0 ] && [ "$(image_fingerprint "$image")" = "$fingerprint" ]; then
        say "$image already present (built by a concurrent run)"
        exit 0
    fi
}
