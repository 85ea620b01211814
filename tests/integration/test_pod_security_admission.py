"""Pod Security Admission through the real apiserver: namespace labels choose enforce (403
Forbidden with Kubernetes' message, nothing stored), warn (``Warning`` headers, the pod created),
workload templates (warnings only), bad label values (422) and securityContext validation (422)."""

from __future__ import annotations

import httpx

from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from tests.support.processes import APIServer

PSA = "pod-security.kubernetes.io/"
RESTRICTED_SC = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                 "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}


def pod(name: str, **sc: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox", "securityContext": sc}]}}


async def label(client: Client, ns: str, labels: dict[str, str | None]) -> None:
    await client.patch(client.kind("v1", "Namespace"), ns, {"metadata": {"labels": labels}})


async def test_enforce_and_warn(apiserver: APIServer, client: Client, namespace: str) -> None:
    await label(client, namespace, {PSA + "enforce": "baseline", PSA + "warn": "restricted",
                                    PSA + "warn-version": "latest"})
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=10) as http:
        url = f"/api/v1/namespaces/{namespace}/pods"
        resp = await http.post(url, json=pod("priv", privileged=True))
        assert resp.status_code == 403
        status = resp.json()
        assert status["reason"] == "Forbidden"
        assert status["message"] == ('pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged '
                                     '(container "c" must not set securityContext.privileged=true)')
        assert (await http.get(f"{url}/priv")).status_code == 404

        resp = await http.post(url, json=pod("plain"))
        assert resp.status_code == 201, resp.text
        warnings = resp.headers.get_list("warning")
        assert warnings == [
            '299 - "would violate PodSecurity \\"restricted:latest\\": allowPrivilegeEscalation != false '
            '(container \\"c\\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
            '(container \\"c\\" must set securityContext.capabilities.drop=[\\"ALL\\"]), runAsNonRoot != true '
            '(pod or container \\"c\\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or '
            'container \\"c\\" must set securityContext.seccompProfile.type to \\"RuntimeDefault\\" or '
            '\\"Localhost\\")"']
        resp = await http.post(url, json=pod("good", **RESTRICTED_SC))
        assert resp.status_code == 201 and resp.headers.get_list("warning") == []
        # a dry run is checked too
        resp = await http.post(url, params={"dryRun": "All"}, json=pod("dry", privileged=True))
        assert resp.status_code == 403

        # workloads: warnings for their template, never refused
        deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                      "metadata": {"labels": {"a": "b"}}, "spec": pod("x", privileged=True)["spec"]}}}
        resp = await http.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", params={"dryRun": "All"},
                               json=deploy)
        assert resp.status_code == 201, resp.text
        assert any("would violate PodSecurity" in w and "privileged" in w for w in resp.headers.get_list("warning"))

        # bad label values and securityContext fields are 422
        resp = await http.patch(f"/api/v1/namespaces/{namespace}", json={"metadata": {"labels": {
            PSA + "enforce": "strict"}}}, headers={"content-type": "application/merge-patch+json"})
        assert resp.status_code == 422
        assert 'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict"' in resp.json()["message"]
        resp = await http.post(url, json=pod("neg", runAsUser=-1))
        assert resp.status_code == 422
        assert "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647" \
            in resp.json()["message"]

        # the REST client hands warnings to its handler (our kubectl prints "Warning: ..." on stderr)
        seen: list[str] = []
        async with Client(ClientConfig(server=apiserver.url), warning_handler=seen.append) as warned:
            await warned.create(warned.kind("v1", "Pod"), pod("w", **RESTRICTED_SC), namespace)
            assert seen == []
            await warned.create(warned.kind("v1", "Pod"), pod("w2"), namespace)
        assert len(seen) == 1 and seen[0].startswith('would violate PodSecurity "restricted:latest": '
                                                     'allowPrivilegeEscalation != false (container "c" must set')
        assert seen[0].endswith('to "RuntimeDefault" or "Localhost")')

        # privileged (or no label) checks nothing
        await label(client, namespace, {PSA + "enforce": "privileged", PSA + "warn": None, PSA + "warn-version": None})
        resp = await http.post(url, json=pod("priv", privileged=True))
        assert resp.status_code == 201 and resp.headers.get_list("warning") == []
        for name in ("plain", "good", "priv", "w", "w2"):
            assert (await http.delete(f"{url}/{name}", params={"gracePeriodSeconds": "0"})).status_code == 200
