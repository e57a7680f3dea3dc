"""Extractive QA data: SQuAD-format JSON (v1.1 and v2.0) and TriviaQA converted to it as Longformer does.

SQuAD format: `{"version", "data": [{"title", "paragraphs": [{"context", "qas": [{"id", "question",
"answers": [{"text", "answer_start"}], "is_impossible"?}]}]}]}`. `answer_start` is a 0-based character
offset into the context; an answer whose text is not found there (`context[s:s + len(text)] != text`) is
kept for evaluation but counted in `SquadFile.mismatched` and never used as a training target.

TriviaQA (Wikipedia or Web questions with their evidence files) becomes one SQuAD question per (question,
evidence document) pair, id `QuestionId--Filename`, the context being the document's first `max_words`
whitespace-separated words (the TriviaQA conversion script Longformer uses keeps the first N NLTK tokens),
the answers every occurrence of every normalised alias in the lower-cased context, and the gold aliases in
an extra `aliases` field for evaluation.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dnabird.errors import InputFormatError
from dnabird.io import write_text_atomic


@dataclass(frozen=True)
class Answer:
    text: str
    start: int  # character offset into the context

    @property
    def end(self) -> int:
        return self.start + len(self.text)


@dataclass(frozen=True)
class QAExample:
    """One question over one context; `answers` empty for unanswerable (v2) or test questions."""

    id: str
    question: str
    context: str
    answers: tuple[Answer, ...] = ()
    is_impossible: bool = False
    aliases: tuple[str, ...] = ()  # TriviaQA: the normalised gold aliases (evaluation only)

    def located_answers(self) -> tuple[Answer, ...]:
        """The answers whose text is at their offset in the context (the usable training targets)."""
        return tuple(a for a in self.answers if self.context[a.start:a.end] == a.text)

    @property
    def gold_texts(self) -> list[str]:
        """Gold answers for evaluation: TriviaQA's aliases when present, else the answer texts."""
        return list(self.aliases) or [a.text for a in self.answers]


@dataclass
class SquadFile:
    examples: list[QAExample]
    version: str
    mismatched: int = 0  # answers whose text is not at their answer_start
    titles: list[str] = field(default_factory=list)


def _field(mapping, key, kind, where):
    if not isinstance(mapping, dict) or key not in mapping:
        raise InputFormatError(f"missing {key!r}", record=where)
    value = mapping[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise InputFormatError(f"{key!r} should be {getattr(kind, '__name__', kind)}, got {type(value).__name__}",
                               record=where)
    return value


def read_squad(path: str | os.PathLike) -> SquadFile:
    """Every question of a SQuAD-format file, in file order; errors name the file and the record."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputFormatError("SQuAD file not found", path=path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputFormatError(f"not valid JSON ({err})", path=path) from None
    try:
        articles = _field(data, "data", list, "top level")
        examples, titles, mismatched = [], [], 0
        for a, article in enumerate(articles):
            titles.append(str(article.get("title", "")) if isinstance(article, dict) else "")
            for p, paragraph in enumerate(_field(article, "paragraphs", list, f"data[{a}]")):
                where = f"data[{a}].paragraphs[{p}]"
                context = _field(paragraph, "context", str, where)
                for q, qa in enumerate(_field(paragraph, "qas", list, where)):
                    where_q = f"{where}.qas[{q}]"
                    answers = tuple(Answer(_field(x, "text", str, where_q), _field(x, "answer_start", int, where_q))
                                    for x in _field(qa, "answers", list, where_q))
                    example = QAExample(id=str(_field(qa, "id", (str, int), where_q)),
                                        question=_field(qa, "question", str, where_q), context=context,
                                        answers=answers, is_impossible=bool(qa.get("is_impossible", False)),
                                        aliases=tuple(qa.get("aliases", ())))
                    mismatched += len(answers) - len(example.located_answers())
                    examples.append(example)
    except InputFormatError as err:
        raise InputFormatError(str(err), path=path) from None
    return SquadFile(examples, str(data.get("version", "")), mismatched, titles)


def first_words(text: str, max_words: int) -> str:
    """The first `max_words` whitespace-separated words of `text`, paragraphs (lines) kept apart by newlines."""
    kept, count = [], 0
    for paragraph in text.split("\n"):
        words = paragraph.split()[: max_words - count]
        if words:
            kept.append(" ".join(words))
            count += len(words)
        if count >= max_words:
            break
    return "\n".join(kept)


def answer_occurrences(context: str, aliases: list[str]) -> list[Answer]:
    """Every occurrence of every alias in the lower-cased `context` (aliases are TriviaQA's lower-case
    normalised forms), as answers spelling the context's own characters; overlapping hits keep the earlier,
    then the longer one."""
    lowered = context.lower()
    hits = sorted({(m.start(), len(alias)) for alias in aliases if alias
                   for m in re.finditer(re.escape(alias), lowered)}, key=lambda hit: (hit[0], -hit[1]))
    answers, reached = [], -1
    for start, length in hits:
        if start >= reached:
            answers.append(Answer(context[start:start + length], start))
            reached = start + length
    return answers


def triviaqa_to_squad(qa_path: str | os.PathLike, evidence_dir: str | os.PathLike, out: str | os.PathLike, *,
                      max_words: int = 4096, keep_unanswered: bool = True) -> dict:
    """Convert a TriviaQA `qa/*.json` file and its `evidence/` folder into a SQuAD-format file at `out`.

    Returns counts: questions, pairs written, pairs whose evidence file is missing, pairs with no answer in
    the kept words (written only with `keep_unanswered`, for evaluation). Answers come from
    `Answer.NormalizedAliases`; questions without an `Answer` (test files) get none.
    """
    qa_path, evidence_dir = Path(qa_path), Path(evidence_dir)
    try:
        data = json.loads(qa_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise InputFormatError(f"cannot read TriviaQA JSON ({err})", path=qa_path) from None
    counts = {"questions": 0, "pairs": 0, "missing_evidence": 0, "unanswered": 0}
    articles = []
    for index, datum in enumerate(_field(data, "Data", list, "top level")):
        counts["questions"] += 1
        question = _field(datum, "Question", str, f"Data[{index}]")
        qid = str(_field(datum, "QuestionId", str, f"Data[{index}]"))
        aliases = list(datum.get("Answer", {}).get("NormalizedAliases", []))
        for source, folder in (("EntityPages", "wikipedia"), ("SearchResults", "web")):
            for page in datum.get(source, []):
                filename = page.get("Filename")
                path = evidence_dir / folder / filename if filename else None
                if path is None or not path.is_file():
                    counts["missing_evidence"] += 1
                    continue
                context = first_words(path.read_text(encoding="utf-8", errors="replace"), max_words)
                answers = answer_occurrences(context, aliases)
                if not answers:
                    counts["unanswered"] += 1
                    if not keep_unanswered:
                        continue
                qa = {"id": f"{qid}--{filename}", "question": question, "aliases": aliases,
                      "answers": [{"text": a.text, "answer_start": a.start} for a in answers]}
                articles.append({"title": page.get("Title", ""), "paragraphs": [{"context": context, "qas": [qa]}]})
                counts["pairs"] += 1
    write_text_atomic(out, json.dumps({"version": "triviaqa-as-squad", "data": articles}, ensure_ascii=False))
    return counts
