"""A pod's ``/etc/resolv.conf`` and ``/etc/hosts``, written the way Kubernetes' kubelet writes them.

resolv.conf by ``spec.dnsPolicy`` (``pkg/kubelet/network/dns``):

* ``ClusterFirst`` (the default; ``ClusterFirstWithHostNet`` for hostNetwork pods):
  ``nameserver`` the ``--cluster-dns`` addresses, ``search <ns>.svc.<domain> svc.<domain>
  <domain>`` followed by the host's search domains, ``options ndots:5``.  Without
  ``--cluster-dns`` — and for ``ClusterFirst`` hostNetwork pods — the pod falls back to
  ``Default`` (a ``MissingClusterDNS`` event says so);
* ``Default``: the host's file (``--resolv-conf``): its nameservers, searches, options;
* ``None``: only ``spec.dnsConfig``.

``spec.dnsConfig`` is appended in every policy: nameservers and searches without
duplicates, options by name (a pod's ``ndots`` replaces the default one).  Kubernetes'
limits apply: at most 3 nameservers, 32 search domains and 2048 characters of them.

hosts (``managedHostsFileContent``): the localhost lines, then the pod IP with the pod's
host name (``spec.hostname`` or the pod name, at most 63 characters) — as
``<hostname>.<subdomain>.<ns>.svc.<domain> <hostname>`` when ``spec.subdomain`` is set —
then ``spec.hostAliases``.

Both files live in ``ROOT/pods/<uid>/`` and are bind-mounted into every container of the
pod (read-only when its root filesystem is), unless the container mounts that path itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from minik8s.api.base import Obj

MAX_NAMESERVERS = 3
MAX_SEARCHES = 32
MAX_SEARCH_CHARS = 2048
DEFAULT_NDOTS = "ndots:5"
RESOLV_CONF = "/etc/resolv.conf"
HOSTS = "/etc/hosts"


@dataclass
class DNSConfig:
    """A resolver configuration: nameserver addresses, search domains, ``options`` items (``ndots:5``)."""

    servers: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)


def parse_resolv_conf(text: str) -> DNSConfig:
    """Parse resolv.conf text (``nameserver``, ``search``/``domain``, ``options`` lines; the last
    ``search`` wins, as in the resolver; comments start with ``#`` or ``;``)."""
    out = DNSConfig()
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if not line:
            continue
        key, *values = line.split()
        if key == "nameserver" and values:
            out.servers.append(values[0])
        elif key in ("search", "domain"):
            out.searches = list(values)
        elif key == "options":
            out.options += values
    return out


def read_host_dns(path: str) -> DNSConfig:
    """The host's resolver configuration from ``path`` (empty when unset or unreadable)."""
    if not path:
        return DNSConfig()
    try:
        return parse_resolv_conf(Path(path).read_text())
    except OSError:
        return DNSConfig()


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def merge_options(existing: list[str], extra: list[Obj]) -> list[str]:
    """Kubernetes' ``mergeDNSOptions``: ``extra`` (``{"name", "value"}``) replaces options of the same name."""
    by_name: dict[str, str] = {}
    for text in existing:
        by_name[text.split(":", 1)[0]] = text
    for item in extra:
        name = str(item.get("name") or "")
        if name:
            by_name[name] = name + (f":{item['value']}" if item.get("value") not in (None, "") else "")
    return list(by_name.values())


def effective_policy(pod: Obj, cluster_dns: list[str]) -> tuple[str, str | None]:
    """(``ClusterFirst`` | ``Default`` | ``None``, warning) for the pod: the policy actually used,
    and the ``MissingClusterDNS`` message when ClusterFirst falls back for want of ``--cluster-dns``."""
    spec = pod.get("spec") or {}
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    if policy == "None":
        return "None", None
    if policy == "ClusterFirstWithHostNet" or (policy == "ClusterFirst" and not spec.get("hostNetwork")):
        if cluster_dns:
            return "ClusterFirst", None
        meta = pod.get("metadata") or {}
        return "Default", (f"pod: \"{meta.get('name')}_{meta.get('namespace')}({meta.get('uid')})\". kubelet does "
                           "not have ClusterDNS IP configured and cannot create Pod using \"ClusterFirst\" policy. "
                           "Falling back to \"Default\" policy.")
    return "Default", None


def pod_dns(pod: Obj, cluster_dns: list[str], cluster_domain: str, host: DNSConfig) -> DNSConfig:
    """The resolver configuration of ``pod`` (see the module docstring), within Kubernetes' limits."""
    spec = pod.get("spec") or {}
    policy, _ = effective_policy(pod, cluster_dns)
    ns = (pod.get("metadata") or {}).get("namespace") or "default"
    if policy == "ClusterFirst":
        cfg = DNSConfig(list(cluster_dns), _unique([f"{ns}.svc.{cluster_domain}", f"svc.{cluster_domain}",
                                                    cluster_domain, *host.searches]), [DEFAULT_NDOTS])
    elif policy == "Default":
        cfg = DNSConfig(list(host.servers), list(host.searches), list(host.options))
    else:
        cfg = DNSConfig()
    extra = spec.get("dnsConfig") or {}
    cfg.servers = _unique([*cfg.servers, *(extra.get("nameservers") or [])])[:MAX_NAMESERVERS]
    searches = _unique([*cfg.searches, *(extra.get("searches") or [])])[:MAX_SEARCHES]
    while searches and len(" ".join(searches)) > MAX_SEARCH_CHARS:
        searches.pop()
    cfg.searches = searches
    cfg.options = merge_options(cfg.options, extra.get("options") or [])
    return cfg


def render_resolv_conf(cfg: DNSConfig) -> str:
    """resolv.conf text in the order dockershim wrote it: nameservers, search, options."""
    lines = [f"nameserver {s}" for s in cfg.servers]
    if cfg.searches:
        lines.append("search " + " ".join(cfg.searches))
    if cfg.options:
        lines.append("options " + " ".join(cfg.options))
    return "\n".join(lines) + "\n"


def pod_hostname(pod: Obj) -> str:
    """The pod's host name: ``spec.hostname`` or the pod name, cut to 63 characters without a
    trailing ``-`` or ``.`` (Kubernetes' ``GeneratePodHostNameAndDomain``)."""
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    name = str(spec.get("hostname") or meta.get("name") or "")
    return name[:63].rstrip("-.") if len(name) > 63 else name


def pod_domain(pod: Obj, cluster_domain: str) -> str | None:
    """``<subdomain>.<ns>.svc.<cluster domain>`` when ``spec.subdomain`` is set, else None."""
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    if not spec.get("subdomain"):
        return None
    return f"{spec['subdomain']}.{meta.get('namespace') or 'default'}.svc.{cluster_domain}"


def render_hosts(pod: Obj, pod_ip: str, cluster_domain: str) -> str:
    """The pod's managed hosts file (Kubernetes' ``managedHostsFileContent``)."""
    lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
             "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix", "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
    hostname = pod_hostname(pod)
    domain = pod_domain(pod, cluster_domain)
    if pod_ip:
        lines.append(f"{pod_ip}\t{hostname}.{domain}\t{hostname}" if domain else f"{pod_ip}\t{hostname}")
    aliases = (pod.get("spec") or {}).get("hostAliases") or []
    if aliases:
        lines += ["", "# Entries added by HostAliases."]
        for alias in aliases:
            names = [h for h in alias.get("hostnames") or [] if h]
            if alias.get("ip") and names:
                lines.append(f"{alias['ip']}\t" + "\t".join(names))
    return "\n".join(lines) + "\n"


class PodFiles:
    """Writes a pod's ``etc-hosts`` and ``resolv.conf`` under ``ROOT/pods/<uid>/`` and names its binds."""

    def __init__(self, root_dir: Path, cluster_dns: list[str], cluster_domain: str, resolv_conf: str) -> None:
        self.root = Path(root_dir)
        self.cluster_dns = list(cluster_dns)
        self.cluster_domain = cluster_domain
        self.resolv_conf = resolv_conf

    def write(self, pod: Obj, pod_ip: str) -> dict[str, str]:
        """Write the files (in place, so running containers see the new content); returns container
        path → host path.  ``/etc/hosts`` is managed only for pods with their own network namespace.
        Raises OSError when the pod directory cannot be written."""
        uid = pod["metadata"]["uid"]
        pod_dir = self.root / "pods" / uid
        pod_dir.mkdir(parents=True, exist_ok=True)
        out: dict[str, str] = {}
        resolv = pod_dir / "resolv.conf"
        cfg = pod_dns(pod, self.cluster_dns, self.cluster_domain, read_host_dns(self.resolv_conf))
        _write_in_place(resolv, render_resolv_conf(cfg))
        out[RESOLV_CONF] = str(resolv)
        if not (pod.get("spec") or {}).get("hostNetwork") and pod_ip:
            hosts = pod_dir / "etc-hosts"
            _write_in_place(hosts, render_hosts(pod, pod_ip, self.cluster_domain))
            out[HOSTS] = str(hosts)
        return out

    @staticmethod
    def binds(container: Obj, files: dict[str, str]) -> list[str]:
        """Docker binds (``host:container:rw|ro``) of ``files`` for one container, skipping paths the
        container mounts itself; read-only when ``securityContext.readOnlyRootFilesystem``."""
        mounted = {m.get("mountPath") for m in container.get("volumeMounts") or []}
        mode = "ro" if (container.get("securityContext") or {}).get("readOnlyRootFilesystem") else "rw"
        return [f"{host}:{path}:{mode}" for path, host in files.items() if path not in mounted]


def _write_in_place(path: Path, text: str) -> None:
    """Rewrite ``path`` without replacing its inode (a bind mount keeps showing it)."""
    if path.exists() and path.read_text() == text:
        return
    with open(path, "w") as fh:
        fh.write(text)
    path.chmod(0o644)
