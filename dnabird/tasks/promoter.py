"""The promoter task (BigBird App. F.2; docs/promoter.md): EPDnew TSSs lifted onto the genome's build,
windows in transcript orientation around each TSS, one negative per positive, a binary [CLS] head.

- Positives: windows off a chromosome end or with more than `max_n_fraction` N are dropped and counted;
  so is every TSS that does not lift cleanly (with its reason in `liftover_dropped.tsv`).
- Negatives: "deepromoter" (12 of the positive's 20 parts random, redrawn per epoch with `redraw_negatives`)
  or "genomic" (`dnabird.tasks.negatives`: anchor >= `min_tss_distance` bp from every TSS, GC within
  `gc_tolerance`, doubled up to `gc_tolerance_max` for a positive without one, so CpG-island promoters
  stay); `report.json` counts positives matched, widened and dropped by CpG class.
- Splits by chromosome or at random by groups of overlapping windows; a negative stays in its positive's
  split, genomic ones from that split's chromosomes (at random: away from other splits' windows).
- Encoding: `[CLS] window [SEP]` at one `eval_length` covering the longest window of either class (plus a
  block when negatives are redrawn). Baselines: k-mer counts and token count, each a logistic regression.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dnabird.errors import DnabirdError, ParameterError, reject, require_paths
from dnabird.finetune.baselines import Baseline, kmer_counts
from dnabird.finetune.config import FinetuneConfig
from dnabird.finetune.data import EpochExamples, TaskData
from dnabird.finetune.task import Task
from dnabird.genome.bed import Tss, read_tss
from dnabird.genome.reference import Genome
from dnabird.io import write_text_atomic
from dnabird.model.task_spec import TaskSpec, parse_anchor
from dnabird.tasks.negatives import CPG_CLASSES, GenomicNegatives, cpg_class, deepromoter_negative, gc_fraction
from dnabird.tasks.splits import SPLITS, chromosome_split, overlap_groups, random_split, window_bases
from dnabird.tasks.tss import lift_sites, write_dropped, write_lifted

log = logging.getLogger(__name__)

NEGATIVE_KINDS = ("deepromoter", "genomic")
SPLIT_MODES = ("chromosome", "random")
DEEPROMOTER_TAG, GENOMIC_TAG = 1, 2   # keep the random streams of the two negative kinds apart


@dataclass
class PromoterData:
    """How the promoter data set is built (the `data:` section of a promoter config).

    genome, promoters, chain: the genome FASTA, the EPDnew BED8 and the UCSC chain from the promoters'
        build to the genome's; inside `dnabird run`, null means the `fetch` stage's files.
    anchor: window around each TSS ("tss:-U:+D": U bp upstream, D downstream, TSS at index U).
    chromosomes: use only promoters on these chromosomes (null: all, each of which must be in the genome).
    max_n_fraction: windows with a larger share of N are dropped.
    min_lifted_fraction: fewer TSSs lifting cleanly than this share is an error (a wrong chain).
    negatives: "deepromoter" or "genomic" (module docstring); redraw_negatives: a fresh DeePromoter
        negative every epoch (training only); deepromoter_parts, deepromoter_keep: 20 and 8 in the paper.
    gc_tolerance: a genomic negative's GC is within this of its positive's (absolute fraction);
    gc_tolerance_max: for a positive with none that close, the tolerance doubles up to this (equal to
        gc_tolerance: such positives are dropped).
    min_tss_distance: a genomic negative's anchor is at least this far (bp) from every lifted TSS.
    lattice_step: genomic negative windows start on this lattice (bp; its gcd with the window length).
    split: "chromosome" or "random"; test_chromosomes, validation_chromosomes: the chromosome split;
        split_fractions: train, validation, test shares of the random split (by groups of overlapping windows).
    eval_length: tokens per input; null: the smallest block multiple that fits every window.
    kmer: k of the k-mer baseline (<= 6 keeps it at 4,096 features).
    """

    genome: str | None = None
    promoters: str | None = None
    chain: str | None = None
    anchor: str = "tss:-5000:+3000"
    chromosomes: list[str] | None = None
    max_n_fraction: float = 0.1
    min_lifted_fraction: float = 0.5
    negatives: str = "deepromoter"
    redraw_negatives: bool = False
    deepromoter_parts: int = 20
    deepromoter_keep: int = 8
    gc_tolerance: float = 0.02
    gc_tolerance_max: float = 0.2
    min_tss_distance: int = 2000
    lattice_step: int = 100
    split: str = "chromosome"
    test_chromosomes: list[str] = field(default_factory=lambda: ["chr8", "chr9"])
    validation_chromosomes: list[str] = field(default_factory=lambda: ["chr7"])
    split_fractions: list[float] = field(default_factory=lambda: [0.8, 0.1, 0.1])
    eval_length: int | None = None
    kmer: int = 6

    def __post_init__(self):
        reject(parse_anchor(self.anchor).kind != "tss", "data.anchor", self.anchor, "a TSS anchor 'tss:-U:+D'")
        reject(self.negatives not in NEGATIVE_KINDS, "data.negatives", self.negatives, f"one of {NEGATIVE_KINDS}")
        reject(self.split not in SPLIT_MODES, "data.split", self.split, f"one of {SPLIT_MODES}")
        reject(not 0 <= self.max_n_fraction < 1 or not 0 < self.gc_tolerance < 1,
               "(data.max_n_fraction, data.gc_tolerance)", (self.max_n_fraction, self.gc_tolerance),
               "fractions in [0, 1) and (0, 1)")
        reject(not self.gc_tolerance <= self.gc_tolerance_max <= 1, "data.gc_tolerance_max", self.gc_tolerance_max,
               f"a fraction in [gc_tolerance={self.gc_tolerance}, 1]")
        reject(not 1 <= self.kmer <= 8, "data.kmer", self.kmer, "an integer in [1, 8]")


@dataclass
class PromoterConfig(FinetuneConfig):
    """A promoter fine-tuning run: the recipe's settings (`FinetuneConfig`) and how its data is built."""

    data: PromoterData = field(default_factory=PromoterData)


@dataclass(frozen=True)
class Redraw:
    """What drawing a fresh DeePromoter negative needs: the positives' bases ([P, W] uint8) and how to encode."""

    positives: np.ndarray
    tokenizer: object
    block_size: int
    parts: int = 20
    keep: int = 8


class PromoterExamples(EpochExamples):
    """One split's examples: slot 2i is positive i, slot 2i + 1 its negative (`negative_ids`: genomic, or
    DeePromoter at epoch 0; with `redraw` a later epoch's is drawn from (seed, epoch, i) and tokenised)."""

    def __init__(self, positive_ids: np.ndarray, negative_ids: np.ndarray, *, seed: int, shuffle: bool,
                 redraw: Redraw | None = None):
        labels = np.tile(np.array([1, 0], dtype=np.int64), len(positive_ids))
        super().__init__(labels, seed=seed, shuffle=shuffle)
        self.positive_ids, self.negative_ids, self.redraw = positive_ids, negative_ids, redraw

    def example(self, index: int, epoch: int) -> dict[str, np.ndarray]:
        i, negative = divmod(index, 2)
        if not negative:
            ids = self.positive_ids[i]
        elif self.redraw is None or epoch == 0:
            ids = self.negative_ids[i]
        else:
            draw = self.redraw
            sequence = deepromoter_negative(draw.positives[i], _rng(self.seed, epoch, i, DEEPROMOTER_TAG),
                                            parts=draw.parts, keep=draw.keep)
            ids = _encode([sequence], draw.tokenizer, draw.block_size, self.positive_ids.shape[1],
                          f"DeePromoter negative of positive {i}, epoch {epoch}")[0]
        return {"input_ids": ids.astype(np.int64), "labels": self.labels[index]}


@dataclass
class _Split:
    """The windows of one split: positives, their negatives and the pairs' overlap groups."""

    positives: list[tuple[Tss, int, int, float]] = field(default_factory=list)  # site, start, end, GC
    positive_seqs: list[np.ndarray] = field(default_factory=list)
    negatives: list[tuple[Tss, int, int, float] | None] = field(default_factory=list)
    negative_seqs: list[np.ndarray] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)


def _rng(seed: int, epoch: int, index: int, tag: int) -> np.random.Generator:
    return np.random.default_rng((seed, epoch, index, tag))


def _as_array(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("ascii"), dtype=np.uint8)


def _encode(sequences: list[np.ndarray], tokenizer, block_size: int, length: int | None, what: str) -> np.ndarray:
    """`[CLS] window [SEP]` token ids padded to `length` (None: the longest, rounded up to a block)."""
    texts = [s.tobytes().decode("ascii") for s in sequences]
    try:
        ids, _ = tokenizer.encode_batch(texts, block_size=block_size, length=length)
    except ParameterError as err:
        raise DnabirdError(f"{what}: does not fit data.eval_length={length} tokens ({err}); raise it or set null") \
            from None
    return ids.astype(np.int32)


def positive_windows(config: PromoterData, sites: list[Tss], genome: Genome, counts: Counter):
    """(site on the genome's contig name, start, end, GC, sequence) of every usable positive window;
    `counts` gains the dropped ones by reason."""
    anchor = parse_anchor(config.anchor)
    allowed = None if config.chromosomes is None else {genome.resolve(c) for c in config.chromosomes}
    absent = Counter(s.chrom for s in sites if s.chrom not in genome)
    if absent and allowed is None:
        listed = ", ".join(f"{chrom} ({n})" for chrom, n in absent.most_common(10))
        raise DnabirdError(f"{genome.path}: lifted promoters lie on chromosomes absent from the genome: {listed}; "
                           "use a genome with them, or list the chromosomes to use in data.chromosomes")
    for site in sites:
        if site.chrom not in genome or (allowed is not None and genome.resolve(site.chrom) not in allowed):
            counts["outside_chromosomes"] += 1
            continue
        chrom = genome.resolve(site.chrom)
        start, end = anchor.interval(site.position, site.strand)
        sequence = window_bases(genome, chrom, start, end, site.strand, config.max_n_fraction, counts)
        if sequence is not None:
            yield Tss(chrom, site.position, site.strand, site.name), start, end, gc_fraction(sequence), sequence


def _assign_splits(config: PromoterData, windows: list, genome: Genome, seed: int) -> tuple[np.ndarray, np.ndarray]:
    chroms = [w[0].chrom for w in windows]
    groups = overlap_groups(chroms, [w[1] for w in windows], [w[2] for w in windows])
    if config.split == "random":
        return random_split(groups, fractions=config.split_fractions, seed=seed), groups
    return chromosome_split(chroms, test=[genome.resolve(c) for c in config.test_chromosomes],
                            validation=[genome.resolve(c) for c in config.validation_chromosomes]), groups


def _genomic_negatives(config: PromoterData, splits: dict[str, _Split], genome: Genome, targets: list[Tss],
                       seed: int, counts: Counter) -> dict[str, dict[str, int]]:
    """Draw one GC-matched genomic negative per positive, split by split, widening the tolerance up to
    `gc_tolerance_max` where needed; unmatched pairs are dropped. Returns the positives matched, widened
    and dropped by CpG class."""
    anchor = parse_anchor(config.anchor)
    sites = defaultdict(list)
    for target in targets:
        if target.chrom in genome:
            sites[genome.resolve(target.chrom)].append(target.position)
    drawn: dict[str, list[tuple[int, int]]] = defaultdict(list)   # every accepted window, by chromosome
    by_class = {name: {"positives": 0, "matched": 0, "widened": 0, "dropped": 0} for name in CPG_CLASSES}

    def read(chrom: str) -> np.ndarray:
        return _as_array(genome.fetch(chrom, 0, genome.length(chrom)).sequence)

    for name in SPLITS:
        split = splits[name]
        chroms = sorted({site.chrom for site, *_ in split.positives})
        blocked = None
        if config.split == "random":   # stay off every window of the other splits
            chroms = sorted({site.chrom for s in splits.values() for site, *_ in s.positives})
            blocked = defaultdict(list)
            for other in SPLITS:
                if other != name:
                    for site, start, end, _ in splits[other].positives:
                        blocked[site.chrom].append((start, end))
            for chrom, intervals in drawn.items():   # the negatives of the splits drawn before
                blocked[chrom] += intervals
        pool = GenomicNegatives(chroms, read, sites, anchor, min_site_distance=config.min_tss_distance,
                                max_n_fraction=config.max_n_fraction, step=config.lattice_step, blocked=blocked)
        kept = _Split()
        for i, ((site, start, end, gc), sequence, group) in enumerate(zip(split.positives, split.positive_seqs,
                                                                          split.groups, strict=True)):
            cpg = by_class[cpg_class(sequence, anchor.upstream)]
            cpg["positives"] += 1
            rng, tolerance = _rng(seed, 0, i, GENOMIC_TAG), config.gc_tolerance
            while (match := pool.draw(gc, tolerance, rng)) is None and tolerance < config.gc_tolerance_max:
                tolerance = min(2 * tolerance, config.gc_tolerance_max)
            if match is None:
                counts["no_gc_matched_negative"] += 1
                cpg["dropped"] += 1
                continue
            cpg["matched" if tolerance == config.gc_tolerance else "widened"] += 1
            n_start, n_end = anchor.interval(match.position, match.strand)
            negative = _as_array(genome.fetch(match.chrom, n_start, n_end, match.strand).sequence)
            drawn[match.chrom].append((n_start, n_end))
            kept.positives.append((site, start, end, gc))
            kept.positive_seqs.append(sequence)
            kept.negatives.append((Tss(match.chrom, match.position, match.strand, f"negative_of_{site.name}"),
                                   n_start, n_end, match.gc))
            kept.negative_seqs.append(negative)
            kept.groups.append(group)
        splits[name] = kept
    return by_class


def _write_windows(splits: dict[str, _Split], path: Path) -> None:
    lines = ["split\tlabel\tname\tchrom\tposition\tstrand\tstart\tend\tgc\tgroup"]
    for name, split in splits.items():
        for positive, negative, group in zip(split.positives, split.negatives, split.groups, strict=True):
            for label, window in ((1, positive), (0, negative)):
                if window is None:      # DeePromoter negatives have no genomic coordinates
                    continue
                site, start, end, gc = window
                lines.append(f"{name}\t{label}\t{site.name}\t{site.chrom}\t{site.position}\t{site.strand}\t{start}"
                             f"\t{end}\t{gc:.4f}\t{group}")
    write_text_atomic(path, "\n".join(lines) + "\n")


def build(config: PromoterConfig, tokenizer, *, block_size: int, out_dir: str | Path) -> TaskData:
    """The promoter `TaskData`; writes `tss_lifted.bed`, `liftover_dropped.tsv` and `windows.tsv` into
    `out_dir`."""
    data, out_dir = config.data, Path(out_dir)
    require_paths(config, ("data.genome", "data.promoters", "data.chain"))
    out_dir.mkdir(parents=True, exist_ok=True)
    sites = read_tss(data.promoters, require_thick=True)
    lifted = lift_sites(sites, data.chain, min_ok_fraction=data.min_lifted_fraction)
    write_lifted(lifted, out_dir / "tss_lifted.bed")
    write_dropped(lifted, out_dir / "liftover_dropped.tsv")
    genome = Genome(data.genome, soft_mask="upper")
    counts: Counter = Counter()
    windows = list(positive_windows(data, lifted.kept, genome, counts))
    if not windows:
        raise DnabirdError(f"{data.promoters}: no promoter window is left after filtering (of {len(sites)} TSSs: "
                           f"liftover {lifted.counts}, windows dropped {dict(counts)})")
    assigned, groups = _assign_splits(data, windows, genome, config.seed)
    splits = {name: _Split() for name in SPLITS}
    for (site, start, end, gc, sequence), name, group in zip(windows, assigned, groups, strict=True):
        splits[name].positives.append((site, start, end, gc))
        splits[name].positive_seqs.append(sequence)
        splits[name].groups.append(int(group))
    if data.negatives == "genomic":
        by_cpg_class = _genomic_negatives(data, splits, genome, lifted.targets, config.seed, counts)
    else:
        for split in splits.values():
            for i, sequence in enumerate(split.positive_seqs):
                rng = _rng(config.seed, 0, i, DEEPROMOTER_TAG)
                split.negatives.append(None)
                split.negative_seqs.append(deepromoter_negative(sequence, rng, parts=data.deepromoter_parts,
                                                                keep=data.deepromoter_keep))
    empty = [name for name in SPLITS if not splits[name].positives]
    if empty:
        raise DnabirdError(f"{data.promoters}: the {', '.join(empty)} split(s) hold no promoter window "
                           f"(splits by {data.split}; windows dropped {dict(counts)})")
    _write_windows(splits, out_dir / "windows.tsv")

    def interleaved(split: _Split) -> list[np.ndarray]:
        return [s for pair in zip(split.positive_seqs, split.negative_seqs, strict=True) for s in pair]

    encoded = {name: _encode(interleaved(split), tokenizer, block_size, None, f"{name} promoter windows")
               for name, split in splits.items()}
    longest = max(ids.shape[1] for ids in encoded.values())
    redraw = data.negatives == "deepromoter" and data.redraw_negatives
    eval_length = data.eval_length or longest + (block_size if redraw else 0)
    reject(eval_length < longest or eval_length % block_size != 0, "data.eval_length", eval_length,
           f"a multiple of the block size {block_size} that is >= {longest}, the longest window in tokens (or null)")
    datasets, sequences = {}, {}
    for name, split in splits.items():
        ids = np.pad(encoded[name], ((0, 0), (0, eval_length - encoded[name].shape[1])),
                     constant_values=tokenizer.pad_id)
        fresh = Redraw(np.stack(split.positive_seqs), tokenizer, block_size, data.deepromoter_parts,
                       data.deepromoter_keep) if redraw and name == "train" else None
        datasets[name] = PromoterExamples(ids[0::2], ids[1::2], seed=config.seed, shuffle=name == "train",
                                          redraw=fresh)
        sequences[name] = np.stack(interleaved(split))
    spec = TaskSpec(task="promoter", problem="binary", labels=["promoter"], eval_length=int(eval_length),
                    window_length=parse_anchor(data.anchor).length, anchor=data.anchor, strand_rule="feature",
                    tokenizer_hash=tokenizer.hash)
    summary = {
        "tss": len(sites), "liftover": lifted.counts, "windows_dropped": dict(counts),
        "examples": {name: {"positives": len(s.positives), "negatives": len(s.negative_seqs)}
                     for name, s in splits.items()},
        "negatives": data.negatives, "gc": {name: _gc_summary(s) for name, s in splits.items()},
        "eval_length": int(eval_length), "anchor": data.anchor, "split": data.split,
    }
    if data.negatives == "genomic":
        summary.update(gc_tolerance=data.gc_tolerance, gc_tolerance_max=data.gc_tolerance_max,
                       min_tss_distance=data.min_tss_distance, negatives_by_cpg_class=by_cpg_class)
    test_groups = np.repeat(np.asarray(splits["test"].groups), 2)
    features = {f"{data.kmer}-mer": Baseline(kmer_counts(sequences["train"], data.kmer),
                                             kmer_counts(sequences["test"], data.kmer))}
    return TaskData(spec, datasets["train"], datasets["validation"], datasets["test"], test_groups=test_groups,
                    baseline_features=features, summary=summary)


def _gc_summary(split: _Split) -> dict:
    """Mean GC of the split's positive and of its negative windows (None when there are none)."""
    return {f"{kind}_mean": round(float(np.mean([gc_fraction(s) for s in sequences])), 4) if sequences else None
            for kind, sequences in (("positive", split.positive_seqs), ("negative", split.negative_seqs))}


class Promoter(Task):
    """The promoter task (module docstring); its stage's null paths come from the `fetch` stage's files and it
    exposes the lifted TSSs (for scoring variants in TSS windows)."""

    name, config = "promoter", PromoterConfig
    stage_inputs = {"data.genome": ("fetch", "fasta"), "data.promoters": ("fetch", "promoters_bed"),
                    "data.chain": ("fetch", "chain"), "pretrained": ("pretrain", "model"),
                    "tokenizer": ("tokenizer", "model")}
    outputs = {"tss": "tss_lifted.bed"}
    build = staticmethod(build)


TASK = Promoter()
