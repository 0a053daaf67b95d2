//! The current classifier: predictions for texts and files, export as a zip of a Hugging Face
//! folder, and import from one.

use super::*;

pub(super) async fn predict_texts(current: &Current, texts: &[(String, Option<String>)]) -> Result<Vec<Vec<f32>>, String> {
    let tok = &current.loaded.tokenizer;
    let encoded = texts
        .iter()
        .enumerate()
        .map(|(i, (a, b))| {
            tok.encode_text(a, b.as_deref()).map_err(|e| if texts.len() > 1 { format!("row {}: {e}", i + 1) } else { e.to_string() })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Shortest first across the whole file, so each batch pads to about its own length.
    let mut out = vec![Vec::new(); encoded.len()];
    let mut last_yield = now_ms();
    for indices in by_length(&encoded).chunks(32) {
        let chunk: Vec<_> = indices.iter().map(|&i| encoded[i].clone()).collect();
        let probs = predict(&current.loaded.model, current.loaded.meta.scoring(), &chunk, tok.pad_id, 32, &current.device).await.map_err(|e| e.to_string())?;
        for (&i, p) in indices.iter().zip(probs) {
            out[i] = p;
        }
        if now_ms() - last_yield > 30.0 {
            sleep_ms(0).await;
            last_yield = now_ms();
        }
    }
    Ok(out)
}

/// Each text's words with their tags, from a tagger (texts one at a time: a typed sentence, or
/// a file's lines), yielding between texts.
pub(super) async fn tag_texts(current: &Current, texts: &[String]) -> Result<Vec<Vec<TaggedWord>>, String> {
    let loaded = &current.loaded;
    let mut out = Vec::with_capacity(texts.len());
    let mut last_yield = now_ms();
    for (i, text) in texts.iter().enumerate() {
        let words = tagging::tag_text(&loaded.model, &loaded.tokenizer, &loaded.meta.labels, text, &current.device)
            .await
            .map_err(|e| if texts.len() > 1 { format!("line {}: {e}", i + 1) } else { e.to_string() })?;
        out.push(words);
        if now_ms() - last_yield > 30.0 {
            sleep_ms(0).await;
            last_yield = now_ms();
        }
    }
    Ok(out)
}

/// The classifier as a zip. Weights on WebGPU are first copied to the CPU with an asynchronous
/// read: the export reads tensors synchronously, which WebGPU in a browser cannot do.
pub(super) async fn host_zip(current: &Current, name: &str) -> Result<Vec<u8>, String> {
    let cpu = Device::flex();
    if current.device == cpu {
        // Already in memory: no copy of the weights.
        return export_zip(current, name);
    }
    let model = copy_to(current.loaded.model.clone(), &cpu).await.map_err(|e| e.to_string())?;
    let on_host = Current {
        loaded: LoadedClassifier { model, ..current.loaded.clone() },
        device: cpu,
        tokenizer_json: current.tokenizer_json.clone(),
        vocab_txt: current.vocab_txt.clone(),
    };
    export_zip(&on_host, name)
}

pub(super) fn export_zip(current: &Current, name: &str) -> Result<Vec<u8>, String> {
    let files = classification::export(
        &current.loaded.config,
        &current.loaded.model,
        &current.loaded.meta,
        &current.loaded.tokenizer,
        current.tokenizer_json.as_deref(),
        current.vocab_txt.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    // Sized up front: growing by doubling would hold a half-size and a full-size copy at once.
    let size = files.iter().map(|(name, bytes)| bytes.len() + 2 * name.len() + 256).sum::<usize>() + 1024;
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::with_capacity(size)));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (file, bytes) in files {
        zip.start_file(format!("{name}/{file}"), options).map_err(|e| e.to_string())?;
        zip.write_all(&bytes).map_err(|e| e.to_string())?;
    }
    Ok(zip.finish().map_err(|e| e.to_string())?.into_inner())
}

/// Files by their path in the model's folder, from a list of files or from one zip: the folder
/// is the shallowest one holding a `config.json` (a zip's top folder, say), so a
/// sentence-transformers folder's modules keep their folders (`1_Pooling/config.json`).
pub(super) fn unpack(names: Vec<String>, bytes: Vec<Vec<u8>>) -> Result<Vec<(String, Vec<u8>)>, String> {
    let files = if names.len() == 1 && names[0].to_lowercase().ends_with(".zip") {
        let mut archive = zip::ZipArchive::new(Cursor::new(&bytes[0])).map_err(|e| format!("{} is not a readable zip: {e}", names[0]))?;
        let mut out = Vec::new();
        for i in 0..archive.len() {
            let mut file = archive.by_index(i).map_err(|e| e.to_string())?;
            if file.is_dir() {
                continue;
            }
            let name = file.name().to_string();
            let mut data = Vec::with_capacity(file.size() as usize);
            file.read_to_end(&mut data).map_err(|e| format!("{name} in the zip: {e}"))?;
            out.push((name, data));
        }
        out
    } else {
        names.into_iter().zip(bytes).collect()
    };
    let root = files
        .iter()
        .filter_map(|(path, _)| path.strip_suffix("config.json").filter(|dir| dir.is_empty() || dir.ends_with('/')))
        .min_by_key(|dir| (dir.matches('/').count(), dir.len()))
        .map(str::to_string)
        .unwrap_or_default();
    Ok(files.into_iter().filter_map(|(path, bytes)| Some((path.strip_prefix(&root)?.to_string(), bytes))).collect())
}

pub(super) fn import(names: Vec<String>, bytes: Vec<Vec<u8>>) -> Result<Current, String> {
    let files = unpack(names, bytes)?;
    let take = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
    let config_json = take("config.json").ok_or("config.json is missing")?;
    let weights = take("model.safetensors").ok_or("model.safetensors is missing")?;
    let tokenizer_json = take("tokenizer.json");
    let vocab_txt = take("vocab.txt");
    let device = Device::flex();
    let checkpoint = CheckpointFiles { config_json, weights, tokenizer_json: tokenizer_json.clone(), vocab_txt: vocab_txt.clone() };
    let loaded = match take("modules.json") {
        // A sentence-transformers folder: a bi-encoder.
        Some(modules) => {
            let modules = similarity::sentence_transformer_modules(&modules).map_err(|e| e.to_string())?;
            let pooling = take(&format!("{}/config.json", modules.pooling)).ok_or_else(|| format!("{}/config.json is missing", modules.pooling))?;
            let dense = match &modules.dense {
                Some(dir) => {
                    let config = take(&format!("{dir}/config.json")).ok_or_else(|| format!("{dir}/config.json is missing"))?;
                    let weights = take(&format!("{dir}/model.safetensors"))
                        .ok_or_else(|| format!("{dir}/model.safetensors is missing (a dense layer saved as pytorch_model.bin by an old sentence-transformers: save it again with a recent one)"))?;
                    Some((config, weights))
                }
                None => None,
            };
            similarity::load_bi_encoder(checkpoint, &pooling, dense.as_ref().map(|(c, w)| (c.as_slice(), w.as_slice())), &device)
        }
        None => classification::load_classifier(checkpoint, take(HEAD_FILE), &device),
    }
    .map_err(|e| e.to_string())?;
    Ok(Current { loaded, device, tokenizer_json, vocab_txt })
}
