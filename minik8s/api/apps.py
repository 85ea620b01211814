"""``apps/v1`` kinds: ReplicaSet, Deployment, DaemonSet, StatefulSet and ControllerRevision; and
``autoscaling/v1`` Scale (the ``scale`` subresource)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from minik8s.api.core import IntOrString, PersistentVolumeClaim, PodTemplateSpec, ReplicationControllerStatus
from minik8s.api.meta import Condition, LabelSelector, MetaView, TypedObject
from minik8s.api.model import Model


class ReplicaSetSpec(Model):
    replicas: int | None = None
    min_ready_seconds: int | None = None
    selector: LabelSelector
    template: PodTemplateSpec | None = None


class ReplicaSetStatus(ReplicationControllerStatus):
    # Kubernetes defines this shape twice (the ReplicaSet succeeded the ReplicationController): the
    # fields are the ReplicationController's; a class of its own keeps the OpenAPI definition name
    # io.k8s.api.apps.v1.ReplicaSetStatus (no docstring, so Kubernetes' description is used)
    pass


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


class RollingUpdateStatefulSetStrategy(Model):
    """How a StatefulSet's RollingUpdate proceeds: pods with an ordinal >= ``partition`` (default 0)
    are updated, from the highest ordinal down; ``max_unavailable`` (an integer or a percentage of
    ``replicas``, default 1) is accepted and validated, and minik8s updates one pod at a time."""

    partition: int | None = None
    max_unavailable: IntOrString | None = None


class StatefulSetUpdateStrategy(Model):
    type: str | None = None  # RollingUpdate (default), OnDelete
    rolling_update: RollingUpdateStatefulSetStrategy | None = None


class StatefulSetPersistentVolumeClaimRetentionPolicy(Model):
    """What happens to the claims made from ``volumeClaimTemplates``: ``Retain`` (default) or ``Delete``,
    when the StatefulSet is deleted (``when_deleted``) and when it is scaled down (``when_scaled``)."""

    when_deleted: str | None = None
    when_scaled: str | None = None


class StatefulSetOrdinals(Model):
    start: int | None = None


class StatefulSetSpec(Model):
    replicas: int | None = None
    selector: LabelSelector
    template: PodTemplateSpec
    #: PersistentVolumeClaim objects (kept free-form here: the claim kind's model lives with storage).
    volume_claim_templates: list[PersistentVolumeClaim] | None = None
    service_name: str | None = None
    pod_management_policy: str | None = None  # OrderedReady (default), Parallel
    update_strategy: StatefulSetUpdateStrategy | None = None
    revision_history_limit: int | None = None
    min_ready_seconds: int | None = None
    persistent_volume_claim_retention_policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None = None
    ordinals: StatefulSetOrdinals | None = None


class StatefulSetStatus(Model):
    observed_generation: int | None = None
    replicas: int = 0
    ready_replicas: int | None = None
    current_replicas: int | None = None
    updated_replicas: int | None = None
    available_replicas: int | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    collision_count: int | None = None
    conditions: list[Condition] | None = None


class StatefulSet(TypedObject):
    """``apps/v1`` StatefulSet: pods ``<name>-<ordinal>`` with stable names, network identities and claims."""

    spec: StatefulSetSpec
    status: StatefulSetStatus | None = None


@dataclass(frozen=True, slots=True)
class StatefulSetView:
    """What the StatefulSet controller reads of a wire-form StatefulSet, read once at the top of a sync.

    Kubernetes' defaults applied: ``replicas`` 1, ``parallel`` False (``podManagementPolicy:
    OrderedReady``), ``rolling`` True (``updateStrategy.type: RollingUpdate``) with ``partition`` 0,
    ``min_ready_seconds`` 0, ``start`` 0 (``ordinals.start``), ``service_name`` ``""``, the claim
    retention policies ``Retain``; ``claim_templates`` the raw ``volumeClaimTemplates``.
    """

    meta: MetaView
    replicas: int
    parallel: bool
    rolling: bool
    partition: int
    min_ready_seconds: int
    start: int
    service_name: str
    when_deleted: str
    when_scaled: str
    claim_templates: tuple[Mapping[str, Any], ...]
    collision_count: int | None

    @classmethod
    def of(cls, sts: Mapping[str, Any]) -> StatefulSetView:
        spec = sts.get("spec") or {}
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        ru = (strategy.get("rollingUpdate") or {}) if rolling else {}
        retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
        replicas = spec.get("replicas")
        return cls(MetaView.of(sts), 1 if replicas is None else int(replicas),
                   spec.get("podManagementPolicy") == "Parallel", rolling, int(ru.get("partition") or 0),
                   int(spec.get("minReadySeconds") or 0), int((spec.get("ordinals") or {}).get("start") or 0),
                   str(spec.get("serviceName") or ""), str(retention.get("whenDeleted") or "Retain"),
                   str(retention.get("whenScaled") or "Retain"),
                   tuple(t for t in spec.get("volumeClaimTemplates") or [] if isinstance(t, Mapping)),
                   (sts.get("status") or {}).get("collisionCount"))


class ControllerRevision(TypedObject):
    """``apps/v1`` ControllerRevision: an immutable snapshot (``data``, a RawExtension kept as it came) of
    a DaemonSet's or StatefulSet's pod template, numbered by ``revision``."""

    data: Any = None
    revision: int


class ScaleSpec(Model):
    replicas: int | None = None


class ScaleStatus(Model):
    replicas: int = 0
    selector: str | None = None


class Scale(TypedObject):
    """``autoscaling/v1`` Scale: what ``kubectl scale`` and the HPA read and write."""

    spec: ScaleSpec | None = None
    status: ScaleStatus | None = None
