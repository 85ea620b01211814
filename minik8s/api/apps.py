"""``apps/v1`` kinds: ReplicaSet, Deployment and DaemonSet; and ``autoscaling/v1`` Scale (the ``scale`` subresource)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from minik8s.api.base import Model
from minik8s.api.core import IntOrString, PodTemplateSpec
from minik8s.api.meta import Condition, LabelSelector, MetaView, TypedObject


class ReplicaSetSpec(Model):
    replicas: int | None = None
    min_ready_seconds: int | None = None
    selector: LabelSelector
    template: PodTemplateSpec | None = None


class ReplicaSetStatus(Model):
    replicas: int = 0
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    observed_generation: int | None = None
    conditions: list[Condition] | None = None


class ReplicaSet(TypedObject):
    spec: ReplicaSetSpec
    status: ReplicaSetStatus | None = None


class RollingUpdateDeployment(Model):
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None


class DeploymentStrategy(Model):
    type: str | None = None  # RollingUpdate, Recreate
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(Model):
    replicas: int | None = None
    selector: LabelSelector
    template: PodTemplateSpec
    strategy: DeploymentStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None
    paused: bool | None = None
    progress_deadline_seconds: int | None = None


class DeploymentStatus(Model):
    observed_generation: int | None = None
    replicas: int | None = None
    updated_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    unavailable_replicas: int | None = None
    conditions: list[Condition] | None = None
    collision_count: int | None = None


class Deployment(TypedObject):
    spec: DeploymentSpec
    status: DeploymentStatus | None = None


class RollingUpdateDaemonSet(Model):
    """How a DaemonSet's RollingUpdate proceeds: at most ``max_unavailable`` nodes without an
    available pod (default 1), at most ``max_surge`` nodes running an old and a new pod at once
    (default 0); each an integer or a percentage of the desired number of nodes."""

    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None


class DaemonSetUpdateStrategy(Model):
    type: str | None = None  # RollingUpdate (default), OnDelete
    rolling_update: RollingUpdateDaemonSet | None = None


class DaemonSetSpec(Model):
    selector: LabelSelector
    template: PodTemplateSpec
    update_strategy: DaemonSetUpdateStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None


class DaemonSetStatus(Model):
    current_number_scheduled: int = 0
    number_misscheduled: int = 0
    desired_number_scheduled: int = 0
    number_ready: int = 0
    observed_generation: int | None = None
    updated_number_scheduled: int | None = None
    number_available: int | None = None
    number_unavailable: int | None = None
    collision_count: int | None = None
    conditions: list[Condition] | None = None


class DaemonSet(TypedObject):
    """``apps/v1`` DaemonSet: one pod from ``spec.template`` on every eligible node."""

    spec: DaemonSetSpec
    status: DaemonSetStatus | None = None


@dataclass(frozen=True, slots=True)
class DaemonSetView:
    """What the DaemonSet controller reads of a wire-form DaemonSet, read once at the top of a sync.

    ``rolling`` is True for ``updateStrategy.type: RollingUpdate`` (the default); ``max_surge`` and
    ``max_unavailable`` are the RollingUpdate's raw IntOrStrings (absent: None and 1, Kubernetes'
    defaults; ``OnDelete`` reads as absent); ``collision_count`` is ``status.collisionCount``.
    """

    meta: MetaView
    rolling: bool
    max_surge: IntOrString | None
    max_unavailable: IntOrString | None
    min_ready_seconds: int
    collision_count: int | None

    @classmethod
    def of(cls, ds: Mapping[str, Any]) -> DaemonSetView:
        spec = ds.get("spec") or {}
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        ru = (strategy.get("rollingUpdate") or {}) if rolling else {}
        return cls(MetaView.of(ds), rolling, ru.get("maxSurge"), ru.get("maxUnavailable", 1),
                   int(spec.get("minReadySeconds") or 0), (ds.get("status") or {}).get("collisionCount"))


class ScaleSpec(Model):
    replicas: int | None = None


class ScaleStatus(Model):
    replicas: int = 0
    selector: str | None = None


class Scale(TypedObject):
    """``autoscaling/v1`` Scale: what ``kubectl scale`` and the HPA read and write."""

    spec: ScaleSpec | None = None
    status: ScaleStatus | None = None
