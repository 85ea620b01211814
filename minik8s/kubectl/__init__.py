"""minik8s kubectl."""
