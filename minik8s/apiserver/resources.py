"""The generic REST verbs over storage: create, get, list, update, patch, delete, watch.

Driven by a :class:`~minik8s.api.resourcetypes.ResourceType` row and its
:class:`~minik8s.apiserver.strategies.base.Strategy`, so a new kind needs no new code
here.  Semantics follow kube-apiserver's generic registry (``genericregistry.Store``):
resourceVersion preconditions (stale → 409 Conflict), no-op updates are not
written, graceful deletion sets ``deletionTimestamp``, an object whose
finalizers are gone after deletion started is removed.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import copy
import datetime as dt
import json
import logging
import random
import secrets
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pydantic

from minik8s.api import errors
from minik8s.api.base import Obj, ObjList, now_rfc3339
from minik8s.api.meta import ObjectMeta
from minik8s.api.patch import json_merge_patch, json_patch, strategic_merge_patch
from minik8s.api.resourcetypes import Registry, ResourceType
from minik8s.api.schema import FieldTypeError, Schemas
from minik8s.api.selectors import FieldSelector, LabelSelector
from minik8s.apiserver import (
    admission,
    cacher,
    certificateadmission,
    fieldmanager,
    limitranger,
    podsecurity,
    priority,
    resourcequota,
)
from minik8s.apiserver.protobuf import integer_range_causes
from minik8s.apiserver.storage import Store
from minik8s.apiserver.strategies import GENERIC, Strategy, default_strategies
from minik8s.apiserver.strategies.pod import PodStrategy
from minik8s.apiserver.unhonoured import unhonoured_warnings
from minik8s.apiserver.wireorder import in_wire_order

log = logging.getLogger("apiserver")

#: Annotation of the BOOKMARK that ends a watch-list's initial events.
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
#: ObjectMeta fields that Kubernetes serialises with ``omitempty`` (an empty one is dropped).
OMIT_EMPTY_METADATA = ("labels", "annotations", "finalizers", "ownerReferences", "managedFields")
_NAME_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' rand.String alphabet (no vowels)


#: Seconds a write without a precondition keeps retrying on conflicts (kube-apiserver's request timeout).
RETRY_SECONDS = 60.0


async def _conflict_retries() -> AsyncIterator[int]:
    """Attempts of a read-modify-write: the first ones at once, later ones after a short random
    pause (writers that collide spread out), until :data:`RETRY_SECONDS` have passed.

    A write without a resourceVersion precondition retries its conflicts here, as
    Kubernetes' ``GuaranteedUpdate`` does, instead of answering a 409 the client did not ask for."""
    deadline = asyncio.get_running_loop().time() + RETRY_SECONDS
    attempt = 0
    while True:
        yield attempt
        attempt += 1
        if asyncio.get_running_loop().time() > deadline:
            return
        if attempt >= 3:
            await asyncio.sleep(random.uniform(0, 0.002 * min(attempt, 50)))


def random_suffix(n: int = 5) -> str:
    """``n`` characters from Kubernetes' name-suffix alphabet (as in ``generateName``)."""
    return "".join(secrets.choice(_NAME_SUFFIX) for _ in range(n))


@dataclass
class ListOptions:
    """Query parameters of list and watch (``metav1.ListOptions``)."""

    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool = False
    send_initial_events: bool = False


@dataclass
class DeleteOptions:
    """``metav1.DeleteOptions`` (from the body or the query)."""

    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    dry_run: bool = False


#: How a version served by conversion shows a stored object, and turns its form back into one.
View = tuple[Callable[[Obj], Obj], Callable[[Any, Obj | None], Any]]
#: ``fieldValidation`` values (``metav1.FieldValidation*``).
FIELD_VALIDATION = ("Ignore", "Warn", "Strict")


@dataclass
class FieldValidation:
    """Server-side field validation of one write, as ``?fieldValidation=`` asks.

    Fields the kind's schema does not know (:meth:`minik8s.api.schema.Schemas.unknown_fields`)
    fail the request with ``Strict`` (400 BadRequest ``strict decoding error: unknown field
    "spec.foo"``; 422 for a patch, as kube-apiserver), are reported in ``warnings`` with ``Warn``
    (the default; the apiserver sends them as ``Warning`` headers) and dropped silently with
    ``Ignore``.  Unknown fields are never stored.
    """

    directive: str = "Warn"
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, value: str | None, options_kind: str) -> FieldValidation:
        """From the query parameter (``None``/empty: Warn); 422 Invalid for another value.
        ``options_kind``: CreateOptions, UpdateOptions or PatchOptions (named in the error)."""
        if not value:
            return cls()
        if value not in FIELD_VALIDATION:
            raise errors.invalid(f"{options_kind}.meta.k8s.io", "", [(
                "fieldValidation", None,
                f'Unsupported value: "{value}": supported values: "Ignore", "Strict", "Warn"')])
        return cls(value)


def _pydantic_causes(exc: pydantic.ValidationError) -> list[tuple[str, Any, str]]:
    causes = []
    for err in exc.errors():
        path = ""
        for part in err["loc"]:
            if isinstance(part, int):
                path += f"[{part}]"
            else:
                path += ("." if path else "") + str(part)
        if err["type"] == "missing":
            causes.append((path, None, "Required value"))
        else:
            causes.append((path, err.get("input") if not isinstance(err.get("input"), dict | list) else None,
                           err["msg"]))
    return causes


class Selector:
    """A parsed label + field selector for one request (400 BadRequest on bad syntax)."""

    def __init__(self, strategy: Strategy, opts: ListOptions) -> None:
        try:
            self.labels = LabelSelector.parse(opts.label_selector or "")
        except ValueError as exc:
            raise errors.BadRequest(f"unable to parse requirement: {exc}") from exc
        try:
            self.fields = FieldSelector.parse(opts.field_selector or "")
        except ValueError as exc:
            raise errors.BadRequest(f"invalid field selector: {exc}") from exc
        supported = strategy.fields({})
        for requirement in self.fields.requirements:
            if requirement.key not in supported:  # kube-apiserver: 400 for a field it cannot select on
                raise errors.BadRequest(f'field label not supported: {requirement.key}')
        self.strategy = strategy
        self.everything = self.labels.is_empty() and not opts.field_selector

    def matches(self, obj: Obj) -> bool:
        if self.everything:
            return True
        meta = obj.get("metadata") or {}
        return self.labels.matches(meta.get("labels") or {}) and self.fields.matches(self.strategy.fields(obj))


class ResourceAPI:
    """Generic verbs for every kind in ``registry``, stored in ``store``."""

    def __init__(self, store: Store, registry: Registry, strategies: dict[str, Strategy] | None = None,
                 admission_config: admission.AdmissionConfig | None = None,
                 custom_strategy: Callable[[ResourceType], Strategy] | None = None,
                 watch_cache: cacher.Cacher | None = None) -> None:
        self.store = store
        #: serves watches and ``resourceVersion=0`` lists (None: everything from etcd)
        self.cacher = watch_cache
        self.registry = registry
        #: the mutating admission plugins enabled and their settings (:mod:`minik8s.apiserver.admission`;
        #: default: kube-apiserver's default-on plugins)
        self.admission = admission_config if admission_config is not None else admission.AdmissionConfig()
        self.strategies = strategies if strategies is not None else default_strategies()
        #: makes the strategy of a custom resource's row (its CRD's schema: the apiextensions package)
        self.custom_strategy = custom_strategy
        self._schemas: tuple[tuple[ResourceType, ...], Schemas] = ((), Schemas([]))
        self._field_paths: dict[ResourceType, tuple[Schemas, fieldmanager.FieldPaths]] = {}
        self._custom_strategies: dict[ResourceType, Strategy] = {}
        #: the authorizer's decision, for the admission checks that ask it (certificate approval and signing;
        #: None: every user may, as with ``AlwaysAllow``)
        self.authorize: certificateadmission.Decide | None = None

    @property
    def schemas(self) -> Schemas:
        """The OpenAPI schemas of the registry's kinds (rebuilt when kinds are added)."""
        if self._schemas[0] != tuple(self.registry.types):
            self._schemas = (tuple(self.registry.types), Schemas(self.registry.types))
        return self._schemas[1]

    def field_paths(self, rt: ResourceType) -> fieldmanager.FieldPaths:
        """The managed-fields walk of ``rt``'s objects (cached with the schemas)."""
        schemas = self.schemas
        cached = self._field_paths.get(rt)
        if cached is None or cached[0] is not schemas:
            cached = (schemas, fieldmanager.FieldPaths(schemas, rt.group, rt.version, rt.kind))
            self._field_paths[rt] = cached
        return cached[1]

    def strategy_of(self, rt: ResourceType) -> Strategy:
        """The strategy of ``rt``'s objects: a built-in kind's registered one (the generic strategy
        when it has none); a custom resource's comes from its CRD's schema (kept per row: a CR kind
        may share its name with a built-in kind of another group)."""
        if rt.custom is None or self.custom_strategy is None:
            return self.strategies.get(rt.kind) or GENERIC
        found = self._custom_strategies.get(rt)
        if found is None:
            if len(self._custom_strategies) > 256:
                self._custom_strategies.clear()
            found = self._custom_strategies[rt] = self.custom_strategy(rt)
        return found

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _not_found(rt: ResourceType, name: str) -> errors.NotFound:
        return errors.NotFound(f'{rt.plural}{"." + rt.group if rt.group else ""} "{name}" not found',
                               {"name": name, "group": rt.group, "kind": rt.plural})

    @staticmethod
    def _conflict(rt: ResourceType, name: str) -> errors.Conflict:
        return errors.Conflict(
            f'Operation cannot be fulfilled on {rt.plural}{"." + rt.group if rt.group else ""} "{name}": '
            "the object has been modified; please apply your changes to the latest version and try again",
            {"name": name, "group": rt.group, "kind": rt.plural})

    def _key(self, rt: ResourceType, namespace: str | None, name: str) -> str:
        if rt.namespaced and not namespace:
            raise errors.BadRequest(f"a namespace is required for {rt.plural}")
        return rt.storage_key(namespace, name)

    def check_fields(self, rt: ResourceType, body: Obj, validation: FieldValidation | None,
                     patch: Any = None, unknown_paths: list[str] | None = None) -> None:
        """Server-side field validation of ``body`` (a patch's result when ``patch`` is given);
        ``unknown_paths``: the fields already found unknown (a custom resource's pruned fields)."""
        if validation is None or validation.directive == "Ignore":
            return
        if unknown_paths is None:
            unknown_paths = self.schemas.unknown_fields(rt, body)
        unknown = [f'unknown field "{path}"' for path in unknown_paths]
        if not unknown:
            return
        if validation.directive == "Warn":
            validation.warnings += [w for w in unknown if w not in validation.warnings]
            return
        reason = "strict decoding error: " + ", ".join(unknown)
        if patch is not None:
            raise errors.invalid("", "", [("patch", json.dumps(patch, separators=(",", ":")), reason)])
        raise errors.BadRequest(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {reason}')

    def _parse(self, rt: ResourceType, body: Any, namespace: str | None, validation: FieldValidation | None = None,
               patch: Any = None) -> Obj:
        """Check kind/apiVersion/namespace of a request body and normalise it through the model
        (with field validation, see :meth:`check_fields`)."""
        if not isinstance(body, dict):
            raise errors.BadRequest(f"the body of a {rt.kind} request must be a JSON object")
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if kind and kind != rt.kind:
            raise errors.BadRequest(
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})")
        if api_version and api_version != rt.api_version:
            raise errors.BadRequest(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({rt.api_version})")
        meta = body.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise errors.BadRequest("metadata must be an object")
        meta = dict(meta or {})
        if rt.namespaced:
            if meta.get("namespace") and namespace and meta["namespace"] != namespace:
                raise errors.BadRequest(
                    "the namespace of the provided object does not match the namespace sent on the request")
            meta["namespace"] = namespace or meta.get("namespace")
        else:
            meta.pop("namespace", None)
        body = dict(body, metadata=meta)
        if rt.custom is not None:
            return self._parse_custom(rt, body, validation, patch)
        causes = integer_range_causes(rt.api_version, rt.kind, body)
        if causes:
            raise errors.invalid(self.kind_name(rt), str(meta.get("name") or meta.get("generateName") or ""), causes)
        self.check_fields(rt, body, validation, patch)
        assert rt.model is not None, f"{rt.kind}: the apiserver's rows carry their model"
        try:
            model = rt.model.model_validate(body)
        except pydantic.ValidationError as exc:
            raise errors.invalid(self.kind_name(rt), str(meta.get("name") or meta.get("generateName") or ""),
                                 _pydantic_causes(exc)) from exc
        out = {"apiVersion": rt.api_version, "kind": rt.kind, **model.to_dict()}
        try:
            self.schemas.keep_unmodelled(rt, body, out)
        except FieldTypeError as exc:
            raise errors.BadRequest(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                                    f"{exc}") from exc
        out_meta = out.get("metadata") or {}
        for fld in OMIT_EMPTY_METADATA:  # Go's omitempty: an empty map or list is not kept
            if out_meta.get(fld) in ({}, []):
                del out_meta[fld]
        return out

    def _parse_custom(self, rt: ResourceType, body: Obj, validation: FieldValidation | None, patch: Any) -> Obj:
        """A custom resource's body: metadata normalised as ObjectMeta, the fields its schema does
        not know pruned (and reported as ``fieldValidation`` asks), kind and apiVersion set."""
        out = copy.deepcopy(body)
        meta = out.get("metadata") or {}
        try:
            out["metadata"] = ObjectMeta.model_validate(meta).to_dict()
        except pydantic.ValidationError as exc:
            raise errors.invalid(self.kind_name(rt), str(meta.get("name") or meta.get("generateName") or ""),
                                 [("metadata." + path, value, msg)
                                  for path, value, msg in _pydantic_causes(exc)]) from exc
        for fld in OMIT_EMPTY_METADATA:
            if out["metadata"].get(fld) in ({}, []):
                del out["metadata"][fld]
        out["apiVersion"], out["kind"] = rt.api_version, rt.kind
        self.check_fields(rt, out, validation, patch, self.strategy_of(rt).prune(out))
        return out

    @staticmethod
    def kind_name(rt: ResourceType) -> str:
        """How a 422 names the kind, as Kubernetes' ``GroupKind.String()``: ``Pod``, ``Deployment.apps``,
        ``CronTab.stable.example.com``."""
        return f"{rt.kind}.{rt.group}" if rt.group else rt.kind

    def _validate(self, rt: ResourceType, obj: Obj, old: Obj | None) -> None:
        causes = self.strategy_of(rt).validate(obj, old)
        if causes:
            raise errors.invalid(self.kind_name(rt), (obj.get("metadata") or {}).get("name") or "", causes)

    async def _validating_admission(self, rt: ResourceType, obj: Obj, old: Obj | None) -> None:
        """The validating admission of built-in kinds other than pods: ``Priority``'s one default
        PriorityClass (:func:`minik8s.apiserver.priority.validate_priority_class`), ``CertificateSubjectRestriction``
        (:func:`minik8s.apiserver.certificateadmission.restrict_subject`)."""
        if rt.kind == "PriorityClass" and rt.group == "scheduling.k8s.io" and rt.custom is None \
                and admission.PRIORITY in self.admission.plugins:
            await priority.validate_priority_class(self, obj, old)
        if rt.kind == "CertificateSigningRequest" and rt.group == certificateadmission.GROUP and rt.custom is None \
                and old is None:
            certificateadmission.restrict_subject(obj)

    async def ensure_namespace(self, namespace: str, creating: bool = True) -> None:
        """404 when ``namespace`` does not exist; 403 when it is terminating (on create)."""
        try:
            ns = await self.store.get(f"/registry/namespaces/{namespace}")
        except errors.NotFound:
            raise errors.NotFound(f'namespaces "{namespace}" not found',
                                  {"name": namespace, "kind": "namespaces"}) from None
        if creating and (ns.get("metadata") or {}).get("deletionTimestamp"):
            raise errors.Forbidden(f"unable to create new content in namespace {namespace} "
                                   "because it is being terminated")

    async def pod_security(self, obj: Obj, validation: FieldValidation | None) -> None:
        """Pod Security Admission (:mod:`minik8s.apiserver.podsecurity`) for a Pod or a workload
        being created: 403 Forbidden when the namespace enforces a level the pod violates;
        ``warn`` violations are added to ``validation.warnings`` (sent as ``Warning`` headers)."""
        if podsecurity.pod_spec_of(obj) is None:
            return
        try:
            ns = await self.store.get(f"/registry/namespaces/{obj['metadata']['namespace']}")
        except errors.NotFound:
            return
        decision = podsecurity.admit(obj, (ns.get("metadata") or {}).get("labels"))
        if validation is not None:
            validation.warnings += [w for w in decision.warnings if w not in validation.warnings]
        if decision.forbidden:
            raise errors.Forbidden(decision.forbidden, {"name": obj["metadata"].get("name", ""), "kind": "pods"})

    @staticmethod
    def _unhonoured(rt: ResourceType, obj: Obj, old: Obj | None, validation: FieldValidation | None) -> None:
        """Warn about the pod-spec and Service fields minik8s stores but does not honour
        (:mod:`minik8s.apiserver.unhonoured`); an update warns only about what ``old`` lacked."""
        if validation is None or rt.custom is not None:
            return
        known = set(unhonoured_warnings(old)) if old is not None else set()
        validation.warnings += [w for w in unhonoured_warnings(obj) if w not in known and w not in validation.warnings]

    async def _limit_ranges(self, rt: ResourceType, obj: Obj, creating: bool) -> list[Obj]:
        """The LimitRanges the ``LimitRanger`` plugin applies to ``obj`` (none when it is off or
        does not handle the kind: :func:`minik8s.apiserver.limitranger.handles`)."""
        namespace = (obj.get("metadata") or {}).get("namespace")
        if admission.LIMIT_RANGER not in self.admission.plugins or not namespace or \
                not limitranger.handles(rt, creating):
            return []
        return await limitranger.limit_ranges(self, namespace)

    # ---------------------------------------------------------------- create
    async def create(self, rt: ResourceType, namespace: str | None, body: Any, dry_run: bool = False,
                     validation: FieldValidation | None = None, manager: str | None = None,
                     applied: bool = False) -> Obj:
        """Create an object; 409 AlreadyExists, 422 Invalid, 404 for a missing namespace.

        ``manager`` (the ``fieldManager``) gets an ``Update`` entry in managedFields for every
        field; ``applied``: ``body`` is an apply configuration whose managedFields are already
        computed (:func:`minik8s.apiserver.fieldmanager.apply`), kept as they are."""
        obj = self._parse(rt, body, namespace, validation)
        meta = obj["metadata"]
        if not applied:
            meta.pop("managedFields", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + random_suffix()
        for fld in ("uid", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(fld, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        if "spec" in obj or rt.kind not in ("Event", "Lease"):
            meta["generation"] = 1
        strategy = self.strategy_of(rt)
        strategy.prepare_for_create(obj)
        strategy.default(obj)
        if rt.kind == "Pod" and not rt.group and rt.custom is None:
            await admission.admit_pod(self, obj, self.admission)
        ranges = await self._limit_ranges(rt, obj, True)
        await limitranger.admit(self, rt, obj, ranges)
        if not applied and manager:
            fieldmanager.record_update(self.field_paths(rt), None, obj, manager, rt.api_version)
        self._validate(rt, obj, None)
        await self._validating_admission(rt, obj, None)
        if rt.custom is None:
            self.schemas.fill_required(rt, obj)
        if rt.namespaced:
            await self.ensure_namespace(meta["namespace"])
            await self.pod_security(obj, validation)
            self._unhonoured(rt, obj, None, validation)
            limitranger.validate(rt, obj, ranges)
            if admission.RESOURCE_QUOTA in self.admission.plugins:
                await resourcequota.admit(self, rt, obj, dry_run)
        if dry_run:
            return obj
        taken = await strategy.allocate(self.store, obj, None)
        try:
            return await self.store.create(self._key(rt, meta.get("namespace"), meta["name"]), obj)
        except BaseException as exc:
            await strategy.release_keys(self.store, taken)
            if not isinstance(exc, errors.AlreadyExists):
                raise
            raise errors.AlreadyExists(
                f'{rt.plural}{"." + rt.group if rt.group else ""} "{meta["name"]}" already exists',
                {"name": meta["name"], "group": rt.group, "kind": rt.plural}) from None

    # ---------------------------------------------------------------- get
    async def get(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        try:
            return await self.store.get(self._key(rt, namespace, name))
        except errors.NotFound:
            raise self._not_found(rt, name) from None

    # ---------------------------------------------------------------- list
    @staticmethod
    def _decode_continue(token: str) -> tuple[int, str]:
        try:
            data = json.loads(base64.urlsafe_b64decode(token.encode()))
            return int(data["rv"]), str(data["start"])
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise errors.BadRequest("continue key is not valid: the token is malformed") from None

    async def list(self, rt: ResourceType, namespace: str | None, opts: ListOptions) -> Obj:
        """List with label/field selectors and limit/continue paging (``metav1.List``).

        As kube-apiserver: ``resourceVersion=0`` (any limit, which is then ignored) and
        ``resourceVersionMatch=NotOlderThan`` without a limit are served from the watch cache
        (:mod:`minik8s.apiserver.cacher`) when it is ready and, for NotOlderThan, at least that
        recent; so is a consistent list (no resourceVersion) without a limit, once the cache has
        caught up with etcd's current revision (ConsistentListFromCache); other lists read etcd."""
        sel = Selector(self.strategy_of(rt), opts)
        cached = await self._list_from_cache(rt, namespace, opts, sel)
        if cached is not None:
            return cached
        prefix = rt.storage_prefix(namespace if rt.namespaced else None)
        revision, start = 0, None
        if opts.continue_:
            revision, start = self._decode_continue(opts.continue_)
            if not start.startswith(prefix):
                raise errors.BadRequest("continue key is not valid: it does not match this request")
        elif opts.resource_version not in ("", "0") and opts.resource_version_match == "Exact":
            revision = self._parse_rv(opts.resource_version)
        items: ObjList = []
        next_key: str | None = None
        limit = max(opts.limit, 0)
        try:
            while True:
                chunk, revision, next_key = await self.store.list(
                    prefix, limit=(limit - len(items)) if limit else 0, start_key=start, revision=revision)
                items += [o for o in chunk if sel.matches(o)]
                if not limit or len(items) >= limit or next_key is None:
                    break
                start = next_key
        except errors.Gone:
            raise errors.Gone(
                "The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter.") from None
        meta: Obj = {"resourceVersion": str(revision)}
        if limit and next_key is not None:
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps({"rv": revision, "start": next_key}).encode()).decode()
        return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta, "items": items}

    async def list_all(self, rt: ResourceType, namespace: str | None = None, consistent: bool = False) -> ObjList:
        """Every object of ``rt`` (in ``namespace``): as a ``resourceVersion=0`` list reads them (from the
        watch cache when it is ready: what admission plugins' listers read), or ``consistent`` (at least
        as recent as etcd now)."""
        opts = ListOptions() if consistent else ListOptions(resource_version="0")
        return list((await self.list(rt, namespace, opts))["items"])

    @staticmethod
    def cached_resource(rt: ResourceType) -> tuple[str, str] | None:
        """(storage prefix, name) of ``rt``'s watch cache; None for a kind that cannot be watched."""
        if "watch" not in rt.verbs:
            return None
        return rt.storage_prefix(None), rt.plural + ("." + rt.group if rt.group else "")

    def _cache(self, rt: ResourceType) -> cacher.ResourceCache | None:
        resource = self.cached_resource(rt)
        if self.cacher is None or resource is None:
            return None
        return self.cacher.get(*resource)

    async def _list_from_cache(self, rt: ResourceType, namespace: str | None, opts: ListOptions,
                               sel: Selector) -> Obj | None:
        """The list from the watch cache, or None when it must come from etcd."""
        rv, match = opts.resource_version, opts.resource_version_match
        if opts.continue_ or match == "Exact" or (rv != "0" and opts.limit > 0):
            return None
        if rv not in ("", "0") and match not in ("", "NotOlderThan"):
            return None
        wanted = self._parse_rv(rv) if rv else 0
        cache = self._cache(rt)
        if cache is None or not await cache.wait_ready() or cache.rv < wanted:
            return None
        fresh = 0
        if not rv:  # consistent: at least as recent as etcd now, or read from etcd
            fresh = await cache.fresh_revision() or 0
            if not fresh:
                return None
        items, revision = cache.list(namespace if rt.namespaced else None, sel.matches)
        revision = max(revision, fresh)
        return {"kind": rt.list_kind, "apiVersion": rt.api_version,
                "metadata": {"resourceVersion": str(revision)}, "items": items}

    @staticmethod
    def _parse_rv(value: str) -> int:
        try:
            rv = int(value)
            if rv < 0:
                raise ValueError
            return rv
        except ValueError:
            raise errors.BadRequest(f'invalid resource version "{value}"') from None

    # ---------------------------------------------------------------- update / patch
    async def update(self, rt: ResourceType, namespace: str | None, name: str, body: Any,
                     subresource: str | None = None, dry_run: bool = False,
                     validation: FieldValidation | None = None, manager: str | None = None) -> Obj:
        """PUT: replace the object (or its status). A stale ``metadata.resourceVersion`` → 409.
        ``manager``: the ``fieldManager`` whose ``Update`` entry records the changed fields."""
        obj = self._parse(rt, body, namespace, validation)
        if obj["metadata"].get("name") not in (None, name):
            raise errors.BadRequest(
                f"the name of the object ({obj['metadata']['name']}) does not match the name on the URL ({name})")
        obj["metadata"]["name"] = name
        wanted_rv = obj["metadata"].get("resourceVersion")
        precondition = self._parse_rv(wanted_rv) if wanted_rv else None
        async for _ in _conflict_retries():
            old = await self.get(rt, namespace, name)
            self._check_uid(rt, name, obj["metadata"], old)
            old_rv = int(old["metadata"]["resourceVersion"])
            if precondition is not None and precondition != old_rv:
                raise self._conflict(rt, name)
            try:
                return await self._write_update(rt, name, copy.deepcopy(obj), old, subresource, dry_run, manager,
                                                validation=validation)
            except errors.Conflict:
                if precondition is not None:
                    raise self._conflict(rt, name) from None
        raise self._conflict(rt, name)

    @staticmethod
    def _check_uid(rt: ResourceType, name: str, meta: Obj, old: Obj) -> None:
        """A written ``metadata.uid`` is a precondition (409 when it names another object), as in Kubernetes."""
        uid, old_uid = meta.get("uid"), old["metadata"].get("uid")
        if uid and uid != old_uid:
            raise errors.Conflict(f"Precondition failed: UID in precondition: {uid}, UID in object meta: {old_uid}",
                                  {"name": name, "group": rt.group, "kind": rt.plural})

    async def patch(self, rt: ResourceType, namespace: str | None, name: str, patch: Any,
                    content_type: str, subresource: str | None = None, dry_run: bool = False,
                    validation: FieldValidation | None = None, view: View | None = None,
                    manager: str | None = None) -> Obj:
        """PATCH with JSON merge patch, JSON patch or strategic merge patch (415 for others;
        server-side apply is :meth:`apply`).

        ``view``: (stored → served form, (served form, stored) → stored) of a version served by
        conversion: the patch applies to the object as that version shows it.  Returns the stored form.
        """
        ctype = content_type.split(";")[0].strip().lower()
        if rt.custom is not None and ctype not in (MERGE_PATCH, JSON_PATCH):  # no patch strategies in a CRD schema
            raise errors.UnsupportedMediaType(
                f"the body of the request was in an unknown format - accepted media types include: "
                f"{JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}")
        if ctype not in (MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH):
            raise errors.UnsupportedMediaType(
                f"the body of the request was in an unknown format - accepted media types include: "
                f"{JSON_PATCH}, {MERGE_PATCH}, {STRATEGIC_PATCH}")
        if ctype == JSON_PATCH and not isinstance(patch, list):
            raise errors.BadRequest("a JSON patch must be a list of operations")
        if ctype != JSON_PATCH and not isinstance(patch, dict):
            raise errors.BadRequest("a merge patch must be a JSON object")
        async for _ in _conflict_retries():
            old = await self.get(rt, namespace, name)
            shown = view[0](old) if view else old
            try:
                if ctype == JSON_PATCH:
                    new = json_patch(shown, patch)
                elif ctype == MERGE_PATCH:
                    new = json_merge_patch(shown, patch)
                else:
                    new = strategic_merge_patch(shown, patch, self.schemas.patch_schema(rt))
            except ValueError as exc:
                raise errors.Invalid(f"the patch could not be applied: {exc}") from exc
            self._check_patched(rt, name, new)
            if view:
                new = view[1](new, old)
                self._check_patched(rt, name, new)
            self._check_uid(rt, name, new["metadata"], old)
            wanted_rv = new["metadata"].get("resourceVersion")
            if wanted_rv != old["metadata"]["resourceVersion"] and wanted_rv is not None:
                raise self._conflict(rt, name)
            obj = self._parse(rt, new, namespace, validation, patch)
            obj["metadata"]["name"] = name
            try:
                return await self._write_update(rt, name, obj, old, subresource, dry_run, manager,
                                                validation=validation)
            except errors.Conflict:
                if wanted_rv is not None and isinstance(patch, dict) and \
                        (patch.get("metadata") or {}).get("resourceVersion"):
                    raise self._conflict(rt, name) from None
        raise self._conflict(rt, name)

    async def apply(self, rt: ResourceType, namespace: str | None, name: str, config: Any, manager: str,
                    force: bool = False, subresource: str | None = None, dry_run: bool = False,
                    validation: FieldValidation | None = None, view: View | None = None) -> tuple[Obj, bool]:
        """Server-side apply (``application/apply-patch+yaml``) of ``config`` by ``manager``:
        (the stored form, whether it was created).

        An absent object is created from ``config`` (defaults and validation as a create);
        otherwise ``config`` is merged into the live object (:func:`minik8s.apiserver.fieldmanager.apply`:
        409 Conflict with ``FieldManagerConflict`` causes for fields other managers own, unless
        ``force``).  A ``metadata.resourceVersion`` in ``config`` is a precondition (409 when stale);
        ``metadata.managedFields`` must be absent (400); the result is validated like an update (422).
        """
        if not isinstance(config, dict):
            raise errors.BadRequest("the apply configuration must be an object")
        meta = config.get("metadata")
        if not isinstance(meta, dict):
            raise errors.BadRequest("the apply configuration needs metadata with a name")
        if meta.get("managedFields") is not None:
            raise errors.BadRequest("metadata.managedFields must be nil")
        if meta.get("name") not in (None, name):
            raise errors.BadRequest(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
        config = dict(config, metadata=dict(meta, name=name))
        if rt.namespaced and namespace:
            config["metadata"].setdefault("namespace", namespace)
        wanted_rv = meta.get("resourceVersion")
        paths = self.field_paths(rt)
        async for _ in _conflict_retries():
            try:
                old: Obj | None = await self.get(rt, namespace, name)
            except errors.NotFound:
                old = None
            if old is None:
                if wanted_rv or subresource:
                    raise self._not_found(rt, name)
                body = fieldmanager.apply(paths, None, config, manager, rt.api_version, force)
                body = view[1](body, None) if view else body
                try:
                    return await self.create(rt, namespace, body, dry_run, validation, applied=True), True
                except errors.AlreadyExists:
                    continue  # created meanwhile: apply to it
            shown = view[0](old) if view else old
            if wanted_rv and wanted_rv != old["metadata"]["resourceVersion"]:
                raise self._conflict(rt, name)
            new = fieldmanager.apply(paths, shown, config, manager, rt.api_version, force, subresource)
            if view:
                new = view[1](new, old)
            self._check_uid(rt, name, new["metadata"], old)
            obj = self._parse(rt, new, namespace, validation, config)
            obj["metadata"]["name"] = name
            try:
                return await self._write_update(rt, name, obj, old, subresource, dry_run, manager,
                                                applied=True, validation=validation), False
            except errors.Conflict:
                if wanted_rv:
                    raise self._conflict(rt, name) from None
        raise self._conflict(rt, name)

    @staticmethod
    def _check_patched(rt: ResourceType, name: str, new: Any) -> None:
        """A patch's result is an object whose metadata is an object naming the same object
        (400 otherwise, as kube-apiserver's "does not match the name on the URL")."""
        if not isinstance(new, dict):
            raise errors.BadRequest("the patch did not produce an object")
        meta = new.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise errors.invalid(ResourceAPI.kind_name(rt), name, [("metadata", None, "must be an object")])
        if meta.get("name") not in (None, name):
            raise errors.BadRequest(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")

    async def _write_update(self, rt: ResourceType, name: str, obj: Obj, old: Obj,
                            subresource: str | None, dry_run: bool, manager: str | None = None,
                            applied: bool = False, validation: FieldValidation | None = None) -> Obj:
        """Write ``obj`` over ``old``. managedFields: ``applied`` keeps the ones ``obj`` carries;
        otherwise ``manager`` records an update (without one, ``old``'s are kept when ``obj`` has none).
        ``validation`` collects the warnings of a write to the object itself."""
        strategy = self.strategy_of(rt)
        old_meta = old["metadata"]
        meta = obj["metadata"]
        if not applied and "managedFields" not in meta and "managedFields" in old_meta:
            meta["managedFields"] = copy.deepcopy(old_meta["managedFields"])
        for fld in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                    "generation", "namespace"):
            if fld in old_meta:
                meta[fld] = old_meta[fld]
            else:
                meta.pop(fld, None)
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if subresource == "status":
            managed = meta.get("managedFields")
            strategy.prepare_for_status_update(obj, old)
            if managed is not None:  # the fields this write's managers own (metadata stays as stored otherwise)
                obj["metadata"]["managedFields"] = managed
        elif subresource is None:
            strategy.prepare_for_update(obj, old)
            if rt.kind == "Pod" and not rt.group and rt.custom is None:
                await admission.admit_pod(self, obj, self.admission, old)
        elif subresource in strategy.update_subresources:
            managed = meta.get("managedFields")
            strategy.prepare_for_subresource_update(subresource, obj, old)
            if managed is not None:
                obj["metadata"]["managedFields"] = managed
        elif subresource == "ephemeralcontainers" and isinstance(strategy, PodStrategy):
            managed = meta.get("managedFields")
            strategy.prepare_for_ephemeral_update(obj, old)
            if managed is not None:
                obj["metadata"]["managedFields"] = managed
            await self.pod_security(obj, None)  # as Kubernetes' PodSecurity admits this subresource
        else:
            raise errors.NotFound(f"the server could not find the requested resource ({subresource})")
        strategy.default(obj)
        if not applied and manager:
            fieldmanager.record_update(self.field_paths(rt), old, obj, manager, rt.api_version, subresource)
        if subresource is None and "generation" in meta and strategy.generation_changed(obj, old):
            meta["generation"] = int(meta["generation"]) + 1
        if rt.group == certificateadmission.GROUP and rt.kind == "CertificateSigningRequest" and rt.custom is None:
            certificateadmission.admit(self.authorize, subresource, obj, old)
        if subresource == "ephemeralcontainers" and isinstance(strategy, PodStrategy):
            causes = strategy.validate_ephemeral_update(obj, old)
            if causes:
                raise errors.invalid(self.kind_name(rt), name, causes)
        else:
            self._validate(rt, obj, old)
            if subresource is None:
                await self._validating_admission(rt, obj, old)
                self._unhonoured(rt, obj, old, validation)
        if subresource is None:
            limitranger.validate(rt, obj, await self._limit_ranges(rt, obj, False))
        if rt.custom is None:
            self.schemas.fill_required(rt, obj)
        if obj == old:
            return old  # Kubernetes skips no-op writes: resourceVersion unchanged
        if dry_run:
            return obj
        key = self._key(rt, meta.get("namespace"), name)
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and \
                not meta.get("deletionGracePeriodSeconds"):
            # The last finalizer is gone: the object is deleted instead of written. As
            # genericregistry.Store.Update (deleteWithoutFinalizers), the answer is the object as this
            # update made it (no finalizers) at the resourceVersion it was updated from, not the stored
            # state the DELETED watch event carries: clients such as kopf tell "released" from "still
            # blocked" by the answer's finalizers, and wait for its resourceVersion otherwise. In
            # Kubernetes' field order, as every stored object is answered.
            deleted = await self.store.delete(key, int(old_meta["resourceVersion"]))
            await strategy.release_keys(self.store, strategy.keys_of(deleted))
            return in_wire_order(obj)
        taken = await strategy.allocate(self.store, obj, old)
        try:
            written = await self.store.update(key, obj, int(old_meta["resourceVersion"]))
        except BaseException as exc:
            await strategy.release_keys(self.store, taken)
            if isinstance(exc, errors.NotFound):
                raise self._not_found(rt, name) from None
            raise
        await strategy.release_keys(self.store, strategy.keys_of(old) - strategy.keys_of(written))
        return written

    # ---------------------------------------------------------------- delete
    async def delete(self, rt: ResourceType, namespace: str | None, name: str, opts: DeleteOptions) -> Obj:
        """Delete one object: graceful for bound pods and objects with finalizers (deletionTimestamp
        set, object kept), else removed at once. Returns the object's last state."""
        if rt.kind == "Namespace" and rt.custom is None:
            return await self._delete_namespace(name, opts)
        strategy = self.strategy_of(rt)
        key = self._key(rt, namespace, name)
        async for _ in _conflict_retries():  # a conflict here is another writer's: read again, decide again
            old = await self.get(rt, namespace, name)
            meta = old["metadata"]
            if opts.precondition_uid and opts.precondition_uid != meta.get("uid"):
                raise errors.Conflict(
                    f'Precondition failed: UID in precondition: {opts.precondition_uid}, UID in object meta: '
                    f'{meta.get("uid")}')
            if opts.precondition_resource_version and opts.precondition_resource_version != \
                    meta.get("resourceVersion"):
                raise self._conflict(rt, name)
            rv = int(meta["resourceVersion"])
            grace = strategy.graceful_delete_seconds(old, opts.grace_period_seconds)
            if meta.get("deletionTimestamp"):
                # Already terminating: a shorter grace period (e.g. 0 from the kubelet) wins.
                current = meta.get("deletionGracePeriodSeconds") or 0
                if grace >= current and (grace or meta.get("finalizers")):
                    return old
            finalizers = list(meta.get("finalizers") or [])
            # Garbage-collection propagation (the GC controller acts on these finalizers).
            gc_finalizer = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}.get(
                opts.propagation_policy or "")
            if gc_finalizer and not meta.get("deletionTimestamp"):
                finalizers = [f for f in finalizers if f not in ("foregroundDeletion", "orphan")] + [gc_finalizer]
            if grace == 0 and not finalizers:
                if opts.dry_run:
                    return old
                try:
                    deleted = await self.store.delete(key, rv)
                except errors.Conflict:
                    continue
                except errors.NotFound:
                    raise self._not_found(rt, name) from None
                await strategy.release_keys(self.store, strategy.keys_of(deleted))
                return deleted
            new = copy.deepcopy(old)
            deadline = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=grace)
            new["metadata"]["deletionTimestamp"] = meta.get("deletionTimestamp") or \
                deadline.strftime("%Y-%m-%dT%H:%M:%SZ")
            new["metadata"]["deletionGracePeriodSeconds"] = grace
            if finalizers:
                new["metadata"]["finalizers"] = finalizers
            if opts.dry_run:
                return new
            try:
                return await self.store.update(key, new, rv)
            except errors.Conflict:
                continue
        raise self._conflict(rt, name)

    async def _delete_namespace(self, name: str, opts: DeleteOptions) -> Obj:
        """Namespace deletion: mark it Terminating, delete its contents, remove it once empty."""
        if name in PROTECTED_NAMESPACES:
            raise errors.Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted')
        rt = self.registry.by_kind("v1", "Namespace")
        assert rt is not None
        old = await self.get(rt, None, name)
        if opts.dry_run:
            return old
        new = copy.deepcopy(old)
        new["metadata"].setdefault("deletionTimestamp", now_rfc3339())
        new["metadata"]["deletionGracePeriodSeconds"] = 0
        new.setdefault("status", {})["phase"] = "Terminating"
        if new != old:
            new = await self.store.update(f"/registry/namespaces/{name}", new,
                                          int(old["metadata"]["resourceVersion"]))
        asyncio.get_running_loop().create_task(self._finish_namespace(name))
        return new

    async def _finish_namespace(self, name: str, timeout: float = 300.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            remaining = 0
            for rt in self.registry.types:
                if not rt.namespaced or "list" not in rt.verbs:
                    continue
                items, _, _ = await self.store.list(rt.storage_prefix(name))
                remaining += len(items)
                for item in items:
                    try:
                        await self.delete(rt, name, item["metadata"]["name"], DeleteOptions())
                    except errors.NotFound:
                        pass
            if remaining == 0:
                try:
                    await self.store.delete(f"/registry/namespaces/{name}")
                except errors.NotFound:
                    pass
                log.info("apiserver namespace=%s deleted", name)
                return
            await asyncio.sleep(1.0)
        log.warning("apiserver namespace=%s still has content after %.0fs", name, timeout)

    async def delete_collection(self, rt: ResourceType, namespace: str | None, list_opts: ListOptions,
                                opts: DeleteOptions) -> Obj:
        """Delete every object the selectors match; returns the list of what was deleted."""
        listed = await self.list(rt, namespace, list_opts)
        deleted = []
        for item in listed["items"]:
            try:
                deleted.append(await self.delete(rt, item["metadata"].get("namespace"),
                                                 item["metadata"]["name"], opts))
            except errors.NotFound:
                pass
        return {"kind": rt.list_kind, "apiVersion": rt.api_version,
                "metadata": {"resourceVersion": listed["metadata"]["resourceVersion"]}, "items": deleted}

    # ---------------------------------------------------------------- watch
    async def watch(self, rt: ResourceType, namespace: str | None, opts: ListOptions,
                    bookmark_interval: float = 30.0) -> AsyncIterator[Obj]:
        """Watch events ``{"type", "object"}`` after ``opts.resource_version``.

        An unset or ``"0"`` resourceVersion first sends the current state as ADDED events; so does
        ``sendInitialEvents=true`` (a watch-list, what client-go's reflectors ask for since 1.32's
        WatchListClient), which then marks the end of that state with a BOOKMARK annotated
        ``k8s.io/initial-events-end: "true"``.
        Objects entering or leaving the selector appear as ADDED / DELETED, as in Kubernetes.
        Raises Gone (before any event) for a compacted resourceVersion, and Timeout (504, "Too large
        resource version", retry after 1 s) for one etcd has not reached.
        """
        sel = Selector(self.strategy_of(rt), opts)
        cache = self._cache(rt)
        if cache is not None and await cache.wait_ready():
            return await self._watch_cache(rt, namespace, opts, sel, cache, bookmark_interval)
        if self.cacher is not None:
            self.cacher.direct_watches += 1
        prefix = rt.storage_prefix(namespace if rt.namespaced else None)
        initial: ObjList = []
        if opts.resource_version in ("", "0") or opts.send_initial_events:
            listed = await self.list(rt, namespace, ListOptions(label_selector=opts.label_selector,
                                                                field_selector=opts.field_selector))
            initial = listed["items"]
            start = int(listed["metadata"]["resourceVersion"])
        else:
            start = self._parse_rv(opts.resource_version)
            await self._check_not_too_large(start)
        source = await self.store.watch(prefix, start)  # raises Gone before streaming
        return self._stream(rt, sel, source, initial, start, opts, bookmark_interval)

    async def _check_not_too_large(self, start: int) -> None:
        current = await self.store.revision()
        if start > current:  # kube-apiserver's watch cache: 504 with a retry hint
            raise errors.Timeout(f"Too large resource version: {start}, current: {current}", {
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1})

    async def _watch_cache(self, rt: ResourceType, namespace: str | None, opts: ListOptions, sel: Selector,
                           cache: cacher.ResourceCache, bookmark_interval: float) -> AsyncIterator[Obj]:
        """:meth:`watch` served by the watch cache: the initial state from the cache for
        ``resourceVersion=0`` (and a NotOlderThan one it has reached), from etcd for an unset one."""
        ns = namespace if rt.namespaced else None
        rv = opts.resource_version
        initial: ObjList = []
        if rv in ("", "0") or opts.send_initial_events:
            wanted = self._parse_rv(rv) if rv else None
            if wanted is not None and cache.rv >= wanted:
                initial, start = cache.list(ns, sel.matches)  # the same instant as the watch below
            else:
                listed = await self.list(rt, namespace, ListOptions(label_selector=opts.label_selector,
                                                                    field_selector=opts.field_selector))
                initial, start = listed["items"], int(listed["metadata"]["resourceVersion"])
        else:
            start = self._parse_rv(rv)
            if start > cache.rv:
                await self._check_not_too_large(start)
            await cache.check_compacted(start)
        w = cache.watch(ns, sel.matches, start)  # raises Gone before streaming
        loop = asyncio.get_running_loop()
        deadline = loop.time() + opts.timeout_seconds if opts.timeout_seconds else None
        end = {INITIAL_EVENTS_END: "true"} if opts.send_initial_events else None
        return cacher.stream(cache, w, rt.kind, rt.api_version, initial, end, deadline,
                             opts.allow_watch_bookmarks, bookmark_interval)

    async def _stream(self, rt: ResourceType, sel: Selector, source: AsyncIterator[Any], initial: ObjList,
                      start: int, opts: ListOptions, bookmark_interval: float) -> AsyncIterator[Obj]:
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def pump() -> None:
            try:
                async for ev in source:
                    await queue.put(ev)
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                await queue.put(exc)

        task = asyncio.get_running_loop().create_task(pump())
        try:
            for obj in initial:
                yield {"type": "ADDED", "object": obj}
            if opts.send_initial_events:
                yield {"type": "BOOKMARK", "object": {
                    "kind": rt.kind, "apiVersion": rt.api_version,
                    "metadata": {"resourceVersion": str(start), "annotations": {INITIAL_EVENTS_END: "true"}}}}
            last_rv = start
            loop = asyncio.get_running_loop()
            deadline = loop.time() + opts.timeout_seconds if opts.timeout_seconds else None
            while True:
                wait = bookmark_interval if opts.allow_watch_bookmarks else None
                if deadline is not None:
                    left = deadline - loop.time()
                    if left <= 0:
                        return
                    wait = min(wait, left) if wait is not None else left
                try:
                    item = await asyncio.wait_for(queue.get(), wait)
                except TimeoutError:
                    if opts.allow_watch_bookmarks:
                        yield {"type": "BOOKMARK", "object": {
                            "kind": rt.kind, "apiVersion": rt.api_version,
                            "metadata": {"resourceVersion": str(last_rv)}}}
                    continue
                if isinstance(item, errors.APIError):  # compacted (410), or a value it cannot decrypt (500)
                    yield {"type": "ERROR", "object": item.to_status()}
                    return
                if isinstance(item, BaseException):
                    raise item
                last_rv = item.revision
                now_match = item.type != "DELETED" and sel.matches(item.object)
                was_match = item.prev is not None and sel.matches(item.prev)
                if item.type == "DELETED":
                    if was_match:
                        yield {"type": "DELETED", "object": item.object}
                elif now_match and was_match:
                    yield {"type": "MODIFIED", "object": item.object}
                elif now_match:
                    yield {"type": "ADDED", "object": item.object}
                elif was_match:
                    yield {"type": "DELETED", "object": item.object}
        finally:
            task.cancel()
            try:
                await task
            except BaseException:  # noqa: BLE001
                pass
