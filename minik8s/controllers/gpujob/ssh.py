"""One SSH connection to a Slurm login node (paramiko), blocking: callers run it in threads.

:class:`SSHConnection` logs in with a private key, checks the server's host key against the
``known_hosts`` text it is given (paramiko's ``RejectPolicy``: an unknown or changed key is
refused), runs commands (:meth:`SSHConnection.run`, stdout and stderr apart, with a time
limit and an output cap) and moves files over SFTP (:meth:`SSHConnection.sftp`, an
:class:`SFTPSession`).  Every failure is a :class:`SiteError` whose ``reason`` says what went
wrong (:data:`UNREACHABLE`, :data:`AUTH_FAILED`, :data:`HOST_KEY_REJECTED`,
:data:`COMMAND_FAILED`, :data:`REJECTED`), so the controller maps errors to conditions without
knowing paramiko.

Threads: one channel per operation.  paramiko's ``Transport`` multiplexes channels and is
safe to share between threads; a channel, and so an ``SFTPClient``, is not: the client reads
its replies off its one channel, and a thread that reads another thread's reply drops it, so
that thread waits for ever (issue 25: five uploads at once through one shared client hung,
and with it every GPUJob of the controller).  So no channel here is ever used by two
threads: each command (:meth:`SSHConnection.run`) and each file operation
(``with conn.sftp() as files: ...``: an upload, a fetch, one read) opens a channel of its
own on the shared connection and closes it at the end.  Unlike one lock around a shared
client, this keeps operations of different jobs running side by side, and one slow transfer
holds up nobody else; unlike a pool of idle clients, it needs no bookkeeping and keeps no
channels open between operations.  Hence a connection used by N threads has at most N
channels open: keep N under sshd's ``MaxSessions`` (10 by default; :class:`~.site.SlurmSites`
runs 8 threads).  The price is an SFTP start per operation (a channel open and the server's
``sftp-server``: about two round trips); a GPUJob makes four or five.  Every SFTP reply is
awaited at most ``io_timeout`` seconds, so a login node that stops answering fails the
operation (:data:`UNREACHABLE`) instead of holding its thread.
"""

from __future__ import annotations

import contextlib
import io
import logging
import posixpath
import select
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass

import paramiko

log = logging.getLogger("gpujob-controller")

#: :attr:`SiteError.reason` values.
UNREACHABLE = "Unreachable"              # TCP connect, SSH handshake or the connection broke
AUTH_FAILED = "AuthenticationFailed"     # the key was refused
HOST_KEY_REJECTED = "HostKeyNotVerified"  # the host key is not the one in known_hosts
BAD_CREDENTIALS = "InvalidCredentials"   # the Secret is missing, malformed or of the wrong type
COMMAND_FAILED = "CommandFailed"         # a command exited non-zero (message: its stderr)
REJECTED = "Rejected"                    # Slurm refused the job (sbatch's message)
#: Reasons that mean "the site cannot be used right now": retried with back-off.
CONNECTION_REASONS = frozenset({UNREACHABLE, AUTH_FAILED, HOST_KEY_REJECTED, BAD_CREDENTIALS})

#: Most bytes kept of a command's stdout and of its stderr (the rest is dropped, the tail kept).
OUTPUT_CAP = 1024 * 1024


class SiteError(Exception):
    """Any failure talking to a Slurm site: ``reason`` (a constant above) and ``message``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message

    @property
    def is_connection_error(self) -> bool:
        """Whether the site could not be used at all (retry later), as opposed to a command's failure."""
        return self.reason in CONNECTION_REASONS


@dataclass(frozen=True)
class Credentials:
    """What logging in needs: ``private_key`` (OpenSSH or PEM text) and ``known_hosts`` (OpenSSH
    ``known_hosts`` lines; ``[host]:port`` entries for ports other than 22)."""

    private_key: str
    known_hosts: str


@dataclass(frozen=True)
class CommandResult:
    """``exit_status`` (-1 when the command was killed by its time limit), stdout and stderr text."""

    exit_status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


def load_private_key(text: str) -> paramiko.PKey:
    """Parse an unencrypted Ed25519, ECDSA or RSA private key (OpenSSH or PEM). Raises SiteError."""
    for cls in (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey):
        try:
            return cls.from_private_key(io.StringIO(text))  # type: ignore[attr-defined, no-any-return]
        except (paramiko.SSHException, ValueError, IndexError, TypeError):
            continue
    raise SiteError(BAD_CREDENTIALS, "ssh-privatekey is not an unencrypted Ed25519, ECDSA or RSA private key")


def host_keys(known_hosts: str) -> paramiko.HostKeys:
    """``known_hosts`` text → paramiko HostKeys (malformed lines are skipped, as OpenSSH does)."""
    keys = paramiko.HostKeys()
    for line in known_hosts.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            entry = paramiko.hostkeys.HostKeyEntry.from_line(line)
        except (paramiko.SSHException, ValueError, IndexError):
            continue
        if entry is None or entry.key is None:
            continue
        for name in entry.hostnames:
            keys.add(name, entry.key.get_name(), entry.key)
    return keys


class SSHConnection:
    """A logged-in SSH connection to ``user@host:port``. Blocking; thread-safe: every command
    and every SFTP session has a channel of its own (see the module doc).

    ``connect_timeout`` bounds TCP connect, banner, authentication and opening a channel;
    ``io_timeout`` bounds the wait for each SFTP reply (seconds).
    """

    def __init__(self, host: str, port: int, user: str, credentials: Credentials,
                 connect_timeout: float = 10.0, io_timeout: float = 60.0) -> None:
        self.host = host
        self.port = port
        self.user = user
        self.credentials = credentials
        self.connect_timeout = connect_timeout
        self.io_timeout = io_timeout
        self._client: paramiko.SSHClient | None = None
        self.home: str = ""

    # ------------------------------------------------------------------ connection
    @property
    def target(self) -> str:
        return f"{self.user}@{self.host}:{self.port}"

    def connect(self) -> None:
        """Log in (host key checked against known_hosts) and read the home directory. Raises SiteError."""
        key = load_private_key(self.credentials.private_key)
        client = paramiko.SSHClient()
        known = host_keys(self.credentials.known_hosts)
        for hostname, entries in known.items():
            for keytype, hostkey in entries.items():
                client.get_host_keys().add(hostname, keytype, hostkey)
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        try:
            client.connect(self.host, self.port, username=self.user, pkey=key, timeout=self.connect_timeout,
                           banner_timeout=self.connect_timeout, auth_timeout=self.connect_timeout,
                           allow_agent=False, look_for_keys=False)
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise SiteError(HOST_KEY_REJECTED, f"the host key of {self.host}:{self.port} does not match "
                                               f"known_hosts (got {exc.key.get_name()})") from exc
        except paramiko.AuthenticationException as exc:
            client.close()
            raise SiteError(AUTH_FAILED, f"{self.target} refused the key: {exc}") from exc
        except paramiko.SSHException as exc:
            client.close()
            if "not found in known_hosts" in str(exc):
                raise SiteError(HOST_KEY_REJECTED, f"{self.host}:{self.port} is not in known_hosts") from exc
            raise SiteError(UNREACHABLE, f"SSH to {self.target} failed: {exc}") from exc
        except (OSError, EOFError) as exc:
            client.close()
            raise SiteError(UNREACHABLE, f"cannot connect to {self.host}:{self.port}: "
                                         f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}"
                            ) from exc
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(15)
        self._client = client
        with self.sftp() as files:
            self.home = files.normalize(".")

    @property
    def connected(self) -> bool:
        transport = self._client.get_transport() if self._client else None
        return bool(transport and transport.is_active())

    def close(self) -> None:
        """Close the connection; operations still running in other threads fail with UNREACHABLE."""
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def _transport(self) -> paramiko.Transport:
        transport = self._client.get_transport() if self._client else None
        if transport is None or not transport.is_active():
            raise SiteError(UNREACHABLE, f"the SSH connection to {self.target} is closed")
        return transport

    @contextlib.contextmanager
    def sftp(self) -> Iterator[SFTPSession]:
        """A new SFTP session (a channel of its own) for one operation of the calling thread,
        closed when the ``with`` block ends.  Never hand it to another thread.

        Raises SiteError(UNREACHABLE) when the channel or the SFTP subsystem cannot be opened.
        """
        try:
            channel = self._transport().open_session(timeout=self.connect_timeout)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise SiteError(UNREACHABLE, f"cannot open a channel to {self.target}: {exc}") from exc
        try:
            channel.settimeout(self.io_timeout)
            try:
                channel.invoke_subsystem("sftp")
                client = paramiko.SFTPClient(channel)
            except (paramiko.SSHException, OSError, EOFError) as exc:
                raise SiteError(UNREACHABLE, f"SFTP to {self.target} failed: {exc}") from exc
            yield SFTPSession(client, self.host, self.target)
        finally:
            channel.close()

    # ------------------------------------------------------------------ commands
    def run(self, command: str, timeout: float = 60.0, stdin: str | None = None) -> CommandResult:
        """Run ``command`` through the login shell; wait at most ``timeout`` seconds.

        On time-out the channel is closed (the remote command gets SIGHUP) and
        ``exit_status`` is -1.  Raises SiteError(UNREACHABLE) when the connection breaks.
        """
        try:
            channel = self._transport().open_session(timeout=self.connect_timeout)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise SiteError(UNREACHABLE, f"cannot open a channel to {self.target}: {exc}") from exc
        out = bytearray()
        err = bytearray()
        try:
            channel.exec_command(command)
            if stdin is not None:
                channel.sendall(stdin.encode())
            channel.shutdown_write()
            deadline = time.monotonic() + timeout
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return CommandResult(-1, _text(out), _text(err) + f"\n(killed after {timeout:.0f}s)")
                select.select([channel], [], [], min(remaining, 1.0))
                got = False
                while channel.recv_ready():
                    _append(out, channel.recv(65536))
                    got = True
                while channel.recv_stderr_ready():
                    _append(err, channel.recv_stderr(65536))
                    got = True
                if not got and channel.exit_status_ready() and not channel.recv_ready() \
                        and not channel.recv_stderr_ready():
                    break
                if not got and channel.closed:
                    break
                if not self.connected:
                    raise SiteError(UNREACHABLE, f"the connection to {self.target} broke during {command[:60]!r}")
            return CommandResult(channel.recv_exit_status(), _text(out), _text(err))
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise SiteError(UNREACHABLE, f"running a command on {self.target} failed: {exc}") from exc
        finally:
            channel.close()

    def check(self, command: str, timeout: float = 60.0) -> str:
        """:meth:`run` that raises SiteError(COMMAND_FAILED, stderr) on a non-zero exit; returns stdout."""
        result = self.run(command, timeout)
        if not result.ok:
            message = (result.stderr.strip() or result.stdout.strip())[-2000:]
            raise SiteError(COMMAND_FAILED, f"{command.split()[0]} exited {result.exit_status}: {message}")
        return result.stdout

    def read(self, path: str, limit: int | None = None, tail: bool = False) -> bytes | None:
        """:meth:`SFTPSession.read` in a session of its own (one small file)."""
        with self.sftp() as files:
            return files.read(path, limit, tail)


class SFTPSession:
    """One SFTP channel, used by the one thread that opened it (:meth:`SSHConnection.sftp`).

    Paths are the server's (absolute, or relative to the login directory).  Methods raise
    SiteError: UNREACHABLE when the channel fails or a reply takes longer than the
    connection's ``io_timeout``, COMMAND_FAILED when the server refuses (permissions, a file
    where a directory should be).
    """

    def __init__(self, client: paramiko.SFTPClient, host: str, target: str) -> None:
        self.client = client
        self.host = host
        self.target = target

    def normalize(self, path: str) -> str:
        """The absolute form of ``path`` on the server (``"."``: the login directory)."""
        try:
            return self.client.normalize(path)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise SiteError(UNREACHABLE, f"SFTP on {self.target} failed: {exc}") from exc

    def makedirs(self, path: str) -> None:
        """``mkdir -p`` over SFTP."""
        parts = [p for p in path.split("/") if p]
        current = "/" if path.startswith("/") else ""
        for part in parts:
            current = posixpath.join(current, part) if current else part
            try:
                self.client.stat(current)
            except FileNotFoundError:
                try:
                    self.client.mkdir(current)
                except OSError as exc:
                    raise _failure(exc, f"cannot create {current} on {self.host}") from exc
            except (OSError, EOFError, paramiko.SSHException) as exc:
                raise SiteError(UNREACHABLE, f"SFTP on {self.target} failed: {exc}") from exc

    def put(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Write ``data`` to ``path`` with permissions ``mode`` (the parents must exist: :meth:`makedirs`)."""
        try:
            with self.client.open(path, "wb") as fh:
                fh.write(data)
            self.client.chmod(path, mode)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise _failure(exc, f"cannot write {path} on {self.host}") from exc

    def read(self, path: str, limit: int | None = None, tail: bool = False) -> bytes | None:
        """The content of ``path`` (None when it does not exist); at most ``limit`` bytes, the
        last ones when ``tail``."""
        try:
            with self.client.open(path, "rb") as fh:
                size = fh.stat().st_size or 0
                if limit is not None and size > limit:
                    if tail:
                        fh.seek(size - limit)
                    data = fh.read(limit)
                else:
                    data = fh.read()
                return bytes(data)
        except FileNotFoundError:
            return None
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise SiteError(UNREACHABLE, f"cannot read {path} on {self.host}: {exc}") from exc

    def walk(self, root: str, max_entries: int = 10000) -> list[tuple[str, int]]:
        """``(relative path, size in bytes)`` of every regular file under ``root`` (symlinks not
        followed; at most ``max_entries`` directory entries looked at; [] when ``root`` is missing)."""
        files: list[tuple[str, int]] = []
        stack = [""]
        seen = 0
        while stack:
            rel = stack.pop()
            try:
                entries = self.client.listdir_attr(posixpath.join(root, rel) if rel else root)
            except FileNotFoundError:
                continue
            except (OSError, EOFError, paramiko.SSHException) as exc:
                raise SiteError(UNREACHABLE, f"cannot list {root} on {self.host}: {exc}") from exc
            for entry in sorted(entries, key=lambda e: e.filename):
                seen += 1
                if seen > max_entries:
                    return files
                child = posixpath.join(rel, entry.filename) if rel else entry.filename
                mode = entry.st_mode or 0
                if stat.S_ISDIR(mode):
                    stack.append(child)
                elif stat.S_ISREG(mode):
                    files.append((child, int(entry.st_size or 0)))
        return files


def _failure(exc: BaseException, what: str) -> SiteError:
    """A refused request (an SFTP status: permissions, no such directory) is COMMAND_FAILED; a
    broken or silent channel (EOF, SSH error, time-out) is UNREACHABLE."""
    broken = isinstance(exc, EOFError | paramiko.SSHException | TimeoutError)
    return SiteError(UNREACHABLE if broken else COMMAND_FAILED, f"{what}: {exc}")


def _append(buf: bytearray, chunk: bytes) -> None:
    buf += chunk
    if len(buf) > OUTPUT_CAP:
        del buf[:len(buf) - OUTPUT_CAP]


def _text(buf: bytearray) -> str:
    return bytes(buf).decode("utf-8", errors="replace")
