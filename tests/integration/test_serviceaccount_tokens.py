"""Service-account tokens: the TokenRequest API (``serviceaccounts/NAME/token``) and TokenReview,
driven through the official ``kubernetes`` client (which validates every answer against Kubernetes'
models), the real kubectl (``kubectl create token``) and minik8s' REST client, on a real apiserver
whose ``--service-account-signing-key-file`` the session fixture made."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import httpx
import pytest
from kubernetes import client as k8s

from minik8s.api import errors
from minik8s.client.rest import Client
from tests.realkubectl import RealKubectl, real_kubectl  # noqa: F401 - the fixture
from tests.support.processes import APIServer

GATEWAY_AUDIENCE = "minik8s-gateway"
POD = {"metadata": {"name": "holder"}, "spec": {"serviceAccountName": "robot", "containers": [
    {"name": "main", "image": "minik8s/busybox", "command": ["sleep", "3600"]}]}}


def claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def typed(url: str) -> k8s.ApiClient:
    cfg = k8s.Configuration()
    cfg.host = url
    return k8s.ApiClient(cfg)


async def review(url: str, token: str, audiences: list[str] | None = None) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=10) as h:
        spec: dict[str, Any] = {"token": token}
        if audiences is not None:
            spec["audiences"] = audiences
        r = await h.post("/apis/authentication.k8s.io/v1/tokenreviews",
                         json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})
        assert r.status_code == 201, r.text
        return r.json()["status"]


async def test_token_request_and_review_with_the_official_client(client: Client, namespace: str,
                                                                apiserver: APIServer) -> None:
    sa_rt, pod_rt = client.kind("v1", "ServiceAccount"), client.kind("v1", "Pod")
    sa = await client.create(sa_rt, {"metadata": {"name": "robot"}}, namespace)
    pod = await client.create(pod_rt, POD, namespace)
    api = typed(apiserver.url)
    core, authn = k8s.CoreV1Api(api), k8s.AuthenticationV1Api(api)
    body = k8s.AuthenticationV1TokenRequest(spec=k8s.V1TokenRequestSpec(
        audiences=[GATEWAY_AUDIENCE], expiration_seconds=600,
        bound_object_ref=k8s.V1BoundObjectReference(kind="Pod", api_version="v1", name="holder",
                                                    uid=pod["metadata"]["uid"])))
    made = await asyncio.to_thread(core.create_namespaced_service_account_token, "robot", namespace, body)
    token = made.status.token
    assert made.spec.expiration_seconds == 600 and made.spec.audiences == [GATEWAY_AUDIENCE]
    c = claims(token)
    assert c["sub"] == f"system:serviceaccount:{namespace}:robot"
    assert c["aud"] == [GATEWAY_AUDIENCE] and c["exp"] - c["iat"] == 600
    assert c["kubernetes.io"]["pod"] == {"name": "holder", "uid": pod["metadata"]["uid"]}
    assert c["kubernetes.io"]["serviceaccount"]["uid"] == sa["metadata"]["uid"]

    answer = await asyncio.to_thread(authn.create_token_review, k8s.V1TokenReview(
        spec=k8s.V1TokenReviewSpec(token=token, audiences=[GATEWAY_AUDIENCE])))
    assert answer.status.authenticated is True
    assert answer.status.user.username == f"system:serviceaccount:{namespace}:robot"
    assert answer.status.user.uid == sa["metadata"]["uid"]
    assert f"system:serviceaccounts:{namespace}" in answer.status.user.groups
    assert answer.status.user.extra["authentication.kubernetes.io/pod-name"] == ["holder"]
    assert answer.status.audiences == [GATEWAY_AUDIENCE]

    # another audience does not accept it; the apiserver's own audience is not in the token
    wrong = await review(apiserver.url, token, ["someone-else"])
    assert wrong["authenticated"] is False and "audiences" in wrong["error"]
    assert (await review(apiserver.url, token))["authenticated"] is False
    # a forged or garbled token is refused with a reason, never a 500
    head, payload, sig = token.split(".")
    forged = json.dumps({**c, "sub": f"system:serviceaccount:{namespace}:admin"}).encode()
    forged_token = f"{head}.{base64.urlsafe_b64encode(forged).rstrip(b'=').decode()}.{sig}"
    for bad in (forged_token, "not-a-jwt", token[:-4] + "AAAA"):
        status = await review(apiserver.url, bad, [GATEWAY_AUDIENCE])
        assert status["authenticated"] is False and status["error"], status

    # a bound token dies with its pod (Kubernetes checks the pod's uid on every review)
    await client.delete(pod_rt, "holder", namespace, grace_period_seconds=0)
    gone = await review(apiserver.url, token, [GATEWAY_AUDIENCE])
    assert gone["authenticated"] is False and "holder" in gone["error"], gone


async def test_token_request_errors(client: Client, namespace: str, apiserver: APIServer) -> None:
    sa_rt, pod_rt = client.kind("v1", "ServiceAccount"), client.kind("v1", "Pod")
    await client.create(sa_rt, {"metadata": {"name": "robot"}}, namespace)
    await client.create(sa_rt, {"metadata": {"name": "other"}}, namespace)
    pod = await client.create(pod_rt, POD, namespace)
    base = f"/api/v1/namespaces/{namespace}/serviceaccounts"
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=10) as h:
        r = await h.post(f"{base}/robot/token", json={"spec": {"expirationSeconds": 60}})
        assert r.status_code == 422 and "less than 10 minutes" in r.json()["message"], r.text
        r = await h.post(f"{base}/robot/token", json={"spec": {"boundObjectRef": {"kind": "Node", "name": "n"}}})
        assert r.status_code == 422 and "boundObjectRef.kind" in r.json()["message"], r.text
        r = await h.post(f"{base}/nobody/token", json={})
        assert r.status_code == 404 and r.json()["reason"] == "NotFound", r.text
        r = await h.post(f"{base}/other/token", json={"spec": {"boundObjectRef": {"kind": "Pod", "name": "holder"}}})
        assert r.status_code == 400 and "different serviceaccount" in r.json()["message"], r.text
        r = await h.post(f"{base}/robot/token", json={"spec": {"boundObjectRef": {
            "kind": "Pod", "name": "holder", "uid": "not-" + pod["metadata"]["uid"]}}})
        assert r.status_code == 409, r.text
        r = await h.post(f"{base}/robot/token", content=b"[1, 2", headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text
        r = await h.get(f"{base}/robot/token")
        assert r.status_code == 405, r.text
        r = await h.get("/apis/authentication.k8s.io/v1/tokenreviews")
        assert r.status_code == 405, r.text
        r = await h.post("/apis/authentication.k8s.io/v1/tokenreviews", json={"spec": {}})
        assert r.status_code == 422, r.text
        # a default request: the apiserver's audiences, an hour, unbound
        r = await h.post(f"{base}/robot/token", json={})
        assert r.status_code == 201, r.text
        made = r.json()
        assert made["spec"] == {"audiences": ["https://kubernetes.default.svc.cluster.local"],
                                "expirationSeconds": 3600}
        assert (await review(apiserver.url, made["status"]["token"]))["authenticated"] is True
        # deleting the ServiceAccount invalidates its tokens
        await client.delete(sa_rt, "robot", namespace)
        assert (await review(apiserver.url, made["status"]["token"]))["authenticated"] is False
    with pytest.raises(errors.NotFound):
        await client.get(sa_rt, "robot", namespace)


async def test_kubectl_create_token(client: Client, namespace: str, real_kubectl: RealKubectl,  # noqa: F811
                                    apiserver: APIServer) -> None:
    await client.create(client.kind("v1", "ServiceAccount"), {"metadata": {"name": "robot"}}, namespace)
    out = await asyncio.to_thread(real_kubectl.ok, "create", "token", "robot", "--audience", GATEWAY_AUDIENCE,
                                  "--duration", "15m")
    token = out.out.strip()
    c = claims(token)
    assert c["aud"] == [GATEWAY_AUDIENCE] and c["exp"] - c["iat"] == 900
    assert (await review(apiserver.url, token, [GATEWAY_AUDIENCE]))["authenticated"] is True
    missing = await asyncio.to_thread(real_kubectl, "create", "token", "nobody")
    assert missing.code != 0 and "not found" in missing.err, missing.err
