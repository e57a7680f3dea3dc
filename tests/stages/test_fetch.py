"""Stage `fetch`: which of a source's files is the genome; the manifest is an input."""

from pathlib import Path

import pytest

from dnabird.errors import ConfigError
from dnabird.pipeline import RunContext
from dnabird.stages.fetch import FetchConfig, genome_fasta, inputs
from tests.data.test_fetch import server  # noqa: F401  (the local HTTP server fixture)


def test_the_unpacked_fasta_is_the_genome():
    files = {"hg19.fa.gz": Path("d/hg19.fa.gz"), "hg19.fa": Path("d/hg19.fa")}
    assert genome_fasta(files, "ucsc_hg19_fa") == Path("d/hg19.fa")
    assert genome_fasta({"fasta": "d/toy.fa", "vcf": "d/v.vcf"}, "toy") == Path("d/toy.fa")
    with pytest.raises(ConfigError, match="a.fa, b.fa"):
        genome_fasta({"a": Path("a.fa"), "b": Path("b.fa")}, "two")
    with pytest.raises(ConfigError, match="none"):
        genome_fasta({"chain": Path("x.chain")}, "chain_only")


def test_the_manifest_and_every_module_of_the_generator_package_are_inputs(tmp_path):
    """A new toy generator version, or an edit to any module it draws on, must not leave an old toy in place."""
    import os
    import subprocess
    import sys

    import dnabird.datasets.toy

    manifest, *modules = inputs(FetchConfig(source="toy"), RunContext(tmp_path))
    assert manifest.name == "toy.yaml" and manifest.is_file()
    package = Path(dnabird.datasets.toy.__file__).parent
    assert set(modules) == {package / name for name in os.listdir(package) if name.endswith(".py")}
    assert package / "toy.py" in modules and "VERSION = " in (package / "toy.py").read_text()
    # every dnabird.datasets module the generator imports, found by importing it in a fresh interpreter
    loaded = subprocess.run([sys.executable, "-c", "import sys, dnabird.datasets.toy; print('\\n'.join("
                             "m.__file__ for n, m in sys.modules.items() if n.startswith('dnabird.datasets')))"],
                            capture_output=True, text=True, check=True, cwd=package.parents[1]).stdout.split()
    assert {Path(p) for p in loaded} <= set(modules) and len(loaded) >= 6


def test_extra_sources_are_recorded_under_their_roles(tmp_path, server):  # noqa: F811
    import gzip

    import yaml

    from dnabird.stages.fetch import run

    chain, bed = b"chain 1 a 10 + 0 10 a 10 + 0 10 1\n10\n\n", b"chr1\t0\t60\tA_1\t900\t+\t49\t60\n"
    server.files["/c.chain.gz"], server.files["/p.bed"] = gzip.compress(chain), bed
    manifests = {}
    for name, filename, unpack in (("chain_src", "c.chain.gz", "gunzip"), ("bed_src", "p.bed", "none")):
        manifests[name] = tmp_path / f"{name}.yaml"
        manifests[name].write_text(yaml.safe_dump({
            "name": name, "description": "test", "build": "none", "format": "other", "license": "test",
            "files": [{"filename": filename, "url": server.url("/" + filename), "checksum": "none",
                       "unpack": unpack}]}))
    roles = {"chain": str(manifests["chain_src"]), "promoters_bed": str(manifests["bed_src"])}
    config = FetchConfig(source="toy", dest=str(tmp_path / "data"), extra_sources=roles)
    assert set(inputs(config, RunContext(tmp_path))) == {*manifests.values(), *inputs(FetchConfig(), None)}
    outputs = run(config, RunContext(tmp_path), tmp_path / "fetch")
    assert outputs["chain"] == tmp_path / "data" / "chain_src" / "c.chain"          # the unpacked file
    assert outputs["chain"].read_bytes() == chain and outputs["promoters_bed"].read_bytes() == bed
    assert outputs["fasta"].name == "toy_hg19.fa"
