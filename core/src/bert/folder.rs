//! A Hugging Face model folder, as a user has it on disk (dragged onto the page, picked file by
//! file, unzipped, or read by the CLI), made into the [`CheckpointFiles`] the loader reads:
//! one safetensors file whatever the format, and the tokenizer's files.
//!
//! | weights on disk                                      | read as                          |
//! |------------------------------------------------------|----------------------------------|
//! | `model.safetensors`                                  | itself                           |
//! | `model.safetensors.index.json` + shards              | the shards' tensors in one file  |
//! | `pytorch_model.bin` (zip or legacy `torch.save`)     | burn's PyTorch reader, re-stored |
//! | `pytorch_model.bin.index.json` + shards              | likewise, shard by shard         |
//!
//! Half-precision weights stay half here; the loader widens them.

use std::collections::BTreeMap;

use safetensors::tensor::{Dtype, TensorView};
use safetensors::SafeTensors;

use crate::bert::checkpoint::CheckpointFiles;
use crate::error::{Error, Result};
use crate::tokenizer::BertTokenizer;

/// Weight files this crate cannot read, and what they are, for the message.
const OTHER_FORMATS: [(&str, &str); 5] = [
    ("tf_model.h5", "TensorFlow"),
    ("flax_model.msgpack", "Flax"),
    ("model.onnx", "ONNX"),
    ("rust_model.ot", "rust-bert (libtorch)"),
    ("model.ckpt.index", "TensorFlow checkpoint"),
];

/// Turns the files of a model folder (paths relative to where the user picked them, `/`
/// separated) into checkpoint files. The model's folder is the shallowest one holding a
/// `config.json`, so a dragged parent folder or a zip with one top folder works, and a
/// sentence-transformers folder's modules (`1_Pooling/config.json`) are not mistaken for it.
pub fn from_folder(files: Vec<(String, Vec<u8>)>) -> Result<CheckpointFiles> {
    let root = files
        .iter()
        .filter_map(|(path, _)| path.strip_suffix("config.json").filter(|dir| dir.is_empty() || dir.ends_with('/')))
        .min_by_key(|dir| (dir.matches('/').count(), dir.len()))
        .map(str::to_string)
        .ok_or_else(|| Error::Input(missing("config.json", &files)))?;
    let onnx: Vec<String> = files
        .iter()
        .filter_map(|(path, _)| path.strip_prefix(&root).filter(|p| p.starts_with("onnx/") && p.ends_with(".onnx")).map(str::to_string))
        .collect();
    let mut here: BTreeMap<String, Vec<u8>> = files
        .into_iter()
        .filter_map(|(path, bytes)| {
            let name = path.strip_prefix(&root)?;
            (!name.contains('/')).then(|| (name.to_string(), bytes))
        })
        .collect();
    let names: Vec<String> = here.keys().cloned().collect();
    let config_json = here.remove("config.json").expect("the root holds config.json");
    let weights = weights(&mut here, &names).map_err(|e| match onnx.first() {
        // transformers.js's downloads: config, tokenizer and `onnx/model*.onnx`, no weights here.
        Some(file) => Error::Weights(format!(
            "this is a transformers.js (ONNX) download: its weights are {file}, which bertbench does not read; open the model it was converted from, a folder with model.safetensors or pytorch_model.bin (its Hub repository without the onnx/ folder)"
        )),
        None => e,
    })?;
    let tokenizer_json = here.remove("tokenizer.json");
    let vocab_txt = here.remove("vocab.txt");
    let tokenizer_config = here.remove("tokenizer_config.json");
    let model_type = serde_json::from_slice::<serde_json::Value>(&config_json)
        .ok()
        .and_then(|c| c.get("model_type").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_default();
    let sentencepiece = names.iter().find(|n| n.ends_with(".model")).cloned();
    if tokenizer_json.is_none() && vocab_txt.is_none() && !(here.contains_key("vocab.json") && here.contains_key("merges.txt")) && sentencepiece.is_none() {
        return Err(Error::Tokenizer(format!(
            "the folder has no tokenizer.json, vocab.txt, vocab.json with merges.txt, or SentencePiece model (spm.model, spiece.model, sentencepiece.bpe.model); it has {}",
            names.join(", ")
        )));
    }
    // A `vocab.txt` model's casing and options live in `tokenizer_config.json`, an older
    // RoBERTa's tokenizer is `vocab.json` + `merges.txt`, and an ALBERT, XLM-R, CamemBERT or
    // DeBERTa's may be only SentencePiece's own model file: the tokenizer they describe is written
    // out as `tokenizer.json`, so every later step (the worker, saved items, exports) carries it
    // without knowing about them.
    let tokenizer_json = match (tokenizer_json, &vocab_txt) {
        (Some(json), _) => Some(json),
        (None, Some(vocab)) => Some(BertTokenizer::from_vocab_files(vocab, tokenizer_config.as_deref(), usize::MAX)?.to_tokenizer_json()?),
        (None, None) => match (here.get("vocab.json"), here.get("merges.txt"), &sentencepiece) {
            (Some(vocab), Some(merges), _) => Some(crate::tokenizer::bpe_files::tokenizer_json(vocab, merges, tokenizer_config.as_deref())?),
            (_, _, Some(file)) => {
                Some(crate::tokenizer::sentencepiece::tokenizer_json(&here[file], file, &model_type, tokenizer_config.as_deref())?)
            }
            _ => None,
        },
    };
    let tokenizer_json = match tokenizer_json {
        Some(json) if passes_no_segments(tokenizer_config.as_deref(), &model_type) => Some(one_segment(&json)?),
        json => json,
    };
    Ok(CheckpointFiles { config_json, weights, tokenizer_json, vocab_txt })
}

/// Tokenizer classes whose `model_input_names` leave segment ids out by default in
/// `transformers` (of the families read here, the ones with a segment table of two rows), and
/// the `model_type` whose folders get that class when `tokenizer_config.json` names none.
const NO_SEGMENT_CLASSES: [&str; 2] = ["AlbertTokenizer", "AlbertTokenizerFast"];
const NO_SEGMENT_MODEL_TYPES: [&str; 1] = ["albert"];

/// Whether `transformers` gives the model no `token_type_ids` for this folder: its
/// `tokenizer_config.json`'s `model_input_names` leaves them out, or names none and its tokenizer
/// class (`tokenizer_class`, else the one `config.json`'s `model_type` maps to) leaves them out by
/// default. The model then reads every token, a pair's second text too, as segment 0.
fn passes_no_segments(tokenizer_config: Option<&[u8]>, model_type: &str) -> bool {
    let config = tokenizer_config.and_then(|c| serde_json::from_slice::<serde_json::Value>(c).ok()).unwrap_or_default();
    match (config.get("model_input_names").and_then(|v| v.as_array()), config.get("tokenizer_class").and_then(|c| c.as_str())) {
        (Some(names), _) => !names.iter().any(|n| n == "token_type_ids"),
        (None, Some(class)) => NO_SEGMENT_CLASSES.contains(&class),
        (None, None) => NO_SEGMENT_MODEL_TYPES.contains(&model_type),
    }
}

/// `tokenizer.json` with every segment id its post-processor writes set to 0, so a pair reads as
/// `transformers` passes it when it gives no `token_type_ids`; every later step (the worker,
/// saved items, exports) then carries that without knowing about it.
fn one_segment(tokenizer_json: &[u8]) -> Result<Vec<u8>> {
    fn zero(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    if key == "type_id" {
                        *value = serde_json::Value::from(0);
                    } else {
                        zero(value);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(zero),
            _ => {}
        }
    }
    let bad = |e: serde_json::Error| Error::Tokenizer(format!("tokenizer.json: {e}"));
    let mut json: serde_json::Value = serde_json::from_slice(tokenizer_json).map_err(bad)?;
    if let Some(p) = json.get_mut("post_processor") {
        // BertProcessing always writes the second text as segment 1: the same template, spelt
        // out, with segment ids of its own.
        if p.get("type").and_then(|t| t.as_str()) == Some("BertProcessing") {
            let (cls, sep) = (p["cls"].clone(), p["sep"].clone());
            let special = |t: &serde_json::Value| serde_json::json!({"SpecialToken": {"id": t[0], "type_id": 0}});
            let seq = |id: &str| serde_json::json!({"Sequence": {"id": id, "type_id": 0}});
            *p = serde_json::json!({
                "type": "TemplateProcessing",
                "single": [special(&cls), seq("A"), special(&sep)],
                "pair": [special(&cls), seq("A"), special(&sep), seq("B"), special(&sep)],
                "special_tokens": {
                    cls[0].as_str().unwrap_or("[CLS]"): {"id": cls[0], "ids": [cls[1]], "tokens": [cls[0]]},
                    sep[0].as_str().unwrap_or("[SEP]"): {"id": sep[0], "ids": [sep[1]], "tokens": [sep[0]]},
                },
            });
        }
        zero(p);
    }
    serde_json::to_vec(&json).map_err(bad)
}

/// The files of a zipped model folder, as [`from_folder`] takes them (paths inside the zip;
/// directories and unsafe paths skipped).
pub fn unzip(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>> {
    use std::io::Read;
    let bad = |e: zip::result::ZipError| Error::Input(format!("the .zip could not be read: {e}"));
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(bad)?;
    let mut files = Vec::new();
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(bad)?;
        let Some(path) = entry.enclosed_name().filter(|_| entry.is_file()) else { continue };
        let path = path.to_string_lossy().replace('\\', "/");
        let mut data = Vec::with_capacity(entry.size() as usize);
        entry.read_to_end(&mut data).map_err(|e| Error::Input(format!("{path} in the .zip: {e}")))?;
        files.push((path, data));
    }
    Ok(files)
}

/// The folder's weights as one safetensors file.
fn weights(here: &mut BTreeMap<String, Vec<u8>>, names: &[String]) -> Result<Vec<u8>> {
    if let Some(bytes) = here.remove("model.safetensors") {
        return Ok(bytes);
    }
    if let Some(index) = here.remove("model.safetensors.index.json") {
        let shards = take_shards(here, &index, "model.safetensors.index.json")?;
        let parsed = shards
            .iter()
            .map(|(name, bytes)| SafeTensors::deserialize(bytes).map_err(|e| Error::Weights(format!("{name}: {e}"))))
            .collect::<Result<Vec<_>>>()?;
        let views: Vec<(String, TensorView<'_>)> = parsed.iter().flat_map(|st| st.tensors()).collect();
        return serialize(views);
    }
    if let Some(bytes) = here.remove("pytorch_model.bin") {
        return from_pytorch(vec![("pytorch_model.bin".into(), bytes)]);
    }
    if let Some(index) = here.remove("pytorch_model.bin.index.json") {
        return from_pytorch(take_shards(here, &index, "pytorch_model.bin.index.json")?);
    }
    if let Some((file, what)) = OTHER_FORMATS.iter().find(|(file, _)| names.iter().any(|n| n == file)) {
        return Err(Error::Weights(format!(
            "the folder's weights are {what} ({file}); bertbench reads model.safetensors (sharded or not) or pytorch_model.bin"
        )));
    }
    Err(Error::Weights(missing("model.safetensors or pytorch_model.bin", &names.iter().map(|n| (n.clone(), Vec::new())).collect::<Vec<_>>())))
}

/// The shard files an index names (`weight_map`: tensor → file), in file order.
fn take_shards(here: &mut BTreeMap<String, Vec<u8>>, index: &[u8], index_name: &str) -> Result<Vec<(String, Vec<u8>)>> {
    let index: serde_json::Value = serde_json::from_slice(index).map_err(|e| Error::Weights(format!("{index_name}: {e}")))?;
    let map = index
        .get("weight_map")
        .and_then(|m| m.as_object())
        .ok_or_else(|| Error::Weights(format!("{index_name} has no weight_map")))?;
    let mut files: Vec<String> = map.values().filter_map(|v| v.as_str().map(String::from)).collect();
    files.sort();
    files.dedup();
    let absent: Vec<&String> = files.iter().filter(|f| !here.contains_key(*f)).collect();
    if !absent.is_empty() {
        return Err(Error::Weights(format!(
            "{index_name} names {} shard(s) that are not in the folder: {}",
            absent.len(),
            absent.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(files.into_iter().map(|f| (f.clone(), here.remove(&f).expect("checked above"))).collect())
}

/// Reads `torch.save` state dicts with burn's PyTorch reader and stores their tensors as one
/// safetensors file (the loader's one path for every format).
fn from_pytorch(shards: Vec<(String, Vec<u8>)>) -> Result<Vec<u8>> {
    let mut tensors: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    for (name, bytes) in shards {
        let reader = pytorch_reader::PytorchReader::from_bytes(bytes, None)
            .map_err(|e| Error::Weights(format!("{name} could not be read as a PyTorch checkpoint: {e}")))?;
        for (key, tensor) in reader.into_tensors() {
            let dtype = safetensors_dtype(tensor.dtype());
            let data = tensor.read().map_err(|e| Error::Weights(format!("{name}: {e}")))?;
            tensors.push((key, dtype, tensor.shape().to_vec(), data));
        }
    }
    let views = tensors
        .iter()
        .map(|(key, dtype, shape, data)| {
            TensorView::new(*dtype, shape.clone(), data).map(|v| (key.clone(), v)).map_err(|e| Error::Weights(format!("{key}: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    serialize(views)
}

fn safetensors_dtype(dtype: pytorch_reader::DType) -> Dtype {
    use pytorch_reader::DType as D;
    match dtype {
        D::F64 => Dtype::F64,
        D::F32 => Dtype::F32,
        D::F16 => Dtype::F16,
        D::BF16 => Dtype::BF16,
        D::I64 => Dtype::I64,
        D::I32 => Dtype::I32,
        D::I16 => Dtype::I16,
        D::I8 => Dtype::I8,
        D::U64 => Dtype::U64,
        D::U32 => Dtype::U32,
        D::U16 => Dtype::U16,
        D::U8 => Dtype::U8,
        D::Bool => Dtype::BOOL,
    }
}

fn serialize(views: Vec<(String, TensorView<'_>)>) -> Result<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    if let Some((dup, _)) = views.iter().find(|(name, _)| !seen.insert(name.clone())) {
        return Err(Error::Weights(format!("the tensor {dup} appears twice in the checkpoint's files")));
    }
    safetensors::serialize(views, None).map_err(|e| Error::Weights(e.to_string()))
}

fn missing(what: &str, files: &[(String, Vec<u8>)]) -> String {
    let mut names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    names.sort();
    let shown = names.iter().take(12).copied().collect::<Vec<_>>().join(", ");
    let more = if names.len() > 12 { format!(" and {} more", names.len() - 12) } else { String::new() };
    format!("a Hugging Face model folder needs {what}; this one has {shown}{more}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::checkpoint::save_weights;
    use crate::bert::model::BertModelConfig;
    use crate::test_util::tiny_config;
    use burn::prelude::Device;

    fn weights() -> Vec<u8> {
        save_weights(&BertModelConfig::new(tiny_config(40)).init(&Device::flex())).unwrap()
    }

    fn file(name: &str, bytes: &[u8]) -> (String, Vec<u8>) {
        (name.to_string(), bytes.to_vec())
    }

    #[test]
    fn finds_the_model_folder_under_a_parent_and_ignores_module_folders() {
        let files = vec![
            file("my-model/1_Pooling/config.json", b"{}"),
            file("my-model/config.json", b"{\"model_type\": \"bert\"}"),
            file("my-model/model.safetensors", &weights()),
            file("my-model/vocab.txt", b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nHello\nhello\n"),
            file("my-model/tokenizer_config.json", b"{\"do_lower_case\": false}"),
        ];
        let got = from_folder(files).unwrap();
        assert_eq!(got.config_json, b"{\"model_type\": \"bert\"}");
        // The cased vocab.txt became a tokenizer.json that keeps case.
        let tokenizer = BertTokenizer::from_tokenizer_json(got.tokenizer_json.as_deref().unwrap(), 16).unwrap();
        let pieces: Vec<String> = tokenizer.encode("[MASK]").unwrap().tokens.iter().map(|t| t.piece.clone()).collect();
        assert_eq!(pieces, ["[CLS]", "[MASK]", "[SEP]"]);
        assert!(got.vocab_txt.is_some());
    }

    #[test]
    fn a_tokenizer_that_passes_no_segment_ids_reads_pairs_as_segment_0_as_transformers_does() {
        let vocab = b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n";
        let pair_types = |tokenizer_config: &[u8]| {
            let files = vec![
                file("m/config.json", b"{\"model_type\": \"bert\"}"),
                file("m/model.safetensors", &weights()),
                file("m/vocab.txt", vocab),
                file("m/tokenizer_config.json", tokenizer_config),
            ];
            let got = from_folder(files).unwrap();
            let tokenizer = BertTokenizer::from_tokenizer_json(got.tokenizer_json.as_deref().unwrap(), 16).unwrap();
            tokenizer.encode_pair("hello", "world").unwrap().tokens.iter().map(|t| t.type_id).collect::<Vec<_>>()
        };
        assert_eq!(pair_types(b"{}"), [0, 0, 0, 1, 1]);
        assert_eq!(pair_types(b"{\"model_input_names\": [\"input_ids\", \"token_type_ids\", \"attention_mask\"]}"), [0, 0, 0, 1, 1]);
        assert_eq!(pair_types(b"{\"model_input_names\": [\"input_ids\", \"attention_mask\"]}"), [0; 5]);
        assert_eq!(pair_types(b"{\"tokenizer_class\": \"AlbertTokenizer\"}"), [0; 5]);
        assert_eq!(pair_types(b"{\"tokenizer_class\": \"AlbertTokenizer\", \"model_input_names\": [\"token_type_ids\"]}"), [0, 0, 0, 1, 1]);
    }

    #[test]
    fn shards_are_joined_into_one_file() {
        let whole = weights();
        let st = SafeTensors::deserialize(&whole).unwrap();
        let all = st.tensors();
        let (a, b) = all.split_at(all.len() / 2);
        let shard = |part: &[(String, TensorView<'_>)]| safetensors::serialize(part.to_vec(), None).unwrap();
        let mut map = serde_json::Map::new();
        for (n, _) in a {
            map.insert(n.clone(), "model-00001-of-00002.safetensors".into());
        }
        for (n, _) in b {
            map.insert(n.clone(), "model-00002-of-00002.safetensors".into());
        }
        let index = serde_json::to_vec(&serde_json::json!({"metadata": {}, "weight_map": map})).unwrap();
        let files = vec![
            file("config.json", b"{}"),
            file("model.safetensors.index.json", &index),
            file("model-00001-of-00002.safetensors", &shard(a)),
            file("model-00002-of-00002.safetensors", &shard(b)),
            file("tokenizer.json", b"{}"),
        ];
        let joined = from_folder(files.clone()).unwrap().weights;
        let back = SafeTensors::deserialize(&joined).unwrap();
        assert_eq!(back.len(), all.len());
        for (name, view) in &all {
            assert_eq!(back.tensor(name).unwrap().data(), view.data(), "{name}");
        }
        let err = from_folder(files[..3].to_vec()).unwrap_err().to_string();
        assert!(err.contains("model-00002-of-00002.safetensors") && err.contains("not in the folder"), "{err}");
    }

    #[test]
    fn a_zipped_folder_unzips_to_its_paths() {
        use std::io::Write;
        let mut buffer = std::io::Cursor::new(Vec::new());
        let mut writer = zip::ZipWriter::new(&mut buffer);
        let deflated = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        writer.add_directory("my-model/", deflated).unwrap();
        writer.start_file("my-model/config.json", deflated).unwrap();
        writer.write_all(b"{\"model_type\": \"bert\"}").unwrap();
        writer.finish().unwrap();
        let files = unzip(buffer.get_ref()).unwrap();
        assert_eq!(files, vec![("my-model/config.json".to_string(), b"{\"model_type\": \"bert\"}".to_vec())]);
        let err = unzip(b"PK not really").unwrap_err().to_string();
        assert!(err.contains(".zip could not be read"), "{err}");
    }

    #[test]
    fn other_formats_and_missing_parts_are_named() {
        let err = from_folder(vec![file("config.json", b"{}"), file("tf_model.h5", b"x"), file("vocab.txt", b"x")]).unwrap_err().to_string();
        assert!(err.contains("TensorFlow") && err.contains("pytorch_model.bin"), "{err}");
        let err = from_folder(vec![file("model.safetensors", b"x")]).unwrap_err().to_string();
        assert!(err.contains("config.json") && err.contains("model.safetensors"), "{err}");
        // vocab.json + merges.txt are read (RoBERTa's tokenizer built from them): a vocabulary
        // without RoBERTa's specials is refused naming the one missing.
        let err = from_folder(vec![file("config.json", b"{}"), file("model.safetensors", b"x"), file("vocab.json", b"{}"), file("merges.txt", b"")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("vocab.json has no <s>"), "{err}");
        // A SentencePiece model file alone, for a family whose tokenizer is not built from one, is
        // named, with how to add tokenizer.json; one that is not a SentencePiece model says so.
        let err = from_folder(vec![file("config.json", b"{\"model_type\": \"t5\"}"), file("model.safetensors", b"x"), file("spiece.model", b"x")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("spiece.model") && err.contains("\"t5\"") && err.contains("deberta-v2") && err.contains("save_pretrained"), "{err}");
        let err = from_folder(vec![file("config.json", b"{\"model_type\": \"deberta-v2\"}"), file("model.safetensors", b"x"), file("spm.model", b"\xff\xff")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("spm.model: not a SentencePiece model"), "{err}");
        // No tokenizer at all lists what a folder may have.
        let err = from_folder(vec![file("config.json", b"{}"), file("model.safetensors", b"x")]).unwrap_err().to_string();
        assert!(err.contains("no tokenizer.json, vocab.txt") && err.contains("spm.model"), "{err}");
        // A transformers.js download: ONNX weights under onnx/, named as what it is.
        let err = from_folder(vec![file("m/config.json", b"{}"), file("m/tokenizer.json", b"{}"), file("m/onnx/model_quantized.onnx", b"x"), file("m/onnx/model.onnx", b"x")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("transformers.js (ONNX) download") && err.contains("onnx/model_quantized.onnx") && err.contains("model.safetensors"), "{err}");
        let err = from_folder(vec![file("config.json", b"{}"), file("pytorch_model.bin", b"not a pickle"), file("vocab.txt", b"x")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("pytorch_model.bin could not be read"), "{err}");
    }
}
