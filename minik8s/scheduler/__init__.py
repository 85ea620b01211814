"""minik8s scheduler."""
