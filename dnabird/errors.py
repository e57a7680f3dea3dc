"""Every exception dnabird raises on purpose, in one module.

Messages name what is at fault (the parameter, file, line or record), what was
expected and what was received, so a user can fix the input without reading code.
"""

from __future__ import annotations

import os
from operator import attrgetter


class DnabirdError(Exception):
    """Base class of all dnabird errors. Each pickles as its message and attributes, so it crosses process
    boundaries (multiprocessing pools, `torch.distributed`) whatever its own `__init__` takes."""

    def __reduce__(self):
        return _rebuild, (type(self), str(self), self.__dict__)


def _rebuild(cls: type, message: str, attributes: dict) -> Exception:
    """An error of class `cls` with `message` and `attributes`, without calling its `__init__`."""
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(attributes)
    return error


class ParameterError(DnabirdError, ValueError):
    """A function or config parameter has a value outside what is allowed."""

    def __init__(self, name: str, value: object, expected: str):
        self.name, self.value, self.expected = name, value, expected
        super().__init__(f"{name}={value!r} is invalid: expected {expected}")


def reject(invalid: bool, name: str, value: object, expected: str) -> None:
    """Raise `ParameterError(name, value, expected)` when `invalid`."""
    if invalid:
        raise ParameterError(name, value, expected)


def check_int(name: str, value: object, minimum: int = 1, expected: str = "") -> None:
    """Raise unless `value` is an integer (not a bool) ≥ `minimum`; `expected` words the error if given."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ParameterError(name, value, expected or ("a positive integer" if minimum == 1 else
                                                       f"an integer ≥ {minimum}"))


def check_positive_ints(settings: object, names: tuple[str, ...]) -> None:
    """`check_int` on each of the attributes `names` of `settings`."""
    for name in names:
        check_int(name, getattr(settings, name))


def require_paths(config: object, names, expected: str = "a path",
                  where: str = "set it in the YAML or as an override") -> None:
    """`ParameterError` naming the first of `names` (dotted attributes of `config`) that is null."""
    for name in names:
        reject(attrgetter(name)(config) is None, name, None, f"{expected} ({where})")


class ConfigError(DnabirdError, ValueError):
    """A configuration file or mapping is malformed (unknown key, wrong type, …)."""


class InputFormatError(DnabirdError, ValueError):
    """An input file does not parse; the message names the file and the line or record."""

    def __init__(self, message: str, *, path: str | os.PathLike | None = None,
                 line: int | None = None, record: str | None = None):
        self.path, self.line, self.record = path, line, record
        where = [text for text, value in ((str(path), path), (f"line {line}", line), (f"record {record!r}", record))
                 if value is not None]
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}")


class UnscorableVariantError(DnabirdError, ValueError):
    """A variant cannot be scored (a symbolic allele, an unknown chromosome, an allele longer than the
    window …); scoring records `reason` (a fixed category) and `detail` in its side table and goes on."""

    def __init__(self, reason: str, detail: str = ""):
        self.reason, self.detail = reason, detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


class UnpredictableError(DnabirdError, ValueError):
    """An input of `predict` cannot be predicted (an unknown chromosome, a region off its contig, a window
    longer than the model's eval_length …); the run lists `reason` (a fixed category) and `detail` beside its
    outputs and goes on."""

    def __init__(self, reason: str, detail: str = ""):
        self.reason, self.detail = reason, detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


class ChecksumError(DnabirdError):
    """A downloaded or cached file does not match its recorded digest."""


class CheckpointError(DnabirdError):
    """A checkpoint directory is missing, corrupt or does not match the model."""


class BackendUnavailableError(DnabirdError, RuntimeError):
    """An explicitly requested compute backend cannot run this input; lists the reasons."""

    def __init__(self, backend: str, reasons: list[str]):
        self.backend, self.reasons = backend, list(reasons)
        super().__init__(f"attention backend {backend!r} cannot run this call: " + "; ".join(reasons))


class NonFiniteLossError(DnabirdError, FloatingPointError):
    """The training loss became NaN or infinite; the message names the step and the last good checkpoint."""


class NonFiniteOutputError(DnabirdError, FloatingPointError):
    """A model produced NaN or infinite outputs (e.g. corrupt weights); the message names the model, the
    output and the inputs."""


class OutputPathError(DnabirdError):
    """An output cannot be written where it was asked for (checked before any work starts)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during long work: the message says where the work stopped, `resume_step` the step a rerun
    resumes from (its last checkpoint)."""

    def __init__(self, message: str, resume_step: int | None = None):
        self.resume_step = resume_step
        super().__init__(message)


class DownloadError(DnabirdError):
    """A file could not be downloaded from any of its URLs; lists what went wrong at each."""

    def __init__(self, filename: str, failures: list[str]):
        self.filename, self.failures = filename, list(failures)
        super().__init__(f"could not download {filename}: " + "; ".join(failures))
