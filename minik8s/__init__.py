"""minik8s: a small, real Kubernetes-style container orchestrator."""

__version__ = "0.1.0"
