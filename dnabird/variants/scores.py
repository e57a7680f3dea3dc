"""`VariantScores`: what `score_variants` returns — per-window score arrays, their variants, and the
alleles that could not be scored — with the long table and the summary derived from them.

Scores per output: `ref`/`alt` (probabilities for a classifier head — RC-averaged when both strands were
scored — or log-likelihoods for `mlm_llr`), `diff` = alt − ref, `abs_diff`, `logit_diff`
(alt − ref in logits, i.e. the log odds ratio: the mean over strands of each strand's difference;
log-probabilities for a multi-class head; not defined for `mlm_llr`, whose scores are log-scale
already); `abs_logit_diff` is derived for summaries (`per_variant`), not stored. `calibrate` adds each
value's empirical quantile among a background's (`dnabird.variants.background`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dnabird.errors import reject

UNIT_COLUMNS = ("record", "allele", "chrom", "pos", "id", "ref", "alt", "feature", "strand", "ref_match",
                "window_start", "window_end", "pad_left", "pad_right", "clip_left", "clip_right", "unk_tokens")
SKIPPED_COLUMNS = ("record", "allele", "chrom", "pos", "id", "ref", "alt", "reason", "detail")
SCORE_KINDS = ("ref", "alt", "diff", "abs_diff", "logit_diff")
CALIBRATED_KINDS = ("diff", "abs_diff", "logit_diff", "abs_logit_diff")  # the kinds `calibrate` gives quantiles of
REF_MISMATCH = "REF mismatch"


@dataclass
class VariantScores:
    """Scores of n scored windows (one per allele, or per allele × TSS window) × k outputs.

    units: one row per scored window (`UNIT_COLUMNS`; `record` is the 0-based input record, `allele` the
        1-based ALT number, `feature` the TSS name or ".", `strand` "+", "-" or "both" (RC-averaged),
        `window_start`/`window_end` the scored REF window's genomic span, `pad_left`/`pad_right` whether it
        holds N padding past a contig end, `clip_left`/`clip_right` the bp clipped from its ends at N runs
        to fit the model's length, `unk_tokens` the unk tokens of the REF or ALT window, whichever reads more:
        bases the tokenizer has no piece for; docs/variant-scoring.md on reading flagged rows).
    outputs, groups: the k output names and their groups.
    ref, alt, logit_diff: float arrays [n, k].
    skipped: one row per allele that was not scored (`SKIPPED_COLUMNS`), with the reason.
    settings: how the scores were computed (method, window, eval length, strands …).
    quantiles: kind → [n, k] empirical quantiles among a background's values (`calibrate`), or empty.
    """

    units: pd.DataFrame
    outputs: tuple[str, ...]
    groups: tuple[str, ...]
    ref: np.ndarray
    alt: np.ndarray
    logit_diff: np.ndarray
    skipped: pd.DataFrame
    settings: dict = field(default_factory=dict)
    quantiles: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def diff(self) -> np.ndarray:
        return self.alt - self.ref

    @property
    def abs_diff(self) -> np.ndarray:
        return np.abs(self.diff)

    @property
    def abs_logit_diff(self) -> np.ndarray:
        return np.abs(self.logit_diff)

    def array(self, kind: str) -> np.ndarray:
        """The [n, k] array of one of `SCORE_KINDS` (or `abs_logit_diff`)."""
        return getattr(self, kind)

    def table(self) -> pd.DataFrame:
        """The long table: one row per scored window × output, with the window's columns, `output`,
        `group`, `ref_score`, `alt_score`, `diff`, `abs_diff`, `logit_diff` and, when calibrated, `q_<kind>`
        per quantile kind."""
        n, k = self.ref.shape
        long = self.units.loc[self.units.index.repeat(k)].reset_index(drop=True)
        long.insert(long.columns.get_loc("strand") + 1, "output", np.tile(np.asarray(self.outputs, object), n))
        long.insert(long.columns.get_loc("output") + 1, "group", np.tile(np.asarray(self.groups, object), n))
        for kind, column in zip(SCORE_KINDS, ("ref_score", "alt_score", *SCORE_KINDS[2:]), strict=True):
            long.insert(long.columns.get_loc("ref_match"), column, self.array(kind).reshape(-1))
        for kind, values in self.quantiles.items():
            long.insert(long.columns.get_loc("ref_match"), f"q_{kind}", values.reshape(-1))
        return long

    def calibrate(self, background: VariantScores) -> VariantScores:
        """These scores with `quantiles`: for each of `CALIBRATED_KINDS` that the background scores (not all
        NaN), each value's empirical quantile among the background's values of the same output — the
        fraction of background values at most it (`scipy.stats.percentileofscore(..., kind="weak") / 100`);
        NaN for a NaN value. The background must come from the same model and settings."""
        reject(background.outputs != self.outputs, "background", background.outputs, f"outputs {self.outputs}")
        reject(bool(self.settings and background.settings) and background.settings != self.settings, "background",
               background.settings, f"scores with the same settings: {self.settings}")
        quantiles = {}
        for kind in CALIBRATED_KINDS:
            reference, values = background.array(kind), self.array(kind)
            if np.isnan(reference).all():
                continue
            found = np.zeros_like(values)
            for j in range(len(self.outputs)):
                column = np.sort(reference[:, j][~np.isnan(reference[:, j])])
                found[:, j] = np.searchsorted(column, values[:, j], side="right") / len(column)
            quantiles[kind] = np.where(np.isnan(values), np.nan, found)
        return dataclasses.replace(self, quantiles=quantiles)

    def per_variant(self, kind: str = "abs_diff", reduce: str = "max", outputs=None) -> pd.DataFrame:
        """One row per scored record (`record`, `id`, `chrom`, `pos`): `kind` reduced over its ALTs, windows
        and outputs (all, or the named `outputs`) — in column `all`, and per named output group (not ".")
        in a column named after the group.
        kind: one of `SCORE_KINDS` or "abs_logit_diff"; reduce: "max" (e.g. the largest |diff| of any
        chromatin feature) or "mean"."""
        reject(reduce not in ("max", "mean"), "reduce", reduce, '"max" or "mean"')
        reject(kind not in (*SCORE_KINDS, "abs_logit_diff"), "kind", kind, f"one of {(*SCORE_KINDS, 'abs_logit_diff')}")
        unknown = [name for name in outputs or () if name not in self.outputs]
        reject(bool(unknown), "outputs", unknown, f"names among {list(self.outputs)}")
        keep = [self.outputs.index(name) for name in outputs] if outputs else list(range(len(self.outputs)))
        values = self.array(kind)[:, keep]
        groups = np.asarray(self.groups, object)[keep]
        columns = {"all": values}
        columns.update({group: values[:, groups == group] for group in dict.fromkeys(groups) if group != "."})
        frame = self.units[["record", "id", "chrom", "pos"]].copy()
        for name, block in columns.items():
            frame[name] = block.max(1) if reduce == "max" else block.mean(1)
        out = frame.groupby("record", sort=True).agg({"id": "first", "chrom": "first", "pos": "first",
                                                      **{name: reduce for name in columns}})
        return out.reset_index()

    def summary(self) -> dict:
        """Counts: scored alleles and windows (and those clipped at an N run or contig end), skipped alleles by
        reason, REF mismatches (scored or not)."""
        scored = self.units.drop_duplicates(["record", "allele"])
        clipped = int(((self.units["clip_left"] > 0) | (self.units["clip_right"] > 0)).sum())
        return {"scored_alleles": len(scored), "scored_windows": len(self.units), "clipped_windows": clipped,
                "skipped_alleles": len(self.skipped),
                "skipped_by_reason": dict(sorted(Counter(self.skipped["reason"]).items())),
                "ref_mismatches": int((~scored["ref_match"].astype(bool)).sum()
                                      + (self.skipped["reason"] == REF_MISMATCH).sum())}

    @classmethod
    def concat(cls, parts: list[VariantScores]) -> VariantScores:
        """Merge parts that each hold whole records (e.g. one part per rank) in input order: by record and
        ALT, a record's windows in the order its part had them."""
        units = pd.concat([p.units for p in parts], ignore_index=True)
        order = np.lexsort((np.arange(len(units)), units["allele"].to_numpy(), units["record"].to_numpy()))
        skipped = pd.concat([p.skipped for p in parts], ignore_index=True)
        skipped = skipped.sort_values(["record", "allele"], kind="stable").reset_index(drop=True)
        first = parts[0]
        arrays = (np.concatenate([p.array(kind) for p in parts])[order] for kind in ("ref", "alt", "logit_diff"))
        quantiles = {kind: np.concatenate([p.quantiles[kind] for p in parts])[order] for kind in first.quantiles}
        return cls(units.iloc[order].reset_index(drop=True), first.outputs, first.groups, *arrays, skipped,
                   first.settings, quantiles)

    def to_tsv(self, path) -> None:
        from dnabird.variants.writers import write_tsv

        write_tsv(self, path)

    def to_hdf5(self, path) -> None:
        from dnabird.variants.writers import write_hdf5

        write_hdf5(self, path)

    def to_vcf(self, path, vcf) -> None:
        from dnabird.variants.writers import write_vcf

        write_vcf(self, path, vcf)
