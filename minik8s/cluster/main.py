"""``minik8s up`` / ``down`` / ``status``: an all-in-one local cluster on this host.

``up`` starts a supervisor process (see :mod:`minik8s.cluster.supervisor`) that
runs etcd, the apiserver, the scheduler, the controller-manager, the kubelet and
the proxy as separate processes; makes the cluster CA and the components' certificates
(:mod:`minik8s.cluster.pki`: the apiserver and the kubelet serve HTTPS and want client
certificates); writes the admin kubeconfig ``DATA_DIR/kubeconfig``; waits until the
node is Ready.  It is idempotent: when the cluster already runs it only reports.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import typer
from rich.console import Console

from minik8s.client.kubeconfig import render
from minik8s.cluster.pki import certificates, ensure_pki
from minik8s.cluster.processes import port_in_use, wait_http
from minik8s.cluster.signingkey import ensure_encryption_config, ensure_signing_key
from minik8s.cluster.supervisor import CLUSTER_CIDR, ClusterLayout, component_processes, pod_gateway
from minik8s.host.addresses import default_node_ip

err = Console(stderr=True, soft_wrap=True)
out = Console(soft_wrap=True)
DEFAULT_DATA_DIR = "~/.minik8s"
MANAGED_LABEL = "minik8s.io/managed=true"


def _fail(message: str) -> None:
    err.print(f"error: {message}", markup=False, highlight=False)
    raise typer.Exit(1)


def _supervisor_pid(layout: ClusterLayout) -> int | None:
    try:
        pid = int(layout.pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if _alive(pid) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def _preflight() -> None:
    if not shutil.which("etcd"):
        _fail("etcd is not installed: apt-get install etcd-server (or run scripts/quickstart.sh)")
    try:
        import docker

        docker.from_env(timeout=5).ping()
    except Exception:  # noqa: BLE001
        _fail("the Docker Engine is not reachable: start dockerd (scripts/start-dockerd.sh)")
    try:
        docker.from_env(timeout=5).images.get("minik8s/pause:latest")
    except Exception:  # noqa: BLE001
        _fail("image minik8s/pause:latest is missing: build the local images with scripts/build-images.sh")


def _nodes_ready(layout: ClusterLayout) -> tuple[int, int]:
    try:
        nodes = httpx.get(f"{layout.server}/api/v1/nodes", timeout=2,
                          verify=layout.ssl_context()).json().get("items") or []
    except (httpx.HTTPError, ValueError, OSError):
        return 0, 0
    ready = sum(1 for n in nodes for c in (n.get("status") or {}).get("conditions") or []
                if c.get("type") == "Ready" and c.get("status") == "True")
    return ready, len(nodes)


def up(
    data_dir: str = typer.Option(DEFAULT_DATA_DIR, help="where the cluster keeps etcd data, logs and kubeconfig"),
    apiserver_port: int = typer.Option(6443, help="apiserver port on 127.0.0.1"),
    etcd_port: int = typer.Option(2379, help="etcd client port on 127.0.0.1 (peer port is this + 1)"),
    kubelet_port: int = typer.Option(10250, help="the kubelet's port (logs, exec)"),
    node_name: str = typer.Option(None, help="the node's name (default: the host name)"),
    pod_cidr: str = typer.Option("10.244.0.0/24", help="the node's pod subnet"),
    network_name: str = typer.Option("minik8s-pods", help="the Docker bridge network of the pods"),
    gateway_port: int = typer.Option(8081, help="the serverless gateway's port on 127.0.0.1"),
    kubelet_arg: list[str] = typer.Option([], help="extra kubelet flag (repeatable), e.g. --kubelet-arg=-v"),
    apiserver_arg: list[str] = typer.Option([], help="extra apiserver flag (repeatable)"),
    controller_manager_arg: list[str] = typer.Option([], help="extra controller-manager flag (repeatable)"),
    scheduler_arg: list[str] = typer.Option([], help="extra scheduler flag (repeatable)"),
    proxy_arg: list[str] = typer.Option([], help="extra proxy flag (repeatable)"),
    gateway_arg: list[str] = typer.Option([], help="extra gateway flag (repeatable)"),
    timeout: float = typer.Option(180, help="seconds to wait for the node to become Ready"),
) -> None:
    """Start a local cluster (idempotent) and wait until its node is Ready."""
    layout = ClusterLayout(Path(data_dir).expanduser().resolve(), apiserver_port, etcd_port, kubelet_port,
                           node_name, pod_cidr, network_name, gateway_port,
                           extra_args={"kubelet": list(kubelet_arg), "apiserver": list(apiserver_arg),
                            "controller-manager": list(controller_manager_arg), "scheduler": list(scheduler_arg),
                            "proxy": list(proxy_arg), "gateway": list(gateway_arg)})
    if _supervisor_pid(layout) is not None:
        layout = ClusterLayout.load(layout.data_dir)
        out.print(f"minik8s is already running (data dir {layout.data_dir})")
        _print_where(layout)
        return
    _preflight()
    for port, what in ((apiserver_port, "apiserver"), (etcd_port, "etcd"), (etcd_port + 1, "etcd peer"),
                       (kubelet_port, "kubelet"), (gateway_port, "gateway")):
        if port_in_use(port):
            _fail(f"port {port} for the {what} is already in use on 127.0.0.1 (choose another with --help)")
    layout.node_ip = default_node_ip()
    layout.save()
    layout.logs.mkdir(parents=True, exist_ok=True)
    try:
        write_credentials(layout)
    except OSError as exc:
        _fail(f"cannot write the cluster's certificates in {layout.data_dir}: {exc}")
    names = ", ".join(p.name for p in component_processes(layout))
    out.print(f"Starting minik8s in {layout.data_dir}: {names}")
    with open(layout.logs / "supervisor.log", "ab") as log:
        subprocess.Popen([sys.executable, "-m", "minik8s.cluster.supervisor", "--data-dir", str(layout.data_dir)],
                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    with out.status("waiting for the apiserver ...") as status:
        try:
            wait_http(f"{layout.server}/readyz", timeout, verify=layout.ssl_context())
        except TimeoutError:
            _fail(f"the apiserver did not become ready; see {layout.logs}/apiserver.log and supervisor.log")
        status.update("waiting for the node to register and become Ready ...")
        while time.monotonic() < deadline:
            ready, total = _nodes_ready(layout)
            if ready:
                break
            status.update(f"waiting for the node to become Ready ({ready}/{total} nodes Ready) ...")
            time.sleep(0.5)
        else:
            _fail(f"no node became Ready in {timeout:.0f}s; see {layout.logs}/kubelet.log")
    out.print("minik8s is up.")
    _print_where(layout)


def write_credentials(layout: ClusterLayout) -> None:
    """The cluster CA and certificates (made once, serving ones again when the node's address
    changed), the service-account signing key, the admin kubeconfig (``DATA_DIR/kubeconfig``) and
    one kubeconfig per component, each with its own client certificate."""
    node = (layout.node_name or socket.gethostname()).lower()
    pki = ensure_pki(layout.pki.dir, certificates(node, layout.node_ip, pod_gateway(layout.pod_cidr)))
    ensure_signing_key(layout.signing_key)  # kept across restarts: issued tokens stay valid
    ensure_encryption_config(layout.encryption_config)  # Secrets encrypted in etcd, one key kept
    for name, path in [("admin", layout.kubeconfig)] + [
            (c, layout.component_kubeconfig(c)) for c in ("scheduler", "controller-manager", "kubelet", "proxy",
                                                          "dns", "gateway")]:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = render(layout.server, name="minik8s", ca_file=str(pki.ca), cert_file=str(pki.crt(name)),
                      key_file=str(pki.key(name)))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)


def _print_where(layout: ClusterLayout) -> None:
    ready, total = _nodes_ready(layout)
    out.print(f"  apiserver:  {layout.server}  ({ready}/{total} nodes Ready)")
    out.print(f"  gateway:    {layout.gateway}  (POST /functions/NS/NAME, /workflows/NS/NAME, /events/NS)")
    out.print(f"              from pods: http://minik8s-gateway.kube-system.svc.cluster.local:{layout.gateway_port}"
              "  (a service-account token for audience minik8s-gateway)")
    out.print(f"  kubeconfig: {layout.kubeconfig}")
    out.print(f"  logs:       {layout.logs}/")
    out.print(f"  try:        export KUBECONFIG={layout.kubeconfig}; kubectl get nodes")


def down(
    data_dir: str = typer.Option(DEFAULT_DATA_DIR, help="the cluster's data directory"),
    purge: bool = typer.Option(False, "--purge", help="also remove pod containers, the pod network and all data"),
) -> None:
    """Stop the local cluster (components and pod containers); ``--purge`` removes everything."""
    layout = ClusterLayout.load(Path(data_dir).expanduser().resolve())
    pid = _supervisor_pid(layout)
    if pid is None:
        out.print("minik8s is not running")
    else:
        os.kill(pid, signal.SIGTERM)
        with out.status("stopping components ..."):
            for _ in range(600):
                if _supervisor_pid(layout) is None:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
        out.print("minik8s components stopped")
    _stop_pod_containers(layout, purge)
    if purge:
        # the proxy's chains and service route, and the kubelet's pod routes and rules, go too
        for cleanup in (["proxy", "--cleanup", "--kubeconfig", str(layout.kubeconfig)],
                        ["kubelet", "--cleanup-network", "--cluster-cidr", CLUSTER_CIDR]):
            subprocess.run([sys.executable, "-m", "minik8s", *cleanup], capture_output=True, timeout=60)
    if purge and layout.data_dir.exists():
        _unmount_below(layout.data_dir)  # the pods' tmpfs volumes (secrets, tokens) of a stopped kubelet
        shutil.rmtree(layout.data_dir)
        out.print(f"removed {layout.data_dir}")


def _unmount_below(directory: Path) -> None:
    """Unmount every mount point under ``directory`` (deepest first; failures are left to rmtree)."""
    try:
        with open("/proc/self/mounts") as fh:
            points = [line.split()[1].replace("\\040", " ") for line in fh if len(line.split()) > 1]
    except OSError:
        return
    prefix = str(directory).rstrip("/") + "/"
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, timeout=30, check=False)


def _stop_pod_containers(layout: ClusterLayout, remove: bool) -> None:
    """Stop (or remove) the pod containers of this cluster's node — not those of other clusters."""
    node = layout.node_name or socket.gethostname().lower()
    try:
        import docker

        engine = docker.from_env(timeout=30)
        containers = engine.containers.list(all=True, filters={"label": [MANAGED_LABEL, f"minik8s.io/node={node}"]})
    except Exception:  # noqa: BLE001
        return
    for c in containers:
        try:
            if remove:
                c.remove(force=True)
            elif c.status == "running":
                c.stop(timeout=10)
        except Exception:  # noqa: BLE001
            pass
    if containers:
        out.print(f"{'removed' if remove else 'stopped'} {len(containers)} pod containers")
    if remove:
        for net in engine.networks.list(names=[layout.network_name]):
            try:
                net.remove()
            except Exception:  # noqa: BLE001
                pass


def status(data_dir: str = typer.Option(DEFAULT_DATA_DIR, help="the cluster's data directory")) -> None:
    """Show whether the local cluster runs, its components and its nodes."""
    layout = ClusterLayout.load(Path(data_dir).expanduser().resolve())
    pid = _supervisor_pid(layout)
    if pid is None:
        out.print("minik8s is not running")
        raise typer.Exit(1)
    out.print(f"supervisor: running (pid {pid})")
    try:
        pids = json.loads(layout.components_file.read_text())
    except (OSError, ValueError):
        pids = {}
    for p in component_processes(layout):
        cpid = pids.get(p.name)
        state = "running" if cpid and _alive(cpid) else "NOT running"
        out.print(f"  {p.name:<19} {state:<12} pid {cpid or '-':<8} log {p.log_path}")
    try:
        healthy = httpx.get(f"{layout.server}/readyz", timeout=2, verify=layout.ssl_context()).status_code == 200
    except (httpx.HTTPError, OSError):
        healthy = False
    out.print(f"apiserver {layout.server}: {'ready' if healthy else 'NOT ready'}")
    _print_where(layout)
