"""The local-cluster supervisor: runs etcd and every minik8s component as child processes.

Started (detached) by ``minik8s up``; stopped by ``minik8s down`` with SIGTERM.
A child that exits is restarted with back-off (1 s doubling to 30 s), as systemd
would with ``Restart=always``.  Components are started in dependency order
(etcd, apiserver, then the rest) and stopped in reverse.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
import signal
import ssl
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from minik8s import logs
from minik8s.cluster.pki import ClusterPKI
from minik8s.cluster.processes import Process, etcd_command, minik8s_command, wait_http

log = logging.getLogger("supervisor")

#: The components started after etcd and the apiserver, in start order (``minik8s <name>``).
COMPONENTS = ("scheduler", "controller-manager", "kubelet", "proxy", "dns", "gateway")
#: The pod network of a local cluster (controller-manager, kubelet and proxy agree on it).
CLUSTER_CIDR = "10.244.0.0/16"
#: ClusterIP of the cluster DNS Service (``minik8s dns --cluster-dns-ip``, kubelet ``--cluster-dns``).
CLUSTER_DNS_IP = "10.96.0.10"


def pod_gateway(pod_cidr: str) -> str:
    """The pod bridge's address on this host: the first address of the podCIDR (``10.244.0.1``)."""
    return str(ipaddress.ip_network(pod_cidr, strict=False).network_address + 1)


@dataclass
class ClusterLayout:
    """Where a local cluster keeps its state (``minik8s up --data-dir``)."""

    data_dir: Path
    apiserver_port: int = 6443
    etcd_port: int = 2379
    kubelet_port: int = 10250
    node_name: str | None = None  # default: the host name
    pod_cidr: str = "10.244.0.0/24"
    network_name: str = "minik8s-pods"
    gateway_port: int = 8081
    #: the node's address (the apiserver advertises it; certificates name it), set by ``minik8s up``
    node_ip: str = "127.0.0.1"
    #: extra flags per component (``{"kubelet": ["--crashloop-backoff-base=2"]}``), appended last
    extra_args: dict[str, list[str]] = field(default_factory=dict)

    SAVED = ("apiserver_port", "etcd_port", "kubelet_port", "node_name", "pod_cidr", "network_name", "gateway_port",
             "node_ip", "extra_args")

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    @property
    def logs(self) -> Path:
        return self.data_dir / "logs"

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "supervisor.pid"

    @property
    def state_file(self) -> Path:
        return self.data_dir / "cluster.json"

    @property
    def components_file(self) -> Path:
        """``{component: pid}`` of the running children, rewritten at every (re)start."""
        return self.data_dir / "components.json"

    @property
    def pki(self) -> ClusterPKI:
        """The cluster CA and the components' certificates (:mod:`minik8s.cluster.pki`)."""
        return ClusterPKI(self.data_dir / "pki")

    @property
    def signing_key(self) -> Path:
        """The apiserver's service-account signing key (made once by ``minik8s up``)."""
        return self.data_dir / "pki" / "sa.key"

    @property
    def encryption_config(self) -> Path:
        """The apiserver's ``--encryption-provider-config`` (Secrets encrypted in etcd, made once)."""
        return self.data_dir / "pki" / "encryption-config.yaml"

    def component_kubeconfig(self, name: str) -> Path:
        """The kubeconfig of component ``name`` (its own client certificate)."""
        return self.data_dir / "kubeconfigs" / f"{name}.conf"

    @property
    def server(self) -> str:
        """The apiserver's URL for the host (HTTPS, the cluster CA's serving certificate)."""
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def gateway(self) -> str:
        """The serverless gateway's URL (``minik8s gateway`` on 127.0.0.1)."""
        return f"http://127.0.0.1:{self.gateway_port}"

    def ssl_context(self) -> ssl.SSLContext:
        """TLS for the host's calls to the apiserver: the cluster CA, the admin certificate."""
        ctx = ssl.create_default_context(cafile=str(self.pki.ca))
        ctx.load_cert_chain(str(self.pki.crt("admin")), str(self.pki.key("admin")))
        return ctx

    def save(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.state_file.write_text(json.dumps({k: getattr(self, k) for k in self.SAVED}))

    @classmethod
    def load(cls, data_dir: Path) -> ClusterLayout:
        layout = cls(data_dir)
        if layout.state_file.exists():
            saved = json.loads(layout.state_file.read_text())
            for k in cls.SAVED:
                if k in saved:
                    setattr(layout, k, saved[k])
        return layout


def component_processes(layout: ClusterLayout) -> list[Process]:
    """The child processes of a local cluster, in start order."""
    pki = layout.pki

    def kc(name: str) -> str:
        return str(layout.component_kubeconfig(name))

    procs = [
        Process("etcd", etcd_command(layout.data_dir / "etcd", layout.etcd_port, layout.etcd_port + 1),
                layout.logs / "etcd.log"),
        # HTTPS on every address (pods reach it through the kubernetes Service at the node's
        # address), client certificates of the cluster CA, the kubelets over HTTPS
        Process("apiserver", minik8s_command(
            "apiserver", "--etcd-servers", f"http://127.0.0.1:{layout.etcd_port}",
            "--bind-address", "0.0.0.0", "--port", str(layout.apiserver_port), "--advertise-address", layout.node_ip,
            "--tls-cert-file", str(pki.crt("apiserver")), "--tls-private-key-file", str(pki.key("apiserver")),
            "--client-ca-file", str(pki.ca),
            "--kubelet-client-certificate", str(pki.crt("apiserver-kubelet-client")),
            "--kubelet-client-key", str(pki.key("apiserver-kubelet-client")),
            "--kubelet-certificate-authority", str(pki.ca),
            "--service-account-signing-key-file", str(layout.signing_key),
            # Kubernetes' authorizers, and a service-account token in every pod
            "--authorization-mode", "Node,RBAC", "--enable-admission-plugins", "ServiceAccount",
            "--encryption-provider-config", str(layout.encryption_config),
            *layout.extra_args.get("apiserver", [])),
            layout.logs / "apiserver.log"),
    ]
    kubelet_args = layout.extra_args.get("kubelet", [])
    dns_flags = ["--cluster-dns", CLUSTER_DNS_IP] \
        if not any(a.startswith("--cluster-dns") for a in kubelet_args) else []
    extra = {
        "scheduler": ["--kubeconfig", kc("scheduler")],
        "controller-manager": ["--kubeconfig", kc("controller-manager"), "--function-gateway-url", layout.gateway,
                               "--root-ca-file", str(pki.ca),
                               "--cluster-signing-cert-file", str(pki.ca),
                               "--cluster-signing-key-file", str(pki.dir / "ca.key"),
                               "--local-path-root", str(layout.data_dir / "local-path")],
        # HTTPS; only the apiserver and cluster admins may call it (client certificates)
        "kubelet": ["--kubeconfig", kc("kubelet"), "--root-dir", str(layout.data_dir / "kubelet"),
                    "--local-path-root", str(layout.data_dir / "local-path"),
                    "--tls-cert-file", str(pki.crt("kubelet")), "--tls-private-key-file", str(pki.key("kubelet")),
                    "--client-ca-file", str(pki.ca),
                    # the client certificate is renewed through CertificateSigningRequests before it expires
                    "--rotate-certificates", "--cert-dir", str(layout.data_dir / "kubelet" / "pki"),
                    "--port", str(layout.kubelet_port), "--pod-cidr", layout.pod_cidr,
                    "--network-name", layout.network_name,
                    "--cluster-cidr", CLUSTER_CIDR, "--cluster-domain", "cluster.local",
                    *(["--node-name", layout.node_name] if layout.node_name else []), *dns_flags],
        "proxy": ["--kubeconfig", kc("proxy")],
        # served on the pod bridge's gateway: pods reach it directly, the host and other
        # nodes through kube-proxy's DNAT of 10.96.0.10:53 (the address appears once the
        # kubelet created the pod network; until then the server waits for it)
        "dns": ["--kubeconfig", kc("dns"), "--bind-address", pod_gateway(layout.pod_cidr), "--port", "53",
                "--cluster-dns-ip", CLUSTER_DNS_IP,
                *(["--node-name", layout.node_name] if layout.node_name else [])],
        # on loopback for the host, and on the pod bridge for pods (service-account tokens;
        # published as kube-system/minik8s-gateway)
        "gateway": ["--kubeconfig", kc("gateway"), "--bind-address", "127.0.0.1", "--port", str(layout.gateway_port),
                    "--pod-address", pod_gateway(layout.pod_cidr)],
    }
    for name in COMPONENTS:
        argv = minik8s_command(name, *extra[name], *layout.extra_args.get(name, []))
        procs.append(Process(name, argv, layout.logs / f"{name}.log"))
    return procs


class Supervisor:
    def __init__(self, layout: ClusterLayout) -> None:
        self.layout = layout
        self.procs = component_processes(layout)
        self.next_start: dict[str, float] = {}
        self.backoff: dict[str, float] = {}
        self.stopping = False

    def _start(self, p: Process) -> None:
        p.start()
        log.info("supervisor started %s pid=%s", p.name, p.pid)
        self.layout.components_file.write_text(json.dumps({q.name: q.pid for q in self.procs if q.alive()}))
        if p.name == "etcd":
            wait_http(f"http://127.0.0.1:{self.layout.etcd_port}/health", 60)
        elif p.name == "apiserver":
            wait_http(f"{self.layout.server}/readyz", 60, verify=self.layout.ssl_context())

    def run(self) -> None:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        self.layout.pid_file.write_text(str(os.getpid()))
        try:
            for p in self.procs:
                if self.stopping:
                    break
                self._start(p)
            while not self.stopping:
                now = time.monotonic()
                for p in self.procs:
                    if p.alive() or self.stopping:
                        continue
                    due = self.next_start.get(p.name)
                    if due is None:
                        delay = self.backoff.get(p.name, 1.0)
                        code = p.popen.returncode if p.popen else None
                        log.warning("supervisor %s exited (code %s); restarting in %.0fs", p.name, code, delay)
                        self.next_start[p.name] = now + delay
                        self.backoff[p.name] = min(delay * 2, 30.0)
                    elif now >= due:
                        self.next_start.pop(p.name)
                        p.restarts += 1
                        try:
                            self._start(p)
                        except TimeoutError as exc:
                            log.error("supervisor %s did not become ready: %s", p.name, exc)
                time.sleep(0.5)
        finally:
            self.shutdown()

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stopping = True

    def shutdown(self) -> None:
        for p in reversed(self.procs):
            if p.alive():
                log.info("supervisor stopping %s pid=%s", p.name, p.pid)
                p.stop(grace=15.0)
        self.layout.pid_file.unlink(missing_ok=True)
        self.layout.components_file.unlink(missing_ok=True)
        log.info("supervisor stopped")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="minik8s local-cluster supervisor (started by `minik8s up`)")
    parser.add_argument("--data-dir", required=True)
    args = parser.parse_args(argv)
    logs.setup("supervisor")
    layout = ClusterLayout.load(Path(args.data_dir))
    try:
        Supervisor(layout).run()
    except Exception:  # noqa: BLE001
        log.exception("supervisor failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
