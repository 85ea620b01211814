"""``kubectl describe service``: a Service in kubectl's layout, with each port's endpoints."""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api.base import Obj
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
    w.write(0, f"Type:\t{spec.get('type', 'ClusterIP')}")
    if spec.get("ipFamilyPolicy"):
        w.write(0, f"IP Family Policy:\t{spec['ipFamilyPolicy']}")
    if spec.get("ipFamilies"):
        w.write(0, f"IP Families:\t{','.join(spec['ipFamilies'])}")
    if spec.get("clusterIP"):
        w.write(0, f"IP:\t{spec['clusterIP']}")
        w.write(0, f"IPs:\t{','.join(spec.get('clusterIPs') or [spec['clusterIP']])}")
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
    w.write(0, f"Session Affinity:\t{spec.get('sessionAffinity', 'None')}")
    if spec.get("externalTrafficPolicy"):
        w.write(0, f"External Traffic Policy:\t{spec['externalTrafficPolicy']}")
    write_events(w, await fetch_events(s, svc, rt))
    return w.text()
