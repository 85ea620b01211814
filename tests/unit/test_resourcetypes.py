"""Rows of kinds read from discovery documents: the per-version lists and aggregated discovery."""

from __future__ import annotations

from minik8s.api.resourcetypes import ResourceType, from_aggregated, from_discovery

APPS_V1 = {"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": [
    {"name": "deployments", "singularName": "deployment", "namespaced": True, "kind": "Deployment",
     "verbs": ["get", "list"], "shortNames": ["deploy"], "categories": ["all"]},
    {"name": "deployments/scale", "singularName": "", "namespaced": True, "kind": "Scale", "verbs": ["get"]},
    {"name": "deployments/status", "singularName": "", "namespaced": True, "kind": "Deployment", "verbs": ["get"]},
]}
AGGREGATED = {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": [
    {"metadata": {"name": "apps"}, "versions": [{"version": "v1", "freshness": "Current", "resources": [
        {"resource": "deployments", "responseKind": {"group": "", "version": "", "kind": "Deployment"},
         "scope": "Namespaced", "singularResource": "deployment", "verbs": ["get", "list"], "shortNames": ["deploy"],
         "categories": ["all"], "subresources": [
             {"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
              "verbs": ["get"]},
             {"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Deployment"},
              "verbs": ["get"]}]}]}]},
    {"metadata": {"name": "metrics.example.com"}, "versions": [{"version": "v1", "freshness": "Stale", "resources": [
        {"resource": "widgets", "responseKind": {"kind": "Widget"}, "scope": "Cluster", "verbs": ["get"]}]}]},
]}


def test_an_aggregated_document_gives_the_rows_of_the_per_version_documents() -> None:
    rows = from_aggregated(AGGREGATED)
    assert rows == from_discovery(APPS_V1, "apps", "v1")
    deploy = rows[0]
    assert isinstance(deploy, ResourceType) and deploy.model is None
    assert (deploy.api_version, deploy.plural, deploy.singular, deploy.namespaced) == ("apps/v1", "deployments",
                                                                                        "deployment", True)
    assert deploy.subresources == {"scale", "status"} and deploy.short_names == ("deploy",)


def test_a_stale_version_of_an_aggregated_document_is_left_out() -> None:
    assert [rt.group for rt in from_aggregated(AGGREGATED)] == ["apps"]
