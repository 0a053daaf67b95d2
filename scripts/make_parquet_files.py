"""Parquet files as the Hub and `datasets` hand them out, one per studio task, written by
`datasets` itself (`Dataset.to_parquet`, snappy) or by pyarrow from the table `datasets` holds
(other codecs), with `datasets`' features in the schema metadata either way, for the
browser test `tests/e2e/parquet.test.mjs`. Made at test time, never committed.

    python scripts/make_parquet_files.py OUT_DIR

Writes into OUT_DIR:
- sentiment.parquet: text + `label` (ClassLabel neg/pos), snappy (pyarrow's default);
- conll.parquet: `tokens` + `ner_tags` (a list of ClassLabel), zstd (polars' default);
- squad.parquet: SQuAD's columns with `answers` {text: [...], answer_start: [...]}, gzip;
- emotions.parquet: text + `labels` (a list of ClassLabel: GoEmotions' layout), snappy;
- stsb.parquet: sentence1, sentence2 and a float `label`, snappy;
- swag.parquet: SWAG's columns (sent1, sent2, ending0..3, `label` ClassLabel "0".."3"), snappy;
- brotli.parquet: the sentiment rows compressed with brotli (refused by name);
- cut.parquet: sentiment.parquet's first half (a download cut short);
- pointer.parquet: a Git LFS pointer saved under that name;
- expected.json: what the test checks (row counts and label names).
"""

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
from datasets import ClassLabel, Dataset, Features, Sequence, Value


def write(ds: Dataset, path: Path, compression: str = "snappy") -> None:
    """`datasets`' own writer for snappy (what it always uses); pyarrow's, on the table
    `datasets` holds (its schema keeps the `huggingface` features), for any other codec."""
    if compression == "snappy":
        ds.to_parquet(str(path))
    else:
        pq.write_table(ds.data.table, str(path), compression=compression)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    expected = {}

    words_pos = ["a warm and lovely film", "a wonderful, moving story", "bright and funny all the way", "I loved every minute"]
    words_neg = ["a dull and tedious film", "a waste of two hours", "flat, cold and far too long", "I hated every minute"]
    texts = [f"{w} ({i})" for i in range(6) for w in words_pos + words_neg]
    labels = [0 if j >= 4 else 1 for i in range(6) for j in range(8)]
    sentiment = Dataset.from_dict({"text": texts, "label": labels}, features=Features({"text": Value("string"), "label": ClassLabel(names=["neg", "pos"])}))
    write(sentiment, out / "sentiment.parquet")
    write(sentiment, out / "brotli.parquet", "brotli")
    expected["sentiment"] = {"rows": len(texts), "labels": {"neg": labels.count(0), "pos": labels.count(1)}}

    names = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    sentences = [
        (["Ann", "Lee", "flew", "to", "Oslo", "."], ["B-PER", "I-PER", "O", "O", "B-LOC", "O"]),
        (["Rome", "sleeps", "."], ["B-LOC", "O", "O"]),
        (["Bo", "lives", "in", "New", "York", "."], ["B-PER", "O", "O", "B-LOC", "I-LOC", "O"]),
    ] * 4
    conll = Dataset.from_dict(
        {"id": [str(i) for i in range(len(sentences))], "tokens": [s[0] for s in sentences], "ner_tags": [[names.index(t) for t in s[1]] for s in sentences]},
        features=Features({"id": Value("string"), "tokens": Sequence(Value("string")), "ner_tags": Sequence(ClassLabel(names=names))}),
    )
    write(conll, out / "conll.parquet", "zstd")
    expected["conll"] = {"sentences": len(sentences), "tags": ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"], "first": sentences[0][1]}

    context = "Harwick was founded in 1312 by Grace Kim, a weaver from the north."
    questions = [("When was Harwick founded?", "1312"), ("Who founded Harwick?", "Grace Kim"), ("Where was Grace Kim from?", "the north")] * 3
    squad = Dataset.from_dict(
        {
            "id": [f"q{i}" for i in range(len(questions))],
            "title": ["Harwick"] * len(questions),
            "context": [context] * len(questions),
            "question": [q for q, _ in questions],
            "answers": [{"text": [a], "answer_start": [context.index(a)]} for _, a in questions],
        },
        features=Features({"id": Value("string"), "title": Value("string"), "context": Value("string"), "question": Value("string"), "answers": Sequence({"text": Value("string"), "answer_start": Value("int32")})}),
    )
    write(squad, out / "squad.parquet", "gzip")
    expected["squad"] = {"questions": len(questions)}

    emotion_names = ["anger", "joy", "sadness"]
    emotion_rows = [("I am so angry and sad", [0, 2]), ("What a happy day", [1]), ("This makes me furious", [0]), ("Tears of joy", [1, 2])] * 5
    emotions = Dataset.from_dict(
        {"text": [t for t, _ in emotion_rows], "labels": [l for _, l in emotion_rows], "id": [f"e{i}" for i in range(len(emotion_rows))]},
        features=Features({"text": Value("string"), "labels": Sequence(ClassLabel(names=emotion_names)), "id": Value("string")}),
    )
    write(emotions, out / "emotions.parquet")
    expected["emotions"] = {"texts": len(emotion_rows), "labels": emotion_names, "counts": [sum(i in l for _, l in emotion_rows) for i in range(3)]}

    pairs = [("A man plays a guitar.", "A man is playing a guitar.", 4.8), ("A cat sleeps.", "A dog runs in a park.", 0.4), ("Kids swim in a lake.", "Children are swimming.", 4.0), ("A woman cooks.", "The sun is setting.", 0.0)] * 4
    stsb = Dataset.from_dict(
        {"sentence1": [a for a, _, _ in pairs], "sentence2": [b for _, b, _ in pairs], "label": [s for _, _, s in pairs], "idx": list(range(len(pairs)))},
        features=Features({"sentence1": Value("string"), "sentence2": Value("string"), "label": Value("float32"), "idx": Value("int32")}),
    )
    write(stsb, out / "stsb.parquet")
    expected["stsb"] = {"pairs": len(pairs)}

    swag_rows = [
        ("She opens the fridge.", "She", ["takes out the milk.", "flies to the moon.", "turns into a tree.", "eats the door."], 0),
        ("He ties his shoes.", "He", ["melts into the floor.", "walks out the door.", "sings to the shoes.", "becomes a shoe."], 1),
    ] * 4
    swag = Dataset.from_dict(
        {"sent1": [r[0] for r in swag_rows], "sent2": [r[1] for r in swag_rows], **{f"ending{k}": [r[2][k] for r in swag_rows] for k in range(4)}, "label": [r[3] for r in swag_rows]},
        features=Features({"sent1": Value("string"), "sent2": Value("string"), **{f"ending{k}": Value("string") for k in range(4)}, "label": ClassLabel(names=["0", "1", "2", "3"])}),
    )
    write(swag, out / "swag.parquet")
    expected["swag"] = {"questions": len(swag_rows)}

    whole = (out / "sentiment.parquet").read_bytes()
    (out / "cut.parquet").write_bytes(whole[: len(whole) // 2])
    (out / "pointer.parquet").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
    (out / "expected.json").write_text(json.dumps(expected, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
