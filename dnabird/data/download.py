"""Resumable HTTP download into a `.part` file: Range requests, retries, mirrors, a progress bar."""

from __future__ import annotations

import http.client
import logging
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

from dnabird import __version__
from dnabird.errors import DownloadError, reject
from dnabird.progress import progress_bar

logger = logging.getLogger(__name__)

CHUNK = 1 << 16
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_RETRYABLE_HTTP = {408, 425, 429, 500, 502, 503, 504}


class _IncompleteTransfer(Exception):
    """The connection ended before the announced length arrived (retryable)."""


def _transfer(url: str, part: Path, timeout: float, progress: bool) -> None:
    """One attempt: continue `part` from its current size, or restart it if the server says 200."""
    offset = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": f"dnabird/{__version__}", **({"Range": f"bytes={offset}-"} if offset else {})}
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and offset:  # our range starts past the end: the partial file is unusable
            part.unlink()
            raise _IncompleteTransfer(f"server refused range from byte {offset}; restarting") from err
        raise
    with response:
        announced = response.headers.get("Content-Length")
        if offset and response.status == 206:
            match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
            if not match or int(match.group(1)) != offset:
                part.unlink()
                raise _IncompleteTransfer(f"server answered a different range "
                                          f"({response.headers.get('Content-Range')!r}); restarting")
            mode = "ab"
        else:
            if offset:
                logger.info("%s: server ignored the range request; downloading from the start", url)
            offset, mode = 0, "wb"
        total = offset + int(announced) if announced is not None else None
        received = offset
        with open(part, mode) as out, progress_bar(total=total, initial=offset, unit="B", unit_scale=True,
                                                   desc=part.name.removesuffix(".part"), enabled=progress) as bar:
            while chunk := response.read(CHUNK):
                out.write(chunk)
                received += len(chunk)
                bar.update(len(chunk))
    if total is not None and received != total:
        raise _IncompleteTransfer(f"connection closed after {received} of {total} bytes")


def download(urls: tuple[str, ...], part: str | Path, *, retries: int = 3, retry_wait: float = 2.0,
             timeout: float = 60.0, progress: bool = True) -> str:
    """Download into `part`, trying `urls` in order; returns the URL that completed the file.

    A `part` left by an earlier attempt or run is continued with a Range request; a server
    that ignores Range (200 instead of 206) restarts it from byte 0. Each URL gets `retries`
    attempts on network errors, dropped connections and 5xx answers; a 4xx moves to the next URL.
    """
    reject(not isinstance(retries, int) or retries < 1, "retries", retries, "a positive integer")
    part = Path(part)
    failures = []
    for url in urls:
        for attempt in range(1, retries + 1):
            try:
                _transfer(url, part, timeout, progress)
                return url
            except urllib.error.HTTPError as err:
                failure = f"{url}: HTTP {err.code} {err.reason}"
                if err.code not in _RETRYABLE_HTTP:
                    break
            except (_IncompleteTransfer, urllib.error.URLError, http.client.HTTPException, OSError) as err:
                failure = f"{url}: {err}"
            logger.warning("attempt %d/%d failed: %s", attempt, retries, failure)
            if attempt < retries:
                time.sleep(retry_wait * attempt)
        failures.append(failure)
        logger.warning("giving up on %s", url)
    raise DownloadError(part.name.removesuffix(".part"), failures)
