"""apps/v1 DaemonSet: defaults and validation (Kubernetes' ``pkg/registry/apps/daemonset/strategy.go``).

Defaults (``SetDefaults_DaemonSet``): ``updateStrategy.type: RollingUpdate`` with
``rollingUpdate.maxUnavailable: 1`` and ``maxSurge: 0``, ``revisionHistoryLimit: 10``,
``minReadySeconds: 0``, the pod template's defaults, and an empty ``status`` (its four required
counters at 0).  The ``deprecated.daemonset.template.generation`` annotation starts at 1 and
grows whenever the template changes, as kube-apiserver keeps it.

Validation (``ValidateDaemonSet`` / ``ValidateDaemonSetUpdate``): a non-empty selector that
matches the template's labels (``spec.selector`` is immutable), a valid pod template whose
``restartPolicy`` is ``Always`` and without ``activeDeadlineSeconds``, non-negative
``minReadySeconds`` and ``revisionHistoryLimit``, ``updateStrategy.type`` ``RollingUpdate`` or
``OnDelete``, and for RollingUpdate exactly one of ``maxUnavailable`` / ``maxSurge`` non-zero, each
a non-negative integer or a percentage of at most 100 %.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, int_or_percent_errors, unsupported
from minik8s.apiserver.strategies.pod import default_pod_spec
from minik8s.apiserver.strategies.replicaset import ReplicaSetStrategy, validate_workload_spec

#: The annotation kube-apiserver keeps equal to the DaemonSet's template generation.
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
UPDATE_STRATEGY_TYPES = ("OnDelete", "RollingUpdate")
_PERCENT = re.compile(r"[0-9]+%")


def _int_or_percent_value(value: Any) -> int:
    """The number an IntOrString stands for (``"25%"`` → 25; unparsable → 0)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _PERCENT.fullmatch(value):
        return int(value[:-1])
    return 0


def validate_update_strategy(strategy: Obj, path: str = "spec.updateStrategy") -> list[Cause]:
    """``ValidateDaemonSetUpdateStrategy`` and ``ValidateRollingUpdateDaemonSet``."""
    kind = strategy.get("type")
    if not kind:
        return [(f"{path}.type", None, REQUIRED)]
    if kind not in UPDATE_STRATEGY_TYPES:
        return [(f"{path}.type", kind, unsupported(kind, UPDATE_STRATEGY_TYPES))]
    if kind != "RollingUpdate":
        return []
    ru = strategy.get("rollingUpdate")
    if not isinstance(ru, dict):
        return [(f"{path}.rollingUpdate", None, REQUIRED)]
    causes: list[Cause] = []
    causes += int_or_percent_errors(ru.get("maxUnavailable"), f"{path}.rollingUpdate.maxUnavailable")
    causes += int_or_percent_errors(ru.get("maxSurge"), f"{path}.rollingUpdate.maxSurge")
    has_unavailable = _int_or_percent_value(ru.get("maxUnavailable")) != 0
    has_surge = _int_or_percent_value(ru.get("maxSurge")) != 0
    if has_unavailable and has_surge:
        causes.append((f"{path}.rollingUpdate.maxSurge", ru.get("maxSurge"),
                       "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        causes.append((f"{path}.rollingUpdate.maxUnavailable", None,
                       "Required value: cannot be 0 when maxSurge is 0"))
    return causes


class DaemonSetStrategy(ReplicaSetStrategy):
    """apps/v1 DaemonSet (see the module docstring for the rules)."""

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        status = obj.setdefault("status", {})
        for counter in ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady"):
            status.setdefault(counter, 0)
        strategy = spec.setdefault("updateStrategy", {})
        if isinstance(strategy, dict):
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                ru = strategy.setdefault("rollingUpdate", {})
                if isinstance(ru, dict):
                    ru.setdefault("maxUnavailable", 1)
                    ru.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("minReadySeconds", 0)
        template = spec.get("template")
        if isinstance(template, dict):
            default_pod_spec(template.setdefault("spec", {}))

    def prepare_for_create(self, obj: Obj) -> None:
        """Status starts empty; the template generation annotation at 1."""
        obj["status"] = {}
        meta = obj.setdefault("metadata", {})
        annotations = meta.get("annotations") or {}
        annotations[TEMPLATE_GENERATION_ANNOTATION] = "1"
        meta["annotations"] = annotations

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """Status kept; the template generation annotation grows when the template changed."""
        super().prepare_for_update(new, old)
        old_ann = (old.get("metadata") or {}).get("annotations") or {}
        try:
            generation = int(old_ann.get(TEMPLATE_GENERATION_ANNOTATION) or 1)
        except ValueError:
            generation = 1
        defaulted = copy.deepcopy(new)
        self.default(defaulted)  # compare templates as they will be stored
        if (defaulted.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
            generation += 1
        meta = new.setdefault("metadata", {})
        annotations = dict(meta.get("annotations") or {})
        annotations[TEMPLATE_GENERATION_ANNOTATION] = str(generation)
        meta["annotations"] = annotations

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        selector = spec.get("selector")
        if isinstance(selector, dict) and not (selector.get("matchLabels") or selector.get("matchExpressions")):
            causes.append(("spec.selector", selector, "empty selector is invalid for daemonset"))
        else:
            causes += validate_workload_spec({k: v for k, v in spec.items() if k != "replicas"},
                                             template_required=True)
        template_spec = (spec.get("template") or {}).get("spec") or {}
        policy = template_spec.get("restartPolicy")
        if policy is not None and policy != "Always":
            causes.append(("spec.template.spec.restartPolicy", policy, unsupported(policy, ("Always",))))
        if template_spec.get("activeDeadlineSeconds") is not None:
            causes.append(("spec.template.spec.activeDeadlineSeconds", template_spec.get("activeDeadlineSeconds"),
                           "Forbidden: activeDeadlineSeconds in DaemonSet is not Supported"))
        for fld in ("minReadySeconds", "revisionHistoryLimit"):
            value = spec.get(fld)
            if isinstance(value, int) and not isinstance(value, bool) and value < 0:
                causes.append((f"spec.{fld}", value, "must be greater than or equal to 0"))
        strategy = spec.get("updateStrategy")
        if isinstance(strategy, dict):
            causes += validate_update_strategy(strategy)
        if old is not None:
            old_selector = (old.get("spec") or {}).get("selector")
            if selector != old_selector:
                causes.append(("spec.selector", selector, "field is immutable"))
        return causes
