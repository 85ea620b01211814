"""ServiceAccounts: the kind, the ``default`` one the service account controller keeps in every
namespace, and the ``kubernetes.io/metadata.name`` label the apiserver puts on every namespace."""

from __future__ import annotations

import os

import pytest

from minik8s.api import errors
from minik8s.client.rest import Client
from tests.support.controllers import controller_manager
from tests.support.waiting import wait_for

LABEL = "kubernetes.io/metadata.name"


async def test_default_service_account_in_every_namespace(client: Client) -> None:
    ns_rt, sa_rt = client.kind("v1", "Namespace"), client.kind("v1", "ServiceAccount")
    name = f"t-sa-{os.urandom(3).hex()}"
    async with controller_manager(client, None, ["serviceaccount"]):
        await client.create(ns_rt, {"metadata": {"name": name}})
        try:
            first = await wait_for(lambda: client.get(sa_rt, "default", name), timeout=10,
                                   what="the default ServiceAccount", not_yet=(errors.NotFound,))
            assert first["kind"] == "ServiceAccount" and first["metadata"]["namespace"] == name
            # deleted: made again (level-triggered, from the ServiceAccount informer's delete event)
            await client.delete(sa_rt, "default", name)

            async def recreated() -> bool:
                sa = await client.get(sa_rt, "default", name)
                return sa["metadata"]["uid"] != first["metadata"]["uid"]

            await wait_for(recreated, timeout=10, what="a new default ServiceAccount", not_yet=(errors.NotFound,))
            listed = await client.list(sa_rt, namespace=name)
            assert [sa["metadata"]["name"] for sa in listed["items"]] == ["default"]
        finally:
            await client.delete(ns_rt, name)


async def test_a_namespace_limited_manager_looks_after_its_own_namespace(client: Client, namespace: str) -> None:
    sa_rt = client.kind("v1", "ServiceAccount")
    async with controller_manager(client, namespace, ["serviceaccount"]):
        sa = await wait_for(lambda: client.get(sa_rt, "default", namespace), timeout=10,
                            what="the default ServiceAccount", not_yet=(errors.NotFound,))
    assert sa["metadata"]["name"] == "default"


async def test_service_account_crud(client: Client, namespace: str) -> None:
    sa_rt = client.kind("v1", "ServiceAccount")
    created = await client.create(sa_rt, {"metadata": {"name": "builder"}, "automountServiceAccountToken": False,
                                          "imagePullSecrets": [{"name": "registry"}]}, namespace)
    assert created["automountServiceAccountToken"] is False
    assert created["imagePullSecrets"] == [{"name": "registry"}]
    with pytest.raises(errors.Invalid):
        await client.create(sa_rt, {"metadata": {"name": "Bad_Name"}}, namespace)
    await client.delete(sa_rt, "builder", namespace)


async def test_namespace_name_label_is_set_and_kept(client: Client) -> None:
    ns_rt = client.kind("v1", "Namespace")
    name = f"t-lbl-{os.urandom(3).hex()}"
    ns = await client.create(ns_rt, {"metadata": {"name": name, "labels": {"team": "a", LABEL: "other"}}})
    try:
        assert ns["metadata"]["labels"] == {"team": "a", LABEL: name}
        patched = await client.patch(ns_rt, name, {"metadata": {"labels": {LABEL: None, "team": "b"}}})
        assert patched["metadata"]["labels"] == {"team": "b", LABEL: name}
        for builtin in ("default", "kube-system"):
            assert (await client.get(ns_rt, builtin))["metadata"]["labels"][LABEL] == builtin
    finally:
        await client.delete(ns_rt, name)
