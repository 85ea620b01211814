"""minik8s apiserver."""
