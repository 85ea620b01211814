"""minik8s api."""
