"""``POST pods/{name}/eviction``: delete a pod unless that would break its PodDisruptionBudget.

Kubernetes' ``pkg/registry/core/pod/storage/eviction.go``, for a policy/v1 (or v1beta1) Eviction body:

* a pod that is terminal (Succeeded, Failed), Pending or already being deleted is deleted at once,
  no budget asked (a running pod's delete carries its resourceVersion as a precondition, so a pod
  that changed meanwhile is read again);
* no budget selects the pod: it is deleted (with the Eviction's ``deleteOptions``);
* more than one: 500 ``This pod has more than one PodDisruptionBudget, which the eviction
  subresource does not support.``;
* one: a pod that is not Ready is deleted without spending the budget when the budget's
  ``unhealthyPodEvictionPolicy`` is AlwaysAllow, or (IfHealthyBudget, the default) when
  ``currentHealthy >= desiredHealthy > 0``; otherwise the budget must allow a disruption: with
  ``disruptionsAllowed`` 0 the answer is 429 TooManyRequests (``Cannot evict pod as it would violate
  the pod's disruption budget.``, a ``DisruptionBudget`` cause naming what the budget needs), with a
  status not yet observed for its generation 429 as well (retry after 10 s); else
  ``disruptionsAllowed`` is decremented and the pod recorded in ``disruptedPods`` with an
  optimistic-concurrency status update (conflicts re-read the budget, up to 20 times), then the pod
  is deleted.

Before each deletion (not a dry run) the pod gets the ``DisruptionTarget`` condition (reason
``EvictionByEvictionAPI``, message ``Eviction API: evicting``) through its status, as Kubernetes'
``addConditionAndDeletePod`` does; a resourceVersion precondition then names the version written.

Answers ``Status`` Success (201) when the pod was deleted.
"""

from __future__ import annotations

import copy
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from minik8s.api import errors
from minik8s.api import policy as p
from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.resourcetypes import ResourceType
from minik8s.apiserver.httpio import KubeJSONResponse, delete_options, read_body
from minik8s.apiserver.resources import DeleteOptions, ListOptions

EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")
#: ``EvictionsRetry.Steps``: how often a conflicting budget update or pod delete is tried again.
RETRIES = 20
TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget."
MORE_THAN_ONE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def too_many_requests(cause: str, retry_after: int = 0) -> errors.TooManyRequests:
    """The 429 of a budget that refuses (``NewTooManyRequests`` with a ``DisruptionBudget`` cause)."""
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return errors.TooManyRequests(TOO_MANY, details)


def can_ignore_budget(pod: Obj) -> bool:
    """``canIgnorePDB``: terminal, Pending or already terminating pods are deleted without a budget."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _enforce_resource_version(pod: Obj) -> bool:
    """``shouldEnforceResourceVersion``: not for terminal or terminating pods."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not (pod.get("metadata") or {}).get("deletionTimestamp")


class Evictions:
    """The ``pods/eviction`` subresource over the generic resource API (``api``)."""

    def __init__(self, api: Any) -> None:
        self.api = api

    async def handle(self, request: Request, rt: ResourceType, namespace: str, name: str) -> Response:
        if request.method != "POST":
            raise errors.MethodNotAllowed(f"{request.method} is not supported on pods/eviction")
        body = await read_body(request)
        if not isinstance(body, dict):
            raise errors.BadRequest("the Eviction body must be an object")
        if body.get("kind") not in (None, "Eviction") or body.get("apiVersion") not in (None, *EVICTION_VERSIONS):
            raise errors.BadRequest(f'not a Eviction object: {body.get("apiVersion")}, Kind={body.get("kind")}')
        if (body.get("metadata") or {}).get("name") != name:
            raise errors.BadRequest("name in URL does not match name in Eviction object")
        opts = delete_options(request.query_params, body.get("deleteOptions"))
        status = await self.evict(rt, namespace, name, opts)
        return KubeJSONResponse(status, status_code=int(status.get("code") or 201))

    async def evict(self, rt: ResourceType, namespace: str, name: str, opts: DeleteOptions) -> Obj:
        """Evict one pod (the module's rules); returns the Status to answer, raises the API errors."""
        pod: Obj = {}
        for attempt in range(RETRIES):
            pod = await self.api.get(rt, namespace, name)
            if not can_ignore_budget(pod):
                break
            chosen = opts
            if _enforce_resource_version(pod) and not opts.precondition_resource_version:
                chosen = copy.copy(opts)
                chosen.precondition_resource_version = pod["metadata"].get("resourceVersion")
            try:
                await self._mark_and_delete(rt, namespace, name, chosen)
            except errors.Conflict:
                if opts.precondition_resource_version or attempt == RETRIES - 1:
                    raise
                continue
            return errors.status_object("Success", code=201)

        pdb_rt = self.api.registry.by_kind("policy/v1", "PodDisruptionBudget")
        budgets = [b for b in (await self.api.list(pdb_rt, namespace, ListOptions())).get("items") or []
                   if p.selects(b, pod) and (b.get("spec") or {}).get("selector")]
        if len(budgets) > 1:
            return errors.status_object("Failure", MORE_THAN_ONE, code=500)
        guard = False
        if budgets:
            pdb = budgets[0]
            spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
            desired, current = status.get("desiredHealthy") or 0, status.get("currentHealthy") or 0
            if not p.pod_is_ready(pod) and (spec.get("unhealthyPodEvictionPolicy") == p.ALWAYS_ALLOW
                                            or current >= desired > 0):
                guard = True
            else:
                await self._check_and_decrement(pdb_rt, pdb, name, opts.dry_run)
        chosen = opts
        if guard:
            chosen = copy.copy(opts)
            chosen.precondition_resource_version = pod["metadata"].get("resourceVersion")
        try:
            await self._mark_and_delete(rt, namespace, name, chosen)
        except errors.Conflict:
            if guard and not opts.precondition_resource_version:
                raise too_many_requests(f"The disruption budget {budgets[0]['metadata']['name']} is still "
                                        "being processed by the server.", 10) from None
            raise
        return errors.status_object("Success", code=201)

    async def _mark_and_delete(self, rt: ResourceType, namespace: str, name: str, opts: DeleteOptions) -> None:
        """``addConditionAndDeletePod``: the ``DisruptionTarget`` condition on the latest pod (its
        preconditions checked: 409 when they do not hold), then the delete."""
        if not opts.dry_run:
            for attempt in range(RETRIES):
                latest = await self.api.get(rt, namespace, name)
                meta = latest["metadata"]
                uid = opts.precondition_uid
                if uid and uid != meta.get("uid"):
                    raise errors.Conflict(f'Operation cannot be fulfilled on Pod "{name}": the UID in the precondition '
                                          f"({uid}) does not match the UID in record ({meta.get('uid')}). "
                                          "The object might have been deleted and then recreated")
                wanted = opts.precondition_resource_version
                if wanted and wanted != meta.get("resourceVersion"):
                    raise errors.Conflict(f'Operation cannot be fulfilled on Pod "{name}": the ResourceVersion in the '
                                          f"precondition ({wanted}) does not match the ResourceVersion in record "
                                          f"({meta.get('resourceVersion')}). The object might have been modified")
                marked = p.with_disruption_target(latest, *p.EVICTION_BY_EVICTION_API, now_rfc3339())
                try:
                    written = await self.api.update(rt, namespace, name, marked, "status")
                except errors.Conflict:
                    if attempt == RETRIES - 1:
                        raise
                    continue
                if wanted:
                    opts = copy.copy(opts)
                    opts.precondition_resource_version = written["metadata"].get("resourceVersion")
                break
        await self.api.delete(rt, namespace, name, opts)

    async def _check_and_decrement(self, pdb_rt: ResourceType, pdb: Obj, pod_name: str, dry_run: bool) -> None:
        """Spend one disruption of ``pdb`` on ``pod_name`` (``checkAndDecrement``), re-reading the
        budget after a conflict; raises the 429/403 of a budget that refuses."""
        meta = pdb["metadata"]
        for attempt in range(RETRIES):
            if attempt:
                pdb = await self.api.get(pdb_rt, meta.get("namespace"), meta["name"])
            status = pdb.get("status") or {}
            name = pdb["metadata"]["name"]
            if (status.get("observedGeneration") or 0) < (pdb["metadata"].get("generation") or 0):
                raise too_many_requests(f"The disruption budget {name} is still being processed by the server.", 10)
            allowed = status.get("disruptionsAllowed") or 0
            if allowed < 0:
                raise errors.Forbidden(f'poddisruptionbudgets.policy "{name}" is forbidden: '
                                       "pdb disruptions allowed is negative")
            if len(status.get("disruptedPods") or {}) > p.MAX_DISRUPTED_POD_SIZE:
                raise errors.Forbidden(f'poddisruptionbudgets.policy "{name}" is forbidden: DisruptedPods map too '
                                       "big - too many evictions not confirmed by PDB controller")
            if allowed == 0:
                raise too_many_requests(f"The disruption budget {name} needs {status.get('desiredHealthy') or 0} "
                                        f"healthy pods and has {status.get('currentHealthy') or 0} currently")
            new = copy.deepcopy(pdb)
            new_status = new.setdefault("status", {})
            new_status["disruptionsAllowed"] = allowed - 1
            now = now_rfc3339()
            if allowed - 1 == 0:
                p.disruption_condition(new_status, new_status.get("observedGeneration"), now)
            if dry_run:
                return
            new_status.setdefault("disruptedPods", {})[pod_name] = now
            try:
                await self.api.update(pdb_rt, meta.get("namespace"), meta["name"], new, "status")
            except errors.Conflict:
                continue
            return
        raise errors.Timeout(f'couldn\'t update PodDisruptionBudget "{meta["name"]}" due to conflicts',
                             {"retryAfterSeconds": 10})
