"""`dnabird text …`: the tokenizer, the TriviaQA conversion and a training command's config errors."""

import json

from dnabird.cli import main
from dnabird.data.text_tokenizer import TextTokenizer


def test_tokenizer_train_and_encode_with_offsets(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"the quick brown fox number {i} jumps" for i in range(200)) + "\n")
    assert main(["text", "tokenizer", "train", str(corpus), "--out", str(tmp_path / "t.model"),
                 "--vocab-size", "300"]) == 0
    assert "pad=0, unk=1, cls=2, sep=3, mask=4" in capsys.readouterr().out
    assert main(["text", "tokenizer", "encode", "--model", str(tmp_path / "t.model"), "--offsets", "the fox"]) == 0
    pairs = capsys.readouterr().out.split()
    tokenizer = TextTokenizer.load(tmp_path / "t.model")
    assert [int(p.split(":")[0]) for p in pairs] == tokenizer.encode("the fox")
    assert pairs[-1].endswith(f"-{len('the fox')}")


def test_triviaqa_to_squad_command(tmp_path, capsys):
    (tmp_path / "evidence" / "wikipedia").mkdir(parents=True)
    (tmp_path / "evidence" / "wikipedia" / "Paris.txt").write_text("Paris is the capital.")
    (tmp_path / "qa.json").write_text(json.dumps({"Data": [
        {"Question": "Capital?", "QuestionId": "q1", "Answer": {"NormalizedAliases": ["paris"]},
         "EntityPages": [{"Filename": "Paris.txt"}]}]}))
    assert main(["text", "triviaqa-to-squad", str(tmp_path / "qa.json"), str(tmp_path / "evidence"),
                 str(tmp_path / "squad.json")]) == 0
    assert '"pairs": 1' in capsys.readouterr().out
    squad = json.loads((tmp_path / "squad.json").read_text())
    assert squad["data"][0]["paragraphs"][0]["qas"][0]["answers"] == [{"text": "Paris", "answer_start": 0}]


def test_training_commands_name_bad_config_keys(tmp_path, capsys):
    (tmp_path / "classify.yaml").write_text("max_lenght: 512\n")
    assert main(["text", "classify", "--config", str(tmp_path / "classify.yaml")]) == 1
    assert "unknown key 'max_lenght'" in capsys.readouterr().err
    (tmp_path / "charlm.yaml").write_text("eval_context: 64\neval_stride: 64\n")
    assert main(["text", "charlm", "--config", str(tmp_path / "charlm.yaml")]) == 1
    assert "stride" in capsys.readouterr().err
