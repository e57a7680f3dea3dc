"""Typed configs from YAML: dataclasses checked key by key, and `key.sub=value` overrides.

Every error names where the value came from (file and dotted key), what was expected and what
was received. Supported field annotations: bool, int, float, str, Path, Any, lists, tuples,
optionals/unions, dicts and nested dataclasses.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from dnabird.errors import ConfigError

# YAML 1.2's float literal: PyYAML (YAML 1.1) reads `1e-3`, without a dot, as a string
YAML12_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def read_yaml(path: str | os.PathLike) -> dict:
    """The mapping at the top of a YAML file; a clear error if unreadable or not a mapping."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as err:
        raise ConfigError(f"{path}: cannot read config file ({err.strerror})") from err
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML ({err})") from err
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys, got {type(data).__name__}")
    return data


def reject_unknown_keys(cls: type, data: Mapping, where: str) -> None:
    """Raise `ConfigError` naming `where`, the first key of `data` that is not a field of dataclass `cls`, the
    closest known key when one is close, and the known keys."""
    known = [f.name for f in dataclasses.fields(cls)]
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{where}: unknown key {key!r}{hint} (known keys: {', '.join(known)})")


def build_config(cls: type, data: Mapping, where: str):
    """Instantiate dataclass `cls` from `data`, checking names and types; errors name `where` and the key."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected a mapping of keys, got {type(data).__name__}")
    reject_unknown_keys(cls, data, where)
    hints = typing.get_type_hints(cls)
    values = {key: coerce(value, hints[key], f"{where}.{key}") for key, value in data.items()}
    try:
        return cls(**values)
    except (ValueError, TypeError) as err:
        raise ConfigError(f"{where}: {err}") from err


def coerce(value, kind, where: str):
    """`value` checked against annotation `kind`: int, float, str, bool, lists, optionals, dataclasses."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return coerce(value, option, where)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{where}: {value!r} matches none of {kind}")
    if origin in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        item = args[0] if args else typing.Any
        items = [coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        return items if origin is list else tuple(items)
    if origin is dict or kind is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return dict(value)
    if dataclasses.is_dataclass(kind):
        return build_config(kind, value, where)
    if kind is typing.Any:
        return value
    if kind is float and (isinstance(value, int) and not isinstance(value, bool)
                          or isinstance(value, str) and YAML12_FLOAT.fullmatch(value)):
        return float(value)
    if kind is Path and isinstance(value, str):
        return Path(value)
    if kind in (bool, int, float, str) and (type(value) is not kind):
        raise ConfigError(f"{where}: expected {kind.__name__}, got {value!r}")
    return value


def parse_override(text: str) -> tuple[list[str], object]:
    """`key.sub=value` -> (["key", "sub"], value), the value read as a YAML scalar or list."""
    key, sep, raw = text.partition("=")
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"override {text!r}: expected key.sub=value")
    try:
        value = yaml.safe_load(raw) if raw else ""
    except yaml.YAMLError as err:
        raise ConfigError(f"override {text!r}: value does not parse ({err})") from err
    return key.split("."), value


def apply_overrides(data: dict, overrides: Sequence[str], source: str) -> dict:
    """Set each `key.sub=value` of `overrides` in the nested mapping `data` (in place; returned)."""
    for override in overrides:
        keys, value = parse_override(override)
        target = data
        for key in keys[:-1]:
            if target.get(key) is None:
                target[key] = {}
            target = target[key]
            if not isinstance(target, dict):
                raise ConfigError(f"override {override!r}: {key!r} is not a section in {source}")
        target[keys[-1]] = value
    return data


def load_config(cls: type, path: str | os.PathLike, overrides: Sequence[str] = ()):
    """Dataclass `cls` from the YAML file `path` with `key.sub=value` `overrides` applied; unknown keys (named
    beside the known ones) and wrong types fail naming the file and the key."""
    return build_config(cls, apply_overrides(read_yaml(path), list(overrides), str(path)), str(path))


class RecipeConfig:
    """Base of the recipes' config dataclasses: `XConfig.load(path, overrides)` reads one (`load_config`)."""

    @classmethod
    def load(cls, path: str | os.PathLike, overrides: Sequence[str] = ()):
        return load_config(cls, path, overrides)
