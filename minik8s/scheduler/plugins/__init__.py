"""The scheduler's plugins, one module each, and the default profile.

:data:`DEFAULT_PLUGINS` is the profile ``minik8s scheduler`` runs: one
:class:`~minik8s.scheduler.framework.PluginRow` per plugin, filters in row order (cheap,
node-local checks first, as Kubernetes orders them), score weights as in Kubernetes'
default configuration. Adding a plugin is adding a row.
"""

from __future__ import annotations

from minik8s.scheduler.framework import PluginRow
from minik8s.scheduler.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from minik8s.scheduler.plugins.default_preemption import DefaultPreemption
from minik8s.scheduler.plugins.image_locality import ImageLocality
from minik8s.scheduler.plugins.inter_pod_affinity import InterPodAffinity
from minik8s.scheduler.plugins.least_allocated import NodeResourcesLeastAllocated
from minik8s.scheduler.plugins.node_affinity import NodeAffinity
from minik8s.scheduler.plugins.node_name import NodeName
from minik8s.scheduler.plugins.node_ports import NodePorts
from minik8s.scheduler.plugins.node_ready import NodeReady
from minik8s.scheduler.plugins.node_resources_fit import NodeResourcesFit
from minik8s.scheduler.plugins.node_unschedulable import NodeUnschedulable
from minik8s.scheduler.plugins.pod_topology_spread import PodTopologySpread
from minik8s.scheduler.plugins.selector_spread import SelectorSpread
from minik8s.scheduler.plugins.taint_toleration import TaintToleration
from minik8s.scheduler.plugins.volume_binding import VolumeBinding

DEFAULT_PLUGINS: list[PluginRow] = [
    # filters (and their scores), in the order Kubernetes runs them
    PluginRow(NodeUnschedulable),
    PluginRow(NodeReady),
    PluginRow(NodeName),
    PluginRow(TaintToleration, weight=3),
    PluginRow(NodeAffinity, weight=2),
    PluginRow(NodePorts),
    PluginRow(NodeResourcesFit),
    PluginRow(VolumeBinding),
    PluginRow(PodTopologySpread, weight=2),
    PluginRow(InterPodAffinity, weight=2),
    # score-only plugins
    PluginRow(NodeResourcesLeastAllocated, weight=1),
    PluginRow(NodeResourcesBalancedAllocation, weight=1),
    PluginRow(SelectorSpread, weight=1),
    PluginRow(ImageLocality, weight=1),
    # PostFilter: when no node fits
    PluginRow(DefaultPreemption),
]

__all__ = [
    "DEFAULT_PLUGINS",
    "DefaultPreemption",
    "ImageLocality",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeName",
    "NodePorts",
    "NodeReady",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "NodeResourcesLeastAllocated",
    "NodeUnschedulable",
    "PodTopologySpread",
    "SelectorSpread",
    "TaintToleration",
    "VolumeBinding",
]
