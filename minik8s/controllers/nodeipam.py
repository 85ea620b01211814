"""The node IPAM controller: give every Node a ``spec.podCIDR`` from the cluster CIDR.

Kubernetes' ``pkg/controller/nodeipam`` with the ``RangeAllocator``
(``--allocate-node-cidrs``, ``--cluster-cidr``, ``--node-cidr-mask-size``):

* The cluster CIDR (default 10.244.0.0/16) is cut into subnets of ``/node-cidr-mask-size``
  (default /24: 256 nodes).  A Node without ``spec.podCIDR`` gets the next free subnet
  (round robin from the last one given, as Kubernetes' ``CidrSet`` does, so a just-released
  subnet is not handed out again at once) in ``spec.podCIDR`` and ``spec.podCIDRs``.
* A Node that already has a podCIDR keeps it — a kubelet started with ``--pod-cidr``
  publishes its own, and restarts never move a node.  "Used" is kept from the Node
  informer's events (every Node is seen at start, so it is restart-safe: Kubernetes'
  ``CidrSet`` occupied on add and released on delete) plus the allocations whose write the
  cache has not shown yet; two Nodes never get the same subnet from this controller.  Only a
  Node without a podCIDR, or whose podCIDRs changed, is synced: heartbeats cost nothing.  A
  podCIDR outside the cluster CIDR is kept and only logged; two Nodes already sharing
  one get a ``CIDRAssignmentFailed``-style Warning event (``PodCIDRConflict``).
* Deleting a Node releases its subnet (it leaves the cache).
* The write is a merge patch carrying the Node's resourceVersion, so a concurrent change
  (the kubelet setting its own podCIDR) wins and the Node is looked at again.
* When every subnet is taken: Warning event ``CIDRNotAvailable`` on the Node and a retry
  with back-off.
"""

from __future__ import annotations

import ipaddress

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of

Network = ipaddress.IPv4Network

DEFAULT_CLUSTER_CIDR = "10.244.0.0/16"
DEFAULT_NODE_CIDR_MASK_SIZE = 24


class CIDRRangeFull(Exception):
    """Every subnet of the cluster CIDR is in use."""


class CIDRSet:
    """The subnets of ``cluster_cidr`` with prefix length ``mask_size`` and which are in use.

    Raises ValueError when the CIDR is not IPv4 or the mask is not longer than the
    cluster CIDR's prefix (or leaves fewer than 4 addresses per node), as
    kube-controller-manager refuses to start then.
    """

    def __init__(self, cluster_cidr: str, mask_size: int) -> None:
        net = ipaddress.ip_network(cluster_cidr, strict=False)
        if not isinstance(net, Network):
            raise ValueError(f"--cluster-cidr {cluster_cidr}: only IPv4 is supported")
        if not net.prefixlen < mask_size <= 30:
            raise ValueError(f"--node-cidr-mask-size {mask_size}: must be longer than the cluster CIDR's "
                             f"/{net.prefixlen} and at most 30")
        self.cluster = net
        self.mask_size = mask_size
        self.size = 1 << (mask_size - net.prefixlen)
        self._step = 1 << (32 - mask_size)
        self._next = 0

    def subnet(self, index: int) -> Network:
        """The ``index``-th subnet (0-based)."""
        return ipaddress.IPv4Network((int(self.cluster.network_address) + index * self._step, self.mask_size))

    def index_of(self, cidr: str) -> int | None:
        """The index of ``cidr`` when it is one of this set's subnets exactly, else None."""
        try:
            net = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            return None
        if not isinstance(net, Network) or net.prefixlen != self.mask_size or not net.subnet_of(self.cluster):
            return None
        return (int(net.network_address) - int(self.cluster.network_address)) // self._step

    def overlaps(self, cidr: str) -> bool:
        """Whether ``cidr`` overlaps the cluster CIDR at all."""
        try:
            net = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            return False
        return isinstance(net, Network) and net.overlaps(self.cluster)

    def used_indexes(self, cidrs: list[str]) -> set[int]:
        """Indexes of the subnets ``cidrs`` cover (a larger or unaligned CIDR marks every subnet it touches)."""
        used: set[int] = set()
        for cidr in cidrs:
            index = self.index_of(cidr)
            if index is not None:
                used.add(index)
                continue
            if not self.overlaps(cidr):
                continue
            net = ipaddress.ip_network(cidr, strict=False)
            first = max(int(net.network_address), int(self.cluster.network_address))
            last = min(int(net.broadcast_address), int(self.cluster.broadcast_address))
            base = int(self.cluster.network_address)
            used.update(range((first - base) // self._step, (last - base) // self._step + 1))
        return used

    def allocate(self, used: set[int]) -> Network:
        """The next free subnet after the last one allocated (round robin); raises CIDRRangeFull."""
        for offset in range(self.size):
            index = (self._next + offset) % self.size
            if index not in used:
                self._next = (index + 1) % self.size
                return self.subnet(index)
        raise CIDRRangeFull(f"no remaining /{self.mask_size} in {self.cluster} ({self.size} in use)")


def node_pod_cidrs(node: Obj) -> list[str]:
    """``spec.podCIDRs`` (or ``[spec.podCIDR]``) of a Node; empty when none is set."""
    spec = node.get("spec") or {}
    cidrs = [c for c in spec.get("podCIDRs") or [] if c]
    if not cidrs and spec.get("podCIDR"):
        cidrs = [spec["podCIDR"]]
    return cidrs


class NodeIPAMController(Controller):
    """Allocates ``spec.podCIDR`` to Nodes (keys: node names)."""

    name = "node-ipam-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 cluster_cidr: str = DEFAULT_CLUSTER_CIDR,
                 node_cidr_mask_size: int = DEFAULT_NODE_CIDR_MASK_SIZE) -> None:
        super().__init__(client, factory, recorder)
        self.cidrs = CIDRSet(cluster_cidr, node_cidr_mask_size)
        self.node_rt = client.kind("v1", "Node")
        self.nodes = factory.informer(self.node_rt)
        #: node name -> subnet written but not yet seen in the cache
        self.pending: dict[str, str] = {}
        #: node name -> its podCIDRs and the subnet indexes they cover, as the cache shows them
        self._node_cidrs: dict[str, tuple[tuple[str, ...], frozenset[int]]] = {}
        #: subnet index -> the Nodes whose podCIDRs cover it
        self._owners: dict[int, set[str]] = {}
        self._warned: set[tuple[str, str]] = set()
        self.nodes.add_handler(self._on_node, lambda _old, cur: self._on_node(cur), self._on_delete)

    def _on_node(self, node: Obj) -> None:
        name = object_key(node)
        cidrs = tuple(node_pod_cidrs(node))
        known = self._node_cidrs.get(name)
        if known is not None and known[0] == cidrs:
            return  # a status or heartbeat change: nothing to allocate or check
        self._forget(name)
        if cidrs:
            indexes = frozenset(self.cidrs.used_indexes(list(cidrs)))
            self._node_cidrs[name] = (cidrs, indexes)
            for index in indexes:
                self._owners.setdefault(index, set()).add(name)
        self.enqueue(name)

    def _on_delete(self, node: Obj) -> None:
        name = object_key(node)
        self._forget(name)  # its subnet is free again
        self.pending.pop(name, None)

    def _forget(self, name: str) -> None:
        _, indexes = self._node_cidrs.pop(name, ((), frozenset()))
        for index in indexes:
            owners = self._owners.get(index)
            if owners is not None:
                owners.discard(name)
                if not owners:
                    del self._owners[index]

    def used(self, except_node: str | None = None) -> set[int]:
        """Subnet indexes in use: every cached Node's podCIDRs plus pending allocations."""
        used = {index for index, owners in self._owners.items() if owners != {except_node}}
        return used | self.cidrs.used_indexes([c for n, c in self.pending.items() if n != except_node])

    async def sync(self, key: str) -> None:
        """Give Node ``key`` a podCIDR unless it has one; raise to be retried."""
        node = self.nodes.get(key)
        if node is None:
            self.pending.pop(key, None)
            return
        current = node_pod_cidrs(node)
        if current:
            self.pending.pop(key, None)
            self._check_existing(node, current)
            return
        if key in self.pending:
            return  # written; the cache will show it (a 409 on a stale write re-queues the key)
        try:
            subnet = str(self.cidrs.allocate(self.used(except_node=key)))
        except CIDRRangeFull as exc:
            self.event(node, "Warning", "CIDRNotAvailable", f"Node {key} status is now: CIDRNotAvailable ({exc})")
            raise
        self.pending[key] = subnet
        patch = {"metadata": {"resourceVersion": meta_of(node).get("resourceVersion")},
                 "spec": {"podCIDR": subnet, "podCIDRs": [subnet]}}
        try:
            await self.client.patch(self.node_rt, key, patch)
        except errors.NotFound:
            self.pending.pop(key, None)
            return
        except BaseException:
            self.pending.pop(key, None)
            raise
        self.log.info("node %s podCIDR %s allocated", key, subnet)
        self.event(node, "Normal", "CIDRAssigned", f"Node {key} was assigned podCIDR {subnet}")

    def _check_existing(self, node: Obj, cidrs: list[str]) -> None:
        """Log podCIDRs outside the cluster CIDR; warn when another Node holds the same subnet."""
        name = meta_of(node).get("name")
        for cidr in cidrs:
            if self.cidrs.index_of(cidr) is None:
                self.log.info("node %s keeps podCIDR %s (not a /%d of %s)", name, cidr, self.cidrs.mask_size,
                              self.cidrs.cluster)
        mine = self._node_cidrs.get(str(name), ((), frozenset()))[1]
        others = sorted({other for index in mine for other in self._owners.get(index, ()) if other != name})
        for other_name in others:
            pair = (str(name), other_name)
            other = self.nodes.get(other_name)
            if other is not None and pair not in self._warned:
                self._warned.add(pair)
                self.event(node, "Warning", "PodCIDRConflict",
                           f"Node {name} podCIDR {','.join(cidrs)} overlaps node {other_name}'s "
                           f"{','.join(node_pod_cidrs(other))}")
