"""What the scheduler knows about pods and nodes: parsed once, read by every plugin.

Kubernetes' ``framework.PodInfo`` / ``framework.NodeInfo`` / snapshot, in Python:

* :class:`Resource` -- an amount of cpu (integer millicores), memory and ephemeral
  storage (bytes) and any other (extended) resource by name (integer units).
* :class:`PodInfo` -- a wire-form pod dict plus what plugins need from it, computed once:
  effective requests (init containers count as ``max``), the non-zero requests used for
  scoring, host ports, tolerations, parsed pod (anti-)affinity terms.
* :class:`NodeInfo` -- a node, the pods on it (bound and assumed) and the sums of their
  requests and host ports.
* :class:`Snapshot` -- the nodes one scheduling cycle looks at (and the disruption budgets and
  nominated pods preemption and filtering weigh).

Everything here is pure (no I/O).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.quantity import parse_memory, parse_millicpu, parse_quantity
from minik8s.api.selectors import LabelSelector

#: Kubernetes' ``DefaultMilliCPURequest``: what a container without a cpu request counts
#: as when *scoring* (never when filtering), so that many zero-request pods still spread.
DEFAULT_MILLI_CPU_REQUEST = 100
#: Kubernetes' ``DefaultMemoryRequest`` (200 MiB), the scoring counterpart for memory.
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_ZONE_LEGACY = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_LEGACY = "failure-domain.beta.kubernetes.io/region"

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"


# ---------------------------------------------------------------------------- resources
@dataclass
class Resource:
    """Amounts of resources: ``milli_cpu`` (millicores), ``memory`` and
    ``ephemeral_storage`` (bytes), ``scalar`` (other resources, e.g. ``nvidia.com/gpu``,
    in whole units rounded up)."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, resources: Mapping[str, Any] | None) -> Resource:
        """Parse a ``ResourceList`` (``{"cpu": "500m", "memory": "1Gi", ...}``); ``pods`` is skipped.

        Raises:
            ValueError: for a quantity that does not parse (see :mod:`minik8s.api.quantity`).
        """
        out = cls()
        for name, value in (resources or {}).items():
            if name == CPU:
                out.milli_cpu = parse_millicpu(value)
            elif name == MEMORY:
                out.memory = parse_memory(value)
            elif name == EPHEMERAL_STORAGE:
                out.ephemeral_storage = parse_memory(value)
            elif name != PODS:
                out.scalar[name] = int(math.ceil(parse_quantity(value)))
        return out

    def get(self, name: str) -> int:
        """The amount of resource ``name`` (cpu in millicores, memory in bytes)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        return self.scalar.get(name, 0)

    def items(self) -> Iterable[tuple[str, int]]:
        """Every resource with a non-zero amount, as ``(name, amount)``."""
        for name, amount in ((CPU, self.milli_cpu), (MEMORY, self.memory),
                             (EPHEMERAL_STORAGE, self.ephemeral_storage), *self.scalar.items()):
            if amount:
                yield name, amount

    def add(self, other: Resource) -> None:
        """Add ``other`` into this one (in place)."""
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        for name, amount in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + amount

    def sub(self, other: Resource) -> None:
        """Subtract ``other`` from this one (in place)."""
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        for name, amount in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) - amount

    def set_max(self, other: Resource) -> None:
        """Raise every amount to at least ``other``'s (in place)."""
        self.milli_cpu = max(self.milli_cpu, other.milli_cpu)
        self.memory = max(self.memory, other.memory)
        self.ephemeral_storage = max(self.ephemeral_storage, other.ephemeral_storage)
        for name, amount in other.scalar.items():
            self.scalar[name] = max(self.scalar.get(name, 0), amount)


def pod_requests(spec: Mapping[str, Any]) -> tuple[Resource, Resource]:
    """A pod's effective requests and its non-zero requests (Kubernetes ``PodRequests``).

    Effective: the sum over ``containers``, raised to each init container's requests (init
    containers run one at a time before the others, so they count as ``max``), plus
    ``spec.overhead``. Non-zero: the same, but a container without a cpu / memory
    request counts as :data:`DEFAULT_MILLI_CPU_REQUEST` / :data:`DEFAULT_MEMORY_REQUEST`
    (only scoring uses it).

    Raises:
        ValueError: for a request quantity that does not parse.
    """
    total, non_zero = Resource(), Resource()
    for container in spec.get("containers") or []:
        req = Resource.from_list((container.get("resources") or {}).get("requests"))
        total.add(req)
        non_zero.add(_non_zero(req))
    for container in spec.get("initContainers") or []:
        req = Resource.from_list((container.get("resources") or {}).get("requests"))
        total.set_max(req)
        non_zero.set_max(_non_zero(req))
    overhead = spec.get("overhead")
    if overhead:
        extra = Resource.from_list(overhead)
        total.add(extra)
        non_zero.add(extra)
    return total, non_zero


def _non_zero(req: Resource) -> Resource:
    return Resource(milli_cpu=req.milli_cpu or DEFAULT_MILLI_CPU_REQUEST,
                    memory=req.memory or DEFAULT_MEMORY_REQUEST)


# ---------------------------------------------------------------------------- pods
#: namespace name -> that namespace's labels ({} for one not known), for ``namespaceSelector``
NamespaceLabels = Callable[[str], Mapping[str, str]]


def no_namespace_labels(namespace: str) -> Mapping[str, str]:
    """The :data:`NamespaceLabels` of a snapshot that knows no namespaces: every one unlabelled."""
    return {}


@dataclass(frozen=True)
class AffinityTerm:
    """One parsed ``PodAffinityTerm``: pods whose labels match ``selector`` and whose namespace is
    one of ``namespaces`` or has labels matching ``namespace_selector``, counted per value of the
    node label ``topology_key`` (Kubernetes' ``framework.AffinityTerm``).

    ``namespaces`` and ``namespaceSelector`` both absent in the API mean "the namespace of the pod
    that owns the term"; that is resolved here. A ``namespaceSelector`` of ``{}`` selects every
    namespace; an absent one none (beyond ``namespaces``). A missing ``labelSelector`` matches no
    pod. ``matchLabelKeys`` / ``mismatchLabelKeys`` are not read here: the apiserver merged them
    into ``labelSelector`` when the pod was created, as Kubernetes 1.32 does
    (:mod:`minik8s.apiserver.strategies.podscheduling`).
    """

    namespaces: frozenset[str]
    selector: LabelSelector
    topology_key: str
    weight: int = 0
    namespace_selector: LabelSelector = field(default_factory=LabelSelector.nothing)

    def matches(self, pod: PodInfo, namespace_labels: NamespaceLabels = no_namespace_labels) -> bool:
        """Whether ``pod`` is one of the pods this term is about; ``namespace_labels`` gives the
        labels of the pod's namespace for the ``namespaceSelector``."""
        if pod.namespace not in self.namespaces and (
                self.namespace_selector.matches_nothing()
                or not self.namespace_selector.matches(namespace_labels(pod.namespace))):
            return False
        return self.selector.matches(pod.labels)


def _affinity_terms(raw: Any, namespace: str, weighted: bool) -> list[AffinityTerm]:
    """Parse a list of (weighted) ``PodAffinityTerm``; raises ValueError for a bad selector."""
    terms: list[AffinityTerm] = []
    for item in raw or []:
        weight = 0
        term = item
        if weighted:
            weight = int(item.get("weight") or 0)
            term = item.get("podAffinityTerm") or {}
        namespaces = frozenset(term.get("namespaces") or ())
        if not namespaces and term.get("namespaceSelector") is None:
            namespaces = frozenset((namespace,))
        selector = LabelSelector.from_dict(term.get("labelSelector"))
        ns_selector = LabelSelector.from_dict(term.get("namespaceSelector"))
        terms.append(AffinityTerm(namespaces, selector, term.get("topologyKey") or "", weight, ns_selector))
    return terms


@dataclass(frozen=True)
class HostPort:
    """A host port a pod asks for: ``ip`` (``0.0.0.0`` = every address), ``protocol``, ``port``."""

    ip: str
    protocol: str
    port: int


WILDCARD_IP = "0.0.0.0"


def pod_host_ports(spec: Mapping[str, Any]) -> list[HostPort]:
    """The ``hostPort`` > 0 entries of the pod's containers (protocol defaults to TCP,
    ``hostIP`` to ``0.0.0.0``)."""
    ports: list[HostPort] = []
    for container in spec.get("containers") or []:
        for p in container.get("ports") or []:
            host_port = p.get("hostPort") or 0
            if int(host_port) <= 0:
                continue
            ports.append(HostPort(p.get("hostIP") or WILDCARD_IP, p.get("protocol") or "TCP", int(host_port)))
    return ports


def normalize_image(name: str) -> str:
    """The full reference of an image name the way container runtimes report it:
    ``busybox`` -> ``docker.io/library/busybox:latest``, ``me/app:1`` -> ``docker.io/me/app:1``."""
    if "@" not in name and ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    first, _, rest = name.partition("/")
    if not rest:
        return f"docker.io/library/{name}"
    if "." not in first and ":" not in first and first != "localhost":
        return f"docker.io/{name}"
    return name


class PodInfo:
    """A pod (wire-form dict) and what the plugins read from it, parsed once.

    ``errors`` collects parse failures (a bad quantity or label selector). For the pod
    being scheduled they fail the cycle with an error; for pods already on nodes the
    broken part counts as empty.
    """

    __slots__ = ("pod", "name", "namespace", "uid", "key", "labels", "node_name", "terminating",
                 "priority", "requests", "non_zero_requests", "host_ports", "tolerations",
                 "required_affinity", "required_anti_affinity", "preferred_affinity",
                 "preferred_anti_affinity", "controller_uid", "images", "errors")

    def __init__(self, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.pod = pod
        self.name: str = meta.get("name") or ""
        self.namespace: str = meta.get("namespace") or "default"
        self.uid: str = meta.get("uid") or ""
        self.key = f"{self.namespace}/{self.name}"
        self.labels: dict[str, str] = dict(meta.get("labels") or {})
        self.node_name: str = spec.get("nodeName") or ""
        self.terminating = bool(meta.get("deletionTimestamp"))
        self.priority = int(spec.get("priority") or 0)
        self.errors: list[str] = []
        try:
            self.requests, self.non_zero_requests = pod_requests(spec)
        except ValueError as exc:
            self.errors.append(f"invalid resource request: {exc}")
            self.requests, self.non_zero_requests = Resource(), _non_zero(Resource())
        self.host_ports = pod_host_ports(spec)
        self.tolerations: list[Obj] = list(spec.get("tolerations") or [])
        affinity = spec.get("affinity") or {}
        pod_affinity = affinity.get("podAffinity") or {}
        anti_affinity = affinity.get("podAntiAffinity") or {}
        req, pref = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"
        self.required_affinity: list[AffinityTerm] = []
        self.required_anti_affinity: list[AffinityTerm] = []
        self.preferred_affinity: list[AffinityTerm] = []
        self.preferred_anti_affinity: list[AffinityTerm] = []
        try:
            self.required_affinity = _affinity_terms(pod_affinity.get(req), self.namespace, False)
            self.required_anti_affinity = _affinity_terms(anti_affinity.get(req), self.namespace, False)
            self.preferred_affinity = _affinity_terms(pod_affinity.get(pref), self.namespace, True)
            self.preferred_anti_affinity = _affinity_terms(anti_affinity.get(pref), self.namespace, True)
        except (ValueError, AttributeError, TypeError) as exc:
            self.errors.append(f"invalid pod affinity: {exc}")
        self.controller_uid: str = next(
            (ref.get("uid") or "" for ref in meta.get("ownerReferences") or [] if ref.get("controller")), "")
        self.images = [normalize_image(c["image"]) for c in spec.get("containers") or [] if c.get("image")]

    @property
    def has_affinity(self) -> bool:
        """Whether the pod has any pod affinity or anti-affinity term (required or preferred)."""
        return bool(self.required_affinity or self.required_anti_affinity or self.preferred_affinity
                    or self.preferred_anti_affinity)

    def __repr__(self) -> str:
        return f"PodInfo({self.key}, node={self.node_name or '-'})"


# ---------------------------------------------------------------------------- nodes
def node_condition(node: Obj, kind: str) -> str | None:
    """The ``status`` (``True``/``False``/``Unknown``) of the node's condition ``kind``, or None."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return str(cond.get("status"))
    return None


class NodeInfo:
    """A node and the pods on it (bound and assumed), with running sums.

    ``requested`` sums the pods' effective requests, ``non_zero_requested`` their scoring
    requests; ``allocatable`` is ``status.allocatable`` (``status.capacity`` when a node
    reports no allocatable); ``allowed_pods`` is allocatable ``pods`` (None when the node does
    not say, which minik8s reads as "no limit"). ``node`` is None while only pods name the
    node (their node object has not been seen yet); such entries are left out of snapshots.
    """

    def __init__(self, node: Obj | None = None, name: str = "") -> None:
        self.node: Obj | None = None
        self.name = name
        self.labels: dict[str, str] = {}
        self.taints: list[Obj] = []
        self.allocatable = Resource()
        self.allowed_pods: int | None = None
        self.alloc_errors: list[str] = []
        self.pods: dict[str, PodInfo] = {}
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.used_ports: Counter[HostPort] = Counter()
        self.pods_with_affinity = 0
        self.pods_with_required_anti_affinity = 0
        self.images: dict[str, int] = {}
        #: read from the node object once per change, not once per scheduling cycle
        self.ready: str | None = None  # the Ready condition's status
        self.unschedulable = False  # spec.unschedulable
        self.zone = ""  # "region:zone" from the topology labels ("" without them)
        if node is not None:
            self.set_node(node)

    def set_node(self, node: Obj) -> None:
        """Replace the node object (labels, taints, allocatable) keeping the pods."""
        self.node = node
        meta = node.get("metadata") or {}
        status = node.get("status") or {}
        self.name = meta.get("name") or self.name
        self.labels = dict(meta.get("labels") or {})
        self.taints = list((node.get("spec") or {}).get("taints") or [])
        self.ready = node_condition(node, "Ready")
        self.unschedulable = bool((node.get("spec") or {}).get("unschedulable"))
        zone = self.labels.get(LABEL_ZONE) or self.labels.get(LABEL_ZONE_LEGACY) or ""
        region = self.labels.get(LABEL_REGION) or self.labels.get(LABEL_REGION_LEGACY) or ""
        self.zone = f"{region}:{zone}" if zone or region else ""
        alloc = status.get("allocatable") or status.get("capacity") or {}
        self.alloc_errors = []
        try:
            self.allocatable = Resource.from_list(alloc)
        except ValueError as exc:
            self.alloc_errors.append(f"invalid allocatable: {exc}")
            self.allocatable = Resource()
        try:
            self.allowed_pods = int(parse_quantity(alloc[PODS])) if PODS in alloc else None
        except ValueError:
            self.allowed_pods = None
        self.images = {}
        for image in status.get("images") or []:
            size = int(image.get("sizeBytes") or 0)
            for name in image.get("names") or []:
                self.images[normalize_image(name)] = size

    def add_pod(self, pod: PodInfo) -> None:
        """Account for ``pod`` on this node (replacing an entry with the same key)."""
        if pod.key in self.pods:
            self.remove_pod(pod.key)
        self.pods[pod.key] = pod
        self.requested.add(pod.requests)
        self.non_zero_requested.add(pod.non_zero_requests)
        for port in pod.host_ports:
            self.used_ports[port] += 1
        if pod.has_affinity:
            self.pods_with_affinity += 1
        if pod.required_anti_affinity:
            self.pods_with_required_anti_affinity += 1

    def remove_pod(self, key: str) -> PodInfo | None:
        """Stop accounting for the pod ``namespace/name``; returns it, or None if absent."""
        pod = self.pods.pop(key, None)
        if pod is None:
            return None
        self.requested.sub(pod.requests)
        self.non_zero_requested.sub(pod.non_zero_requests)
        for port in pod.host_ports:
            self.used_ports[port] -= 1
            if self.used_ports[port] <= 0:
                del self.used_ports[port]
        if pod.has_affinity:
            self.pods_with_affinity -= 1
        if pod.required_anti_affinity:
            self.pods_with_required_anti_affinity -= 1
        return pod

    def clone(self) -> NodeInfo:
        """A copy whose pods and sums can change without touching this one (preemption's dry runs);
        the node object and the PodInfos themselves are shared."""
        other = NodeInfo.__new__(NodeInfo)
        other.__dict__.update(self.__dict__)
        other.pods = dict(self.pods)
        other.requested = Resource(self.requested.milli_cpu, self.requested.memory,
                                   self.requested.ephemeral_storage, dict(self.requested.scalar))
        other.non_zero_requested = Resource(self.non_zero_requested.milli_cpu, self.non_zero_requested.memory,
                                            self.non_zero_requested.ephemeral_storage,
                                            dict(self.non_zero_requested.scalar))
        other.used_ports = Counter(self.used_ports)
        return other

    def port_conflicts(self, wanted: Iterable[HostPort]) -> bool:
        """Whether any of ``wanted`` collides with a used host port (Kubernetes ``HostPortInfo``
        semantics: same protocol and port, and the same IP or either side is ``0.0.0.0``)."""
        if not self.used_ports:
            return False
        for want in wanted:
            for used in self.used_ports:
                if used.port == want.port and used.protocol == want.protocol and (
                        used.ip == want.ip or WILDCARD_IP in (used.ip, want.ip)):
                    return True
        return False

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


@dataclass(frozen=True)
class StorageObjects:
    """Read access to the scheduler's caches of claims, volumes and classes (the VolumeBinding
    plugin's listers): ``claim(namespace, name)``, ``volume(name)``, ``storage_class(name)`` and
    ``volumes()``; None / empty for what is not known."""

    claim: Callable[[str, str], Obj | None]
    volume: Callable[[str], Obj | None]
    storage_class: Callable[[str], Obj | None]
    volumes: Callable[[], list[Obj]]


class Snapshot:
    """The nodes one scheduling cycle considers (node objects known, sorted by name).

    ``storage`` (set by the scheduler) reads claims, volumes and classes; None when the
    scheduler does not watch them (tests), which the VolumeBinding plugin treats as "no claims
    to check".

    The scheduler's cache hands out one (kept until a node is added or removed) at the start of
    a synchronous cycle, and the NodeInfo objects are shared, not copied: what a snapshot says
    of the nodes is valid only until the cache changes. :meth:`build` makes one from plain node
    and pod dicts (tests, tools).
    """

    def __init__(self, node_infos: Iterable[NodeInfo]) -> None:
        self.nodes: list[NodeInfo] = sorted((n for n in node_infos if n.node is not None), key=lambda n: n.name)
        self.by_name: dict[str, NodeInfo] = {n.name: n for n in self.nodes}
        self.storage: StorageObjects | None = None
        #: the PodDisruptionBudgets preemption weighs (wire-form dicts; set by the scheduler)
        self.disruption_budgets: list[Obj] = []
        #: node name -> the pending pods nominated to it by a preemption (set by the scheduler): filters
        #: count them there for pods of no higher priority, so the room they wait for stays theirs
        self.nominated: dict[str, list[PodInfo]] = {}
        #: namespace name -> its labels (set by the scheduler from its namespace informer), for the
        #: ``namespaceSelector`` of pod affinity terms
        self.namespace_labels: NamespaceLabels = no_namespace_labels

    def with_node(self, replacement: NodeInfo) -> Snapshot:
        """This snapshot with the node of the same name replaced (preemption's dry runs: a node
        without its victims); the other nodes are shared."""
        other = Snapshot.__new__(Snapshot)
        other.__dict__.update(self.__dict__)
        other.nodes = [replacement if n.name == replacement.name else n for n in self.nodes]
        other.by_name = {**self.by_name, replacement.name: replacement}
        return other

    @classmethod
    def build(cls, nodes: Iterable[Obj], pods: Iterable[Obj] = (), namespaces: Iterable[Obj] = ()) -> Snapshot:
        """A snapshot of ``nodes`` with ``pods`` placed on the node their ``spec.nodeName`` names and
        the labels of the ``namespaces`` (Namespace objects) known."""
        infos = {(n.get("metadata") or {}).get("name") or "": NodeInfo(n) for n in nodes}
        for pod in pods:
            info = PodInfo(pod)
            if info.node_name in infos:
                infos[info.node_name].add_pod(info)
        snapshot = cls(infos.values())
        labels = {(ns.get("metadata") or {}).get("name") or "": dict((ns.get("metadata") or {}).get("labels") or {})
                  for ns in namespaces}
        if labels:
            snapshot.namespace_labels = lambda name: labels.get(name) or {}
        return snapshot

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def with_affinity(self) -> list[NodeInfo]:
        """Nodes running at least one pod with pod (anti-)affinity terms."""
        return [n for n in self.nodes if n.pods_with_affinity]

    def with_required_anti_affinity(self) -> list[NodeInfo]:
        """Nodes running at least one pod with required anti-affinity terms."""
        return [n for n in self.nodes if n.pods_with_required_anti_affinity]

    def __len__(self) -> int:
        return len(self.nodes)
