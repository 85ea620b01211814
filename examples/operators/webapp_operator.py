"""A kopf operator for the WebApp custom resource (webapp-crd.yaml): each WebApp runs as a
Deployment of its ``spec.image`` with ``spec.replicas`` pods, owned by the WebApp (deleting it
deletes them), and its status reports the Deployment's ready pods.

Nothing here is minik8s-specific: it is a plain `kopf <https://kopf.readthedocs.io>`_ operator
using the official ``kubernetes`` client, and runs unchanged against Kubernetes.

    pip install kopf kubernetes
    kubectl apply -f examples/operators/webapp-crd.yaml
    kopf run --standalone --namespace default examples/operators/webapp_operator.py
    kubectl apply -f examples/operators/webapp.yaml      # then: kubectl get wa, kubectl scale wa web --replicas=3
"""

from __future__ import annotations

from typing import Any

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "demo.minik8s.io", "v1", "webapps"


def _apps() -> kubernetes.client.AppsV1Api:
    return kubernetes.client.AppsV1Api()


def deployment(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The Deployment that runs one WebApp (namespace and owner reference come from kopf.adopt)."""
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "webapp-operator"}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": spec.get("replicas", 1),
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {
                "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "web", "image": spec["image"], "imagePullPolicy": "IfNotPresent",
                                "ports": [{"containerPort": 80}]}]}},
        },
    }


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_fn(spec: kopf.Spec, name: str, namespace: str, body: kopf.Body, **_: Any) -> dict[str, Any]:
    dep = deployment(name, dict(spec))
    kopf.adopt(dep)
    _apps().create_namespaced_deployment(namespace, dep)
    kopf.info(body, reason="DeploymentCreated", message=f"created Deployment {name}")
    return {"deployment": name}


@kopf.on.field(GROUP, VERSION, PLURAL, field="spec.replicas")
def replicas_fn(old: Any, new: Any, name: str, namespace: str, body: kopf.Body, **_: Any) -> None:
    if old is None:  # the create handler made the Deployment with it
        return
    _apps().patch_namespaced_deployment_scale(name, namespace, {"spec": {"replicas": new}})
    kopf.info(body, reason="Scaled", message=f"scaled Deployment {name} from {old} to {new}")


@kopf.timer(GROUP, VERSION, PLURAL, interval=1.0)
def status_fn(name: str, namespace: str, patch: kopf.Patch, status: kopf.Status, **_: Any) -> None:
    """Report the Deployment's pods in the WebApp's status (``replicas`` feeds the scale subresource)."""
    try:
        dep = _apps().read_namespaced_deployment_status(name, namespace)
    except kubernetes.client.ApiException as e:
        if e.status == 404:
            return
        raise
    ready, replicas = dep.status.ready_replicas or 0, dep.status.replicas or 0
    if status.get("readyReplicas") != ready or status.get("replicas") != replicas:
        patch.status["readyReplicas"] = ready
        patch.status["replicas"] = replicas


@kopf.on.delete(GROUP, VERSION, PLURAL)
def delete_fn(name: str, body: kopf.Body, **_: Any) -> None:
    # the Deployment goes with its owner (garbage collection); this only tells the user
    kopf.info(body, reason="Deleting", message=f"WebApp {name} deleted; its Deployment goes with it")
