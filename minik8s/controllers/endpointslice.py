"""The EndpointSlice controller: a selector Service's pods as ``discovery.k8s.io/v1`` EndpointSlices.

Kubernetes' ``pkg/controller/endpointslice`` semantics, on the pod selection rules the Endpoints
controller uses (:mod:`minik8s.controllers.endpoints`, whose informers and handlers it shares):

* For every Service with a non-empty selector (not ``type: ExternalName``), the pods the selector
  matches that have a ``podIP`` and can still run, terminating ones included, are endpoints of
  ``addressType: IPv4`` slices labelled ``kubernetes.io/service-name: <service>`` and
  ``endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`` (plus the Service's
  labels, and ``service.kubernetes.io/headless`` for a headless Service), named
  ``<service>-<random>`` (generateName) and owned by the Service (a controller ownerReference).
* An endpoint: ``addresses: [podIP]``, ``conditions`` (``serving``: the pod is Ready;
  ``terminating``: it has a deletionTimestamp; ``ready``: serving and not terminating, or always
  with ``publishNotReadyAddresses``), ``targetRef`` (the pod), ``nodeName`` and, for a pod whose
  ``spec.subdomain`` is the Service's name, ``hostname``.
* Ports: each Service port resolved per pod (a named ``targetPort`` through the pod's container
  ports); pods whose ports resolve alike share slices, at most :data:`MAX_ENDPOINTS_PER_SLICE`
  endpoints each.  Endpoints stay in the slice they are in while they last (few writes); new ones
  fill the slices with room, then new slices; emptied slices are deleted.  A Service without
  endpoints keeps one empty placeholder slice.
* Deleting the Service deletes its slices (and the garbage collector would, by the owner reference).
* A slice written by this controller that the cache does not show yet holds the Service's next sync
  back (Kubernetes' ``EndpointSliceTracker``), so a slow cache never leads to duplicate slices.

Not done: ``zone`` (from the Node's topology label) and topology ``hints``.  Selector-less Services'
Endpoints are mirrored by :mod:`minik8s.controllers.endpointslicemirroring`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.discovery import (
    API_VERSION,
    CONTROLLER_NAME,
    MANAGED_BY_LABEL,
    SERVICE_INDEX,
    SERVICE_NAME_LABEL,
    slice_service_key,
)
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import Informer
from minik8s.client.rest import Client
from minik8s.controllers.endpoints import (
    HEADLESS_LABEL,
    ServicePodsController,
    find_port,
    is_headless,
    pod_hostname,
    pod_reference,
    service_selector,
    should_pod_be_in_endpoints,
)
from minik8s.controllers.ownerrefs import meta_of
from minik8s.controllers.podutil import is_pod_ready

#: Kubernetes' ``--max-endpoints-per-slice`` default.
MAX_ENDPOINTS_PER_SLICE = 100

PortsKey = tuple[tuple[str, int, str, str], ...]


# ====================================================================== pure computation
def slice_port(service_port: Obj, number: int | None) -> Obj:
    """A slice's EndpointPort for one Service port: name (``""`` when unset), protocol, port, appProtocol."""
    port: Obj = {"name": service_port.get("name") or "", "protocol": service_port.get("protocol") or "TCP"}
    if number is not None:
        port["port"] = number
    if service_port.get("appProtocol"):
        port["appProtocol"] = service_port["appProtocol"]
    return port


def ports_key(ports: list[Obj]) -> PortsKey:
    """A hashable form of a slice's ports, order-insensitive."""
    return tuple(sorted((str(p.get("name") or ""), int(p.get("port") or 0), str(p.get("protocol") or "TCP"),
                         str(p.get("appProtocol") or "")) for p in ports))


def pod_endpoint(pod: Obj, service: Obj) -> Obj:
    """The slice Endpoint of ``pod`` for ``service`` (Kubernetes' ``podToEndpoint``)."""
    spec = pod.get("spec") or {}
    serving = is_pod_ready(pod)
    terminating = bool(meta_of(pod).get("deletionTimestamp"))
    ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses")) or (serving and not terminating)
    endpoint: Obj = {"addresses": [(pod.get("status") or {}).get("podIP")],
                     "conditions": {"ready": ready, "serving": serving, "terminating": terminating}}
    hostname = pod_hostname(pod, service)
    if hostname:
        endpoint["hostname"] = hostname
    endpoint["targetRef"] = pod_reference(pod)
    if spec.get("nodeName"):
        endpoint["nodeName"] = spec["nodeName"]
    return endpoint


def endpoint_key(endpoint: Obj) -> str:
    """What tells a slice's endpoints apart: the target's uid, else the first address."""
    uid = (endpoint.get("targetRef") or {}).get("uid")
    return f"uid:{uid}" if uid else f"ip:{(endpoint.get('addresses') or [''])[0]}"


def _ip_key(endpoint: Obj) -> tuple[tuple[int, ...], str]:
    ip = str((endpoint.get("addresses") or [""])[0])
    return (tuple(int(p) if p.isdigit() else 0 for p in ip.split(".")), ip)


@dataclass
class Group:
    """The endpoints that serve one set of ports (one or more slices)."""

    ports: list[Obj]
    endpoints: dict[str, Obj] = field(default_factory=dict)


def desired_groups(service: Obj, pods: list[Obj]) -> dict[PortsKey, Group]:
    """The Service's endpoints grouped by their resolved ports (Kubernetes' ``reconcileByAddressType``
    input): ports key → :class:`Group`.  Empty when no pod is an endpoint."""
    groups: dict[PortsKey, Group] = {}
    for pod in pods:
        if not should_pod_be_in_endpoints(pod, True):
            continue
        ports = []
        for sp in (service.get("spec") or {}).get("ports") or []:
            number = find_port(pod, sp)
            if number is not None:
                ports.append(slice_port(sp, number))
        endpoint = pod_endpoint(pod, service)
        groups.setdefault(ports_key(ports), Group(ports)).endpoints[endpoint_key(endpoint)] = endpoint
    return groups


@dataclass
class Plan:
    """What to write: slices to create (bodies without name), to update (full objects), to delete (names)."""

    create: list[Obj] = field(default_factory=list)
    update: list[Obj] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)


def plan_slices(groups: dict[PortsKey, Group], existing: list[Obj], template: Obj,
                limit: int = MAX_ENDPOINTS_PER_SLICE, placeholder: bool = True) -> Plan:
    """The writes that turn ``existing`` (this controller's slices of one Service) into ``groups``.

    ``template`` is a new slice's body without ``ports`` and ``endpoints`` (metadata with
    generateName, labels and ownerReferences; addressType); its labels and ownerReferences are
    also what every kept slice must carry.  Endpoints stay in the slice that has them; new ones
    fill slices with room, then new slices of ``limit``.  No groups at all: one placeholder slice
    without ports or endpoints (with ``placeholder``), else no slice.
    """
    plan = Plan()
    if not groups and placeholder:
        groups = {(): Group([])}
    labels = meta_of(template).get("labels") or {}
    owners = meta_of(template).get("ownerReferences")
    by_group: dict[PortsKey, list[Obj]] = {}
    for sl in sorted(existing, key=lambda o: str(meta_of(o).get("name"))):
        key = ports_key(sl.get("ports") or [])
        if key in groups and sl.get("addressType") == template.get("addressType"):
            by_group.setdefault(key, []).append(sl)
        else:
            plan.delete.append(str(meta_of(sl).get("name")))
    for key, group in groups.items():
        remaining = dict(group.endpoints)
        kept: list[tuple[Obj, list[Obj]]] = []
        for sl in by_group.get(key, []):
            mine = [remaining.pop(k) for k in (endpoint_key(e) for e in sl.get("endpoints") or []) if k in remaining]
            kept.append((sl, mine[:limit]))
        new = sorted(remaining.values(), key=_ip_key)
        for _sl, mine in kept:
            room = limit - len(mine)
            if room > 0:
                mine += new[:room]
                del new[:room]
        if not group.endpoints:  # the placeholder: keep one slice, empty
            kept = kept[:1]
            plan.delete += [str(meta_of(sl).get("name")) for sl in by_group.get(key, [])[1:]]
        for sl, mine in kept:
            if not mine and group.endpoints:
                plan.delete.append(str(meta_of(sl).get("name")))
                continue
            endpoints = sorted(mine, key=_ip_key)
            meta = meta_of(sl)
            if (sl.get("endpoints") or []) == endpoints and (sl.get("ports") or []) == group.ports \
                    and (meta.get("labels") or {}) == labels and meta.get("ownerReferences") == owners:
                continue
            updated = copy.deepcopy(sl)
            updated["endpoints"], updated["ports"] = endpoints, copy.deepcopy(group.ports)
            updated["metadata"]["labels"] = dict(labels)
            if owners is not None:
                updated["metadata"]["ownerReferences"] = copy.deepcopy(owners)
            plan.update.append(updated)
        chunks = [new[i:i + limit] for i in range(0, len(new), limit)]
        if not group.endpoints and not kept:
            chunks = [[]]
        for chunk in chunks:
            body = copy.deepcopy(template)
            body["endpoints"], body["ports"] = chunk, copy.deepcopy(group.ports)
            plan.create.append(body)
    _reuse_deleted(plan, {str(meta_of(sl).get("name")): sl for sl in existing}, owners)
    return plan


def _reuse_deleted(plan: Plan, existing: dict[str, Obj], owners: object) -> None:
    """Turn creates into updates of slices that would be deleted (same addressType, same owner), as
    Kubernetes' reconciler ``finalize`` does: a placeholder becomes the first real slice, and so on."""
    for name in list(plan.delete):
        if not plan.create:
            return
        old = existing.get(name)
        body = plan.create[-1]
        if old is None or old.get("addressType") != body.get("addressType") \
                or meta_of(old).get("ownerReferences") != owners:
            continue
        plan.create.pop()
        plan.delete.remove(name)
        updated = copy.deepcopy(old)
        updated["endpoints"], updated["ports"] = body["endpoints"], body["ports"]
        updated["metadata"]["labels"] = dict(meta_of(body).get("labels") or {})
        plan.update.append(updated)


def slice_labels(service: Obj, managed_by: str) -> dict[str, str]:
    """A slice's labels: the Service's, ``kubernetes.io/service-name``, ``managed-by``, and the
    headless label for a headless Service (Kubernetes' ``setEndpointSliceLabels``)."""
    labels = {k: v for k, v in (meta_of(service).get("labels") or {}).items()
              if k not in (SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL)}
    labels[SERVICE_NAME_LABEL] = str(meta_of(service).get("name") or "")
    labels[MANAGED_BY_LABEL] = managed_by
    if is_headless(service):
        labels[HEADLESS_LABEL] = ""
    return labels


def slice_template(owner: Obj, owner_api_version: str, name: str, labels: dict[str, str]) -> Obj:
    """A new slice (``generateName: <name>-``, IPv4) owned by ``owner`` (a Service or Endpoints)."""
    meta = meta_of(owner)
    return {"apiVersion": API_VERSION, "kind": "EndpointSlice", "addressType": "IPv4",
            "metadata": {"generateName": f"{name}-", "namespace": meta.get("namespace"), "labels": labels,
                         "ownerReferences": [{"apiVersion": owner_api_version, "kind": owner.get("kind") or "",
                                              "name": meta.get("name"), "uid": meta.get("uid"),
                                              "controller": True, "blockOwnerDeletion": True}]}}


# ====================================================================== writing, shared with the mirroring controller
class SliceWriter:
    """Applies :class:`Plan` s and remembers what it wrote until the slice informer shows it."""

    def __init__(self, client: Client, slices: Informer, managed_by: str) -> None:
        self.client = client
        self.slices = slices
        self.managed_by = managed_by
        self.rt = client.kind(API_VERSION, "EndpointSlice")
        #: service key → {slice name: resourceVersion written, or None when deleted}
        self.written: dict[str, dict[str, int | None]] = {}

    def managed(self, key: str) -> list[Obj]:
        """This writer's slices of Service ``key`` in the cache."""
        return [sl for sl in self.slices.by_index(SERVICE_INDEX, key)
                if (meta_of(sl).get("labels") or {}).get(MANAGED_BY_LABEL) == self.managed_by]

    def cache_behind(self, key: str) -> bool:
        """Whether the cache does not yet show a write of an earlier sync of ``key``."""
        namespace = key.partition("/")[0]
        pending = self.written.get(key) or {}
        for name, rv in list(pending.items()):
            cached = self.slices.get(f"{namespace}/{name}")
            cached_rv = int(meta_of(cached).get("resourceVersion") or 0) if cached is not None else None
            if (rv is None and cached is None) or (rv is not None and cached_rv is not None and cached_rv >= rv):
                del pending[name]
        if not pending:
            self.written.pop(key, None)
        return bool(pending)

    async def apply(self, key: str, plan: Plan) -> int:
        """Write ``plan`` for Service ``key``; the number of writes.  Raises Conflict (retry soon) when
        a write raced or the cache was behind; other API errors as they come."""
        namespace = key.partition("/")[0]
        pending = self.written.setdefault(key, {})
        try:
            for name in plan.delete:
                try:
                    await self.client.delete(self.rt, name, namespace)
                except errors.NotFound:
                    pass
                pending[name] = None
            for body in plan.update:
                out = await self.client.update(self.rt, body)
                pending[str(meta_of(out).get("name"))] = int(meta_of(out).get("resourceVersion") or 0)
            for body in plan.create:
                out = await self.client.create(self.rt, body, namespace)
                pending[str(meta_of(out).get("name"))] = int(meta_of(out).get("resourceVersion") or 0)
        except (errors.Conflict, errors.NotFound, errors.AlreadyExists):
            raise errors.Conflict(f"endpoint slices of {key} changed meanwhile") from None
        return len(plan.delete) + len(plan.update) + len(plan.create)


def slice_informer(factory: SharedInformerFactory, client: Client) -> Informer:
    """The shared EndpointSlice informer, indexed by ``namespace/service``."""
    return factory.informer(client.kind(API_VERSION, "EndpointSlice"), {SERVICE_INDEX: slice_service_key})


def requeue_owner(enqueue: Callable[[str], None], managed_by: str) -> Callable[[Obj], None]:
    """A slice handler queueing the Service of a slice ``managed_by`` manages (a change by someone else
    is undone; a deletion is replaced)."""
    def handler(endpoint_slice: Obj) -> None:
        if (meta_of(endpoint_slice).get("labels") or {}).get(MANAGED_BY_LABEL) == managed_by:
            for key in slice_service_key(endpoint_slice):
                enqueue(key)
    return handler


# ====================================================================== controller
class EndpointSliceController(ServicePodsController):
    """Reconciles the EndpointSlices of Services (keys ``namespace/name``) from the Service and pod caches."""

    name = "endpointslice-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.slices = slice_informer(factory, client)
        self.writer = SliceWriter(client, self.slices, CONTROLLER_NAME)
        on_slice = requeue_owner(self.enqueue, CONTROLLER_NAME)
        self.slices.add_handler(None, lambda _old, cur: on_slice(cur), on_slice)

    async def run(self, workers: int = 1) -> None:
        """Queue the Services of slices whose Service is gone (deleted while stopped), then run."""
        await self.factory.wait_for_cache_sync()
        for sl in self.slices.list():
            for key in slice_service_key(sl):
                if self.services.get(key) is None:
                    self.enqueue(key)
        await super().run(workers)

    async def sync(self, key: str) -> None:
        """Reconcile the slices of Service ``key``; raise to be retried."""
        if self.writer.cache_behind(key):
            raise errors.Conflict(f"the cache does not show the last writes of {key} yet")
        service = self.services.get(key)
        existing = self.writer.managed(key)
        selector = service_selector(service) if service is not None else None
        if service is None or selector is None or (service.get("spec") or {}).get("type") == "ExternalName":
            if existing:  # Service gone or no longer selecting: its slices go
                count = await self.writer.apply(key, Plan(delete=[str(meta_of(s).get("name")) for s in existing]))
                self.log.info("endpointslices %s deleted=%d", key, count)
            return
        name = str(meta_of(service).get("name"))
        template = slice_template(service, "v1", name, slice_labels(service, CONTROLLER_NAME))
        template["metadata"]["ownerReferences"][0]["kind"] = "Service"
        plan = plan_slices(desired_groups(service, self.selected_pods(service, selector)), existing, template)
        try:
            count = await self.writer.apply(key, plan)
        except errors.Conflict:
            raise
        except errors.APIError as exc:
            self.event(service, "Warning", "FailedToUpdateEndpointSlices",
                       f"Error updating Endpoint Slices for Service {key}: {exc.message}")
            raise
        if count:
            self.log.info("endpointslices %s created=%d updated=%d deleted=%d", key, len(plan.create),
                          len(plan.update), len(plan.delete))
