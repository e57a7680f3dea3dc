"""Chunked, resumable scoring (`score_variants_to_files`, `dnabird score`): an interrupted run (Ctrl-C in
process, SIGKILL of a subprocess) rerun the same way gives byte-identical outputs to an uninterrupted run,
equal to the whole-table writers' output; a partial run with other settings or inputs is never mixed in."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dnabird.cli import main
from dnabird.errors import OutputPathError
from dnabird.variants import score_variants
from dnabird.variants.resume import score_variants_to_files
from dnabird.variants.score import ScoringSetup
from dnabird.variants.writers import write_skipped
from tests.stalling import kill_once_stalled

STANDIN = Path(__file__).with_name("score_standin.py")
OPTIONS = {"device": "cpu", "progress": False, "batch_size": 4}


def _files(out: Path) -> dict[str, bytes]:
    """Every file a run left beside `out` (its name without the output's), by name."""
    return {p.name.replace(out.name, "OUT"): p.read_bytes() for p in out.parent.iterdir()
            if p.name.startswith(out.name)}


def _interrupt_at_chunk(monkeypatch, chunk: int):
    """Make the run raise KeyboardInterrupt (as Ctrl-C does) when it starts scoring chunk `chunk`."""
    calls, score = [], ScoringSetup.score

    def interrupted(self, alleles, bar=None, pass_groups=None):
        calls.append(1)
        if len(calls) == chunk + 1:
            raise KeyboardInterrupt
        return score(self, alleles, bar, pass_groups)

    monkeypatch.setattr(ScoringSetup, "score", interrupted)


@pytest.mark.parametrize("name", ["s.tsv", "s.h5"])
def test_ctrl_c_then_rerun_gives_the_uninterrupted_bytes_and_the_whole_table_writers_output(
        classifier_dir, genome_and_vcf, tmp_path, monkeypatch, name):
    genome, vcf, _ = genome_and_vcf
    whole = score_variants(classifier_dir, genome, vcf, **OPTIONS)
    (tmp_path / "whole").mkdir()
    (whole.to_tsv if name.endswith(".tsv") else whole.to_hdf5)(tmp_path / "whole" / name)
    write_skipped(whole, tmp_path / "whole" / f"{name}.unscored.tsv")
    reference = tmp_path / "reference" / name
    score_variants_to_files(classifier_dir, genome, vcf, reference, chunk_records=4, **OPTIONS)
    assert not reference.with_name(f"{name}.partial").exists()          # removed once the outputs are written

    out = tmp_path / "resumed" / name
    with monkeypatch.context() as patched:
        _interrupt_at_chunk(patched, 2)
        with pytest.raises(KeyboardInterrupt):
            score_variants_to_files(classifier_dir, genome, vcf, out, chunk_records=4, **OPTIONS)
    partial = out.with_name(f"{name}.partial")
    assert sorted(p.name for p in partial.iterdir()) == ["chunk_000000.h5", "chunk_000001.h5", "run.json"]
    assert not out.exists()
    with monkeypatch.context() as patched:   # the rerun scores only chunks 2 and 3 (14 records, 4 per chunk)
        _interrupt_at_chunk(patched, 2)
        score_variants_to_files(classifier_dir, genome, vcf, out, chunk_records=4, **OPTIONS)
    assert _files(out) == _files(reference)
    if name.endswith(".tsv"):  # the same bytes as the whole-table writers (HDF5: contiguous vs growing datasets)
        assert {k: v for k, v in _files(reference).items() if k != "OUT.json"} == _files(tmp_path / "whole" / name)
    else:
        import h5py

        with h5py.File(out) as resumed, h5py.File(tmp_path / "whole" / name) as single:
            for key in ("ref", "alt", "logit_diff", "windows/record", "windows/id", "skipped/reason"):
                assert np.array_equal(resumed[key][:], single[key][:])


def test_a_partial_run_with_other_settings_or_inputs_is_refused_or_restarted(classifier_dir, genome_and_vcf,
                                                                              tmp_path, monkeypatch, capsys):
    genome, vcf, _ = genome_and_vcf
    out = tmp_path / "s.tsv"
    with monkeypatch.context() as patched:
        _interrupt_at_chunk(patched, 1)
        assert main(["score", "--model", str(classifier_dir), "--genome", str(genome), "--vcf", str(vcf), "--out",
                     str(out), "--chunk-records", "4", "--device", "cpu", "--batch-size", "4"]) == 130
    assert capsys.readouterr().err.endswith("interrupted; rerun the same command to resume\n")
    with pytest.raises(OutputPathError, match=r"differ: settings\.rc\);.*--restart"):
        score_variants_to_files(classifier_dir, genome, vcf, out, chunk_records=4, rc="forward", **OPTIONS)
    with pytest.raises(OutputPathError, match=r"differ: chunk_records"):
        score_variants_to_files(classifier_dir, genome, vcf, out, chunk_records=5, **OPTIONS)
    edited = tmp_path / "edited.vcf"
    edited.write_text(vcf.read_text().replace("DP=3", "DP=4"))
    with pytest.raises(OutputPathError, match=r"differ: inputs\.vcf"):
        score_variants_to_files(classifier_dir, genome, edited, out, chunk_records=4, **OPTIONS)
    assert (out.with_name("s.tsv.partial") / "chunk_000000.h5").is_file()   # nothing discarded by a refusal
    score_variants_to_files(classifier_dir, genome, vcf, out, chunk_records=4, rc="forward", restart=True, **OPTIONS)
    fresh = tmp_path / "fresh" / "s.tsv"
    score_variants_to_files(classifier_dir, genome, vcf, fresh, chunk_records=4, rc="forward", **OPTIONS)
    assert _files(out) == _files(fresh)
    stranger = tmp_path / "t.tsv.partial"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    with pytest.raises(OutputPathError, match="not a dnabird partial run"):
        score_variants_to_files(classifier_dir, genome, vcf, tmp_path / "t.tsv", **OPTIONS)
    assert (stranger / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("method", ["head", "embed_dist"])
def test_sigkill_after_the_first_chunk_then_rerun_gives_the_uninterrupted_bytes(classifier_dir, genome_and_vcf,
                                                                                tmp_path, method):
    genome, vcf, _ = genome_and_vcf
    args = ["--model", str(classifier_dir), "--genome", str(genome), "--vcf", str(vcf), "--device", "cpu",
            "--chunk-records", "5", "--background", "12", "--background-seed", "3", "--method", method]
    assert main(["-q", "score", *args, "--out", str(tmp_path / "a" / "s.vcf.gz")]) == 0
    out = tmp_path / "b" / "s.vcf.gz"
    kill_once_stalled(STANDIN, ["-q", "score", *args, "--out", str(out)], tmp_path / "blocked")
    partial = out.with_name("s.vcf.gz.partial")
    assert sorted(p.name for p in partial.iterdir()) == ["background.h5", "chunk_000000.h5", "run.json"]
    assert main(["-q", "score", *args, "--out", str(out)]) == 0
    assert _files(out) == _files(tmp_path / "a" / "s.vcf.gz")
    assert set(_files(out)) == {"OUT", "OUT.unscored.tsv", "OUT.json", "OUT.background.tsv"}


def test_a_parquet_output_holds_the_tsv_table(classifier_dir, genome_and_vcf, tmp_path):
    genome, vcf, _ = genome_and_vcf
    for name in ("s.tsv", "s.parquet"):
        score_variants_to_files(classifier_dir, genome, vcf, tmp_path / name, chunk_records=4, **OPTIONS)
    text = pd.read_csv(tmp_path / "s.tsv", sep="\t", na_values=["NA"], keep_default_na=False)
    table = pd.read_parquet(tmp_path / "s.parquet")
    assert len(table) > 10
    pd.testing.assert_frame_equal(table, text, check_dtype=False)
