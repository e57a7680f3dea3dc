"""Coordinate liftover between assemblies with a UCSC chain file (over pyliftover), 0-based in and out.

`Liftover(chain).convert(chrom, pos, strand)` returns a `LiftResult` whose `status` says
whether the position mapped cleanly or why not:

- "ok": exactly one target, on the same chromosome (aliases `chr1`↔`1` count as the same) and strand;
- "unmapped": the chromosome is in the chain file but the position falls in no aligned block;
- "absent_chromosome": the chromosome does not occur in the chain file at all;
- "multiple_targets": the position maps to several places (targets sorted by chain score);
- "other_chromosome": one target, on a different chromosome (e.g. a `_random` or alt contig);
- "strand_flip": one target, on the same chromosome but the opposite strand.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

from pyliftover import LiftOver

from dnabird.errors import InputFormatError, reject
from dnabird.genome.reference import contig_alias

STATUSES = ("ok", "unmapped", "absent_chromosome", "multiple_targets", "other_chromosome", "strand_flip")


@dataclass(frozen=True)
class LiftedPosition:
    """One target of a liftover: 0-based position on `strand` of `chrom`, with its chain's score."""

    chrom: str
    pos: int
    strand: str
    score: int


@dataclass(frozen=True)
class LiftResult:
    """Outcome of lifting one position: a status from `STATUSES` and every target found."""

    status: str
    targets: tuple[LiftedPosition, ...]

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def target(self) -> LiftedPosition | None:
        """The single target when there is exactly one, else None."""
        return self.targets[0] if len(self.targets) == 1 else None


class Liftover:
    """A loaded chain file (plain or `.gz`). The whole file is held in memory, as pyliftover does."""

    def __init__(self, chain_path: str | Path):
        self.path = Path(chain_path)
        if not self.path.is_file():
            raise InputFormatError("chain file not found", path=self.path)
        opener = gzip.open if self.path.suffix == ".gz" else open
        with opener(self.path, "rb") as raw:
            reader = _LineCounter(raw)
            try:
                self._liftover = LiftOver(reader)
            except Exception as err:  # pyliftover raises bare Exception/ValueError/IndexError
                raise InputFormatError(f"not a valid chain file: {err}", path=self.path,
                                       line=reader.line) from err
        if reader.stray_line is not None:
            raise InputFormatError("expected a 'chain' header line", path=self.path, line=reader.stray_line)
        if reader.chains == 0:
            raise InputFormatError("no 'chain' records found", path=self.path)

    def convert(self, chrom: str, pos: int, strand: str = "+") -> LiftResult:
        """Lift the 0-based position `pos` on `strand` of `chrom` and classify the outcome."""
        reject(strand not in ("+", "-"), "strand", strand, "'+' or '-'")
        reject(pos < 0, "pos", pos, "a 0-based position >= 0")
        hits = self._liftover.convert_coordinate(chrom, int(pos), strand)
        if hits is None:
            alias = contig_alias(chrom)
            hits = self._liftover.convert_coordinate(alias, int(pos), strand) if alias else None
        if hits is None:
            return LiftResult("absent_chromosome", ())
        targets = tuple(LiftedPosition(*hit) for hit in hits)
        status = ("unmapped" if not targets else "multiple_targets" if len(targets) > 1
                  else "other_chromosome" if targets[0].chrom not in (chrom, contig_alias(chrom))
                  else "strand_flip" if targets[0].strand != strand else "ok")
        return LiftResult(status, targets)


class _LineCounter:
    """A binary reader handed to pyliftover that tracks the current line number, counts chain
    headers, and notes the first line outside a chain that is not a header (pyliftover skips those)."""

    def __init__(self, raw):
        self._raw = raw
        self.line = 0
        self.chains = 0
        self.stray_line: int | None = None
        self._between_chains = True

    def readline(self) -> bytes:
        text = self._raw.readline()
        if text:
            self.line += 1
        stripped = text.strip()
        if not stripped or stripped.startswith(b"#"):
            self._between_chains = True
        elif stripped.startswith(b"chain"):
            self.chains += 1
            self._between_chains = False
        elif self._between_chains and self.stray_line is None:
            self.stray_line = self.line
        return text

    def close(self) -> None:
        """pyliftover closes its reader; the owner of the underlying file closes it instead."""
