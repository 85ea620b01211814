"""``kubectl explain RESOURCE[.FIELD...]``: the documentation of a resource or of one of its
fields, from the server's OpenAPI, as kubectl 1.32 prints it.

* the resource is named by plural, singular, short name or kind, optionally ``.group``
  (``deployments.apps.spec``); with ``--api-version=GROUP/VERSION`` the word before the first
  dot is the resource and that group/version is explained (:mod:`.mapping`);
* ``-o plaintext`` (the default) renders the OpenAPI v3 document of the group/version
  (:mod:`.plaintext`); ``-o plaintext-openapiv2`` the OpenAPI v2 document with kubectl's older
  explainer (:mod:`.openapiv2`); any other format fails with ``error: unrecognized format: X``;
* ``--recursive`` lists every field below, one a line, instead of the descriptions;
* failures end as kubectl's one line on stderr and exit code 1: ``error: field "x" does not
  exist`` (after the header already written), ``the server doesn't have a resource type "x"``,
  ``error: You must specify the type of resource to explain. ...``,
  ``error: couldn't find resource for "apps/v9, Resource=deployments"``.

The module imports only the standard library and typer at import time; the HTTP client is
imported when the command runs.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qsl

import typer

if TYPE_CHECKING:
    from minik8s.client.rest import Client
    from minik8s.kubectl.explain.mapping import RestMapper

PLAINTEXT = "plaintext"
PLAINTEXT_OPENAPIV2 = "plaintext-openapiv2"
SUGGEST = 'Use "kubectl api-resources" for a complete list of supported resources.'


class Failure(Exception):
    """kubectl's final line, written as it is (it carries its own ``error: `` where kubectl's has it)."""


def explain(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="TYPE", show_default=False)] = None,
    recursive: Annotated[bool, typer.Option(
        "--recursive/--no-recursive",
        help="When true, print the name of all the fields recursively. Otherwise, print the available fields "
             "with their description.")] = False,
    api_version: Annotated[str, typer.Option(
        "--api-version", help="Use given api-version (group/version) of the resource.")] = "",
    output: Annotated[str, typer.Option(
        "-o", "--output",
        help="Format in which to render the schema. Valid values are: (plaintext, plaintext-openapiv2).")] = PLAINTEXT,
) -> None:
    """Describe fields and structure of various resources.

    This command describes the fields associated with each supported API resource. Fields are
    identified via a simple JSONPath identifier: <type>.<fieldName>[.<fieldName>]
    """
    try:
        if not args:
            raise Failure(f"error: You must specify the type of resource to explain. {SUGGEST}")
        if len(args) > 1:
            raise Failure("error: We accept only this format: explain RESOURCE")
        text = asyncio.run(_run(ctx.obj, args[0], recursive, api_version, output))
    except Failure as failure:
        sys.stdout.flush()
        print(str(failure), file=sys.stderr)
        raise typer.Exit(1) from None
    sys.stdout.write(text)


async def _run(opts: Any, argument: str, recursive: bool, api_version: str, output: str) -> str:
    from minik8s.kubectl.explain import mapping
    from minik8s.kubectl.session import Session, print_warning

    async with Session(opts, discover=False) as session:
        client = session.client
        mapper = await _mapper(client, print_warning)
        try:
            if api_version:
                gvr, field_path = mapping.split_plain(mapper, argument)
            else:
                gvr, field_path = mapping.split_with_matching_prefix(mapper, argument)
        except mapping.NoMatch as exc:
            raise Failure(str(exc)) from None
        try:
            wanted = mapping.parse_group_version(api_version) if api_version else None
        except ValueError as exc:
            raise Failure(f"error: {exc}") from None
        if output == PLAINTEXT_OPENAPIV2:
            return await _openapiv2(client, mapper, gvr, wanted, field_path, recursive)
        if wanted is not None:
            gvr = mapping.GVR(wanted[0], wanted[1], gvr.resource)
        return await _openapiv3(client, gvr, field_path, recursive, output)


async def _mapper(client: Client, warn: Any) -> RestMapper:
    """The REST mapper of the server's discovery (core first, then ``/apis``' groups)."""
    from minik8s.api import errors
    from minik8s.kubectl.explain.mapping import RestMapper

    core = await client.request("GET", "/api")
    groups: list[tuple[str, list[str], str]] = []
    core_versions = [str(v) for v in core.get("versions") or []]
    if core_versions:
        groups.append(("", core_versions, core_versions[0]))
    try:
        listed = (await client.request("GET", "/apis")).get("groups") or []
    except errors.NotFound:
        listed = []
    for group in listed:
        versions = [str(v.get("version")) for v in group.get("versions") or [] if v.get("version")]
        preferred = str((group.get("preferredVersion") or {}).get("version") or (versions[0] if versions else ""))
        groups.append((str(group.get("name") or ""), versions, preferred))

    async def fetch(group: str, version: str) -> Any:
        try:
            return await client.request("GET", f"/apis/{group}/{version}" if group else f"/api/{version}")
        except errors.APIError:
            return None

    wanted = [(g, v) for g, versions, _ in groups for v in versions]
    documents = dict(zip(wanted, await asyncio.gather(*(fetch(g, v) for g, v in wanted)), strict=True))
    return RestMapper.from_discovery(groups, {k: d for k, d in documents.items() if isinstance(d, dict)}, warn)


async def _get(client: Client, url: str) -> Any:
    path, _, query = url.partition("?")
    return await client.request("GET", path, params=dict(parse_qsl(query)) or None)


async def _openapiv3(client: Client, gvr: Any, field_path: list[str], recursive: bool, output: str) -> str:
    from minik8s.kubectl.explain.plaintext import ExplainError, Renderer

    paths = (await client.request("GET", "/openapi/v3")).get("paths") or {}
    key = f"apis/{gvr.group}/{gvr.version}" if gvr.group else f"api/{gvr.version}"
    if key not in paths:
        raise Failure(f'error: couldn\'t find resource for "{gvr}"')
    document = await _get(client, str((paths[key] or {}).get("serverRelativeURL") or f"/openapi/v3/{key}"))
    if output != PLAINTEXT:
        raise Failure(f"error: unrecognized format: {output}")
    renderer = Renderer(document if isinstance(document, dict) else {}, recursive)
    gvk = renderer.find_gvk(gvr.group, gvr.version, gvr.resource)
    if gvk is None:
        raise Failure(f"error: GVR ({gvr}) not found in OpenAPI schema")
    try:
        text, error = renderer.explain(gvk, field_path)
    except ExplainError as exc:
        raise Failure(f"error: {exc}") from None
    if error is not None:
        sys.stdout.write(text)
        raise Failure(error)
    return text


async def _openapiv2(client: Client, mapper: RestMapper, gvr: Any, wanted: tuple[str, str] | None,
                     field_path: list[str], recursive: bool) -> str:
    from minik8s.kubectl.explain import openapiv2
    from minik8s.kubectl.explain.mapping import GVR, go_quote

    kind = mapper.kind_for(gvr) or mapper.kind_for(GVR(gvr.group, "", gvr.resource))
    group, version = wanted if wanted is not None else (gvr.group, gvr.version)
    if wanted is None and not kind:
        raise Failure(f"error: no matches for {gvr}")
    document = await client.request("GET", "/openapi/v2")
    try:
        return openapiv2.explain(document, group, version, kind, field_path, recursive)
    except openapiv2.NotFound:
        raise Failure(f"error: couldn't find resource for {go_quote(f'{group}/{version}, Kind={kind}')}") from None
    except openapiv2.ExplainError as exc:
        raise Failure(f"error: {exc}") from None
