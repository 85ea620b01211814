"""CustomResourceDefinitions in the apiserver (``apiextensions.k8s.io/v1``).

Modules: ``strategy`` (the CRD's own validation, and the strategy of the custom resources a CRD
defines), ``controller`` (the in-process CRD controller: names, conditions, live registration,
deletion), ``structural`` (structural schemas: checking, defaulting, pruning), ``validation`` (values against a
schema), ``cel`` (``x-kubernetes-validations`` rules),
``printer`` (``additionalPrinterColumns`` as Table columns; their JSONPath is
:mod:`minik8s.api.kubejsonpath`), ``versions`` (served versions by conversion ``None``).
"""
