"""The settings' command line: readable --help (metavars, defaults in MiB) and errors that name flag and variable."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic_settings import BaseSettings, CliSettingsSource

from dmlrpc_server.host import MiB

S = TypeVar("S", bound=BaseSettings)
#: The prefix of the settings' environment variables.
ENV_PREFIX = "DMLRPC_"


def cli_source(settings_cls: type[S]) -> CliSettingsSource[S]:
    """The command line's source, its --help made readable: metavars that say what a value is (BYTES, SECONDS, N,
    FILE) instead of Python types, sizes in MiB, and no pydantic default where the description states one."""
    parser = argparse.ArgumentParser(
        prog="dmlrpc-server",
        description=settings_cls.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    config = settings_cls.model_config
    source: CliSettingsSource[S] = CliSettingsSource(
        settings_cls,
        root_parser=parser,
        cli_prog_name=config.get("cli_prog_name"),
        cli_kebab_case=config.get("cli_kebab_case"),
        cli_implicit_flags=config.get("cli_implicit_flags"),
        cli_hide_none_type=config.get("cli_hide_none_type"),
    )
    for action in parser._actions:
        flag = next((option for option in action.option_strings if option.startswith("--")), None)
        if flag is None or action.help is None or not isinstance(action.metavar, str):
            continue
        action.metavar = _metavar(flag, action.metavar)
        action.help = _help_default(action.help, bytes_=action.metavar == "BYTES")
    return source


def _metavar(flag: str, python_type: str) -> str:
    if python_type.startswith("{"):  # choices: argparse lists them
        return python_type
    if flag == "--feature-level":
        return "LEVEL"
    for suffix, name in (
        ("-bytes", "BYTES"), ("-seconds", "SECONDS"), ("-port", "PORT"), ("-file", "FILE"), ("-repository", "DIR")
    ):  # fmt: skip
        if flag.endswith(suffix):
            return name
    if flag.endswith("-host") or flag == "--host":
        return "HOST"
    return {"int": "N", "float": "X", "Path": "FILE", "SecretStr": "TOKEN", "str": "TEXT"}.get(python_type, "JSON")


def _help_default(text: str, *, bytes_: bool) -> str:
    """``text`` without pydantic's "(default: ...)" where it says nothing (null) or the description states the
    default itself; byte sizes in MiB."""
    start = max(text.rfind(" (default: "), text.rfind(" (default factory: "))
    match = re.fullmatch(r" \(default(?: factory)?: (.*)\)", text[start:]) if start >= 0 else None
    if match is None:
        return text
    described = text[:start]
    value = match.group(1)
    if value == "null" or "factory" in match.group(0) or "default" in described.lower():
        return described
    if bytes_ and value.isdigit() and int(value) >= MiB and int(value) % MiB == 0:
        value = f"{int(value) // MiB} MiB"
    return f"{described} (default: {value})"


def describe(error: Any, origin: Callable[[str], str | None] = lambda location: None) -> str:
    """The settings' validation errors, each naming where its value came from (``origin(field)``: a config file's
    key, say), else the flag and the variable that set it."""
    lines = []
    for problem in error.errors():
        location = ".".join(str(part) for part in problem["loc"])
        if location:
            flag = "--" + location.replace("_", "-")
            where = origin(location) or f"{flag} ({ENV_PREFIX}{location.upper()})"
            lines.append(f"{where}: {problem['msg']}")
        else:
            lines.append(problem["msg"].removeprefix("Value error, "))
    return "invalid settings:\n  " + "\n  ".join(lines)
