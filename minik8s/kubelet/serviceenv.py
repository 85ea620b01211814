"""The Service environment variables the kubelet gives every container.

Kubernetes' ``getServiceEnvVarMap``: the ``kubernetes`` Service of the ``default`` namespace is
always there (``KUBERNETES_SERVICE_HOST``/``_PORT``: how ``load_incluster_config()`` and
client-go's ``InClusterConfig`` find the apiserver), and, unless the pod sets
``enableServiceLinks: false``, every Service of the pod's own namespace that has a ClusterIP.
For a Service ``my-svc`` with first port 80/TCP at 10.96.0.7:

- ``MY_SVC_SERVICE_HOST=10.96.0.7``, ``MY_SVC_SERVICE_PORT=80``, and
  ``MY_SVC_SERVICE_PORT_<PORTNAME>=<port>`` for each named port;
- Docker-link style: ``MY_SVC_PORT=tcp://10.96.0.7:80`` and, per port,
  ``MY_SVC_PORT_80_TCP=tcp://10.96.0.7:80``, ``..._PROTO=tcp``, ``..._PORT=80``, ``..._ADDR=10.96.0.7``.

The container's own ``env`` and ``envFrom`` come after these and win over them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MASTER_NAMESPACE = "default"
MASTER_SERVICE = "kubernetes"


def _env_name(text: str) -> str:
    return text.upper().replace("-", "_")


def service_vars(service: dict[str, Any]) -> dict[str, str]:
    """The variables of one Service (none for a headless one or one without ports)."""
    spec = service.get("spec") or {}
    ip = spec.get("clusterIP")
    ports = spec.get("ports") or []
    if not ip or ip == "None" or not ports:
        return {}
    name = _env_name(str((service.get("metadata") or {}).get("name") or ""))
    first = ports[0]
    out = {f"{name}_SERVICE_HOST": ip, f"{name}_SERVICE_PORT": str(first.get("port"))}
    for port in ports:
        if port.get("name"):
            out[f"{name}_SERVICE_PORT_{_env_name(port['name'])}"] = str(port.get("port"))
    proto = str(first.get("protocol") or "TCP").lower()
    out[f"{name}_PORT"] = f"{proto}://{ip}:{first.get('port')}"
    for port in ports:
        proto = str(port.get("protocol") or "TCP")
        prefix = f"{name}_PORT_{port.get('port')}_{proto.upper()}"
        out[prefix] = f"{proto.lower()}://{ip}:{port.get('port')}"
        out[f"{prefix}_PROTO"] = proto.lower()
        out[f"{prefix}_PORT"] = str(port.get("port"))
        out[f"{prefix}_ADDR"] = ip
    return out


def service_env(pod: dict[str, Any], services: Iterable[dict[str, Any]]) -> dict[str, str]:
    """The Service variables of ``pod`` from ``services`` (those of the pod's namespace and of
    ``default``), in name order; the ``kubernetes`` Service's always, the others only with service
    links enabled (the default)."""
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    links = (pod.get("spec") or {}).get("enableServiceLinks") is not False
    chosen: dict[str, dict[str, Any]] = {}
    for svc in services:
        meta = svc.get("metadata") or {}
        ns, name = meta.get("namespace"), str(meta.get("name") or "")
        if ns == MASTER_NAMESPACE and name == MASTER_SERVICE:
            chosen.setdefault(name, svc)
        elif ns == namespace and links:
            chosen[name] = svc  # the pod's namespace wins a name clash, as in Kubernetes
    out: dict[str, str] = {}
    for name in sorted(chosen):
        out.update(service_vars(chosen[name]))
    return out
