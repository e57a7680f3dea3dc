"""The pretraining corpus: chromosomes cut into sentences, grouped into documents (BigBird App. F.1).

Per pass, each chromosome's forward strand is cut at random points into sentences of
500–1000 bp, starting at a random 0–5000 bp offset; consecutive sentences are grouped into
documents of 50–100 sentences. Passes repeat with new cut points. Sentences whose N
fraction exceeds `max_n_fraction` are skipped and counted: **a skipped sentence ends the
current document**, and the next kept sentence starts a new one; the chromosome end also
ends a document (and the last partial sentence, shorter than a full cut, is dropped). So a
document has 50–100 sentences unless a skip or the chromosome end cut it short.

Hold-out is by chromosome (default chr8, chr9 → split "heldout"; the rest → "train"), never
by random fraction, so the same DNA never lands in both splits.

Randomness: `numpy.random.default_rng` seeded by (seed, pass, chromosome name with the `chr`
prefix), one stream for cut points and one for document sizes, so any part can be recomputed
on its own and the cut points do not depend on `max_n_fraction`.

Output format (one directory):
- `{split}/part-{pass:02d}-{name}.tsv.gz`: one sentence per line (`name` is the contig's name made safe
  for file names, see `part_stem`),
  `doc_id<TAB>chrom<TAB>start<TAB>end<TAB>SEQUENCE` (0-based half-open, upper case A/C/G/T/N);
  a document's sentences are contiguous lines, in genome order; doc_id is `p{pass:02d}:{chrom}:{n:06d}`.
- `{split}/part-{pass:02d}-{name}.json`: that part's counts and the config that made it.
  Both are written atomically (temp + rename), the `.json` first: a part is complete when its
  `.tsv.gz` exists, so an interrupted run resumes by skipping complete parts.
- `report.json`: config, seed, documents/sentences/bp per split, skipped sentences by reason, versions.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import logging
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dnabird.errors import ConfigError, InputFormatError, ParameterError, reject
from dnabird.genome.reference import Genome, contig_alias
from dnabird.io import atomic_output, sha256_hex, write_json_atomic
from dnabird.progress import progress_bar
from dnabird.provenance import versions

log = logging.getLogger(__name__)

SPLITS = ("train", "heldout")
PART_SUFFIX = ".tsv.gz"
_FILE_SAFE = re.compile(r"[A-Za-z0-9._-]{1,100}")
_FILE_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._-]")
_FETCH_SENTENCES = 256  # sentences read from the FASTA in one fetch
_SEQUENCE_CHARS = frozenset("ACGTN")


@dataclass(frozen=True)
class CorpusConfig:
    """How the corpus is cut.

    passes: number of passes over the genome, each with new cut points (GENA-LM uses 10).
    seed: base seed; each (pass, chromosome) derives its own generators from it.
    min_sentence_bp, max_sentence_bp: sentence lengths are uniform in this inclusive range.
    min_document_sentences, max_document_sentences: document sizes, uniform in this inclusive range.
    max_offset_bp: each pass starts cutting at a uniform offset in [0, max_offset_bp].
    max_n_fraction: sentences with a larger fraction of N are skipped (and end their document).
    contigs: contigs to cut (aliases accepted); None = those of chr1–22, X, Y present in the FASTA.
    held_out: contigs whose sentences go to split "heldout" (DeepSEA's test chromosomes by default).
    """

    passes: int = 10
    seed: int = 0
    min_sentence_bp: int = 500
    max_sentence_bp: int = 1000
    min_document_sentences: int = 50
    max_document_sentences: int = 100
    max_offset_bp: int = 5000
    max_n_fraction: float = 0.1
    contigs: tuple[str, ...] | None = None
    held_out: tuple[str, ...] = ("chr8", "chr9")

    def __post_init__(self):
        for name in ("passes", "min_sentence_bp", "min_document_sentences"):
            reject(int(getattr(self, name)) < 1, name, getattr(self, name), "an integer >= 1")
        for bounded in ("sentence_bp", "document_sentences"):
            low, high = getattr(self, f"min_{bounded}"), getattr(self, f"max_{bounded}")
            reject(high < low, f"max_{bounded}", high, f">= min_{bounded} ({low})")
        if self.seed < 0 or self.max_offset_bp < 0:
            raise ParameterError("seed/max_offset_bp", (self.seed, self.max_offset_bp), "integers >= 0")
        reject(not 0.0 <= self.max_n_fraction <= 1.0, "max_n_fraction", self.max_n_fraction, "a fraction in [0, 1]")
        if self.contigs is not None:
            if isinstance(self.contigs, str) or not self.contigs:
                raise ParameterError("contigs", self.contigs, "a non-empty list of contig names, or None")
            object.__setattr__(self, "contigs", tuple(self.contigs))
        reject(isinstance(self.held_out, str), "held_out", self.held_out, "a list of contig names")
        object.__setattr__(self, "held_out", tuple(self.held_out))

    def to_dict(self) -> dict:
        return {key: list(value) if isinstance(value, tuple) else value
                for key, value in dataclasses.asdict(self).items()}


@dataclass
class Sentence:
    start: int
    end: int
    sequence: str


@dataclass
class Document:
    id: str
    chrom: str
    sentences: list[Sentence]


def build_corpus(fasta: str | Path, out_dir: str | Path, config: CorpusConfig | None = None, *,
                 progress: bool = True) -> dict:
    """Cut the genome in `fasta` into the corpus under `out_dir`; return (and write) the report.

    Complete parts already in `out_dir` are kept when they were made with the same config and
    contig length; a part made with another config raises `ConfigError`.
    """
    config = config or CorpusConfig()
    out_dir = Path(out_dir)
    totals = {split: {"documents": 0, "sentences": 0, "bp": 0, "contigs": []} for split in SPLITS}
    skipped = {"too_many_n": {"sentences": 0, "bp": 0}}
    with Genome(fasta, soft_mask="upper") as genome:
        contigs = _select_contigs(genome, config)
        held_out = {genome.resolve(name) for name in config.held_out if name in genome}
        for name in config.held_out:
            if name not in genome or genome.resolve(name) not in contigs:
                log.warning("held-out contig %s is not in the corpus of %s", name, fasta)
        for split in SPLITS:
            (out_dir / split).mkdir(parents=True, exist_ok=True)
        _check_existing_parts(out_dir, config)
        total_bp = config.passes * sum(genome.length(name) for name in contigs)
        with progress_bar(total=total_bp, unit="bp", unit_scale=True, desc="corpus", enabled=progress) as bar:
            for pass_index in range(config.passes):
                for chrom in contigs:
                    split = "heldout" if chrom in held_out else "train"
                    stats = _part(genome, chrom, pass_index, config, out_dir / split)
                    for key in ("documents", "sentences", "bp"):
                        totals[split][key] += stats[key]
                    if chrom not in totals[split]["contigs"]:
                        totals[split]["contigs"].append(chrom)
                    skipped["too_many_n"]["sentences"] += stats["skipped_too_many_n"]
                    skipped["too_many_n"]["bp"] += stats["skipped_too_many_n_bp"]
                    bar.update(genome.length(chrom))
    report = {"fasta": str(fasta), "seed": config.seed, "config": config.to_dict(), "splits": totals,
              "skipped": skipped, "versions": versions()}
    write_json_atomic(out_dir / "report.json", report)
    return report


def cut_points(length: int, chrom: str, pass_index: int,
               config: CorpusConfig) -> tuple[np.ndarray, np.ndarray]:
    """Sentence (starts, ends) tiling one pass over a contig of `length` bp, without overlap."""
    cut_rng, _ = _generators(chrom, pass_index, config.seed)
    offset = int(cut_rng.integers(0, config.max_offset_bp + 1))
    count = max(length - offset, 0) // config.min_sentence_bp + 1
    lengths = cut_rng.integers(config.min_sentence_bp, config.max_sentence_bp + 1, size=count)
    ends = offset + np.cumsum(lengths)
    ends = ends[ends <= length]
    starts = np.concatenate([[offset], ends[:-1]]).astype(np.int64)[: len(ends)]
    return starts, ends


def part_stem(pass_index: int, chrom: str) -> str:
    """`part-PP-NAME`: NAME is `chrom` when it is up to 100 letters, digits, '.', '_' or '-'; otherwise the
    other characters become '_', it is cut to 100 and 8 hex digits of the name's sha256 follow, so distinct
    contigs get distinct files (`gi|9626243|ref|NC_001416.1|` -> `gi_9626243_ref_NC_001416.1_-e14b3e45`)."""
    if _FILE_SAFE.fullmatch(chrom):
        return f"part-{pass_index:02d}-{chrom}"
    return f"part-{pass_index:02d}-{_FILE_UNSAFE_CHARS.sub('_', chrom)[:100]}-{sha256_hex(chrom)[:8]}"


def corpus_parts(corpus_dir: str | Path, split: str) -> list[Path]:
    """The part files of one split, sorted by name."""
    reject(split not in SPLITS, "split", split, f"one of {SPLITS}")
    directory = Path(corpus_dir) / split
    if not directory.is_dir():
        raise InputFormatError(f"no {split!r} split in this corpus directory", path=corpus_dir)
    return sorted(directory.glob(f"part-*{PART_SUFFIX}"))


def iter_documents(corpus_dir: str | Path, split: str) -> Iterator[Document]:
    """Every document of a split, part by part, in file order."""
    for part in corpus_parts(corpus_dir, split):
        yield from iter_part_documents(part)


def iter_part_documents(path: str | Path) -> Iterator[Document]:
    """The documents of one part file; a line that does not parse raises `InputFormatError`."""
    path = Path(path)
    document: Document | None = None
    finished: set[str] = set()
    with gzip.open(path, "rt") as handle:
        for number, line in enumerate(handle, start=1):
            doc_id, chrom, sentence = _parse_line(line, path, number)
            if document is not None and doc_id == document.id:
                if sentence.start < document.sentences[-1].end:
                    raise InputFormatError("sentence starts before the previous one ends",
                                           path=path, line=number)
                document.sentences.append(sentence)
                continue
            if doc_id in finished:
                raise InputFormatError(f"document {doc_id!r} is not contiguous", path=path, line=number)
            if document is not None:
                finished.add(document.id)
                yield document
            document = Document(doc_id, chrom, [sentence])
    if document is not None:
        yield document


def _parse_line(line: str, path: Path, number: int) -> tuple[str, str, Sentence]:
    fields = line.rstrip("\n").split("\t")
    if len(fields) != 5:
        raise InputFormatError(f"expected 5 tab-separated fields, got {len(fields)}", path=path, line=number)
    doc_id, chrom, start, end, sequence = fields
    try:
        start, end = int(start), int(end)
    except ValueError:
        raise InputFormatError("start and end must be integers", path=path, line=number) from None
    if end - start != len(sequence) or not _SEQUENCE_CHARS.issuperset(sequence):
        raise InputFormatError(f"expected {end - start} bases of A/C/G/T/N, got {len(sequence)} characters",
                               path=path, line=number)
    return doc_id, chrom, Sentence(start, end, sequence)


def _select_contigs(genome: Genome, config: CorpusConfig) -> list[str]:
    if config.contigs is None:
        contigs = [name for name in genome.contigs if contig_alias(name) is not None]
        if not contigs:
            raise InputFormatError(f"no chr1–22, X, Y contigs; name the contigs to use (found: "
                                   f"{', '.join(genome.contigs[:20])})", path=genome.path)
    else:
        contigs = list(dict.fromkeys(genome.resolve(name) for name in config.contigs))
    stems: dict[str, str] = {}
    for name in contigs:
        other = stems.setdefault(part_stem(0, name).lower(), name)  # lower: case-insensitive file systems
        if other != name:
            raise InputFormatError(f"contigs {other!r} and {name!r} would share the part file "
                                   f"{part_stem(0, name)}{PART_SUFFIX}; leave one out", path=genome.path)
    return contigs


def _generators(chrom: str, pass_index: int, seed: int) -> list[np.random.Generator]:
    """(cut points, document sizes) generators for one (seed, pass, chromosome)."""
    name = chrom if chrom.startswith("chr") else contig_alias(chrom) or chrom
    sequence = np.random.SeedSequence([seed, pass_index, zlib.crc32(name.encode())])
    return [np.random.default_rng(child) for child in sequence.spawn(2)]


def _part(genome: Genome, chrom: str, pass_index: int, config: CorpusConfig, directory: Path) -> dict:
    """Counts of one (pass, chromosome) part: read back when complete, else cut and written now."""
    part = directory / (part_stem(pass_index, chrom) + PART_SUFFIX)
    stats_path = directory / (part_stem(pass_index, chrom) + ".json")
    if part.exists() and stats_path.exists():
        stats = json.loads(stats_path.read_text())
        if stats["contig_bp"] != genome.length(chrom):
            raise ConfigError(f"{part} was cut from a {stats['contig_bp']} bp {chrom} but {genome.path} has "
                              f"{genome.length(chrom)} bp: use a new output directory")
        return stats
    return _write_part(genome, chrom, pass_index, config, part, stats_path)


def _write_part(genome: Genome, chrom: str, pass_index: int, config: CorpusConfig,
                part: Path, stats_path: Path) -> dict:
    starts, ends = cut_points(genome.length(chrom), chrom, pass_index, config)
    _, size_rng = _generators(chrom, pass_index, config.seed)
    stats = {"config": config.to_dict(), "contig_bp": genome.length(chrom), "documents": 0, "sentences": 0,
             "bp": 0, "skipped_too_many_n": 0, "skipped_too_many_n_bp": 0}
    with atomic_output(part) as temporary:
        with open(temporary, "wb") as raw, io.TextIOWrapper(
                gzip.GzipFile(part.name, mode="wb", compresslevel=1, fileobj=raw, mtime=0)) as handle:
            # the header names the part, not the temporary file, and has no time: same bytes each run
            in_document = target = 0
            for first in range(0, len(starts), _FETCH_SENTENCES):
                last = min(first + _FETCH_SENTENCES, len(starts)) - 1
                chunk_start = int(starts[first])
                chunk = genome.fetch(chrom, chunk_start, int(ends[last])).sequence
                spans = zip(starts[first:last + 1].tolist(), ends[first:last + 1].tolist(), strict=True)
                for start, end in spans:
                    sequence = chunk[start - chunk_start:end - chunk_start]
                    if sequence.count("N") > config.max_n_fraction * len(sequence):
                        stats["skipped_too_many_n"] += 1
                        stats["skipped_too_many_n_bp"] += end - start
                        in_document = target = 0
                        continue
                    if in_document == target:
                        in_document = 0
                        target = int(size_rng.integers(config.min_document_sentences,
                                                       config.max_document_sentences + 1))
                        stats["documents"] += 1
                    doc_id = f"p{pass_index:02d}:{chrom}:{stats['documents'] - 1:06d}"
                    handle.write(f"{doc_id}\t{chrom}\t{start}\t{end}\t{sequence}\n")
                    in_document += 1
                    stats["sentences"] += 1
                    stats["bp"] += end - start
        write_json_atomic(stats_path, stats, indent=1)
    return stats


def _check_existing_parts(out_dir: Path, config: CorpusConfig) -> None:
    wanted = config.to_dict()
    for split in SPLITS:
        for stats_path in sorted((out_dir / split).glob("part-*.json")):
            made_with = json.loads(stats_path.read_text())["config"]
            if made_with != wanted:
                differing = sorted(key for key in wanted if made_with.get(key) != wanted[key])
                raise ConfigError(f"{out_dir} holds a corpus made with another config (differs in "
                                  f"{', '.join(differing)}; see {stats_path}): use a new output directory")


