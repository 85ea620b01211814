"""securityContext in real containers: every mapped field as Docker has it (``docker inspect``
through the Docker SDK) and as the process sees it (``id``, a read-only root, capabilities,
no_new_privs and seccomp in ``/proc/1/status``), fsGroup on an emptyDir (and a configMap
volume), and runAsNonRoot refusing a root image with the kubelet's message
(CreateContainerConfigError, no crash loop).

One real kubelet process on the real Docker Engine against the real apiserver (the
:mod:`tests.support.kubelet` harness); commands run through the apiserver's exec subresource.
"""

from __future__ import annotations

import re

import pytest

from minik8s.client.rest import Client
from tests.support.kubelet import (
    BUSYBOX,
    KubeletProcess,
    create_pod,
    cstatus,
    docker_client,
    events_of,
    exec_ws,
    get_pod,
    pod_body,
    wait_phase,
)
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker

NET_BIND_SERVICE = 1 << 10
SYS_ADMIN = 1 << 21


@pytest.fixture(scope="module")
def kubelet_flags() -> list[str]:
    """This module's kubelet runs without the node labels and taint of the conftest's default."""
    return []


async def sh(apiserver: APIServer, ns: str, pod: str, container: str, script: str, ok: bool = True) -> str:
    out, err, status = await exec_ws(apiserver, ns, pod, container, ["sh", "-c", script])
    if ok:
        assert status.get("status") == "Success", (script, out, err, status)
    return (out + err).decode()


def proc_status(text: str) -> dict[str, str]:
    return dict(line.split(":\t", 1) for line in text.strip().splitlines() if ":\t" in line)


def inspect(pod_uid: str, container: str) -> dict:
    found = docker_client().containers.list(all=True, filters={"label": [f"io.kubernetes.pod.uid={pod_uid}",
                                                               f"io.kubernetes.container.name={container}"]})
    assert len(found) == 1
    return found[0].attrs  # type: ignore[no-any-return]


async def test_security_context_in_docker_and_in_the_container(kubelet: KubeletProcess, client: Client,
                                                               namespace: str, apiserver: APIServer) -> None:
    body = pod_body("sec", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sleep", "3600"],
         "volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "cfg", "mountPath": "/cfg"}],
         "securityContext": {"runAsUser": 1001, "readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                             "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}},
        {"name": "root", "image": BUSYBOX, "command": ["sleep", "3600"],
         "securityContext": {"runAsUser": 0, "capabilities": {"add": ["SYS_ADMIN"]},
                             "seccompProfile": {"type": "Unconfined"}}},
        # privileged: checked in Docker only, as a kubelet inside a container may lack capabilities
        # (CAP_SYS_RESOURCE) that runc needs to start one
        {"name": "priv", "image": BUSYBOX, "command": ["sleep", "3600"], "securityContext": {"privileged": True}}],
        securityContext={"runAsUser": 1000, "runAsGroup": 3000, "supplementalGroups": [4000], "fsGroup": 2000,
                         "seccompProfile": {"type": "RuntimeDefault"}},
        volumes=[{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "app"}}])
    await client.create(client.kind("v1", "ConfigMap"), {"metadata": {"name": "app"}, "data": {"k": "v"}}, namespace)
    await create_pod(client, namespace, body)
    pod = await wait_phase(client, namespace, "sec", "Running", 60)
    uid = pod["metadata"]["uid"]
    try:
        async def all_running() -> bool:
            statuses = [s for s in (await get_pod(client, namespace, "sec"))["status"].get("containerStatuses") or []
                        if s["name"] != "priv"]
            assert not any((s.get("state") or {}).get("waiting", {}).get("reason", "").endswith("Error")
                           for s in statuses), statuses
            return len(statuses) == 2 and all("running" in (s.get("state") or {}) for s in statuses)
        await wait_for(all_running, 30, what="both containers running", not_yet=(KeyError,))
        c, root = inspect(uid, "c"), inspect(uid, "root")
        priv = await wait_for(lambda: inspect(uid, "priv"), 30, what="the privileged container",
                              not_yet=(AssertionError,))
        assert c["Config"]["User"] == "1001:3000"  # the container's runAsUser wins, the pod's group stays
        assert c["HostConfig"]["GroupAdd"] == ["4000", "2000"]
        assert c["HostConfig"]["ReadonlyRootfs"] is True
        assert c["HostConfig"]["SecurityOpt"] == ["no-new-privileges"]
        assert c["HostConfig"]["CapAdd"] in (["NET_BIND_SERVICE"], ["CAP_NET_BIND_SERVICE"])
        assert c["HostConfig"]["CapDrop"] in (["ALL"], ["CAP_ALL"])
        assert c["HostConfig"]["Privileged"] is False
        assert root["Config"]["User"] == "0:3000"
        assert root["HostConfig"]["CapAdd"] in (["SYS_ADMIN"], ["CAP_SYS_ADMIN"])
        assert root["HostConfig"]["SecurityOpt"] == ["seccomp=unconfined"]
        assert priv["Config"]["User"] == "1000:3000"  # the pod's runAsUser
        assert priv["HostConfig"]["Privileged"] is True
        # the pod's RuntimeDefault: Docker's default profile (Docker adds label=disable itself)
        assert not any(o.startswith("seccomp") for o in priv["HostConfig"]["SecurityOpt"] or [])

        ident = await sh(apiserver, namespace, "sec", "c", "id")
        assert re.match(r"uid=1001 gid=3000", ident), ident
        groups = set(re.findall(r"\d+", ident.split("groups=", 1)[1])) if "groups=" in ident else set()
        assert {"2000", "4000"} <= groups, ident
        out = await sh(apiserver, namespace, "sec", "c", "touch /x 2>&1; echo rc=$?", ok=False)
        assert "Read-only file system" in out and "rc=1" in out, out
        status = proc_status(await sh(apiserver, namespace, "sec", "c",
                                      "grep -E 'Cap|NoNewPrivs|Seccomp' /proc/1/status"))
        assert int(status["CapBnd"], 16) == NET_BIND_SERVICE
        assert int(status["CapEff"], 16) == 0  # a non-root process keeps no effective capabilities
        assert status["NoNewPrivs"].strip() == "1"
        assert status["Seccomp"].strip() == "2"  # Docker's default profile (RuntimeDefault)
        rstatus = proc_status(await sh(apiserver, namespace, "sec", "root", "grep -E 'Cap|Seccomp' /proc/1/status"))
        assert int(rstatus["CapEff"], 16) & SYS_ADMIN
        assert rstatus["Seccomp"].strip() == "0"  # Unconfined

        # fsGroup: the emptyDir is group 2000 with the setgid bit, so new files get the group too
        assert (await sh(apiserver, namespace, "sec", "c", "stat -c '%g %a' /data")).split() == ["2000", "2777"]
        made = await sh(apiserver, namespace, "sec", "c", "touch /data/f && stat -c '%u %g' /data/f")
        assert made.split() == ["1001", "2000"]
        # and the configMap volume's files are group 2000 and group-readable
        assert (await sh(apiserver, namespace, "sec", "c", "stat -L -c '%g %a' /cfg/k; cat /cfg/k")).split() == \
            ["2000", "644", "v"]
    finally:
        await client.delete(client.kind("v1", "Pod"), "sec", namespace)
    await wait_for(lambda: not docker_client().containers.list(filters={"label": f"io.kubernetes.pod.uid={uid}"}),
                   30, what="the pod's containers removed")


async def test_run_as_non_root_refuses_a_root_image(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    body = pod_body("nonroot", kubelet.node, [{"name": "c", "image": BUSYBOX, "command": ["sleep", "3600"]}],
                    securityContext={"runAsNonRoot": True})
    pod = await create_pod(client, namespace, body)
    uid = pod["metadata"]["uid"]
    expected = ("container has runAsNonRoot and image will run as root "
                f'(pod: "nonroot_{namespace}({uid})", container: c)')
    try:
        async def refused() -> dict | None:
            cs = cstatus(await get_pod(client, namespace, "nonroot"), "c")
            waiting = (cs.get("state") or {}).get("waiting") or {}
            return cs if waiting.get("reason") == "CreateContainerConfigError" else None
        cs = await wait_for(refused, 30, what="CreateContainerConfigError")
        assert cs["state"]["waiting"]["message"] == expected
        assert cs["restartCount"] == 0
        events = await events_of(client, namespace, "nonroot")
        assert any(e["reason"] == "Failed" and e["message"] == f"Error: {expected}" for e in events), events
        # no app container was ever created, only the sandbox
        made = docker_client().containers.list(all=True, filters={"label": [f"io.kubernetes.pod.uid={uid}",
                                                                            "io.kubernetes.container.name=c"]})
        assert made == []
    finally:
        await client.delete(client.kind("v1", "Pod"), "nonroot", namespace)
    await wait_for(lambda: not docker_client().containers.list(filters={"label": f"io.kubernetes.pod.uid={uid}"}),
                   30, what="the pod's sandbox removed")
