"""The kubelet's settings (its command-line flags) and the parsers behind them."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from minik8s.api.taints import TAINT_EFFECTS
from minik8s.host.errors import ConfigError
from minik8s.serving.http import tls_serving_options

DEFAULT_POD_CIDR = "10.244.0.0/24"
DEFAULT_CLUSTER_CIDR = "10.244.0.0/16"
DEFAULT_SERVICE_CIDR = "10.96.0.0/16"
#: how pods reach other nodes' podCIDRs (see :mod:`minik8s.kubelet.network.routes`)
NETWORK_BACKENDS = ("host-gw", "vxlan", "auto", "none")
KUBELET_VERSION = "v1.32.0-minik8s"


@dataclass
class KubeletConfig:
    """Everything ``minik8s kubelet`` was told.  Durations are seconds.

    ``pod_cidr`` is the ``--pod-cidr`` flag; ``pod_cidr_explicit`` says whether it was given
    (only then is it published as the Node's ``spec.podCIDR`` when that is empty; without it
    the kubelet waits for the node IPAM controller to set ``spec.podCIDR``).
    ``cluster_cidr`` is the whole pod network (blackholed, masqueraded when leaving it),
    ``service_cidr`` the ClusterIP range (never masqueraded by the kubelet),
    ``network_backend`` one of :data:`NETWORK_BACKENDS`, ``resolv_conf`` the host file whose
    nameservers/searches pods inherit (Kubernetes' ``--resolv-conf``; empty: none).
    ``tls_cert_file``/``tls_private_key_file`` make the kubelet's server speak HTTPS and
    ``client_ca_file`` makes it require client certificates signed by that CA (see
    :mod:`minik8s.kubelet.server`); all None: plain HTTP without authentication.
    ``rotate_certificates`` renews the kubeconfig's client certificate before it expires through
    CertificateSigningRequests, keeping the pairs in ``cert_dir`` (:mod:`minik8s.kubelet.certrotation`).
    """

    node_name: str
    node_ip: str
    kubeconfig: str | None = None
    port: int = 10250
    address: str | None = None
    pod_cidr: str = DEFAULT_POD_CIDR
    pod_cidr_explicit: bool = False
    node_labels: dict[str, str] = field(default_factory=dict)
    register_with_taints: list[dict[str, str]] = field(default_factory=list)
    root_dir: Path = Path("/var/lib/minik8s/kubelet")
    #: where the local-path provisioner's volumes live on this node (the controller-manager's flag)
    local_path_root: Path = Path("/var/lib/minik8s/local-path")
    crashloop_backoff_base: float = 10.0
    crashloop_backoff_max: float = 300.0
    node_status_update_frequency: float = 10.0
    node_lease_duration_seconds: int = 40
    sync_frequency: float = 5.0
    network_name: str = "minik8s-pods"
    cluster_cidr: str = DEFAULT_CLUSTER_CIDR
    service_cidr: str = DEFAULT_SERVICE_CIDR
    network_backend: str = "host-gw"
    network_sync_period: float = 10.0
    resolv_conf: str = "/etc/resolv.conf"
    cluster_dns: list[str] = field(default_factory=list)
    cluster_domain: str = "cluster.local"
    pod_infra_container_image: str = "minik8s/pause:latest"
    image_pull_progress_deadline: float = 30.0
    max_pods: int = 110
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    client_ca_file: str | None = None
    rotate_certificates: bool = False
    cert_dir: Path = Path("/var/lib/minik8s/kubelet/pki")
    workers: int = 10

    @property
    def bind_address(self) -> str:
        """Where the kubelet's HTTP server listens (``--address``, default the node IP)."""
        return self.address or self.node_ip


def parse_node_labels(text: str | None) -> dict[str, str]:
    """``k=v,k2=v2`` → dict.  Raises ConfigError for an item without ``=``."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--node-labels: {item!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


def parse_taints(text: str | None) -> list[dict[str, str]]:
    """``key=value:Effect,key2:Effect`` → Node ``spec.taints`` items (Kubernetes' taint syntax).

    Raises ConfigError for a missing or unknown effect.
    """
    out: list[dict[str, str]] = []
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        spec, sep, effect = item.rpartition(":")
        if not sep or effect not in TAINT_EFFECTS:
            raise ConfigError(f"--register-with-taints: {item!r} must be key[=value]:Effect with Effect one of "
                              + ", ".join(TAINT_EFFECTS))
        key, has_value, value = spec.partition("=")
        if not key:
            raise ConfigError(f"--register-with-taints: {item!r} has no key")
        taint = {"key": key, "effect": effect}
        if has_value:
            taint["value"] = value
        out.append(taint)
    return out


def parse_ip_list(text: str | None) -> list[str]:
    """``10.96.0.10,10.96.0.11`` → list; raises ConfigError for a bad address."""
    out = []
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        try:
            ipaddress.ip_address(item)
        except ValueError as exc:
            raise ConfigError(f"--cluster-dns: {item!r} is not an IP address") from exc
        out.append(item)
    return out


def check_cidr(cidr: str, flag: str = "--pod-cidr") -> str:
    """Validate an IPv4 CIDR of at least a /29 (``flag`` names it in the message); returns it
    normalised (``10.244.1.7/24`` → ``10.244.1.0/24``).  Raises ConfigError."""
    try:
        net = ipaddress.ip_network(cidr, strict=False)
    except ValueError as exc:
        raise ConfigError(f"{flag}: {cidr!r} is not a CIDR") from exc
    if net.version != 4 or net.prefixlen > 29:
        raise ConfigError(f"{flag}: {cidr} must be an IPv4 network of at least /29")
    return str(net)


def check_backend(backend: str) -> str:
    """Validate ``--network-backend``; returns it.  Raises ConfigError."""
    if backend not in NETWORK_BACKENDS:
        raise ConfigError(f"--network-backend: {backend!r} is not one of {', '.join(NETWORK_BACKENDS)}")
    return backend


def check_serving_tls(tls_cert_file: str | None, tls_private_key_file: str | None,
                      client_ca_file: str | None) -> None:
    """Validate ``--tls-cert-file``, ``--tls-private-key-file`` and ``--client-ca-file`` together,
    loading the files.  Raises ConfigError naming the flag."""
    try:
        tls_serving_options(tls_cert_file, tls_private_key_file, client_ca_file)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
