"""Stage `variants`: score a VCF with the run's models and, given a truth table, benchmark the ranking.

Scorers: the pretrained model with every method of `dnabird.variants.scorer.SCORERS` that reads a pretrained
model (`mlm_llr`, zero-shot: effect −LLR, mean over ALTs, and `mlm_llr_per_bp` beside it, the one to rank by
when indels mix with SNVs; `embed_dist`, the embedding distance between the REF and ALT windows), and the
fine-tuned heads `promoter` (in every lifted TSS window holding the variant) and `chromatin` (centred on the
variant, overall and per group). Each scorer's effects are its method's (`Scorer.effects`); a head's is the
largest change over its outputs of the log odds (default) or of the probability (`effect`). With a truth table,
the stage writes its labels table
(`labels.tsv`, as `dnabird benchmark-variants` reads it) and each scorer's benchmark (AUROC, AUPRC, AUPRC by
chromosome, top-k odds ratio with bootstrap intervals; `dnabird.variants.evaluate`) of disruptive vs distant
neutral and vs in-element controls (chromatin: also over TF-motif variants alone) goes into `report.json` under
`benchmark` (docs/variant-scoring.md). Outputs: `<scorer>.tsv`, `<scorer>.unscored.tsv`, `effects.tsv`,
`report.json`, `effects.png`, and an ISM map (`ism.h5`, `ism.png`) of `ism_region`, by default the first
disruptive variant's element (a TF motif when the chromatin head scores) widened by `ism_margin_bp`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pandas as pd

from dnabird.errors import ParameterError
from dnabird.io import write_json_atomic
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import optional_output

HEADS = ("promoter", "chromatin")  # the fine-tuned heads that score; the other scorers are pretrained-model methods
PROMOTER_KINDS = ("TATA", "Inr", "GCbox")
TF_MOTIF_ROW = "chromatin, TF-motif variants only"


def pretrained_methods() -> tuple[str, ...]:
    """The scoring methods that read a pretrained model (`dnabird.variants.scorer.SCORERS`)."""
    from dnabird.variants.scorer import SCORERS

    return tuple(name for name, scorer in SCORERS.items() if scorer.supports(None))


@dataclass
class VariantsConfig:
    """vcf, genome, truth, elements: paths (null: the `fetch` stage's; truth "none": no evaluation).
    scorers: any of `pretrained_methods()` and `HEADS`. mlm_window_bp, mlm_eval_length: the pretrained model's
    windows (odd, so the variant's base is the centre; eval_length null: what the window needs at the
    tokenizer's bp per token). rc: "average" or "forward" for centred windows (TSS windows follow the
    transcript). top_k: the benchmark's odds-ratio top (a fraction of the scored variants, or a count).
    ism_region: "chrom:start-end" (1-based) or null (see the module docstring)."""

    vcf: str | None = None
    genome: str | None = None
    truth: str | None = None
    elements: str | None = None
    scorers: list[str] = field(default_factory=lambda: ["mlm_llr", "embed_dist", "promoter", "chromatin"])
    mlm_window_bp: int = 1001
    mlm_eval_length: int | None = None
    rc: str = "average"
    effect: str = "abs_logit_diff"
    batch_size: int = 16
    ism_region: str | None = None
    ism_margin_bp: int = 10
    bootstrap_resamples: int = 1000
    top_k: float = 0.1
    seed: int = 0

    def __post_init__(self):
        from dnabird.variants.scorer import HEAD_EFFECTS

        known = (*pretrained_methods(), *HEADS)
        unknown = [s for s in self.scorers if s not in known]
        if unknown or not self.scorers:
            raise ParameterError("variants.scorers", self.scorers, f"a non-empty list of {known}")
        if self.rc not in ("average", "forward"):
            raise ParameterError("variants.rc", self.rc, '"average" or "forward"')
        if self.effect not in HEAD_EFFECTS:
            raise ParameterError("variants.effect", self.effect, f"one of {tuple(HEAD_EFFECTS)}")


def _paths(config: VariantsConfig, context: RunContext) -> dict[str, Path | None]:
    paths = {name: Path(getattr(config, name)) if getattr(config, name) else context.output("fetch", output)
             for name, output in (("vcf", "vcf"), ("genome", "fasta"))}
    for name, output in (("truth", "variant_truth"), ("elements", "elements")):  # a real VCF has no truth table
        given = getattr(config, name)
        paths[name] = None if given == "none" else Path(given) if given else optional_output(context, "fetch", output)
    for scorer in config.scorers:
        stage = scorer if scorer in HEADS else "pretrain"
        paths[scorer] = context.output(stage, "model")
    if "promoter" in config.scorers:
        paths["tss"] = context.output("promoter", "tss")
    return paths


def inputs(config: VariantsConfig, context: RunContext) -> list[Path]:
    return [p for p in _paths(config, context).values() if p is not None]


def _method(scorer: str, config: VariantsConfig, paths: dict) -> dict:
    """How `scorer` scores: a pretrained-model method in centred windows, the promoter head in TSS windows, or a
    centred head."""
    if scorer not in HEADS:
        return dict(method=scorer, rc=config.rc, window_bp=config.mlm_window_bp, eval_length=config.mlm_eval_length)
    return dict(method="head", tss=paths["tss"]) if scorer == "promoter" else dict(method="head", rc=config.rc)


def _effects(scorer: str, scores, effects) -> pd.DataFrame:
    """Per variant each of the scorer's `effects` (`Scorer.effects`), in a column named after the scorer (and
    the effect's suffix), and per output group where the outputs fall into several."""
    table = None
    for effect in effects:
        column = scorer + effect.suffix
        values = effect.per_variant(scores).drop(columns=["record", "chrom", "pos"])
        values = values.rename(columns={c: column if c == "all" else f"{column}_{c}" for c in values.columns
                                        if c != "id"})
        table = values if table is None else table.merge(values, on="id", how="outer")
    return table


def _ism_region(config: VariantsConfig, paths: dict, truth) -> str | None:
    if config.ism_region or truth is None or paths["elements"] is None:
        return config.ism_region
    from dnabird.genome.bed import read_bed

    disruptive = truth[truth["class"] == "disruptive"]
    if "chromatin" in config.scorers:  # a TF motif for the chromatin head, not a promoter box
        disruptive = disruptive[~disruptive["element_kind"].isin(PROMOTER_KINDS)]
    disruptive = disruptive["element"].tolist()
    by_name = {record.name: record for record in read_bed(paths["elements"])}
    for element in disruptive:
        if element in by_name:
            record = by_name[element]
            return f"{record.chrom}:{record.start + 1 - config.ism_margin_bp}-{record.end + config.ism_margin_bp}"
    return None


def run(config: VariantsConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    from dnabird.genome.reference import Genome
    from dnabird.model.checkpoint import read_task
    from dnabird.variants import score_variants
    from dnabird.variants.evaluate import plot_effects, read_truth, truth_labels, truth_rankings
    from dnabird.variants.ism import saturation_mutagenesis
    from dnabird.variants.scorer import SCORERS
    from dnabird.variants.writers import write_skipped, write_tsv

    paths = _paths(config, context)
    genome = Genome(paths["genome"])
    truth = read_truth(paths["truth"]) if paths["truth"] else None
    report, effects, columns = {"scorers": {}}, None, {}
    if truth is not None:
        truth_labels(truth).to_csv(stage_dir / "labels.tsv", sep="\t", index=False)
    for scorer in config.scorers:
        started = time.perf_counter()
        method = _method(scorer, config, paths)
        scores = score_variants(paths[scorer], genome, paths["vcf"], batch_size=config.batch_size, device="cpu",
                                **method)
        write_tsv(scores, stage_dir / f"{scorer}.tsv")
        write_skipped(scores, stage_dir / f"{scorer}.unscored.tsv")
        rules = SCORERS[method["method"]].effects(read_task(paths[scorer]), kind=config.effect)
        table = _effects(scorer, scores, rules)
        effects = table if effects is None else effects.merge(table, on="id", how="outer")
        entry = {"effect": rules[0].label,
                 "summary": scores.summary(), "unscored": f"{scorer}.unscored.tsv", "settings": scores.settings,
                 "seconds": round(time.perf_counter() - started, 1)}
        if truth is not None:
            rankings = partial(truth_rankings, table, truth, top_k=config.top_k, seed=config.seed,
                               resamples=config.bootstrap_resamples)
            kinds = PROMOTER_KINDS if scorer == "promoter" else None
            entry["benchmark"] = {column: rankings(column, kinds=kinds) for column in table.columns if column != "id"}
            if scorer == "chromatin":   # the disruptions a chromatin label depends on: TF motifs
                tf_motifs = sorted(set(truth["element_kind"]) - {*PROMOTER_KINDS, ".", ""})
                entry["benchmark"][TF_MOTIF_ROW] = rankings(scorer, kinds=tf_motifs)
            columns[scorer] = scorer
        report["scorers"][scorer] = entry
    effects.to_csv(stage_dir / "effects.tsv", sep="\t", index=False)
    outputs = {"effects": stage_dir / "effects.tsv", "report": stage_dir / "report.json",
               **{f"{scorer}_unscored": stage_dir / f"{scorer}.unscored.tsv" for scorer in config.scorers}}
    if truth is not None:
        plot_effects(effects, truth, columns, stage_dir / "effects.png")
        outputs.update(effects_plot=stage_dir / "effects.png", labels=stage_dir / "labels.tsv")
    region = _ism_region(config, paths, truth)
    if region is not None:
        scorer = "chromatin" if "chromatin" in config.scorers else "pretrain"
        model = paths["chromatin"] if scorer == "chromatin" else context.output("pretrain", "model")
        settings = {"rc": config.rc} if scorer == "chromatin" else _method("mlm_llr", config, paths)
        started = time.perf_counter()
        ism = saturation_mutagenesis(model, genome, region, batch_size=config.batch_size, device="cpu", **settings)
        ism.to_hdf5(stage_dir / "ism.h5")
        ism.plot(stage_dir / "ism.png")
        report["ism"] = {"region": region, "model": scorer, "seconds": round(time.perf_counter() - started, 1)}
        outputs.update(ism=stage_dir / "ism.h5", ism_plot=stage_dir / "ism.png")
    write_json_atomic(stage_dir / "report.json", report)
    return outputs


STAGE = Stage("variants", VariantsConfig, inputs, run)
