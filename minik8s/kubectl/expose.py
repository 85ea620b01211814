"""``kubectl expose TYPE NAME``: a Service for a Deployment, ReplicaSet, ReplicationController, Pod or
Service, as kubectl 1.32's ``createService`` builds it.

The selector, ports, protocols and labels come from the exposed object unless ``--selector``,
``--port``, ``--protocol`` and ``--labels`` give them: a Pod's labels, a Service's selector, a
workload's ``matchLabels``; the container (or service) ports, several of them named ``port-N``;
``targetPort`` is ``--target-port`` or each port itself.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from minik8s.api.base import Obj
from minik8s.kubectl.creating import (
    DryRunOpt,
    OutputOpt,
    check_flags,
    create_in,
    new_object,
    parse_labels,
    print_result,
    with_namespace,
)
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.resolve import object_ref, one_object
from minik8s.kubectl.session import GlobalOptions, Session

#: The kinds kubectl exposes (``CanBeExposed``).
EXPOSABLE = {("", "Pod"), ("", "Service"), ("", "ReplicationController"), ("apps", "Deployment"),
             ("apps", "ReplicaSet")}


def selector_of(obj: Obj) -> dict[str, str]:
    """The map selector of the exposed object (``MapBasedSelectorForObject``); KubectlError when none."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "Pod":
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if not labels:
            raise KubectlError("couldn't retrieve selectors via --selector flag or introspection: "
                               "the pod has no labels and cannot be exposed")
        return dict(labels)
    if kind in ("Service", "ReplicationController"):
        selector = spec.get("selector") or {}
        if not selector:
            raise KubectlError("couldn't retrieve selectors via --selector flag or introspection: "
                               f"the {'service' if kind == 'Service' else 'replication controller'} "
                               "has no pod selector set")
        return dict(selector)
    selector = spec.get("selector") or {}
    if selector.get("matchExpressions"):
        raise KubectlError("couldn't retrieve selectors via --selector flag or introspection: couldn't convert "
                           f"expressions - \"{selector['matchExpressions']}\" to map-based selector format")
    return dict(selector.get("matchLabels") or {})


def _container_ports(obj: Obj) -> list[Obj]:
    spec = obj.get("spec") or {}
    if obj.get("kind") != "Pod":
        spec = ((spec.get("template") or {}).get("spec")) or {}
    return [p for c in spec.get("containers") or [] for p in c.get("ports") or []]


def ports_of(obj: Obj) -> list[tuple[str, str]]:
    """(port, protocol) of every port of the exposed object, in order (``PortsForObject`` and
    ``MultiProtocolsForObject``)."""
    if obj.get("kind") == "Service":
        return [(str(p["port"]), p.get("protocol") or "TCP") for p in (obj.get("spec") or {}).get("ports") or []]
    return [(str(p["containerPort"]), p.get("protocol") or "TCP") for p in _container_ports(obj)]


def service_for(obj: Obj, name: str, port: str = "", protocol: str = "", target_port: str = "",
                service_type: str = "", selector: str = "", labels: str = "", external_ip: str = "",
                session_affinity: str = "", cluster_ip: str = "", load_balancer_ip: str = "") -> Obj:
    """The Service ``kubectl expose`` makes for ``obj`` (KubectlError in kubectl's words)."""
    chosen = parse_labels(selector) if selector else selector_of(obj)
    if not chosen:
        raise KubectlError("selector must be specified")
    found = ports_of(obj)
    protocols: dict[str, list[str]] = {}
    for found_port, proto in found:
        if proto not in protocols.setdefault(found_port, []):
            protocols[found_port].append(proto)
    numbers = [port] if port else list(dict.fromkeys(n for n, _ in found))
    if not numbers and cluster_ip != "None":
        raise KubectlError("couldn't find port via --port flag or introspection")
    ports: list[Obj] = []
    for i, text in enumerate(numbers):
        try:
            number = int(text)
        except ValueError:
            raise KubectlError(f'strconv.Atoi: parsing "{text}": invalid syntax') from None
        pname = f"port-{i + 1}" if len(numbers) > 1 else ""
        proto = protocol or "TCP"
        if not protocol and text in protocols:
            if len(protocols[text]) > 1:
                for each in protocols[text]:
                    ports.append({"name": f"port-{i + 1}-{each.lower()}", "protocol": each, "port": number})
                continue
            proto = protocols[text][0]
        entry: Obj = {"name": pname} if pname else {}
        entry.update(protocol=proto, port=number)
        ports.append(entry)
    for entry in ports:
        if target_port:
            entry["targetPort"] = int(target_port) if target_port.isdigit() else target_port
        else:
            entry["targetPort"] = entry["port"]
    obj_labels = parse_labels(labels) if labels else dict((obj.get("metadata") or {}).get("labels") or {})
    service = new_object("v1", "Service", name, obj_labels)
    spec: Obj = {}
    if ports:
        spec["ports"] = ports
    spec["selector"] = chosen
    if cluster_ip:
        spec["clusterIP"] = cluster_ip
    if service_type:
        spec["type"] = service_type
    if external_ip:
        spec["externalIPs"] = [external_ip]
    if session_affinity:
        if session_affinity not in ("None", "ClientIP"):
            raise KubectlError(f"unknown session affinity: {session_affinity}")
        spec["sessionAffinity"] = session_affinity
    if service_type == "LoadBalancer" and load_balancer_ip:
        spec["loadBalancerIP"] = load_balancer_ip
    service["spec"] = spec
    service["status"] = {"loadBalancer": {}}
    return service


async def run_expose(opts: GlobalOptions, args: list[str], name: str, dry_run: str, output: str,
                     **flags: str) -> None:
    """Read the exposed object, build its Service, then print it (client dry run) or create it."""
    check_flags(dry_run, output)
    if not args:
        raise KubectlError("You must provide one or more resources by argument or filename.\n"
                           "Example resource specifications include:\n   '-f rsrc.yaml'\n"
                           "   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
    named = one_object(args)
    if named is None:
        raise KubectlError("exactly one resource and name must be specified (TYPE NAME or TYPE/NAME)")
    type_name, obj_name = named
    async with Session(opts) as s:
        rt = s.resource(type_name)
        obj = await s.client.get(rt, obj_name, s.namespace if rt.namespaced else None)
        if (rt.group, rt.kind) not in EXPOSABLE:
            raise KubectlError(f"cannot expose a {rt.kind}")
        service = service_for(obj, name or obj_name[:63], **flags)
        if dry_run == "client":
            if opts.namespace:
                with_namespace(service, opts.namespace)
            print_result(f"service/{service['metadata']['name']}", service, output, dry_run, "exposed")
            return
        svc_rt, created = await create_in(s, service, dry_run)
        print_result(object_ref(svc_rt, created["metadata"]["name"]), created, output, dry_run, "exposed")


def expose(ctx: typer.Context,
           args: Annotated[list[str] | None, typer.Argument(metavar="(TYPE NAME | TYPE/NAME)",
                                                            help="the object to expose")] = None,
           port: Annotated[str, typer.Option("--port", help="the Service's port (default: the object's)")] = "",
           protocol: Annotated[str, typer.Option("--protocol", help="TCP, UDP or SCTP")] = "",
           target_port: Annotated[str, typer.Option("--target-port", help="the container port, number or name")]
           = "",
           service_type: Annotated[str, typer.Option("--type", help="ClusterIP, NodePort, LoadBalancer, "
                                                                    "ExternalName")] = "",
           name: Annotated[str, typer.Option("--name", help="the Service's name (default: the object's)")] = "",
           selector: Annotated[str, typer.Option("--selector", help="a=b selector (default: the object's)")] = "",
           labels: Annotated[str, typer.Option("-l", "--labels", help="the Service's labels")] = "",
           external_ip: Annotated[str, typer.Option("--external-ip", help="an external IP")] = "",
           session_affinity: Annotated[str, typer.Option("--session-affinity", help="None or ClientIP")] = "",
           cluster_ip: Annotated[str, typer.Option("--cluster-ip", help="the ClusterIP; None: headless")] = "",
           load_balancer_ip: Annotated[str, typer.Option("--load-balancer-ip", help="LoadBalancer IP")] = "",
           dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Expose a Deployment, ReplicaSet, ReplicationController, Pod or Service as a new Service."""
    asyncio.run(run_expose(ctx.obj, args or [], name, dry_run, output, port=port, protocol=protocol,
                           target_port=target_port, service_type=service_type, selector=selector, labels=labels,
                           external_ip=external_ip, session_affinity=session_affinity, cluster_ip=cluster_ip,
                           load_balancer_ip=load_balancer_ip))
