"""minik8s kubelet."""
