"""kubectl's structured output of objects: ``-o yaml``, ``-o json``, ``-o jsonpath=...``,
``-o jsonpath-file=...``, ``-o jsonpath-as-json=...`` and the Go templates (``-o go-template=...``,
``-o go-template-file=...``, and their other names ``template``, ``templatefile``:
:mod:`minik8s.kubectl.gotemplate`), without ``metadata.managedFields`` (kubectl's default, unless
``--show-managed-fields``).  Shared by every verb that prints objects (get, apply, patch, replace,
edit, diff, the generators)."""

from __future__ import annotations

import sys
from typing import Any

from minik8s.api import kubejsonpath
from minik8s.kubectl import printing
from minik8s.kubectl.customcolumns import read_template
from minik8s.kubectl.errors import KubectlError

#: The ``-o`` formats that take a template (``FORMAT=TEMPLATE``), those whose template is a file's.
TEMPLATE_FORMATS = ("go-template", "go-template-file", "jsonpath", "jsonpath-as-json", "jsonpath-file", "template",
                    "templatefile")
GO_TEMPLATE_FORMATS = ("go-template", "go-template-file", "template", "templatefile")
FILE_FORMATS = ("go-template-file", "jsonpath-file", "templatefile")


def without_managed_fields(data: Any) -> Any:
    """``data`` (an object or a list of them) without ``metadata.managedFields``, as kubectl prints
    objects unless ``--show-managed-fields`` is given."""
    if not isinstance(data, dict):
        return data
    if isinstance(data.get("items"), list):
        data = dict(data, items=[without_managed_fields(item) for item in data["items"]])
    meta = data.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        data = dict(data, metadata={k: v for k, v in meta.items() if k != "managedFields"})
    return data


def structured(output: str, data: Any) -> str:
    """``data`` rendered as yaml, json or jsonpath output (without managedFields)."""
    kind, _, arg = output.partition("=")
    data = without_managed_fields(data)
    if kind == "yaml":
        return printing.to_yaml(data).rstrip("\n")
    if kind == "json":
        return printing.to_json(data)
    template = read_template(arg, "--template") if kind in FILE_FORMATS else arg
    if kind in GO_TEMPLATE_FORMATS:
        from minik8s.kubectl import gotemplate  # its parser is compiled only for -o go-template

        try:
            gotemplate.parse(template)
        except gotemplate.TemplateError as exc:
            raise KubectlError(f"error parsing template {template}, {exc}") from None
        try:
            return gotemplate.render(template, data)
        except gotemplate.TemplateError as exc:
            # kubectl's debugging help on stdout, then its error line
            raw = kubejsonpath.go_json_compact(data)
            print(f"Error executing template: {exc}. Printing more information for debugging the template:\n"
                  f"\ttemplate was:\n\t\t{template}\n\traw data was:\n\t\t{raw}\n"
                  f"\tobject given to template engine was:\n\t\t{kubejsonpath.go_sprint(data)}\n", flush=True)
            raise KubectlError(f'error executing template "{template}": {exc}') from None
    if kind == "jsonpath-as-json":  # each value set a JSON array on lines of its own
        try:
            sets = kubejsonpath.result_sets(kubejsonpath.parse_template(template), data)
        except ValueError as exc:
            raise KubectlError(f"error parsing jsonpath {template}, {exc}") from None
        return "".join(kubejsonpath.go_json_indent(values) + "\n" for values in sets)
    try:
        return printing.jsonpath(template, data)
    except ValueError as exc:
        raise KubectlError(f"error parsing jsonpath {template}, {exc}") from None


def prints_object(output: str) -> bool:
    """Whether ``-o output`` prints the object itself (yaml, json or a template), not its name or a line."""
    return output in ("yaml", "json") or output.partition("=")[0] in TEMPLATE_FORMATS


def write_object(output: str, data: Any) -> None:
    """Print ``data`` as ``-o output`` (:func:`structured`): yaml and json end with a newline, a
    template's text is written as it is, as kubectl writes it."""
    text = structured(output, data)
    sys.stdout.write(text + ("" if output.partition("=")[0] in TEMPLATE_FORMATS else "\n"))
    sys.stdout.flush()
