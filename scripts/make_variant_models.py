"""Encoder variants `transformers` runs that released checkpoints rarely use, each on the
tokenizer of a folder `make_test_models.py` made first (its `variants` group runs this):

- `albert-groups`: ALBERT with 3 layers split among 2 layer groups (depth i runs group
  ⌊i / 1.5⌋) of 2 layers each (`num_hidden_groups`, `inner_group_num`), `AlbertForMaskedLM`;
- `deberta-conv`: DeBERTa-v2 with the convolution after its first layer that v2-xlarge has
  (`conv_kernel_size` 3, `conv_act` gelu, 2 channel groups), `DebertaV2ForMaskedLM`; its
  expected.json also holds a padded batch's hidden states;
- `deberta-norel`: DeBERTa-v2 with `relative_attention` false (content attention only, still
  scaled by its `pos_att_type` terms) and absolute positions, `DebertaV2ForMaskedLM`;
- `mpnet-buckets`: MPNet with 64 rows in its relative bias table (`relative_attention_num_buckets`;
  its encoder buckets distances into 32 whatever the table holds), `MPNetForMaskedLM`;
- `modernbert-silu`: a ModernBERT classifier whose head applies SiLU (`classifier_activation`),
  with the pipeline's scores.

Its `relative` group (`make_relative`), run with the newest `transformers` 4:
- `bert-relative-key`, `bert-relative-key-query`: BERT with relative distances in place of
  absolute positions (`position_embedding_type`), `BertForMaskedLM`. Only `transformers` 4 has
  them: 5 dropped the setting, and reads such a folder as absolute, its `distance_embedding`
  weights unused.

Every layer's hidden states and fill-mask probabilities are kept, as for the other folders.
"""

import json
import os
import sys

import torch
import transformers
from transformers import (AlbertConfig, AlbertForMaskedLM, AutoTokenizer, DebertaV2Config, DebertaV2ForMaskedLM,
                          MPNetConfig, MPNetForMaskedLM, ModernBertConfig, ModernBertForSequenceClassification)

import make_test_models as m


def tokenizer_of(out, source):
    path = os.path.join(out, source)
    if not os.path.exists(os.path.join(path, "expected.json")):
        sys.exit(f"the variants group needs {path}: make its group first")
    return AutoTokenizer.from_pretrained(path)


def make(out, name, source, seed, model_class, config, described, texts=m.TEXTS, masked=m.MASKED, **heads):
    """A folder `name` with a jittered `model_class(config)` and `source`'s tokenizer."""
    tok = tokenizer_of(out, source)
    folder = m.fresh(out, name)
    tok.save_pretrained(folder)
    torch.manual_seed(seed)
    model = m.jitter(model_class(config))
    model.save_pretrained(folder)
    tok = AutoTokenizer.from_pretrained(folder)
    family = config.model_type
    if model_class is ModernBertForSequenceClassification:
        heads["classify"] = m.pipeline_classify(model, tok, texts)
    else:
        heads["fill_mask"] = m.fill_mask(model, tok, masked)
    m.save(folder, model, tok, family, described, texts, every_layer=True, **heads)
    return model, tok


def padded_batch(model, tok, texts):
    """The base model's last hidden states of `texts` run as one right-padded batch, each row's
    real tokens only: what a real token reads beside padding."""
    enc = tok([t for t, _ in texts], padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model.base_model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
    rows = []
    for (text, _), h, mask in zip(texts, out, enc["attention_mask"]):
        n = int(mask.sum())
        rows.append({"text": text, "input_ids": enc["input_ids"][len(rows)][:n].tolist(), "last_hidden_state": h[:n].tolist()})
    return rows


def make_variants(out):
    tok = tokenizer_of(out, "albert")
    make(out, "albert-groups", "albert", 60, AlbertForMaskedLM,
         AlbertConfig(vocab_size=len(tok), embedding_size=16, hidden_size=32, num_hidden_layers=3, num_hidden_groups=2,
                      inner_group_num=2, num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                      pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id),
         "AlbertForMaskedLM, 3 depths over 2 layer groups of 2 layers each", m.MULTILINGUAL_TEXTS, m.MULTILINGUAL_MASKED)

    tok = tokenizer_of(out, "deberta")
    long = " ".join(m.CORPUS + m.MULTILINGUAL)
    texts = m.MULTILINGUAL_TEXTS + [(long, None)]
    deberta = dict(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                   max_position_embeddings=512, pad_token_id=tok.pad_token_id, type_vocab_size=0)
    conv = DebertaV2Config(**deberta, relative_attention=True, position_buckets=32, max_relative_positions=64,
                           pos_att_type=["p2c", "c2p"], share_att_key=True, position_biased_input=False,
                           norm_rel_ebd="layer_norm", conv_kernel_size=3, conv_act="gelu", conv_groups=2)
    model, tok = make(out, "deberta-conv", "deberta", 61, DebertaV2ForMaskedLM, conv,
                      "DebertaV2ForMaskedLM, DeBERTa-v3's settings with v2-xlarge's convolution after layer 0 (kernel 3, gelu, 2 groups)",
                      texts, m.MULTILINGUAL_MASKED)
    # A padded batch beside the single texts, in the same expected.json.
    path = os.path.join(out, "deberta-conv", "expected.json")
    expected = json.load(open(path))
    expected["padded_batch"] = padded_batch(model, tok, [t for t in m.MULTILINGUAL_TEXTS if t[1] is None])
    json.dump(expected, open(path, "w"))
    norel = DebertaV2Config(**deberta, relative_attention=False, pos_att_type=["p2c", "c2p"], position_biased_input=True)
    make(out, "deberta-norel", "deberta", 62, DebertaV2ForMaskedLM, norel,
         "DebertaV2ForMaskedLM, relative_attention false (content attention scaled by 3 terms), absolute positions",
         texts, m.MULTILINGUAL_MASKED)

    tok = tokenizer_of(out, "mpnet")
    long = (" ".join(m.CORPUS) + " ") * 4
    make(out, "mpnet-buckets", "mpnet", 63, MPNetForMaskedLM,
         MPNetConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                     max_position_embeddings=514, relative_attention_num_buckets=64),
         "MPNetForMaskedLM, a relative bias table of 64 rows (32 read)", m.TEXTS + [(long, None)])

    tok = tokenizer_of(out, "modernbert")
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    cls, sep = tok.cls_token_id, tok.sep_token_id
    make(out, "modernbert-silu", "modernbert", 64, ModernBertForSequenceClassification,
         ModernBertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=4, num_attention_heads=4, intermediate_size=48,
                          max_position_embeddings=512, local_attention=16, global_attn_every_n_layers=3,
                          pad_token_id=tok.pad_token_id, bos_token_id=cls, eos_token_id=sep, cls_token_id=cls, sep_token_id=sep,
                          num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()},
                          classifier_activation="silu", hidden_activation="gelu"),
         "ModernBertForSequenceClassification, SiLU in its head (classifier_activation)")


def make_relative(out):
    if not transformers.__version__.startswith("4."):
        sys.exit(f"the relative group needs transformers 4 (5 dropped position_embedding_type); this is {transformers.__version__}")
    from transformers import BertForMaskedLM
    tok = tokenizer_of(out, "bert-mlm")
    for name, kind, seed in [("bert-relative-key", "relative_key", 65), ("bert-relative-key-query", "relative_key_query", 66)]:
        make(out, name, "bert-mlm", seed, BertForMaskedLM, m.bert_config(len(tok), position_embedding_type=kind),
             f"BertForMaskedLM, position_embedding_type {kind} (transformers {transformers.__version__})")
