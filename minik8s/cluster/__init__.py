"""minik8s cluster."""
