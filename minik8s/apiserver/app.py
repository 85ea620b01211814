"""The apiserver's HTTP layer: Kubernetes paths, discovery, Status errors, watch streams.

Every kind is served by the same handlers (see :mod:`minik8s.apiserver.resources`);
paths are parsed once here:

- ``/api/v1/{plural}[/{name}[/{subresource}]]`` (cluster-scoped, or all namespaces)
- ``/api/v1/namespaces/{ns}/{plural}[/{name}[/{subresource}]]``
- the same under ``/apis/{group}/{version}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.encoding import encode_json
from minik8s.api.registry import METRICS_TYPES, default_registry
from minik8s.api.resourcetypes import Registry, ResourceType
from minik8s.apiserver import bootstrappolicy, componentstatus, discovery, fieldmanager, negotiation, rbac
from minik8s.apiserver.admission import AdmissionConfig
from minik8s.apiserver.apf import FlowControl
from minik8s.apiserver.apiextensions.controller import CRDController
from minik8s.apiserver.apiextensions.printer import custom_columns
from minik8s.apiserver.apiextensions.strategy import CRDStrategy, CustomResourceStrategy
from minik8s.apiserver.apiextensions.versions import custom_version
from minik8s.apiserver.authorization import APIServerAuthorizer, review
from minik8s.apiserver.bootstrap import Bootstrap
from minik8s.apiserver.cacher import Cacher, SharedEvent
from minik8s.apiserver.endpointreconciler import DEFAULT_INTERVAL, DEFAULT_TTL, LeaseEndpointReconciler
from minik8s.apiserver.eviction import Evictions
from minik8s.apiserver.httpio import (
    InternalErrors,
    KubeJSONResponse,
    delete_options,
    list_options,
    parse_bool,
    read_body,
    status_response,
    with_warnings,
)
from minik8s.apiserver.inflight import MutatingInflight
from minik8s.apiserver.kubelet_client import KubeletClient
from minik8s.apiserver.metrics import DEFAULT_RESOLUTION, MetricsAPI, MetricsScraper, running
from minik8s.apiserver.openapi import V2_PROTOBUF, V2_PROTOBUF_RETURNED, OpenAPI
from minik8s.apiserver.resources import APPLY_PATCH, FieldValidation, ListOptions, ResourceAPI
from minik8s.apiserver.serviceaccounts import ServiceAccountTokens, TokenIssuer
from minik8s.apiserver.storage import Store
from minik8s.apiserver.strategies import default_strategies
from minik8s.apiserver.subresources import PodSubresources, ScaleSubresource
from minik8s.apiserver.versions import REQUEST_VERSION, SERVED_VERSIONS, ServedVersion, served_version
from minik8s.auth import ANONYMOUS, REQUEST_USER, Authenticator, AuthMiddleware, UserInfo

#: Paths anyone may GET with authentication on (kube-apiserver's ``system:public-info-viewer``).
PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version")

@dataclass
class Target:
    """What a request path names."""

    rt: ResourceType  # the stored kind's row
    namespace: str | None
    name: str | None
    subresource: str | None
    served: ServedVersion | None = None  # a version served by conversion (rt is what it is stored as)

    def out(self, obj: Any) -> Any:
        """An answer in the requested version."""
        return self.served.from_storage(obj) if self.served is not None else obj


def served_registry(registry: Registry) -> Registry:
    """What discovery and the OpenAPI documents list: the stored kinds of ``registry`` (custom
    resources included, as the CRD controller adds them), the metrics API, versions served by
    conversion (:data:`~minik8s.apiserver.versions.SERVED_VERSIONS`)."""
    return Registry(registry.types + METRICS_TYPES + [sv.rt for sv in SERVED_VERSIONS])


def create_app(store: Store, registry: Registry | None = None, authenticator: Authenticator | None = None,
               server_address: str = "127.0.0.1:6443", service_cidr: str = "10.96.0.0/16",
               node_port_range: tuple[int, int] = (30000, 32767),
               metrics_resolution: float | None = DEFAULT_RESOLUTION,
               kubelet_client: KubeletClient | None = None, max_mutating_inflight: int = 4,
               token_issuer: TokenIssuer | None = None,
               authorization_modes: tuple[str, ...] = ("AlwaysAllow",),
               admission: AdmissionConfig | None = None, endpoint_reconciler_type: str = "lease",
               endpoint_reconciler_ttl: float = DEFAULT_TTL,
               endpoint_reconciler_interval: float = DEFAULT_INTERVAL, watch_cache: bool = True,
               watch_cache_size: int | None = None) -> FastAPI:
    """Build the ASGI application over ``store``.  The system namespaces and the ``kubernetes``
    Service (advertised at ``server_address``) are kept in place (:mod:`minik8s.apiserver.bootstrap`).

    ``authenticator``: who may call (401 for the unauthenticated when it is enabled).
    ``metrics_resolution`` (seconds; None or 0: off) is how often the metrics API's scraper
    reads the kubelets (:mod:`minik8s.apiserver.metrics`).  ``kubelet_client`` reaches the
    kubelets for ``pods/log``, ``pods/exec`` and the scraper (default: plain HTTP, see
    :mod:`minik8s.apiserver.kubelet_client`); the application closes it at shutdown.
    ``max_mutating_inflight``: writes processed at once, the others wait
    (:mod:`minik8s.apiserver.inflight`).  ``token_issuer`` signs and checks service-account tokens
    (TokenRequest and TokenReview, :mod:`minik8s.apiserver.serviceaccounts`); without it
    TokenRequest answers 404 and no review authenticates.

    ``authorization_modes``: ``("AlwaysAllow",)`` or ``Node``/``RBAC``
    (:mod:`minik8s.apiserver.authorization`).  With RBAC the apiserver keeps its bootstrap roles
    (:mod:`minik8s.apiserver.bootstrappolicy`), reads the RBAC kinds from its own store
    (:class:`~minik8s.apiserver.rbac.RBACCache`), and accepts service-account tokens as bearer
    credentials (never with AlwaysAllow: every pod holds one).  ``admission``: the
    mutating admission plugins of Pods and their settings (:mod:`minik8s.apiserver.admission`;
    default: kube-apiserver's default-on plugins, here ``DefaultTolerationSeconds`` with 300 s).
    ``endpoint_reconciler_type``: ``lease`` (the ``kubernetes`` Endpoints list the apiservers whose
    leases of ``endpoint_reconciler_ttl`` seconds, renewed every ``endpoint_reconciler_interval``, are
    live: :mod:`minik8s.apiserver.endpointreconciler`) or ``none``.
    ``watch_cache``: serve watches and ``resourceVersion=0`` lists from the watch cache
    (:mod:`minik8s.apiserver.cacher`; False: every watch opens its own etcd watch);
    ``watch_cache_size``: a fixed window of that many events per resource (None: sized
    dynamically, kube-apiserver's 100 up to 102400 events of the last 75 s).  Its figures are
    on ``/metrics`` (Prometheus text).
    """
    registry = registry or default_registry()
    builtin_types = list(registry.types)

    def served() -> Registry:
        return served_registry(registry)
    strategies = default_strategies(service_cidr, node_port_range)
    strategies["CustomResourceDefinition"] = CRDStrategy()
    cache = Cacher(store, watch_cache_size) if watch_cache else None
    api = ResourceAPI(store, registry, strategies, admission, custom_strategy=CustomResourceStrategy,
                      watch_cache=cache)
    kubelet = kubelet_client or KubeletClient()
    pods = PodSubresources(api, kubelet)
    scale = ScaleSubresource(api)
    evictions = Evictions(api)
    crds = CRDController(api, registry, builtin_types)
    tokens = ServiceAccountTokens(api, registry, token_issuer)
    scraper = MetricsScraper(api, metrics_resolution or DEFAULT_RESOLUTION, kubelet)
    metrics = MetricsAPI(api, scraper)

    flow_control = FlowControl(api, registry)  # API Priority and Fairness' configuration (inflight turns)
    rbac_on = "RBAC" in authorization_modes
    rbac_cache = rbac.RBACCache(api, registry) if rbac_on else None
    authorizer = APIServerAuthorizer(authorization_modes, rbac_cache)
    if not authorizer.always_allow:  # CertificateApproval and CertificateSigning ask it
        api.authorize = authorizer.decide
    async def sa_user(token: str) -> UserInfo | None:
        """The service account a JWT names, when TokenReview's checks accept it."""
        if token.count(".") != 2:
            return None
        try:
            status = await tokens._review(token, token_issuer.api_audiences if token_issuer else [])
        except (ValueError, errors.APIError):
            return None
        user = status["user"]
        return UserInfo(user["username"], user.get("uid") or "", tuple(user["groups"]))

    if rbac_on and authenticator is not None and token_issuer is not None:
        authenticator.reviewer = sa_user

    host, _, port = server_address.rpartition(":")
    bootstrap = Bootstrap(api, registry, service_cidr, host.strip("[]") or "127.0.0.1", int(port or 6443))
    endpoints = LeaseEndpointReconciler(api, registry, host.strip("[]") or "127.0.0.1", int(port or 6443),
                                        ttl=endpoint_reconciler_ttl, interval=endpoint_reconciler_interval) \
        if endpoint_reconciler_type == "lease" else None

    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if cache is not None:
            cache.start([r for r in map(ResourceAPI.cached_resource, registry.types) if r is not None])
        with contextlib.suppress(errors.APIError):  # etcd not up yet: the loop retries
            await bootstrap.ensure()
        stop = asyncio.Event()
        loop_task = asyncio.get_running_loop().create_task(bootstrap.run(stop))
        endpoints_task = asyncio.get_running_loop().create_task(endpoints.run(stop)) if endpoints else None
        rbac_task = asyncio.get_running_loop().create_task(run_rbac(stop)) if rbac_cache is not None else None
        crd_task = asyncio.get_running_loop().create_task(crds.run(stop))
        apf_task = asyncio.get_running_loop().create_task(flow_control.run(stop))
        # What start-up built (schemas, OpenAPI documents, protobuf descriptors) lives as long as
        # the process: out of the collector's sight, full collections stay short (no latency spikes).
        gc.freeze()
        async with running(scraper if metrics_resolution else None):
            yield
        stop.set()
        await loop_task
        if endpoints_task is not None:
            await endpoints_task
        await crd_task
        await apf_task
        if rbac_task is not None:
            await rbac_task
        await kubelet.aclose()
        if cache is not None:
            await cache.close()
        await store.close()

    async def run_rbac(stop: asyncio.Event) -> None:
        """Keep the bootstrap policy in place (retried until etcd answers) and the RBAC cache fed."""
        assert rbac_cache is not None
        cache_task = asyncio.get_running_loop().create_task(rbac_cache.run(stop))
        while not stop.is_set():
            try:
                await bootstrappolicy.ensure(api, registry)
                break
            except errors.APIError:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 1.0)
        await cache_task

    # FastAPI's own /openapi.json and /docs are off: /openapi/v2 and /openapi/v3 are Kubernetes'.
    app = FastAPI(title="minik8s apiserver", version=discovery.VERSION_INFO["gitVersion"],
                  lifespan=lifespan,  # type: ignore[arg-type]
                  openapi_url=None, docs_url=None, redoc_url=None, default_response_class=KubeJSONResponse)
    app.state.api = api
    # writes cannot starve reads; each priority level has its turns
    app.add_middleware(MutatingInflight, limit=max_mutating_inflight, flow_control=flow_control)
    if authenticator is not None and authenticator.enabled:  # (outside: who may not write waits for nothing)
        # kube-apiserver's system:public-info-viewer role lets anyone read health and version
        app.add_middleware(AuthMiddleware, authenticator=authenticator, public_paths=PUBLIC_PATHS,
                           authorizer=None if authorizer.always_allow else authorizer)
    app.add_middleware(InternalErrors)  # outermost: a 500 is one log line and keeps the connection

    @app.exception_handler(errors.APIError)
    async def api_error(request: Request, exc: errors.APIError) -> KubeJSONResponse:
        return status_response(exc)


    # ------------------------------------------------------------ health, version, discovery
    # (each discovery path also answers with a trailing slash, as kube-apiserver does)
    @app.get("/healthz")
    @app.get("/livez")
    async def healthz() -> Response:
        return Response("ok", media_type="text/plain")

    @app.get("/readyz")
    async def readyz() -> Response:
        if rbac_cache is not None and not rbac_cache.synced.is_set():
            return Response("[-]poststarthook/rbac/bootstrap-roles failed: not finished\nreadyz check failed",
                            status_code=503, media_type="text/plain")
        unready = cache.unready() if cache is not None else []
        if await store.healthy():
            if unready:  # a list from etcd now could be older than a cache's window
                return Response(f"[-]watch-cache failed: not yet filled: {', '.join(unready)}\n"
                                "readyz check failed", status_code=503, media_type="text/plain")
            return Response("ok", media_type="text/plain")
        return Response("[-]etcd failed: etcd is not reachable\nreadyz check failed", status_code=503,
                        media_type="text/plain")

    @app.get("/metrics")
    async def prometheus_metrics() -> Response:
        lines = cache.metrics() if cache is not None else [
            "# TYPE apiserver_storage_etcd_watches gauge", f"apiserver_storage_etcd_watches {store.open_watches}"]
        return Response("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")

    @app.get("/version")
    async def version() -> dict[str, str]:
        return discovery.VERSION_INFO

    def aggregated(request: Request, core: bool) -> Response | None:
        """Aggregated discovery when the request prefers it (client-go does), else None."""
        if not negotiation.wants_aggregated_discovery(request.headers.get("accept")):
            return None
        return Response(encode_json(discovery.aggregated(served(), core)), media_type=negotiation.AGGREGATED_DISCOVERY,
                        headers={"Vary": "Accept"})

    @app.get("/api")
    @app.get("/api/")
    async def api_root(request: Request) -> Any:
        return aggregated(request, core=True) or discovery.api_versions(server_address)

    @app.get("/api/v1")
    @app.get("/api/v1/")
    async def core_resources() -> dict[str, Any]:
        doc = discovery.resource_list(registry, "", "v1")
        assert doc is not None
        return doc

    @app.get("/apis")
    @app.get("/apis/")
    async def apis_root(request: Request) -> Any:
        return aggregated(request, core=False) or discovery.api_group_list(served())

    @app.get("/apis/{group}")
    @app.get("/apis/{group}/")
    async def group_doc(group: str) -> dict[str, Any]:
        versions = [v for g, v in served().group_versions() if g == group]
        if not versions:
            raise errors.NotFound(f"the server could not find the requested resource (group {group})")
        return discovery.api_group(group, versions)

    @app.get("/apis/{group}/{version}")
    @app.get("/apis/{group}/{version}/")
    async def group_resources(group: str, version: str) -> dict[str, Any]:
        doc = discovery.resource_list(served(), group, version)
        if doc is None:
            raise errors.NotFound(f"the server could not find the requested resource ({group}/{version})")
        return doc

    # ------------------------------------------------------------ OpenAPI
    openapi = OpenAPI(discovery.VERSION_INFO["gitVersion"])
    openapi.refresh(served().types)

    def openapi_json(request: Request, body: bytes) -> Response:
        if not negotiation.accepts_json(request.headers.get("accept")):
            raise errors.NotAcceptable("only the following media types are accepted: application/json")
        return Response(body, media_type="application/json")

    @app.get("/openapi/v2")
    async def openapi_v2(request: Request) -> Response:
        openapi.refresh(served().types)
        accept = request.headers.get("accept") or ""
        if V2_PROTOBUF in accept or V2_PROTOBUF_RETURNED in accept:
            body = await asyncio.to_thread(openapi.v2_protobuf)
            return Response(body, media_type=V2_PROTOBUF_RETURNED)
        return openapi_json(request, openapi.v2)

    @app.get("/openapi/v3")
    @app.get("/openapi/v3/")
    async def openapi_v3_index(request: Request) -> Response:
        openapi.refresh(served().types)
        return openapi_json(request, json.dumps(openapi.index()).encode())

    @app.get("/openapi/v3/{gv:path}")
    async def openapi_v3_document(request: Request, gv: str) -> Response:
        openapi.refresh(served().types)
        doc = openapi.v3.get(gv.strip("/"))
        if doc is None:
            raise errors.NotFound("the server could not find the requested resource")
        response = openapi_json(request, doc)
        if request.query_params.get("hash") == openapi.v3_hashes.get(gv.strip("/")):
            response.headers["Cache-Control"] = "public, immutable"  # the hash names this content
        return response

    # ------------------------------------------------------------ resources
    def lookup(group: str, version: str, plural: str) -> tuple[ResourceType | None, ServedVersion | None]:
        rt = registry.get(group, version, plural)
        if rt is not None and rt.custom is not None and rt.version != rt.custom.storage_version:
            stored = registry.get(group, rt.custom.storage_version, plural)
            if stored is not None:  # conversion None: the stored objects, only apiVersion changes
                return stored, custom_version(rt, stored)
        if rt is not None:
            return rt, None
        sv = served_version(group, version, plural)
        return (registry.get(*sv.storage, sv.rt.plural), sv) if sv is not None else (None, None)

    def resolve(group: str, version: str, rest: str) -> Target:
        parts = [p for p in rest.split("/") if p]
        not_found = errors.NotFound("the server could not find the requested resource")
        namespace = None
        if len(parts) >= 3 and parts[0] == "namespaces" and lookup(group, version, parts[2])[0]:
            namespace = parts[1]
            parts = parts[2:]
        if not parts or len(parts) > 3:
            raise not_found
        rt, sv = lookup(group, version, parts[0])
        if rt is None:
            raise not_found
        if namespace is not None and not rt.namespaced:
            raise not_found
        name = parts[1] if len(parts) > 1 else None
        sub = parts[2] if len(parts) > 2 else None
        if sub is not None and sub not in rt.subresources:
            raise not_found
        return Target(rt, namespace, name, sub, sv)

    async def handle(request: Request, group: str, version: str, rest: str) -> Response:
        t = resolve(group, version, rest)
        token = REQUEST_VERSION.set(t.served.rt.api_version if t.served is not None else None)
        try:
            return await serve(request, t)
        finally:
            REQUEST_VERSION.reset(token)

    async def serve(request: Request, t: Target) -> Response:
        params = request.query_params
        method = request.method
        dry_run = bool(params.getlist("dryRun"))
        if t.subresource in ("log", "exec", "attach", "portforward", "binding"):
            return await pods.handle(request, t.rt, t.namespace, t.name or "", t.subresource)
        if t.subresource == "scale":
            return await scale.handle(request, t.rt, t.namespace, t.name or "")
        user: UserInfo = getattr(request.state, "user", ANONYMOUS)
        REQUEST_USER.set(user)  # for the rest of this request's task (a CertificateSigningRequest's requester)
        if t.rt.custom is None and t.rt.kind in ("SubjectAccessReview", "LocalSubjectAccessReview",
                                                  "SelfSubjectAccessReview", "SelfSubjectRulesReview",
                                                  "SelfSubjectReview"):
            if method != "POST" or t.name is not None:
                raise errors.MethodNotAllowed(f"{method} is not supported on {t.rt.plural}")
            if t.rt.namespaced and t.namespace is None:
                raise errors.MethodNotAllowed("create needs a namespace in the path")
            return KubeJSONResponse(review(authorizer, t.rt.kind, await read_body(request), user, t.namespace),
                                    status_code=201)
        if (t.rt.group, t.rt.kind, t.rt.custom) == ("", "ComponentStatus", None):
            return await component_statuses(request, t)
        node = rbac.node_name(user) if "Node" in authorization_modes else None
        if node is not None and method in ("POST", "PUT", "PATCH", "DELETE"):
            info = getattr(request.state, "request_info", None)
            if info is not None:
                await rbac.node_restriction(api, registry, node, info)
        if t.subresource == "eviction" and t.rt.custom is None:
            return await evictions.handle(request, t.rt, t.namespace or "", t.name or "")
        if t.subresource == "token" or (t.rt.group, t.rt.kind, t.rt.custom) == \
                ("authentication.k8s.io", "TokenReview", None):
            if method != "POST" or (t.subresource is None and t.name is not None):
                raise errors.MethodNotAllowed(f"{method} is not supported on {t.rt.plural}"
                                              + (f"/{t.subresource}" if t.subresource else ""))
            body = await read_body(request)
            if t.subresource == "token":
                return KubeJSONResponse(await tokens.request(t.namespace or "", t.name or "", body), status_code=201)
            return KubeJSONResponse(await tokens.review(body), status_code=201)
        if t.name is None:
            if method == "GET":
                opts = list_options(params)
                if parse_bool(params.get("watch")):
                    return await watch_response(request, t, opts)
                out = negotiation.negotiate(request.headers.get("accept"), negotiation.LIST_TARGETS)
                listed = await api.list(t.rt, t.namespace, opts)
                if t.served is not None:
                    listed = t.served.out_list(listed)
                return respond(negotiation.convert_list(listed, t.rt.kind, out, params, custom_columns(t.rt)), out)
            if method == "POST":
                if t.rt.namespaced and t.namespace is None:
                    raise errors.MethodNotAllowed("create needs a namespace in the path")
                if t.rt.custom is not None and t.rt.custom.terminating:
                    raise errors.MethodNotAllowed("create not allowed while custom resource definition is terminating")
                body = await read_body(request)
                if node is not None and t.rt.kind == "Node" and t.rt.custom is None:
                    rbac.node_may_create(node, body)
                if t.served is not None:
                    body = t.served.to_storage(body, None)
                validation = FieldValidation.parse(params.get("fieldValidation"), "CreateOptions")
                obj = await api.create(t.rt, t.namespace, body, dry_run=dry_run, validation=validation,
                                       manager=field_manager(request))
                return with_warnings(KubeJSONResponse(t.out(obj), status_code=201), validation)
            if method == "DELETE":
                body = await read_body(request)
                result = await api.delete_collection(t.rt, t.namespace, list_options(params),
                                                     delete_options(params, body))
                return KubeJSONResponse(t.served.out_list(result) if t.served is not None else result)
            raise errors.MethodNotAllowed(f"{method} is not supported on a collection")
        if method == "GET":
            if parse_bool(params.get("watch")):
                opts = list_options(params)
                opts.field_selector = ",".join(filter(None, [opts.field_selector, f"metadata.name={t.name}"]))
                return await watch_response(request, t, opts)
            if t.subresource is None:
                out = negotiation.negotiate(request.headers.get("accept"), negotiation.OBJECT_TARGETS)
                obj = t.out(await api.get(t.rt, t.namespace, t.name))
                return respond(negotiation.convert_object(obj, t.rt.kind, out, params, cols=custom_columns(t.rt)),
                               out)
            return KubeJSONResponse(t.out(await api.get(t.rt, t.namespace, t.name)))
        if method == "PUT":
            body = await read_body(request)
            if t.served is not None:
                body = t.served.to_storage(body, await api.get(t.rt, t.namespace, t.name))
            validation = FieldValidation.parse(params.get("fieldValidation"), "UpdateOptions")
            obj = await api.update(t.rt, t.namespace, t.name, body, t.subresource, dry_run, validation,
                                   field_manager(request))
            return with_warnings(KubeJSONResponse(t.out(obj)), validation)
        if method == "PATCH":
            body = await read_body(request)
            ctype = request.headers.get("content-type", "")
            validation = FieldValidation.parse(params.get("fieldValidation"), "PatchOptions")
            view = t.served.view if t.served is not None else None
            if ctype.split(";")[0].strip().lower() == APPLY_PATCH:
                if not params.get("fieldManager"):
                    raise errors.invalid("PatchOptions.meta.k8s.io", "", [
                        ("fieldManager", None, "Required value: is required for apply patch")])
                obj, created = await api.apply(t.rt, t.namespace, t.name, body, params["fieldManager"],
                                               parse_bool(params.get("force")), t.subresource, dry_run,
                                               validation, view)
                return with_warnings(KubeJSONResponse(t.out(obj), status_code=201 if created else 200), validation)
            if "force" in params:
                raise errors.invalid("PatchOptions.meta.k8s.io", "", [
                    ("force", None, "Forbidden: may not be specified for non-apply patch")])
            obj = await api.patch(t.rt, t.namespace, t.name, body, ctype, t.subresource, dry_run, validation,
                                  view, field_manager(request))
            return with_warnings(KubeJSONResponse(t.out(obj)), validation)
        if method == "DELETE":
            if t.subresource:
                raise errors.MethodNotAllowed(f"DELETE is not supported on {t.subresource}")
            body = await read_body(request)
            del_opts = delete_options(params, body)
            del_opts.dry_run = del_opts.dry_run or dry_run
            return KubeJSONResponse(t.out(await api.delete(t.rt, t.namespace, t.name, del_opts)))
        raise errors.MethodNotAllowed(f"{method} is not supported here")

    async def component_statuses(request: Request, t: Target) -> Response:
        """GET (list or one) of ComponentStatus, probed now, with kube-apiserver's deprecation warning."""
        if request.method != "GET" or parse_bool(request.query_params.get("watch")):
            raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
        lease_rt = registry.get("coordination.k8s.io", "v1", "leases")
        assert lease_rt is not None

        async def read_lease(name: str) -> Obj:
            return await api.get(lease_rt, "kube-system", name)

        params = request.query_params
        if t.name is None:
            out = negotiation.negotiate(request.headers.get("accept"), negotiation.LIST_TARGETS)
            listed = await componentstatus.list_(store, read_lease, list_options(params))
            data = negotiation.convert_list(listed, t.rt.kind, out, params)
        else:
            out = negotiation.negotiate(request.headers.get("accept"), negotiation.OBJECT_TARGETS)
            data = negotiation.convert_object(await componentstatus.get(t.name, store, read_lease), t.rt.kind,
                                              out, params)
        return with_warnings(respond(data, out), FieldValidation(warnings=[componentstatus.DEPRECATION]))

    def field_manager(request: Request) -> str:
        """The manager of a write: ``?fieldManager=``, else the User-Agent's first token (Kubernetes' default)."""
        return request.query_params.get("fieldManager") or \
            fieldmanager.manager_from_user_agent(request.headers.get("user-agent", ""))

    def respond(data: Any, out: negotiation.Output, status_code: int = 200) -> Response:
        return Response(negotiation.render(data, out), status_code=status_code, media_type=out.media_type)

    async def watch_response(request: Request, t: Target, opts: ListOptions) -> Response:
        out = negotiation.negotiate(request.headers.get("accept"), negotiation.OBJECT_TARGETS, watch=True)
        if out.as_kind == "Table":
            negotiation.include_object(request.query_params)  # 400 before the stream starts
        events = await api.watch(t.rt, t.namespace, opts)  # 410 / 400 answer here as a Status
        cols = custom_columns(t.rt)

        async def stream() -> AsyncIterator[bytes]:
            first = True
            try:
                async for ev in events:
                    if isinstance(ev, SharedEvent) and t.served is None and not out.as_kind:
                        first = False
                        yield ev.encoded()  # serialised once for every watcher of the cache
                        continue
                    if t.served is not None:
                        ev = t.served.out_event(ev)
                    ev = negotiation.convert_event(ev, t.rt.kind, out, request.query_params, first, cols)
                    first = first and ev.get("type") not in ("ADDED", "MODIFIED", "DELETED")
                    yield encode_json(ev)
            finally:
                await events.aclose()  # type: ignore[attr-defined]

        return StreamingResponse(stream(), media_type="application/json",
                                 headers={"Transfer-Encoding": "chunked", "Cache-Control": "no-cache"})

    metrics.register(app)  # before the generic route below, which would take metrics.k8s.io for stored kinds
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]

    @app.api_route("/api/v1/{rest:path}", methods=methods, include_in_schema=False)
    async def core_route(request: Request, rest: str) -> Response:
        return await handle(request, "", "v1", rest)

    @app.api_route("/apis/{group}/{version}/{rest:path}", methods=methods, include_in_schema=False)
    async def group_route(request: Request, group: str, version: str, rest: str) -> Response:
        return await handle(request, group, version, rest)

    pods.register_websocket(app)

    return app
