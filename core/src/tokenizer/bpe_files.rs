//! A RoBERTa-style folder saved without `tokenizer.json` (older `transformers` wrote only
//! `vocab.json` and `merges.txt`): the `tokenizer.json` that `transformers`' `RobertaTokenizer`
//! builds from those two files, so the folder reads as it does in PyTorch.
//!
//! What it builds, as `RobertaTokenizer.__init__` does: a byte-level BPE model (no unknown
//! token, no continuation prefix), the `ByteLevel` pre-tokenizer without a prefix space, the
//! `ByteLevel` decoder, and `RobertaProcessing` (`<s> A </s></s> B </s>`, offsets trimmed). The
//! specials are `tokenizer_config.json`'s where it names them, else RoBERTa's. A special takes
//! the space before it only where `tokenizer_config.json` says so (`"lstrip": true`, as older
//! `transformers` wrote for `<mask>`): without it, `transformers` 5 reads `" <mask>"` as `Ġ`
//! and `<mask>`, and so does this.

use serde_json::{Value, json};

use crate::error::{Error, Result};

/// The special tokens' roles, `tokenizer_config.json`'s keys for them and RoBERTa's defaults.
const SPECIALS: [(&str, &str); 5] = [("bos_token", "<s>"), ("pad_token", "<pad>"), ("eos_token", "</s>"), ("unk_token", "<unk>"), ("mask_token", "<mask>")];

/// `tokenizer.json` bytes for a byte-level BPE vocabulary (`vocab.json`: piece → id) and its
/// merges (`merges.txt`: one `a b` pair per line after an optional `#version` line).
pub fn tokenizer_json(vocab_json: &[u8], merges_txt: &[u8], tokenizer_config: Option<&[u8]>) -> Result<Vec<u8>> {
    let bad = |what: &str, e: &dyn std::fmt::Display| Error::Tokenizer(format!("{what}: {e}"));
    let vocab: serde_json::Map<String, Value> = serde_json::from_slice(vocab_json).map_err(|e| bad("vocab.json", &e))?;
    if vocab.values().any(|id| !id.is_u64()) {
        return Err(Error::Tokenizer("vocab.json: every piece's id must be a whole number".into()));
    }
    let merges_text = String::from_utf8(merges_txt.to_vec()).map_err(|e| bad("merges.txt", &e))?;
    let mut merges = Vec::new();
    for (n, line) in merges_text.lines().enumerate() {
        if line.is_empty() || (n == 0 && line.starts_with("#version")) {
            continue;
        }
        if line.split(' ').count() != 2 {
            return Err(Error::Tokenizer(format!("merges.txt line {}: {line:?} is not two pieces separated by one space", n + 1)));
        }
        merges.push(Value::from(line));
    }
    let config: Value = tokenizer_config.and_then(|c| serde_json::from_slice(c).ok()).unwrap_or(Value::Null);
    // A key's value is the token's text, or an object with it as `content` and its `lstrip`.
    let named = |key: &str, default: &str| -> (String, bool) {
        match config.get(key) {
            Some(Value::String(s)) => (s.clone(), false),
            Some(Value::Object(o)) => (
                o.get("content").and_then(Value::as_str).unwrap_or(default).to_string(),
                o.get("lstrip").and_then(Value::as_bool).unwrap_or(false),
            ),
            _ => (default.to_string(), false),
        }
    };
    let mut added = Vec::new();
    let mut id_of = std::collections::HashMap::new();
    for (key, default) in SPECIALS {
        let (token, lstrip) = named(key, default);
        let id = vocab.get(&token).and_then(Value::as_u64).ok_or_else(|| {
            Error::Tokenizer(format!("vocab.json has no {token} (the {}); bertbench builds RoBERTa's tokenizer from vocab.json and merges.txt", key.replace('_', " ")))
        })?;
        id_of.insert(key, (token.clone(), id));
        added.push(json!({ "id": id, "content": token, "single_word": false, "lstrip": lstrip, "rstrip": false, "normalized": false, "special": true }));
    }
    added.sort_by_key(|t| t["id"].as_u64());
    added.dedup_by_key(|t| t["id"].as_u64());
    let (cls, sep) = (&id_of["bos_token"], &id_of["eos_token"]);
    let byte_level = json!({ "type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true });
    let tokenizer = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": byte_level,
        "post_processor": { "type": "RobertaProcessing", "sep": [sep.0, sep.1], "cls": [cls.0, cls.1], "trim_offsets": true, "add_prefix_space": false },
        "decoder": byte_level,
        "model": {
            "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "", "end_of_word_suffix": "",
            "fuse_unk": false, "byte_fallback": false, "ignore_merges": false, "vocab": vocab, "merges": merges,
        },
    });
    serde_json::to_vec(&tokenizer).map_err(|e| bad("tokenizer.json", &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::BertTokenizer;

    fn vocab() -> Vec<u8> {
        br#"{"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "h": 4, "i": 5, "hi": 6, "\u0120": 7, "\u0120hi": 8, "t": 9, "\u0120t": 10, "<mask>": 11}"#.to_vec()
    }

    /// Pieces are merged as `merges.txt` says, a word after a space starts with `Ġ`, and pairs
    /// read `<s> A </s></s> B </s>`.
    #[test]
    fn vocab_and_merges_read_as_robertas_tokenizer() {
        let json = tokenizer_json(&vocab(), b"#version: 0.2\nh i\n\xc4\xa0 hi\n\xc4\xa0 t\n", None).unwrap();
        let tok = BertTokenizer::from_tokenizer_json(&json, 64).unwrap();
        assert_eq!(tok.encode("hi hi").unwrap().ids(), [0, 6, 8, 2]);
        assert_eq!(tok.encode_pair("hi", "hi t").unwrap().ids(), [0, 6, 2, 2, 6, 10, 2]);
        assert_eq!((tok.pad_id, tok.mask_id, tok.piece_kind()), (1, 11, "BPE"));
        // <mask> keeps the space before it as Ġ, unless tokenizer_config.json says it takes it.
        assert_eq!(tok.encode("hi <mask>").unwrap().ids(), [0, 6, 7, 11, 2]);
        let config = br#"{"mask_token": {"content": "<mask>", "lstrip": true}}"#;
        let json = tokenizer_json(&vocab(), b"h i\n", Some(config)).unwrap();
        let tok = BertTokenizer::from_tokenizer_json(&json, 64).unwrap();
        assert_eq!(tok.encode("hi <mask>").unwrap().ids(), [0, 6, 11, 2]);
    }

    #[test]
    fn a_missing_special_or_a_bad_merge_is_named() {
        let err = tokenizer_json(br#"{"<s>": 0}"#, b"", None).unwrap_err().to_string();
        assert!(err.contains("no <pad>"), "{err}");
        let err = tokenizer_json(&vocab(), b"h i x\n", None).unwrap_err().to_string();
        assert!(err.contains("merges.txt line 1"), "{err}");
        // Specials named in tokenizer_config.json are used.
        let err = tokenizer_json(&vocab(), b"", Some(br#"{"mask_token": {"content": "[MASK]"}}"#)).unwrap_err().to_string();
        assert!(err.contains("no [MASK]"), "{err}");
    }
}
