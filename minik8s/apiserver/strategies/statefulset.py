"""apps/v1 StatefulSet: defaults and validation (Kubernetes' ``pkg/registry/apps/statefulset/strategy.go``).

Defaults (``SetDefaults_StatefulSet``): ``replicas: 1``, ``podManagementPolicy: OrderedReady``,
``updateStrategy.type: RollingUpdate`` with ``rollingUpdate.partition: 0``, ``revisionHistoryLimit:
10``, ``persistentVolumeClaimRetentionPolicy`` ``whenDeleted`` / ``whenScaled`` ``Retain``, the pod
template's defaults, and a status with ``replicas`` and ``availableReplicas`` at 0.

Validation (``ValidateStatefulSet`` / ``ValidateStatefulSetUpdate``): a non-empty selector that
matches the template's labels, a valid pod template (the claims of ``volumeClaimTemplates`` count
as its volumes) whose ``restartPolicy`` is ``Always`` and without ``activeDeadlineSeconds``;
``podManagementPolicy`` ``OrderedReady`` or ``Parallel``; ``updateStrategy.type`` ``RollingUpdate``
or ``OnDelete`` (``rollingUpdate`` only with ``RollingUpdate``; ``partition`` >= 0; ``maxUnavailable``
a positive integer or a percentage of at most 100 %); non-negative ``replicas``, ``minReadySeconds``
and ``ordinals.start``; claim retention ``Retain`` or ``Delete``; every claim template named.  On
update only ``replicas``, ``ordinals``, ``template``, ``updateStrategy``,
``persistentVolumeClaimRetentionPolicy`` and ``minReadySeconds`` may change.
"""

from __future__ import annotations

import copy

from minik8s.api import validation as v
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, int_or_percent_errors, unsupported
from minik8s.apiserver.strategies.daemonset import _int_or_percent_value
from minik8s.apiserver.strategies.pod import default_pod_spec
from minik8s.apiserver.strategies.replicaset import ReplicaSetStrategy, validate_workload_spec

POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
UPDATE_STRATEGY_TYPES = ("RollingUpdate", "OnDelete")
RETENTION_POLICIES = ("Delete", "Retain")
#: The spec fields an update may change (``ValidateStatefulSetUpdate``).
MUTABLE_SPEC = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                "minReadySeconds")
UPDATE_FORBIDDEN = ("Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                    "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                    "'minReadySeconds' are forbidden")


def _negative(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


def validate_statefulset_update_strategy(strategy: object, path: str = "spec.updateStrategy") -> list[Cause]:
    """The ``updateStrategy`` part of ``ValidateStatefulSetSpec`` (``validateRollingUpdateStatefulSet``)."""
    if not isinstance(strategy, dict) or not strategy.get("type"):
        return [(path, None, REQUIRED)]
    kind = strategy["type"]
    ru = strategy.get("rollingUpdate")
    if kind == "OnDelete":
        if ru is not None:
            return [(f"{path}.rollingUpdate", ru, "only allowed for updateStrategy 'RollingUpdate'")]
        return []
    if kind != "RollingUpdate":
        return [(path, strategy, "must be 'RollingUpdate' or 'OnDelete'")]
    if not isinstance(ru, dict):
        return []
    causes: list[Cause] = []
    if _negative(ru.get("partition")):
        causes.append((f"{path}.rollingUpdate.partition", ru["partition"], "must be greater than or equal to 0"))
    max_unavailable = ru.get("maxUnavailable")
    if max_unavailable is not None:
        where = f"{path}.rollingUpdate.maxUnavailable"
        errors = int_or_percent_errors(max_unavailable, where)
        causes += errors
        if not errors and _int_or_percent_value(max_unavailable) == 0:
            causes.append((where, max_unavailable, "cannot be 0"))
    return causes


def claim_volumes(spec: Obj) -> list[Obj]:
    """The pod volumes the claim templates stand for (``{name, persistentVolumeClaim}``)."""
    out: list[Obj] = []
    for claim in spec.get("volumeClaimTemplates") or []:
        name = ((claim or {}).get("metadata") or {}).get("name") if isinstance(claim, dict) else None
        if name:
            out.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
    return out


class StatefulSetStrategy(ReplicaSetStrategy):
    """apps/v1 StatefulSet (see the module docstring for the rules)."""

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("replicas", 0)
            status.setdefault("availableReplicas", 0)
        spec.setdefault("replicas", 1)
        if not spec.get("podManagementPolicy"):
            spec["podManagementPolicy"] = "OrderedReady"
        strategy = spec.setdefault("updateStrategy", {})
        if isinstance(strategy, dict):
            if not strategy.get("type"):
                strategy["type"] = "RollingUpdate"
            if strategy["type"] == "RollingUpdate":
                ru = strategy.setdefault("rollingUpdate", {})
                if isinstance(ru, dict):
                    ru.setdefault("partition", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
        if isinstance(retention, dict):
            for fld in ("whenDeleted", "whenScaled"):
                if not retention.get(fld):
                    retention[fld] = "Retain"
        template = spec.get("template")
        if isinstance(template, dict):
            default_pod_spec(template.setdefault("spec", {}))
        for claim in spec.get("volumeClaimTemplates") or []:
            if isinstance(claim, dict):
                claim.setdefault("apiVersion", "v1")
                claim.setdefault("kind", "PersistentVolumeClaim")
                # the PersistentVolumeClaim defaults reach the templates too, as Kubernetes' defaulters walk them
                claim_spec = claim.setdefault("spec", {})
                if isinstance(claim_spec, dict):
                    claim_spec.setdefault("volumeMode", "Filesystem")
                claim_status = claim.setdefault("status", {})
                if isinstance(claim_status, dict):
                    claim_status.setdefault("phase", "Pending")

    def prepare_for_create(self, obj: Obj) -> None:
        """Status starts empty (its counters at 0)."""
        obj["status"] = {"replicas": 0, "availableReplicas": 0}

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        selector = spec.get("selector")
        template = spec.get("template")
        if isinstance(selector, dict) and not (selector.get("matchLabels") or selector.get("matchExpressions")):
            causes.append(("spec.selector", selector, "empty selector is invalid for statefulset"))
        else:
            checked = {k: val for k, val in spec.items() if k != "replicas"}
            if isinstance(template, dict):
                # The claims are the pod's volumes too: mounts of them are valid.
                checked["template"] = copy.deepcopy(template)
                tspec = checked["template"].setdefault("spec", {})
                names = {c["name"] for c in claim_volumes(spec)}
                tspec["volumes"] = [vol for vol in tspec.get("volumes") or [] if vol.get("name") not in names] + \
                    [{"name": n, "emptyDir": {}} for n in sorted(names)]
            causes += validate_workload_spec(checked, template_required=True)
        template_spec = (template or {}).get("spec") or {} if isinstance(template, dict) else {}
        policy = template_spec.get("restartPolicy")
        if policy is not None and policy != "Always":
            causes.append(("spec.template.spec.restartPolicy", policy, unsupported(policy, ("Always",))))
        if template_spec.get("activeDeadlineSeconds") is not None:
            causes.append(("spec.template.spec.activeDeadlineSeconds", template_spec.get("activeDeadlineSeconds"),
                           "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"))
        management = spec.get("podManagementPolicy")
        if not management:
            causes.append(("spec.podManagementPolicy", None, REQUIRED))
        elif management not in POD_MANAGEMENT_POLICIES:
            causes.append(("spec.podManagementPolicy", management, "must be 'OrderedReady' or 'Parallel'"))
        causes += validate_statefulset_update_strategy(spec.get("updateStrategy"))
        for fld in ("replicas", "minReadySeconds"):
            if _negative(spec.get(fld)):
                causes.append((f"spec.{fld}", spec[fld], "must be greater than or equal to 0"))
        start = (spec.get("ordinals") or {}).get("start") if isinstance(spec.get("ordinals"), dict) else None
        if _negative(start):
            causes.append(("spec.ordinals.start", start, "must be greater than or equal to 0"))
        retention = spec.get("persistentVolumeClaimRetentionPolicy")
        if isinstance(retention, dict):
            for fld in ("whenDeleted", "whenScaled"):
                value = retention.get(fld)
                if value not in RETENTION_POLICIES:
                    causes.append((f"spec.persistentVolumeClaimRetentionPolicy.{fld}", value,
                                   unsupported(value, RETENTION_POLICIES)))
        seen: set[str] = set()
        for i, claim in enumerate(spec.get("volumeClaimTemplates") or []):
            name = ((claim or {}).get("metadata") or {}).get("name") if isinstance(claim, dict) else None
            where = f"spec.volumeClaimTemplates[{i}].metadata.name"
            if not name:
                causes.append((where, None, "name or generateName is required"))
                continue
            causes += [(where, name, m) for m in v.dns1123_label_errors(name)]
            if name in seen:
                causes.append((where, None, f'Duplicate value: "{name}"'))
            seen.add(name)
        if old is not None:
            old_spec = old.get("spec") or {}
            if any(spec.get(k) != old_spec.get(k) for k in set(spec) | set(old_spec) if k not in MUTABLE_SPEC):
                causes.append(("spec", None, UPDATE_FORBIDDEN))
        return causes
