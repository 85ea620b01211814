"""A LIST without ``limit`` answers however large the result is (more than gRPC's default 4 MiB
message from etcd), as kube-apiserver does."""

from __future__ import annotations

from minik8s.client.rest import Client


async def test_unpaginated_list_larger_than_4_mib(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "ConfigMap")
    blob = "x" * (600 * 1024)
    for i in range(8):  # 8 x 600 KiB = 4.7 MiB in one etcd range response
        await client.create(rt, {"metadata": {"name": f"big-{i}"}, "data": {"blob": blob}}, namespace)
    listed = await client.list(rt, namespace)
    assert sorted(i["metadata"]["name"] for i in listed["items"] if i["metadata"]["name"].startswith("big-")) == \
        [f"big-{i}" for i in range(8)]
