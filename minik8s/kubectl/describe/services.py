"""``kubectl describe`` for a Service in kubectl's layout, with each port's endpoints (from its
EndpointSlices, as kubectl 1.32 reads them), for an Endpoints object and for an EndpointSlice
(``pkg/describe``'s ServiceDescriber, EndpointsDescriber and EndpointSliceDescriber)."""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.columns import NONE
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.sections import header, meta_of, write_events
from minik8s.kubectl.session import Session


async def describe_service(s: Session, rt: ResourceType, svc: Obj) -> str:
    """A Service in kubectl's layout: Selector, Type, IP, and per port Port/TargetPort/NodePort/Endpoints."""
    meta, spec = meta_of(svc), svc.get("spec") or {}
    w = header(meta)
    selector = spec.get("selector") or {}
    w.write(0, "Selector:\t" + (",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"))
    w.write(0, f"Type:\t{spec.get('type') or ''}")
    if spec.get("ipFamilyPolicy"):
        w.write(0, f"IP Family Policy:\t{spec['ipFamilyPolicy']}")
    w.write(0, f"IP Families:\t{','.join(spec.get('ipFamilies') or []) or NONE}")
    w.write(0, f"IP:\t{spec.get('clusterIP') or ''}")
    w.write(0, f"IPs:\t{','.join(spec.get('clusterIPs') or []) or NONE}")
    if spec.get("externalIPs"):
        w.write(0, f"External IPs:\t{','.join(spec['externalIPs'])}")
    if spec.get("loadBalancerIP"):
        w.write(0, f"Desired LoadBalancer IP:\t{spec['loadBalancerIP']}")
    if spec.get("externalName"):
        w.write(0, f"External Name:\t{spec['externalName']}")
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if ingress:
        w.write(0, "LoadBalancer Ingress:\t" + ", ".join(
            (f"{i['ip']} ({i['ipMode']})" if i.get("ipMode") else i["ip"]) if i.get("ip") else i.get("hostname", "")
            for i in ingress))
    # kubectl 1.32 reads a Service's EndpointSlices, an empty list when they cannot be listed
    slices = await service_endpoint_slices(s, str(meta.get("namespace") or ""), str(meta.get("name") or "")) or []
    for port in spec.get("ports") or []:
        name = port.get("name") or "<unset>"
        proto = port.get("protocol", "TCP")
        w.write(0, f"Port:\t{name}  {port.get('port')}/{proto}")
        target = port.get("targetPort", port.get("port"))
        w.write(0, f"TargetPort:\t{target}/{proto}")
        if port.get("nodePort"):
            w.write(0, f"NodePort:\t{name}  {port['nodePort']}/{proto}")
        w.write(0, f"Endpoints:\t{format_endpoint_slices(slices, {port.get('name') or ''})}")
    w.write(0, f"Session Affinity:\t{spec.get('sessionAffinity') or ''}")
    if spec.get("externalTrafficPolicy"):
        w.write(0, f"External Traffic Policy:\t{spec['externalTrafficPolicy']}")
    if spec.get("internalTrafficPolicy"):
        w.write(0, f"Internal Traffic Policy:\t{spec['internalTrafficPolicy']}")
    if spec.get("healthCheckNodePort"):
        w.write(0, f"HealthCheck NodePort:\t{spec['healthCheckNodePort']}")
    if spec.get("loadBalancerSourceRanges"):
        w.write(0, f"LoadBalancer Source Ranges:\t{','.join(spec['loadBalancerSourceRanges'])}")
    if spec.get("trafficDistribution"):
        w.write(0, f"Traffic Distribution:\t{spec['trafficDistribution']}")
    write_events(w, await fetch_events(s, svc, rt))
    return w.text()


#: What kubectl reads when the server does not serve EndpointSlices (a 404 on the group's path).
NOT_SERVED = "the server could not find the requested resource"


def _join_host_port(host: str, port: object) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def format_endpoint_slices(slices: list[Obj], port_names: set[str] | None) -> str:
    """``ip:port,...`` of the ready endpoints (a missing condition counts as ready) serving the named
    ports (all when None), three at most then ``+ N more...``; ``<none>`` without slices
    (kubectl 1.32's ``formatEndpointSlices``: the counting quirks kept)."""
    if not slices:
        return NONE
    shown: list[str] = []
    more, count = False, 0

    def add(endpoint: Obj, text: str) -> None:
        nonlocal more, count
        if len(shown) == 3:
            more = True
        if (endpoint.get("conditions") or {}).get("ready") is False:
            return
        if not more:
            shown.append(text)
        count += 1

    for sl in slices:
        endpoints = sl.get("endpoints") or []
        if not sl.get("ports"):
            for ep in endpoints:
                add(ep, str((ep.get("addresses") or [""])[0]))
            continue
        for port in sl["ports"]:
            if port_names is None or (port.get("name") or "") in port_names:
                for ep in endpoints:
                    add(ep, _join_host_port(str((ep.get("addresses") or [""])[0]), port.get("port")))
    text = ",".join(shown)
    return f"{text} + {count - 3} more..." if more else text


async def service_endpoint_slices(s: Session, namespace: str, service: str) -> list[Obj] | None:
    """The EndpointSlices of ``service`` (label ``kubernetes.io/service-name``); None when the
    server does not serve them or they cannot be listed."""
    rt = s.registry.by_kind("discovery.k8s.io/v1", "EndpointSlice")
    if rt is None:
        return None
    try:
        listed = await s.client.list_all(rt, namespace, label_selector=f"kubernetes.io/service-name={service}")
    except errors.APIError:
        return None
    return list(listed.get("items") or [])


async def describe_endpoints(s: Session, rt: ResourceType, ep: Obj) -> str:
    """An Endpoints object (kubectl's EndpointsDescriber): each subset's ready and not-ready
    addresses and its ports table, then events."""
    w = header(meta_of(ep))
    w.write(0, "Subsets:")
    for subset in ep.get("subsets") or []:
        ready = ",".join(str(a.get("ip")) for a in subset.get("addresses") or [])
        not_ready = ",".join(str(a.get("ip")) for a in subset.get("notReadyAddresses") or [])
        w.write(1, f"Addresses:\t{ready or NONE}")
        w.write(1, f"NotReadyAddresses:\t{not_ready or NONE}")
        if subset.get("ports"):
            w.write(1, "Ports:")
            w.write(2, "Name\tPort\tProtocol")
            w.write(2, "----\t----\t--------")
            for port in subset["ports"]:
                w.write(2, f"{port.get('name') or '<unset>'}\t{port.get('port')}\t{port.get('protocol') or ''}")
        w.write(0, "")
    write_events(w, await fetch_events(s, ep, rt))
    return w.text()


async def describe_endpointslice(s: Session, rt: ResourceType, eps: Obj) -> str:
    """A discovery.k8s.io/v1 EndpointSlice (kubectl 1.32's ``describeEndpointSliceV1``): address type,
    the ports table, each endpoint's addresses, ready condition, hostname, target, node and zone."""
    w = header(meta_of(eps))
    w.write(0, f"AddressType:\t{eps.get('addressType') or ''}")
    if not eps.get("ports"):
        w.write(0, "Ports: <unset>")
    else:
        w.write(0, "Ports:")
        w.write(1, "Name\tPort\tProtocol")
        w.write(1, "----\t----\t--------")
        for port in eps["ports"]:
            number = port.get("port")
            w.write(1, f"{port.get('name') or '<unset>'}\t{'<unset>' if number is None else number}\t"
                       f"{port.get('protocol') or ''}")
    if not eps.get("endpoints"):
        w.write(0, "Endpoints: <none>")
    else:
        w.write(0, "Endpoints:")
        for endpoint in eps["endpoints"]:
            w.write(1, f"- Addresses:\t{', '.join(endpoint.get('addresses') or []) or NONE}")
            w.write(2, "Conditions:")
            ready = (endpoint.get("conditions") or {}).get("ready")
            w.write(3, f"Ready:\t{'<unset>' if ready is None else str(ready).lower()}")
            hostname = endpoint.get("hostname")
            w.write(2, f"Hostname:\t{'<unset>' if hostname is None else hostname}")
            target = endpoint.get("targetRef")
            if target is not None:
                w.write(2, f"TargetRef:\t{target.get('kind') or ''}/{target.get('name') or ''}")
            node = endpoint.get("nodeName")
            w.write(2, f"NodeName:\t{'<unset>' if node is None else node}")
            zone = endpoint.get("zone")
            w.write(2, f"Zone:\t{'<unset>' if zone is None else zone}")
    write_events(w, await fetch_events(s, eps, rt))
    return w.text()
