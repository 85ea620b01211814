"""One Helm action through helm-sdkpy (the Helm v4 Go library), run by the helm-sdkpy virtualenv's
Python (>= 3.12) for tests/e2e/test_helm.py; prints the action's result as JSON.

    python helm_sdkpy_driver.py KUBECONFIG NAMESPACE install|upgrade RELEASE CHART VALUES_JSON
    python helm_sdkpy_driver.py KUBECONFIG NAMESPACE rollback RELEASE REVISION
    python helm_sdkpy_driver.py KUBECONFIG NAMESPACE uninstall|history RELEASE

Only the standard library and helm_sdkpy: it does not run in minik8s' own virtualenv.
"""

import asyncio
import json
import sys


async def main(argv: list[str]) -> object:
    import helm_sdkpy  # type: ignore[import-not-found]  # only in the helm-sdkpy virtualenv

    kubeconfig, namespace, action, release, *rest = argv
    config = helm_sdkpy.Configuration(namespace=namespace, kubeconfig=kubeconfig)
    if action in ("install", "upgrade"):
        chart, values = rest[0], json.loads(rest[1])
        act = helm_sdkpy.Install(config) if action == "install" else helm_sdkpy.Upgrade(config)
        return await act.run(release_name=release, chart_path=chart, values=values, wait=True, timeout=180)
    if action == "rollback":
        return await helm_sdkpy.Rollback(config).run(release, revision=int(rest[0]))
    if action == "uninstall":
        return await helm_sdkpy.Uninstall(config).run(release, wait=True, timeout=120)
    if action == "history":
        return await helm_sdkpy.History(config).run(release)
    raise SystemExit(f"unknown action {action!r}")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:])), default=str))
