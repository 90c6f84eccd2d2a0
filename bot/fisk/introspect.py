"""Run ``<binary> --fisk-introspect`` and parse its output into an ApplicationModel.

This is one of the two places the bot starts a process (the runner is the other), so it gets the same
treatment: an argument vector and no shell, no stdin, the scrubbed environment, a deadline and a read cap.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from bot.fisk.digest import file_digest
from bot.fisk.environment import scrub_environment
from bot.fisk.model import ApplicationModel, FiskModelError

INTROSPECT_TIMEOUT = 30.0
INTROSPECT_MAX_BYTES = 16 * 1024 * 1024


class IntrospectionError(RuntimeError):
    """Base of every introspection failure; the message names the binary and what went wrong."""


class BinaryNotFound(IntrospectionError):
    pass


class BinaryNotExecutable(IntrospectionError):
    pass


class IntrospectionExitError(IntrospectionError):
    pass


class IntrospectionTimeout(IntrospectionError):
    pass


class IntrospectionTooLarge(IntrospectionError):
    pass


class IntrospectionNotJSON(IntrospectionError):
    pass


class NotAFiskModel(IntrospectionError):
    pass


def _check_binary(binary: str) -> None:
    if os.sep not in binary:  # configuration resolves bare names on PATH; one left bare was not found there
        raise BinaryNotFound(f"{binary}: not found on PATH (give its path)")
    path = Path(binary)
    if not path.exists():
        raise BinaryNotFound(f"{binary}: no such file")
    if path.is_dir() or not os.access(path, os.X_OK):
        raise BinaryNotExecutable(f"{binary}: not an executable file")


def _read_capped(proc: subprocess.Popen[bytes], binary: str, timeout: float, max_bytes: int) -> tuple[bytes, bytes]:
    """Read stdout and stderr until EOF, the deadline or the cap, whichever comes first."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, out)
        sel.register(proc.stderr, selectors.EVENT_READ, err)
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise IntrospectionTimeout(f"{binary} --fisk-introspect did not finish within {timeout:g}s")
            for key, _ in sel.select(remaining):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf: bytearray = key.data
                buf.extend(chunk)
                if len(out) > max_bytes:
                    raise IntrospectionTooLarge(
                        f"{binary} --fisk-introspect printed more than {max_bytes} bytes"
                    )
                if len(err) > 65536:
                    del err[:-65536]
    return bytes(out), bytes(err)


def run_introspection(
    binary: str,
    *,
    sensitive_env_vars: Iterable[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = INTROSPECT_TIMEOUT,
    max_bytes: int = INTROSPECT_MAX_BYTES,
) -> bytes:
    """The raw bytes ``binary --fisk-introspect`` prints, or a specific IntrospectionError."""
    _check_binary(binary)
    env = scrub_environment(sensitive_env_vars=sensitive_env_vars, extra=extra_env).env
    try:
        proc = subprocess.Popen(
            [binary, "--fisk-introspect"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise BinaryNotFound(f"{binary}: {exc.strerror}") from None
    except PermissionError as exc:
        raise BinaryNotExecutable(f"{binary}: {exc.strerror}") from None
    except OSError as exc:
        raise BinaryNotExecutable(f"{binary}: cannot start: {exc.strerror or exc}") from None
    try:
        out, err = _read_capped(proc, binary, timeout, max_bytes)
        code = proc.wait(timeout=max(1.0, timeout))
    except BaseException:
        _kill_group(proc)
        raise
    if code != 0:
        first = err.decode("utf-8", "replace").strip().splitlines()[:3]
        detail = f": {' / '.join(first)}" if first else ""
        raise IntrospectionExitError(f"{binary} --fisk-introspect exited with code {code}{detail}")
    return out


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


#: Deepest command nesting accepted. Real fisk applications nest a handful of levels; a tree thousands deep is
#: hostile or broken, and every recursive walk over it (validation, tool listing) would overflow the stack.
MAX_COMMAND_DEPTH = 64


def _command_depth(raw: dict[str, object], limit: int) -> int:
    """How deep ``commands`` nest (iteratively, so a hostile tree cannot overflow the stack); stops past ``limit``."""
    deepest = 0
    stack: list[tuple[object, int]] = [(raw, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        children = node.get("commands") if isinstance(node, dict) else None
        if isinstance(children, list):
            stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_application(data: bytes | str, source: str = "introspection") -> ApplicationModel:
    """Parse introspection JSON, separating "not JSON" from "JSON but not a fisk application model"."""
    try:
        raw = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        # the usual cause is a binary that is not a fisk program (or predates --fisk-introspect): say so
        what = "printed nothing, not JSON" if not data.strip() else f"output is not JSON ({exc})"
        raise IntrospectionNotJSON(f"{source}: {what}: is it a fisk application with --fisk-introspect?") from None
    except RecursionError:
        raise IntrospectionNotJSON(f"{source}: JSON nested too deeply to be an application model") from None
    if not isinstance(raw, dict) or "name" not in raw or not isinstance(raw.get("commands", []), list):
        raise NotAFiskModel(f"{source}: JSON is not a fisk application model (no name/commands)")
    if _command_depth(raw, MAX_COMMAND_DEPTH) > MAX_COMMAND_DEPTH:
        raise NotAFiskModel(f"{source}: commands nested more than {MAX_COMMAND_DEPTH} levels deep")
    try:
        return ApplicationModel.from_data(raw)
    except FiskModelError as exc:
        raise NotAFiskModel(f"{source}: JSON is not a fisk application model: {exc}") from None


def introspect_with_digest(
    binary: str,
    *,
    sensitive_env_vars: Iterable[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = INTROSPECT_TIMEOUT,
) -> tuple[ApplicationModel, str, str]:
    """The model plus the sha256 of the binary that printed it and of the JSON itself.

    The binary is hashed before and after it runs; if it changed in between the model might belong to
    either version, so introspection is repeated (a few times) until both digests agree.
    """
    for _ in range(3):
        try:
            before = file_digest(binary)
        except OSError:
            before = ""  # let run_introspection say precisely what is wrong with it
        data = run_introspection(binary, sensitive_env_vars=sensitive_env_vars, extra_env=extra_env,
                                 timeout=timeout)
        try:
            after = file_digest(binary)
        except OSError as exc:
            raise BinaryNotFound(f"{binary}: {exc.strerror}") from None
        if before == after:
            model = parse_application(data, source=f"{binary} --fisk-introspect")
            return model, after, hashlib.sha256(data).hexdigest()
    raise IntrospectionError(f"{binary} kept changing while it was being introspected")


def introspect(
    binary: str,
    *,
    sensitive_env_vars: Iterable[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = INTROSPECT_TIMEOUT,
) -> ApplicationModel:
    """Introspect ``binary`` and return its application model."""
    data = run_introspection(binary, sensitive_env_vars=sensitive_env_vars, extra_env=extra_env, timeout=timeout)
    return parse_application(data, source=f"{binary} --fisk-introspect")
