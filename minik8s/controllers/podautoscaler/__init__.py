"""The HorizontalPodAutoscaler controller: scale a Deployment or ReplicaSet on its pods' CPU and memory.

Kubernetes' ``pkg/controller/podautoscaler`` (``horizontal.go`` + ``replica_calculator.go``),
split here into pure functions of the inputs and a clock (unit-testable with a fake clock)
and a thin controller that does the I/O, one module per concern:

* :mod:`.options` — :class:`~.options.AutoscalerOptions` (the ``--horizontal-pod-autoscaler-*`` flags);
* :mod:`.replicas` — replica proposals from pod metrics (``replica_calculator.go``);
* :mod:`.behavior` — stabilization windows, scale policies and rate limits, min/max bounds;
* :mod:`.status` — conditions, status and the :class:`~.status.Plan` of one reconcile;
* :mod:`.unserved` — Pods, Object and External metrics, which need APIs minik8s does not serve;
* :mod:`.autoscaler` — :class:`~.autoscaler.Autoscaler`, the algorithm over plain inputs;
* :mod:`.controller` — :class:`~.controller.HorizontalPodAutoscalerController`, the I/O.

Every ``--horizontal-pod-autoscaler-sync-period`` (15 s) per HPA:

1. **Scale**: read the target's ``scale`` subresource (``spec.scaleTargetRef``: any kind
   that serves one — Deployment, ReplicaSet); ``spec.replicas`` is the current count and
   ``status.selector`` selects the pods.  Failure → ``AbleToScale=False FailedGetScale``.
2. **Limits first**: a target scaled to 0 is left alone (``ScalingActive=False
   ScalingDisabled``); above ``maxReplicas`` / below ``minReplicas`` it is brought back
   ("Current number of replicas above Spec.MaxReplicas").
3. **Metrics** (``metrics.k8s.io`` PodMetrics of the selected pods, each pod's value summed
   over its containers, in thousandths): per metric,
   ``desired = ceil(readyPods × current / target)``, where for ``Utilization`` *current* is
   ``100 × Σusage / Σrequests`` (integer percent; a container without a request for the
   resource makes the metric fail: ``missing request for cpu in container app of Pod
   web-1``) and for ``AverageValue`` the mean usage per pod.  Within the tolerance (0.1) of
   the target nothing changes.  Pods being deleted or Failed are ignored; Pending pods,
   and for CPU pods not Ready or whose sample predates readiness within the
   initialization period, are *unready*; pods without a sample are *missing*.  Then, as
   Kubernetes does: on a scale-up unready pods count as 0 %, missing ones as 0 %; on a
   scale-down missing pods count as 100 % of their request (or the target if higher; the
   target itself for AverageValue); if that flips the direction or lands within the
   tolerance, nothing changes.  The largest proposal over all metrics wins; failed metrics
   are skipped unless all failed or the rest would scale down (then no change,
   ``ScalingActive=False`` with the first failure's reason, e.g. FailedGetResourceMetric).
   A ``ContainerResource`` metric is the same over one named container of each pod (its
   usage from PodMetrics against its own request; a pod whose metrics lack the container
   fails the metric, ``FailedGetContainerResourceMetric``).  ``Pods`` and ``Object`` metrics
   need ``custom.metrics.k8s.io`` and ``External`` ones ``external.metrics.k8s.io``; minik8s
   serves neither, so they fail as in a Kubernetes cluster without those APIs
   (``FailedGetPodsMetric`` "unable to get metric rps: unable to fetch metrics from custom
   metrics API: no custom metrics API (custom.metrics.k8s.io) registered",
   ``FailedGetObjectMetric``, ``FailedGetExternalMetric``), their ``currentMetrics`` entry
   ``{"type": ""}``, while the other metrics still scale up.
4. **Behavior** (``spec.behavior``): stabilization over the recommendations of each
   direction's ``stabilizationWindowSeconds`` (the size moves up only to the lowest
   recommendation of the scale-up window, down only to the highest of the scale-down
   window), then rate limits from the policies — ``Pods`` (add/remove N) or ``Percent``
   (N % of the replicas at the period's start) per ``periodSeconds``, counting the scale
   events this controller made in that period; ``selectPolicy`` Max takes the policy
   allowing the biggest change, Min the smallest, Disabled forbids that direction — then
   ``[minReplicas, maxReplicas]``.  Without ``spec.behavior``: the highest recommendation of
   the last ``--horizontal-pod-autoscaler-downscale-stabilization`` (300 s), scale-up at
   most ``max(2 × current, 4)``.  Conditions ``AbleToScale`` (ReadyForNewScale /
   ScaleUpStabilized / ScaleDownStabilized) and ``ScalingLimited`` (DesiredWithinRange /
   TooManyReplicas / TooFewReplicas / ScaleUpLimit / ScaleDownLimit) say what applied.
5. **Rescale** through the scale subresource; Normal event ``SuccessfulRescale`` "New size:
   4; reason: cpu resource utilization (percentage of request) above target" (or "All
   metrics below target"), ``AbleToScale=True SucceededRescale``, ``lastScaleTime``; a failed
   write is a Warning ``FailedRescale`` and ``AbleToScale=False FailedUpdateScale``.
6. **Status** (only when it changed): ``currentReplicas``, ``desiredReplicas``,
   ``currentMetrics`` (per metric, ``averageUtilization`` and/or ``averageValue``),
   ``lastScaleTime``, ``conditions``, ``observedGeneration``.

Recommendation and scale-event histories live in memory (as in Kubernetes): a restarted
controller starts with an empty history, seeded with the current size.
"""

from __future__ import annotations

from minik8s.controllers.podautoscaler.controller import HorizontalPodAutoscalerController
from minik8s.controllers.podautoscaler.options import AutoscalerOptions

__all__ = ["AutoscalerOptions", "HorizontalPodAutoscalerController"]
