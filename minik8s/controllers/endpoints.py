"""The endpoints controller: keep one Endpoints object per selector Service, listing its pods.

Kubernetes' ``pkg/controller/endpoint`` semantics:

* For every Service with a non-empty ``spec.selector`` (and not ``type: ExternalName``) an
  Endpoints object of the same namespace/name lists the pods of the namespace the selector
  matches.  Services without a selector are left alone: their Endpoints are the user's.
* A pod is listed when it has a ``podIP``, is not terminating (unless the Service sets
  ``publishNotReadyAddresses``) and can still run (``restartPolicy`` Never/OnFailure pods
  that finished are left out).  Pods whose ``Ready`` condition is True go to ``addresses``,
  the others to ``notReadyAddresses`` — every pod goes to ``addresses`` with
  ``publishNotReadyAddresses``.  An address carries ``ip``, ``nodeName``, ``targetRef``
  (kind Pod, namespace, name, uid) and, for a pod whose ``spec.subdomain`` is the Service's
  name, ``hostname``.
* Ports: per Service port, a numeric ``targetPort`` is used as is; a named one is looked up
  in each pod's container ports (same name and protocol).  A pod without that port is left
  out of that port; pods that resolve a name to different numbers land in different
  subsets (``RepackSubsets``: addresses with the same set of ports share a subset).  A
  headless Service without ports gets one subset of addresses without ports.
* The Endpoints' labels are the Service's, plus ``service.kubernetes.io/headless`` for a
  headless Service.  Nothing is written when subsets and labels are already right.
* Deleting the Service deletes its Endpoints; on start, Endpoints whose Service is gone
  are deleted too (``checkLeftoverEndpoints``), so a restart never leaves stale ones.
* It follows pod creation, deletion, relabelling, IP and readiness changes; node loss is
  seen through the pods' Ready conditions (a node lifecycle controller marks them).

Events on the Service: ``FailedToCreateEndpoint``, ``FailedToUpdateEndpoint``.
"""

from __future__ import annotations

import copy

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.api.selectors import LabelSelector
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of
from minik8s.controllers.podutil import is_pod_ready

#: Label Kubernetes puts on the Endpoints of a headless Service.
HEADLESS_LABEL = "service.kubernetes.io/headless"


# ====================================================================== pure computation
def service_selector(service: Obj) -> LabelSelector | None:
    """The Service's selector as a LabelSelector; None when it has none (nil or empty map)."""
    selector = (service.get("spec") or {}).get("selector")
    if not selector:
        return None
    return LabelSelector.from_set(selector)


def is_headless(service: Obj) -> bool:
    """``spec.clusterIP`` is ``None`` (no virtual IP; DNS returns the endpoints themselves)."""
    return (service.get("spec") or {}).get("clusterIP") == "None"


def find_port(pod: Obj, service_port: Obj) -> int | None:
    """The pod's port for one Service port (Kubernetes' ``podutil.FindPort``).

    A numeric ``targetPort`` (or none: the Service ``port``) is returned as is; a named one
    is the ``containerPort`` of the first container port with that name and the Service
    port's protocol (TCP when unset), or None when the pod has no such port.
    """
    target = service_port.get("targetPort")
    if target in (None, "", 0):
        target = service_port.get("port")
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                value = port.get("containerPort")
                return value if isinstance(value, int) else None
    return None


def should_pod_be_in_endpoints(pod: Obj, include_terminating: bool) -> bool:
    """Kubernetes' ``ShouldPodBeInEndpoints``: has a podIP; not terminating unless
    ``include_terminating``; with restartPolicy Never not Succeeded/Failed, with OnFailure
    not Succeeded."""
    status, meta = pod.get("status") or {}, meta_of(pod)
    if not status.get("podIP"):
        return False
    if not include_terminating and meta.get("deletionTimestamp"):
        return False
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    phase = status.get("phase")
    if policy == "Never":
        return phase not in ("Succeeded", "Failed")
    if policy == "OnFailure":
        return phase != "Succeeded"
    return True


def pod_hostname(pod: Obj, service: Obj) -> str | None:
    """The pod's ``spec.hostname`` when its ``spec.subdomain`` names ``service`` of its namespace
    (Kubernetes' ``ShouldSetHostname``), else None."""
    meta, spec, smeta = meta_of(pod), pod.get("spec") or {}, meta_of(service)
    if spec.get("hostname") and spec.get("subdomain") == smeta.get("name") \
            and meta.get("namespace") == smeta.get("namespace"):
        return str(spec["hostname"])
    return None


def pod_reference(pod: Obj) -> Obj:
    """The ``targetRef`` of a pod's address: kind Pod, namespace, name, uid."""
    meta = meta_of(pod)
    return {"kind": "Pod", "namespace": meta.get("namespace"), "name": meta.get("name"), "uid": meta.get("uid")}


def endpoint_address(pod: Obj, service: Obj) -> Obj:
    """The EndpointAddress of ``pod`` for ``service``: ip, nodeName, targetRef, hostname."""
    spec = pod.get("spec") or {}
    address: Obj = {"ip": (pod.get("status") or {}).get("podIP")}
    hostname = pod_hostname(pod, service)
    if hostname:
        address["hostname"] = hostname
    if spec.get("nodeName"):
        address["nodeName"] = spec["nodeName"]
    address["targetRef"] = pod_reference(pod)
    return address


def endpoint_port(service_port: Obj, number: int) -> Obj:
    """The EndpointPort for one Service port resolved to ``number``."""
    port: Obj = {}
    if service_port.get("name"):
        port["name"] = service_port["name"]
    port["port"] = number
    port["protocol"] = service_port.get("protocol") or "TCP"
    if service_port.get("appProtocol"):
        port["appProtocol"] = service_port["appProtocol"]
    return port


def _address_key(address: Obj) -> tuple[str, str]:
    return (str(address.get("ip")), str((address.get("targetRef") or {}).get("uid") or ""))


def _ip_sort_key(address: Obj) -> tuple[tuple[int, ...], str]:
    ip = str(address.get("ip") or "")
    parts = tuple(int(p) if p.isdigit() else 0 for p in ip.split("."))
    return (parts, _address_key(address)[1])


def _port_key(port: Obj) -> tuple[str, int, str, str]:
    return (str(port.get("name") or ""), int(port.get("port") or 0), str(port.get("protocol") or ""),
            str(port.get("appProtocol") or ""))


def repack_subsets(entries: list[tuple[Obj, bool, Obj | None]]) -> list[Obj]:
    """Group ``(address, ready, port or None)`` entries into subsets (Kubernetes' ``RepackSubsets``).

    Ports reached by exactly the same set of (address, ready) pairs share one subset; the
    result is sorted (subsets by ports, addresses by IP, ports by name/number), so equal
    inputs always give equal output.  ``port`` None stands for "no ports" (headless
    Service without ports).
    """
    addresses: dict[tuple[str, str], Obj] = {}
    by_port: dict[tuple[str, int, str, str] | None, set[tuple[tuple[str, str], bool]]] = {}
    ports: dict[tuple[str, int, str, str], Obj] = {}
    for address, ready, port in entries:
        akey = _address_key(address)
        addresses[akey] = address
        pkey = _port_key(port) if port is not None else None
        if port is not None and pkey is not None:
            ports[pkey] = port
        by_port.setdefault(pkey, set()).add((akey, ready))
    groups: dict[frozenset[tuple[tuple[str, str], bool]], list[tuple[str, int, str, str] | None]] = {}
    for pkey, members in by_port.items():
        groups.setdefault(frozenset(members), []).append(pkey)
    subsets: list[Obj] = []
    for group, pkeys in groups.items():
        subset: Obj = {}
        ready_addresses = sorted((addresses[a] for a, ok in group if ok), key=_ip_sort_key)
        not_ready = sorted((addresses[a] for a, ok in group if not ok), key=_ip_sort_key)
        if ready_addresses:
            subset["addresses"] = ready_addresses
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        real_ports = [ports[k] for k in sorted(k for k in pkeys if k is not None)]
        if real_ports:
            subset["ports"] = real_ports
        subsets.append(subset)
    subsets.sort(key=lambda s: ([_port_key(p) for p in s.get("ports") or []],
                                [_address_key(a) for a in s.get("addresses") or s.get("notReadyAddresses") or []]))
    return subsets


def compute_subsets(service: Obj, pods: list[Obj]) -> list[Obj]:
    """The Endpoints ``subsets`` of ``service`` given the pods its selector matches.

    ``pods`` must already be the selected pods of the Service's namespace.  See the module
    docstring for the rules; the result is canonical (see :func:`repack_subsets`).
    """
    spec = service.get("spec") or {}
    tolerate_unready = bool(spec.get("publishNotReadyAddresses"))
    service_ports = spec.get("ports") or []
    entries: list[tuple[Obj, bool, Obj | None]] = []
    for pod in pods:
        if not should_pod_be_in_endpoints(pod, tolerate_unready):
            continue
        address = endpoint_address(pod, service)
        ready = tolerate_unready or is_pod_ready(pod)
        if not service_ports:
            if is_headless(service):
                entries.append((address, ready, None))
            continue
        for sp in service_ports:
            number = find_port(pod, sp)
            if number is None:
                continue
            entries.append((address, ready, endpoint_port(sp, number)))
    return repack_subsets(entries)


def desired_labels(service: Obj) -> dict[str, str]:
    """The Endpoints' labels: the Service's, plus ``service.kubernetes.io/headless`` when headless."""
    labels = dict(meta_of(service).get("labels") or {})
    if is_headless(service):
        labels[HEADLESS_LABEL] = ""
    else:
        labels.pop(HEADLESS_LABEL, None)
    return labels


def endpoints_up_to_date(current: Obj, subsets: list[Obj], labels: dict[str, str]) -> bool:
    """Whether the stored Endpoints already hold ``subsets`` and ``labels`` (then nothing is written)."""
    return (current.get("subsets") or []) == subsets and (meta_of(current).get("labels") or {}) == labels


# ====================================================================== controller
class ServicePodsController(Controller):
    """What the Endpoints and EndpointSlice controllers share: Service and pod informers, keys
    ``namespace/name`` of Services, queued when the Service changes or a pod it selects (or
    selected, before a relabel) is added, changed or deleted."""

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.svc_rt = client.kind("v1", "Service")
        self.pod_rt = client.kind("v1", "Pod")
        self.services = factory.informer(self.svc_rt, {NAMESPACE_INDEX: by_namespace})
        self.pods = factory.informer(self.pod_rt, {NAMESPACE_INDEX: by_namespace})
        self.services.add_handler(self._on_service, lambda _old, cur: self._on_service(cur), self._on_service)
        self.pods.add_handler(self._add_pod, self._update_pod, self._add_pod)

    def selected_pods(self, service: Obj, selector: LabelSelector) -> list[Obj]:
        """The pods of the Service's namespace that ``selector`` (the Service's) matches."""
        return [p for p in self.pods.by_index(NAMESPACE_INDEX, meta_of(service).get("namespace") or "")
                if selector.matches(meta_of(p).get("labels") or {})]

    # ------------------------------------------------------------------ event handlers
    def _on_service(self, service: Obj) -> None:
        self.enqueue(object_key(service))

    def _services_selecting(self, namespace: str, labels: dict[str, str]) -> list[str]:
        keys = []
        for service in self.services.by_index(NAMESPACE_INDEX, namespace):
            selector = service_selector(service)
            if selector is not None and selector.matches(labels):
                keys.append(object_key(service))
        return keys

    def _add_pod(self, pod: Obj) -> None:
        meta = meta_of(pod)
        for key in self._services_selecting(meta.get("namespace") or "", meta.get("labels") or {}):
            self.enqueue(key)

    def _update_pod(self, old: Obj, cur: Obj) -> None:
        if meta_of(old).get("resourceVersion") == meta_of(cur).get("resourceVersion"):
            return  # periodic resync: the Service resync covers it
        keys = set(self._services_selecting(meta_of(cur).get("namespace") or "", meta_of(cur).get("labels") or {}))
        if (meta_of(old).get("labels") or {}) != (meta_of(cur).get("labels") or {}):
            keys |= set(self._services_selecting(meta_of(old).get("namespace") or "",
                                                 meta_of(old).get("labels") or {}))
        for key in keys:
            self.enqueue(key)


class EndpointsController(ServicePodsController):
    """Reconciles Endpoints (keys ``namespace/name`` of Services) from the Service and pod caches."""

    name = "endpoint-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.ep_rt = client.kind("v1", "Endpoints")
        self.endpoints = factory.informer(self.ep_rt)
        self.endpoints.add_handler(None, lambda _old, cur: self._on_endpoints(cur), self._on_endpoints)

    def _on_endpoints(self, endpoints: Obj) -> None:
        """Someone else changed or deleted an Endpoints we manage: sync its Service again."""
        key = object_key(endpoints)
        service = self.services.get(key)
        if service is not None and service_selector(service) is not None:
            self.enqueue(key)

    # ------------------------------------------------------------------ running
    async def run(self, workers: int = 1) -> None:
        """Queue Endpoints left over from deleted Services (``checkLeftoverEndpoints``), then run."""
        await self.factory.wait_for_cache_sync()
        for endpoints in self.endpoints.list():
            key = object_key(endpoints)
            if self.services.get(key) is None:
                self.enqueue(key)
        await super().run(workers)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        """Reconcile the Endpoints of Service ``key``; raise to be retried."""
        namespace, _, name = key.partition("/")
        service = self.services.get(key)
        if service is None:
            try:
                await self.client.delete(self.ep_rt, name, namespace)
                self.log.info("endpoints %s deleted (service gone)", key)
            except errors.NotFound:
                pass
            return
        selector = service_selector(service)
        if selector is None or (service.get("spec") or {}).get("type") == "ExternalName":
            return  # the user manages the Endpoints of a Service without selector
        subsets = compute_subsets(service, self.selected_pods(service, selector))
        labels = desired_labels(service)
        current = self.endpoints.get(key)
        if current is not None and endpoints_up_to_date(current, subsets, labels):
            return
        creating = current is None
        obj: Obj = copy.deepcopy(current) if current is not None else \
            {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": namespace}}
        obj["subsets"] = subsets
        if labels:
            obj["metadata"]["labels"] = labels
        else:
            obj["metadata"].pop("labels", None)
        try:
            if creating:
                await self.client.create(self.ep_rt, obj, namespace)
            else:
                await self.client.update(self.ep_rt, obj)
        except (errors.Conflict, errors.AlreadyExists, errors.NotFound):
            # the cache is behind (created or deleted meanwhile): sync again from a fresher one
            raise errors.Conflict(f"endpoints {key} changed meanwhile") from None
        except errors.APIError as exc:
            reason, what = ("FailedToCreateEndpoint", "create") if creating else ("FailedToUpdateEndpoint", "update")
            self.event(service, "Warning", reason, f"Failed to {what} endpoint for service {key}: {exc.message}")
            raise
        self.log.info("endpoints %s %s addresses=%d", key, "created" if creating else "updated", _count(subsets))


def _count(subsets: list[Obj]) -> int:
    return sum(len(s.get("addresses") or []) for s in subsets)
