"""Parquet files as the Hub and `datasets` hand them out, one per studio task, written by
pyarrow with `datasets`' features in the schema metadata (the `huggingface` key, in the form
`datasets` 5 writes: `ClassLabel`, `List`, `Value`), for the browser test
`tests/e2e/parquet.test.mjs`. Made at test time, never committed. (pyarrow rather than
`datasets` itself: in the tests' Python, `sentence-transformers` would import `datasets` beside
the `transformers` 4 overlay, whose older `huggingface_hub` it cannot import with.)

    python scripts/make_parquet_files.py OUT_DIR

Writes into OUT_DIR:
- sentiment.parquet: text + `label` (ClassLabel neg/pos), snappy (pyarrow's and the Hub's default);
- conll.parquet: `tokens` + `ner_tags` (a list of ClassLabel), zstd (polars' default);
- squad.parquet: SQuAD's columns with `answers` {text: [...], answer_start: [...]}, gzip;
- emotions.parquet: text + `labels` (a list of ClassLabel: GoEmotions' layout), snappy;
- stsb.parquet: sentence1, sentence2 and a float32 `label`, snappy;
- swag.parquet: SWAG's columns (sent1, sent2, ending0..3, `label` ClassLabel "0".."3"), snappy;
- brotli.parquet: the sentiment rows compressed with brotli (refused by name);
- cut.parquet: sentiment.parquet's first half (a download cut short);
- pointer.parquet: a Git LFS pointer saved under that name;
- expected.json: what the test checks (row counts and label names).
"""

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def value(dtype):
    return {"dtype": dtype, "_type": "Value"}


def class_label(names):
    return {"names": names, "_type": "ClassLabel"}


def listed(feature):
    return {"feature": feature, "_type": "List"}


def write(columns, features, path, compression="snappy"):
    """A table of `columns` (name: pyarrow array) with `features` as `datasets` stores them."""
    table = pa.table(columns)
    table = table.replace_schema_metadata({"huggingface": json.dumps({"info": {"features": features}})})
    pq.write_table(table, str(path), compression=compression)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    expected = {}

    words_pos = ["a warm and lovely film", "a wonderful, moving story", "bright and funny all the way", "I loved every minute"]
    words_neg = ["a dull and tedious film", "a waste of two hours", "flat, cold and far too long", "I hated every minute"]
    texts = [f"{w} ({i})" for i in range(6) for w in words_pos + words_neg]
    labels = [0 if j >= 4 else 1 for i in range(6) for j in range(8)]
    sentiment = ({"text": pa.array(texts), "label": pa.array(labels, pa.int64())}, {"text": value("string"), "label": class_label(["neg", "pos"])})
    write(*sentiment, out / "sentiment.parquet")
    write(*sentiment, out / "brotli.parquet", "brotli")
    expected["sentiment"] = {"rows": len(texts), "labels": {"neg": labels.count(0), "pos": labels.count(1)}}

    names = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    sentences = [
        (["Ann", "Lee", "flew", "to", "Oslo", "."], ["B-PER", "I-PER", "O", "O", "B-LOC", "O"]),
        (["Rome", "sleeps", "."], ["B-LOC", "O", "O"]),
        (["Bo", "lives", "in", "New", "York", "."], ["B-PER", "O", "O", "B-LOC", "I-LOC", "O"]),
    ] * 4
    write(
        {"id": pa.array([str(i) for i in range(len(sentences))]), "tokens": pa.array([s[0] for s in sentences]),
         "ner_tags": pa.array([[names.index(t) for t in s[1]] for s in sentences], pa.list_(pa.int64()))},
        {"id": value("string"), "tokens": listed(value("string")), "ner_tags": listed(class_label(names))},
        out / "conll.parquet", "zstd")
    expected["conll"] = {"sentences": len(sentences), "tags": ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"], "first": sentences[0][1]}

    context = "Harwick was founded in 1312 by Grace Kim, a weaver from the north."
    questions = [("When was Harwick founded?", "1312"), ("Who founded Harwick?", "Grace Kim"), ("Where was Grace Kim from?", "the north")] * 3
    answers = pa.array([{"text": [a], "answer_start": [context.index(a)]} for _, a in questions],
                       pa.struct([("text", pa.list_(pa.string())), ("answer_start", pa.list_(pa.int32()))]))
    write(
        {"id": pa.array([f"q{i}" for i in range(len(questions))]), "title": pa.array(["Harwick"] * len(questions)),
         "context": pa.array([context] * len(questions)), "question": pa.array([q for q, _ in questions]), "answers": answers},
        {"id": value("string"), "title": value("string"), "context": value("string"), "question": value("string"),
         "answers": {"text": listed(value("string")), "answer_start": listed(value("int32"))}},
        out / "squad.parquet", "gzip")
    expected["squad"] = {"questions": len(questions)}

    emotion_names = ["anger", "joy", "sadness"]
    emotion_rows = [("I am so angry and sad", [0, 2]), ("What a happy day", [1]), ("This makes me furious", [0]), ("Tears of joy", [1, 2])] * 5
    write(
        {"text": pa.array([t for t, _ in emotion_rows]), "labels": pa.array([l for _, l in emotion_rows], pa.list_(pa.int64())),
         "id": pa.array([f"e{i}" for i in range(len(emotion_rows))])},
        {"text": value("string"), "labels": listed(class_label(emotion_names)), "id": value("string")},
        out / "emotions.parquet")
    expected["emotions"] = {"texts": len(emotion_rows), "labels": emotion_names, "counts": [sum(i in l for _, l in emotion_rows) for i in range(3)]}

    pairs = [("A man plays a guitar.", "A man is playing a guitar.", 4.8), ("A cat sleeps.", "A dog runs in a park.", 0.4), ("Kids swim in a lake.", "Children are swimming.", 4.0), ("A woman cooks.", "The sun is setting.", 0.0)] * 4
    write(
        {"sentence1": pa.array([a for a, _, _ in pairs]), "sentence2": pa.array([b for _, b, _ in pairs]),
         "label": pa.array([s for _, _, s in pairs], pa.float32()), "idx": pa.array(list(range(len(pairs))), pa.int32())},
        {"sentence1": value("string"), "sentence2": value("string"), "label": value("float32"), "idx": value("int32")},
        out / "stsb.parquet")
    expected["stsb"] = {"pairs": len(pairs)}

    swag_rows = [
        ("She opens the fridge.", "She", ["takes out the milk.", "flies to the moon.", "turns into a tree.", "eats the door."], 0),
        ("He ties his shoes.", "He", ["melts into the floor.", "walks out the door.", "sings to the shoes.", "becomes a shoe."], 1),
    ] * 4
    write(
        {"sent1": pa.array([r[0] for r in swag_rows]), "sent2": pa.array([r[1] for r in swag_rows]),
         **{f"ending{k}": pa.array([r[2][k] for r in swag_rows]) for k in range(4)}, "label": pa.array([r[3] for r in swag_rows], pa.int64())},
        {"sent1": value("string"), "sent2": value("string"), **{f"ending{k}": value("string") for k in range(4)}, "label": class_label(["0", "1", "2", "3"])},
        out / "swag.parquet")
    expected["swag"] = {"questions": len(swag_rows)}

    whole = (out / "sentiment.parquet").read_bytes()
    (out / "cut.parquet").write_bytes(whole[: len(whole) // 2])
    (out / "pointer.parquet").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
    (out / "expected.json").write_text(json.dumps(expected, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
