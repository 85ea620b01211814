"""``kubectl``: the typer app, global options, argument normalisation and error handling.

One module per verb (:data:`VERBS`: ``get``, ``describe``, ``apply``, ``create``, ``logs``, ``exec``,
``rollout`` and its subcommands, ... and minik8s' own ``gpujob``, ``function``, ``workflow`` and
``event``); a command line imports only its verb's module.  Every failure ends as one line on
stderr and exit code 1 (``exec`` exits with the remote command's code).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable
from typing import Annotated

import typer
from typer._click import exceptions as click_errors  # the click typer runs its commands under

from minik8s.kubectl import plugin
from minik8s.kubectl.errors import KubectlError, render
from minik8s.kubectl.session import GlobalOptions

app = typer.Typer(
    name="kubectl",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="kubectl controls the minik8s cluster manager.",
)


@app.callback()
def _global(
    ctx: typer.Context,
    kubeconfig: Annotated[str | None, typer.Option("--kubeconfig", help="path to the kubeconfig file")] = None,
    context: Annotated[str | None, typer.Option("--context", help="the kubeconfig context to use")] = None,
    namespace: Annotated[str | None, typer.Option("-n", "--namespace", help="the namespace scope")] = None,
    server: Annotated[str | None, typer.Option("-s", "--server", help="the apiserver URL")] = None,
    request_timeout: Annotated[float | None, typer.Option("--request-timeout",
                                                          help="seconds to wait for one request")] = None,
    user: Annotated[str | None, typer.Option("--user", help="the kubeconfig user to use")] = None,
    cluster: Annotated[str | None, typer.Option("--cluster", help="the kubeconfig cluster to use")] = None,
    as_user: Annotated[str | None, typer.Option("--as", help="the user to impersonate for the operation")] = None,
    as_groups: Annotated[list[str] | None, typer.Option(
        "--as-group", help="a group to impersonate for the operation (repeat it for several)")] = None,
    as_uid: Annotated[str | None, typer.Option("--as-uid", help="the UID to impersonate for the operation")] = None,
) -> None:
    """kubectl controls the minik8s cluster manager."""
    ctx.obj = GlobalOptions(kubeconfig=kubeconfig, context=context, namespace=namespace, server=server,
                            request_timeout=request_timeout, user=user, cluster=cluster, as_user=as_user,
                            as_groups=list(as_groups or []), as_uid=as_uid)


#: Every verb: the module of ``minik8s.kubectl`` that implements it and the attribute there (a
#: function for a command, a ``typer.Typer`` for a group of subcommands), in ``--help``'s order.
#: A command line imports only its own verb's module (:func:`build`), so that start-up stays
#: short: kubectl's answer to ``get`` should not wait for ``gpujob``'s imports.
VERBS: dict[str, tuple[str, str]] = {
    "get": ("get", "get"),
    "describe": ("describe", "describe"),
    "explain": ("explain", "explain"),
    "apply": ("apply", "apply"),
    "patch": ("patch", "patch"),
    "replace": ("replace", "replace"),
    "edit": ("edit", "edit"),
    "diff": ("diff", "diff"),
    "kustomize": ("kustomize", "kustomize_command"),
    "events": ("events", "events"),
    "create": ("create", "app"),
    "run": ("run", "run"),
    "expose": ("expose", "expose"),
    "set": ("set", "app"),
    "autoscale": ("autoscale", "autoscale"),
    "delete": ("delete", "delete"),
    "api-resources": ("api_resources", "api_resources"),
    "api-versions": ("api_versions", "api_versions"),
    "cluster-info": ("cluster_info", "cluster_info"),
    "config": ("config", "app"),
    "auth": ("auth", "app"),
    "version": ("version", "version"),
    "logs": ("logs", "logs"),
    "exec": ("exec", "exec_"),
    "cp": ("cp", "cp"),
    "attach": ("attach", "attach"),
    "debug": ("debug", "debug"),
    "port-forward": ("port_forward", "port_forward"),
    "scale": ("scale", "scale"),
    "wait": ("wait", "wait"),
    "rollout": ("rollout", "app"),
    "cordon": ("drain", "cordon"),
    "uncordon": ("drain", "uncordon"),
    "drain": ("drain", "drain"),
    "taint": ("taint", "taint"),
    "certificate": ("certificate", "app"),
    "label": ("label", "label"),
    "annotate": ("label", "annotate"),
    "top": ("top", "app"),
    "gpujob": ("gpujob", "app"),
    "function": ("functions", "function_app"),
    "workflow": ("functions", "workflow_app"),
    "event": ("functions", "event_app"),
}
#: click settings of the verbs that need their own
VERB_SETTINGS: dict[str, dict[str, object]] = {"run": {"allow_interspersed_args": True}}


def _register(verb: str) -> None:
    """Import ``verb``'s module and add its command (or group) to :data:`app`."""
    if verb == "plugin":
        app.add_typer(plugin_app, name="plugin")
        return
    module, attribute = VERBS[verb]
    target = getattr(importlib.import_module(f"minik8s.kubectl.{module}"), attribute)
    if isinstance(target, typer.Typer):
        app.add_typer(target, name=verb)
    else:
        app.command(verb, context_settings=VERB_SETTINGS.get(verb))(target)


def build(verb: str = "") -> typer.Typer:
    """:data:`app` with ``verb`` registered, or with every verb (``plugin`` last) when ``verb`` is
    none of them (``--help``, an unknown verb's error, the plugin lookup)."""
    registered = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    for name in ([verb] if verb in VERBS or verb == "plugin" else [*VERBS, "plugin"]):
        if name not in registered:
            _register(name)
    return app


plugin_app = typer.Typer(help="Provides utilities for interacting with plugins.", no_args_is_help=True)


@plugin_app.command("list")
def plugin_list(
    name_only: Annotated[bool, typer.Option("--name-only", help="print only each plugin's file name")] = False,
) -> None:
    """All the plugin executables (``kubectl-*``) on PATH, with kubectl's warnings about each."""
    found = plugin.listing(_command_path)
    if not found:
        raise KubectlError("unable to find any kubectl plugins in your PATH")
    print("The following compatible plugins are available:\n", flush=True)
    count = 0
    for path, warnings in found:
        print(path.name if name_only else path, flush=True)
        for warning in warnings:
            print(f"  - {warning}", file=sys.stderr, flush=True)
        count += len(warnings)
    if count:
        raise KubectlError("one plugin warning was found" if count == 1 else
                                   f"{count} plugin warnings were found")


def _command_path(words: list[str]) -> str | None:
    """The deepest kubectl command that ``words`` name (``kubectl config view``), as cobra finds a
    command; None when the first word is no command."""
    command = typer.main.get_command(build())
    path = ["kubectl"]
    for word in words:
        sub = (getattr(command, "commands", None) or {}).get(word)  # typer's click or click's Group
        if sub is None:
            break
        command, path = sub, [*path, word]
    return " ".join(path) if len(path) > 1 else None


def _run_plugin(argv: list[str]) -> None:
    """Runs the ``PATH`` plugin a command line names when its verb is no kubectl command (this process
    is replaced); returns when it names none. Flags before a plugin's name are refused, as kubectl
    refuses them."""
    verb = _verb(argv)
    if not verb or verb in VERBS or verb == "plugin":
        return
    start = argv.index(verb)
    found = plugin.find(argv[start:])
    if found is None:
        return
    if start:
        print(f"Error: flags cannot be placed before plugin name: {argv[0]}", file=sys.stderr)
        sys.exit(1)
    path, used = found
    plugin.run(path, argv[used:])

#: Global flags that take a value; they may appear anywhere before ``--`` (as with kubectl).
GLOBAL_VALUE_FLAGS = {"--kubeconfig", "--context", "-n", "--namespace", "-s", "--server", "--request-timeout",
                      "--user", "--cluster", "--as", "--as-group", "--as-uid"}
#: Boolean flags that also accept ``--flag=true|false``; a ``--no-flag`` form exists for these.
NEGATABLE = {"--wait", "--recursive", "--watch", "--attach", "--share-processes"}
BOOL_FLAGS = NEGATABLE | {"--all", "--all-namespaces", "--force", "--now", "--show-labels",
                          "--watch-only", "--save-config", "--stdin", "--tty", "--follow", "--timestamps",
                          "--previous", "--client", "--ignore-not-found", "--namespaced", "--overwrite",
                          "--list", "--ignore-daemonsets", "--delete-emptydir-data", "--no-headers", "--minify",
                          "--current", "--quiet"}
#: Global flags that some verbs also take as flags of their own (``create rolebinding --user``).
SHADOWED = {"create": {"--user"}}


def normalize_argv(argv: list[str]) -> list[str]:
    """Move global flags in front of the verb and rewrite ``--flag=true|false`` bool forms.

    ``kubectl get pods -n x`` becomes ``-n x get pods``; ``--wait=false`` becomes
    ``--no-wait``. Nothing after ``--`` is touched (it belongs to ``exec``'s command).
    """
    front: list[str] = []
    rest: list[str] = []
    shadowed = SHADOWED.get(_verb(argv), set())
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest += argv[i:]
            break
        name, eq, value = arg.partition("=")
        if name in GLOBAL_VALUE_FLAGS and name not in shadowed:
            if eq:
                front += [name, value]
            elif i + 1 < len(argv):
                front += [arg, argv[i + 1]]
                i += 1
            else:
                front.append(arg)
        elif arg.startswith("-n") and len(arg) > 2 and not arg.startswith("--"):
            front += ["-n", arg[2:].lstrip("=")]
        elif re.match(r"-[A-Za-z]=", arg):  # pflag's -o=name: the shorthand's value after "="
            if value.lower() in ("true", "false"):  # a boolean shorthand (-A=true)
                rest += [name] if value.lower() == "true" else []
            else:
                rest += [name, value]
        elif name in BOOL_FLAGS and eq:
            truth = value.lower() in ("true", "1", "yes", "t")
            if name == "--namespaced":
                rest.append(f"--namespaced={value}")
            elif truth:
                rest.append(name)
            elif name in NEGATABLE:
                rest.append("--no-" + name[2:])
        else:
            rest.append(arg)
        i += 1
    return front + rest


def _verb(argv: list[str]) -> str:
    """The verb of a command line (its first word that is neither a flag nor a global flag's value)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return ""
        if arg in GLOBAL_VALUE_FLAGS:
            i += 2
            continue
        if not arg.startswith("-"):
            return arg
        i += 1
    return ""


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run kubectl and exit with its code (no tracebacks)."""
    raw = list(sys.argv[1:] if argv is None else argv)
    _run_plugin(raw)
    args = normalize_argv(raw)
    if not args:
        args = ["--help"]
    try:
        result = build(_verb(args))(args=args, prog_name="kubectl", standalone_mode=False, obj=None)
        code = result if isinstance(result, int) else 0
    except click_errors.NoArgsIsHelpError as exc:  # a group without its subcommand: its help, as kubectl
        print(exc.ctx.get_help() if exc.ctx else str(exc))
        code = 0
    except typer.Abort:
        code = 130
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # e.g. `kubectl get pods | head -1`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        if isinstance(exc, click_errors.NoSuchOption):  # pflag's words, as kubectl
            ctx = getattr(exc, "ctx", None)
            path = ctx.command_path if ctx is not None else "kubectl"
            print(f"Error: unknown flag: {getattr(exc, 'option_name', '')}\nSee '{path} --help' for usage.",
                  file=sys.stderr)
            _flush()
            sys.exit(1)
        line, code = render(exc, _server_hint(args))
        print(line, file=sys.stderr)
    _flush()
    sys.exit(code)


def _as_plugin(verb: str) -> Callable[[], None]:
    def run() -> None:
        main([verb, *sys.argv[1:]])

    run.__doc__ = f"``kubectl-{verb}``: ``kubectl {verb}`` as a kubectl plugin (minik8s.kubectl.plugin)."
    return run


function_plugin = _as_plugin("function")
workflow_plugin = _as_plugin("workflow")
event_plugin = _as_plugin("event")
gpujob_plugin = _as_plugin("gpujob")


def _server_hint(args: list[str]) -> str:
    """The server URL the failed command was talking to (for the connection-refused message)."""
    opts = GlobalOptions()
    for i, arg in enumerate(args[:-1]):
        if arg == "--kubeconfig":
            opts.kubeconfig = args[i + 1]
        elif arg == "--context":
            opts.context = args[i + 1]
        elif arg in ("-s", "--server"):
            opts.server = args[i + 1]
    return opts.server_url


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            pass


if __name__ == "__main__":
    main()
