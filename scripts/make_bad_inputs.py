#!/usr/bin/env python3
"""Writes tests/bad_inputs/: broken data files, broken checkpoints and awkward texts, each with
what bertbench must do with it (tests/bad_inputs/expected.json). Standard library only.

Two sizes are not committed but built by the tests themselves: a 100,000-row CSV and a CSV whose
one field is 10 MB (core/tests/bad_inputs.rs).

    python3 scripts/make_bad_inputs.py
"""
import gzip
import json
import os
import shutil
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "bad_inputs")
expected = {}


def write(rel, data, outcome, message):
    """`outcome`: "refused" (an error naming `message`) or "accepted" (loads; `message` is in a
    warning or a skipped-row reason, or "" when nothing needs saying)."""
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    expected[rel] = {"outcome": outcome, "message": message}


def good_rows(n=6):
    return "".join(f"{'a fine day' if i % 2 else 'a dull day'} number {i},{'pos' if i % 2 else 'neg'}\n" for i in range(n))


# ---------------------------------------------------------------------------------------------
# Data files (the studio's upload)

D = "data/"
write(D + "empty.csv", b"", "refused", "empty")
write(D + "only_whitespace.csv", "  \n\n \t \n", "refused", "empty")
write(D + "only_header.csv", "text,label\n", "refused", "has no rows")
write(D + "binary_png.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "refused", "NUL byte")
write(D + "zip_renamed.csv", b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(200), "refused", "zip archive")
write(D + "xlsx_renamed.csv", b"PK\x03\x04\x14\x00\x06\x00[Content_Types].xml" + bytes(30) + b"xl/workbook.xml" + bytes(100), "refused", "Excel workbook")
# Text as spreadsheets and old editors save it: decoded, and the report says how.
latin1 = "text,label\ncaf\xe9 au lait,pos\nna\xefve plot,neg\nd\xe9j\xe0 vu,pos\nso-so \xab film \xbb,neg\n"
write(D + "latin1.csv", latin1.encode("cp1252"), "accepted", "Windows-1252")
write(D + "utf16.csv", "text\tlabel\nhello there\tpos\nbye now\tneg\nhi again\tpos\nso long\tneg\n".encode("utf-16"), "accepted", "UTF-16")
write(D + "gzipped.csv.gz", gzip.compress(("text,label\n" + good_rows(6)).encode("utf-8"), mtime=0), "accepted", "gzip")
write(D + "truncated.csv.gz", gzip.compress(("text,label\n" + good_rows(6)).encode("utf-8"), mtime=0)[:30], "refused", "could not be decompressed")
write(D + "one_class.csv", "text,label\n" + "".join(f"good {i},pos\n" for i in range(10)), "refused", "at least two different labels")
write(D + "label_with_one_example.csv", "text,label\n" + good_rows(8) + "strange,meh\n", "refused", "meh")
write(D + "labels_numbers_and_strings.csv", "text,label\nfine,1\nbad,0\ngreat,positive\nawful,negative\nok,1\nmeh,0\nnice,positive\nugly,negative\n", "accepted", "")
write(D + "semicolon_delimited.csv", "text;label\nnice film;pos\nbad film;neg\ngreat cast;pos\nweak plot;neg\n", "accepted", "")
write(D + "wrong_delimiter_pipe.csv", "text|label\nnice film|pos\nbad film|neg\n", "refused", "label")
write(D + "ragged_rows.csv", "text,label\n" + good_rows(6) + "too,many,fields,here\nlonely\n", "accepted", "skipped")
write(D + "no_header.csv", good_rows(8), "accepted", "")
write(D + "unclosed_quote.csv", 'text,label\n"a quote that never ends,pos\nnext,neg\n' + good_rows(4), "refused", "label")
write(D + "empty_labels.csv", "text,label\n" + good_rows(6) + "no label here,\n,pos\n", "accepted", "skipped")
write(D + "only_text_column.csv", "text\nhello\nworld\n", "refused", "label")
write(D + "conflicting_duplicates.csv", "text,label\n" + good_rows(6) + "a dull day number 0,pos\n", "accepted", "repeat")
write(D + "bom_crlf.csv", "\ufefftext,label\r\n" + good_rows(6).replace("\n", "\r\n"), "accepted", "")
write(D + "nul_in_middle.tsv", "text\tlabel\nfine\tpos\nba\x00d\tneg\n", "refused", "NUL byte")
write(D + "html_in_text.csv", "text,label\n<script>alert(1)</script>,pos\n<img src=x onerror=alert(2)>,neg\n" + good_rows(4), "accepted", "")
write(D + "tsv_quoted.tsv", 'text\tlabel\n"tab\tinside"\tpos\nplain\tneg\n' + good_rows(4).replace(",", "\t"), "accepted", "")
write(D + "jsonl_invalid_line.jsonl", '{"text": "good", "label": "pos"}\n{"text": "bad", "label": \n{"text": "ok", "label": "neg"}\n{"text": "fine", "label": "pos"}\n{"text": "poor", "label": "neg"}\n', "accepted", "skipped")
write(D + "jsonl_not_objects.jsonl", '[1, 2]\n"text"\n42\n', "refused", "not a JSON object")
write(D + "jsonl_missing_label.jsonl", '{"text": "good"}\n{"text": "bad"}\n', "refused", "label")
write(D + "jsonl_nested_values.jsonl", '{"text": {"a": 1}, "label": "pos"}\n{"text": ["x"], "label": "neg"}\n{"text": "plain", "label": "pos"}\n{"text": "plain too", "label": "neg"}\n{"text": "more", "label": "pos"}\n{"text": "less", "label": "neg"}\n', "accepted", "")
write(D + "json_array_not_lines.jsonl", '[{"text": "good", "label": "pos"}, {"text": "bad", "label": "neg"}]', "refused", "only one example")
write(D + "numbers_only.csv", "1,2\n3,4\n5,6\n", "refused", "only one example")

# ---------------------------------------------------------------------------------------------
# Checkpoints (a folder: config.json, model.safetensors, vocab.txt / tokenizer.json)

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [w for w in "the a cat dog sat on mat good bad day film".split()]
CONFIG = {
    "architectures": ["BertModel"], "model_type": "bert", "vocab_size": len(VOCAB), "hidden_size": 8,
    "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 16,
    "type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
}


def tensors(cfg):
    h, i, v, p, t = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"], cfg["max_position_embeddings"], cfg["type_vocab_size"]
    out = {
        "embeddings.word_embeddings.weight": [v, h], "embeddings.position_embeddings.weight": [p, h],
        "embeddings.token_type_embeddings.weight": [t, h], "embeddings.LayerNorm.weight": [h], "embeddings.LayerNorm.bias": [h],
        "pooler.dense.weight": [h, h], "pooler.dense.bias": [h],
    }
    for layer in range(cfg["num_hidden_layers"]):
        pre = f"encoder.layer.{layer}."
        for name in ["query", "key", "value"]:
            out[pre + f"attention.self.{name}.weight"] = [h, h]
            out[pre + f"attention.self.{name}.bias"] = [h]
        out[pre + "attention.output.dense.weight"] = [h, h]
        out[pre + "attention.output.dense.bias"] = [h]
        out[pre + "attention.output.LayerNorm.weight"] = [h]
        out[pre + "attention.output.LayerNorm.bias"] = [h]
        out[pre + "intermediate.dense.weight"] = [i, h]
        out[pre + "intermediate.dense.bias"] = [i]
        out[pre + "output.dense.weight"] = [h, i]
        out[pre + "output.dense.bias"] = [h]
        out[pre + "output.LayerNorm.weight"] = [h]
        out[pre + "output.LayerNorm.bias"] = [h]
    return out


def safetensors(shapes, header_len=None):
    header, offset, blobs = {}, 0, []
    for k, (name, shape) in enumerate(sorted(shapes.items())):
        n = 1
        for d in shape:
            n *= d
        values = [((j * 7 + k * 3) % 11 - 5) * 0.02 for j in range(n)]
        blob = struct.pack(f"<{n}f", *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", header_len if header_len is not None else len(head)) + head + b"".join(blobs)


def checkpoint(name, outcome, message, config=CONFIG, weights=None, vocab="\n".join(VOCAB), tokenizer_json=None):
    folder = "checkpoints/" + name
    shutil.rmtree(os.path.join(ROOT, folder), ignore_errors=True)
    files = {"config.json": config if isinstance(config, (bytes, str)) else json.dumps(config, indent=1),
             "model.safetensors": weights if weights is not None else safetensors(tensors(CONFIG))}
    if vocab is not None:
        files["vocab.txt"] = vocab
    if tokenizer_json is not None:
        files["tokenizer.json"] = tokenizer_json
    for f, data in files.items():
        if data is None:
            continue
        path = os.path.join(ROOT, folder, f)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as out:
            out.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    expected[folder] = {"outcome": outcome, "message": message}


good = safetensors(tensors(CONFIG))
checkpoint("valid_control", "accepted", "")
checkpoint("truncated_weights", "refused", "truncated", weights=good[: len(good) // 2])
checkpoint("weights_cut_in_header", "refused", "model.safetensors", weights=good[:20])
checkpoint("empty_weights", "refused", "not a safetensors file", weights=b"")
checkpoint("weights_are_text", "refused", "model.safetensors", weights=b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 90000000\n")
checkpoint("huge_header_length", "refused", "header", weights=safetensors(tensors(CONFIG), header_len=2**62))
missing = tensors(CONFIG)
del missing["encoder.layer.0.attention.self.query.weight"]
checkpoint("missing_tensor", "refused", "missing", weights=safetensors(missing))
wrong = tensors(CONFIG)
wrong["encoder.layer.0.intermediate.dense.weight"] = [16, 4]
checkpoint("wrong_shape", "refused", "disagrees", weights=safetensors(wrong))
checkpoint("config_disagrees_with_weights", "refused", "disagrees", config=dict(CONFIG, hidden_size=16, intermediate_size=32))
checkpoint("config_not_json", "refused", "config.json", config="{ this is not json")
checkpoint("config_missing_fields", "refused", "config.json", config=json.dumps({"model_type": "bert"}))
checkpoint("config_heads_do_not_divide", "refused", "config.json", config=dict(CONFIG, num_attention_heads=3))
checkpoint("config_is_a_list", "refused", "config.json", config="[1, 2, 3]")
checkpoint("tokenizer_missing", "refused", "tokenizer", vocab=None)
checkpoint("tokenizer_json_malformed", "refused", "tokenizer", vocab=None, tokenizer_json='{"version": "1.0", "model": {"type": "WordPiece"')
checkpoint("vocab_without_specials", "refused", "tokenizer", vocab="the\ncat\nsat")
checkpoint("vocab_not_utf8", "refused", "tokenizer", vocab=b"[PAD]\n[UNK]\n\xff\xfe\n")
extra = tensors(CONFIG)
extra["encoder.layer.7.attention.self.query.weight"] = [8, 8]
checkpoint("unknown_extra_layer", "refused", "does not know", weights=safetensors(extra))

# ---------------------------------------------------------------------------------------------
# Texts (typed or pasted into the explorer)

T = "text/"
write(T + "empty.txt", "", "refused", "empty")
write(T + "only_whitespace.txt", " \t\n \u00a0\u2003 ", "refused", "empty")
write(T + "emoji.txt", "I love this film 😍🎬🍿 👍🏽 — 10/10 🔥", "accepted", "")
write(T + "cjk.txt", "这部电影很好看。映画はとても面白かった。영화가 정말 좋았어요.", "accepted", "")
write(T + "rtl_and_combining.txt", "مرحبا بالعالم — ẞ e\u0301 n\u0303 Z\u0335\u0321a\u0337l\u0334g\u0336o", "accepted", "")
write(T + "control_and_zero_width.txt", "zero\u200bwidth\u200djoin\u2060 bell\u0007 esc\u001b[31m red", "accepted", "")
write(T + "ten_thousand_tokens.txt", " ".join(f"word{i % 97}" for i in range(10000)), "accepted", "truncated")
write(T + "one_huge_word.txt", "a" * 20000, "accepted", "")
write(T + "html_markup.txt", "<b>bold</b> <script>alert('x')</script> &amp; &lt;", "accepted", "")

with open(os.path.join(ROOT, "expected.json"), "w") as f:
    json.dump(dict(sorted(expected.items())), f, indent=1)
    f.write("\n")
print(f"{len(expected)} bad inputs written to tests/bad_inputs")
