"""The kubelet's service-account token manager, for projected ``serviceAccountToken`` sources.

Kubernetes' ``pkg/kubelet/token``: a pod's projected volume source ``serviceAccountToken``
(``audience``, ``expirationSeconds``, ``path``) is filled with a token of the pod's service
account (``spec.serviceAccountName``, default ``default``) that the kubelet asks the apiserver
for (TokenRequest, ``POST /api/v1/namespaces/{ns}/serviceaccounts/{sa}/token``) **bound to the
pod**, so it stops working when the pod is deleted.  Tokens are cached per pod, account,
audience and lifetime, and asked for again once 80 % of their lifetime has passed or they are 24
hours old, whichever is first (Kubernetes' refresh rule); the volume is rewritten on the next pod
sync, so a running container always reads a valid token from the file.

Volume set-up runs in a worker thread and cannot wait on the apiserver, so the asking is done
first, on the event loop: :meth:`TokenManager.prepare` fetches what a pod's volumes need, then
:meth:`TokenManager.token` hands the cached token to the volume code (or raises with the reason
the last request failed, which the ``FailedMount`` event shows).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from minik8s.api import errors

log = logging.getLogger("kubelet.tokens")

#: ``(namespace, service account, body)`` → the TokenRequest the apiserver answered.
RequestToken = Callable[[str, str, dict[str, Any]], Awaitable[dict[str, Any]]]
#: Kubernetes refreshes a token after 80 % of its lifetime ...
REFRESH_FRACTION = 0.8
#: ... or once it is a day old.
MAX_AGE_SECONDS = 24 * 3600
DEFAULT_EXPIRATION_SECONDS = 3600


class TokenUnavailable(Exception):
    """No token for a source yet; the message says why (the apiserver's answer)."""


@dataclass(frozen=True)
class _Token:
    value: str
    issued: float
    expires: float

    def due(self, now: float) -> bool:
        ttl = self.expires - self.issued
        return now >= self.issued + min(ttl * REFRESH_FRACTION, MAX_AGE_SECONDS)


def token_sources(pod: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The ``serviceAccountToken`` sources of the pod's projected volumes."""
    for vol in (pod.get("spec") or {}).get("volumes") or []:
        for source in (vol.get("projected") or {}).get("sources") or []:
            if isinstance(source, dict) and isinstance(source.get("serviceAccountToken"), dict):
                yield source["serviceAccountToken"]


class TokenManager:
    """Caches the tokens of the pods on this node (see the module docstring)."""

    def __init__(self, request: RequestToken | None, clock: Callable[[], float] = time.time) -> None:
        self.request = request
        self.clock = clock
        self._tokens: dict[tuple[str, ...], _Token] = {}
        self._failures: dict[tuple[str, ...], str] = {}

    @staticmethod
    def _key(pod: dict[str, Any], source: dict[str, Any]) -> tuple[str, ...]:
        meta = pod.get("metadata") or {}
        account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        seconds = source.get("expirationSeconds") or DEFAULT_EXPIRATION_SECONDS
        return (str(meta.get("uid") or ""), str(meta.get("namespace") or ""), account,
                str(source.get("audience") or ""), str(seconds))

    async def prepare(self, pod: dict[str, Any]) -> None:
        """Ask for every token the pod's volumes need that is missing or due for refresh; a
        failure is remembered for :meth:`token` (an expired token is never handed out)."""
        for source in token_sources(pod):
            key = self._key(pod, source)
            cached = self._tokens.get(key)
            now = self.clock()
            if cached is not None and not cached.due(now):
                continue
            uid, namespace, account, audience, seconds = key
            body: dict[str, Any] = {
                "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"audiences": [audience] if audience else [], "expirationSeconds": int(seconds),
                         "boundObjectRef": {"apiVersion": "v1", "kind": "Pod",
                                            "name": (pod.get("metadata") or {}).get("name"), "uid": uid}}}
            if self.request is None:
                self._failures[key] = "the kubelet has no apiserver client to request tokens with"
                continue
            try:
                answer = await self.request(namespace, account, body)
                token = str((answer.get("status") or {}).get("token") or "")
                if not token:
                    raise errors.BadRequest("the TokenRequest answer has no token")
            except errors.APIError as exc:
                self._failures[key] = (f"failed to fetch token: serviceaccounts \"{account}\" of namespace "
                                       f"\"{namespace}\": {exc.message}")
                if cached is not None and cached.expires <= now:
                    del self._tokens[key]
                log.warning("kubelet token for pod %s/%s: %s", namespace, (pod.get("metadata") or {}).get("name"),
                            self._failures[key])
                continue
            seconds_valid = int((answer.get("spec") or {}).get("expirationSeconds") or seconds)
            self._tokens[key] = _Token(token, now, now + seconds_valid)
            self._failures.pop(key, None)

    def token(self, pod: dict[str, Any], source: dict[str, Any]) -> str:
        """The cached token of ``source`` for ``pod``; TokenUnavailable with the reason when
        there is none that is still valid."""
        key = self._key(pod, source)
        cached = self._tokens.get(key)
        if cached is not None and cached.expires > self.clock():
            return cached.value
        raise TokenUnavailable(self._failures.get(key, "the token has not been requested yet"))

    def forget(self, uid: str) -> None:
        """Drop the tokens of pod ``uid`` (it left the node)."""
        for key in [k for k in self._tokens if k[0] == uid]:
            del self._tokens[key]
        for key in [k for k in self._failures if k[0] == uid]:
            del self._failures[key]
