"""benchmarks/gpu_check.py --smoke: the GPU acceptance run's every part at tiny sizes on CPU (~30-60 s)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_smoke_run_writes_one_table_with_every_part(tmp_path):
    report = tmp_path / "report.md"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--smoke", "--out", str(report),
                           "--work", str(tmp_path / "work")], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    # the sdpa parity rows are judged even here, against the float64 dense reference: a wrong backend fails
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = [line for line in report.read_text().splitlines() if line.startswith("| ")]
    by_part = {}
    for part, case, result, bound, verdict in (line.split(" | ") for line in lines[1:]):  # after the header
        by_part.setdefault(part.removeprefix("| "), []).append((case, result, bound, verdict.removesuffix(" |")))
    assert set(by_part) == {"a parity", "a attention speed", "b pretraining step", "b auto order", "c GENA inference",
                            "c score_variants", "d text_longdoc learns"}, by_part.keys()
    parity = by_part["a parity"]
    judged = [row for row in parity if row[0].startswith("sdpa")]
    # 3 patterns × 2 dtypes × forward and backward
    assert len(judged) == 3 * 2 * 2 and all(verdict == "pass" for *_, verdict in judged), judged
    skipped = [row for row in parity if not row[0].startswith("sdpa")]
    assert len(skipped) == 3 * 2 * 2 and all(result.startswith("skipped: no CUDA") for _, result, *_ in skipped)
    assert any("tok/s" in result for _, result, *_ in by_part["b pretraining step"])
    assert "variants/s" in by_part["c score_variants"][0][1]
    assert {case.split(" · ")[0] for case, *_ in by_part["d text_longdoc learns"]} == {"bigbird_itc", "longformer"}
    assert "torch " in report.read_text() and "commit " in report.read_text()
