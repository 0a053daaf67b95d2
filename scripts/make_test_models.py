#!/usr/bin/env python3
"""Small random-weight Hugging Face models of every family and format bertbench reads, and what
PyTorch `transformers` computes with them, for the tests to check against.

    python3 scripts/make_test_models.py tests/models [GROUP...]

writes one folder per case (what `save_pretrained` writes, or what older `transformers` did) and an
`expected.json` in each: for every test text, the token ids `AutoTokenizer` gives, the last hidden
state of the encoder, and where the model has a head, its output (the top predictions at each
mask, or the class probabilities). No download: `transformers` builds each model from a config,
seeded, and the tokenizers are made here from a small vocabulary. `cargo xtask test` runs it
before the tests that read the folders (core/tests/families.rs, the browser's model tests).
Naming groups (`bert`, `roberta`, `electra`, `sentencepiece`, `electra-small`, `albert`, `mpnet`,
`modernbert`, `deberta`, `spm-files`, `heads`: the last on the others' encoders) makes
only theirs; the index lists every folder there.
"""
import json
import os
import shutil
import sys

import torch
import transformers
from tokenizers import ByteLevelBPETokenizer, SentencePieceUnigramTokenizer, Tokenizer
from tokenizers.models import Unigram
from transformers import (
    AlbertConfig,
    AlbertForMaskedLM,
    AlbertForPreTraining,
    AlbertForSequenceClassification,
    AlbertTokenizer,
    AutoModel,
    AutoTokenizer,
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertForQuestionAnswering,
    BertForTokenClassification,
    BertModel,
    BertTokenizerFast,
    CamembertConfig,
    CamembertForMaskedLM,
    CamembertForSequenceClassification,
    CamembertTokenizerFast,
    DebertaV2Config,
    DebertaV2ForMaskedLM,
    DebertaV2ForSequenceClassification,
    DebertaV2Tokenizer,
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForSequenceClassification,
    DistilBertTokenizerFast,
    ElectraConfig,
    ElectraForMaskedLM,
    ElectraForPreTraining,
    ElectraForSequenceClassification,
    ElectraTokenizerFast,
    MPNetConfig,
    MPNetForMaskedLM,
    MPNetForSequenceClassification,
    MPNetTokenizer,
    ModernBertConfig,
    ModernBertForMaskedLM,
    ModernBertForMultipleChoice,
    ModernBertForQuestionAnswering,
    ModernBertForSequenceClassification,
    ModernBertForTokenClassification,
    PreTrainedTokenizerFast,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaForSequenceClassification,
    RobertaTokenizerFast,
    XLMRobertaConfig,
    XLMRobertaForMaskedLM,
    XLMRobertaTokenizerFast,
)

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "I deposited the cheque at the bank.",
    "We had a picnic on the river bank near Paris.",
    "Unbelievably, the tokenizer splits uncommonly long words into pieces!",
    "Hello World, said Alice to Bob in London.",
    "The movie was wonderful and the actors were great.",
    "I hated every minute of it; the plot was terrible.",
    "How old are you? What is your age?",
]
TEXTS = [
    ("The quick brown fox jumps over the lazy dog.", None),
    ("Hello World, said Alice to BOB in London!", None),
    ("Unbelievably, zyx splits uncommonly into pieces.", None),
    ("How old are you?", "What is your age?"),
]
# Masked texts, written with the family's own mask token in place of {mask}.
MASKED = ["The quick brown {mask} jumps over the lazy dog.", "I deposited the {mask} at the {mask}."]
# What the SentencePiece families (XLM-RoBERTa, CamemBERT) also learn and are checked on:
# accents, a sharp s, words cut into several `▁`-marked pieces, a French/German pair.
MULTILINGUAL = [
    "Le café près de la rivière était très agréable.",
    "Die Straße über den Fluss führt nach München.",
    "Où est la gare? Wie alt bist du?",
]
MULTILINGUAL_TEXTS = TEXTS + [(MULTILINGUAL[0], None), ("Où est la gare?", MULTILINGUAL[1])]
MULTILINGUAL_MASKED = MASKED + ["Le café près de la {mask} était très agréable."]
TOP_K = 5


def wordpiece_vocab(cased):
    """Specials, every character alone and as a continuation, then the corpus's words."""
    text = " ".join(CORPUS)
    if not cased:
        text = text.lower()
    chars = sorted(set(c for c in text if not c.isspace()) | set("abcdefghijklmnopqrstuvwxyz0123456789"))
    words = sorted(set(w.strip(".,!?;") for w in text.split()) - {""})
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + ["##" + c for c in chars]
    pieces += words + ["##ly", "##ing", "##able"]
    return list(dict.fromkeys(pieces))  # one id per piece, in first-seen order


def write_vocab(folder, pieces):
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(pieces) + "\n")


def bert_config(vocab_size, **extra):
    return BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=64, **extra)


def jitter(model):
    """Moves every weight off its initial value (LayerNorm at identity, zero biases), so a weight
    read into the wrong place, or not read at all, shows in the outputs."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    return model.eval()


def hidden_and_ids(model, tok, family, texts=TEXTS, every_layer=False):
    """For every test text: ids, each token's character offsets (`(0, 0)` for specials) and the
    encoder's last hidden state (and with `every_layer`, the input to layer 0 and every layer's
    output, as `output_hidden_states` gives them)."""
    base = model.base_model if hasattr(model, "base_model") else model
    rows = []
    for text, pair in texts:
        enc = tok(text, pair, return_tensors="pt", return_offsets_mapping=True)
        offsets = enc.pop("offset_mapping")[0].tolist()
        with torch.no_grad():
            out = base(**{k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")},
                       output_hidden_states=every_layer)
        row = {
            "text": text,
            "pair": pair,
            "input_ids": enc["input_ids"][0].tolist(),
            "offsets": offsets,
            "last_hidden_state": out.last_hidden_state[0].tolist(),
        }
        if every_layer:
            row["hidden_states"] = [h[0].tolist() for h in out.hidden_states]
        rows.append(row)
    return rows


def fill_mask(model, tok, masked=MASKED):
    rows = []
    for template in masked:
        text = template.replace("{mask}", tok.mask_token)
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            out = model(**{k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")})
            # `*ForPreTraining` names its MLM logits apart from its pair logits.
            logits = (out.prediction_logits if hasattr(out, "prediction_logits") else out.logits)[0]
        masks = (enc["input_ids"][0] == tok.mask_token_id).nonzero().flatten().tolist()
        predictions = []
        for at in masks:
            probs = logits[at].softmax(-1)
            top = probs.topk(TOP_K)
            # The pieces too, for a folder whose vocabulary is in no file a test can read
            # (SentencePiece's own model file).
            predictions.append({"position": at, "ids": top.indices.tolist(), "probs": top.values.tolist(),
                                "pieces": tok.convert_ids_to_tokens(top.indices.tolist())})
        rows.append({"text": text, "input_ids": enc["input_ids"][0].tolist(), "masks": predictions})
    return rows


def classify(model, tok, texts=TEXTS):
    """Each test text's class probabilities (a token classifier's: one list per token)."""
    rows = []
    for text, pair in texts:
        enc = tok(text, pair, return_tensors="pt")
        with torch.no_grad():
            logits = model(**enc).logits[0]
        rows.append({"text": text, "pair": pair, "probs": logits.softmax(-1).tolist()})
    return rows


def pipeline_classify(model, tok, texts=TEXTS):
    """What `transformers`' text-classification pipeline gives each test text (or pair) with
    every label's score (`top_k=None`), in id order, with the logits it applied its default
    function to (softmax, sigmoid or none, as `problem_type` and `num_labels` say)."""
    pipe = transformers.pipeline("text-classification", model=model, tokenizer=tok, top_k=None, device="cpu")
    labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
    rows = []
    for text, pair in texts:
        out = pipe({"text": text, "text_pair": pair} if pair is not None else text)
        # One input's scores, as a list of one list where the pipeline batches.
        out = out[0] if out and isinstance(out[0], list) else out
        scores = {d["label"]: d["score"] for d in out}
        enc = tok(text, pair, return_tensors="pt")
        with torch.no_grad():
            logits = model(**enc).logits[0]
        rows.append({"text": text, "pair": pair, "labels": labels, "probs": [scores[l] for l in labels], "logits": logits.tolist()})
    return rows


def tag_words(model, tok):
    """A token classifier's words as the page tags them: each single test text's words (the
    pre-tokenizer's, as `word_ids` gives them) with the tag probabilities at each word's first
    piece."""
    rows = []
    for text, pair in TEXTS:
        if pair is not None:
            continue
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            probs = model(**enc).logits[0].softmax(-1)
        firsts = {}
        for position, word in enumerate(enc.word_ids(0)):
            if word is not None:
                firsts.setdefault(word, position)
        words = [text[slice(*enc.word_to_chars(w))] for w in sorted(firsts)]
        rows.append({"text": text, "words": words, "word_probs": [probs[firsts[w]].tolist() for w in sorted(firsts)]})
    return rows


def answer_logits(model, tok):
    """A question-answering model's start and end logits over each (question, passage) pair."""
    cases = [
        ("who fed the cat?", "the cat sat on the mat and tom fed the cat while the dog slept in the garden all day long."),
        ("where is the dog?", "the dog is asleep in the garden."),
    ]
    rows = []
    for question, context in cases:
        enc = tok(question, context, return_tensors="pt")
        with torch.no_grad():
            out = model(**enc)
        rows.append({"question": question, "context": context, "input_ids": enc["input_ids"][0].tolist(),
                     "start_logits": out.start_logits[0].tolist(), "end_logits": out.end_logits[0].tolist()})
    return rows


def choose(model, tok):
    """A multiple-choice model's probability of each ending: the premise read with each ending,
    the endings padded to the longest and run side by side, as `run_swag.py` does."""
    cases = [
        ("The movie was wonderful and", ["the actors were great.", "the dog jumps over London.", "I hated every minute of it; the plot was terrible."]),
        ("I deposited the cheque", ["at the bank.", "on the river bank near Paris.", "over the lazy fox."]),
    ]
    rows = []
    for premise, endings in cases:
        enc = tok([premise] * len(endings), endings, padding=True, return_tensors="pt")
        with torch.no_grad():
            logits = model(**{k: v.unsqueeze(0) for k, v in enc.items()}).logits[0]
        ids = [[t for t, m in zip(row, mask) if m] for row, mask in zip(enc["input_ids"].tolist(), enc["attention_mask"].tolist())]
        rows.append({"premise": premise, "endings": endings, "input_ids": ids, "probs": logits.softmax(-1).tolist()})
    return rows


def save(folder, model, tok, family, description, texts=TEXTS, every_layer=False, **heads):
    expected = {
        "family": family,
        "description": description,
        "transformers": transformers.__version__,
        "num_parameters": sum(p.numel() for p in (model.base_model if hasattr(model, "base_model") else model).parameters()),
        "texts": hidden_and_ids(model, tok, family, texts, every_layer),
    }
    expected.update(heads)
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f)


def fresh(out, name):
    folder = os.path.join(out, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    return folder


def uncased_folder(out, name, seed, pieces, tokenizer_class=BertTokenizerFast):
    """A fresh folder with the uncased vocab.txt and its tokenizer; the seed set for the model."""
    folder = fresh(out, name)
    write_vocab(folder, pieces)
    tok = tokenizer_class(os.path.join(folder, "vocab.txt"), do_lower_case=True)
    torch.manual_seed(seed)
    return folder, tok


def make_bert_family(out):
    pieces = wordpiece_vocab(cased=False)

    # BERT with its masked-language-model head, tokenizer.json, model.safetensors (f32).
    folder, tok = uncased_folder(out, "bert-mlm", 1, pieces)
    model = jitter(BertForMaskedLM(bert_config(len(pieces))))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    os.remove(os.path.join(folder, "vocab.txt")) if os.path.exists(os.path.join(folder, "tokenizer.json")) else None
    save(folder, model, tok, "bert", "BertForMaskedLM, uncased, tokenizer.json, model.safetensors", fill_mask=fill_mask(model, tok))

    # A cased BERT with only vocab.txt and tokenizer_config.json (do_lower_case: false).
    cased = wordpiece_vocab(cased=True)
    folder = fresh(out, "bert-cased-vocab")
    write_vocab(folder, cased)
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": False, "tokenizer_class": "BertTokenizer", "model_max_length": 64}, f)
    tok = AutoTokenizer.from_pretrained(folder)
    assert tok.tokenize("Hello")[0] == "Hello", "the reference tokenizer must keep case"
    torch.manual_seed(2)
    model = jitter(BertModel(bert_config(len(cased))))
    model.save_pretrained(folder)
    save(folder, model, tok, "bert", "BertModel, cased, vocab.txt + tokenizer_config.json only")

    # Sharded safetensors with their index.
    folder, tok = uncased_folder(out, "bert-sharded", 3, pieces)
    model = jitter(BertModel(bert_config(len(pieces))))
    model.save_pretrained(folder, max_shard_size="40KB")
    tok.save_pretrained(folder)
    shards = [n for n in os.listdir(folder) if n.endswith(".safetensors")]
    assert len(shards) > 1 and os.path.exists(os.path.join(folder, "model.safetensors.index.json")), shards
    save(folder, model, tok, "bert", f"BertModel, sharded safetensors ({len(shards)} shards + index)")

    # pytorch_model.bin (the zip-pickled state dict older transformers wrote), BertForMaskedLM
    # with its `bert.` prefix and a tied decoder.
    folder, tok = uncased_folder(out, "bert-bin", 4, pieces)
    model = jitter(BertForMaskedLM(bert_config(len(pieces))))
    model.config.save_pretrained(folder)
    torch.save(model.state_dict(), os.path.join(folder, "pytorch_model.bin"))
    tok.save_pretrained(folder)
    save(folder, model, tok, "bert", "BertForMaskedLM, pytorch_model.bin", fill_mask=fill_mask(model, tok))

    # bf16 weights: the reference runs the same bf16 values widened to f32.
    folder, tok = uncased_folder(out, "bert-bf16", 5, pieces)
    model = jitter(BertModel(bert_config(len(pieces))))
    model.to(torch.bfloat16).save_pretrained(folder)
    tok.save_pretrained(folder)
    model = model.to(torch.float32)
    save(folder, model, tok, "bert", "BertModel, bfloat16 model.safetensors")

    # A sequence classifier with id2label.
    folder, tok = uncased_folder(out, "bert-classifier", 6, pieces)
    config = bert_config(len(pieces), num_labels=3, id2label={0: "negative", 1: "neutral", 2: "positive"},
                         label2id={"negative": 0, "neutral": 1, "positive": 2})
    model = jitter(BertForSequenceClassification(config))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    save(folder, model, tok, "bert", "BertForSequenceClassification with id2label", classify=classify(model, tok))

    # A token classifier (named entities, BIO tags): BertForTokenClassification with id2label.
    folder, tok = uncased_folder(out, "bert-ner", 11, pieces)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    config = bert_config(len(pieces), num_labels=len(tags), id2label=dict(enumerate(tags)),
                         label2id={t: i for i, t in enumerate(tags)})
    model = jitter(BertForTokenClassification(config))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    save(folder, model, tok, "bert", "BertForTokenClassification (BIO tags) with id2label",
         classify=classify(model, tok), tag=tag_words(model, tok))

    # An extractive question-answering model: BertForQuestionAnswering (qa_outputs, no pooler).
    folder, tok = uncased_folder(out, "bert-qa", 15, pieces)
    model = jitter(BertForQuestionAnswering(bert_config(len(pieces))))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    save(folder, model, tok, "bert", "BertForQuestionAnswering", answer=answer_logits(model, tok))

    # DistilBERT with its masked-language-model head.
    folder, tok = uncased_folder(out, "distilbert", 7, pieces, DistilBertTokenizerFast)
    config = DistilBertConfig(vocab_size=len(pieces), dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                              max_position_embeddings=64)
    model = jitter(DistilBertForMaskedLM(config))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    save(folder, model, tok, "distilbert", "DistilBertForMaskedLM", fill_mask=fill_mask(model, tok))

    # A DistilBertForSequenceClassification (pre_classifier → ReLU → classifier) with id2label.
    folder, tok = uncased_folder(out, "distilbert-classifier", 10, pieces, DistilBertTokenizerFast)
    config = DistilBertConfig(vocab_size=len(pieces), dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                              max_position_embeddings=64, num_labels=3,
                              id2label={0: "negative", 1: "neutral", 2: "positive"},
                              label2id={"negative": 0, "neutral": 1, "positive": 2})
    model = jitter(DistilBertForSequenceClassification(config))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    save(folder, model, tok, "distilbert", "DistilBertForSequenceClassification with id2label", classify=classify(model, tok))


def make_electra(out):
    """ELECTRA with embeddings as wide as the encoder (as the base and large models have): the
    discriminator, and the generator with its MLM head."""
    pieces = wordpiece_vocab(cased=False)
    size = dict(vocab_size=len(pieces), embedding_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=64)
    folder, tok = uncased_folder(out, "electra", 12, pieces, ElectraTokenizerFast)
    model = jitter(ElectraForPreTraining(ElectraConfig(**size)))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    save(folder, model, tok, "electra", "ElectraForPreTraining (the discriminator)")
    folder, tok = uncased_folder(out, "electra-generator", 13, pieces, ElectraTokenizerFast)
    model = jitter(ElectraForMaskedLM(ElectraConfig(**size)))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    save(folder, model, tok, "electra", "ElectraForMaskedLM (the generator)", fill_mask=fill_mask(model, tok))
    folder, tok = uncased_folder(out, "electra-classifier", 14, pieces, ElectraTokenizerFast)
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    config = ElectraConfig(**size, num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()})
    model = jitter(ElectraForSequenceClassification(config))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    save(folder, model, tok, "electra", "ElectraForSequenceClassification with id2label", classify=classify(model, tok))


def make_electra_small(out):
    """ELECTRA-small's shape: embeddings narrower than the encoder (16 → 32 here, 128 → 256
    there), projected up by `embeddings_project`; the discriminator, a classifier on it, and the
    generator whose MLM head is embedding-wide and tied to the word embeddings."""
    pieces = wordpiece_vocab(cased=False)
    size = dict(vocab_size=len(pieces), embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=64)
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    cases = (
        ("electra-small", 18, ElectraForPreTraining, {}, "ElectraForPreTraining (the discriminator), embeddings_project 16 → 32"),
        ("electra-small-generator", 19, ElectraForMaskedLM, {}, "ElectraForMaskedLM (the generator), embeddings_project 16 → 32"),
        ("electra-small-classifier", 20, ElectraForSequenceClassification,
         {"num_labels": 3, "id2label": labels, "label2id": {v: k for k, v in labels.items()}},
         "ElectraForSequenceClassification with id2label, embeddings_project 16 → 32"),
    )
    for name, seed, model_class, extra, described in cases:
        folder, tok = uncased_folder(out, name, seed, pieces, ElectraTokenizerFast)
        model = jitter(model_class(ElectraConfig(**size, **extra)))
        assert hasattr(model.electra, "embeddings_project")
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
        heads = {}
        if model_class is ElectraForMaskedLM:
            heads["fill_mask"] = fill_mask(model, tok)
        if extra:
            heads["classify"] = classify(model, tok)
        save(folder, model, tok, "electra", described, **heads)


def make_albert(out):
    """ALBERT: 16-wide embeddings projected up to 32 (`embedding_hidden_mapping_in`), one layer
    shared by all three, `gelu_new`; a SentencePiece Unigram tokenizer.json trained here and
    saved through `AlbertTokenizer` (lowercased, accents stripped, `[CLS]`/`[SEP]`/`<pad>`/
    `[MASK]`). `AlbertForPreTraining` (MLM and sentence-order heads) and a classifier."""
    unigram = unigram_tokenizer(["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"])
    vocab = [tuple(v) for v in json.loads(unigram.to_str())["model"]["vocab"]]
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    cases = (
        ("albert", 21, AlbertForPreTraining, {}),
        ("albert-classifier", 22, AlbertForSequenceClassification,
         {"num_labels": 3, "id2label": labels, "label2id": {v: k for k, v in labels.items()}}),
    )
    for name, seed, model_class, extra in cases:
        folder = fresh(out, name)
        # Segment ids as its tokenizer.json's template gives them (B in segment 1, as ALBERT was
        # pretrained and transformers 4 passed them); transformers 5's AlbertTokenizer leaves
        # them out unless `model_input_names` asks, which would run every pair as segment 0.
        AlbertTokenizer(vocab=vocab, model_input_names=["input_ids", "token_type_ids", "attention_mask"]).save_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        assert type(tok).__name__ == "AlbertTokenizer", type(tok)
        assert "token_type_ids" in tok("a", "b"), tok.model_input_names
        torch.manual_seed(seed)
        config = AlbertConfig(vocab_size=len(tok), embedding_size=16, hidden_size=32, num_hidden_layers=3,
                              num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                              pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id,
                              **extra)
        model = jitter(model_class(config))
        model.save_pretrained(folder)
        described = f"{model_class.__name__}, one shared layer, embeddings 16 → 32, SentencePiece Unigram tokenizer.json"
        if extra:
            save(folder, model, tok, "albert", described + " with id2label", MULTILINGUAL_TEXTS,
                 classify=classify(model, tok, MULTILINGUAL_TEXTS))
        else:
            save(folder, model, tok, "albert", described, MULTILINGUAL_TEXTS,
                 fill_mask=fill_mask(model, tok, MULTILINGUAL_MASKED), sentence_order=sentence_order(model, tok))


def sentence_order(model, tok):
    """`AlbertForPreTraining`'s sentence-order probabilities for each test pair."""
    rows = []
    for text, pair in MULTILINGUAL_TEXTS:
        if pair is None:
            continue
        enc = tok(text, pair, return_tensors="pt")
        with torch.no_grad():
            logits = model(**enc).sop_logits[0]
        rows.append({"text": text, "pair": pair, "probs": logits.softmax(-1).tolist()})
    return rows


def make_mpnet(out):
    """MPNet: BERT's blocks under its own names with a relative position bias in attention (32
    buckets), RoBERTa's positions and specials (`<s> A </s></s> B </s>`) around WordPiece pieces,
    no segments. `MPNetForMaskedLM` and a classifier (RoBERTa's head: dense → tanh → out_proj).
    The MLM model's expected.json also holds `transformers`' bucket of every distance up to 600,
    so the bucketing is checked far beyond the test texts' lengths."""
    from transformers.models.mpnet.modeling_mpnet import MPNetEncoder

    pieces = wordpiece_vocab(cased=False)
    pieces = ["<s>", "<pad>", "</s>", "<unk>"] + [p for p in pieces if p not in ("[PAD]", "[CLS]", "[SEP]", "[MASK]")] + ["<mask>"]
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    cases = (
        ("mpnet", 23, MPNetForMaskedLM, {}),
        ("mpnet-classifier", 24, MPNetForSequenceClassification,
         {"num_labels": 3, "id2label": labels, "label2id": {v: k for k, v in labels.items()}}),
    )
    for name, seed, model_class, extra in cases:
        folder = fresh(out, name)
        MPNetTokenizer(vocab={p: i for i, p in enumerate(pieces)}, unk_token="[UNK]").save_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        assert type(tok).__name__ == "MPNetTokenizer" and tok.pad_token_id == 1, (type(tok), tok.pad_token_id)
        torch.manual_seed(seed)
        # max_position_embeddings 514 as all-mpnet-base-v2's: the bias's far buckets are reached.
        config = MPNetConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=64, max_position_embeddings=514, **extra)
        model = jitter(model_class(config))
        model.save_pretrained(folder)
        described = f"{model_class.__name__}, relative position bias, WordPiece with <s>/</s> specials"
        if extra:
            save(folder, model, tok, "mpnet", described + " with id2label", classify=classify(model, tok))
        else:
            distances = torch.arange(-600, 601)
            buckets = {"from": -600, "buckets": MPNetEncoder.relative_position_bucket(distances).tolist()}
            # A text long enough that the far buckets show in the hidden states.
            long = (" ".join(CORPUS) + " ") * 4
            save(folder, model, tok, "mpnet", described, TEXTS + [(long, None)], fill_mask=fill_mask(model, tok),
                 relative_buckets=buckets)


def make_modernbert(out):
    """ModernBERT: rotary positions, pre-norm layers, GeGLU, every third layer global and the
    others local (a window of 16 tokens: 8 either side, which the long text exceeds many times),
    byte-level BPE with `[CLS] A [SEP] B [SEP]` all in segment 0, as ModernBERT's tokenizer.json.
    `ModernBertForMaskedLM` without biases (its defaults), and a classifier with every bias on,
    mean pooling and other rotary bases, so both settings of each flag are read. Every layer's
    hidden states are kept. Its token-classification (no biases), question-answering (every bias)
    and multiple-choice (first-token pooling, a bias on the head's dense layer only) classes, each
    with its `head` before the output layer."""
    from tokenizers import AddedToken
    from tokenizers.processors import TemplateProcessing

    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 4, vocab_size=400, min_frequency=1, special_tokens=specials)
    inner = bpe._tokenizer
    cls, sep = inner.token_to_id("[CLS]"), inner.token_to_id("[SEP]")
    inner.post_processor = TemplateProcessing(single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:0 [SEP]:0",
                                              special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    # ModernBERT's [MASK] takes the space before it, as RoBERTa's <mask>.
    inner.add_special_tokens([AddedToken("[MASK]", lstrip=True, special=True)])
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    long = (" ".join(CORPUS) + " ") * 2
    cases = (
        ("modernbert", 26, ModernBertForMaskedLM, {}),
        ("modernbert-classifier", 27, ModernBertForSequenceClassification,
         {"num_labels": 3, "id2label": labels, "label2id": {v: k for k, v in labels.items()}, "classifier_pooling": "mean",
          "attention_bias": True, "mlp_bias": True, "norm_bias": True, "classifier_bias": True,
          "global_rope_theta": 40000.0, "local_rope_theta": 500.0}),
        ("modernbert-ner", 30, ModernBertForTokenClassification,
         {"num_labels": len(tags), "id2label": dict(enumerate(tags)), "label2id": {t: i for i, t in enumerate(tags)}}),
        ("modernbert-qa", 31, ModernBertForQuestionAnswering,
         {"attention_bias": True, "mlp_bias": True, "norm_bias": True, "classifier_bias": True}),
        ("modernbert-choice", 32, ModernBertForMultipleChoice, {"classifier_pooling": "cls", "classifier_bias": True}),
    )
    for name, seed, model_class, extra in cases:
        folder = fresh(out, name)
        tok = PreTrainedTokenizerFast(tokenizer_object=inner, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                                      pad_token="[PAD]", mask_token="[MASK]", model_input_names=["input_ids", "attention_mask"])
        tok.save_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        torch.manual_seed(seed)
        config = ModernBertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=4, num_attention_heads=4,
                                  intermediate_size=48, max_position_embeddings=512, local_attention=16,
                                  global_attn_every_n_layers=3, pad_token_id=tok.pad_token_id, bos_token_id=cls,
                                  eos_token_id=sep, cls_token_id=cls, sep_token_id=sep, **extra)
        assert config.layer_types == ["full_attention", "sliding_attention", "sliding_attention", "full_attention"], config.layer_types
        model = jitter(model_class(config))
        if model_class is ModernBertForMultipleChoice:
            # Endings' pooled vectors of a tiny random model are close: a larger output layer
            # sets their probabilities apart, so a wrong read shows.
            with torch.no_grad():
                model.classifier.weight.mul_(30)
        model.save_pretrained(folder)
        texts = TEXTS + [(long, None)]
        assert len(tok(long)["input_ids"]) > 4 * config.local_attention, "the long text must exceed the window"
        described = f"{model_class.__name__}, rotary positions, local attention (window 16), byte-level BPE tokenizer.json"
        if model_class is ModernBertForTokenClassification:
            save(folder, model, tok, "modernbert", described + ", BIO tags", classify=classify(model, tok), tag=tag_words(model, tok))
        elif model_class is ModernBertForQuestionAnswering:
            save(folder, model, tok, "modernbert", described + ", every bias", answer=answer_logits(model, tok))
        elif model_class is ModernBertForMultipleChoice:
            save(folder, model, tok, "modernbert", described + ", first-token pooling", choose=choose(model, tok))
        elif extra:
            save(folder, model, tok, "modernbert", described + ", every bias, mean pooling, with id2label", texts,
                 every_layer=True, classify=classify(model, tok, texts))
        else:
            save(folder, model, tok, "modernbert", described, texts, every_layer=True, fill_mask=fill_mask(model, tok))


def make_roberta(out):
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 4, vocab_size=400, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    # RoBERTa with its MLM head; a RobertaForSequenceClassification (dense → tanh → out_proj on
    # <s>) with id2label and no pooler.
    for name, seed in (("roberta", 8), ("roberta-classifier", 9)):
        folder = fresh(out, name)
        bpe.save_model(folder)
        tok = RobertaTokenizerFast(os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt"))
        torch.manual_seed(seed)
        extra = {} if name == "roberta" else {"num_labels": 3, "id2label": labels, "label2id": {v: k for k, v in labels.items()}}
        config = RobertaConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                               intermediate_size=64, max_position_embeddings=66, type_vocab_size=1,
                               pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, **extra)
        model = jitter(RobertaForMaskedLM(config) if name == "roberta" else RobertaForSequenceClassification(config))
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
        for file in ("vocab.json", "merges.txt"):
            if os.path.exists(os.path.join(folder, "tokenizer.json")) and os.path.exists(os.path.join(folder, file)):
                os.remove(os.path.join(folder, file))
        if name == "roberta":
            save(folder, model, tok, "roberta", "RobertaForMaskedLM, byte-level BPE tokenizer.json", fill_mask=fill_mask(model, tok))
        else:
            save(folder, model, tok, "roberta", "RobertaForSequenceClassification with id2label", classify=classify(model, tok))
    # A RoBERTa as older `transformers` saved it: vocab.json and merges.txt, no tokenizer.json.
    # The reference is what `AutoTokenizer` builds from those two files.
    folder = fresh(out, "roberta-vocab-merges")
    bpe.save_model(folder)
    tok = RobertaTokenizerFast(os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt"))
    torch.manual_seed(25)
    config = RobertaConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=64, max_position_embeddings=66, type_vocab_size=1,
                           pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    model = jitter(RobertaForMaskedLM(config))
    model.save_pretrained(folder)
    tok = AutoTokenizer.from_pretrained(folder)
    assert sorted(os.listdir(folder)) == ["config.json", "merges.txt", "model.safetensors", "vocab.json"], os.listdir(folder)
    save(folder, model, tok, "roberta", "RobertaForMaskedLM, vocab.json + merges.txt only (no tokenizer.json)", fill_mask=fill_mask(model, tok))


def unigram_tokenizer(specials, unk="<unk>"):
    """A SentencePiece Unigram tokenizer trained on the corpus by `tokenizers`. The trainer's
    pieces are the same every run, but not their order nor the last bits of their scores (its
    sums run in hash-map order, and the characters it adds last get scores 1e-4 apart in that
    order): the scores are rounded to two decimals and the pieces sorted, so the ids and the
    pieces are the same every run."""
    trained = SentencePieceUnigramTokenizer()
    trained.train_from_iterator((CORPUS + MULTILINGUAL) * 4, vocab_size=400, show_progress=False, unk_token=unk,
                                special_tokens=specials)
    vocab = json.loads(trained.to_str())["model"]["vocab"]
    pieces = sorted(((p, round(score, 2)) for p, score in vocab if p not in specials), key=lambda x: (-x[1], x[0]))
    tok = Tokenizer(Unigram([(p, 0.0) for p in specials] + pieces, unk_id=specials.index(unk), byte_fallback=False))
    tok.normalizer, tok.pre_tokenizer, tok.decoder = trained.normalizer, trained.pre_tokenizer, trained.decoder
    tok.add_special_tokens(specials)
    return tok


def make_sentencepiece(out):
    """XLM-RoBERTa with its MLM head and a CamemBERT classifier: RoBERTa's encoder under other
    names, with a SentencePiece Unigram tokenizer.json trained here (a lone Metaspace
    pre-tokenizer and SentencePiece's normalizers, as the Hub's files have), saved through the
    family's own tokenizer class."""
    unigram = unigram_tokenizer(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    cases = (
        ("xlm-roberta", 16, XLMRobertaTokenizerFast, XLMRobertaConfig, XLMRobertaForMaskedLM, {}),
        ("camembert-classifier", 17, CamembertTokenizerFast, CamembertConfig, CamembertForSequenceClassification,
         {"num_labels": 3, "id2label": labels, "label2id": {v: k for k, v in labels.items()}}),
    )
    for name, seed, tokenizer_class, config_class, model_class, extra in cases:
        folder = fresh(out, name)
        tok = tokenizer_class(tokenizer_object=unigram)
        torch.manual_seed(seed)
        config = config_class(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=64, max_position_embeddings=66, type_vocab_size=1,
                              pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, **extra)
        model = jitter(model_class(config))
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
        family = config.model_type
        # The reference is the folder as a user loads it.
        tok = AutoTokenizer.from_pretrained(folder)
        assert type(tok).__name__ == tokenizer_class.__name__.removesuffix("Fast"), type(tok)
        described = f"{model_class.__name__}, SentencePiece Unigram tokenizer.json"
        if extra:
            save(folder, model, tok, family, described + " with id2label", MULTILINGUAL_TEXTS,
                 classify=classify(model, tok, MULTILINGUAL_TEXTS))
        else:
            save(folder, model, tok, family, described, MULTILINGUAL_TEXTS,
                 fill_mask=fill_mask(model, tok, MULTILINGUAL_MASKED))


def make_deberta(out):
    """DeBERTa-v2/v3: BERT's post-norm layers with disentangled attention (each score adds the
    query's content against the key's relative position, c2p, and the key's content against the
    query's relative position, p2c, from one table of relative-position embeddings shared by every
    layer), and a SentencePiece Unigram tokenizer.json saved through `DebertaV2Tokenizer`
    (`[CLS] A [SEP] B [SEP]`, B in segment 1, `▁` pieces). `DebertaV2ForMaskedLM` as DeBERTa-v3
    is built (log buckets, 32 here with a reach of 64 that the long text exceeds, projections
    shared with the content's, a LayerNorm on the table, no absolute positions, no segments; its
    legacy `cls.predictions` head), and a classifier as DeBERTa-v2's older settings are (its own
    position projections, absolute positions added to the input, two segments, relative
    distances up to 24 clipped without buckets; `pooler.dense` with GELU, then `classifier`).
    Every layer's hidden states are kept; the MLM model's expected.json also holds the bucket of
    every distance up to 600, and DeBERTa-v3-base's (256 buckets reaching 512) up to 1200."""
    from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

    unigram = unigram_tokenizer(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"], unk="[UNK]")
    vocab = [tuple(v) for v in json.loads(unigram.to_str())["model"]["vocab"]]
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    v3 = dict(relative_attention=True, position_buckets=32, max_relative_positions=64, pos_att_type=["p2c", "c2p"],
              share_att_key=True, position_biased_input=False, norm_rel_ebd="layer_norm", type_vocab_size=0)
    v2 = dict(relative_attention=True, max_relative_positions=24, pos_att_type="p2c|c2p", share_att_key=False,
              position_biased_input=True, type_vocab_size=2, num_labels=3, id2label=labels,
              label2id={v: k for k, v in labels.items()})
    long = " ".join(CORPUS + MULTILINGUAL)
    texts = MULTILINGUAL_TEXTS + [(long, None)]
    cases = (
        ("deberta", 28, DebertaV2ForMaskedLM, v3),
        ("deberta-classifier", 29, DebertaV2ForSequenceClassification, v2),
    )
    for name, seed, model_class, extra in cases:
        folder = fresh(out, name)
        DebertaV2Tokenizer(vocab=vocab).save_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        assert type(tok).__name__ == "DebertaV2Tokenizer", type(tok)
        torch.manual_seed(seed)
        config = DebertaV2Config(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=64, max_position_embeddings=512, pad_token_id=tok.pad_token_id, **extra)
        model = jitter(model_class(config))
        model.save_pretrained(folder)
        assert len(tok(long)["input_ids"]) > 4 * config.max_relative_positions, "the long text must exceed the reach"
        assert len(tok(long)["input_ids"]) <= config.max_position_embeddings
        if extra is v3:
            described = f"{model_class.__name__}, DeBERTa-v3's settings (32 log buckets, shared position projections), SentencePiece Unigram tokenizer.json"
            distances = torch.arange(-600, 601)
            buckets = {"from": -600, "buckets": make_log_bucket_position(distances, 32, 64).long().tolist()}
            # DeBERTa-v3-base's own: 256 buckets reaching 512, every distance to ±1200.
            far = torch.arange(-1200, 1201)
            v3_buckets = {"from": -1200, "position_buckets": 256, "max_relative_positions": 512,
                          "buckets": make_log_bucket_position(far, 256, 512).long().tolist()}
            save(folder, model, tok, "deberta-v2", described, texts, every_layer=True,
                 fill_mask=fill_mask(model, tok, MULTILINGUAL_MASKED), relative_buckets=buckets,
                 v3_base_buckets=v3_buckets)
        else:
            described = f"{model_class.__name__}, DeBERTa-v2's older settings (own position projections, absolute positions, segments, distances to 24), with id2label"
            save(folder, model, tok, "deberta-v2", described, texts, every_layer=True, classify=classify(model, tok, texts))


# What the folders with only SentencePiece's own model file are also checked on: full-width
# letters and a ligature (the model's NFKC table), runs of spaces and a tab, LaTeX quotes (ALBERT
# turns them into "), and both mask spellings in running text (one is the family's special token).
SPM_TEXTS = MULTILINGUAL_TEXTS + [
    ("Ｆｕｌｌ-width ＡＢＣ, a ﬁne  day\tand ``quoted'' words.", None),
    ("Le café <mask> près [MASK] de la rivière.", "Die Straße  führt nach München."),
]


def make_sentencepiece_files(out):
    """ALBERT, XLM-RoBERTa, CamemBERT and DeBERTa-v3 folders whose tokenizer is only
    SentencePiece's own model file, as older Hub repositories (and `microsoft/deberta-v3-base`
    today) ship them: `spiece.model`, `sentencepiece.bpe.model`, `spm.model`, no tokenizer.json.
    The SentencePiece models are trained here by `sentencepiece` with each family's own special
    pieces and ids (fairseq's `<unk> <s> </s>` first for XLM-R and CamemBERT), with its default
    NFKC normalization table; the reference is what `AutoTokenizer` builds from the folder. Each
    has its MLM head."""
    import sentencepiece

    def train(path, **ids):
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter((CORPUS + MULTILINGUAL) * 4), model_prefix=path, vocab_size=120, model_type="unigram",
            hard_vocab_limit=False, num_threads=1, minloglevel=2, **ids)
        os.remove(path + ".vocab")
        return path + ".model"

    scratch = fresh(out, "_spm")
    albert = train(os.path.join(scratch, "albert"), pad_id=0, unk_id=1, bos_id=2, eos_id=3, pad_piece="<pad>",
                   unk_piece="<unk>", bos_piece="[CLS]", eos_piece="[SEP]", user_defined_symbols=["[MASK]"])
    fairseq = train(os.path.join(scratch, "fairseq"))
    deberta = train(os.path.join(scratch, "deberta"), pad_id=0, bos_id=1, eos_id=2, unk_id=3, pad_piece="[PAD]",
                    bos_piece="[CLS]", eos_piece="[SEP]", unk_piece="[UNK]")
    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    cases = (
        ("albert-spm", 31, albert, "spiece.model", AlbertConfig, AlbertForMaskedLM, None,
         dict(embedding_size=16, max_position_embeddings=64, num_hidden_layers=3)),
        ("xlm-roberta-spm", 32, fairseq, "sentencepiece.bpe.model", XLMRobertaConfig, XLMRobertaForMaskedLM, None,
         dict(max_position_embeddings=66, type_vocab_size=1)),
        ("camembert-spm", 33, fairseq, "sentencepiece.bpe.model", CamembertConfig, CamembertForMaskedLM, None,
         dict(max_position_embeddings=66, type_vocab_size=1)),
        # As `microsoft/deberta-v3-base` ships it: spm.model and this tokenizer_config.json.
        ("deberta-spm", 34, deberta, "spm.model", DebertaV2Config, DebertaV2ForMaskedLM, {"do_lower_case": False, "vocab_type": "spm"},
         dict(relative_attention=True, position_buckets=32, max_relative_positions=64, pos_att_type=["p2c", "c2p"],
              share_att_key=True, position_biased_input=False, norm_rel_ebd="layer_norm", type_vocab_size=0,
              max_position_embeddings=512)),
    )
    for name, seed, model_file, file_name, config_class, model_class, tokenizer_config, extra in cases:
        folder = fresh(out, name)
        shutil.copy(model_file, os.path.join(folder, file_name))
        if tokenizer_config is not None:
            with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
                json.dump(tokenizer_config, f)
        config_class(**small).save_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        torch.manual_seed(seed)
        config = config_class(vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                              eos_token_id=tok.eos_token_id, **{**small, **extra})
        model = jitter(model_class(config))
        model.save_pretrained(folder)
        kept = sorted(os.listdir(folder))
        assert "tokenizer.json" not in kept and file_name in kept, kept
        described = f"{model_class.__name__}, {file_name} only (no tokenizer.json)"
        save(folder, model, tok, config.model_type, described, SPM_TEXTS, fill_mask=fill_mask(model, tok, MULTILINGUAL_MASKED))
    shutil.rmtree(scratch)


def make_heads(out):
    """Sequence classifiers as people bring them in 2026, on the encoders of the other groups
    (their folders must be made first): a binary classifier of each family as `transformers` 5
    saves one (no `id2label` or `label2id` in config.json: its default two labels, whatever the
    installed version writes), a multi-label BERT (`problem_type: multi_label_classification`, a
    sigmoid per label), and BERT heads of one output, with `problem_type: regression` (the raw
    score) and without (the pipeline's sigmoid). Each one's expected.json holds the pipeline's
    scores."""
    from transformers import AutoConfig, AutoModelForSequenceClassification

    def make(name, base, seed, described, **extra):
        source = os.path.join(out, base)
        if not os.path.exists(os.path.join(source, "expected.json")):
            sys.exit(f"the heads group needs {source}: make its group first")
        folder = fresh(out, name)
        tok = AutoTokenizer.from_pretrained(source)
        tok.save_pretrained(folder)
        config = AutoConfig.from_pretrained(source, **extra)
        config.architectures = None
        torch.manual_seed(seed)
        model = jitter(AutoModelForSequenceClassification.from_config(config))
        # A random head's logits are near 0, where a softmax and a sigmoid of two labels differ
        # little: a larger output layer sets them apart, so the wrong function shows.
        with torch.no_grad():
            for module in model.modules():
                if isinstance(module, torch.nn.Linear) and module.out_features == config.num_labels:
                    module.weight.mul_(20)
        model.save_pretrained(folder)
        with open(os.path.join(folder, "config.json")) as f:
            written = json.load(f)
        if extra.get("num_labels") == 2 and "id2label" not in extra:
            # As transformers 5 writes its default two labels: not at all.
            written.pop("id2label", None)
            written.pop("label2id", None)
            with open(os.path.join(folder, "config.json"), "w") as f:
                json.dump(written, f, indent=2)
        tok = AutoTokenizer.from_pretrained(folder)
        family = json.load(open(os.path.join(source, "expected.json")))["family"]
        texts = MULTILINGUAL_TEXTS if family in ("albert", "xlm-roberta") else TEXTS
        save(folder, model, tok, family, described, texts, classify=pipeline_classify(model, tok, texts), encoder_of=base)

    for i, base in enumerate(("albert", "distilbert", "electra", "modernbert", "mpnet", "xlm-roberta")):
        make(f"{base}-binary-v5", base, 40 + i, f"{base} sequence classifier of two labels, no id2label (as transformers 5 saves it)", num_labels=2)
    emotions = ["anger", "joy", "sadness", "surprise"]
    make("bert-multilabel", "bert-mlm", 46, "BertForSequenceClassification, multi_label_classification, 4 labels",
         num_labels=4, id2label=dict(enumerate(emotions)), label2id={e: i for i, e in enumerate(emotions)},
         problem_type="multi_label_classification")
    make("bert-one-output", "bert-mlm", 47, "BertForSequenceClassification, one output, no problem_type (the pipeline's sigmoid)", num_labels=1)
    make("bert-regression", "bert-mlm", 48, "BertForSequenceClassification, one output, problem_type regression (the raw score)",
         num_labels=1, problem_type="regression")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/models"
    groups = {"bert": make_bert_family, "roberta": make_roberta, "electra": make_electra, "sentencepiece": make_sentencepiece,
              "electra-small": make_electra_small, "albert": make_albert, "mpnet": make_mpnet, "modernbert": make_modernbert,
              "deberta": make_deberta, "spm-files": make_sentencepiece_files, "heads": make_heads,
              "variants": lambda out: __import__("make_variant_models").make_variants(out),
              "relative": lambda out: __import__("make_variant_models").make_relative(out)}
    # `relative` needs transformers 4 (`cargo xtask test` runs it apart, with 4 on PYTHONPATH).
    chosen = sys.argv[2:] or [g for g in groups if g != "relative"]
    unknown = [g for g in chosen if g not in groups]
    if unknown:
        sys.exit(f"unknown groups {unknown}; the groups are {', '.join(groups)}")
    os.makedirs(out, exist_ok=True)
    for group in chosen:
        groups[group](out)
    names = sorted(n for n in os.listdir(out) if os.path.exists(os.path.join(out, n, "expected.json")))
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(names, f)
    print(f"{len(names)} test models in {out}: {', '.join(names)} (transformers {transformers.__version__})")


if __name__ == "__main__":
    main()
