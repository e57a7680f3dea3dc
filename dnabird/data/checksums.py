"""Published checksum lists (md5sum and BSD `sum` output); the digests themselves: `dnabird.io.file_digests`."""

from __future__ import annotations

from dnabird.data.manifests import normalize_digest
from dnabird.errors import InputFormatError


def parse_checksum_list(text: str, filename: str, source: str) -> dict[str, str]:
    """The digest a published list gives for `filename`.

    Understands `md5sum` output (`<md5>  [*]<name>`, as UCSC's md5sum.txt) and Unix `sum`
    output (`<sum> <blocks> <name>`, as Ensembl's CHECKSUMS, space- or tab-separated).
    """
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[-1].lstrip("*") != filename:
            continue
        if len(fields) == 2 and len(fields[0]) == 32:
            return {"md5": normalize_digest("md5", fields[0])}
        if len(fields) == 3 and fields[0].isdigit() and fields[1].isdigit():
            return {"bsd_sum": normalize_digest("bsd_sum", f"{fields[0]} {fields[1]}")}
        raise InputFormatError("expected '<md5> <name>' or '<sum> <blocks> <name>'",
                               path=source, line=number, record=line.strip())
    raise InputFormatError(f"no checksum listed for {filename!r}", path=source)
