"""The HPA algorithm over plain inputs and a clock (Kubernetes' ``horizontal.go`` without the I/O)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable

from minik8s.api.base import Obj
from minik8s.api.quantity import format_milli, milli_value
from minik8s.api.selectors import LabelSelector
from minik8s.controllers.podautoscaler.behavior import (
    History,
    Recommendation,
    limit_by_behavior,
    limit_legacy,
    stabilize,
    stabilize_legacy,
    store_scale_event,
)
from minik8s.controllers.podautoscaler.options import AutoscalerOptions
from minik8s.controllers.podautoscaler.replicas import (
    MetricError,
    PodMetric,
    Proposal,
    pod_metrics_for,
    raw_resource_replicas,
    resource_replicas,
)
from minik8s.controllers.podautoscaler.status import Event, MetricFailure, Plan, hpa_status, rfc3339, set_condition
from minik8s.controllers.podautoscaler.unserved import unserved_metric_error


class Autoscaler:
    """The HPA algorithm over plain inputs, with per-HPA histories and an injectable ``clock``
    (epoch seconds): :meth:`plan` then, when ``plan.rescale``, :meth:`finish`."""

    def __init__(self, options: AutoscalerOptions | None = None, clock: Callable[[], float] = time.time) -> None:
        self.options = options or AutoscalerOptions()
        self.clock = clock
        self.histories: dict[str, History] = {}

    def forget(self, key: str) -> None:
        """Drop the history of a deleted HPA."""
        self.histories.pop(key, None)

    # ------------------------------------------------------------------ one metric
    def _metric(self, spec: Obj, current: int, pods: list[Obj], pod_metrics: list[Obj] | str,
                now: float) -> tuple[Proposal, str, Obj]:
        """One Resource or ContainerResource metric → (proposal, metric name for messages,
        MetricStatus) — ``computeStatusForResourceMetricGeneric``; raises MetricError with
        Kubernetes' message."""
        is_container = spec.get("type") == "ContainerResource"
        source = (spec.get("containerResource") if is_container else spec.get("resource")) or {}
        resource = str(source.get("name") or "")
        container = str(source.get("container") or "") if is_container else None
        target = source.get("target") or {}
        average_value = target.get("averageValue")

        def fetch() -> dict[str, PodMetric]:
            if isinstance(pod_metrics, str):
                raise MetricError(f"unable to get metrics for resource {resource}: unable to fetch metrics "
                                  f"from resource metrics API: {pod_metrics}")
            if not pod_metrics:
                raise MetricError(f"unable to get metrics for resource {resource}: no metrics returned from "
                                  "resource metrics API")
            try:
                return pod_metrics_for(pod_metrics, resource, container)
            except MetricError as exc:
                raise MetricError(f"unable to get metrics for resource {resource}: {exc}") from None

        def metric_status(current_value: Obj) -> Obj:
            if container is None:
                return {"type": "Resource", "resource": {"name": resource, "current": current_value}}
            return {"type": "ContainerResource", "containerResource": {"name": resource, "container": container,
                                                                        "current": current_value}}

        if average_value is not None:
            try:
                proposal = raw_resource_replicas(current, milli_value(average_value), resource, pods, fetch(),
                                                 now, self.options)
            except (MetricError, ValueError) as exc:
                raise MetricError(f"failed to get {resource} usage: {exc}") from None
            return proposal, f"{resource} resource", metric_status({"averageValue": format_milli(proposal.average)})
        if target.get("averageUtilization") is None:
            raise MetricError("invalid resource metric source: neither an average utilization target nor an "
                              "average value (usage) target was set")
        try:
            proposal = resource_replicas(current, int(target["averageUtilization"]), resource, pods, fetch(), now,
                                         self.options, container)
        except (MetricError, ValueError) as exc:
            raise MetricError(f"failed to get {resource} utilization: {exc}") from None
        kind = "container resource" if container is not None else "resource"
        return proposal, f"{resource} {kind} utilization (percentage of request)", metric_status({
            "averageUtilization": proposal.utilization, "averageValue": format_milli(proposal.average)})

    def _outcome(self, spec: Obj, current: int, pods: list[Obj], pod_metrics: list[Obj] | str, now: float,
                 namespace: str) -> tuple[Proposal, str, Obj] | MetricFailure:
        """``computeReplicasForMetric``: one metric's (proposal, name, status), or why it failed
        (condition reason, error, and the error as the sync reports it)."""
        kind = spec.get("type")
        unserved = unserved_metric_error(spec, namespace)
        if unserved is not None:
            return unserved
        if kind not in ("Resource", "ContainerResource"):
            error = f'unknown metric source type "{kind}"'
            return MetricFailure("InvalidMetricSourceType", error, error)
        try:
            return self._metric(spec, current, pods, pod_metrics, now)
        except MetricError as exc:
            if kind == "Resource":
                name = (spec.get("resource") or {}).get("name")
                return MetricFailure("FailedGetResourceMetric", str(exc),
                                     f"failed to get {name} resource metric value: {exc}")
            container = (spec.get("containerResource") or {}).get("container")
            return MetricFailure("FailedGetContainerResourceMetric", str(exc),
                                 f"failed to get {container} container metric value: {exc}")

    def _metrics(self, hpa: Obj, current: int, selector_text: str, namespace_pods: list[Obj],
                 pod_metrics: list[Obj] | str, now: float, cond: Callable[[str, str, str, str], None],
                 events: list[Event]) -> tuple[int, str, list[Obj], str | None]:
        """``computeReplicasForMetrics``: (replicas or -1, metric name, statuses, error)."""
        if not selector_text:
            events.append(("Warning", "SelectorRequired", "selector is required"))
            cond("ScalingActive", "False", "InvalidSelector", "the HPA target's scale is missing a selector")
            return -1, "", [], "selector is required"
        try:
            selector = LabelSelector.parse(selector_text)
        except ValueError as exc:
            message = f"couldn't convert selector into a corresponding internal selector object: {exc}"
            events.append(("Warning", "InvalidSelector", message))
            cond("ScalingActive", "False", "InvalidSelector", message)
            return -1, "", [], message
        pods = [p for p in namespace_pods if selector.matches((p.get("metadata") or {}).get("labels") or {})]
        specs = (hpa.get("spec") or {}).get("metrics") or []
        statuses: list[Obj] = [{"type": ""} for _ in specs]
        replicas, name, invalid = 0, "", 0
        first: MetricFailure | None = None
        namespace = str((hpa.get("metadata") or {}).get("namespace") or "")
        for i, spec in enumerate(specs):
            outcome = self._outcome(spec, current, pods, pod_metrics, now, namespace)
            if isinstance(outcome, MetricFailure):
                events.append(("Warning", outcome.reason, outcome.error))
                invalid += 1
                first = first or outcome
                continue
            proposal, metric_name, statuses[i] = outcome
            if replicas == 0 or proposal.replicas > replicas:
                replicas, name = proposal.replicas, metric_name
        error = None
        if first is not None:
            error = f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first.outer}"
        if first is not None and (invalid >= len(specs) or replicas < current):
            cond("ScalingActive", "False", first.reason,
                 f"the HPA was unable to compute the replica count: {first.error}")
            return -1, "", statuses, error
        cond("ScalingActive", "True", "ValidMetricFound",
             f"the HPA was able to successfully calculate a replica count from {name}")
        return replicas, name, statuses, error

    # ------------------------------------------------------------------ reconcile
    def plan(self, key: str, hpa: Obj, scale: Obj | None, scale_error: str | None, namespace_pods: list[Obj],
             pod_metrics: list[Obj] | str) -> Plan:
        """Decide one sync of ``hpa`` (``reconcileAutoscaler``).

        ``scale`` is the target's autoscaling/v1 Scale (None with ``scale_error`` when it could
        not be read); ``namespace_pods`` the pods of the HPA's namespace (the selector is
        applied here); ``pod_metrics`` the PodMetrics items of the selected pods, or the error
        text when the metrics API failed.
        """
        now = self.clock()
        stamp = rfc3339(now)
        spec = hpa.get("spec") or {}
        old = copy.deepcopy(hpa.get("status") or {})
        generation = (hpa.get("metadata") or {}).get("generation")
        conditions: list[Obj] = list(old.get("conditions") or [])
        events: list[Event] = []

        def cond(ctype: str, status: str, reason: str, message: str) -> None:
            nonlocal conditions
            conditions = set_condition(conditions, ctype, status, reason, message, stamp)

        ref = spec.get("scaleTargetRef") or {}
        reference = f"{ref.get('kind')}/{(hpa.get('metadata') or {}).get('namespace')}/{ref.get('name')}"
        if scale is None:
            events.append(("Warning", "FailedGetScale", scale_error or "unknown error"))
            cond("AbleToScale", "False", "FailedGetScale",
                 f"the HPA controller was unable to get the target's current scale: {scale_error}")
            status = dict(old, conditions=conditions)
            return Plan(status, events=events,
                        error=f"failed to query scale subresource for {reference}: {scale_error}")
        cond("AbleToScale", "True", "SucceededGetScale",
             "the HPA controller was able to get the target's current scale")
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        history = self.histories.setdefault(key, History())
        if not history.recommendations:
            history.recommendations.append(Recommendation(now, current))
        min_replicas = int(spec["minReplicas"]) if spec.get("minReplicas") is not None else 1
        max_replicas = int(spec.get("maxReplicas") or 0)
        behavior = spec.get("behavior")
        metrics: list[Obj] = []
        desired, reason, rescale, error = 0, "", True, None
        if current == 0 and min_replicas != 0:
            rescale = False
            cond("ScalingActive", "False", "ScalingDisabled", "scaling is disabled since the replica count of the "
                                                              "target is zero")
        elif current > max_replicas:
            desired, reason = max_replicas, "Current number of replicas above Spec.MaxReplicas"
        elif current < min_replicas:
            desired, reason = min_replicas, "Current number of replicas below Spec.MinReplicas"
        else:
            selector_text = str((scale.get("status") or {}).get("selector") or "")
            proposal, metric_name, metrics, error = self._metrics(hpa, current, selector_text, namespace_pods,
                                                                  pod_metrics, now, cond, events)
            if proposal == -1:
                message = error or "no metrics"
                events.append(("Warning", "FailedComputeMetricsReplicas", message))
                status = hpa_status(current, int(old.get("desiredReplicas") or 0), metrics, conditions,
                                 old.get("lastScaleTime"), generation)
                return Plan(status, current, current, events=events, metrics=metrics,
                            error=f"failed to compute desired number of replicas based on listed metrics for "
                                  f"{reference}: {message}")
            if proposal > desired:
                desired = proposal
            if desired > current:
                reason = f"{metric_name} above target"
            elif desired < current:
                reason = "All metrics below target"
            desired = self._normalize(history, behavior, current, desired, min_replicas, max_replicas, now, cond)
            rescale = desired != current
        if not rescale:
            desired = current
        status = hpa_status(current, desired, metrics, conditions, old.get("lastScaleTime"), generation)
        return Plan(status, current, desired, rescale, reason, metrics, events, error)

    def _normalize(self, history: History, behavior: Obj | None, current: int, desired: int, min_replicas: int,
                   max_replicas: int, now: float, cond: Callable[[str, str, str, str], None]) -> int:
        if behavior is None:
            stabilized = stabilize_legacy(history, desired, self.options.downscale_stabilization, now)
            if stabilized != desired:
                cond("AbleToScale", "True", "ScaleDownStabilized", "recent recommendations were higher than current "
                                                                    "one, applying the highest recent recommendation")
            else:
                cond("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
            limited, reason, message = limit_legacy(current, stabilized, min_replicas, max_replicas)
        else:
            scale_up = behavior.get("scaleUp") or {}
            scale_down = dict(behavior.get("scaleDown") or {})
            if scale_down.get("stabilizationWindowSeconds") is None:  # maybeInitScaleDownStabilizationWindow
                scale_down["stabilizationWindowSeconds"] = int(self.options.downscale_stabilization)
            stabilized, reason, message = stabilize(history, desired, current, scale_up, scale_down, now)
            if stabilized != desired:
                cond("AbleToScale", "True", reason, message)
            else:
                cond("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
            limited, reason, message = limit_by_behavior(history, stabilized, current, min_replicas, max_replicas,
                                                         scale_up, scale_down, now)
        cond("ScalingLimited", "True" if limited != stabilized else "False", reason, message)
        return limited

    def finish(self, key: str, hpa: Obj, plan: Plan, error: str | None) -> Plan:
        """Complete ``plan`` after the scale write: success (``error`` None) records the scale event,
        the SuccessfulRescale event and ``lastScaleTime``; a failure the FailedRescale event and
        ``AbleToScale=False``.  Returns the updated plan."""
        now = self.clock()
        stamp = rfc3339(now)
        spec = hpa.get("spec") or {}
        old = hpa.get("status") or {}
        generation = (hpa.get("metadata") or {}).get("generation")
        conditions = list(plan.status.get("conditions") or [])
        if error is not None:
            plan.events.append(("Warning", "FailedRescale", f"New size: {plan.desired_replicas}; reason: "
                                                            f"{plan.reason}; error: {error}"))
            conditions = set_condition(conditions, "AbleToScale", "False", "FailedUpdateScale",
                                       f"the HPA controller was unable to update the target scale: {error}", stamp)
            plan.status = hpa_status(plan.current_replicas, int(old.get("desiredReplicas") or 0), plan.metrics,
                                  conditions, old.get("lastScaleTime"), generation)
            ref = spec.get("scaleTargetRef") or {}
            plan.error = f"failed to rescale {ref.get('kind')}/{ref.get('name')}: {error}"
            return plan
        conditions = set_condition(conditions, "AbleToScale", "True", "SucceededRescale",
                                   f"the HPA controller was able to update the target scale to {plan.desired_replicas}",
                                   stamp)
        plan.events.append(("Normal", "SuccessfulRescale", f"New size: {plan.desired_replicas}; reason: {plan.reason}"))
        store_scale_event(self.histories.setdefault(key, History()), spec.get("behavior"), plan.current_replicas,
                          plan.desired_replicas, now)
        plan.status = hpa_status(plan.current_replicas, plan.desired_replicas, plan.metrics, conditions, stamp,
                              generation)
        return plan

