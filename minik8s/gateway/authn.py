"""Who may call the gateway: pods with their service-account tokens, operators with static tokens.

- **Authentication.** A bearer token of ``--token-auth-file`` is an operator (the autoscaler's
  scrapes, the appliance's checks).  Any other bearer token is asked about with a TokenReview
  (``authentication.k8s.io/v1``) for the audience ``--service-account-audience``
  (``minik8s-gateway``), as Kubernetes' webhook token authenticator does: a pod presents a
  token projected into it with that audience (a ``serviceAccountToken`` projected volume), so a
  token meant for the apiserver or anyone else is refused.  Answers are cached for
  :data:`CACHE_SECONDS` by the token's SHA-256 (a bound token stops working at most that long
  after its pod is deleted); when the apiserver cannot be asked the call is unauthenticated (401).
- **Authorization.** A service account (``system:serviceaccount:<ns>:<name>``) may call the
  functions, workflows and events of its own namespace only (``POST /functions/<ns>/...``,
  ``/workflows/<ns>/...``, ``/events/<ns>``); anything else is 403.  Static-token users may call
  everything.
"""

from __future__ import annotations

import hashlib
import logging
import time

from minik8s.api import errors
from minik8s.auth import UserInfo
from minik8s.client.rest import Client

log = logging.getLogger("gateway")

#: The audience pods' tokens for the gateway carry (``serviceAccountToken.audience``).
DEFAULT_AUDIENCE = "minik8s-gateway"
#: How long a review's answer is reused (seconds).
CACHE_SECONDS = 10.0
#: At most this many answers are kept (the oldest half is dropped beyond it).
CACHE_SIZE = 4096
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
#: The gateway paths a service account may call, by their first segment.
NAMESPACED_ROOTS = ("functions", "workflows", "events")


class TokenReviewer:
    """Awaitable ``reviewer(token) -> UserInfo | None`` for :class:`minik8s.auth.Authenticator`."""

    def __init__(self, client: Client, audience: str = DEFAULT_AUDIENCE, ttl: float = CACHE_SECONDS) -> None:
        self.client = client
        self.audience = audience
        self.ttl = ttl
        self.rt = client.kind("authentication.k8s.io/v1", "TokenReview")
        self._cache: dict[bytes, tuple[float, UserInfo | None]] = {}

    async def __call__(self, token: str) -> UserInfo | None:
        key = hashlib.sha256(token.encode()).digest()
        now = time.monotonic()
        hit = self._cache.get(key)
        if hit is not None and now - hit[0] < self.ttl:
            return hit[1]
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                "spec": {"token": token, "audiences": [self.audience]}}
        try:
            answer = await self.client.create(self.rt, body)
        except (errors.APIError, OSError) as exc:
            log.warning("gateway could not review a bearer token: %s", exc)
            return None  # not cached: the next call asks again
        status = answer.get("status") or {}
        user = None
        if status.get("authenticated") is True:
            info = status.get("user") or {}
            user = UserInfo(str(info.get("username") or ""), str(info.get("uid") or ""),
                            tuple(str(g) for g in info.get("groups") or []))
        else:
            log.debug("gateway refused a bearer token: %s", status.get("error"))
        if len(self._cache) >= CACHE_SIZE:
            for stale in list(self._cache)[: CACHE_SIZE // 2]:
                del self._cache[stale]
        self._cache[key] = (now, user)
        return user


class NamespaceAuthorizer:
    """A service account calls its own namespace's functions, workflows and events only."""

    def authorize(self, user: UserInfo, method: str, path: str) -> str | None:
        if not user.name.startswith(SERVICE_ACCOUNT_PREFIX):
            return None
        namespace = user.name[len(SERVICE_ACCOUNT_PREFIX):].split(":", 1)[0]
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and parts[0] in NAMESPACED_ROOTS and parts[1] == namespace:
            return None
        return (f'User "{user.name}" cannot {method} {path}: a service account may call the functions, '
                f"workflows and events of its own namespace ({namespace}) only")
