"""JSON arguments to argv: the trust boundary between the model and the operating system.

Semantics follow fisk's ``CmdModel.ArgsFromJSON`` (golden vectors in ``shared/fixtures/fisk``), with two
deliberate differences: a property naming a hidden flag or argument is refused like an unknown one (hidden
parameters are not part of the tool), and missing required parameters are refused before anything is shown
for approval. Trailing data after the JSON object is refused too, where Go's decoder silently ignores it. A
value that can never be an argv item (one holding a NUL character, or longer than Linux's 128 KiB per item) is
refused here with a clear error, instead of being shown for approval and then failing to start.

The bot also refuses the shapes real fisk would parse differently from what the approval card shows (the
argv a human reads must be the argv fisk acts on; see ``_refuse_misread_*`` below and the README's list):
a positional that is exactly ``--`` (fisk's lexer drops every such item, shifting the rest), a map key holding
``:`` or ``=`` (fisk splits ``KEY=VALUE`` at the first of either), a non-cumulative positional given other than
exactly one value (a missing or extra item shifts later positionals), a non-cumulative flag given several values
(fisk refuses a repeated flag after approval), a required parameter given zero values (an empty array or object
passes a presence check, then fisk fails after a human approved it), and an unpaired surrogate (no argv item can
hold it as the card shows it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.fisk.model import ArgModel, CmdModel, FlagModel, is_framework_flag

# Linux refuses a single argv item of MAX_ARG_STRLEN (32 pages = 128 KiB) bytes or more, its NUL included.
MAX_TOKEN_BYTES = 128 * 1024 - 1


class JsonNumber(str):
    """A JSON number kept as the literal text it was written with (no float round trip)."""


class ArgumentsError(ValueError):
    """Arguments that cannot become a command line. ``kind`` is stable; the message is for people and models."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _reject_constant(name: str) -> Any:
    raise ArgumentsError("invalid_json", f"invalid JSON arguments: {name} is not valid JSON")


#: One decoder for every call: building one (and its scanner) cost more than decoding a typical argument object,
#: and a decoder keeps no state between calls.
_DECODER = json.JSONDecoder(parse_float=JsonNumber, parse_int=JsonNumber, parse_constant=_reject_constant)


def parse_arguments(raw: str | bytes | Mapping[str, Any] | None) -> dict[str, Any]:
    """Decode the model's arguments into a dict whose numbers are ``JsonNumber`` literals.

    Empty input and JSON ``null`` mean "no arguments", as in Go (decoding null into a map leaves it empty).
    An already-decoded mapping is accepted for callers that only have parsed input.
    """
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    text = raw.decode("utf-8", errors="strict") if isinstance(raw, bytes) else raw
    if text.strip() == "":
        return {}
    try:
        value, end = _DECODER.raw_decode(text, len(text) - len(text.lstrip()))
    except json.JSONDecodeError as exc:
        raise ArgumentsError("invalid_json", f"invalid JSON arguments: {exc.msg}") from None
    if text[end:].strip():
        raise ArgumentsError("invalid_json", "invalid JSON arguments: unexpected data after the JSON object")
    if value is None:
        return {}
    if not isinstance(value, dict):
        kind = _json_kind(value)
        raise ArgumentsError("invalid_json", f"invalid JSON arguments: expected an object, got {kind}")
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, str) and not isinstance(value, JsonNumber):
        return "string"
    if isinstance(value, JsonNumber | int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _scalar(value: Any) -> str:
    """Render a scalar as fisk would parse it; numbers verbatim, booleans as true/false, null as ""."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int | float):
        return repr(value)
    raise ArgumentsError("unsupported_value_type", f"unsupported value type {_json_kind(value)}")


def visible_flags(command: CmdModel) -> list[FlagModel]:
    """The command's own flags that are part of the tool: not hidden, not fisk's framework flags."""
    return [f for f in command.flags if not f.hidden and not is_framework_flag(f.name)]


def visible_args(command: CmdModel) -> list[ArgModel]:
    return [a for a in command.args if not a.hidden]


def _flag_tokens(flag: FlagModel, value: Any) -> list[str]:
    if flag.boolean:
        if not isinstance(value, bool):
            raise ArgumentsError("expected_boolean", f"expected boolean, got {_json_kind(value)}")
        if flag.negatable:
            return [f"--{flag.name}" if value else f"--no-{flag.name}"]
        if value:
            return [f"--{flag.name}"]
        if flag.defaults_to_true:
            raise ArgumentsError(
                "unnegatable_false_with_true_default",
                "cannot be set to false: the flag has no negation and defaults to true",
            )
        return []
    if isinstance(value, list):
        return [f"--{flag.name}={_scalar(item)}" for item in value]
    if isinstance(value, dict):
        return [f"--{flag.name}={key}={_scalar(value[key])}" for key in _go_sorted(value)]
    return [f"--{flag.name}={_scalar(value)}"]


def _go_sorted(keys: Mapping[str, Any]) -> list[str]:
    """Go's sort.Strings orders by UTF-8 bytes, which differs from Python's code point order only rarely."""
    return sorted(keys, key=lambda k: k.encode("utf-8", "surrogatepass"))


# JSON allows "\ud800" on its own; Python keeps it as a code point no encoder accepts (Go's decoder would have
# replaced it with U+FFFD), so it can never be the argv item the card shows.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _checked(tokens: list[str]) -> list[str]:
    """Refuse what can never be an argv item, so it is never shown for approval and then fails to start."""
    for token in tokens:
        if "\x00" in token:
            raise ArgumentsError("nul_byte", "a value contains a NUL character, which a command line cannot hold")
        if _SURROGATE.search(token):
            raise ArgumentsError(
                "lone_surrogate", "a value contains an unpaired UTF-16 surrogate (a \\ud800-\\udfff escape that is "
                "not half of a pair), which is not text: it would reach the command as other bytes than the card "
                "shows, or fail to start. Send the character itself, or its complete surrogate pair",
            )
        size = len(token.encode("utf-8", "surrogatepass"))
        if size > MAX_TOKEN_BYTES:
            raise ArgumentsError(
                "argument_too_long", f"a value is {size} bytes long; one command-line item may be at most "
                f"{MAX_TOKEN_BYTES} bytes",
            )
    return tokens


def _refuse_misread_map_keys(value: Any) -> None:
    """fisk splits each ``KEY=VALUE`` item at the first ``:`` or ``=``, so such a key would arrive cut in two."""
    if not isinstance(value, dict):
        return
    for key in _go_sorted(value):
        separator = next((c for c in key if c in ":="), None)
        if separator is None:
            continue
        head, _, tail = key.partition(separator)
        raise ArgumentsError(
            "map_key_separator",
            f"the key {json.dumps(key)} contains {json.dumps(separator)}; fisk splits each KEY=VALUE item at the "
            f"first \":\" or \"=\", so it would arrive as key {json.dumps(head)} with value "
            f"{json.dumps(tail + '=' + _scalar(value[key]))}. Use keys without \":\" or \"=\"",
        )


def _refuse_required_without_value(required: bool, value: Any, tokens: Sequence[str]) -> None:
    """An empty array or object passes a presence check, then fisk fails on the missing value after approval."""
    if required and not tokens:
        raise ArgumentsError(
            "required_without_value",
            f"is required, but {json.dumps(value)} gives it no value on the command line; send at least one value",
        )


def _flag_argv(flag: FlagModel, value: Any, *, strict: bool = True) -> list[str]:
    if strict:
        _refuse_misread_map_keys(value)
    tokens = _checked(_flag_tokens(flag, value))
    if strict:
        _refuse_required_without_value(flag.required, value, tokens)
        _refuse_repeated_single_flag(flag, tokens)
    return tokens


def _refuse_repeated_single_flag(flag: FlagModel, tokens: Sequence[str]) -> None:
    """fisk refuses a non-cumulative flag given twice ("flag 'x' cannot be repeated"): after approval."""
    if not flag.cumulative and len(tokens) > 1:
        raise ArgumentsError(
            "flag_not_repeatable",
            f"takes one value, got {len(tokens)}; fisk refuses this flag given more than once, so the call would fail "
            "after approval. Send a single value (a string, not a list or an object with several keys)",
        )


def _positional_argv(value: Any) -> str:
    return _checked([_scalar(value)])[0]


def _refuse_misread_positional(arg: ArgModel, value: Any, tokens: Sequence[str]) -> None:
    """Refuse positional shapes whose argv fisk would read with values in other places than the card shows."""
    for index, token in enumerate(tokens):
        if token == "--":
            where = f"item {index + 1} of the list" if isinstance(value, list) else "the value"
            raise ArgumentsError(
                "double_dash_positional",
                f"{where} is exactly \"--\", which fisk drops from every place on its command line, so it would "
                "vanish and the values after it take its place. Send a different value, or leave it out",
            )
    _refuse_required_without_value(arg.required, value, tokens)
    if not arg.cumulative and len(tokens) != 1:
        raise ArgumentsError(
            "positional_not_single",
            f"takes exactly one value, got a list of {len(tokens)}; fisk reads positionals by place, so a missing "
            "or extra value would shift the others (or fail after approval). Send a single value, or leave it out",
        )


def _with_context(kind_of: str, name: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ArgumentsError as exc:
        raise ArgumentsError(exc.kind, f"{kind_of} {json.dumps(name)}: {exc.message}") from None


def _positional_tokens(args: Sequence[ArgModel], values: Mapping[str, Any], *, strict: bool) -> list[str]:
    for index, arg in enumerate(args):
        if arg.cumulative and index != len(args) - 1:
            raise ArgumentsError(
                "cumulative_not_last", f"argument {json.dumps(arg.name)} is cumulative but is not the last argument"
            )
    supplied = [i for i, a in enumerate(args) if a.name in values]
    if not supplied:
        return []
    out: list[str] = []
    for arg in args[: supplied[-1] + 1]:
        if arg.name not in values:
            if not arg.default:
                raise ArgumentsError(
                    "positional_gap_without_default",
                    f"argument {json.dumps(arg.name)} must be set because a later argument is set",
                )
            out.extend(arg.default)
            continue
        value = values[arg.name]
        items = value if isinstance(value, list) else [value]
        tokens = [_with_context("argument", arg.name, _positional_argv, item) for item in items]
        if strict:
            _with_context("argument", arg.name, _refuse_misread_positional, arg, value, tokens)
        out.extend(tokens)
    return out


def args_from_json(
    command: CmdModel,
    arguments: str | bytes | Mapping[str, Any] | None,
    *,
    fisk_exact: bool = False,
) -> list[str]:
    """fisk's ArgsFromJSON for one command: flags in declared order, then ``--`` and the positionals.

    ``fisk_exact=True`` reproduces fisk exactly (for the golden vectors): hidden parameters are accepted and the
    shapes fisk would misread are converted as fisk converts them. The bot never uses it.
    """
    values = parse_arguments(arguments)
    strict = not fisk_exact
    flags = visible_flags(command) if strict else command.flags
    args = visible_args(command) if strict else command.args
    known = {f.name for f in flags} | {a.name for a in args}
    for key in values:
        if key not in known:
            raise ArgumentsError("unknown_property", f"unknown property {json.dumps(key)}")
    out: list[str] = []
    for flag in flags:
        if flag.name in values:
            out.extend(_with_context("flag", flag.name, _flag_argv, flag, values[flag.name], strict=strict))
    positionals = _positional_tokens(args, values, strict=strict)
    if positionals:
        out.append("--")
        out.extend(positionals)
    return out


def global_flag_tokens(flags: Sequence[FlagModel], values: Mapping[str, Any]) -> list[str]:
    """Render allowlisted application-level flags (placed after the command path, before the command's own)."""
    out: list[str] = []
    for flag in flags:
        if flag.name in values:
            out.extend(_with_context("flag", flag.name, _flag_argv, flag, values[flag.name]))
    return out


def missing_required(command: CmdModel, values: Mapping[str, Any]) -> list[str]:
    """Names of required, visible flags and arguments absent from ``values`` (fisk-ai's pre-check)."""
    names = [f.name for f in visible_flags(command) if f.required]
    names += [a.name for a in visible_args(command) if a.required]
    return [n for n in names if n not in values]


def parameter_roster(command: CmdModel, global_flags: Sequence[FlagModel] = ()) -> str:
    """A one-line summary of what the command accepts, so a model can correct a call in one turn."""
    required: list[str] = []
    optional: list[str] = []
    for flag in [*visible_flags(command), *global_flags]:
        (required if flag.required else optional).append(flag.name + (" (boolean)" if flag.boolean else ""))
    for arg in visible_args(command):
        (required if arg.required else optional).append(arg.name + (" (list)" if arg.cumulative else ""))
    return f"required: {', '.join(required) or 'none'}; optional: {', '.join(optional) or 'none'}"
