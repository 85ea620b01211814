"""The scheduler cache: nodes and the pods on them, including *assumed* pods.

Kubernetes' ``internal/cache``: when a cycle picks a node, the pod is *assumed* onto it
at once (its requests, ports and labels count there) while the binding goes out in the
background; the next cycle therefore sees the room as taken even before the binding's
watch event arrives. The watch event *confirms* the pod (the real object replaces the
assumed one, on whatever node it actually got). A failed binding *forgets* the assumed
pod. An assumed pod whose binding succeeded but whose confirmation never arrives
expires ``assumed_ttl`` seconds later (a safety net for a lost event).

Pods that ended (``Succeeded`` / ``Failed``) hold nothing and are not kept. Pods may name
a node the cache has not seen yet; they are kept on a placeholder that snapshots leave
out until the node appears.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

from minik8s.api.base import Obj
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo, Snapshot

DEFAULT_ASSUMED_TTL = 30.0


def pod_terminal(pod: Obj) -> bool:
    """Whether the pod has finished (phase ``Succeeded`` or ``Failed``)."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


@dataclass
class _PodState:
    info: PodInfo
    node: str
    assumed: bool
    deadline: float | None = None  # set once an assumed pod's binding finished


class SchedulerCache:
    """Nodes (as :class:`NodeInfo`) and the bound and assumed pods on them.

    All methods are synchronous and cheap; the scheduler calls them from informer
    handlers and its scheduling loop on one event loop.
    """

    def __init__(self, assumed_ttl: float = DEFAULT_ASSUMED_TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.assumed_ttl = assumed_ttl
        self.clock = clock
        self._nodes: dict[str, NodeInfo] = {}
        self._pods: dict[str, _PodState] = {}
        #: the snapshot of the known nodes, kept until a node is added or removed (None: to be built)
        self._snapshot: Snapshot | None = None

    # ------------------------------------------------------------------ nodes
    def add_node(self, node: Obj) -> None:
        name = (node.get("metadata") or {}).get("name") or ""
        info = self._nodes.get(name)
        if info is None:
            self._nodes[name] = NodeInfo(node)
            self._snapshot = None
        else:
            if info.node is None:  # a placeholder becomes a known node
                self._snapshot = None
            info.set_node(node)

    update_node = add_node

    def remove_node(self, node: Obj) -> None:
        """Drop the node; pods still bound to it stay on a placeholder until they go."""
        name = (node.get("metadata") or {}).get("name") or ""
        info = self._nodes.get(name)
        if info is None:
            return
        self._snapshot = None
        if info.pods:
            self._nodes[name] = placeholder = NodeInfo(name=name)
            for pod in info.pods.values():
                placeholder.add_pod(pod)
        else:
            del self._nodes[name]

    def node_names(self) -> list[str]:
        return sorted(name for name, info in self._nodes.items() if info.node is not None)

    def node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    # ------------------------------------------------------------------ pods
    def _place(self, info: PodInfo, node: str) -> None:
        target = self._nodes.get(node)
        if target is None:
            target = self._nodes[node] = NodeInfo(name=node)
        target.add_pod(info)

    def _unplace(self, key: str, node: str) -> None:
        target = self._nodes.get(node)
        if target is None:
            return
        target.remove_pod(key)
        if target.node is None and not target.pods:
            del self._nodes[node]

    def assume_pod(self, pod: PodInfo, node: str) -> PodInfo:
        """Count ``pod`` on ``node`` before its binding is confirmed; returns the assumed
        PodInfo (a copy of the pod with ``spec.nodeName`` set).

        Raises:
            ValueError: when the pod is in the cache already.
        """
        if pod.key in self._pods:
            raise ValueError(f"pod {pod.key} is already in the scheduler cache")
        obj = copy.copy(pod.pod)
        obj["spec"] = {**(pod.pod.get("spec") or {}), "nodeName": node}
        assumed = PodInfo(obj)
        self._pods[pod.key] = _PodState(assumed, node, True)
        self._place(assumed, node)
        return assumed

    def finish_binding(self, key: str) -> None:
        """The binding call succeeded: start the assumed pod's expiry clock."""
        state = self._pods.get(key)
        if state is not None and state.assumed:
            state.deadline = self.clock() + self.assumed_ttl

    def forget_pod(self, key: str) -> None:
        """The binding failed: stop counting the assumed pod (a confirmed pod is kept)."""
        state = self._pods.get(key)
        if state is not None and state.assumed:
            del self._pods[key]
            self._unplace(key, state.node)

    def is_assumed(self, key: str) -> bool:
        state = self._pods.get(key)
        return state is not None and state.assumed

    def add_pod(self, pod: Obj) -> None:
        """A bound pod was seen (added or changed): account for it on its node, confirming
        an assumed pod. Finished pods are removed instead."""
        info = PodInfo(pod)
        if not info.node_name:
            return
        if pod_terminal(pod):
            self.remove_pod(pod)
            return
        old = self._pods.get(info.key)
        if old is not None:
            self._unplace(info.key, old.node)
        self._pods[info.key] = _PodState(info, info.node_name, False)
        self._place(info, info.node_name)

    update_pod = add_pod

    def remove_pod(self, pod: Obj) -> None:
        """The pod is gone (or finished): stop counting it wherever it was."""
        key = PodInfo(pod).key
        state = self._pods.pop(key, None)
        if state is not None:
            self._unplace(key, state.node)

    def has_pod(self, key: str) -> bool:
        return key in self._pods

    def cleanup_expired(self) -> list[str]:
        """Forget assumed pods whose binding finished ``assumed_ttl`` seconds ago without a
        confirming watch event; returns their keys."""
        now = self.clock()
        expired = [key for key, s in self._pods.items()
                   if s.assumed and s.deadline is not None and s.deadline <= now]
        for key in expired:
            self.forget_pod(key)
        return expired

    # ------------------------------------------------------------------ snapshot
    def snapshot(self) -> Snapshot:
        """The nodes as they are now (shared NodeInfo objects; valid until the cache changes); the
        same Snapshot until a node is added or removed."""
        if self._snapshot is None:
            self._snapshot = Snapshot(self._nodes.values())
        return self._snapshot

    def counts(self) -> dict[str, int]:
        """``{"nodes": n, "pods": n, "assumed": n}``."""
        return {"nodes": len(self.node_names()), "pods": len(self._pods),
                "assumed": sum(1 for s in self._pods.values() if s.assumed)}
