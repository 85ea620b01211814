"""The kubelet's token manager: tokens bound to the pod, cached, refreshed at 80 % of their
lifetime (or at 24 h), failures reported with the apiserver's reason, forgotten with the pod."""

from __future__ import annotations

from typing import Any

import pytest

from minik8s.api import errors
from minik8s.kubelet.tokens import TokenManager, TokenUnavailable

POD = {"metadata": {"name": "p", "namespace": "ns", "uid": "u-1"},
       "spec": {"serviceAccountName": "robot", "volumes": [{"name": "t", "projected": {"sources": [
           {"serviceAccountToken": {"path": "token", "audience": "vault", "expirationSeconds": 1000}}]}}]}}
SOURCE = POD["spec"]["volumes"][0]["projected"]["sources"][0]["serviceAccountToken"]  # type: ignore[index]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_tokens_are_bound_cached_and_refreshed() -> None:
    asked: list[tuple[str, str, dict[str, Any]]] = []

    async def request(namespace: str, account: str, body: dict[str, Any]) -> dict[str, Any]:
        asked.append((namespace, account, body))
        return {"spec": body["spec"], "status": {"token": f"t{len(asked)}"}}

    clock = Clock()
    tokens = TokenManager(request, clock)
    await tokens.prepare(POD)
    assert tokens.token(POD, SOURCE) == "t1"
    namespace, account, body = asked[0]
    assert (namespace, account) == ("ns", "robot")
    assert body["spec"] == {"audiences": ["vault"], "expirationSeconds": 1000,
                            "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u-1"}}
    clock.now += 799  # before 80 % of the lifetime: cached
    await tokens.prepare(POD)
    assert len(asked) == 1
    clock.now += 1  # at 80 %: asked again
    await tokens.prepare(POD)
    assert tokens.token(POD, SOURCE) == "t2" and len(asked) == 2
    tokens.forget("u-1")
    with pytest.raises(TokenUnavailable, match="not been requested"):
        tokens.token(POD, SOURCE)


async def test_failures_are_reported_and_expired_tokens_never_handed_out() -> None:
    fail = False

    async def request(namespace: str, account: str, body: dict[str, Any]) -> dict[str, Any]:
        if fail:
            raise errors.NotFound('serviceaccounts "robot" not found')
        return {"spec": body["spec"], "status": {"token": "good"}}

    clock = Clock()
    tokens = TokenManager(request, clock)
    await tokens.prepare(POD)
    fail = True
    clock.now += 900  # due, and the refresh fails: the still-valid token stays
    await tokens.prepare(POD)
    assert tokens.token(POD, SOURCE) == "good"
    clock.now += 100  # expired
    await tokens.prepare(POD)
    with pytest.raises(TokenUnavailable, match='serviceaccounts "robot" not found'):
        tokens.token(POD, SOURCE)
