"""The ``DefaultTolerationSeconds`` admission plugin: every pod tolerates a dead node for a while.

Kubernetes' ``plugin/pkg/admission/defaulttolerationseconds`` (on by default in kube-apiserver):
on a Pod's CREATE and UPDATE (not its subresources) the pod gets

- ``{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute,
  tolerationSeconds: <--default-not-ready-toleration-seconds>}`` unless one of its tolerations
  already has key ``node.kubernetes.io/not-ready`` or no key, with effect ``NoExecute`` or no
  effect (whatever its operator, value or seconds);
- the same for ``node.kubernetes.io/unreachable`` and ``--default-unreachable-toleration-seconds``.

Both default to 300 seconds.  Each is appended after the pod's own tolerations; nothing else is
changed.  The node lifecycle controller's taint-based eviction (:mod:`minik8s.controllers.nodelifecycle`)
then reads only the pod's own tolerations: a pod on a node tainted ``unreachable:NoExecute`` is
deleted ``tolerationSeconds`` after the taint was added.  DaemonSet pods come with these two
tolerations without seconds (:mod:`minik8s.controllers.daemonset`), so the plugin leaves them and
they are never evicted for a dead node.
"""

from __future__ import annotations

from dataclasses import dataclass

from minik8s.api.base import Obj
from minik8s.api.taints import NO_EXECUTE, TAINT_NOT_READY, TAINT_UNREACHABLE

PLUGIN_NAME = "DefaultTolerationSeconds"
#: kube-apiserver's default of both flags (seconds)
DEFAULT_SECONDS = 300


@dataclass(frozen=True)
class DefaultTolerationSeconds:
    """The plugin's settings: ``--default-not-ready-toleration-seconds`` and
    ``--default-unreachable-toleration-seconds`` (seconds, >= 0)."""

    not_ready_seconds: int = DEFAULT_SECONDS
    unreachable_seconds: int = DEFAULT_SECONDS

    def tolerations(self) -> list[tuple[str, Obj]]:
        """``(taint key, toleration)`` for the two tolerations the plugin may add."""
        return [(key, {"key": key, "operator": "Exists", "effect": NO_EXECUTE, "tolerationSeconds": seconds})
                for key, seconds in ((TAINT_NOT_READY, self.not_ready_seconds),
                                     (TAINT_UNREACHABLE, self.unreachable_seconds))]

    def admit(self, pod: Obj) -> bool:
        """Add the missing default tolerations to ``pod`` (changed in place; ``spec.tolerations``
        is created when absent).  Returns whether anything was added."""
        spec = pod.setdefault("spec", {})
        own = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
        added = [toleration for key, toleration in self.tolerations() if not tolerates(own, key)]
        if added:
            spec["tolerations"] = list(spec.get("tolerations") or []) + added
        return bool(added)


def tolerates(tolerations: list[Obj], key: str) -> bool:
    """Whether one of ``tolerations`` already covers taint ``key`` with effect NoExecute, as the
    plugin checks it: the same key or none, effect ``NoExecute`` or none."""
    return any((t.get("key") or "") in (key, "") and (t.get("effect") or "") in (NO_EXECUTE, "")
               for t in tolerations)


__all__ = ["DEFAULT_SECONDS", "PLUGIN_NAME", "DefaultTolerationSeconds", "tolerates"]
