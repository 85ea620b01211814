"""``minik8s``: run one component, or a whole local cluster (``up`` / ``down`` / ``status``).

Each component's ``main`` module defines ``command`` (a typer command whose
options mirror the Kubernetes component's flags); this module only gathers them.
"""

from __future__ import annotations

import importlib

import typer

from minik8s.client.flags import GoBoolFlagsCommand

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="minik8s: a small, real Kubernetes-style container orchestrator.")

COMPONENTS = {
    "apiserver": "minik8s.apiserver.main",
    "scheduler": "minik8s.scheduler.main",
    "controller-manager": "minik8s.controllers.main",
    "kubelet": "minik8s.kubelet.main",
    "proxy": "minik8s.proxy.main",
    "dns": "minik8s.dns.main",
    "gateway": "minik8s.gateway.main",
    "hollow-node": "minik8s.hollownode.main",
}
CLUSTER = "minik8s.cluster.main"  # defines up, down, status


@app.callback()
def _root() -> None:
    """minik8s: a small, real Kubernetes-style container orchestrator."""


def _register() -> None:
    for name, module in COMPONENTS.items():  # their boolean flags also take Go's --flag=false
        app.command(name, cls=GoBoolFlagsCommand)(importlib.import_module(module).command)
    cluster = importlib.import_module(CLUSTER)
    for verb in ("up", "down", "status"):
        app.command(verb)(getattr(cluster, verb))


_register()


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
