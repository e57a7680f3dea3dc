"""Unpacking downloaded files: streaming gunzip (multi-member, trailing garbage tolerated), safe untar and
unzip, and a FASTA's `.fai` index."""

from __future__ import annotations

import logging
import os
import shutil
import tarfile
import zipfile
import zlib
from pathlib import Path

from dnabird.errors import InputFormatError
from dnabird.genome.reference import Genome
from dnabird.io import atomic_output
from dnabird.progress import progress_bar

logger = logging.getLogger(__name__)

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 20


def gunzip(source: str | Path, target: str | Path, progress: bool = True) -> int:
    """Decompress `source` into `target` (temp + rename); returns the count of trailing bytes ignored.

    Concatenated gzip members are all decompressed. Bytes after a member that do not start a
    new gzip header (as in the 1000 Genomes `hs37d5.fa.gz`) end the stream with a warning.
    """
    source, target = Path(source), Path(target)
    ignored = 0
    with atomic_output(target) as temporary, open(source, "rb") as src, open(temporary, "wb") as out, \
            progress_bar(total=source.stat().st_size, unit="B", unit_scale=True, desc=f"gunzip {source.name}",
                         enabled=progress) as bar:
        member, pending, started = None, b"", False
        while True:
            chunk = src.read(CHUNK)
            bar.update(len(chunk))
            data, pending = pending + chunk, b""
            if not data:
                break
            while data:
                if member is None:
                    if len(data) < len(GZIP_MAGIC) and chunk:
                        pending = data
                        break
                    if not data.startswith(GZIP_MAGIC):
                        if not started:
                            raise InputFormatError("not a gzip file (no 1f 8b header)", path=source)
                        ignored = len(data) + source.stat().st_size - src.tell()
                        break
                    member, started = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS), True
                try:
                    while data and not member.eof:  # bounded output: a run of N inflates ~1000-fold
                        out.write(member.decompress(data, CHUNK))
                        data = member.unconsumed_tail
                except zlib.error as err:
                    raise InputFormatError(f"corrupt gzip data: {err}", path=source) from err
                if member.eof:
                    data, member = member.unused_data, None
            if ignored:
                break
        if member is not None:
            raise InputFormatError("gzip stream ends inside a member (truncated file?)", path=source)
    if ignored:
        logger.warning("%s: ignored %d bytes of trailing garbage after the last gzip member", source, ignored)
    return ignored


def _strict_data_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    """tarfile's "data" filter, except that an absolute member name is refused rather than made relative."""
    if member.name.startswith(("/", "\\")) or os.path.isabs(member.name):
        raise tarfile.AbsolutePathError(member)
    return tarfile.data_filter(member, dest)


def untar(archive: str | Path, dest: str | Path, replaceable: set[str] = frozenset()) -> list[str]:
    """Extract `archive` into `dest` through a staging folder; returns the top-level names extracted. Members
    with absolute paths, `..`, links outside `dest` or device files are refused (`_strict_data_filter`);
    existing top-level entries are replaced only if in `replaceable`."""
    archive, dest = Path(archive), Path(dest)

    def extract(staging: Path) -> None:
        with tarfile.open(archive) as tar:
            tar.extractall(staging, filter=_strict_data_filter)

    try:
        return _extract_and_install(archive, dest, replaceable, extract)
    except tarfile.FilterError as err:
        raise InputFormatError(f"unsafe archive member refused ({err})", path=archive,
                               record=err.tarinfo.name) from err
    except (tarfile.TarError, EOFError, zlib.error) as err:
        raise InputFormatError(f"cannot extract archive: {err}", path=archive) from err


def unzip(archive: str | Path, dest: str | Path, replaceable: set[str] = frozenset()) -> list[str]:
    """Extract a zip `archive` into `dest` as `untar` does (returns the top-level names): members with
    absolute paths or `..` components are refused before anything reaches `dest`."""
    archive, dest = Path(archive), Path(dest)
    try:
        with zipfile.ZipFile(archive) as zipped:
            for name in zipped.namelist():
                parts = Path(name.replace("\\", "/")).parts
                if name.startswith(("/", "\\")) or os.path.isabs(name) or ".." in parts or ":" in name:
                    raise InputFormatError("unsafe archive member refused (absolute or escaping path)",
                                           path=archive, record=name)
            return _extract_and_install(archive, dest, replaceable, zipped.extractall)
    except (zipfile.BadZipFile, EOFError, zlib.error) as err:
        raise InputFormatError(f"cannot extract archive: {err}", path=archive) from err


def _extract_and_install(archive: Path, dest: Path, replaceable: set[str], extract) -> list[str]:
    """`extract(staging)` into a fresh staging folder (removed if it fails), then move its top-level entries
    into `dest`, refusing to replace entries dnabird did not write."""
    staging = dest / f".{archive.name}.unpacking"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        extract(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    names = sorted(os.listdir(staging))
    clashes = [name for name in names if (dest / name).exists() and name not in replaceable]
    if clashes:
        shutil.rmtree(staging)
        raise InputFormatError(f"would overwrite {', '.join(clashes)} in {dest}, which dnabird did not "
                               "write; move them aside first", path=archive)
    for name in names:
        if (dest / name).is_dir():
            shutil.rmtree(dest / name)
        os.replace(staging / name, dest / name)
    staging.rmdir()
    return names


def index_fasta(path: str | Path) -> Path:
    """Build (or refresh, when stale) the `.fai` index of a FASTA, as `Genome` does; returns its path."""
    Genome(path).close()
    return Path(f"{path}.fai")
