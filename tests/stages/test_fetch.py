"""Stage `fetch`: which of a source's files is the genome; the manifest is an input."""

from pathlib import Path

import pytest

from dnabird.errors import ConfigError
from dnabird.pipeline import RunContext
from dnabird.stages.fetch import FetchConfig, genome_fasta, inputs


def test_the_unpacked_fasta_is_the_genome():
    files = {"hg19.fa.gz": Path("d/hg19.fa.gz"), "hg19.fa": Path("d/hg19.fa")}
    assert genome_fasta(files, "ucsc_hg19_fa") == Path("d/hg19.fa")
    assert genome_fasta({"fasta": "d/toy.fa", "vcf": "d/v.vcf"}, "toy") == Path("d/toy.fa")
    with pytest.raises(ConfigError, match="a.fa, b.fa"):
        genome_fasta({"a": Path("a.fa"), "b": Path("b.fa")}, "two")
    with pytest.raises(ConfigError, match="none"):
        genome_fasta({"chain": Path("x.chain")}, "chain_only")


def test_the_manifest_file_is_an_input(tmp_path):
    [manifest] = inputs(FetchConfig(source="toy"), RunContext(tmp_path))
    assert manifest.name == "toy.yaml" and manifest.is_file()
