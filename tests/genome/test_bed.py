import gzip

import pytest

from dnabird.errors import InputFormatError
from dnabird.genome.bed import BedRecord, Tss, read_bed, read_tss

EPDNEW = (
    "track name=epdnew\n"
    "chr1\t959207\t959267\tNOC2L_1\t900\t-\t959207\t959218\n"
    "chr1\t1000088\t1000148\tHES4_1\t900\t+\t1000137\t1000148\n"
)


def write(tmp_path, text, name="test.bed"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_bed8_epdnew(tmp_path):
    records = list(read_bed(write(tmp_path, EPDNEW)))
    assert records == [
        BedRecord("chr1", 959207, 959267, "NOC2L_1", 900.0, "-", 959207, 959218),
        BedRecord("chr1", 1000088, 1000148, "HES4_1", 900.0, "+", 1000137, 1000148),
    ]


def test_bed4_features_with_headers_skipped(tmp_path):
    text = ("# features\nbrowser position chr1:1-100\n\n"
            "chr1\t100\t300\tGM12878|CTCF|None\nchr2\t0\t5\tK562|H3K4me3|None\n")
    records = list(read_bed(write(tmp_path, text)))
    assert [(r.chrom, r.start, r.end, r.name) for r in records] == [
        ("chr1", 100, 300, "GM12878|CTCF|None"), ("chr2", 0, 5, "K562|H3K4me3|None")]
    assert [r.line for r in records] == [4, 5]  # file line numbers, skipped lines counted
    assert records[0].strand is None and records[0].score is None


def test_bed3_whitespace_and_bed12_extras(tmp_path):
    assert list(read_bed(write(tmp_path, "chr1 5 10\n"))) == [BedRecord("chr1", 5, 10)]
    line = "chr1\t0\t100\tx\t.\t.\t0\t100\t0,0,0\t2\t10,10\t0,90\n"
    (record,) = read_bed(write(tmp_path, line, "b12.bed"))
    assert record.score is None and record.strand == "." and record.extra == ("0,0,0", "2", "10,10", "0,90")


def test_gzip(tmp_path):
    path = tmp_path / "test.bed.gz"
    path.write_bytes(gzip.compress(EPDNEW.encode()))
    assert len(list(read_bed(path))) == 2


@pytest.mark.parametrize("bad_line, message", [
    ("chr1\tten\t20\tx\t900\t+\t10\t20", "start 'ten' is not an integer"),
    ("chr1\t30\t20\tx\t900\t+\t20\t30", "start <= end"),
    ("chr1\t10\t20\tx\t900\t*\t10\t20", "strand"),
    ("chr1\t10\t20\tx\thigh\t+\t10\t20", "score"),
    ("chr1\t10\t20\tx\t900\t+\t10", "expected 8 columns"),
    ("chr1\t10\t20\tx\t900\t+\t10\t2.5", "thickEnd"),
])
def test_bad_line_names_file_and_line(tmp_path, bad_line, message):
    path = write(tmp_path, EPDNEW + "# comment\n" + bad_line + "\n")
    with pytest.raises(InputFormatError, match=rf"test\.bed, line 5: .*{message}"):
        list(read_bed(path))


def test_too_few_columns(tmp_path):
    with pytest.raises(InputFormatError, match=r"line 1: expected at least 3 columns"):
        list(read_bed(write(tmp_path, "chr1\t10\n")))


def test_tss_from_bed6_and_epdnew_bed8(tmp_path):
    bed6 = tmp_path / "tss.bed"
    bed6.write_text("chr1\t100\t101\tA\t0\t+\nchr1\t200\t260\t.\t0\t-\n")
    assert read_tss(bed6) == [Tss("chr1", 100, "+", "A"), Tss("chr1", 259, "-", "chr1:259:-")]
    bed8 = tmp_path / "epd.bed"  # EPDnew: 60 bp, TSS = thickStart on +, thickEnd - 1 on -
    bed8.write_text("chr1\t951\t1011\tP_1\t900\t+\t1000\t1011\nchr2\t490\t550\tP_2\t900\t-\t490\t501\n")
    assert read_tss(bed8) == [Tss("chr1", 1000, "+", "P_1"), Tss("chr2", 500, "-", "P_2")]
    unstranded = tmp_path / "u.bed"
    unstranded.write_text("chr1\t1\t2\tX\t0\t.\n")
    with pytest.raises(InputFormatError, match="strand"):
        read_tss(unstranded)


def test_tss_reader_errors_name_the_file_and_line(tmp_path):
    bed6 = tmp_path / "tss.bed"
    bed6.write_text("chr1\t100\t101\tA\t0\t+\n")
    with pytest.raises(InputFormatError, match=r"tss.bed, line 1: expected BED8"):
        read_tss(bed6, require_thick=True)
    outside = tmp_path / "outside.bed"  # thick part 40-51 beside the item 0-30: the − TSS 50 is not in it
    outside.write_text("chr1\t0\t60\tA\t0\t+\t49\t60\nchr1\t0\t30\tB\t0\t-\t40\t51\n")
    with pytest.raises(InputFormatError, match=r"outside.bed, line 2: the TSS 50 .*outside the item 0-30"):
        read_tss(outside)
    empty = tmp_path / "empty.bed"
    empty.write_text("# no records\n")
    with pytest.raises(InputFormatError, match="empty.bed: no TSS records"):
        read_tss(empty)
    assert [t.line for t in read_tss(bed6)] == [1]
