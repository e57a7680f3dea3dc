"""`score_variants`: a model, a genome and variants in; per-variant effects out (`VariantScores`).

Windows, REF checks, N-run clipping, skip reasons and outputs are described in docs/variant-scoring.md.
Methods (`dnabird.variants.scorer.SCORERS`): "head" (a fine-tuned head; its `task.json` fixes window, anchor,
strand rule and padded token length; `tss:-U:+D` windows are scored on each containing TSS's strand, never
RC-averaged), "mlm_llr" (a pretrained masked LM, zero-shot, `dnabird.variants.mlm`), "embed_dist" (the
distance between the REF and ALT windows' embeddings, either model), or "auto" (the first the model supports:
"head" when it has a task, else "mlm_llr"). A pretrained model's windows are odd, centred on the variant and
sized from the checkpoint's bp per token (`dnabird.model.bp_per_token`, never the genome) with
`TOKEN_HEADROOM`; each row is padded to its own block multiple, so a window's score never depends on
eval_length (the cap on its tokens) or the batch. A head's windows and padded length are its task's. mlm_llr's
nearby variants share passes (`dnabird.variants.marginals`; groups from the input's positions alone) unless
`variants_per_pass=1`, the exact method, whose scores never depend on the other variants. Under torchrun
each rank scores the records whose index is its rank modulo the world size, and every rank returns the
merged scores in input order.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import os
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from dnabird.errors import CheckpointError, InputFormatError, ParameterError, UnscorableVariantError, reject
from dnabird.genome.bed import Tss, read_tss
from dnabird.genome.reference import Genome
from dnabird.inference.predictor import Predictor
from dnabird.model.bp_per_token import checkpoint_bp_per_token
from dnabird.model.task_spec import Anchor, parse_anchor
from dnabird.progress import progress_bar
from dnabird.train import distributed
from dnabird.variants import marginals
from dnabird.variants.records import Allele, Variant, read_alleles
from dnabird.variants.scorer import SCORERS, TOO_LONG, Pending, Rows, ScoredWindow, Scorer, Setup
from dnabird.variants.scores import REF_MISMATCH, SKIPPED_COLUMNS, UNIT_COLUMNS, VariantScores
from dnabird.variants.windows import anchored_windows, centred_windows, n_run_clips

METHODS = ("auto", *SCORERS)
RC_MODES = ("average", "forward")
REF_MISMATCH_MODES = ("skip", "genome")
CHUNK_BATCHES = 8  # model batches of work gathered before running them
TOKEN_HEADROOM = 1.25  # default mlm_llr sizes allow this many times the tokens of the bp-per-token figure
INVALID_BASE = "invalid base in window"

log = logging.getLogger(__name__)


def resolve_setup(predictor: Predictor, *, method: str = "auto", rc: str | None = None, tss=None,
                  window_bp: int | None = None, eval_length: int | None = None, flank_bp: int = 0,
                  on_ref_mismatch: str = "skip", bp_per_token: float | None = None,
                  checkpoint: str | os.PathLike | None = None, variants_per_pass: int | None = 1,
                  pass_spacing_bp: int | None = None) -> Setup:
    """Check the arguments against the model and fill what they leave open from its task or size (for
    mlm_llr, from `bp_per_token` if given, else the figure stored in the `checkpoint` directory, else the
    tokenizer's reference figure: `dnabird.model.bp_per_token.checkpoint_bp_per_token`; variants_per_pass
    None: `marginals.VARIANTS_PER_PASS`)."""
    reject(method not in METHODS, "method", method, f"one of {METHODS}")
    reject(rc not in (None, *RC_MODES), "rc", rc, f"None (the model's strand rule) or one of {RC_MODES}")
    reject(on_ref_mismatch not in REF_MISMATCH_MODES, "on_ref_mismatch", on_ref_mismatch,
           f"one of {REF_MISMATCH_MODES}")
    reject(not isinstance(flank_bp, int) or flank_bp < 0, "flank_bp", flank_bp, "an integer >= 0")
    task = predictor.task
    supported = [name for name, scorer in SCORERS.items() if scorer.supports(task)]
    method = supported[0] if method == "auto" else method
    reject(method not in supported, "method", method, f"a method this model supports: {supported}")
    scorer = SCORERS[method]
    if task is not None:  # a head's encoder: its task fixes the window and the padded length
        reject(task.window_length is None or (scorer.needs_head and task.anchor is None), "model",
               predictor.source, "a model whose task.json gives a genomic window (or a pretrained model)")
        for name, given, fixed in (("window_bp", window_bp, task.window_length),
                                   ("eval_length", eval_length, task.eval_length)):
            reject(given not in (None, fixed), name, given, f"None: the model's task.json fixes it at {fixed}")
        reject(bp_per_token is not None, "bp_per_token", bp_per_token, "None: the model's task.json fixes its window")
        anchor = parse_anchor(task.anchor) if scorer.needs_head else Anchor("centre")
        window_bp, eval_length, figure = task.window_length, task.eval_length, None
        reject(anchor.kind == "tss" and tss is None, "tss", tss, f"a TSS BED: the model's anchor is {task.anchor!r}")
        if scorer.needs_head and (anchor.kind == "tss" or task.strand_rule == "feature") and rc == "average":
            raise ParameterError("rc", rc, f"'forward' or None: this head is strand-specific (anchor {task.anchor}, "
                                 f"strand rule {task.strand_rule})")
        average = anchor.kind == "centre" and (rc or ("average" if task.strand_rule == "both" else "forward")) \
            == "average"
    else:
        anchor, average = Anchor("centre"), (rc or "average") == "average"
        figure = checkpoint_bp_per_token(predictor.tokenizer, checkpoint, bp_per_token)
        bp_per_token = figure.value
        if eval_length is None:  # the tokens a window needs, with headroom, up to the model's length
            block, longest = predictor.block_size, predictor.longest_length
            needed = math.ceil(window_bp / bp_per_token * TOKEN_HEADROOM) + 2 if window_bp is not None else longest
            eval_length = min(longest, -(-needed // block) * block)
        if window_bp is None:  # the odd window that fills eval_length
            window_bp = max(1, int((eval_length - 2) * bp_per_token / TOKEN_HEADROOM) - 1) | 1
    if scorer.shares_passes:
        variants_per_pass = marginals.VARIANTS_PER_PASS if variants_per_pass is None else variants_per_pass
        pass_spacing_bp = marginals.SPACING_BP if pass_spacing_bp is None else pass_spacing_bp
        reject(not isinstance(variants_per_pass, int) or variants_per_pass < 1, "variants_per_pass",
               variants_per_pass, "a positive integer (1: the exact method, one variant per pass)")
        reject(not isinstance(pass_spacing_bp, int) or pass_spacing_bp < 0, "pass_spacing_bp", pass_spacing_bp,
               "an integer >= 0")
    else:
        reject(variants_per_pass not in (None, 1), "variants_per_pass", variants_per_pass,
               f"1 or None: {method} scores every variant in a window of its own")
        variants_per_pass, pass_spacing_bp = 1, 0
    reject(anchor.kind == "centre" and tss is not None, "tss", tss, "None: windows are centred on the variants")
    reject(not isinstance(window_bp, int) or window_bp < 1, "window_bp", window_bp, "a positive number of bp")
    return Setup(method, window_bp, predictor.check_length(eval_length), anchor, average, flank_bp,
                 on_ref_mismatch, *((figure.value, figure.source) if figure is not None else (None, None)),
                 variants_per_pass=variants_per_pass, pass_spacing_bp=pass_spacing_bp)


class TssWindows:
    """The TSS windows of an anchor, per chromosome, found by position."""

    def __init__(self, sites: list[Tss], anchor: Anchor, genome: Genome):
        self.by_chrom: dict[str, list[tuple[int, int, Tss]]] = {}
        missing = sorted({site.chrom for site in sites if site.chrom not in genome})
        if missing:
            log.warning("%d TSS chromosome(s) not in the genome, their TSSs ignored: %s", len(missing),
                        ", ".join(missing[:10]))
        for site in sites:
            if site.chrom in genome:
                start, end = anchor.interval(site.position, site.strand)
                self.by_chrom.setdefault(genome.resolve(site.chrom), []).append((start, end, site))
        for windows in self.by_chrom.values():
            windows.sort(key=lambda w: w[0])
        self.starts = {chrom: [w[0] for w in windows] for chrom, windows in self.by_chrom.items()}
        self.length = anchor.length

    def containing(self, chrom: str, first: int, stop: int) -> list[tuple[int, int, Tss]]:
        """Windows [start, end) with start <= first and stop <= end, by start."""
        starts = self.starts.get(chrom, [])
        low, high = bisect_left(starts, stop - self.length), bisect_right(starts, first)
        return [w for w in self.by_chrom[chrom][low:high] if w[0] <= first and stop <= w[1]] if starts else []


def allele_windows(allele: Allele, genome: Genome, setup: Setup, tss: TssWindows | None) -> list[ScoredWindow]:
    """The windows to score an allele in; `UnscorableVariantError` says why there are none."""
    variant = allele.variant
    if allele.problem is not None:
        raise allele.problem
    if variant.chrom not in genome:
        raise UnscorableVariantError("unknown chromosome", variant.chrom)
    chrom, first, stop = genome.resolve(variant.chrom), variant.start, variant.start + len(variant.ref)
    if first < 0 or stop > genome.length(chrom):
        raise UnscorableVariantError("outside the chromosome", f"{chrom} has {genome.length(chrom)} bp")
    variant = dataclasses.replace(variant, chrom=chrom)
    genome_ref = genome.fetch(chrom, first, stop).sequence.upper()
    ref_match = genome_ref == variant.ref.upper()
    if not ref_match and setup.on_ref_mismatch == "skip":
        raise UnscorableVariantError(REF_MISMATCH, f"the genome has {genome_ref}")
    if tss is None:
        return [ScoredWindow(allele, centred_windows(genome, variant, setup.window_bp), ".", ref_match)]
    found = tss.containing(chrom, first, stop)
    if not found:
        raise UnscorableVariantError("in no TSS window")
    return [ScoredWindow(allele, anchored_windows(genome, variant, start, end, site.position, site.strand),
                   site.name, ref_match) for start, end, site in found]


def scored_outputs(model: str | os.PathLike, method: str = "auto") -> list[str]:
    """The output names `method` scores with the checkpoint in `model` (read from its task.json alone), so
    options naming outputs are checked before any work."""
    from dnabird.model.checkpoint import read_task

    if not Path(model).is_dir():
        raise CheckpointError(f"{model}: checkpoint directory not found")
    task = read_task(model)
    supported = [name for name, scorer in SCORERS.items() if scorer.supports(task)]
    reject(method not in ("auto", *supported), "method", method, f"a method this model supports: {supported}")
    return list(SCORERS[supported[0] if method == "auto" else method].output_names(task))


def run_windows(scorer: Scorer, prepared: list[Rows], batch_size: int, names: list[str] | None = None,
                bar=None) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Scores of prepared windows (their `Rows`); each row gives one value per entry of its targets (one
    without targets); a row object that several windows list (a shared pass) is run once with all their
    targets. Rows
    are sorted (stably) by their padded length (`scorer.padded_length`) and run `batch_size` at a
    time, each model call at one padded length. `names` (one per window) name the inputs in errors; `bar`
    advances by the windows each model call completes."""
    index, ids, targets, counts, reads = {}, [], [], [], []  # reads: per window, (row, first value, values)
    for rows in prepared:
        reads.append([])
        for n, (row, count) in enumerate(zip(rows.ids, rows.values_per_row(), strict=True)):
            k = index.setdefault(id(row), len(ids))
            if k == len(ids):
                ids.append(row)
                targets.append(None if rows.targets is None else [])
                counts.append(0)
            reads[-1].append((k, counts[k], count))
            counts[k] += count
            if rows.targets is not None:
                targets[k] += rows.targets[n]
    users = [[] for _ in ids]  # the windows that list each row
    for n, r in enumerate(reads):
        for k, _, _ in r:
            users[k].append(n)
    owner = [u[0] for u in users]  # the first window of each row names it in errors
    lengths = [scorer.padded_length(row) for row in ids]
    order = sorted(range(len(ids)), key=lengths.__getitem__)
    batches = [rows[i:i + batch_size] for _, group in itertools.groupby(order, key=lengths.__getitem__)
               for rows in [list(group)] for i in range(0, len(rows), batch_size)]
    row_values, rows_left = [None] * len(ids), Counter(n for u in users for n in u)
    for batch in batches:
        wanted = [targets[r] for r in batch]
        values = scorer.run([ids[r] for r in batch], None if wanted[0] is None else wanted,
                            None if names is None else [names[owner[r]] for r in batch])
        at = 0
        for r in batch:
            row_values[r], at = values[at:at + counts[r]], at + counts[r]
            rows_left.subtract(users[r])
        if bar is not None:  # windows whose rows are all scored now
            bar.update(sum(rows_left[window] == 0 for window in {n for r in batch for n in users[r]}))
    return [scorer.combine(np.concatenate([row_values[k][first:first + count] for k, first, count in r]),
                           rows.extra) for r, rows in zip(reads, prepared, strict=True)]


# --- the entry point -------------------------------------------------------------------------------------

def score_variants(model, genome: str | os.PathLike | Genome, variants: str | os.PathLike | Iterable[Variant], *,
                   method: str = "auto", rc: str | None = None, tss: str | os.PathLike | None = None,
                   window_bp: int | None = None, eval_length: int | None = None, flank_bp: int = 0,
                   on_ref_mismatch: str = "skip", batch_size: int = 16, device: str = "auto",
                   progress: bool = True, tokenizer=None, task=None,
                   bp_per_token: float | None = None, variants_per_pass: int | None = None,
                   pass_spacing_bp: int | None = None, precision: str = "fp32") -> VariantScores:
    """Score every ALT allele of `variants` with `model` on `genome`.

    model: a checkpoint directory, or a loaded model with its `tokenizer` (and `task` for a classifier).
    genome: a FASTA path or a `Genome`. variants: a VCF path (plain or bgzip) or an iterable of `Variant`.
    method: "auto", "head", "mlm_llr" or "embed_dist" (see the module docstring). rc: "average" (forward and reverse
        complement), "forward", or None for the model's strand rule. tss: a TSS BED, for TSS-anchored heads.
    window_bp, eval_length: window in bp and the most tokens a window may have, for a model without task.json
        (defaults from the bp-per-token figure, with `TOKEN_HEADROOM`: eval_length the model's full length, or
        what a window_bp-long window needs; window_bp the odd length that fills eval_length).
    flank_bp: mlm_llr only, bp masked on each side of the variant beyond the tokens it touches.
    on_ref_mismatch: "skip" or "genome" (score with the genome's bases, flagged ref_match=False).
    batch_size: sequences per model call. device: "auto", "cpu", "cuda" …
    bp_per_token: mlm_llr, the tokenizer's bp per token that sizes default windows (default: the figure stored
        with the checkpoint, else the tokenizer's on a reference sequence; `dnabird.model.bp_per_token`).
    variants_per_pass, pass_spacing_bp: mlm_llr only, up to this many variants (default 16) of one grid cell
        whose alleles lie at least this many bp apart (default 100) are scored from one shared pass
        (`dnabird.variants.marginals`); variants_per_pass=1 is the exact method, one variant per pass.
    precision: "fp32" or "bf16" (bfloat16 autocast, where the CPU or GPU has it).
    """
    scoring = prepare_scoring(model, genome, method=method, rc=rc, tss=tss, window_bp=window_bp,
                              eval_length=eval_length, flank_bp=flank_bp, on_ref_mismatch=on_ref_mismatch,
                              bp_per_token=bp_per_token, batch_size=batch_size, device=device, tokenizer=tokenizer,
                              task=task, variants_per_pass=variants_per_pass, pass_spacing_bp=pass_spacing_bp,
                              precision=precision)
    merged = scoring.score_all(list(read_alleles(variants)), progress)
    distributed.teardown(scoring.ctx)
    return merged


@dataclasses.dataclass(frozen=True)
class ScoringSetup:
    """A loaded model, its genome, resolved settings and scorer, ready to score alleles: what `score_variants`
    runs, and what a chunked run (`dnabird.variants.resume`) scores each chunk and the background with."""

    scorer: Scorer
    setup: Setup
    genome: Genome
    sites: TssWindows | None
    batch_size: int
    ctx: distributed.Context
    settings: dict  # `VariantScores.settings` of every result

    def mine(self, alleles: Iterable[Allele]) -> Iterable[Allele]:
        """The alleles this rank scores under torchrun: those whose record is its rank modulo the world size."""
        return (a for a in alleles if a.record % self.ctx.world_size == self.ctx.rank)

    def pass_groups(self, alleles: Iterable[Allele]) -> marginals.Groups | None:
        """The shared-pass groups of an input's alleles (all of them, on every rank: a group may hold records
        of several ranks or chunks); None when every variant is scored alone."""
        s = self.setup
        if not self.scorer.shares_passes or s.variants_per_pass == 1:
            return None
        return marginals.Groups(alleles, self.genome, s.window_bp, s.variants_per_pass, s.pass_spacing_bp,
                               check_ref=s.on_ref_mismatch == "skip")

    def score(self, alleles: Iterable[Allele], bar=None, pass_groups: marginals.Groups | None = None) -> VariantScores:
        """Scores of `alleles` (with `settings`), those of a shared-pass group of `pass_groups` from its shared
        pass; `bar` advances as windows are scored."""
        scores = score_windows(self.scorer, self.setup, alleles,
                               lambda allele: allele_windows(allele, self.genome, self.setup, self.sites),
                               self.batch_size, bar, pass_groups)
        scores.settings = self.settings
        return scores

    def score_all(self, alleles: list[Allele], progress: bool = True, desc: str = "scoring variants") -> VariantScores:
        """Every allele of an input scored (each rank its records), merged in input order on every rank."""
        with progress_bar(enabled=progress and self.ctx.is_main, desc=desc, unit=" windows") as bar:
            return self.merged(self.score(self.mine(alleles), bar, self.pass_groups(alleles)))

    def merged(self, part: VariantScores) -> VariantScores:
        """Every rank's `part` merged in input order, on every rank (`part` itself in a single process)."""
        if not self.ctx.distributed:
            return part
        parts = [None] * self.ctx.world_size
        torch.distributed.all_gather_object(parts, part)
        return VariantScores.concat(parts)


def prepare_scoring(model, genome: str | os.PathLike | Genome, *, tss: str | os.PathLike | None = None,
                    batch_size: int = 16, device: str = "auto", tokenizer=None, task=None, precision: str = "fp32",
                    **settings) -> ScoringSetup:
    """Load `model` (joining torchrun's process group), open `genome` and resolve the settings
    (`resolve_setup`'s keyword arguments) as `score_variants` does."""
    reject(not isinstance(batch_size, int) or batch_size < 1, "batch_size", batch_size, "a positive integer")
    ctx = distributed.setup(device)
    predictor = Predictor.load(model, tokenizer=tokenizer, task=task, device=ctx.device, precision=precision)
    genome = genome if isinstance(genome, Genome) else Genome(genome)
    setup = resolve_setup(predictor, tss=tss, checkpoint=model if isinstance(model, (str, os.PathLike)) else None,
                          **settings)
    sites = TssWindows(read_tss(tss), setup.anchor, genome) if tss is not None else None
    return ScoringSetup(SCORERS[setup.method](predictor, setup), setup, genome, sites, batch_size, ctx,
                        recorded_settings(setup, predictor, model, precision=precision))


def recorded_settings(setup: Setup, predictor: Predictor, model, **extra) -> dict:
    """`VariantScores.settings`: the setup, `extra`, the tokenizer's hash and the model (its directory)."""
    return {**setup.describe(), **extra, "tokenizer_hash": predictor.tokenizer.hash,
            "model": str(model) if isinstance(model, (str, os.PathLike)) else type(model).__name__}


def score_windows(scorer: Scorer, setup: Setup, alleles: Iterable[Allele], windows_of, batch_size: int,
                  bar=None, pass_groups: marginals.Groups | None = None) -> VariantScores:
    """Score each allele in the windows `windows_of(allele)` gives (or record why it cannot be scored), the
    members of a shared-pass group of `pass_groups` from their group's pass; `bar` advances as the model scores
    windows."""
    units, scores, skipped, pending = [], [], [], []

    def flush():
        shared = scorer.share(pending, pass_groups)
        scores.extend(run_windows(scorer, [rows for _, rows in shared], batch_size,
                                  [_name(window) for window, _ in shared], bar))
        units.extend(_unit_row(window, setup, scorer.predictor.tokenizer) for window, _ in shared)
        pending.clear()

    for allele in alleles:
        try:
            windows = windows_of(allele)
        except UnscorableVariantError as err:
            skipped.append(_skip_row(allele, err))
            continue
        except InputFormatError as err:  # the genome has a character other than A/C/G/T/N in the window
            skipped.append(_skip_row(allele, UnscorableVariantError(INVALID_BASE, str(err))))
            continue
        for window in windows:
            try:
                pending.append(fit(scorer, window, setup.rc))
            except UnscorableVariantError as err:
                skipped.append(_skip_row(allele, err, window.feature))
        if sum(len(rows.ids) for _, rows in pending) >= CHUNK_BATCHES * batch_size * setup.variants_per_pass:
            flush()
    flush()
    k = len(scorer.outputs)
    stacked = [np.array([s[i] for s in scores], dtype=np.float64).reshape(len(scores), k) for i in range(3)]
    return VariantScores(pd.DataFrame(units, columns=list(UNIT_COLUMNS)), tuple(scorer.outputs),
                         tuple(scorer.groups), *stacked, pd.DataFrame(skipped, columns=list(SKIPPED_COLUMNS)))


def fit(scorer: Scorer, window: ScoredWindow, rc: bool) -> Pending:
    """The window and its model rows (both strands with `rc`); a window that tokenizes longer than
    eval_length is clipped at its N runs (contig-end padding, assembly gaps), outermost first, until it
    fits, and scored clipped (`clip_left`/`clip_right`); `UnscorableVariantError` when none fits, or when
    the tokenizer refuses a character of the window (`INVALID_BASE`)."""
    problem = None
    for windows in itertools.chain([window.sequences], n_run_clips(window.sequences)):
        try:
            rows = scorer.rows([windows, windows.reverse_complement()] if rc else [windows])
        except InputFormatError as err:  # the offset it names counts from the 5' end of the REF (or ALT) window
            raise UnscorableVariantError(INVALID_BASE, f"window {window.allele.variant.chrom}:{windows.start}-"
                                         f"{windows.end} ({windows.strand}): {err}") from None
        except UnscorableVariantError as err:
            if err.reason != TOO_LONG:
                raise
            problem = problem or err
            continue
        return dataclasses.replace(window, sequences=windows), rows
    raise problem


def _allele_columns(allele: Allele) -> tuple:
    """The columns a unit row and a skipped row share: record, allele, chrom, pos, id, ref, alt."""
    v = allele.variant
    return allele.record, allele.allele, v.chrom, v.pos, v.id, v.ref, v.alt


def _unit_row(window: ScoredWindow, setup: Setup, tokenizer) -> tuple:
    w = window.sequences
    return (*_allele_columns(window.allele), window.feature, "both" if setup.rc else w.strand, window.ref_match,
            w.start, w.end, w.pad_left, w.pad_right, w.clip_left, w.clip_right,
            max(tokenizer.unk_tokens(w.ref), tokenizer.unk_tokens(w.alt)))


def _name(window: ScoredWindow) -> str:
    """How errors name a window: chrom:pos REF>ALT, the variant's id and the TSS."""
    v = window.allele.variant
    return " ".join([f"{v.chrom}:{v.pos} {v.ref}>{v.alt}", *(x for x in (v.id, window.feature) if x != ".")])


def _skip_row(allele: Allele, err: UnscorableVariantError, feature: str = ".") -> tuple:
    return (*_allele_columns(allele), err.reason, err.detail if feature == "." else f"{feature}: {err.detail}")
