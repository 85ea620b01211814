"""Pure parts of the Function controller and autoscaler: revisions, syntax checks, pod template, metrics."""

from __future__ import annotations

from minik8s.controllers.function import code_files, desired_deployment, revision_name, syntax_error
from minik8s.controllers.functionautoscaler import MetricsScraper, Scrape


def test_revision_follows_what_reaches_the_pods() -> None:
    spec = {"source": "def handler(e, c): pass", "handler": "main.handler", "scaling": {"maxScale": 3}}
    rev = revision_name("hello", spec)
    assert rev.startswith("hello-") and len(rev) == len("hello-") + 10
    assert revision_name("hello", {**spec, "scaling": {"maxScale": 9}}) == rev
    assert revision_name("hello", {**spec, "env": [{"name": "A", "value": "1"}]}) != rev
    assert revision_name("hello", {**spec, "source": "x = 2"}) != rev


def test_syntax_errors_name_file_and_line() -> None:
    assert syntax_error({"main.py": "def h(e, c):\n    return 1\n", "data.txt": "(((("}) is None
    message = syntax_error({"main.py": "x = 1\n", "util.py": "def f(:\n    pass\n"})
    assert message is not None and message.startswith("util.py, line 1: ") and "'def f(:'" in message
    assert code_files({"source": "x"}) == {"main.py": "x"}


def test_deployment_template() -> None:
    fn = {"metadata": {"name": "hello", "namespace": "ns", "uid": "u1"},
          "spec": {"handler": "app.run", "timeoutSeconds": 7, "env": [{"name": "GREETING", "value": "hi"}],
                   "resources": {"limits": {"cpu": "500m"}}}}
    dep = desired_deployment(fn, "hello-abc", 2)
    assert dep["metadata"]["name"] == "fn-hello" and dep["spec"]["strategy"]["rollingUpdate"] == \
        {"maxSurge": 1, "maxUnavailable": 0}
    pod = dep["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env["MINIK8S_HANDLER"] == "app.run" and env["MINIK8S_TIMEOUT_SECONDS"] == "7"
    assert env["GREETING"] == "hi" and env["MINIK8S_DEPS_DIR"] == "/var/run/minik8s/deps"
    assert pod["terminationGracePeriodSeconds"] == 12 and pod["containers"][0]["resources"]["limits"]["cpu"] == "500m"
    assert [v["name"] for v in pod["volumes"]] == ["code", "deps", "deps-0", "deps-1"]
    assert [m["mountPath"] for m in pod["initContainers"][0]["volumeMounts"]][-2:] == [
        "/var/run/minik8s/deps-parts/0", "/var/run/minik8s/deps-parts/1"]
    assert "initContainers" not in desired_deployment(fn, "hello-abc", 0)["spec"]["template"]["spec"]
    assert dep["metadata"]["annotations"]["minik8s.io/spec-hash"] != \
        desired_deployment(fn, "hello-def", 2)["metadata"]["annotations"]["minik8s.io/spec-hash"]


def test_metrics_samples_from_consecutive_scrapes() -> None:
    s = MetricsScraper("http://gw")
    assert s.sample("ns/a") is None
    s.ingest(Scrape(100.0, 110.0, {"ns/a": {"inFlight": 2, "concurrencySeconds": 50.0, "lastRequestTime": 109.0}}))
    assert s.sample("ns/a") == (2.0, 109.0)  # first scrape: the current in-flight count
    s.ingest(Scrape(100.0, 112.0, {"ns/a": {"inFlight": 0, "concurrencySeconds": 56.0, "lastRequestTime": 111.5}}))
    assert s.sample("ns/a") == (3.0, 111.5)  # 6 concurrency-seconds over 2 s
    assert s.sample("ns/idle") == (0.0, None)
    s.ingest(Scrape(200.0, 201.0, {"ns/a": {"inFlight": 1, "concurrencySeconds": 0.5}}))  # gateway restarted
    assert s.sample("ns/a") == (1.0, None)
    gen = s.generation
    s.ok = False
    assert s.sample("ns/a") is None and gen == 3
