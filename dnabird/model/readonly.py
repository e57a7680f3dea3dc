"""Read-only dicts and lists for the nested settings of a frozen config (`EncoderConfig.attention`, ...).

A frozen dataclass stops `config.attention = ...` but not `config.attention["block_size"] = 32`; a model that
built its attention patterns once would silently ignore such a change. `read_only(value, name)` wraps nested
dicts and lists in subclasses that raise a `TypeError` naming the setting on any change. Being `dict` and `list`
subclasses they compare equal to plain ones and serialise as they do (`json.dumps`, `dataclasses.asdict`);
they hash (so a frozen config does), and copying returns them as they are. `writable(value)` gives plain,
mutable copies (what YAML needs, and what a caller edits to build a new config).
"""

from __future__ import annotations

HOW_TO_CHANGE = "build a new config with dataclasses.replace or build_encoder_config"


class _ReadOnly:
    """What a read-only dict and list share: the setting's name, the error, copying, pickling."""

    name = "this setting"

    def _refuse(self, *args, **kwargs):
        raise TypeError(f"{self.name} is read-only: {HOW_TO_CHANGE}")

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return read_only, (writable(self), self.name)


class ReadOnlyDict(_ReadOnly, dict):
    """A dict that refuses every change, naming the setting it holds."""

    def __init__(self, data=(), name: str | None = None):
        super().__init__(data)
        if name is not None:
            self.name = name

    __setitem__ = __delitem__ = __ior__ = _ReadOnly._refuse
    clear = pop = popitem = setdefault = update = _ReadOnly._refuse

    def __hash__(self):
        return hash(frozenset(self.items()))


class ReadOnlyList(_ReadOnly, list):
    """A list that refuses every change, naming the setting it holds."""

    def __init__(self, data=(), name: str | None = None):
        super().__init__(data)
        if name is not None:
            self.name = name

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _ReadOnly._refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _ReadOnly._refuse

    def __hash__(self):
        return hash(tuple(self))


def read_only(value, name: str):
    """`value` with every dict and list inside it made read-only; errors name `name` (and the key or index)."""
    if isinstance(value, dict):
        return ReadOnlyDict({key: read_only(item, f"{name}.{key}") for key, item in value.items()}, name)
    if isinstance(value, list | tuple):
        return ReadOnlyList((read_only(item, f"{name}[{i}]") for i, item in enumerate(value)), name)
    return value


def writable(value):
    """A plain, mutable copy of `value` with every dict and list (read-only or not) inside it copied too."""
    if isinstance(value, dict):
        return {key: writable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [writable(item) for item in value]
    return value
