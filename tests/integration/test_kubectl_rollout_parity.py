"""minik8s' kubectl against the official kubectl (v1.32 and v1.37, :mod:`tests.realkubectl`) for ``rollout
history`` and ``rollout undo`` of DaemonSets and StatefulSets, which work from the ControllerRevisions the
controllers keep (``get controllerrevisions`` too).

Each CLI gets a namespace of its own holding the same DaemonSet (whose nodeSelector matches no node, so it
has revisions but no pods) and StatefulSet (0 replicas), with the DaemonSet and StatefulSet controllers
in-process for each namespace; every CLI runs the same steps in the same order in its namespace, side by
side, and each step waits, where it changes the objects (the official ``undo`` too), until every
namespace's revisions show the change.  Every step compares exit code, stdout and stderr after the
namespace's name becomes ``<ns>`` and ages ``<age>``; nothing else is rewritten but the differences
named in :data:`DIFFERENCES`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from minik8s.api.base import Obj
from minik8s.client.kubeconfig import render
from minik8s.client.rest import Client
from tests.realkubectl import CANDIDATES, find
from tests.support.controllers import controller_manager
from tests.support.kubectl import Result
from tests.support.kubectl_parity import Runs, run_process, tolerate
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

VERSIONS = sorted(CANDIDATES)
#: The listed differences (:data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES`) these steps meet.
DIFFERENCES = ("1.37-undo-template-bytes",)
CAUSE = "kubernetes.io/change-cause"
AGE = re.compile(r"\b\d+(?:d\d*h?|h\d*m?|m\d*s?|s|y)\b")


def daemonset() -> Obj:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "annotations": {CAUSE: "kubectl create agent"}},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}, "annotations": {"team": "a"}},
                                  "spec": {"nodeSelector": {"minik8s.io/rollout-parity": "no-such-node"},
                                           "containers": [{"name": "main", "image": "minik8s/busybox",
                                                           "command": ["sleep", "3600"],
                                                           "env": [{"name": "MODE", "value": "one"}],
                                                           "ports": [{"containerPort": 8080}]}]}}}}


def statefulset() -> Obj:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": 0, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "main", "image": "minik8s/busybox"}]}}}}


def image_patch(image: str, cause: str | None = None) -> Obj:
    meta = {"metadata": {"annotations": {CAUSE: cause}}} if cause else {}
    return {**meta, "spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}


async def revisions(client: Client, ns: str, owner: str) -> list[tuple[int, str]]:
    """(revision, image) of ``owner``'s ControllerRevisions, by revision."""
    listed = await client.list(client.kind("apps/v1", "ControllerRevision"), ns)
    return sorted((r["revision"], r["data"]["spec"]["template"]["spec"]["containers"][0]["image"])
                  for r in listed["items"] if r["metadata"]["ownerReferences"][0]["name"] == owner)


def history_is(client: Client, owner: str, want: list[tuple[int, str]]) -> Callable[[str], Awaitable[bool]]:
    async def check(ns: str) -> bool:
        return await revisions(client, ns, owner) == want
    return check


V1, V2 = "minik8s/busybox", "minik8s/busybox:v2"
#: The steps, in order: argv, then what every namespace's revisions must show before the next step.
STEPS: list[tuple[list[str], tuple[str, list[tuple[int, str]]] | None]] = [
    (["rollout", "history", "daemonset/agent"], None),
    (["rollout", "history", "sts/web"], None),
    (["rollout", "undo", "daemonset/agent"], None),
    (["rollout", "undo", "statefulset/web"], None),
    (["rollout", "history", "ds/agent", "--revision", "1"], None),
    (["get", "controllerrevisions"], None),
    (["patch", "ds/agent", "-p", '{"metadata":{"annotations":{"kubernetes.io/change-cause":"image v2"}},'
      '"spec":{"template":{"spec":{"containers":[{"name":"main","image":"minik8s/busybox:v2"}]}}}}'],
     ("agent", [(1, V1), (2, V2)])),
    (["patch", "sts/web", "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"main",'
      '"image":"minik8s/busybox:v2"}]}}}}'], ("web", [(1, V1), (2, V2)])),
    (["rollout", "history", "ds/agent"], None),
    (["rollout", "history", "daemonset", "agent", "--revision", "2"], None),
    (["rollout", "history", "ds/agent", "--revision", "7"], None),
    (["rollout", "history", "statefulset/web"], None),
    (["rollout", "history", "sts/web", "--revision", "1"], None),
    (["rollout", "history", "sts/web", "--revision", "2"], None),
    (["get", "controllerrevisions"], None),
    (["get", "controllerrevisions", "-o", "wide"], None),
    (["rollout", "undo", "ds/agent", "--to-revision", "9"], None),
    (["rollout", "undo", "ds/agent", "--to-revision", "-1"], None),
    (["rollout", "undo", "ds/agent", "--to-revision", "2"], None),
    (["rollout", "undo", "ds/agent"], ("agent", [(2, V2), (3, V1)])),
    (["rollout", "history", "ds/agent"], None),
    (["rollout", "undo", "sts/web", "--to-revision", "1"], ("web", [(2, V2), (3, V1)])),
    (["rollout", "history", "sts/web"], None),
    (["rollout", "undo", "sts/web", "--to-revision", "3"], None),
    (["rollout", "history", "sts/web", "--revision", "3"], None),
    (["get", "controllerrevisions"], None),
]


def _normalise(res: Result, ns: str) -> Result:
    def clean(text: str) -> str:
        return AGE.sub("<age>", text.replace(ns, "<ns>"))

    return Result(res.code, clean(res.out), clean(res.err))


async def test_rollout_history_and_undo_match_official(apiserver: APIServer, client: Client,
                                                       tmp_path: Path) -> None:
    present = [v for v in VERSIONS if find(v)[0] is not None]
    if not present:
        pytest.skip("; ".join(find(v)[1] for v in VERSIONS))
    who = ["minik8s", *present]
    suffix = os.urandom(3).hex()
    namespaces = {w: f"rollout-{w.replace('.', '-')}-{suffix}" for w in who}
    envs: dict[str, dict[str, str]] = {}
    ns_rt = client.kind("v1", "Namespace")
    for w, ns in namespaces.items():
        await client.create(ns_rt, {"metadata": {"name": ns}})
        kubeconfig = tmp_path / f"kubeconfig-{w}"
        kubeconfig.write_text(render(apiserver.url).replace("namespace: default", f"namespace: {ns}"))
        envs[w] = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig), "COLUMNS": "200"}
    runs = Runs(1)

    def run(w: str, args: list[str]) -> Result:
        if w == "minik8s":
            res = runs.run_minik8s(args, envs[w])
        else:
            path = find(w)[0]
            assert path is not None
            res = run_process([str(path), "--cache-dir", str(tmp_path / f"cache-{w}"), *args], envs[w])
        return _normalise(res, namespaces[w])

    failures: list[str] = []
    try:
        async with contextlib.AsyncExitStack() as stack:
            for ns in namespaces.values():
                await stack.enter_async_context(controller_manager(client, ns, ["daemonset", "statefulset"]))
                await client.create(client.kind("apps/v1", "DaemonSet"), daemonset(), ns)
                await client.create(client.kind("apps/v1", "StatefulSet"), statefulset(), ns)
            for owner in ("agent", "web"):
                for ns in namespaces.values():
                    await wait_for(lambda ns=ns, owner=owner: history_is(client, owner, [(1, V1)])(ns),
                                   what=f"the first revision of {owner} in {ns}")
            for args, then in STEPS:
                results = dict(zip(who, await asyncio.gather(*(asyncio.to_thread(run, w, args) for w in who)),
                                   strict=True))
                ours = results["minik8s"]
                for version in present:
                    official, mine = tolerate(DIFFERENCES, version, results[version], ours)
                    if (mine.code, mine.out, mine.err) != (official.code, official.out, official.err):
                        failures.append(f"{args} ({version})\nofficial: {official}\nminik8s:  {mine}")
                if then is not None:
                    owner, want = then
                    for ns in namespaces.values():
                        await wait_for(lambda ns=ns, owner=owner, want=want: history_is(client, owner, want)(ns),
                                       what=f"{owner}'s revisions {want} in {ns}")
    finally:
        runs.close()
        for ns in namespaces.values():
            with contextlib.suppress(Exception):
                await client.delete(ns_rt, ns)
    assert not failures, "\n\n".join(failures)
