#!/usr/bin/env bash
# shellcheck disable=SC2329  # functions are called indirectly ("build_$name", trap)
# Build the images minik8s needs, without any registry, with `docker import`.
#
#   minik8s/busybox:latest  Debian's static busybox + applet symlinks in /bin. CMD ["sh"]
#   minik8s/pause:latest    only /pause (static C, scripts/pause.c). ENTRYPOINT ["/pause"]
#   minik8s/python:latest   debootstrap'd Debian minbase + python3 (+ /bin/busybox). CMD ["python3"]
#   minik8s/nginx:latest    debootstrap'd Debian minbase + nginx-light, logs to stdout/stderr, no
#                           default site (configs go to /etc/nginx/conf.d). CMD nginx -g 'daemon off;'
#   minik8s/nginx-site:latest  minik8s/nginx with the official image's default site: GET / on
#                           port 80 answers /usr/share/nginx/html/index.html ("Welcome to nginx!").
#   minik8s/bitnami-nginx:latest  minik8s/nginx laid out like bitnami's nginx image, enough for the
#                           pinned bitnami/nginx chart (../shared/charts/nginx) to run on it: user
#                           1001, /opt/bitnami/nginx/{conf,logs,tmp,html}, the default config copied
#                           from conf.default into the (emptyDir) conf at start, HTTP on
#                           $NGINX_HTTP_PORT_NUMBER (8080) and HTTPS on 8443 with /certs/tls.*
#                           when mounted; writes only to the chart's mounts (readOnlyRootFilesystem).
#   minik8s/kube-state-metrics-standin:latest  a STAND-IN for kube-state-metrics (its Go binary
#                           cannot be built here): minik8s/python with a small server that takes
#                           kube-state-metrics' flags and answers /livez, /readyz and /metrics on
#                           --port and --telemetry-port; it exports no object metrics.
#
# Then the public names that third-party clients' e2e tests run (tests/conformance) are tagged
# from them, so that no registry is needed: busybox:latest (minik8s/busybox) and nginx:latest,
# nginx:1.7.9, nginx:1.10, nginx:1.21.4 (minik8s/nginx-site).
#
# Usage (as root):  scripts/build-images.sh [--force] [busybox|pause|python|nginx|nginx-site ...]
#   (bitnami-nginx, kube-state-metrics-standin: tests/e2e/test_helm.py)
#   Without names, all images are built. An image that already exists is
#   skipped unless --force is given. Packages that are missing on the host
#   (busybox-static, gcc, libc6-dev, debootstrap) are installed with apt-get.
# Environment:
#   MINIK8S_DEBIAN_MIRROR  mirror for debootstrap (default: the main Debian
#                          archive from this machine's apt sources)
#   MINIK8S_DEBIAN_SUITE   suite for debootstrap (default: bookworm)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ALL_IMAGES=(busybox pause python nginx nginx-site bitnami-nginx kube-state-metrics-standin)
SUITE="${MINIK8S_DEBIAN_SUITE:-bookworm}"
PATH_ENV="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

say() { echo "build-images: $*"; }
die() { echo "build-images: ERROR: $*" >&2; exit 1; }

usage() {
    echo "usage: $0 [--force] [busybox|pause|python|nginx|nginx-site|bitnami-nginx|kube-state-metrics-standin ...]" >&2
    exit 2
}

FORCE=0
WANT=()
for arg in "$@"; do
    case "$arg" in
        --force|-f) FORCE=1 ;;
        -h|--help) usage ;;
        busybox|pause|python|nginx|nginx-site|bitnami-nginx|kube-state-metrics-standin) WANT+=("$arg") ;;
        minik8s/busybox*|minik8s/pause*|minik8s/python*|minik8s/nginx*|minik8s/bitnami-nginx*|minik8s/kube-state-metrics*)
            name="${arg#minik8s/}"; WANT+=("${name%%:*}") ;;
        *) echo "build-images: unknown argument: $arg" >&2; usage ;;
    esac
done
[ "${#WANT[@]}" -gt 0 ] || WANT=("${ALL_IMAGES[@]}")

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, apt-get, chown root in rootfs)"
docker info >/dev/null 2>&1 || die "'docker info' fails; run scripts/start-dockerd.sh first"

# One build at a time on this machine (tests or CI jobs may call this concurrently).
LOCK_FILE=/tmp/minik8s-build-images.lock
exec 9>"$LOCK_FILE"
flock 9

WORK="$(mktemp -d /tmp/minik8s-images.XXXXXX)"
cleanup() { rm -rf --one-file-system "$WORK"; }
trap cleanup EXIT

APT_UPDATED=0
# apt_need PKG... : install the packages that are not installed yet.
apt_need() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    say "installing host packages: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q "${missing[@]}" >/dev/null; then
        [ "$APT_UPDATED" -eq 1 ] && die "apt-get install ${missing[*]} failed"
        say "apt-get install failed; running apt-get update and retrying" >&2
        apt-get update -q >/dev/null || die "apt-get update failed"
        APT_UPDATED=1
        apt-get install -y -q "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
    fi
}

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

# The static busybox binary from the busybox-static package (the `busybox`
# package ships a dynamically linked /bin/busybox that would not run in a
# rootfs without libc).
busybox_static_bin() {
    apt_need busybox-static
    local bin
    bin="$(dpkg -L busybox-static | grep -E '/busybox$' | head -n1)"
    [ -n "$bin" ] && [ -x "$bin" ] || die "busybox-static is installed but its binary was not found"
    if ldd "$bin" >/dev/null 2>&1; then
        die "$bin is dynamically linked; install busybox-static instead of busybox"
    fi
    echo "$bin"
}

# shellcheck source=lib/debian-mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-mirror.sh"

# import_rootfs DIR IMAGE CHANGE... : tar DIR (as root) into `docker import`.
import_rootfs() {
    local dir="$1" image="$2"; shift 2
    local changes=() c
    for c in "$@"; do changes+=(--change "$c"); done
    tar --numeric-owner --owner=0 --group=0 -C "$dir" -c . \
        | docker import "${changes[@]}" \
            --change "LABEL org.minik8s.built-by=scripts/build-images.sh" \
            - "$image" >/dev/null
}

# Minimal /etc and top-level dirs shared by the busybox and pause rootfs.
base_dirs() {
    local root="$1"
    mkdir -p "$root"/{bin,dev,etc,proc,sys,tmp,root,var,run}
    chmod 1777 "$root/tmp"
    chmod 0700 "$root/root"
}

build_busybox() {
    local root="$WORK/busybox" bb applet
    bb="$(busybox_static_bin)"
    base_dirs "$root"
    install -m 0755 "$bb" "$root/bin/busybox"
    for applet in $("$root/bin/busybox" --list); do
        [ "$applet" = busybox ] && continue
        ln -sf busybox "$root/bin/$applet"
    done
    mkdir -p "$root/usr" "$root/var/www"
    ln -s ../bin "$root/usr/bin"
    ln -s ../bin "$root/sbin"
    ln -s ../bin "$root/usr/sbin"
    printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
        'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$root/etc/passwd"
    printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nogroup:x:65534:' >"$root/etc/group"
    import_rootfs "$root" minik8s/busybox:latest "ENV $PATH_ENV" 'CMD ["sh"]'
}

build_pause() {
    local root="$WORK/pause"
    [ -r "$SCRIPT_DIR/pause.c" ] || die "missing $SCRIPT_DIR/pause.c"
    apt_need gcc libc6-dev
    base_dirs "$root"
    rmdir "$root/bin" "$root/root" "$root/var" "$root/run"
    gcc -static -Os -s -Wall -Wextra -o "$root/pause" "$SCRIPT_DIR/pause.c"
    import_rootfs "$root" minik8s/pause:latest 'ENTRYPOINT ["/pause"]'
}

# debootstrap_rootfs ROOT PACKAGES : a Debian minbase rootfs with PACKAGES (comma list) in
# ROOT, slimmed down (no apt lists, docs, man pages, locales, logs) and without the build
# host's resolv.conf/hostname (Docker provides them at run time).
debootstrap_rootfs() {
    local root="$1" packages="$2" mirror
    apt_need debootstrap
    mirror="$(debian_mirror)"
    say "$(basename "$root"): debootstrap $SUITE from $mirror (about a minute)"
    if ! debootstrap --variant=minbase --include="$packages" \
            "$SUITE" "$root" "$mirror" >"$WORK/debootstrap.log" 2>&1; then
        tail -n 20 "$WORK/debootstrap.log" >&2
        [ -f "$root/debootstrap/debootstrap.log" ] && tail -n 20 "$root/debootstrap/debootstrap.log" >&2
        die "debootstrap failed (mirror $mirror)"
    fi
    # Keep it small: no package caches, lists, docs, man pages, logs.
    rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* \
        "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
        "$root"/usr/share/locale/* "$root"/usr/share/lintian "$root"/usr/share/linda \
        "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old \
        "$root"/var/log/* "$root"/tmp/* "$root"/var/tmp/*
    : >"$root/etc/resolv.conf"
    : >"$root/etc/hostname"
}

build_python() {
    local root="$WORK/python" bb
    bb="$(busybox_static_bin)"
    debootstrap_rootfs "$root" python3-minimal,python3
    # (__pycache__ of the stdlib is kept: containers start faster with it.)
    # busybox for wget/nc/httpd in tests (`busybox wget ...`), without replacing Debian tools.
    # (bookworm is merged-/usr: /bin -> usr/bin, so write through usr/bin.)
    local bindir="$root/bin"
    [ -L "$bindir" ] && bindir="$root/usr/bin"
    if [ ! -e "$bindir/busybox" ]; then
        install -m 0755 "$bb" "$bindir/busybox"
    fi
    import_rootfs "$root" minik8s/python:latest "ENV $PATH_ENV" 'CMD ["python3"]'
    rm -rf --one-file-system "$root"
}

# nginx for the DNS objects' path forwarding (minik8s/controllers/dnsrecords.py writes its
# config to /etc/nginx/conf.d/ at container start).  Like the official nginx image: access
# and error logs go to the container's stdout/stderr, no default site.
build_nginx() {
    local root="$WORK/nginx"
    debootstrap_rootfs "$root" nginx-light
    rm -f "$root"/etc/nginx/sites-enabled/*
    mkdir -p "$root/var/log/nginx" "$root/etc/nginx/conf.d"
    ln -sf /dev/stdout "$root/var/log/nginx/access.log"
    ln -sf /dev/stderr "$root/var/log/nginx/error.log"
    [ -x "$root/usr/sbin/nginx" ] || die "nginx-light did not install /usr/sbin/nginx"
    import_rootfs "$root" minik8s/nginx:latest "ENV $PATH_ENV" 'EXPOSE 80' 'CMD ["nginx", "-g", "daemon off;"]'
    rm -rf --one-file-system "$root"
}

# nginx with a default site, like the official image (which third-party tests run and GET / on
# port 80): minik8s/nginx plus /etc/nginx/conf.d/default.conf, committed from a created (never
# started) container. IPv4 only: a pod's network namespace may have no IPv6.
build_nginx_site() {
    local root="$WORK/nginx-site" cid
    image_exists minik8s/nginx:latest || build_nginx
    mkdir -p "$root/etc/nginx/conf.d"
    cat >"$root/etc/nginx/conf.d/default.conf" <<'NGINX'
server {
    listen 80 default_server;
    server_name _;
    root /usr/share/nginx/html;
    index index.html;
    location / {
        try_files $uri $uri/ =404;
    }
}
NGINX
    cid="$(docker create minik8s/nginx:latest)"
    tar --numeric-owner --owner=0 --group=0 -C "$root" -c . | docker cp - "$cid:/"
    docker commit --change "LABEL org.minik8s.built-by=scripts/build-images.sh" "$cid" \
        minik8s/nginx-site:latest >/dev/null
    docker rm "$cid" >/dev/null
    docker run --rm minik8s/nginx-site:latest nginx -t >/dev/null 2>&1 \
        || die "minik8s/nginx-site: nginx -t refuses the default site"
}

# commit_with IMAGE BASE DIR CHANGE... : BASE plus the files of DIR (owned by root, modes kept),
# committed from a created (never started) container as IMAGE with the Dockerfile CHANGEs.
commit_with() {
    local image="$1" base="$2" dir="$3" cid c changes=()
    shift 3
    for c in "$@"; do changes+=(--change "$c"); done
    cid="$(docker create "$base")"
    tar --numeric-owner --owner=0 --group=0 -C "$dir" -c . | docker cp - "$cid:/"
    docker commit "${changes[@]}" --change "LABEL org.minik8s.built-by=scripts/build-images.sh" "$cid" \
        "$image" >/dev/null
    docker rm "$cid" >/dev/null
}

# bitnami's nginx image as far as the bitnami/nginx chart uses it (see the header): its init
# container runs `/bin/bash -ec '. /opt/bitnami/scripts/libfs.sh; is_dir_empty ...'` and copies
# /opt/bitnami/nginx/logs (symlinks to stdout/stderr) into an emptyDir; the main container runs
# the image's entrypoint as uid 1001 with a read-only root and emptyDirs on /tmp and
# /opt/bitnami/nginx/{conf,logs,tmp}.
build_bitnami_nginx() {
    local root="$WORK/bitnami-nginx" b
    image_exists minik8s/nginx:latest || build_nginx
    b="$root/opt/bitnami"
    mkdir -p "$b/scripts/nginx" "$b/nginx/conf.default" "$b/nginx/conf" "$b/nginx/logs" "$b/nginx/tmp" \
        "$b/nginx/html"
    cat >"$b/scripts/libfs.sh" <<'SH'
#!/bin/bash
# is_dir_empty DIR: true when DIR does not exist or has no entries (bitnami's libfs.sh).
is_dir_empty() {
    local -r path="${1:?missing directory}"
    [[ ! -e "$path" ]] || [[ -z "$(ls -A "$path")" ]]
}
SH
    cat >"$b/scripts/nginx/entrypoint.sh" <<'SH'
#!/bin/bash
# Like bitnami's: fill an empty (mounted) conf dir from conf.default, then run the command.
set -eu
. /opt/bitnami/scripts/libfs.sh
conf=/opt/bitnami/nginx/conf
if is_dir_empty "$conf"; then
    cp -r /opt/bitnami/nginx/conf.default/. "$conf/"
fi
mkdir -p "$conf/server_blocks"
sed -i "s/__HTTP_PORT__/${NGINX_HTTP_PORT_NUMBER:-8080}/" "$conf/nginx.conf"
if [ -r /certs/tls.crt ] && [ -r /certs/tls.key ] && [ ! -e "$conf/server_blocks/https.conf" ]; then
    cat >"$conf/server_blocks/https.conf" <<CONF
server {
    listen ${NGINX_HTTPS_PORT_NUMBER:-8443} ssl;
    ssl_certificate /certs/tls.crt;
    ssl_certificate_key /certs/tls.key;
    root /opt/bitnami/nginx/html;
    location / { try_files \$uri \$uri/ =404; }
}
CONF
fi
echo "nginx (minik8s/bitnami-nginx) on port ${NGINX_HTTP_PORT_NUMBER:-8080}"
exec "$@"
SH
    cat >"$b/scripts/nginx/run.sh" <<'SH'
#!/bin/bash
exec nginx -p /opt/bitnami/nginx -c /opt/bitnami/nginx/conf/nginx.conf -e stderr -g 'daemon off;'
SH
    chmod 0755 "$b/scripts/libfs.sh" "$b/scripts/nginx/entrypoint.sh" "$b/scripts/nginx/run.sh"
    cat >"$b/nginx/conf.default/nginx.conf" <<'NGINX'
worker_processes 1;
pid /opt/bitnami/nginx/tmp/nginx.pid;
error_log stderr;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    access_log /opt/bitnami/nginx/logs/access.log;
    client_body_temp_path /opt/bitnami/nginx/tmp/client_body;
    proxy_temp_path /opt/bitnami/nginx/tmp/proxy;
    fastcgi_temp_path /opt/bitnami/nginx/tmp/fastcgi;
    scgi_temp_path /opt/bitnami/nginx/tmp/scgi;
    uwsgi_temp_path /opt/bitnami/nginx/tmp/uwsgi;
    server {
        listen __HTTP_PORT__ default_server;
        server_name _;
        root /opt/bitnami/nginx/html;
        location / { try_files $uri $uri/ =404; }
        location /status { stub_status on; }
    }
    include /opt/bitnami/nginx/conf/server_blocks/*.conf;
}
NGINX
    echo '<html><body><h1>Welcome to nginx!</h1></body></html>' >"$b/nginx/html/index.html"
    ln -s /dev/stdout "$b/nginx/logs/access.log"
    ln -s /dev/stderr "$b/nginx/logs/error.log"
    commit_with minik8s/bitnami-nginx:latest minik8s/nginx:latest "$root" \
        'USER 1001' 'WORKDIR /opt/bitnami/nginx' 'EXPOSE 8080 8443' \
        'ENTRYPOINT ["/opt/bitnami/scripts/nginx/entrypoint.sh"]' 'CMD ["/opt/bitnami/scripts/nginx/run.sh"]'
}

# A stand-in for kube-state-metrics (see the header): its flags, its probes, no object metrics.
build_kube_state_metrics_standin() {
    local root="$WORK/ksm"
    image_exists minik8s/python:latest || build_python
    mkdir -p "$root/usr/local/bin"
    cat >"$root/usr/local/bin/kube-state-metrics" <<'PY'
#!/usr/bin/python3
"""A STAND-IN for kube-state-metrics (minik8s/kube-state-metrics-standin, scripts/build-images.sh):
takes its flags and answers its HTTP endpoints (/livez, /readyz, /metrics on --port and
--telemetry-port); it does not watch the cluster and exports no object metrics."""
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
host = flags.get("host", "::")


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        body = {"/livez": "OK", "/readyz": "OK", "/healthz": "OK",
                "/metrics": "# kube-state-metrics stand-in (minik8s): no object metrics\n"}.get(path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write((body or "not found\n").encode())

    def log_message(self, *args: object) -> None:
        pass


def serve(port: int) -> None:
    try:
        server = ThreadingHTTPServer(("::", port), Handler)
    except OSError:  # no IPv6 in the pod's network namespace
        server = ThreadingHTTPServer(("0.0.0.0", port), Handler)
    server.serve_forever()


ports = [int(flags.get("port", "8080")), int(flags.get("telemetry-port", "8081"))]
print(f"kube-state-metrics STAND-IN on ports {ports}", flush=True)
for p in ports[1:]:
    threading.Thread(target=serve, args=(p,), daemon=True).start()
serve(ports[0])
PY
    chmod 0755 "$root/usr/local/bin/kube-state-metrics"
    commit_with minik8s/kube-state-metrics-standin:latest minik8s/python:latest "$root" \
        'USER 65534' 'ENTRYPOINT ["/usr/local/bin/kube-state-metrics"]' 'CMD []'
}

# PUBLIC_TAGS: public image name -> the local image it is tagged from (see the header).
PUBLIC_TAGS=(busybox:latest=minik8s/busybox:latest nginx:latest=minik8s/nginx-site:latest
             nginx:1.7.9=minik8s/nginx-site:latest nginx:1.10=minik8s/nginx-site:latest
             nginx:1.21.4=minik8s/nginx-site:latest)

rc=0
for name in "${WANT[@]}"; do
    image="minik8s/$name:latest"
    if [ "$FORCE" -eq 0 ] && image_exists "$image"; then
        say "$image already present"
        continue
    fi
    old_id="$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)"
    start=$SECONDS
    # Subshell with its own errexit (not in an `if`, where bash would ignore -e),
    # so that one failed image is reported and the others are still built.
    set +e
    ( set -e; "build_${name//-/_}" )
    status=$?
    set -e
    if [ "$status" -eq 0 ]; then
        size="$(docker image inspect -f '{{.Size}}' "$image" 2>/dev/null || echo 0)"
        say "$image built in $((SECONDS - start))s ($((size / 1024 / 1024)) MiB)"
        # Drop the replaced image unless a container still uses it (no dangling pile-up).
        new_id="$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)"
        if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
            docker image rm "$old_id" >/dev/null 2>&1 || true
        fi
    else
        echo "build-images: ERROR: building $image failed (exit $status)" >&2
        rc=1
    fi
done
for pair in "${PUBLIC_TAGS[@]}"; do
    public="${pair%%=*}" local_image="${pair#*=}"
    # Re-tagged every run (cheap), so a rebuilt local image moves its public names along.
    if image_exists "$local_image"; then
        docker tag "$local_image" "$public"
    fi
done
exit "$rc"
