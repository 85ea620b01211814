"""apiextensions.k8s.io: CustomResourceDefinitions and the custom resources they serve."""
