"""``kubectl logs`` and ``kubectl exec`` through the real apiserver to a stand-in kubelet.

The stand-in (:class:`tests.support.stream_kubelet.FakeKubelet`) serves the two kubelet endpoints
the apiserver proxies to on 127.0.0.1. A Node whose InternalIP and kubelet port point at it, and a
Pod bound to that Node, make the apiserver route there. The real kubelet is tested elsewhere; this
checks kubectl's side.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from minik8s.client.kubeconfig import render
from minik8s.client.rest import Client
from tests.support.processes import ROOT, APIServer
from tests.support.stream_kubelet import FakeKubelet, fake_node


@pytest.fixture
def kubelet() -> Iterator[FakeKubelet]:
    fake = FakeKubelet()
    yield fake
    fake.stop()


@pytest.fixture
async def bound_pod(client: Client, namespace: str, kubelet: FakeKubelet) -> AsyncIterator[str]:
    node_rt = client.kind("v1", "Node")
    node_name = await fake_node(client, kubelet)
    pod_rt = client.kind("v1", "Pod")
    await client.create(pod_rt, {"metadata": {"name": "web"},
                                 "spec": {"containers": [{"name": "main", "image": "busybox"},
                                                         {"name": "side", "image": "busybox"}]}}, namespace)
    await client.bind(namespace, "web", node_name)
    yield node_name
    await client.delete(pod_rt, "web", namespace, grace_period_seconds=0)
    await client.delete(node_rt, node_name)  # other tests on this apiserver count nodes


def run(apiserver: APIServer, tmp_path: Path, namespace: str, *args: str,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "kubeconfig"
    config.write_text(render(apiserver.url))
    return subprocess.run([sys.executable, "-m", "minik8s.kubectl", "--kubeconfig", str(config), "-n", namespace,
                           *args], input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=60)


async def test_logs(apiserver: APIServer, tmp_path: Path, namespace: str, bound_pod: str,
                    kubelet: FakeKubelet) -> None:
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "logs", "web", "-c", "main")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [f"line {i}" for i in range(1, 6)]
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "logs", "pod/web", "-c", "side",
                                  "--tail", "2", "--timestamps")
    assert res.stdout.splitlines() == ["2026-01-01T00:00:00Z line 4", "2026-01-01T00:00:00Z line 5"]
    assert any(p.startswith(f"/containerLogs/{namespace}/web/side?") and "tailLines=2" in p
               for p in kubelet.requests)
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "logs", "web")
    assert res.returncode == 0 and res.stderr == 'Defaulted container "main" out of: main, side\n'
    assert res.stdout.splitlines() == [f"line {i}" for i in range(1, 6)]
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "logs", "nope", "-c", "main")
    assert res.returncode == 1
    assert res.stderr.strip() == \
        f'error: error from server (NotFound): pods "nope" not found in namespace "{namespace}"'


async def test_exec(apiserver: APIServer, tmp_path: Path, namespace: str, bound_pod: str,
                    kubelet: FakeKubelet) -> None:
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "web", "-c", "main", "--",
                                  "ls", "-l", "/")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "ran ls -l /\n" and res.stderr == "to stderr\n"
    assert any(p.startswith(f"/exec/{namespace}/web/main?command=ls&command=-l&command=%2F")
               for p in kubelet.requests)

    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "web", "-c", "main", "--",
                                  "sh", "-c", "exit", "7")
    assert res.returncode == 7
    assert res.stderr.splitlines()[-1] == "command terminated with exit code 7"

    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "-i", "web", "-c", "side", "--",
                                  "cat", stdin="hello\nworld\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "HELLO\nWORLD\n"

    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "nope", "--", "ls")
    assert res.returncode == 1 and res.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "web", "--", "ls")
    assert res.returncode == 0 and res.stdout == "ran ls\n"
    assert res.stderr == 'Defaulted container "main" out of: main, side\nto stderr\n'
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "web")
    assert res.returncode == 1 and "you must specify at least one command" in res.stderr
