"""Pure Deployment arithmetic: template hash, surge/unavailable, revisions, rollout steps, status.

Kubernetes' ``pkg/controller/deployment/util`` and the decision parts of ``rolling.go``,
``recreate.go``, ``sync.go`` and ``progress.go``, on wire-form dicts, with no I/O, so each
rule is unit-tested on its own.  The controller (:mod:`minik8s.controllers.deployment`)
applies the results through the API.

Two deliberate refinements over Kubernetes, both conservative against a ReplicaSet
status that lags its spec (the ReplicaSet controller writes status after it has acted):
the pods a rolling update may add count ``max(spec.replicas, status.replicas)`` per
ReplicaSet, and the available pods it may take away count
``min(status.availableReplicas, spec.replicas)`` per ReplicaSet.  Kubernetes counts only
``spec.replicas`` and ``status.availableReplicas``, which lets the pod count briefly exceed
``replicas + maxSurge`` (or availability dip below ``replicas - maxUnavailable``) while a
scaled-down ReplicaSet's pods are still being deleted.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
from collections.abc import Iterable
from typing import Any

from minik8s.api.base import Obj, now_rfc3339, parse_time

# Annotations (``deployment.kubernetes.io/...``) and labels Kubernetes uses.
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
#: Longest ``revision-history`` annotation value (characters).
MAX_REV_HISTORY_LENGTH = 2000

# Condition types and reasons (``apps.DeploymentConditionType``, ``deploymentutil`` reasons).
AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"
NEW_RS_REASON = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON = "FoundNewReplicaSet"
RS_UPDATED_REASON = "ReplicaSetUpdated"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"
PAUSED_REASON = "DeploymentPaused"
RESUMED_REASON = "DeploymentResumed"

_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193
_MAX_INT32 = 2 ** 31 - 1


# ====================================================================== small accessors
def spec_replicas(obj: Obj | None) -> int:
    """``spec.replicas`` of a ReplicaSet or Deployment (0 when None or missing)."""
    if obj is None:
        return 0
    return int((obj.get("spec") or {}).get("replicas") or 0)


def status_field(obj: Obj | None, name: str) -> int:
    """An integer ``status`` field (0 when missing)."""
    if obj is None:
        return 0
    return int((obj.get("status") or {}).get(name) or 0)


def annotations_of(obj: Obj) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def name_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def uid_of(obj: Obj | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("uid") or "")


def _created(obj: Obj) -> dt.datetime:
    return parse_time((obj.get("metadata") or {}).get("creationTimestamp")) or dt.datetime.min.replace(tzinfo=dt.UTC)


# ====================================================================== template hash
def fnv32a(data: bytes, value: int = _FNV32_OFFSET) -> int:
    """32-bit FNV-1a of ``data``, continuing from ``value``."""
    for byte in data:
        value ^= byte
        value = (value * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """Kubernetes' ``rand.SafeEncodeString``: each byte mapped into a vowel-free alphabet."""
    return "".join(_SAFE_ALPHABET[b % len(_SAFE_ALPHABET)] for b in text.encode())


def compute_hash(template: Obj, collision_count: int | None = None) -> str:
    """The ``pod-template-hash`` of a pod template (``controller.ComputeHash``'s shape).

    FNV-32a over the template's canonical JSON (sorted keys, no spaces), then — when
    ``collision_count`` is set — over its 4 little-endian bytes, rendered as the decimal
    value safe-encoded (e.g. ``"7b9c4d8f5"``).  Stable across processes and restarts.
    """
    value = fnv32a(json.dumps(template, sort_keys=True, separators=(",", ":")).encode())
    if collision_count is not None:
        value = fnv32a(int(collision_count & 0xFFFFFFFF).to_bytes(4, "little"), value)
    return safe_encode(str(value))


def _prune_empty(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _prune_empty(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_prune_empty(v) for v in value]
    return value


def equal_ignore_hash(a: Obj | None, b: Obj | None) -> bool:
    """Two pod templates are equal apart from the ``pod-template-hash`` label (``EqualIgnoreHash``).

    Empty and missing maps/lists count as equal, as in Kubernetes' semantic equality.
    """
    left, right = copy.deepcopy(a or {}), copy.deepcopy(b or {})
    for template in (left, right):
        labels = (template.get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            labels.pop(POD_TEMPLATE_HASH_LABEL, None)
    return bool(_prune_empty(left) == _prune_empty(right))


# ====================================================================== surge / unavailable
def scaled_value(value: int | str | None, total: int, round_up: bool) -> int:
    """An IntOrString against ``total``: an int as is, ``"25%"`` as 25% of ``total``.

    Percentages round up (``round_up``, used for maxSurge) or down (maxUnavailable), as
    ``intstr.GetScaledValueFromIntOrPercent``.  Raises ValueError for a string that is not
    ``<digits>%``.
    """
    if value is None:
        return 0
    if isinstance(value, bool):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%") or not text[:-1].isdigit():
        raise ValueError(f"invalid value for IntOrString: {text!r} is not a percentage")
    product = int(text[:-1]) * total
    return -(-product // 100) if round_up else product // 100


def resolve_fenceposts(max_surge: int | str | None, max_unavailable: int | str | None, desired: int) -> tuple[int, int]:
    """(surge, unavailable) pods for ``desired`` replicas: surge rounds up, unavailable down.

    When both resolve to 0 (validation forbids both 0 explicitly, but ``25%`` of 1 rounds
    down to 0) unavailable becomes 1 so the rollout can progress (``ResolveFenceposts``).
    Raises ValueError for malformed values.
    """
    surge = scaled_value(max_surge, desired, True)
    unavailable = scaled_value(max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_rolling_update(d: Obj) -> bool:
    """The Deployment's strategy is RollingUpdate (the default)."""
    return (((d.get("spec") or {}).get("strategy") or {}).get("type") or "RollingUpdate") == "RollingUpdate"


def _rolling_params(d: Obj) -> tuple[int | str | None, int | str | None]:
    ru = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    return ru.get("maxSurge", "25%"), ru.get("maxUnavailable", "25%")


def max_surge(d: Obj) -> int:
    """Pods a rolling update may run above ``spec.replicas`` (0 for Recreate or bad values)."""
    if not is_rolling_update(d):
        return 0
    try:
        return resolve_fenceposts(*_rolling_params(d), spec_replicas(d))[0]
    except ValueError:
        return 0


def max_unavailable(d: Obj) -> int:
    """Pods a rolling update may have unavailable, at most ``spec.replicas`` (0 for Recreate)."""
    replicas = spec_replicas(d)
    if not is_rolling_update(d) or replicas == 0:
        return 0
    try:
        unavailable = resolve_fenceposts(*_rolling_params(d), replicas)[1]
    except ValueError:
        return 0
    return min(unavailable, replicas)


# ====================================================================== ReplicaSet lists
def by_creation(rss: Iterable[Obj]) -> list[Obj]:
    """Oldest first; ties by name (``ReplicaSetsByCreationTimestamp``)."""
    return sorted(rss, key=lambda rs: (_created(rs), name_of(rs)))


def by_size_newer(rss: Iterable[Obj]) -> list[Obj]:
    """Largest first; equal sizes newest first (``ReplicaSetsBySizeNewer``, for scaling up)."""
    ordered = sorted(rss, key=lambda rs: (_created(rs), name_of(rs)), reverse=True)
    return sorted(ordered, key=lambda rs: -spec_replicas(rs))


def by_size_older(rss: Iterable[Obj]) -> list[Obj]:
    """Largest first; equal sizes oldest first (``ReplicaSetsBySizeOlder``, for scaling down)."""
    return sorted(by_creation(rss), key=lambda rs: -spec_replicas(rs))


def revision(rs: Obj) -> int:
    """The ``deployment.kubernetes.io/revision`` annotation as an int (0 when missing/invalid)."""
    try:
        return int(annotations_of(rs).get(REVISION_ANNOTATION) or 0)
    except ValueError:
        return 0


def by_revision(rss: Iterable[Obj]) -> list[Obj]:
    """Lowest revision first; ties oldest first (``ReplicaSetsByRevision``)."""
    return sorted(by_creation(rss), key=revision)


def max_revision(rss: Iterable[Obj | None]) -> int:
    return max((revision(rs) for rs in rss if rs is not None), default=0)


def active(rss: Iterable[Obj | None]) -> list[Obj]:
    """ReplicaSets with ``spec.replicas`` > 0 (``FilterActiveReplicaSets``)."""
    return [rs for rs in rss if rs is not None and spec_replicas(rs) > 0]


def replica_count(rss: Iterable[Obj | None]) -> int:
    """Sum of ``spec.replicas``."""
    return sum(spec_replicas(rs) for rs in rss if rs is not None)


def actual_replica_count(rss: Iterable[Obj | None]) -> int:
    """Sum of ``status.replicas``."""
    return sum(status_field(rs, "replicas") for rs in rss if rs is not None)


def ready_replica_count(rss: Iterable[Obj | None]) -> int:
    return sum(status_field(rs, "readyReplicas") for rs in rss if rs is not None)


def available_replica_count(rss: Iterable[Obj | None]) -> int:
    return sum(status_field(rs, "availableReplicas") for rs in rss if rs is not None)


def find_new_replica_set(d: Obj, rss: Iterable[Obj]) -> Obj | None:
    """The oldest ReplicaSet whose template equals the Deployment's (ignoring the hash label)."""
    template = (d.get("spec") or {}).get("template")
    for rs in by_creation(rss):
        if equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            return rs
    return None


def find_old_replica_sets(new_rs: Obj | None, rss: Iterable[Obj]) -> list[Obj]:
    """Every ReplicaSet but ``new_rs``."""
    new_uid = uid_of(new_rs)
    return [rs for rs in rss if not new_rs or uid_of(rs) != new_uid]


def find_active_or_latest(new_rs: Obj | None, old_rss: list[Obj]) -> Obj | None:
    """The only active ReplicaSet; the newest one when none is active; None when several are."""
    if new_rs is None and not old_rss:
        return None
    newest_first = list(reversed(by_creation(old_rss)))
    live = active(newest_first + [new_rs])
    if not live:
        return new_rs if new_rs is not None else newest_first[0]
    if len(live) == 1:
        return live[0]
    return None


def desired_replicas_annotation(rs: Obj) -> int | None:
    try:
        raw = annotations_of(rs).get(DESIRED_REPLICAS_ANNOTATION)
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def max_replicas_annotation(rs: Obj) -> int | None:
    try:
        raw = annotations_of(rs).get(MAX_REPLICAS_ANNOTATION)
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    """The new ReplicaSet runs the full Deployment size, all available (``IsSaturated``)."""
    if rs is None:
        return False
    replicas = spec_replicas(d)
    return (desired_replicas_annotation(rs) == replicas and spec_replicas(rs) == replicas
            and status_field(rs, "availableReplicas") == replicas)


# ====================================================================== annotations
def replicas_annotations_need_update(rs: Obj, desired: int, maximum: int) -> bool:
    ann = annotations_of(rs)
    return ann.get(DESIRED_REPLICAS_ANNOTATION) != str(desired) or ann.get(MAX_REPLICAS_ANNOTATION) != str(maximum)


def set_replicas_annotations(rs: Obj, desired: int, maximum: int) -> bool:
    """Set desired-replicas / max-replicas on ``rs`` in place; True when something changed."""
    if not replicas_annotations_need_update(rs, desired, maximum):
        return False
    meta = rs.setdefault("metadata", {})
    ann = meta.setdefault("annotations", {})
    ann[DESIRED_REPLICAS_ANNOTATION] = str(desired)
    ann[MAX_REPLICAS_ANNOTATION] = str(maximum)
    return True


_SKIP_COPY = {LAST_APPLIED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
              DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, ROLLBACK_TO_ANNOTATION}


def set_new_replica_set_annotations(d: Obj, rs: Obj, new_revision: int, exists: bool) -> bool:
    """Copy the Deployment's annotations to ``rs`` and raise its revision to ``new_revision``.

    In place; True when ``rs`` changed (``SetNewReplicaSetAnnotations``).  A ReplicaSet
    whose revision is raised (a rollback to it) records its former revisions in
    ``deployment.kubernetes.io/revision-history``.  A ReplicaSet about to be created
    (``exists`` False) also gets desired-replicas / max-replicas.
    """
    meta = rs.setdefault("metadata", {})
    ann = meta.setdefault("annotations", {})
    changed = False
    for key, value in annotations_of(d).items():
        if key in _SKIP_COPY or ann.get(key) == value:
            continue
        ann[key] = value
        changed = True
    old_raw = ann.get(REVISION_ANNOTATION)
    try:
        old = int(old_raw) if old_raw else 0
    except ValueError:
        return changed
    if old < new_revision:
        ann[REVISION_ANNOTATION] = str(new_revision)
        changed = True
        if old_raw:
            history = [h for h in (ann.get(REVISION_HISTORY_ANNOTATION) or "").split(",") if h]
            history.append(old_raw)
            while history and len(",".join(history)) > MAX_REV_HISTORY_LENGTH:
                history.pop(0)
            ann[REVISION_HISTORY_ANNOTATION] = ",".join(history)
    if not exists:
        replicas = spec_replicas(d)
        changed = set_replicas_annotations(rs, replicas, replicas + max_surge(d)) or changed
    if not ann:
        meta.pop("annotations", None)
    return changed


# ====================================================================== rollout steps
def new_rs_new_replicas(d: Obj, all_rss: list[Obj], new_rs: Obj) -> int:
    """How many replicas the new ReplicaSet should have now (``NewRSNewReplicas``).

    RollingUpdate: grow it by what ``replicas + maxSurge`` leaves room for (counting each
    ReplicaSet as ``max(spec.replicas, status.replicas)``), never beyond ``replicas``.
    Recreate: ``replicas`` at once.
    """
    replicas = spec_replicas(d)
    if not is_rolling_update(d):
        return replicas
    current = sum(max(spec_replicas(rs), status_field(rs, "replicas")) for rs in all_rss)
    max_total = replicas + max_surge(d)
    if current >= max_total:
        return spec_replicas(new_rs)
    scale_up = min(max_total - current, replicas - spec_replicas(new_rs))
    return spec_replicas(new_rs) + max(scale_up, 0)


def _available(rs: Obj) -> int:
    return min(status_field(rs, "availableReplicas"), spec_replicas(rs))


def rolling_step(d: Obj, new_rs: Obj, old_rss: list[Obj]) -> dict[str, int]:
    """One RollingUpdate reconcile (``rolloutRolling``): ReplicaSet name → new ``spec.replicas``.

    First scale the new ReplicaSet (down to ``replicas`` if above, else up by
    :func:`new_rs_new_replicas`); if that changes nothing, scale old ReplicaSets down:
    unhealthy replicas first (``cleanupUnhealthyReplicas``, oldest ReplicaSet first, at most
    ``allPods - minAvailable - newUnavailable``), then available ones down to
    ``minAvailable = replicas - maxUnavailable`` (``scaleDownOldReplicaSetsForRollingUpdate``).
    Returns only the ReplicaSets whose size changes, in the order to apply.
    """
    replicas = spec_replicas(d)
    new_size = spec_replicas(new_rs)
    all_rss = old_rss + [new_rs]
    if new_size != replicas:
        target = replicas if new_size > replicas else new_rs_new_replicas(d, all_rss, new_rs)
        if target != new_size:
            return {name_of(new_rs): target}
    sizes = {name_of(rs): spec_replicas(rs) for rs in old_rss}
    old_active = active(old_rss)
    if replica_count(old_active) == 0:
        return {}
    min_available = replicas - max_unavailable(d)
    new_unavailable = new_size - status_field(new_rs, "availableReplicas")
    max_scaled_down = replica_count(all_rss) - min_available - new_unavailable
    if max_scaled_down <= 0:
        return {}
    plan: dict[str, int] = {}
    cleaned = 0
    for rs in by_creation(old_active):
        if cleaned >= max_scaled_down:
            break
        size, avail = sizes[name_of(rs)], status_field(rs, "availableReplicas")
        if size == 0 or size <= avail:
            continue
        down = min(max_scaled_down - cleaned, size - avail)
        sizes[name_of(rs)] = size - down
        plan[name_of(rs)] = size - down
        cleaned += down
    available = sum(min(_available(rs), sizes[name_of(rs)]) for rs in old_rss) + _available(new_rs)
    if available > min_available:
        budget = available - min_available
        for rs in by_creation(old_active):
            if budget <= 0:
                break
            size = sizes[name_of(rs)]
            if size == 0:
                continue
            down = min(size, budget)
            sizes[name_of(rs)] = size - down
            plan[name_of(rs)] = size - down
            budget -= down
    return plan


def _round_half_away(value: float) -> int:
    return int(math.floor(value + 0.5)) if value >= 0 else -int(math.floor(-value + 0.5))


def proportional_scale(d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> dict[str, int]:
    """Sizes after a Deployment's ``spec.replicas`` changed (``DeploymentController.scale``).

    * one active ReplicaSet (or none: the newest) → it gets ``replicas``;
    * a saturated new ReplicaSet → every active old one goes to 0;
    * RollingUpdate with several active → the difference between ``replicas + maxSurge``
      and the current total is shared out in proportion to each ReplicaSet's size against
      its ``max-replicas`` annotation, largest first (newest first when growing, oldest
      first when shrinking), leftovers to the first.

    Returns name → new size for the ReplicaSets to write; sizes may equal the current ones
    (the caller then only refreshes the desired-replicas / max-replicas annotations).
    """
    replicas = spec_replicas(d)
    target = find_active_or_latest(new_rs, old_rss)
    if target is not None:
        return {name_of(target): replicas}
    if is_saturated(d, new_rs):
        return {name_of(rs): 0 for rs in active(old_rss)}
    if not is_rolling_update(d):
        return {}
    live = active(old_rss + ([new_rs] if new_rs is not None else []))
    allowed = replicas + max_surge(d) if replicas > 0 else 0
    to_add = allowed - replica_count(live)
    if to_add > 0:
        live = by_size_newer(live)
    elif to_add < 0:
        live = by_size_older(live)
    added = 0
    sizes: dict[str, int] = {}
    for rs in live:
        size = spec_replicas(rs)
        if to_add == 0:
            sizes[name_of(rs)] = size
            continue
        proportion = 0
        if size != 0 and to_add != added:
            if replicas == 0:
                fraction = -size
            else:
                annotated = max_replicas_annotation(rs) or status_field(d, "replicas") or 1
                fraction = _round_half_away(size * (replicas + max_surge(d)) / annotated) - size
            allowed_left = to_add - added
            proportion = min(fraction, allowed_left) if to_add > 0 else max(fraction, allowed_left)
        sizes[name_of(rs)] = size + proportion
        added += proportion
    if live and to_add != 0:
        first = name_of(live[0])
        sizes[first] = max(sizes[first] + to_add - added, 0)
    return sizes


def cleanup_candidates(d: Obj, old_rss: list[Obj]) -> list[Obj]:
    """Old ReplicaSets to delete beyond ``revisionHistoryLimit`` (``cleanupDeployment``).

    The lowest revisions go first, and only ReplicaSets that are fully scaled down
    (``spec.replicas`` and ``status.replicas`` 0, status caught up with the spec) and not
    already being deleted.
    """
    limit = (d.get("spec") or {}).get("revisionHistoryLimit")
    if limit is None:
        return []
    alive = [rs for rs in old_rss if not (rs.get("metadata") or {}).get("deletionTimestamp")]
    diff = len(alive) - int(limit)
    if diff <= 0:
        return []
    out = []
    for rs in by_revision(alive)[:diff]:
        meta = rs.get("metadata") or {}
        if status_field(rs, "replicas") != 0 or spec_replicas(rs) != 0:
            continue
        if int(meta.get("generation") or 0) > status_field(rs, "observedGeneration"):
            continue
        out.append(rs)
    return out


# ====================================================================== conditions and status
def new_condition(type_: str, status: str, reason: str, message: str, now: str | None = None) -> Obj:
    """A Deployment condition with lastUpdateTime = lastTransitionTime = ``now``."""
    stamp = now or now_rfc3339()
    return {"type": type_, "status": status, "lastUpdateTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def get_condition(status: Obj | None, type_: str) -> Obj | None:
    for cond in (status or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return dict(cond)
    return None


def set_condition(status: Obj, cond: Obj) -> None:
    """Set ``cond`` in ``status`` in place (``SetDeploymentCondition``).

    Unchanged when a condition of the type has the same status and reason; keeps the old
    lastTransitionTime when only the reason changes.
    """
    current = get_condition(status, cond["type"])
    if current is not None and current.get("status") == cond["status"] and current.get("reason") == cond["reason"]:
        return
    cond = dict(cond)
    if current is not None and current.get("status") == cond["status"]:
        cond["lastTransitionTime"] = current.get("lastTransitionTime")
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != cond["type"]] + [cond]


def remove_condition(status: Obj, type_: str) -> None:
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != type_]
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)


def has_progress_deadline(d: Obj) -> bool:
    deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and int(deadline) != _MAX_INT32


def calculate_status(d: Obj, all_rss: list[Obj], new_rs: Obj | None, now: str | None = None) -> Obj:
    """The Deployment status the ReplicaSets add up to (``calculateStatus``).

    ``replicas``/``updatedReplicas``/``readyReplicas``/``availableReplicas`` from the
    ReplicaSets' statuses (updated = the new ReplicaSet's), ``unavailableReplicas`` = sum of
    ``spec.replicas`` minus available (not below 0), the Available condition True
    (MinimumReplicasAvailable) when available ≥ ``replicas - maxUnavailable`` else False
    (MinimumReplicasUnavailable).  Other conditions are carried over.
    """
    old_status = d.get("status") or {}
    available = available_replica_count(all_rss)
    unavailable = max(replica_count(all_rss) - available, 0)
    status: Obj = {
        "observedGeneration": (d.get("metadata") or {}).get("generation"),
        "replicas": actual_replica_count(all_rss),
        "updatedReplicas": actual_replica_count([new_rs]),
        "readyReplicas": ready_replica_count(all_rss),
        "availableReplicas": available,
        "unavailableReplicas": unavailable,
    }
    if old_status.get("collisionCount") is not None:
        status["collisionCount"] = old_status["collisionCount"]
    if old_status.get("conditions"):
        status["conditions"] = [dict(c) for c in old_status["conditions"]]
    if available >= spec_replicas(d) - max_unavailable(d):
        set_condition(status, new_condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE,
                                            "Deployment has minimum availability.", now))
    else:
        set_condition(status, new_condition(AVAILABLE, "False", MINIMUM_REPLICAS_UNAVAILABLE,
                                            "Deployment does not have minimum availability.", now))
    if status["observedGeneration"] is None:
        status.pop("observedGeneration")
    return status


def deployment_complete(d: Obj, status: Obj) -> bool:
    """Every replica updated and available, and the status observed the current generation."""
    replicas = spec_replicas(d)
    return (int(status.get("updatedReplicas") or 0) == replicas and int(status.get("replicas") or 0) == replicas
            and int(status.get("availableReplicas") or 0) == replicas
            and int(status.get("observedGeneration") or 0) >= int((d.get("metadata") or {}).get("generation") or 0))


def deployment_progressing(d: Obj, status: Obj) -> bool:
    """More updated, fewer old, or more ready/available replicas than the stored status says."""
    old = d.get("status") or {}

    def n(s: Obj, k: str) -> int:
        return int(s.get(k) or 0)

    old_old = n(old, "replicas") - n(old, "updatedReplicas")
    new_old = n(status, "replicas") - n(status, "updatedReplicas")
    return (n(status, "updatedReplicas") > n(old, "updatedReplicas") or new_old < old_old
            or n(status, "readyReplicas") > n(old, "readyReplicas")
            or n(status, "availableReplicas") > n(old, "availableReplicas"))


def deployment_timed_out(d: Obj, status: Obj, now: dt.datetime) -> bool:
    """The Progressing condition has not moved for ``progressDeadlineSeconds``."""
    if not has_progress_deadline(d):
        return False
    cond = get_condition(status, PROGRESSING)
    if cond is None or cond.get("reason") == NEW_RS_AVAILABLE_REASON:
        return False
    if cond.get("reason") == TIMED_OUT_REASON:
        return True
    since = parse_time(cond.get("lastUpdateTime"))
    if since is None:
        return False
    deadline = int((d.get("spec") or {}).get("progressDeadlineSeconds") or 0)
    return since + dt.timedelta(seconds=deadline) < now


def rollout_status(d: Obj, all_rss: list[Obj], new_rs: Obj | None, now: dt.datetime | None = None) -> Obj:
    """:func:`calculate_status` plus the Progressing condition (``syncRolloutStatus``).

    With a progress deadline and a rollout not yet complete: NewReplicaSetAvailable when
    complete, ReplicaSetUpdated when it made progress (lastUpdateTime moves, the transition
    time stays), ProgressDeadlineExceeded (False) when it has not moved for the deadline.
    Without a deadline, no Progressing condition.  A ReplicaFailure condition of a
    ReplicaSet (new first) is copied over.
    """
    now = now or dt.datetime.now(dt.UTC)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    status = calculate_status(d, all_rss, new_rs, stamp)
    if not has_progress_deadline(d):
        remove_condition(status, PROGRESSING)
    current = get_condition(d.get("status"), PROGRESSING)
    complete_before = (int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0)
                       and current is not None and current.get("reason") == NEW_RS_AVAILABLE_REASON)
    if has_progress_deadline(d) and not complete_before:
        subject = f'ReplicaSet "{name_of(new_rs)}"' if new_rs is not None else f'Deployment "{name_of(d)}"'
        if deployment_complete(d, status):
            set_condition(status, new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON,
                                                f"{subject} has successfully progressed.", stamp))
        elif deployment_progressing(d, status):
            cond = new_condition(PROGRESSING, "True", RS_UPDATED_REASON, f"{subject} is progressing.", stamp)
            if current is not None:
                if current.get("status") == "True":
                    cond["lastTransitionTime"] = current.get("lastTransitionTime")
                remove_condition(status, PROGRESSING)
            set_condition(status, cond)
        elif deployment_timed_out(d, status, now):
            set_condition(status, new_condition(PROGRESSING, "False", TIMED_OUT_REASON,
                                                f"{subject} has timed out progressing.", stamp))
    failure = None
    for rs in ([new_rs] if new_rs is not None else []) + [r for r in all_rss if r is not new_rs]:
        failure = get_condition(rs.get("status"), REPLICA_FAILURE)
        if failure is not None:
            break
    if failure is not None:
        set_condition(status, new_condition(REPLICA_FAILURE, failure.get("status") or "True",
                                            failure.get("reason") or "", failure.get("message") or "", stamp))
    else:
        remove_condition(status, REPLICA_FAILURE)
    return status


def seconds_until_deadline(d: Obj, status: Obj, now: dt.datetime | None = None) -> float | None:
    """When to re-check a rollout for ProgressDeadlineExceeded (``requeueStuckDeployment``).

    None when there is nothing to watch (no deadline, no Progressing condition, complete,
    or already timed out).
    """
    cond = get_condition(status, PROGRESSING)
    if not has_progress_deadline(d) or cond is None:
        return None
    if deployment_complete(d, status) or cond.get("reason") == TIMED_OUT_REASON:
        return None
    since = parse_time(cond.get("lastUpdateTime"))
    if since is None:
        return None
    now = now or dt.datetime.now(dt.UTC)
    deadline = int((d.get("spec") or {}).get("progressDeadlineSeconds") or 0)
    return max((since + dt.timedelta(seconds=deadline) - now).total_seconds(), 0.0) + 1.0
