"""The EndpointSliceMirroring controller: the Endpoints of selector-less Services as EndpointSlices.

Kubernetes' ``pkg/controller/endpointslicemirroring``: readers of EndpointSlices only (kube-proxy,
the DNS server) must still see the endpoints a user (or a component registering itself, such as
the DNS server or the apiserver's ``kubernetes`` Service) writes into an Endpoints object.  For
every Endpoints whose Service exists and has no selector, and which is not labelled
``endpointslice.kubernetes.io/skip-mirror: "true"``, slices labelled
``endpointslice.kubernetes.io/managed-by: endpointslicemirroring-controller.k8s.io`` and
``kubernetes.io/service-name`` (plus the Endpoints' labels), owned by the Endpoints, hold each
subset's addresses (``ready`` true for ``addresses``, false for ``notReadyAddresses``; ``hostname``,
``nodeName``, ``targetRef`` copied) and its ports, at most 1000 addresses a subset and 100
endpoints a slice.  Addresses a slice may not hold (not IPv4, loopback, link-local, unspecified)
are skipped.  The slices go when the Endpoints or the Service does, or the Service gets a selector.
"""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.api.discovery import MANAGED_BY_LABEL, SERVICE_NAME_LABEL, non_special_ip_errors, parse_ip_sloppy
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.endpoints import service_selector
from minik8s.controllers.endpointslice import (
    Group,
    PortsKey,
    SliceWriter,
    endpoint_key,
    plan_slices,
    ports_key,
    requeue_owner,
    slice_informer,
    slice_template,
)
from minik8s.controllers.ownerrefs import meta_of

MIRROR_CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
#: Kubernetes' ``--mirroring-max-endpoints-per-subset`` default.
MAX_ENDPOINTS_PER_SUBSET = 1000


def mirrorable(ip: object) -> bool:
    """Whether an Endpoints address may go into an IPv4 slice."""
    parsed = parse_ip_sloppy(str(ip or ""))
    return parsed is not None and parsed.version == 4 and not non_special_ip_errors(str(ip))


def address_endpoint(address: Obj, ready: bool) -> Obj:
    """A slice Endpoint of an Endpoints address (Kubernetes' ``addressToEndpoint``)."""
    endpoint: Obj = {"addresses": [address.get("ip")], "conditions": {"ready": ready}}
    if address.get("hostname"):
        endpoint["hostname"] = address["hostname"]
    if address.get("targetRef"):
        endpoint["targetRef"] = address["targetRef"]
    if address.get("nodeName"):
        endpoint["nodeName"] = address["nodeName"]
    return endpoint


def mirrored_groups(endpoints: Obj) -> dict[PortsKey, Group]:
    """The slices' contents of one Endpoints object: ports key → endpoints of the subsets with those ports."""
    groups: dict[PortsKey, Group] = {}
    for subset in endpoints.get("subsets") or []:
        ports = [{"name": p.get("name") or "", "protocol": p.get("protocol") or "TCP", "port": p.get("port"),
                  **({"appProtocol": p["appProtocol"]} if p.get("appProtocol") else {})}
                 for p in subset.get("ports") or []]
        group = groups.setdefault(ports_key(ports), Group(ports))
        entries = [(a, True) for a in subset.get("addresses") or []] + \
                  [(a, False) for a in subset.get("notReadyAddresses") or []]
        for address, ready in entries[:MAX_ENDPOINTS_PER_SUBSET]:
            if mirrorable(address.get("ip")):
                endpoint = address_endpoint(address, ready)
                group.endpoints.setdefault(endpoint_key(endpoint), endpoint)
    return {k: g for k, g in groups.items() if g.endpoints}


def mirrored_labels(endpoints: Obj) -> dict[str, str]:
    """The Endpoints' labels, the service name and the mirroring controller's ``managed-by``."""
    labels = {k: v for k, v in (meta_of(endpoints).get("labels") or {}).items()
              if k not in (SKIP_MIRROR_LABEL, MANAGED_BY_LABEL, SERVICE_NAME_LABEL)}
    labels[SERVICE_NAME_LABEL] = str(meta_of(endpoints).get("name") or "")
    labels[MANAGED_BY_LABEL] = MIRROR_CONTROLLER_NAME
    return labels


class EndpointSliceMirroringController(Controller):
    """Mirrors Endpoints (keys ``namespace/name``, the Service's) of selector-less Services into slices."""

    name = "endpointslice-mirroring-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.services = factory.for_kind("v1", "Service")
        self.endpoints = factory.for_kind("v1", "Endpoints")
        self.slices = slice_informer(factory, client)
        self.writer = SliceWriter(client, self.slices, MIRROR_CONTROLLER_NAME)
        for informer in (self.services, self.endpoints):
            informer.add_handler(self._on_object, lambda _old, cur: self._on_object(cur), self._on_object)
        on_slice = requeue_owner(self.enqueue, MIRROR_CONTROLLER_NAME)
        self.slices.add_handler(on_slice, lambda _old, cur: on_slice(cur), on_slice)

    def _on_object(self, obj: Obj) -> None:
        self.enqueue(object_key(obj))

    async def sync(self, key: str) -> None:
        """Mirror the Endpoints ``key``; raise to be retried."""
        if self.writer.cache_behind(key):
            raise errors.Conflict(f"the cache does not show the last writes of {key} yet")
        endpoints, service = self.endpoints.get(key), self.services.get(key)
        existing = self.writer.managed(key)
        if endpoints is None or service is None or service_selector(service) is not None \
                or (meta_of(endpoints).get("labels") or {}).get(SKIP_MIRROR_LABEL) == "true":
            if existing:
                await self.writer.apply(key, plan_slices({}, existing, {}, placeholder=False))
                self.log.info("mirrored endpointslices of %s deleted", key)
            return
        name = str(meta_of(endpoints).get("name"))
        template = slice_template({**endpoints, "kind": "Endpoints"}, "v1", name, mirrored_labels(endpoints))
        plan = plan_slices(mirrored_groups(endpoints), existing, template, placeholder=False)
        count = await self.writer.apply(key, plan)
        if count:
            self.log.info("mirrored endpointslices %s created=%d updated=%d deleted=%d", key, len(plan.create),
                          len(plan.update), len(plan.delete))
