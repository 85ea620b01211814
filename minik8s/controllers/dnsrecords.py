"""The DNS controller: run nginx for every DNS object (and Ingress) and keep its Service.

For each ``minik8s.io/v1`` DNS object (and each ``networking.k8s.io/v1`` Ingress of class
``minik8s``, of another IngressClass whose ``spec.controller`` is ``minik8s.io/nginx``, or without
class; Ingresses of other classes are another controller's and are ignored) the controller keeps,
in the object's namespace:

* a Deployment ``dns-<name>`` (``ingress-<name>``) of 1 replica of ``minik8s/nginx:latest``
  whose pod template carries the generated configuration
  (:func:`minik8s.controllers.nginxconf.render_config`) in the env var ``NGINX_CONFIG``;
  the container writes it to ``/etc/nginx/conf.d/default.conf`` and runs nginx.  No
  ConfigMap is needed, and a changed object (or a backend Service getting its ClusterIP)
  changes the template, so the Deployment rolls out the new configuration;
* a ClusterIP Service of the same name selecting those pods (port ``http`` 80).

Both carry a controller ownerReference to the DNS object (``blockOwnerDeletion``), so the
garbage collector removes them when it is deleted.  An existing Deployment or Service of
that name not controlled by the object is never touched (Warning event ``NameConflict``).
Writes happen only when the desired spec changed: the hash of what the controller wants is
kept in the annotation ``minik8s.io/spec-hash``, so ``kubectl scale`` of the nginx
Deployment is not fought.

Status: a DNS object gets ``serviceName``, ``serviceAddress`` (the ClusterIP its host
resolves to, through the cluster DNS server :mod:`minik8s.dns`), ``observedGeneration``
and a ``Ready`` condition (True once the nginx Deployment has an available replica;
False with reason ``HostConflict`` when an older object already claims the host — that
object keeps it, see :func:`minik8s.api.networking.claimed_hosts`).  An Ingress gets
``status.loadBalancer.ingress[0].ip`` = the ClusterIP.

At start-up, and whenever it is deleted, the controller creates the IngressClass ``minik8s``
(``spec.controller: minik8s.io/nginx``; not the default class: that is the administrator's choice,
through the ``ingressclass.kubernetes.io/is-default-class`` annotation).

Work items are ``<Kind>|<namespace>/<name>`` (``DNS|default/shop``), and ``IngressClass|minik8s``.
"""

from __future__ import annotations

import copy
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.api.networking import (
    FRONTEND_LABEL,
    INGRESS_API_VERSION,
    INGRESS_CLASS,
    INGRESS_CONTROLLER,
    Frontend,
    Route,
    claimed_hosts,
    frontend_of,
    is_controlled_by,
)
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client
from minik8s.controllers.base import HASH_ANNOTATION, Controller, ready_condition, spec_hash
from minik8s.controllers.nginxconf import LISTEN_PORT, container_command, render_config
from minik8s.controllers.ownerrefs import meta_of

NGINX_IMAGE = "minik8s/nginx:latest"
MANAGED_BY = "dns-controller"
#: Kinds handled, by ``kind`` → ``apiVersion``.
KINDS = {"DNS": "minik8s.io/v1", "Ingress": "networking.k8s.io/v1"}


def resolve_backend(route: Route, service: Obj | None) -> tuple[str, int] | None:
    """``(ClusterIP, port)`` for ``route`` given its backend Service; None when the Service is
    missing, has no ClusterIP (headless, ExternalName) or lacks the named port."""
    if service is None:
        return None
    spec = service.get("spec") or {}
    ip = spec.get("clusterIP")
    if not ip or ip == "None" or spec.get("type") == "ExternalName":
        return None
    if isinstance(route.port, int):
        return (ip, route.port)
    for port in spec.get("ports") or []:
        if port.get("name") == route.port and isinstance(port.get("port"), int):
            return (ip, port["port"])
    return None


def owner_reference(frontend: Frontend) -> Obj:
    return {"apiVersion": frontend.api_version or KINDS[frontend.kind], "kind": frontend.kind,
            "name": frontend.name, "uid": frontend.uid, "controller": True, "blockOwnerDeletion": True}


def child_labels(frontend: Frontend) -> dict[str, str]:
    return {FRONTEND_LABEL: frontend.label_value, "app.kubernetes.io/name": "nginx",
            "app.kubernetes.io/managed-by": MANAGED_BY}


def desired_deployment(frontend: Frontend, config: str) -> Obj:
    """The nginx Deployment for ``frontend`` serving ``config`` (annotation: its spec hash)."""
    labels = child_labels(frontend)
    spec: Obj = {
        "replicas": 1,
        "selector": {"matchLabels": {FRONTEND_LABEL: frontend.label_value}},
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{
                "name": "nginx",
                "image": NGINX_IMAGE,
                "command": container_command(),
                "env": [{"name": "NGINX_CONFIG", "value": config}],
                "ports": [{"name": "http", "containerPort": LISTEN_PORT, "protocol": "TCP"}],
                "readinessProbe": {"tcpSocket": {"port": LISTEN_PORT}, "periodSeconds": 2},
            }]},
        },
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": frontend.resource_name, "namespace": frontend.namespace, "labels": labels,
                         "annotations": {HASH_ANNOTATION: spec_hash(spec)},
                         "ownerReferences": [owner_reference(frontend)]},
            "spec": spec}


def desired_service(frontend: Frontend) -> Obj:
    """The ClusterIP Service in front of ``frontend``'s nginx pods (port ``http`` 80)."""
    spec: Obj = {"type": "ClusterIP", "selector": {FRONTEND_LABEL: frontend.label_value},
                 "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": frontend.resource_name, "namespace": frontend.namespace,
                         "labels": child_labels(frontend), "annotations": {HASH_ANNOTATION: spec_hash(spec)},
                         "ownerReferences": [owner_reference(frontend)]},
            "spec": spec}


class DNSController(Controller):
    """Reconciles DNS objects and Ingresses into nginx Deployments and Services."""

    name = "dns-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.rts = {kind: client.kind(api_version, kind) for kind, api_version in KINDS.items()}
        self.deploy_rt = client.kind("apps/v1", "Deployment")
        self.svc_rt = client.kind("v1", "Service")
        self.sources = {kind: factory.informer(rt, {NAMESPACE_INDEX: by_namespace}) for kind, rt in self.rts.items()}
        self.services = factory.informer(self.svc_rt, {NAMESPACE_INDEX: by_namespace})
        self.deployments = factory.informer(self.deploy_rt, {NAMESPACE_INDEX: by_namespace})
        for informer in self.sources.values():
            informer.add_handler(self._on_source, self._on_source_update, self._on_source)
        for informer in (self.services, self.deployments):
            informer.add_handler(self._on_child, lambda _old, cur: self._on_child(cur), self._on_child)
        self.class_rt = client.kind(INGRESS_API_VERSION, "IngressClass")
        self.ingress_classes = factory.informer(self.class_rt)
        self.ingress_classes.add_handler(self._on_class, lambda _old, cur: self._on_class(cur), self._on_class)

    async def run(self, workers: int = 1) -> None:
        """Make sure the IngressClass ``minik8s`` exists, then run as every controller does."""
        self.enqueue(f"IngressClass|{INGRESS_CLASS}")
        await super().run(workers)

    def classes(self) -> set[str]:
        """The IngressClass names served here: ``minik8s`` and every class of controller ``minik8s.io/nginx``."""
        return {INGRESS_CLASS} | {meta_of(ic).get("name") or "" for ic in self.ingress_classes.list()
                                  if (ic.get("spec") or {}).get("controller") == INGRESS_CONTROLLER}

    def _on_class(self, obj: Obj) -> None:
        """An IngressClass changed: its Ingresses may become (or stop being) ours."""
        if meta_of(obj).get("name") == INGRESS_CLASS:
            self.enqueue(f"IngressClass|{INGRESS_CLASS}")
        for ingress in self.sources["Ingress"].list():
            self.enqueue(f"Ingress|{object_key(ingress)}")

    async def _ensure_class(self) -> None:
        if self.ingress_classes.get(INGRESS_CLASS) is not None:
            return
        body = {"apiVersion": INGRESS_API_VERSION, "kind": "IngressClass", "metadata": {"name": INGRESS_CLASS},
                "spec": {"controller": INGRESS_CONTROLLER}}
        try:
            await self.client.create(self.class_rt, body)
            self.log.info("created IngressClass %s (controller %s)", INGRESS_CLASS, INGRESS_CONTROLLER)
        except errors.AlreadyExists:
            pass

    # ------------------------------------------------------------------ event handlers
    def _frontends(self, namespace: str | None = None) -> list[Frontend]:
        out = []
        classes = self.classes()
        for informer in self.sources.values():
            objs = informer.list() if namespace is None else informer.by_index(NAMESPACE_INDEX, namespace)
            out += [fe for obj in objs if (fe := frontend_of(obj, classes)) is not None]
        return out

    def _enqueue_frontend(self, fe: Frontend) -> None:
        self.enqueue(f"{fe.kind}|{fe.key}")

    def _on_source(self, obj: Obj) -> None:
        self.enqueue(f"{obj.get('kind')}|{object_key(obj)}")
        fe = frontend_of(obj, self.classes())
        hosts = set(fe.hosts) if fe else set()
        if hosts:  # a host claimed or released: the others naming it may change their status
            for other in self._frontends():
                if hosts & set(other.hosts):
                    self._enqueue_frontend(other)

    def _on_source_update(self, old: Obj, cur: Obj) -> None:
        self._on_source(old)
        self._on_source(cur)

    def _on_child(self, obj: Obj) -> None:
        """A Service or Deployment changed: sync every frontend it backs or belongs to."""
        meta = meta_of(obj)
        name, namespace = meta.get("name"), meta.get("namespace") or ""
        for fe in self._frontends(namespace):
            if fe.resource_name == name or any(r.service == name for s in fe.sites for r in s.routes):
                self._enqueue_frontend(fe)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        """Reconcile one DNS object or Ingress (``Kind|namespace/name``)."""
        kind, _, obj_key = key.partition("|")
        if kind == "IngressClass":
            await self._ensure_class()
            return
        informer = self.sources.get(kind)
        obj = informer.get(obj_key) if informer else None
        if obj is None or meta_of(obj).get("deletionTimestamp"):
            return  # the garbage collector removes the children
        frontend = frontend_of(obj, self.classes())
        if frontend is None:
            return  # an Ingress of another class
        namespace = frontend.namespace

        def resolve(route: Route) -> tuple[str, int] | None:
            return resolve_backend(route, self.services.get(f"{namespace}/{route.service}"))

        config = render_config(frontend, resolve)
        deployment = await self._ensure(self.deploy_rt, self.deployments, obj, frontend,
                                        desired_deployment(frontend, config))
        service = await self._ensure(self.svc_rt, self.services, obj, frontend, desired_service(frontend))
        await self._write_status(obj, frontend, deployment, service)

    async def _ensure(self, rt: Any, cache: Any, owner: Obj, frontend: Frontend, want: Obj) -> Obj | None:
        """Create ``want`` or update the existing child when its spec hash differs; returns the
        child as stored (None when the name is taken by an object we do not control)."""
        key = f"{frontend.namespace}/{frontend.resource_name}"
        current = cache.get(key)
        if current is None:
            try:
                created: Obj = await self.client.create(rt, want, frontend.namespace)
            except errors.AlreadyExists:
                raise errors.Conflict(f"{rt.kind} {key} exists but is not in the cache yet") from None
            self.log.info("%s %s: created %s %s", frontend.kind, frontend.key, rt.kind, key)
            return created
        if not is_controlled_by(current, frontend.uid):
            self.event(owner, "Warning", "NameConflict",
                       f"{rt.kind} {frontend.resource_name} exists and is not controlled by this {frontend.kind}")
            return None
        want_hash = want["metadata"]["annotations"][HASH_ANNOTATION]
        if (meta_of(current).get("annotations") or {}).get(HASH_ANNOTATION) == want_hash:
            return current  # type: ignore[no-any-return]
        updated = copy.deepcopy(current)
        meta = updated["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), **want["metadata"]["labels"]}
        meta["annotations"] = {**(meta.get("annotations") or {}), HASH_ANNOTATION: want_hash}
        if rt.kind == "Service":
            updated["spec"].update({k: v for k, v in want["spec"].items()})
        else:
            updated["spec"] = want["spec"]
        result: Obj = await self.client.update(rt, updated)
        self.log.info("%s %s: updated %s %s", frontend.kind, frontend.key, rt.kind, key)
        return result

    async def _write_status(self, obj: Obj, frontend: Frontend, deployment: Obj | None, service: Obj | None) -> None:
        ip = ((service or {}).get("spec") or {}).get("clusterIP")
        old_status = obj.get("status") or {}
        status: Obj
        if frontend.kind == "Ingress":
            status = {"loadBalancer": {"ingress": [{"ip": ip}]}} if ip else {}
        else:
            old_ready = next((c for c in old_status.get("conditions") or [] if c.get("type") == "Ready"), None)
            owners = claimed_hosts(self._frontends())
            winner = owners.get(frontend.hosts[0]) if frontend.hosts else None
            available = int(((deployment or {}).get("status") or {}).get("availableReplicas") or 0)
            if winner is not None and winner.uid != frontend.uid:
                cond = ready_condition(old_ready, "False", "HostConflict",
                                       f"host {frontend.hosts[0]} is served by {winner.kind} {winner.key}")
            elif deployment is None or service is None:
                cond = ready_condition(old_ready, "False", "NameConflict",
                                       f"Deployment or Service {frontend.resource_name} is not ours")
            elif available < 1 or not ip:
                cond = ready_condition(old_ready, "False", "NginxUnavailable", "nginx has no available replica yet")
            else:
                cond = ready_condition(old_ready, "True", "NginxAvailable", f"{frontend.hosts[0]} -> {ip}")
            status = {"observedGeneration": meta_of(obj).get("generation"), "conditions": [cond]}
            if service is not None:
                status["serviceName"] = frontend.resource_name
            if ip:
                status["serviceAddress"] = ip
            status = {k: v for k, v in status.items() if v is not None}
        if status == old_status:
            return
        updated = copy.deepcopy(obj)
        updated["status"] = status
        try:
            await self.client.update_status(self.rts[frontend.kind], updated)
        except errors.NotFound:
            return
