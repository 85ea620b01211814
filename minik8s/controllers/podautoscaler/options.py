"""kube-controller-manager's HorizontalPodAutoscaler flags."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AutoscalerOptions:
    """kube-controller-manager's HPA flags (seconds; ``tolerance`` a fraction)."""

    sync_period: float = 15.0  # --horizontal-pod-autoscaler-sync-period
    tolerance: float = 0.1  # --horizontal-pod-autoscaler-tolerance
    downscale_stabilization: float = 300.0  # --horizontal-pod-autoscaler-downscale-stabilization
    cpu_initialization_period: float = 300.0  # --horizontal-pod-autoscaler-cpu-initialization-period
    initial_readiness_delay: float = 30.0  # --horizontal-pod-autoscaler-initial-readiness-delay

