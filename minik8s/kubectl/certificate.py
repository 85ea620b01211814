"""``kubectl certificate approve|deny NAME... [--force]``: decide CertificateSigningRequests.

As kubectl 1.32's: each request is read, and unless it already carries the condition (``--force``
writes anyway) an ``Approved`` (reason ``KubectlApprove``, message ``This CSR was approved by kubectl
certificate approve.``) or ``Denied`` (``KubectlDeny``) condition is appended and written through the
``approval`` subresource, read again on a Conflict.  Each success prints
``certificatesigningrequest.certificates.k8s.io/NAME approved`` (or ``denied``); with several names a
failure is reported and the others still go (exit 1).
"""

from __future__ import annotations

import asyncio

import typer

from minik8s.api import errors
from minik8s.api.base import now_rfc3339
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.selection import ObjectRef, for_each
from minik8s.kubectl.session import GlobalOptions, Session

app = typer.Typer(name="certificate", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Modify certificate resources.")

#: verb → (condition type, reason, message, result word)
DECISIONS = {
    "approve": ("Approved", "KubectlApprove", "This CSR was approved by kubectl certificate approve.", "approved"),
    "deny": ("Denied", "KubectlDeny", "This CSR was denied by kubectl certificate deny.", "denied"),
}


async def decide(s: Session, ref: ObjectRef, verb: str, force: bool) -> str:
    """Add the verb's condition to one request (unless it has it and not ``force``); the result word."""
    ctype, reason, message, word = DECISIONS[verb]
    for attempt in range(11):
        csr = await s.client.get(ref.rt, ref.name)
        status = dict(csr.get("status") or {})
        conditions = list(status.get("conditions") or [])
        has = any(c.get("type") == ctype for c in conditions)
        if has and not force:
            return word
        if not has:
            conditions.append({"type": ctype, "status": "True", "reason": reason, "message": message,
                               "lastUpdateTime": now_rfc3339()})
        status["conditions"] = conditions
        try:
            await s.client.update(ref.rt, dict(csr, status=status), subresource="approval")
        except errors.Conflict:
            if attempt < 10:
                continue
            raise
        return word
    raise KubectlError(f"certificatesigningrequest {ref.name} kept changing; try again")


async def run_decide(opts: GlobalOptions, names: list[str], verb: str, force: bool) -> int:
    async with Session(opts) as s:
        rt = s.resource("certificatesigningrequests")
        return await for_each([ObjectRef(rt, None, n) for n in names], lambda ref: decide(s, ref, verb, force))


def _run(ctx: typer.Context, names: list[str] | None, verb: str, force: bool) -> None:
    if not names:
        raise KubectlError("one or more CSRs must be specified as <name> or -f <filename>")
    code = asyncio.run(run_decide(ctx.obj, names, verb, force))
    if code:
        raise typer.Exit(code)


def _command(verb: str, help_: str, force_help: str) -> None:
    """Register ``kubectl certificate <verb>``."""

    def command(ctx: typer.Context,
                names: list[str] | None = typer.Argument(None, metavar="NAME..."),
                force: bool = typer.Option(False, "--force", help=force_help)) -> None:
        _run(ctx, names, verb, force)

    command.__doc__ = help_
    app.command(verb)(command)


_command("approve", "Approve a certificate signing request.", "Update the CSR even if it is already approved.")
_command("deny", "Deny a certificate signing request.", "Update the CSR even if it is already denied.")
