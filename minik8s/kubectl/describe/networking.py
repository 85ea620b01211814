"""``kubectl describe ingress``: an Ingress in kubectl's layout (``pkg/describe``'s IngressDescriber
for networking.k8s.io/v1): address, class, default backend, TLS, the rules table with each
backend's endpoints (from EndpointSlices, as kubectl 1.32 reads them), annotations, events;
``kubectl describe networkpolicy`` (``describeNetworkPolicy``): the spec's selector and each direction's rules;
``kubectl describe ingressclass`` (``describeIngressClassV1``): its controller and parameters."""

from __future__ import annotations

import datetime as dt
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.columns import NONE, format_selector
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


# ---------------------------------------------------------------- NetworkPolicy
def go_time_string(value: Any) -> str:
    """A timestamp as Go's ``time.Time.String()`` prints it in the local zone (``2006-01-02 15:04:05 -0700 MST``)."""
    if not value:
        return "0001-01-01 00:00:00 +0000 UTC"
    at = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone()
    return at.strftime("%Y-%m-%d %H:%M:%S %z ") + (at.tzname() or "")


def _int_or_string(value: Any) -> str:
    """A ``*intstr.IntOrString`` printed with ``%s`` (``<nil>`` when unset)."""
    return "<nil>" if value is None else str(value)


def _write_peers(w: Writer, peers: list[Obj], word: str, indent: str) -> None:
    for peer in peers:
        w.write(0, f"{indent}{word}:")
        pod, ns = peer.get("podSelector"), peer.get("namespaceSelector")
        if pod is not None and ns is not None:
            w.write(1, f"{indent}NamespaceSelector: {format_label_selector(ns)}")
            w.write(1, f"{indent}PodSelector: {format_label_selector(pod)}")
        elif pod is not None:
            w.write(1, f"{indent}PodSelector: {format_label_selector(pod)}")
        elif ns is not None:
            w.write(1, f"{indent}NamespaceSelector: {format_label_selector(ns)}")
        elif peer.get("ipBlock") is not None:
            block = peer["ipBlock"]
            w.write(1, f"{indent}IPBlock:")
            w.write(2, f"{indent}CIDR: {block.get('cidr') or ''}")
            w.write(2, f"{indent}Except: {', '.join(block.get('except') or [])}")


def _write_rules(w: Writer, rules: list[Obj], direction: str) -> None:
    """``printNetworkPolicySpecIngressFrom`` / ``printNetworkPolicySpecEgressTo``."""
    indent = "    "
    if not rules:
        w.write(0, f"{indent}<none> (Selected pods are isolated for {direction} connectivity)")
        return
    peers_key, word = ("from", "From") if direction == "ingress" else ("to", "To")
    for i, rule in enumerate(rules):
        if not rule.get("ports"):
            w.write(0, f"{indent}To Port: <any> (traffic allowed to all ports)")
        else:
            for port in rule["ports"]:
                proto = port.get("protocol") or "TCP"
                if port.get("endPort") is not None:
                    w.write(0, f"{indent}To Port Range: {_int_or_string(port.get('port'))}-{port['endPort']}/{proto}")
                else:
                    w.write(0, f"{indent}To Port: {_int_or_string(port.get('port'))}/{proto}")
        peers = rule.get(peers_key) or []
        if not peers:
            what = "source" if direction == "ingress" else "destination"
            w.write(0, f"{indent}{word}: <any> (traffic not restricted by {what})")
        else:
            _write_peers(w, peers, word, indent)
        if i != len(rules) - 1:
            w.write(0, f"{indent}----------")


def format_label_selector(sel: Any) -> str:
    """``metav1.FormatLabelSelector``: ``<none>`` for an empty selector."""
    return format_selector(sel if isinstance(sel, dict) else {})


async def describe_networkpolicy(s: Session, rt: ResourceType, np: Obj) -> str:
    """A NetworkPolicy in kubectl's layout (``describeNetworkPolicy``: no events)."""
    meta, spec = meta_of(np), np.get("spec") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, f"Created on:\t{go_time_string(meta.get('creationTimestamp'))}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, "Spec:")
    selector = spec.get("podSelector") or {}
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        w.write(1, "PodSelector: " + "    <none> (Allowing the specific traffic to all pods in this namespace)")
    else:
        w.write(1, "PodSelector: " + "    " + format_label_selector(selector))
    types = spec.get("policyTypes") or []
    for direction, name in (("ingress", "Ingress"), ("egress", "Egress")):
        if name in types:
            w.write(1, f"Allowing {direction} traffic:")
            _write_rules(w, spec.get(direction) or [], direction)
        else:
            w.write(1, f"Not affecting {direction} traffic")
    w.write(1, f"Policy Types: {', '.join(types)}")
    return w.text()


async def describe_ingress_class(s: Session, rt: ResourceType, ic: Obj) -> str:
    """Name, labels, annotations, the controller, the parameters' reference (API group only when
    set; the scope is not shown, as kubectl 1.32), events."""
    meta, spec = meta_of(ic), ic.get("spec") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Controller:\t{spec.get('controller') or ''}")
    params = spec.get("parameters")
    if params is not None:
        w.write(0, "Parameters:")
        if params.get("apiGroup") is not None:
            w.write(1, f"APIGroup:\t{params['apiGroup']}")
        w.write(1, f"Kind:\t{params.get('kind') or ''}")
        w.write(1, f"Name:\t{params.get('name') or ''}")
    write_events(w, await fetch_events(s, ic, rt))
    return w.text()
