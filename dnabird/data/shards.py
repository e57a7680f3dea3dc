"""Tokenized corpus shards in HDF5, one per corpus part (`build_shards`), and an O(1) random-access reader.

Layout of a shard:
  /ids                 uint16 (uint32 when the vocabulary exceeds 65,536 ids): all tokens, concatenated
  /sentence_offsets    int64 [sentences + 1]: sentence s is ids[sentence_offsets[s]:sentence_offsets[s+1]]
  /document_offsets    int64 [documents + 1]: document d is sentences document_offsets[d] to [d+1]
  /coords              int64 [sentences, 3]: (chrom index, start, end), 0-based half-open
  /document_ids        UTF-8 strings [documents]
  attributes           chroms (JSON list indexed by coords[:, 0]), tokenizer_hash, corpus_config (JSON),
                       num_documents, num_sentences, num_tokens, plus any the writer is given
A shard is written to a temporary file and renamed when complete, so a file with the final name is whole.
`build_shards` rewrites a shard only when its corpus part's content or the tokenizer changed, so an
interrupted run redoes just the parts that were not finished.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from dnabird.data.corpus import PART_SUFFIX, corpus_parts, iter_part_documents
from dnabird.data.tokenizer import load_tokenizer
from dnabird.data.tokenizer_base import DnaTokenizer, check_sequence
from dnabird.errors import InputFormatError
from dnabird.io import atomic_output, file_fingerprint
from dnabird.progress import progress_bar

SHARD_SUFFIX = ".h5"
_ENCODE_BATCH_SENTENCES = 4096


@dataclass(frozen=True)
class TokenizedDocument:
    """One document of a shard: its sentences' token ids and (start, end) coordinates on `chrom`."""

    id: str
    chrom: str
    sentences: list[np.ndarray]
    coords: np.ndarray  # [sentences, 2] int64: start, end (0-based half-open)

    @property
    def start(self) -> int:
        return int(self.coords[0, 0])

    @property
    def end(self) -> int:
        return int(self.coords[-1, 1])


def ids_dtype(vocab_size: int) -> np.dtype:
    """The narrowest unsigned dtype that holds every id of a `vocab_size` vocabulary."""
    return np.dtype(np.uint16 if vocab_size <= 1 << 16 else np.uint32)


def _column(shard: h5py.File, name: str, dtype, width: int | None = None) -> h5py.Dataset:
    """A resizable HDF5 dataset (1-D, or 2-D with `width` columns) that grows by `_append`."""
    columns = () if width is None else (width,)
    return shard.create_dataset(name, shape=(0, *columns), maxshape=(None, *columns), dtype=dtype,
                                chunks=(1 << 16,) if width is None else (1 << 14, width))


def _append(dataset: h5py.Dataset, rows: np.ndarray) -> None:
    start = len(dataset)
    dataset.resize(start + len(rows), axis=0)
    dataset[start:] = rows


def build_shards(corpus_dir: str | os.PathLike, tokenizer: DnaTokenizer | str | os.PathLike,
                 out_dir: str | os.PathLike, splits: Iterable[str] = ("train", "heldout")) -> dict[str, Path]:
    """Tokenize every part of each split of a corpus directory into `out_dir/SPLIT/PART.h5`.

    A shard already made from the same part content by the same tokenizer is kept; shards whose part
    is gone are removed. Returns split -> its shard folder (which exists even when the split is empty).
    """
    corpus_dir, out_dir = Path(corpus_dir), Path(out_dir)
    tokenizer = tokenizer if isinstance(tokenizer, DnaTokenizer) else load_tokenizer(tokenizer)
    report = corpus_dir / "report.json"
    corpus_config = json.loads(report.read_text()).get("config", {}) if report.exists() else {}
    outputs = {}
    for split in splits:
        split_dir = out_dir / split
        split_dir.mkdir(parents=True, exist_ok=True)
        wanted = {split_dir / (part.name.removesuffix(PART_SUFFIX) + SHARD_SUFFIX): part
                  for part in corpus_parts(corpus_dir, split)}
        for stale in set(split_dir.glob(f"*{SHARD_SUFFIX}")) - set(wanted):
            stale.unlink()
        for shard_path, part in progress_bar(wanted.items(), desc=f"shards {split}", unit="part"):
            source = json.dumps(file_fingerprint(part), sort_keys=True)
            if shard_is_current(shard_path, tokenizer.hash, source):
                continue
            write_shard(shard_path, iter_part_documents(part), tokenizer, corpus_config=corpus_config,
                        attrs={"source": part.name, "source_fingerprint": source, "split": split})
        outputs[split] = split_dir
    return outputs


def shard_is_current(path: Path, tokenizer_hash: str, source_fingerprint: str) -> bool:
    """True when `path` is a finished shard of this part content made by this tokenizer."""
    try:
        with h5py.File(path, "r") as shard:
            return (shard.attrs["tokenizer_hash"], shard.attrs["source_fingerprint"]) == \
                (tokenizer_hash, source_fingerprint)
    except (OSError, KeyError):
        return False


def write_shard(path: str | os.PathLike, documents: Iterable, tokenizer: DnaTokenizer, *,
                corpus_config: Mapping | None = None, attrs: Mapping | None = None,
                num_threads: int | None = None) -> Path:
    """Encode `documents` (corpus `Document`s: id, chrom, sentences of (start, end, sequence)) into a shard.

    Each sentence is encoded on its own. The file appears at `path` only when complete; on any
    error the temporary file is removed and nothing is left under the final name.
    """
    path = Path(path)
    with atomic_output(path) as temporary:
        with h5py.File(temporary, "w") as shard:
            counts = _fill_shard(shard, documents, tokenizer, num_threads or os.cpu_count() or 1)
            shard.attrs.update({
                "tokenizer_hash": tokenizer.hash,
                "corpus_config": json.dumps(dict(corpus_config or {}), sort_keys=True),
                **counts,
                **dict(attrs or {}),
            })
    return path


def _fill_shard(shard: h5py.File, documents: Iterable, tokenizer: DnaTokenizer, num_threads: int) -> dict:
    ids = _column(shard, "ids", ids_dtype(tokenizer.vocab_size))
    sentence_offsets = _column(shard, "sentence_offsets", np.int64)
    document_offsets = _column(shard, "document_offsets", np.int64)
    coords = _column(shard, "coords", np.int64, width=3)
    _append(sentence_offsets, np.zeros(1, np.int64))
    _append(document_offsets, np.zeros(1, np.int64))
    chroms: dict[str, int] = {}
    document_ids: list[str] = []
    for batch in _checked_batches(documents, tokenizer):
        sentences = [(chroms.setdefault(d.chrom, len(chroms)), s) for d in batch for s in d.sentences]
        encoded = tokenizer.encode([s.sequence for _, s in sentences], num_threads=num_threads)
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
        _append(sentence_offsets, len(ids) + np.cumsum(lengths))
        _append(document_offsets, len(coords) + np.cumsum([len(d.sentences) for d in batch]))
        _append(ids, np.fromiter(itertools.chain.from_iterable(encoded), ids.dtype, int(lengths.sum())))
        _append(coords, np.array([(chrom, s.start, s.end) for chrom, s in sentences], np.int64))
        document_ids.extend(str(d.id) for d in batch)
    shard.create_dataset("document_ids", data=np.array(document_ids, dtype=h5py.string_dtype()))
    shard.attrs["chroms"] = json.dumps(list(chroms))
    return {"num_documents": len(document_ids), "num_sentences": len(coords), "num_tokens": len(ids)}


def _checked_batches(documents: Iterable, tokenizer: DnaTokenizer) -> Iterator[list]:
    """Documents in lists of about `_ENCODE_BATCH_SENTENCES` sentences, each sentence checked first (against
    the tokenizer's alphabet)."""
    batch, sentences = [], 0
    for document in documents:
        if not document.sentences:
            raise InputFormatError("document has no sentences", record=str(document.id))
        for sentence in document.sentences:
            where = f"document {document.id} {document.chrom}:{sentence.start}-{sentence.end}"
            check_sequence(sentence.sequence, where, tokenizer.alphabet)
        batch.append(document)
        sentences += len(document.sentences)
        if sentences >= _ENCODE_BATCH_SENTENCES:
            yield batch
            batch, sentences = [], 0
    if batch:
        yield batch


class ShardReader(contextlib.AbstractContextManager):
    """Random access to the documents of one shard file or of every shard in a directory.

    `reader[i]` reads only document i's offsets, ids and coordinates from disk (O(1) in the size
    of the shard). Files are opened lazily, reopened after a fork and left out of pickles, so
    DataLoader workers (forked or spawned) can share a reader.
    """

    def __init__(self, path: str | os.PathLike):
        path = Path(path)
        if path.is_dir():
            self.paths = sorted(path.rglob(f"*{SHARD_SUFFIX}"))
        elif path.is_file():
            self.paths = [path]
        else:
            raise InputFormatError("no shard file or directory here", path=path)
        if not self.paths:
            raise InputFormatError(f"directory holds no *{SHARD_SUFFIX} shards", path=path)
        self._files: dict[int, h5py.File] = {}
        self._pid = os.getpid()
        counts, self.chroms, hashes = [], [], set()
        for shard_path in self.paths:
            try:
                with h5py.File(shard_path, "r") as shard:
                    counts.append(int(shard.attrs["num_documents"]))
                    self.chroms.append(json.loads(shard.attrs["chroms"]))
                    hashes.add(str(shard.attrs["tokenizer_hash"]))
            except (OSError, KeyError) as err:
                raise InputFormatError(f"not a dnabird token shard ({err})", path=shard_path) from err
        if len(hashes) > 1:
            raise InputFormatError(f"shards were made by {len(hashes)} different tokenizers", path=path)
        self.tokenizer_hash = hashes.pop()
        self._starts = np.concatenate([[0], np.cumsum(counts)]).tolist()

    def __len__(self) -> int:
        return self._starts[-1]

    def _file(self, index: int) -> h5py.File:
        if os.getpid() != self._pid:
            self._files, self._pid = {}, os.getpid()
        if index not in self._files:
            self._files[index] = h5py.File(self.paths[index], "r")
        return self._files[index]

    def __getitem__(self, index: int) -> TokenizedDocument:
        if not -len(self) <= index < len(self):
            raise IndexError(f"document {index} out of range for {len(self)} documents")
        index %= len(self)
        shard_index = bisect.bisect_right(self._starts, index) - 1
        local = index - self._starts[shard_index]
        shard = self._file(shard_index)
        first, last = shard["document_offsets"][local: local + 2]
        bounds = shard["sentence_offsets"][first: last + 1]
        ids = shard["ids"][bounds[0]: bounds[-1]].astype(np.int64)
        coords = shard["coords"][first:last]
        sentences = np.split(ids, bounds[1:-1] - bounds[0])
        chrom = self.chroms[shard_index][int(coords[0, 0])]
        document_id = shard["document_ids"].asstr()[local]
        return TokenizedDocument(document_id, chrom, sentences, coords[:, 1:])

    def bp_per_token(self) -> float:
        """Mean bp per token over every sentence of the shards (total sentence bp / total tokens)."""
        bases = tokens = 0
        for index in range(len(self.paths)):
            shard = self._file(index)
            coords = shard["coords"][:, 1:]
            bases, tokens = bases + int((coords[:, 1] - coords[:, 0]).sum()), tokens + len(shard["ids"])
        if not tokens:
            raise InputFormatError("shards hold no tokens", path=self.paths[0].parent)
        return bases / tokens

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_files": {}}

    def close(self) -> None:
        for shard in self._files.values():
            shard.close()
        self._files = {}

    def __exit__(self, *exc) -> None:
        self.close()
