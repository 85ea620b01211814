"""Decoding Kubernetes' protobuf request bodies into their JSON form.

The bodies are built with the same message descriptors (``protobuf`` library), as Go's generated
code encodes them: non-pointer fields present even when empty, the ``k8s\\x00`` magic and a
``runtime.Unknown`` envelope.  The real kubectl sending them is in tests/integration/test_real_kubectl.py.
"""

from __future__ import annotations

import pytest

from minik8s.api import errors
from minik8s.apiserver import protobuf


def envelope(api_version: str, kind: str, msg: object) -> bytes:
    unknown = protobuf.message_class("k8s.io.apimachinery.pkg.runtime.Unknown")()
    unknown.typeMeta.apiVersion = api_version
    unknown.typeMeta.kind = kind
    unknown.raw = msg.SerializeToString()  # type: ignore[attr-defined]
    unknown.contentType = ""
    return protobuf.MAGIC + unknown.SerializeToString()


def test_deployment_like_kubectl_create_sends_it() -> None:
    deploy = protobuf.message_class("k8s.io.api.apps.v1.Deployment")()
    deploy.metadata.name = "web"
    deploy.metadata.labels["app"] = "web"
    deploy.metadata.creationTimestamp.SetInParent()  # Go's zero time: null in JSON
    deploy.spec.replicas = 0
    deploy.spec.selector.matchLabels["app"] = "web"
    deploy.spec.template.metadata.labels["app"] = "web"
    container = deploy.spec.template.spec.containers.add()
    container.name, container.image = "nginx", "minik8s/nginx"
    container.terminationMessagePath = ""  # non-pointer strings are encoded even when empty
    container.resources.limits["cpu"].string = "500m"
    port = container.ports.add()
    port.containerPort = 80
    probe = container.readinessProbe
    probe.handler.httpGet.port.type = 1
    probe.handler.httpGet.port.strVal = "http"
    volume = deploy.spec.template.spec.volumes.add()
    volume.name = "cfg"
    volume.volumeSource.configMap.localObjectReference.name = "settings"
    deploy.spec.strategy.SetInParent()
    deploy.status.SetInParent()
    obj = protobuf.decode(envelope("apps/v1", "Deployment", deploy))
    assert obj == {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                     "volumes": [{"name": "cfg", "configMap": {"name": "settings"}}],
                     "containers": [{"name": "nginx", "image": "minik8s/nginx", "ports": [{"containerPort": 80}],
                                     "resources": {"limits": {"cpu": "500m"}},
                                     "readinessProbe": {"httpGet": {"port": "http"}}}]}}},
    }


def test_special_types() -> None:
    secret = protobuf.message_class("k8s.io.api.core.v1.Secret")()
    secret.metadata.name = "s"
    secret.metadata.creationTimestamp.seconds = 1_700_000_000
    secret.data["key"] = b"\x00\xffbytes"
    secret.type = "Opaque"
    obj = protobuf.decode(envelope("v1", "Secret", secret))
    assert obj["data"] == {"key": "AP9ieXRlcw=="} and obj["type"] == "Opaque"
    assert obj["metadata"]["creationTimestamp"] == "2023-11-14T22:13:20Z"
    svc = protobuf.message_class("k8s.io.api.core.v1.Service")()
    port = svc.spec.ports.add()
    port.port, port.targetPort.intVal, port.nodePort = 80, 8080, 0
    assert protobuf.decode(envelope("v1", "Service", svc))["spec"] == {"ports": [{"port": 80, "targetPort": 8080}]}
    ing = protobuf.message_class("k8s.io.api.networking.v1.Ingress")()
    rule = ing.spec.rules.add()
    rule.host = "foo.com"
    path = rule.ingressRuleValue.http.paths.add()
    path.path, path.backend.service.name = "/bar", "svc1"
    assert protobuf.decode(envelope("networking.k8s.io/v1", "Ingress", ing))["spec"] == {
        "rules": [{"host": "foo.com", "http": {"paths": [{"path": "/bar", "backend": {"service": {"name": "svc1"}}}]}}]}


def test_bad_bodies() -> None:
    with pytest.raises(errors.BadRequest):
        protobuf.decode(b'{"kind": "Pod"}')
    with pytest.raises(errors.BadRequest):
        protobuf.decode(protobuf.MAGIC + b"\xff\xff\xff")
    dns = protobuf.message_class("k8s.io.api.core.v1.Namespace")()
    with pytest.raises(errors.UnsupportedMediaType):  # a kind without Kubernetes messages
        protobuf.decode(envelope("minik8s.io/v1", "DNS", dns))


def test_options_kinds_decode_whatever_group_version_the_envelope_names() -> None:
    """client-go registers meta/v1's DeleteOptions in every group version: Helm's ``helm uninstall``
    sends it as ``v1`` (or the resource's group version), in protobuf."""
    opts = protobuf.message_class("k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions")()
    opts.propagationPolicy = "Background"
    opts.gracePeriodSeconds = 0
    opts.preconditions.uid = "u-1"
    for api_version in ("v1", "apps/v1", "meta.k8s.io/v1", "batch/v1"):
        obj = protobuf.decode(envelope(api_version, "DeleteOptions", opts))
        assert obj == {"apiVersion": api_version, "kind": "DeleteOptions", "propagationPolicy": "Background",
                       "preconditions": {"uid": "u-1"}}, api_version


def test_subresource_and_review_bodies_decode() -> None:
    eviction = protobuf.message_class("k8s.io.api.policy.v1.Eviction")()
    eviction.metadata.name, eviction.metadata.namespace = "web-0", "default"
    eviction.deleteOptions.gracePeriodSeconds = 30
    assert protobuf.decode(envelope("policy/v1", "Eviction", eviction)) == {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-0", "namespace": "default"},
        "deleteOptions": {"gracePeriodSeconds": 30}}
    scale = protobuf.message_class("k8s.io.api.autoscaling.v1.Scale")()
    scale.metadata.name, scale.spec.replicas = "web", 0
    assert protobuf.decode(envelope("autoscaling/v1", "Scale", scale))["spec"] == {"replicas": 0}
    request = protobuf.message_class("k8s.io.api.authentication.v1.TokenRequest")()
    request.spec.audiences.append("vault")
    request.spec.expirationSeconds = 600
    assert protobuf.decode(envelope("authentication.k8s.io/v1", "TokenRequest", request))["spec"] == {
        "audiences": ["vault"], "expirationSeconds": 600}
    review = protobuf.message_class("k8s.io.api.authorization.v1.SelfSubjectAccessReview")()
    review.spec.resourceAttributes.verb, review.spec.resourceAttributes.resource = "list", "pods"
    assert protobuf.decode(envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", review))["spec"] == {
        "resourceAttributes": {"verb": "list", "resource": "pods"}}


def test_every_kind_of_every_stable_group_decodes() -> None:
    """Every top-level kind (a message with ``metadata``) of Kubernetes' stable group versions."""
    from google.protobuf import descriptor_pb2

    seen = 0
    for fd in descriptor_pb2.FileDescriptorSet.FromString(protobuf.DESCRIPTORS.read_bytes()).file:
        if not fd.package.startswith("k8s.io.api."):
            continue
        _, _, group, version = fd.package.rsplit(".", 3)
        api_version = version if group == "core" else f"{group}/{version}"
        for message in fd.message_type:
            if not any(f.name == "metadata" for f in message.field) or message.name.endswith("List"):
                continue
            msg = protobuf.message_class(f"{fd.package}.{message.name}")()
            msg.metadata.name = "x"  # type: ignore[attr-defined]
            obj = protobuf.decode(envelope(api_version, message.name, msg))
            assert obj["kind"] == message.name and obj["metadata"] == {"name": "x"}, fd.package
            seen += 1
    assert seen > 60
