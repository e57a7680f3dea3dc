"""`dnabird tokenizer encode`: ids and offsets as sentencepiece gives them; bad input named, exit code 1."""

import sentencepiece as spm

from dnabird.cli import main
from dnabird.data.tokenizer import Tokenizer


def test_encode_prints_ids_and_offsets(tmp_path, capsys):
    sentences = ["ACGTACGTTTGACA" * 20, "GGGCCCATATAT" * 25] * 20
    Tokenizer.train(sentences, tmp_path / "dna.model", vocab_size=40, seed=0)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "dna.model"))
    assert main(["tokenizer", "encode", "--model", str(tmp_path / "dna.model"), "ACGTACGTTT", "GGGCCC"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [" ".join(map(str, sp.encode("ACGTACGTTT"))), " ".join(map(str, sp.encode("GGGCCC")))]
    assert main(["tokenizer", "encode", "--model", str(tmp_path / "dna.model"), "--offsets", "GGGCCC"]) == 0
    spans = [item.split(":")[1].split("-") for item in capsys.readouterr().out.split()]
    pieces = [sp.id_to_piece(i) for i in sp.encode("GGGCCC")]
    assert [int(end) - int(start) for start, end in spans] == [len(p) for p in pieces]
    assert main(["tokenizer", "encode", "--model", str(tmp_path / "dna.model"), "ACGT", "acgn", "acgu"]) == 1
    assert "input 3" in capsys.readouterr().err
