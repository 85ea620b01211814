"""The apiserver's CRD controller: names, conditions, and the live rows of custom resources.

Runs inside every apiserver process (a task of the application's lifespan) and converges from a
watch of the CustomResourceDefinitions in storage, never from its own writes, so several
apiservers over one etcd agree:

- *Naming* (kube-apiextensions' ``NamingConditionController``): a CRD's plural, singular, kind,
  listKind and shortNames must not be taken in its group, by a built-in kind or by another CRD's
  accepted names.  Conditions ``NamesAccepted`` (True ``NoConflicts``, or False with
  ``PluralConflict``/``SingularConflict``/``KindConflict``/``ListKindConflict``/
  ``ShortNamesConflict`` and ``"x" is already in use``) and ``Established`` (True
  ``InitialNamesAccepted`` once the names are accepted; False ``NotAccepted`` otherwise);
  ``status.acceptedNames`` and ``status.storedVersions`` (the storage version added).
- *Serving*: a CRD whose stored status says Established gets one
  :class:`~minik8s.api.resourcetypes.ResourceType` per served version in the apiserver's registry, so
  discovery, the OpenAPI documents and the REST routes see it at once; the rows go when the CRD goes.
- *Deletion* (``customresourcecleanup.apiextensions.k8s.io``): a CRD being deleted gets
  ``Terminating`` True (``InstanceDeletionInProgress``), its custom resources are deleted (their
  own finalizers honoured), then the finalizer is removed and the CRD goes.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from typing import Any

from minik8s.api import errors
from minik8s.api.apiextensions import CLEANUP_FINALIZER, is_established
from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.resourcetypes import CustomResource, Registry, ResourceType
from minik8s.apiserver.resources import DeleteOptions, ListOptions, ResourceAPI

log = logging.getLogger("apiserver")


def _version_key(name: str) -> tuple[int, int, int, str]:
    """Kubernetes' version priority: GA > beta > alpha, higher numbers first; others last, by name."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", name)
    if not m:
        return (3, 0, 0, name)
    level = {"": 0, "beta": 1, "alpha": 2}[m.group(2) or ""]
    return (level, -int(m.group(1)), -int(m.group(3) or 0), name)


def resource_types(crd: Obj) -> list[ResourceType]:
    """The rows of a CRD's served versions (preferred version first), named by its accepted names."""
    spec = crd.get("spec") or {}
    names = (crd.get("status") or {}).get("acceptedNames") or spec.get("names") or {}
    versions = [ver for ver in spec.get("versions") or [] if isinstance(ver, dict)]
    storage = next((str(ver.get("name")) for ver in versions if ver.get("storage")), "")
    terminating = bool((crd.get("metadata") or {}).get("deletionTimestamp"))
    rows = []
    for ver in sorted(versions, key=lambda ver: _version_key(str(ver.get("name")))):
        if not ver.get("served") and ver.get("name") != storage:
            continue
        subs = ver.get("subresources") or {}
        scale = subs.get("scale") or {}
        custom = CustomResource(
            crd=str((crd.get("metadata") or {}).get("name")), storage_version=storage,
            schema_json=json.dumps(((ver.get("schema") or {}).get("openAPIV3Schema")) or {}, sort_keys=True),
            columns_json=json.dumps(ver.get("additionalPrinterColumns") or []),
            spec_replicas_path=str(scale.get("specReplicasPath") or ""),
            status_replicas_path=str(scale.get("statusReplicasPath") or ""),
            label_selector_path=str(scale.get("labelSelectorPath") or ""),
            terminating=terminating)
        sub_names = {name for name in ("status", "scale") if subs.get(name) is not None}
        rows.append(ResourceType(
            str(spec.get("group")), str(ver.get("name")), str(names.get("kind")), str(names.get("plural")),
            str(names.get("singular") or str(names.get("kind")).lower()), spec.get("scope") == "Namespaced",
            _model(), short_names=tuple(names.get("shortNames") or ()), subresources=frozenset(sub_names),
            categories=tuple(names.get("categories") or ()), custom=custom))
    return rows


def _model() -> Any:
    from minik8s.api.apiextensions import CustomResourceObject

    return CustomResourceObject


class CRDController:
    """Keeps ``registry`` (the apiserver's table of kinds) in step with the CRDs in storage."""

    def __init__(self, api: ResourceAPI, registry: Registry, builtin: list[ResourceType]) -> None:
        self.api = api
        self.registry = registry
        self.builtin = list(builtin)
        self.crd_rt = next(rt for rt in builtin if rt.kind == "CustomResourceDefinition" and rt.custom is None)
        self.crds: dict[str, Obj] = {}
        self.served: dict[str, list[ResourceType]] = {}
        self._cleanups: dict[str, asyncio.Task[None]] = {}
        #: set once the first list of CRDs has been applied to the registry
        self.synced = asyncio.Event()

    # ------------------------------------------------------------------ the loop
    async def run(self, stop: asyncio.Event) -> None:
        """Watch CRDs until ``stop``; relist after any break of the watch."""
        while not stop.is_set():
            try:
                await self._watch(stop)
            except errors.APIError as exc:
                log.info("apiserver crd-controller watch ended: %s", exc.message)
            except Exception:  # noqa: BLE001 - the loop must outlive a bad object
                log.exception("apiserver crd-controller failed; relisting")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.5)
        for task in self._cleanups.values():
            task.cancel()

    async def _watch(self, stop: asyncio.Event) -> None:
        listed = await self.api.list(self.crd_rt, None, ListOptions())
        self.crds = {o["metadata"]["name"]: o for o in listed["items"]}
        for name in list(self.served):
            if name not in self.crds:
                self._serve(name, None)
        for obj in list(self.crds.values()):
            await self._reconcile(obj)
        self.synced.set()
        events = await self.api.watch(self.crd_rt, None, ListOptions(
            resource_version=listed["metadata"]["resourceVersion"]))
        stopping = asyncio.ensure_future(stop.wait())
        try:
            while True:
                nxt = asyncio.ensure_future(events.__anext__())
                done, _ = await asyncio.wait({nxt, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if stopping in done:
                    nxt.cancel()
                    return
                try:
                    ev = nxt.result()
                except StopAsyncIteration:
                    return
                obj = ev.get("object") or {}
                if ev.get("type") == "ERROR":
                    raise errors.from_status(int(obj.get("code") or 500), obj)
                name = str((obj.get("metadata") or {}).get("name") or "")
                if not name:
                    continue
                if ev.get("type") == "DELETED":
                    self.crds.pop(name, None)
                    self._serve(name, None)
                    for other in list(self.crds.values()):  # names it held may now be free
                        await self._reconcile(other)
                else:
                    self.crds[name] = obj
                    await self._reconcile(obj)
        finally:
            stopping.cancel()
            with contextlib.suppress(Exception):
                await events.aclose()  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ one CRD
    async def _reconcile(self, obj: Obj) -> None:
        name = obj["metadata"]["name"]
        self._serve(name, obj if is_established(obj) else None)
        if obj["metadata"].get("deletionTimestamp"):
            if name not in self._cleanups or self._cleanups[name].done():
                self._cleanups[name] = asyncio.get_running_loop().create_task(self._cleanup(obj))
            return
        status = self.desired_status(obj)
        if status != obj.get("status"):
            desired = {**obj, "status": status}
            if is_established(desired):  # served before any client can read it Established
                self._serve(name, desired)
            await self._write_status(obj, status)

    def _serve(self, name: str, obj: Obj | None) -> None:
        rows = resource_types(obj) if obj is not None else []
        old = self.served.get(name, [])
        if rows != old:
            self.registry.replace(old, rows)
            log.info("apiserver crd=%s serving %s", name, ",".join(rt.version for rt in rows) or "nothing")
            self._cache(old, rows)
        if rows:
            self.served[name] = rows
        else:
            self.served.pop(name, None)

    def _cache(self, old: list[ResourceType], rows: list[ResourceType]) -> None:
        """Start the watch cache of a kind now served (before a client lists it, so that its first
        watch never starts before the cache), and let go of the cache of a kind no longer served
        (its watchers are closed). Every version of a kind shares one cache: one storage prefix."""
        cacher = self.api.cacher
        if cacher is None:
            return
        wanted = {res for rt in rows if (res := ResourceAPI.cached_resource(rt)) is not None}
        for rt in old:
            res = ResourceAPI.cached_resource(rt)
            if res is not None and res[0] not in {prefix for prefix, _ in wanted}:
                cacher.release(res[0])
        for prefix, resource in wanted:
            cacher.get(prefix, resource)

    def _taken(self, obj: Obj) -> tuple[set[str], set[str]]:
        """(resource names, kind names) already in use in ``obj``'s group by others."""
        group = (obj.get("spec") or {}).get("group")
        resources: set[Any] = set()
        kinds: set[Any] = set()
        for rt in self.builtin:
            if rt.group == group:
                resources |= {rt.plural, rt.singular, *rt.short_names}
                kinds |= {rt.kind, rt.list_kind}
        for other in self.crds.values():
            if other["metadata"]["name"] == obj["metadata"]["name"] or (other.get("spec") or {}).get("group") != group:
                continue
            accepted = (other.get("status") or {}).get("acceptedNames") or {}
            resources |= {accepted.get("plural"), accepted.get("singular"), *(accepted.get("shortNames") or [])}
            kinds |= {accepted.get("kind"), accepted.get("listKind")}
        resources.discard(None)
        resources.discard("")
        kinds.discard(None)
        kinds.discard("")
        return resources, kinds

    def desired_status(self, obj: Obj) -> Obj:
        """The status the naming and establishing controllers give ``obj``."""
        spec = obj.get("spec") or {}
        requested = spec.get("names") or {}
        status = copy.deepcopy(obj.get("status") or {})
        accepted = dict(status.get("acceptedNames") or {})
        resources, kinds = self._taken(obj)
        conflict: tuple[str, str] | None = None

        def check(field: str, reason: str, taken: set[str]) -> None:
            nonlocal conflict
            value = requested.get(field)
            if value and value != accepted.get(field) and value in taken:
                conflict = conflict or (reason, f'"{value}" is already in use')
            elif value:
                accepted[field] = value

        check("plural", "PluralConflict", resources)
        check("singular", "SingularConflict", resources)
        shorts = requested.get("shortNames") or []
        clashing = [s for s in shorts if s in resources and s not in (accepted.get("shortNames") or [])]
        if clashing:
            conflict = conflict or ("ShortNamesConflict", f'"{clashing[0]}" is already in use')
        elif shorts:
            accepted["shortNames"] = list(shorts)
        else:
            accepted.pop("shortNames", None)
        check("kind", "KindConflict", kinds)
        check("listKind", "ListKindConflict", kinds)
        if requested.get("categories"):
            accepted["categories"] = list(requested["categories"])
        else:
            accepted.pop("categories", None)
        accepted.setdefault("plural", "")
        accepted.setdefault("kind", "")
        conditions = [dict(c) for c in status.get("conditions") or []]
        if conflict is None:
            self._set(conditions, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
            if not is_established(obj):
                self._set(conditions, "Established", "True", "InitialNamesAccepted",
                          "the initial names have been accepted")
        else:
            self._set(conditions, "NamesAccepted", "False", *conflict)
            if not is_established(obj):
                self._set(conditions, "Established", "False", "NotAccepted", "not all names are accepted")
        status["conditions"] = conditions
        status["acceptedNames"] = accepted
        stored = list(status.get("storedVersions") or [])
        storage = next((v.get("name") for v in spec.get("versions") or [] if v.get("storage")), None)
        if storage and storage not in stored:
            stored.append(storage)
        status["storedVersions"] = stored
        return status

    @staticmethod
    def _set(conditions: list[Obj], kind: str, status: str, reason: str, message: str) -> None:
        for cond in conditions:
            if cond.get("type") == kind:
                if cond.get("status") != status:
                    cond["lastTransitionTime"] = now_rfc3339()
                cond.update(status=status, reason=reason, message=message)
                return
        conditions.append({"type": kind, "status": status, "lastTransitionTime": now_rfc3339(),
                           "reason": reason, "message": message})

    async def _write_status(self, obj: Obj, status: Obj) -> None:
        body = dict(obj, status=status)
        try:
            await self.api.update(self.crd_rt, None, obj["metadata"]["name"], body, subresource="status",
                                  manager="kube-apiserver")
        except (errors.Conflict, errors.NotFound):
            pass  # another apiserver (or the user) wrote first: the watch brings the next state
        except errors.Invalid as exc:
            log.warning("apiserver crd=%s status refused: %s", obj["metadata"]["name"], exc.message)

    # ------------------------------------------------------------------ deletion
    async def _cleanup(self, obj: Obj) -> None:
        name = obj["metadata"]["name"]
        try:
            await self._terminating(name)
            rows = resource_types(dict(obj, status=dict(obj.get("status") or {}, acceptedNames=(
                obj.get("spec") or {}).get("names"))))
            storage = next((rt for rt in rows if rt.custom and rt.version == rt.custom.storage_version), None)
            while storage is not None:
                items, _, _ = await self.api.store.list(storage.storage_prefix())
                if not items:
                    break
                for item in items:
                    meta = item.get("metadata") or {}
                    if meta.get("deletionTimestamp"):
                        continue
                    with contextlib.suppress(errors.NotFound, errors.Conflict):
                        await self.api.delete(storage, meta.get("namespace"), meta["name"], DeleteOptions())
                await asyncio.sleep(0.2)
            await self._drop_finalizer(name)
        except errors.NotFound:
            pass
        except Exception:  # noqa: BLE001
            log.exception("apiserver crd=%s cleanup failed", name)

    async def _terminating(self, name: str) -> None:
        current = await self.api.get(self.crd_rt, None, name)
        conditions = [dict(c) for c in (current.get("status") or {}).get("conditions") or []]
        self._set(conditions, "Terminating", "True", "InstanceDeletionInProgress",
                  "CustomResource deletion is in progress")
        if conditions != (current.get("status") or {}).get("conditions"):
            await self._write_status(current, dict(current.get("status") or {}, conditions=conditions))

    async def _drop_finalizer(self, name: str) -> None:
        for _ in range(20):
            current = await self.api.get(self.crd_rt, None, name)
            finalizers = list(current["metadata"].get("finalizers") or [])
            if CLEANUP_FINALIZER not in finalizers:
                return
            body = copy.deepcopy(current)
            body["metadata"]["finalizers"] = [f for f in finalizers if f != CLEANUP_FINALIZER]
            try:
                await self.api.update(self.crd_rt, None, name, body, manager="kube-apiserver")
                return
            except errors.Conflict:
                continue
