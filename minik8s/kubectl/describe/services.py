"""``kubectl describe service``: a Service in kubectl's layout, with each port's endpoints."""

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
    try:
        ep_rt = s.registry.by_kind("v1", "Endpoints")
        endpoints = await s.client.get(ep_rt, meta.get("name", ""), meta.get("namespace")) if ep_rt else {}
    except errors.NotFound:
        endpoints = {}
    for port in spec.get("ports") or []:
        name = port.get("name") or "<unset>"
        proto = port.get("protocol", "TCP")
        w.write(0, f"Port:\t{name}  {port.get('port')}/{proto}")
        target = port.get("targetPort", port.get("port"))
        w.write(0, f"TargetPort:\t{target}/{proto}")
        if port.get("nodePort"):
            w.write(0, f"NodePort:\t{name}  {port['nodePort']}/{proto}")
        addrs = []
        for subset in endpoints.get("subsets") or []:
            numbers = [p.get("port") for p in subset.get("ports") or [] if p.get("name") == port.get("name")]
            for a in subset.get("addresses") or []:
                addrs += [f"{a['ip']}:{n}" for n in numbers]
        w.write(0, "Endpoints:\t" + (",".join(addrs) or "<none>"))
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
