"""``kubectl``: the typer app, global options, argument normalisation and error handling.

One module per verb (``get``, ``describe``, ``apply``/``create``, ``patch``, ``replace``, ``edit``, ``diff``,
``events``, ``run``, ``expose``, ``set``, ``autoscale``, ``delete``,
``api-resources``, ``version``, ``logs``, ``exec``, ``scale``, ``rollout`` and its
subcommands, ``cordon``/``uncordon``/``drain``, ``taint``, ``label``/``annotate``, ``gpujob``
create/script/results; the serverless ``function deploy|invoke|logs``, ``workflow run`` and
``event send``).
Every failure ends as one line on stderr and exit code 1 (``exec`` exits with the
remote command's code).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated

import click
import typer

from minik8s.kubectl import (
    api_resources,
    api_versions,
    apply,
    attach,
    auth,
    autoscale,
    cluster_info,
    config,
    cp,
    create,
    delete,
    describe,
    diff,
    drain,
    edit,
    events,
    expose,
    functions,
    get,
    gpujob,
    label,
    logs,
    patch,
    plugin,
    port_forward,
    replace,
    rollout,
    run,
    scale,
    taint,
    top,
    version,
    wait,
)
from minik8s.kubectl import exec as exec_cmd
from minik8s.kubectl import set as set_cmd
from minik8s.kubectl.errors import render
from minik8s.kubectl.session import GlobalOptions


def kustomize_cmd(directory: Annotated[str, typer.Argument(metavar="DIR", help="a kustomization directory")] = ".",
                  ) -> None:
    """Build a kustomization target from a directory and print its YAML (kubectl kustomize)."""
    from minik8s.kubectl import kustomize

    sys.stdout.write(kustomize.render(kustomize.build(directory)))

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
) -> None:
    """kubectl controls the minik8s cluster manager."""
    ctx.obj = GlobalOptions(kubeconfig=kubeconfig, context=context, namespace=namespace, server=server,
                            request_timeout=request_timeout, user=user, cluster=cluster)


app.command("get")(get.get)
app.command("describe")(describe.describe)
app.command("apply")(apply.apply)
app.command("patch")(patch.patch)
app.command("replace")(replace.replace)
app.command("edit")(edit.edit)
app.command("diff")(diff.diff)
app.command("kustomize")(kustomize_cmd)
app.command("events")(events.events)
app.add_typer(create.app, name="create")
app.command("run", context_settings={"allow_interspersed_args": True})(run.run)
app.command("expose")(expose.expose)
app.add_typer(set_cmd.app, name="set")
app.command("autoscale")(autoscale.autoscale)
app.command("delete")(delete.delete)
app.command("api-resources")(api_resources.api_resources)
app.command("api-versions")(api_versions.api_versions)
app.command("cluster-info")(cluster_info.cluster_info)
app.add_typer(config.app, name="config")
app.add_typer(auth.app, name="auth")
app.command("version")(version.version)
app.command("logs")(logs.logs)
app.command("exec")(exec_cmd.exec_)
app.command("cp")(cp.cp)
app.command("attach")(attach.attach)
app.command("port-forward")(port_forward.port_forward)
app.command("scale")(scale.scale)
app.command("wait")(wait.wait)
app.add_typer(rollout.app, name="rollout")
app.command("cordon")(drain.cordon)
app.command("uncordon")(drain.uncordon)
app.command("drain")(drain.drain)
app.command("taint")(taint.taint)
app.command("label")(label.label)
app.command("annotate")(label.annotate)
app.add_typer(top.app, name="top")
app.add_typer(gpujob.app, name="gpujob")
app.add_typer(functions.function_app, name="function")
app.add_typer(functions.workflow_app, name="workflow")
app.add_typer(functions.event_app, name="event")
plugin_app = typer.Typer(help="Provides utilities for interacting with plugins.", no_args_is_help=True)
app.add_typer(plugin_app, name="plugin")


@plugin_app.command("list")
def plugin_list(
    name_only: Annotated[bool, typer.Option("--name-only", help="print only each plugin's file name")] = False,
) -> None:
    """All the plugin executables (``kubectl-*``) on PATH, with kubectl's warnings about each."""
    found = plugin.listing(_command_path)
    if not found:
        raise click.ClickException("unable to find any kubectl plugins in your PATH")
    print("The following compatible plugins are available:\n", flush=True)
    count = 0
    for path, warnings in found:
        print(path.name if name_only else path, flush=True)
        for warning in warnings:
            print(f"  - {warning}", file=sys.stderr, flush=True)
        count += len(warnings)
    if count:
        raise click.ClickException("one plugin warning was found" if count == 1 else
                                   f"{count} plugin warnings were found")


def _command_path(words: list[str]) -> str | None:
    """The deepest kubectl command that ``words`` name (``kubectl config view``), as cobra finds a
    command; None when the first word is no command."""
    command = typer.main.get_command(app)
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
    if not verb or verb in {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}:
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
                      "--user", "--cluster"}
#: Boolean flags that also accept ``--flag=true|false``; a ``--no-flag`` form exists for these.
NEGATABLE = {"--wait", "--recursive", "--watch"}
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
        result = app(args=args, prog_name="kubectl", standalone_mode=False, obj=None)
        code = result if isinstance(result, int) else 0
    except click.exceptions.NoArgsIsHelpError as exc:
        print(exc.ctx.get_help() if exc.ctx else str(exc))
        code = 0
    except click.UsageError as exc:
        hint = f" (see 'kubectl {exc.ctx.info_name} --help')" if exc.ctx and exc.ctx.parent else ""
        print(f"error: {exc.format_message()}{hint}", file=sys.stderr)
        code = 1
    except click.ClickException as exc:
        print(f"error: {exc.format_message()}", file=sys.stderr)
        code = 1
    except click.exceptions.Abort:
        code = 130
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # e.g. `kubectl get pods | head -1`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        if type(exc).__name__ == "NoSuchOption":  # typer's own click: pflag's words, as kubectl
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
