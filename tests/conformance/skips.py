"""The third-party tests minik8s does not run, each with why: suite → test id → reason; and the
warning filters added to a suite's run, each with why: suite → filter → reason.

A test id here is deselected from its suite's run and reported as skipped with the reason.
Only what this machine cannot have belongs here; a test that fails because of minik8s is fixed,
not skipped. A warning filter (applied above the suite's own filters) is for a warning that a
client library raises by its own design, which minik8s cannot prevent; what minik8s' side of it
must do is tested in this repository (named in the reason).
"""

SKIPS: dict[str, dict[str, str]] = {
    "kubernetes_asyncio": {},
    "lightkube": {
        "e2e-tests/test_client.py::test_pod_apis":
            "expects a metrics-server pod in kube-system (k3s, where lightkube runs its e2e tests, ships "
            "one); minik8s serves metrics.k8s.io from the apiserver itself and runs no such pod",
    },
    "kopf": {
        "tests/e2e/test_examples.py::test_all_examples_are_runnable[17-admission]":
            "needs admission webhooks (ValidatingWebhookConfiguration / MutatingWebhookConfiguration "
            "calling the operator), which minik8s does not implement yet",
    },
}

TLS_SHUTDOWN_RACE = (
    "kopf's conftest turns every warning into an error. When an operator stops, aiohttp closes each "
    "watch response still open with a TLS close_notify and does not wait for the server's answer; kopf "
    "closes its event loop about 5 ms later, and the socket of an answer that came after that is "
    "garbage-collected unclosed: its asyncio transport, or (when the collector finalizes it first) the "
    "socket itself, warns (asyncio needs loop iterations to finish a close: aiohttp issue 1115). Go's "
    "kube-apiserver nearly always answers within that window; minik8s' apiserver answers in about 0.5 ms "
    "on a quiet machine but not always within 5 ms on a loaded 2-core CI machine (3 of 16 examples "
    "failed so). Only sockets to the cluster's apiserver are filtered. That the apiserver answers "
    "close_notify on an open watch: tests/integration/test_tls_connection_stress.py::"
    "test_a_client_closing_a_watch_gets_close_notify_back")

#: ``(message, category)`` → reason: ``message`` a regular expression matching the start of the
#: warning's message (``{apiserver_port}`` stands for the cluster's apiserver port), ``category`` a
#: builtin warning class's name; applied by ``tests/support/conformance_plugins/recorded_warning_filters.py``.
WARNING_FILTERS: dict[str, dict[tuple[str, str], str]] = {
    "kopf": {
        (r"unclosed transport <_SelectorSocketTransport ", "ResourceWarning"): TLS_SHUTDOWN_RACE,
        (r"unclosed <socket\.socket .*raddr=\('127\.0\.0\.1', {apiserver_port}\)>", "ResourceWarning"):
            TLS_SHUTDOWN_RACE,
    },
}
