"""``kubectl describe ingress``: an Ingress in kubectl's layout (``pkg/describe``'s IngressDescriber
for networking.k8s.io/v1): address, class, default backend, TLS, the rules table with each
backend's endpoints (from EndpointSlices, as kubectl 1.32 reads them), annotations, events."""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.columns import NONE
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.services import NOT_SERVED, format_endpoint_slices, service_endpoint_slices
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.sections import Writer, meta_of, write_annotations, write_events, write_labels
from minik8s.kubectl.session import Session


def _backend_name(backend: Obj) -> str:
    """``service:port`` (the port's name or number), or a resource backend's description."""
    service = backend.get("service")
    if service is not None:
        port = service.get("port") or {}
        return f"{service.get('name')}:{port.get('name') or port.get('number') or 0}"
    resource = backend.get("resource") or {}
    return (f"APIGroup: {resource.get('apiGroup') or NONE}, Kind: {resource.get('kind') or ''}, "
            f"Name: {resource.get('name') or ''}")


async def _describe_backend(s: Session, namespace: str, backend: Obj) -> str:
    """``svc:80 (10.0.0.1:8080,...)``: the backend and the ready endpoints of the service port it
    names, from the service's EndpointSlices (``<error: ...>`` when they or the Service cannot be read)."""
    service = backend.get("service")
    if service is None:
        return _backend_name(backend)
    name = str(service.get("name") or "")
    slices = await service_endpoint_slices(s, namespace, name)
    if slices is None:
        return f"{_backend_name(backend)} (<error: {NOT_SERVED}>)"
    try:
        svc = await s.client.get(s.resource("services"), name, namespace)
    except errors.APIError as exc:
        return f"{_backend_name(backend)} (<error: {exc.message}>)"
    port = service.get("port") or {}
    port_name = ""
    for sp in (svc.get("spec") or {}).get("ports") or []:
        if port.get("number") and port.get("number") == sp.get("port"):
            port_name = sp.get("name") or ""
        elif port.get("name") and port.get("name") == sp.get("name"):
            port_name = sp.get("name") or ""
    return f"{_backend_name(backend)} ({format_endpoint_slices(slices, {port_name})})"


async def describe_ingress(s: Session, rt: ResourceType, ing: Obj) -> str:
    """An Ingress in kubectl's layout (Labels before Namespace, Annotations after the rules)."""
    meta, spec, status = meta_of(ing), ing.get("spec") or {}, ing.get("status") or {}
    namespace = str(meta.get("namespace") or "")
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    w.write(0, f"Namespace:\t{namespace}")
    addresses = sorted({str(i.get("ip") or i.get("hostname")) for i in (status.get("loadBalancer") or {}).get(
        "ingress") or [] if i.get("ip") or i.get("hostname")})
    w.write(0, f"Address:\t{','.join(addresses)}")
    w.write(0, f"Ingress Class:\t{spec.get('ingressClassName') or NONE}")
    default = spec.get("defaultBackend")
    default_text = await _describe_backend(s, namespace, default) if default else "<default>"
    w.write(0, f"Default backend:\t{default_text}")
    if spec.get("tls"):
        w.write(0, "TLS:")
        for tls in spec["tls"]:
            hosts = ",".join(tls.get("hosts") or [])
            w.write(1, f"{tls['secretName']} terminates {hosts}" if tls.get("secretName") else f"SNI routes {hosts}")
    w.write(0, "Rules:")
    w.write(1, "Host\tPath\tBackends")
    w.write(1, "----\t----\t--------")
    count = 0
    for rule in spec.get("rules") or []:
        if rule.get("http") is None:
            continue
        count += 1
        w.write(1, f"{rule.get('host') or '*'}\t")
        for path in rule["http"].get("paths") or []:
            backend = await _describe_backend(s, namespace, path.get("backend") or {})
            w.write(2, f"\t{path.get('path') or ''} \t{backend}")
    if count == 0:
        w.write(1, f"*\t*\t{default_text}")
    write_annotations(w, "Annotations", meta.get("annotations"))
    write_events(w, await fetch_events(s, ing, rt))
    return w.text()
