"""Real traffic through the generated nginx configuration (Docker, no apiserver).

The ``minik8s/nginx`` image runs with exactly what the DNS controller puts in the pod
template (command + ``NGINX_CONFIG``), configured for a DNS object with two paths; the
upstreams are two busybox httpd containers (their container IPs stand in for ClusterIPs).
Network safety: all traffic goes to containers on a Docker bridge network this test
creates (and removes).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import docker
import pytest

from minik8s.api.networking import Route, frontend_of
from minik8s.controllers.dnsrecords import NGINX_IMAGE, desired_deployment
from minik8s.controllers.nginxconf import render_config
from tests.support.proxy import create_network

pytestmark = pytest.mark.docker
BUSYBOX = "minik8s/busybox:latest"
HOST = "shop.example.com"


def http_get(ip: str, path: str, host: str = HOST) -> tuple[int, str]:
    conn = http.client.HTTPConnection(ip, 80, timeout=5)
    try:
        conn.request("GET", path, headers={"Host": host})
        resp = conn.getresponse()
        return resp.status, resp.read().decode().strip()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"Docker is not available: {exc}")
    if subprocess.run(["docker", "image", "inspect", NGINX_IMAGE], capture_output=True).returncode != 0:
        pytest.skip(f"{NGINX_IMAGE} is missing: run scripts/build-images.sh nginx")
    yield client


def test_two_paths_reach_their_own_backends(engine: Any) -> None:
    tag = os.urandom(3).hex()
    labels = {"minik8s.test": f"dns-nginx-{tag}"}
    name = f"mk8s-dn-{tag}"
    with contextlib.ExitStack() as cleanup:
        net, _gateway = create_network(engine, name, labels)
        cleanup.callback(net.remove)

        def run(image: str, command: list[str], cname: str, **kwargs: Any) -> Any:
            container = engine.containers.run(image, command, name=cname, detach=True, network=name, labels=labels,
                                              **kwargs)
            cleanup.callback(container.remove, force=True)
            container.reload()
            return container

        backends: dict[str, str] = {}
        for svc in ("cart", "web"):
            script = (f"mkdir -p /www && echo {svc} root > /www/index.html && echo {svc} hello > /www/hello.txt "
                      "&& exec httpd -f -p 8080 -h /www")
            c = run(BUSYBOX, ["sh", "-c", script], f"{name}-{svc}")
            backends[svc] = c.attrs["NetworkSettings"]["Networks"][name]["IPAddress"]
        obj = {"apiVersion": "minik8s.io/v1", "kind": "DNS",
               "metadata": {"name": "shop", "namespace": "default", "uid": "u"},
               "spec": {"host": HOST, "paths": [{"path": "/cart", "serviceName": "cart", "servicePort": 8080},
                                                {"path": "/", "serviceName": "web", "servicePort": 8080}]}}
        frontend = frontend_of(obj)
        assert frontend is not None

        def resolve(route: Route) -> tuple[str, int]:
            return backends[route.service], int(route.port)

        pod = desired_deployment(frontend, render_config(frontend, resolve))["spec"]["template"]["spec"]
        spec = pod["containers"][0]
        env = {e["name"]: e["value"] for e in spec["env"]}
        nginx = run(spec["image"], spec["command"], f"{name}-nginx", environment=env)
        ip = nginx.attrs["NetworkSettings"]["Networks"][name]["IPAddress"]
        deadline = time.monotonic() + 20
        while True:
            try:
                http_get(ip, "/")
                break
            except OSError:
                nginx.reload()
                assert nginx.status == "running", nginx.logs().decode()
                assert time.monotonic() < deadline, nginx.logs().decode()
                time.sleep(0.1)
        assert http_get(ip, "/cart/hello.txt") == (200, "cart hello")  # prefix stripped
        assert http_get(ip, "/cart") == (200, "cart root")
        assert http_get(ip, "/cart/") == (200, "cart root")
        assert http_get(ip, "/hello.txt") == (200, "web hello")
        assert http_get(ip, "/") == (200, "web root")
        assert http_get(ip, "/cartoon")[0] == 404  # not under /cart: the web backend has no such file
        assert b"GET /cart/hello.txt" in nginx.logs()  # access log goes to the container's stdout
