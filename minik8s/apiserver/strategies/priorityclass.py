"""scheduling.k8s.io/v1 PriorityClass: defaults and validation (``pkg/registry/scheduling/priorityclass``,
``pkg/apis/scheduling/validation``).

- ``preemptionPolicy`` defaults to ``PreemptLowerPriority`` (``SetDefaults_PriorityClass``);
- a name starting ``system-`` must be one of the built-in system classes, with its value and
  ``globalDefault: false``; any other class's ``value`` is at most 1,000,000,000;
- ``value`` and ``preemptionPolicy`` never change in an update.

That only one class is ``globalDefault`` is the Priority admission plugin's rule
(:mod:`minik8s.apiserver.priority`), not validation's.
"""

from __future__ import annotations

from minik8s.api import scheduling as s
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, unsupported


def preemption_policy_errors(policy: object, path: str) -> list[Cause]:
    """``ValidatePreemptionPolicy``: ``PreemptLowerPriority`` or ``Never`` (empty: Required)."""
    if policy is None or policy in s.PREEMPTION_POLICIES:
        return []
    if policy == "":
        return [(path, None, REQUIRED)]
    return [(path, None, unsupported(policy, s.PREEMPTION_POLICIES))]


class PriorityClassStrategy(Strategy):
    """PriorityClass: as in the module docstring."""

    namespace_scoped = False

    def default(self, obj: Obj) -> None:
        obj.setdefault("preemptionPolicy", s.PREEMPT_LOWER_PRIORITY)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        name = (obj.get("metadata") or {}).get("name") or ""
        value = obj.get("value")
        if name.startswith(s.SYSTEM_PRIORITY_CLASS_PREFIX):
            error = s.known_system_class_error(name, value, bool(obj.get("globalDefault")))
            if error:
                causes.append(("metadata.name", None,
                               f"Forbidden: priority class names with '{s.SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are "
                               f"reserved for system use only. error: {error}"))
        elif isinstance(value, int) and value > s.HIGHEST_USER_DEFINABLE_PRIORITY:
            causes.append(("value", None, "Forbidden: maximum allowed value of a user defined priority is "
                                          f"{s.HIGHEST_USER_DEFINABLE_PRIORITY}"))
        causes += preemption_policy_errors(obj.get("preemptionPolicy"), "preemptionPolicy")
        if old is not None:
            if value != old.get("value"):
                causes.append(("value", None, "Forbidden: may not be changed in an update."))
            if obj.get("preemptionPolicy") != old.get("preemptionPolicy"):
                causes.append(("preemptionPolicy", obj.get("preemptionPolicy"), "field is immutable"))
        return causes
