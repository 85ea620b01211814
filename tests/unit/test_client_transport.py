"""The REST client's transport: httpcore's per-request ``import sniffio`` kept from searching
sys.path, and a bound on the requests in flight."""

from __future__ import annotations

import sys

import pytest

import minik8s.client.rest  # noqa: F401 - importing it is what is tested


def test_sniffio_is_either_imported_or_remembered_missing() -> None:
    assert "sniffio" in sys.modules
    if sys.modules["sniffio"] is None:  # not installed: the import fails from the cache
        with pytest.raises(ImportError):
            import sniffio  # noqa: F401


async def test_requests_in_flight_are_bounded() -> None:
    """At most ``max_inflight`` requests reach httpx's pool at once; the rest wait their turn."""
    import asyncio

    import httpx

    from minik8s.client.kubeconfig import ClientConfig
    from minik8s.client.rest import Client

    in_flight, peak = 0, 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200, json={"kind": "Namespace", "metadata": {"name": "x"}})

    from minik8s.client.httpxtransport import HttpxTransport

    client = Client(ClientConfig(server="http://127.0.0.1:1"), max_inflight=3)
    await client.close()
    client.transport = HttpxTransport("http://127.0.0.1:1", [], True, 30.0, 3, mock=httpx.MockTransport(handler))
    rt = client.kind("v1", "Namespace")
    results = await asyncio.gather(*(client.get(rt, f"n{i}") for i in range(20)))
    await client.close()
    assert len(results) == 20 and peak == 3
