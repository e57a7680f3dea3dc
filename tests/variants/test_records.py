"""Reading variants: VCF (plain and bgzip, through pysam) and Variant objects, one allele per ALT."""

import pysam
import pytest

from dnabird.errors import InputFormatError, ParameterError
from dnabird.variants.records import Variant, read_alleles

VCF = ("##fileformat=VCFv4.2\n##contig=<ID=chr1>\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
       "chr1\t5\trs1\tAC\tA,ACC,<INS>\t.\t.\t.\n"
       "chr1\t9\t.\tG\tGT[chr1:3[\t.\t.\t.\n")


def test_vcf_records_split_into_alleles_with_one_based_positions(tmp_path):
    plain = tmp_path / "v.vcf"
    plain.write_text(VCF)
    pysam.tabix_compress(str(plain), str(tmp_path / "v.vcf.gz"))
    for path in (plain, tmp_path / "v.vcf.gz"):
        alleles = list(read_alleles(path))
        assert [(a.record, a.allele, a.variant.alt, a.problem and a.problem.reason) for a in alleles] == [
            (0, 1, "A", None), (0, 2, "ACC", None), (0, 3, "<INS>", "symbolic ALT"),
            (1, 1, "GT[chr1:3[", "breakend ALT")]
        first = alleles[0].variant
        assert (first.chrom, first.pos, first.id, first.start, first.centre) == ("chr1", 5, "rs1", 4, 5)
        assert alleles[3].variant.id == "."


def test_variant_objects_and_bad_inputs(tmp_path):
    alleles = list(read_alleles([Variant("chr2", 7, "A", "C,T"), Variant("chr2", 9, "N", "A")]))
    assert [(a.record, a.allele, a.variant.alt) for a in alleles] == [(0, 1, "C"), (0, 2, "T"), (1, 1, "A")]
    assert alleles[2].problem.reason == "REF not A/C/G/T"
    assert [a.variant for a in read_alleles(Variant("chr2", 7, "A", "C"))] == [Variant("chr2", 7, "A", "C")]
    with pytest.raises(ParameterError, match="Variant"):
        list(read_alleles([("chr1", 5, "A", "C")]))
    with pytest.raises(InputFormatError, match="not found"):
        list(read_alleles(tmp_path / "missing.vcf"))
    broken = tmp_path / "broken.vcf"
    broken.write_text("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\nchr1\tfive\t.\tA\tC\t.\t.\t.\n")
    with pytest.raises(InputFormatError, match="broken.vcf"):
        list(read_alleles(broken))
