//! A folder whose tokenizer is only SentencePiece's own model file (`spm.model` for DeBERTa-v2/v3,
//! `spiece.model` for ALBERT, `sentencepiece.bpe.model` for XLM-RoBERTa and CamemBERT), as the
//! Hub still ships `microsoft/deberta-v3-base`: the `tokenizer.json` that `transformers` builds
//! from it, so the folder reads as it does in PyTorch.
//!
//! What `transformers` does, and this does: the pieces and their scores become a Unigram model;
//! each family's tokenizer class then sets the rest (its `__init__`, with the family's converter
//! renumbering the pieces first where it has one):
//!
//! | family      | pieces                                                    | normalizer                                        | pre-tokenizer                    | pair                          |
//! |-------------|-----------------------------------------------------------|---------------------------------------------------|----------------------------------|-------------------------------|
//! | ALBERT      | as stored; unknown is id 1                                | `` and '' → ", NFKD + strip accents*, lowercase*, the model's charsmap | whitespace, then `▁` | `[CLS] A [SEP] B [SEP]` |
//! | XLM-R       | `<s> <pad> </s> <unk>`, pieces from the 4th, `<mask>`     | the model's charsmap                              | whitespace, then `▁`             | `<s> A </s></s> B </s>`       |
//! | CamemBERT   | `<s>NOTUSED <pad> </s>NOTUSED <unk> <unk>NOTUSED`, pieces from the 2nd, `<mask>` | the model's charsmap         | whitespace, then `▁`             | `<s> A </s></s> B </s>`       |
//! | DeBERTa-v2  | as stored                                                 | lowercase*, runs of spaces → one, NFC, strip right | punctuation*, then `▁`          | `[CLS] A [SEP] B [SEP]`, B in segment 1 |
//!
//! (* as `tokenizer_config.json` says: `do_lower_case`, `keep_accents`, `split_by_punct`; the
//! class's defaults where it is silent.) The special tokens are `tokenizer_config.json`'s where
//! it names them, else the class's; one the pieces lack takes the next id, as `transformers` adds
//! it. SentencePiece's control pieces are special tokens too, its user-defined pieces added ones.
//! A BPE SentencePiece model, or one for another family, is refused by name.

use prost::Message;
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// The parts of SentencePiece's `ModelProto` (`sentencepiece_model.proto`) this reads; protobuf
/// skips the rest.
#[derive(Clone, PartialEq, Message)]
struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pieces: Vec<Piece>,
    #[prost(message, optional, tag = "2")]
    trainer_spec: Option<TrainerSpec>,
    #[prost(message, optional, tag = "3")]
    normalizer_spec: Option<NormalizerSpec>,
}

#[derive(Clone, PartialEq, Message)]
struct Piece {
    #[prost(string, optional, tag = "1")]
    piece: Option<String>,
    #[prost(float, optional, tag = "2")]
    score: Option<f32>,
    /// 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
    #[prost(int32, optional, tag = "3")]
    kind: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct TrainerSpec {
    /// 1 Unigram, 2 BPE, 3 word, 4 char.
    #[prost(int32, optional, tag = "3")]
    model_type: Option<i32>,
    #[prost(bool, optional, tag = "35")]
    byte_fallback: Option<bool>,
    #[prost(int32, optional, tag = "40")]
    unk_id: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct NormalizerSpec {
    #[prost(bytes = "vec", optional, tag = "2")]
    precompiled_charsmap: Option<Vec<u8>>,
}

const CONTROL: i32 = 3;
const USER_DEFINED: i32 = 4;

/// The families (`model_type`) whose tokenizer `transformers` builds from a SentencePiece model.
const FAMILIES: [&str; 4] = ["albert", "xlm-roberta", "camembert", "deberta-v2"];

/// `tokenizer.json` bytes for a SentencePiece model file `file` of a folder whose `config.json`
/// names `model_type`, with the folder's `tokenizer_config.json` if it has one.
pub fn tokenizer_json(model: &[u8], file: &str, model_type: &str, tokenizer_config: Option<&[u8]>) -> Result<Vec<u8>> {
    let refuse = |why: String| Error::Tokenizer(format!("{file}: {why}"));
    if !FAMILIES.contains(&model_type) {
        let model_type = if model_type.is_empty() { "no model_type".to_string() } else { format!("\"{model_type}\"") };
        return Err(refuse(format!(
            "bertbench builds a tokenizer from SentencePiece's own file for {} models as transformers does, and this folder's config.json says {model_type}; `AutoTokenizer.from_pretrained(folder).save_pretrained(folder)` in Python adds tokenizer.json",
            FAMILIES.join(", ")
        )));
    }
    let proto = ModelProto::decode(model).map_err(|e| refuse(format!("not a SentencePiece model ({e})")))?;
    let trainer = proto.trainer_spec.clone().unwrap_or_default();
    match trainer.model_type.unwrap_or(1) {
        1 => {}
        other => {
            let kind = match other { 2 => "BPE", 3 => "word", 4 => "character", _ => "unknown" };
            return Err(refuse(format!("a SentencePiece {kind} model; bertbench reads SentencePiece Unigram models, as these families use")));
        }
    }
    if trainer.byte_fallback.unwrap_or(false) {
        return Err(refuse("a SentencePiece model with byte fallback, which these families' tokenizers do not use".into()));
    }
    if proto.pieces.is_empty() {
        return Err(refuse("a SentencePiece model with no pieces".into()));
    }
    let config: Value = tokenizer_config.and_then(|c| serde_json::from_slice(c).ok()).unwrap_or(Value::Null);
    let flag = |key: &str, default: bool| config.get(key).and_then(Value::as_bool).unwrap_or(default);
    let family = Family::of(model_type);
    let specials = family.specials(&config);
    let stored: Vec<(String, f64)> = proto.pieces.iter().map(|p| (p.piece.clone().unwrap_or_default(), p.score.unwrap_or(0.0) as f64)).collect();
    let vocab = family.vocab(&stored, &specials);
    let position = |token: &str| vocab.iter().position(|(p, _)| p == token);
    let unk_id = match family {
        Family::Albert => 1,
        Family::XlmRoberta => 3,
        Family::Camembert => position(&specials.unk.0).unwrap_or(0),
        Family::DebertaV2 => {
            vocab.iter().position(|(p, s)| *p == specials.unk.0 && *s == 0.0).unwrap_or(trainer.unk_id.unwrap_or(0).max(0) as usize)
        }
    };
    if unk_id >= vocab.len() {
        return Err(refuse(format!("its unknown token's id {unk_id} is past its {} pieces", vocab.len())));
    }
    let charsmap = proto.normalizer_spec.and_then(|n| n.precompiled_charsmap).filter(|c| !c.is_empty());
    let precompiled = match &charsmap {
        Some(bytes) => {
            let normalizer = tokenizers::normalizers::precompiled::Precompiled::from(bytes)
                .map_err(|e| refuse(format!("its normalization table cannot be read ({e})")))?;
            Some(serde_json::to_value(&normalizer).map_err(|e| refuse(e.to_string()))?)
        }
        None => None,
    };
    let normalizer = match family {
        Family::Albert => {
            let mut steps = vec![
                json!({"type": "Replace", "pattern": {"String": "``"}, "content": "\""}),
                json!({"type": "Replace", "pattern": {"String": "''"}, "content": "\""}),
            ];
            if !flag("keep_accents", false) {
                steps.extend([json!({"type": "NFKD"}), json!({"type": "StripAccents"})]);
            }
            if flag("do_lower_case", true) {
                steps.push(json!({"type": "Lowercase"}));
            }
            steps.extend(precompiled);
            json!({"type": "Sequence", "normalizers": steps})
        }
        Family::XlmRoberta | Family::Camembert => precompiled.unwrap_or(Value::Null),
        Family::DebertaV2 => {
            let mut steps = Vec::new();
            if flag("do_lower_case", false) {
                steps.push(json!({"type": "Lowercase"}));
            }
            // As `transformers`' DebertaV2Tokenizer builds it (5.25 on): the model's own
            // normalization table where it has one (NFKC as SentencePiece applies it: full-width
            // letters and ligatures become plain ones), else whitespace folded and NFC.
            match precompiled {
                Some(table) => steps.extend([
                    table,
                    json!({"type": "Strip", "strip_left": false, "strip_right": true}),
                    json!({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}),
                ]),
                None => steps.extend([
                    json!({"type": "Replace", "pattern": {"Regex": "\\s{2,}|[\\n\\r\\t]"}, "content": " "}),
                    json!({"type": "NFC"}),
                    json!({"type": "Strip", "strip_left": false, "strip_right": true}),
                ]),
            }
            json!({"type": "Sequence", "normalizers": steps})
        }
    };
    let add_prefix_space = flag("add_prefix_space", true);
    let scheme = match (add_prefix_space, family) {
        (true, _) => "always",
        (false, Family::DebertaV2) => "first",
        (false, _) => "never",
    };
    let metaspace = json!({"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": true});
    let pre_tokenizers = match family {
        Family::DebertaV2 if flag("split_by_punct", false) => vec![json!({"type": "Punctuation", "behavior": "Isolated"}), metaspace.clone()],
        Family::DebertaV2 => vec![metaspace.clone()],
        _ => vec![json!({"type": "WhitespaceSplit"}), metaspace.clone()],
    };

    // Added tokens: each special role, then SentencePiece's control and user-defined pieces.
    let mut added: Vec<Value> = Vec::new();
    let mut next_id = vocab.len();
    let mut id_of = std::collections::HashMap::new();
    let mut add = |content: &str, lstrip: bool, special: bool, added: &mut Vec<Value>| -> usize {
        if let Some(&id) = id_of.get(content) {
            return id;
        }
        let id = position(content).unwrap_or_else(|| {
            next_id += 1;
            next_id - 1
        });
        id_of.insert(content.to_string(), id);
        added.push(json!({"id": id, "content": content, "single_word": false, "lstrip": lstrip, "rstrip": false, "normalized": false, "special": special}));
        id
    };
    for (token, lstrip) in specials.in_adding_order() {
        add(token, lstrip, true, &mut added);
    }
    for piece in &proto.pieces {
        let text = piece.piece.as_deref().unwrap_or_default();
        match piece.kind.unwrap_or(1) {
            CONTROL => add(text, false, true, &mut added),
            USER_DEFINED => add(text, false, false, &mut added),
            _ => 0,
        };
    }
    added.sort_by_key(|t| t["id"].as_u64());
    let id = |token: &str| id_of[token];

    let (first, second) = match family {
        Family::Albert => (("[CLS]", id(&specials.cls.0)), ("[SEP]", id(&specials.sep.0))),
        Family::DebertaV2 => ((specials.cls.0.as_str(), id(&specials.cls.0)), (specials.sep.0.as_str(), id(&specials.sep.0))),
        Family::XlmRoberta | Family::Camembert => ((specials.bos.0.as_str(), id(&specials.bos.0)), (specials.eos.0.as_str(), id(&specials.eos.0))),
    };
    let special = |token: &str, type_id: u32| json!({"SpecialToken": {"id": token, "type_id": type_id}});
    let sequence = |name: &str, type_id: u32| json!({"Sequence": {"id": name, "type_id": type_id}});
    let (single, pair) = match family {
        Family::XlmRoberta | Family::Camembert => (
            vec![special(first.0, 0), sequence("A", 0), special(second.0, 0)],
            vec![special(first.0, 0), sequence("A", 0), special(second.0, 0), special(second.0, 0), sequence("B", 0), special(second.0, 0)],
        ),
        Family::Albert | Family::DebertaV2 => (
            vec![special(first.0, 0), sequence("A", 0), special(second.0, 0)],
            vec![special(first.0, 0), sequence("A", 0), special(second.0, 0), sequence("B", 1), special(second.0, 1)],
        ),
    };
    let mut special_tokens = serde_json::Map::new();
    for (token, id) in [first, second] {
        special_tokens.insert(token.to_string(), json!({"id": token, "ids": [id], "tokens": [token]}));
    }
    let tokenizer = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre_tokenizers},
        "post_processor": {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": special_tokens},
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": false},
    });
    serde_json::to_vec(&tokenizer).map_err(|e| refuse(e.to_string()))
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Family {
    Albert,
    XlmRoberta,
    Camembert,
    DebertaV2,
}

/// Each special role's token (and whether it takes the space before it).
struct Specials {
    bos: (String, bool),
    eos: (String, bool),
    unk: (String, bool),
    sep: (String, bool),
    pad: (String, bool),
    cls: (String, bool),
    mask: (String, bool),
}

impl Specials {
    /// In the order `transformers` adds them, so one missing from the pieces gets its id.
    fn in_adding_order(&self) -> impl Iterator<Item = (&str, bool)> {
        [&self.bos, &self.eos, &self.unk, &self.sep, &self.pad, &self.cls, &self.mask].into_iter().map(|(t, l)| (t.as_str(), *l))
    }
}

impl Family {
    fn of(model_type: &str) -> Self {
        match model_type {
            "albert" => Family::Albert,
            "xlm-roberta" => Family::XlmRoberta,
            "camembert" => Family::Camembert,
            _ => Family::DebertaV2,
        }
    }

    /// The class's special tokens, as `tokenizer_config.json` overrides them (a token's text, or
    /// an object with it as `content`).
    fn specials(self, config: &Value) -> Specials {
        let [bos, eos, unk, sep, pad, cls, mask] = match self {
            Family::Albert => ["[CLS]", "[SEP]", "<unk>", "[SEP]", "<pad>", "[CLS]", "[MASK]"],
            Family::XlmRoberta | Family::Camembert => ["<s>", "</s>", "<unk>", "</s>", "<pad>", "<s>", "<mask>"],
            Family::DebertaV2 => ["[CLS]", "[SEP]", "[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"],
        };
        let named = |key: &str, default: &str, lstrip: bool| match config.get(key) {
            Some(Value::String(s)) => (s.clone(), lstrip),
            Some(Value::Object(o)) => (
                o.get("content").and_then(Value::as_str).unwrap_or(default).to_string(),
                o.get("lstrip").and_then(Value::as_bool).unwrap_or(lstrip),
            ),
            _ => (default.to_string(), lstrip),
        };
        Specials {
            bos: named("bos_token", bos, false),
            eos: named("eos_token", eos, false),
            unk: named("unk_token", unk, false),
            sep: named("sep_token", sep, false),
            pad: named("pad_token", pad, false),
            cls: named("cls_token", cls, false),
            // CamemBERT's mask takes the space before it.
            mask: named("mask_token", mask, self == Family::Camembert),
        }
    }

    /// The Unigram pieces in the ids the family's model uses (its converter's renumbering).
    fn vocab(self, stored: &[(String, f64)], specials: &Specials) -> Vec<(String, f64)> {
        let own = |t: &(String, bool)| (t.0.clone(), 0.0);
        match self {
            Family::Albert | Family::DebertaV2 => stored.to_vec(),
            // fairseq's numbering: four specials, the pieces after SentencePiece's first three
            // (unknown, begin, end), then the mask.
            Family::XlmRoberta => [own(&specials.bos), own(&specials.pad), own(&specials.eos), own(&specials.unk)]
                .into_iter()
                .chain(stored.iter().skip(3).cloned())
                .chain([own(&specials.mask)])
                .collect(),
            Family::Camembert => [
                ("<s>NOTUSED".to_string(), 0.0),
                own(&specials.pad),
                ("</s>NOTUSED".to_string(), 0.0),
                own(&specials.unk),
                ("<unk>NOTUSED".to_string(), -100.0),
            ]
            .into_iter()
            .chain(stored.iter().skip(1).cloned())
            .chain([own(&specials.mask)])
            .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::BertTokenizer;

    fn piece(text: &str, score: f32, kind: i32) -> Piece {
        Piece { piece: Some(text.into()), score: Some(score), kind: Some(kind) }
    }

    /// A SentencePiece model as fairseq's (XLM-R, CamemBERT) are numbered: unknown, begin, end,
    /// then the pieces.
    fn fairseq_model(model_type: i32, byte_fallback: bool) -> Vec<u8> {
        let mut pieces = vec![piece("<unk>", 0.0, 2), piece("<s>", 0.0, CONTROL), piece("</s>", 0.0, CONTROL)];
        for (text, score) in [("▁", -2.0), ("▁le", -3.0), ("▁café", -4.0), ("l", -5.0), ("e", -5.0), ("c", -6.0), ("a", -6.0), ("f", -6.0), ("é", -6.0)] {
            pieces.push(piece(text, score, 1));
        }
        let trainer = TrainerSpec { model_type: Some(model_type), byte_fallback: Some(byte_fallback), unk_id: Some(0) };
        ModelProto { pieces, trainer_spec: Some(trainer), normalizer_spec: None }.encode_to_vec()
    }

    fn read(model: &[u8], family: &str, config: Option<&str>) -> Result<BertTokenizer> {
        let json = tokenizer_json(model, "sentencepiece.bpe.model", family, config.map(str::as_bytes))?;
        BertTokenizer::from_tokenizer_json(&json, 512)
    }

    #[test]
    fn xlm_roberta_and_camembert_renumber_the_pieces_as_their_converters_do() {
        let model = fairseq_model(1, false);
        let xlmr = read(&model, "xlm-roberta", None).unwrap();
        // <s> <pad> </s> <unk>, the pieces from SentencePiece's 4th (▁ is 3 there), <mask> last.
        assert_eq!(xlmr.encode("le café").unwrap().ids(), [0, 5, 6, 2]);
        assert_eq!(xlmr.encode("le <mask>").unwrap().ids(), [0, 5, 13, 2]);
        let camembert = read(&model, "camembert", None).unwrap();
        // Five of CamemBERT's own, then SentencePiece's from its 2nd: <s> is 5, ▁le 8, <mask> 16.
        assert_eq!(camembert.encode("le café").unwrap().ids(), [5, 8, 9, 6]);
        assert_eq!(camembert.encode("le <mask>").unwrap().ids(), [5, 8, 16, 6], "the mask takes the space before it");
        let pair = xlmr.encode_text("le", Some("café")).unwrap();
        assert_eq!(pair.ids(), [0, 5, 2, 2, 6, 2], "<s> A </s></s> B </s>");
    }

    #[test]
    fn a_special_missing_from_the_pieces_takes_the_next_id_and_tokenizer_config_names_them() {
        let model = fairseq_model(1, false);
        // As DeBERTa: pieces as stored, `[MASK]` and the others appended in transformers' order.
        let json = tokenizer_json(&model, "spm.model", "deberta-v2", Some(br#"{"cls_token": "<s>", "sep_token": "</s>", "unk_token": "<unk>", "pad_token": {"content": "<pad>"}}"#)).unwrap();
        let value: Value = serde_json::from_slice(&json).unwrap();
        let added: Vec<(String, u64)> = value["added_tokens"].as_array().unwrap().iter().map(|t| (t["content"].as_str().unwrap().to_string(), t["id"].as_u64().unwrap())).collect();
        assert_eq!(added, [("<unk>".to_string(), 0), ("<s>".to_string(), 1), ("</s>".to_string(), 2), ("[CLS]".to_string(), 12), ("[SEP]".to_string(), 13), ("<pad>".to_string(), 14), ("[MASK]".to_string(), 15)]);
        let tokenizer = BertTokenizer::from_tokenizer_json(&json, 512).unwrap();
        let pair = tokenizer.encode_text("le", Some("café")).unwrap();
        assert_eq!(pair.ids(), [1, 4, 2, 5, 2]);
        assert_eq!(pair.tokens.iter().map(|t| t.type_id).collect::<Vec<_>>(), [0, 0, 0, 1, 1], "B in segment 1");
    }

    #[test]
    fn what_transformers_cannot_read_the_same_way_is_refused_by_name() {
        let bpe = read(&fairseq_model(2, false), "xlm-roberta", None).unwrap_err().to_string();
        assert!(bpe.contains("SentencePiece BPE model") && bpe.contains("Unigram"), "{bpe}");
        let bytes = read(&fairseq_model(1, true), "albert", None).unwrap_err().to_string();
        assert!(bytes.contains("byte fallback"), "{bytes}");
        let other = read(&fairseq_model(1, false), "t5", None).unwrap_err().to_string();
        assert!(other.contains("\"t5\"") && other.contains("albert, xlm-roberta, camembert, deberta-v2"), "{other}");
        let broken = read(b"\x0a\xff", "albert", None).unwrap_err().to_string();
        assert!(broken.contains("not a SentencePiece model"), "{broken}");
    }
}
