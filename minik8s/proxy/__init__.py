"""minik8s proxy."""
