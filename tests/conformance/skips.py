"""The third-party tests minik8s does not run, each with why: suite → test id → reason.

A test id here is deselected from its suite's run and reported as skipped with the reason.
Only what this machine cannot have belongs here; a test that fails because of minik8s is fixed,
not skipped.
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
