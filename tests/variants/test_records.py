"""Reading variants: VCF (plain and bgzip, through pysam) and Variant objects, one allele per ALT."""

import gzip

import pysam
import pytest

from dnabird.errors import InputFormatError, ParameterError
from dnabird.variants.records import Variant, read_alleles, vcf_lines

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


def test_vcf_problems_name_the_file_the_line_and_the_cause(tmp_path):
    header = "##fileformat=VCFv4.2\n##contig=<ID=chr1>\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
    four = tmp_path / "four.vcf"  # line 5, the second record, has 4 columns
    four.write_text(header + "chr1\t10\ta\tA\tC\t.\t.\t.\nchr1\t20\tb\tA\nchr1\t30\tc\tA\tG\t.\t.\t.\n")
    with pytest.raises(InputFormatError, match=r"four.vcf, line 5: malformed VCF record: 4 tab-separated columns "
                                               r"where a record has at least 8"):
        list(read_alleles(four))
    position = tmp_path / "position.vcf"
    position.write_text(header + "chr1\t10\ta\tA\tC\t.\t.\t.\nchr1\t15\tc\tA\tC\t.\t.\t.\n"
                        "chr1\tx20\tb\tA\tG\t.\t.\t.\n")
    with pytest.raises(InputFormatError, match=r"position.vcf, line 6: .*htslib: \[E::vcf_parse\] Could not parse "
                                               r"the position 'x20'"):
        list(read_alleles(position))
    blank = tmp_path / "blank.vcf"  # htslib refuses a blank line: the error names it, not the record after it
    blank.write_text(header + "chr1\t10\ta\tA\tC\t.\t.\t.\n\nchr1\t20\tb\tA\tG\t.\t.\t.\n")
    with pytest.raises(InputFormatError, match=r"blank.vcf, line 5: malformed VCF record: a blank line"):
        list(read_alleles(blank))
    latin = tmp_path / "latin.vcf"  # a byte that is not UTF-8 in the refused line
    latin.write_bytes((header + "chr1\t10\ta\tA\tC\t.\t.\t.\nchr1\tx\xe9\tb\tA\tG\t.\t.\t.\n").encode("latin-1"))
    with pytest.raises(InputFormatError, match=r"latin.vcf, line 5: .*Could not parse the position"):
        list(read_alleles(latin))
    plain_gzip = tmp_path / "plain.vcf.gz"
    with gzip.open(plain_gzip, "wt") as handle:
        handle.write(VCF)
    with pytest.raises(InputFormatError, match="plain.vcf.gz: gzip-compressed VCF must be bgzip-compressed"):
        list(read_alleles(plain_gzip))
    with pytest.raises(InputFormatError, match=f"{tmp_path}: is a directory, not a VCF file"):
        list(read_alleles(tmp_path))


def test_line_reader_numbers_records_as_the_allele_reader_does(tmp_path):
    path = tmp_path / "v.vcf"
    path.write_bytes((VCF + "chr1\t12\t.\tT\tC\t.\t.\tX=\xe9\r\n").encode("latin-1"))  # CRLF, not UTF-8
    pysam.tabix_compress(str(path), str(tmp_path / "v.vcf.gz"))
    for vcf in (path, tmp_path / "v.vcf.gz"):
        lines = list(vcf_lines(vcf))
        # header lines 1-3 (up to #CHROM), then records 0, 1, 2 on lines 4, 5, 6
        assert [(record, number) for record, number, _ in lines] == [(None, 1), (None, 2), (None, 3), (0, 4), (1, 5),
                                                                    (2, 6)]
        assert lines[3][2] == "chr1\t5\trs1\tAC\tA,ACC,<INS>\t.\t.\t."
        assert lines[5][2].encode("utf-8", "surrogateescape") == b"chr1\t12\t.\tT\tC\t.\t.\tX=\xe9"
    assert [(a.record, a.allele) for a in read_alleles(path)] == [(0, 1), (0, 2), (0, 3), (1, 1), (2, 1)]


def test_samples_are_not_read_so_a_duplicated_format_tag_does_not_matter(tmp_path):
    path = tmp_path / "samples.vcf"  # htslib refuses the first record's FORMAT GT:GT; dnabird never reads FORMAT
    path.write_text("##fileformat=VCFv4.2\n##contig=<ID=chr1>\n##FORMAT=<ID=GT,Number=1,Type=String,Description=\"g\">\n"
                    "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ts1\n"
                    "chr1\t10\ta\tA\tC\t.\t.\t.\tGT:GT\t0/1:0/1\nchr1\t20\tb\tA\tG\t.\t.\t.\tGT\t0/1\n")
    alleles = read_alleles(path)
    assert [(a.variant.id, a.variant.pos, a.variant.alt) for a in alleles] == [("a", 10, "C"), ("b", 20, "G")]
