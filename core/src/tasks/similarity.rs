//! Sentence similarity, the two ways the lectures compare:
//!
//! - a **cross-encoder** reads the pair as one sequence (`[CLS] a [SEP] b [SEP]`) and a linear
//!   head gives one number, regressed on the pair's similarity (mean squared error): every token
//!   of one text attends to every token of the other, which is accurate, but comparing one query
//!   with N texts takes N passes of the encoder. It is a [`BertClassifier`] at [`Level::Score`]
//!   with one output, `transformers`' `*ForSequenceClassification` with `num_labels = 1`
//!   (`problem_type = "regression"`).
//! - a **bi-encoder** encodes each text alone into a sentence vector (mean or `[CLS]` pooling of
//!   the last layer), passes it through a dense layer, and compares two vectors by their cosine
//!   (Reimers and Gurevych, 2019, Sentence-BERT). The vectors of N texts are computed once; a
//!   query then costs one pass and N dot products. It is a [`BertClassifier`] at
//!   [`Level::Embedding`] whose head is `hidden → hidden`, initialised to the identity, so before
//!   training it is the pretrained model's own sentence vector. It exports as a
//!   sentence-transformers folder (`Transformer`, `Pooling`, `Dense`).
//!
//! Scores are the data's similarity scaled to 0..1 ([`crate::data::ScoreScale`]). Losses are
//! sentence-transformers': `CosineSimilarityLoss` (the squared error of the cosine against the
//! score) and `ContrastiveLoss` (cosine distance, margin 0.5) for pairs labelled similar or not.
//! Metrics are those of STS benchmarks: Pearson's and Spearman's correlation of the predicted
//! with the gold scores.

use std::collections::BTreeMap;

use burn::nn::{DropoutConfig, Linear};
use burn::prelude::*;
use burn::tensor::TensorData;
use safetensors::SafeTensors;
use serde::{Deserialize, Serialize};

pub use super::classification::{check_bi_encoder_spec, pair_cosines};
use super::classification::{BertClassifier, ClassificationHead, ClassifierMeta, FeatureLayers, FeatureSpec, HeadClass, Level, LoadedClassifier, TokenizerFiles};
use crate::bert::checkpoint::{CheckpointFiles, save_weights};
use crate::bert::config::BertConfig;
use crate::bert::model::rows_by_length;
use crate::bert::pooling::Pooling;
use crate::error::Error;
use crate::tokenizer::{BertTokenizer, Encoded};

/// The one output of a similarity model.
pub const LABELS: [&str; 1] = ["score"];

/// The margin of [`SimilarityLoss::Contrastive`] (sentence-transformers' default for cosine
/// distance).
pub const CONTRASTIVE_MARGIN: f32 = 0.5;

/// What a bi-encoder's training minimises (a cross-encoder always regresses its output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SimilarityLoss {
    /// `(cos(u, v) − score)²`, sentence-transformers' `CosineSimilarityLoss`.
    #[default]
    Cosine,
    /// With `d = 1 − cos(u, v)` and a label `y` (1 similar, 0 not):
    /// `½ (y d² + (1 − y) max(0, margin − d)²)`, sentence-transformers' `ContrastiveLoss`:
    /// similar pairs are pulled together, different ones pushed apart until `margin`.
    Contrastive,
}

impl SimilarityLoss {
    /// Short label for the page.
    pub fn label(self) -> &'static str {
        match self {
            SimilarityLoss::Cosine => "cosine similarity vs score (squared error)",
            SimilarityLoss::Contrastive => "contrastive (pull similar pairs together, push others apart)",
        }
    }
}

/// The mean loss of a batch of predictions against their scores: a cross-encoder's squared
/// error, a bi-encoder's as `kind` says.
///
/// # Shapes
/// - `pred`: `[units, 1]` (a cross-encoder's outputs, a bi-encoder's cosines); `scores`: `[units]`
/// - output: `[1]`
pub fn loss(level: Level, kind: SimilarityLoss, pred: Tensor<2>, scores: Tensor<1>) -> Tensor<1> {
    let n = pred.dims()[0];
    let pred = pred.reshape([n]);
    match (level, kind) {
        (Level::Embedding, SimilarityLoss::Contrastive) => {
            let d = pred.neg().add_scalar(1.0);
            let near = scores.clone() * d.clone().powi_scalar(2);
            let far = scores.neg().add_scalar(1.0) * d.neg().add_scalar(CONTRASTIVE_MARGIN).clamp_min(0.0).powi_scalar(2);
            (near + far).mean().mul_scalar(0.5)
        }
        _ => (pred - scores).powi_scalar(2).mean(),
    }
}

/// [`loss`] on the host, for the validation set.
pub fn host_loss(level: Level, kind: SimilarityLoss, pred: &[f32], scores: &[f32]) -> f32 {
    let each = pred.iter().zip(scores).map(|(&p, &y)| match (level, kind) {
        (Level::Embedding, SimilarityLoss::Contrastive) => {
            let d = 1.0 - p;
            0.5 * (y * d * d + (1.0 - y) * (CONTRASTIVE_MARGIN - d).max(0.0).powi(2))
        }
        _ => (p - y).powi(2),
    });
    (each.map(f64::from).sum::<f64>() / pred.len().max(1) as f64) as f32
}

/// A bi-encoder's dense layer `width → width` at the identity: before training, the model's
/// vectors are the encoder's own.
pub fn identity_head(width: usize, device: &Device) -> ClassificationHead {
    ClassificationHead {
        transform: None,
        dropout: DropoutConfig::new(0.0).init(),
        classifier: Linear {
            weight: burn::module::Param::from_tensor(Tensor::<2>::eye(width, device)),
            bias: Some(burn::module::Param::from_tensor(Tensor::<1>::zeros([width], device))),
        },
    }
}

/// How well predicted similarities follow the gold scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimilarityMetrics {
    /// Pairs scored.
    pub count: usize,
    /// Pearson's correlation (linear agreement), −1..1.
    pub pearson: f32,
    /// Spearman's rank correlation (the STS benchmarks' main score), −1..1.
    pub spearman: f32,
    /// Mean squared error against the scores in 0..1.
    pub mse: f32,
    /// Pairs on the right side of 0.5 (both similar or both not), for data labelled similar or not.
    pub accuracy: Option<f32>,
}

impl SimilarityMetrics {
    /// Metrics of predictions `pred` against gold `scores` (both 0..1); `binary`: the scores are
    /// labels 0 and 1.
    pub fn new(scores: &[f32], pred: &[f32], binary: bool) -> Self {
        let mse = pred.iter().zip(scores).map(|(p, y)| f64::from((p - y).powi(2))).sum::<f64>() / scores.len().max(1) as f64;
        let correct = pred.iter().zip(scores).filter(|(p, y)| (**p >= 0.5) == (**y >= 0.5)).count();
        Self {
            count: scores.len(),
            pearson: pearson(scores, pred),
            spearman: spearman(scores, pred),
            mse: mse as f32,
            accuracy: binary.then(|| correct as f32 / scores.len().max(1) as f32),
        }
    }
}

/// Pearson's correlation coefficient; 0 when either side is constant (it is undefined there).
pub fn pearson(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    if n < 2 {
        return 0.0;
    }
    let mean = |x: &[f32]| x[..n].iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
    let (ma, mb) = (mean(a), mean(b));
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (x, y) = (f64::from(a[i]) - ma, f64::from(b[i]) - mb);
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    if saa <= 0.0 || sbb <= 0.0 {
        return 0.0;
    }
    (sab / (saa * sbb).sqrt()) as f32
}

/// Ranks from 1, ties given the mean of the ranks they span (as `scipy.stats.rankdata`).
pub fn ranks(x: &[f32]) -> Vec<f32> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
    let mut out = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f32 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = rank;
        }
        i = j + 1;
    }
    out
}

/// Spearman's rank correlation: Pearson's on the ranks, ties averaged.
pub fn spearman(a: &[f32], b: &[f32]) -> f32 {
    pearson(&ranks(a), &ranks(b))
}

/// The similarity of each pair in 0..1 units: a cross-encoder's output for the pair read
/// together (for a pair whose second text is empty, its output for the first text alone: a
/// one-output model of single texts), or the cosine of a bi-encoder's two vectors (which needs
/// both texts). Batches of 32, shortest first.
pub async fn score_pairs(model: &BertClassifier, tokenizer: &BertTokenizer, pairs: &[(String, String)], device: &Device) -> crate::Result<Vec<f32>> {
    let numbered = |i: usize, e: Error| if pairs.len() > 1 { Error::Input(format!("pair {}: {e}", i + 1)) } else { e };
    match model.spec.level {
        Level::Score => {
            let encoded = pairs
                .iter()
                .enumerate()
                // An empty second text: a model of single texts (a regressor from the Hub) reads the first alone.
                .map(|(i, (a, b))| tokenizer.encode_text(a, Some(b.as_str()).filter(|b| !b.trim().is_empty())).map_err(|e| numbered(i, e)))
                .collect::<crate::Result<Vec<_>>>()?;
            let rows = rows_by_length(&encoded, tokenizer.pad_id, 32, device, |input| model.forward(input)).await?;
            Ok(rows.into_iter().map(|r| r[0]).collect())
        }
        Level::Embedding => {
            if let Some(i) = pairs.iter().position(|(_, b)| b.trim().is_empty()) {
                return Err(numbered(i, Error::Input("a bi-encoder compares two texts: give the second text too".into())));
            }
            let texts: Vec<String> = pairs.iter().flat_map(|(a, b)| [a.clone(), b.clone()]).collect();
            let vectors = embed_texts(model, tokenizer, &texts, device).await.map_err(|e| match e {
                Error::Input(m) if pairs.len() > 1 => Error::Input(format!("pair {m}")),
                other => other,
            })?;
            Ok(vectors.chunks(2).map(|v| dot(&v[0], &v[1])).collect())
        }
        _ => Err(Error::Input("the current model does not score pairs of texts; train a similarity model first".into())),
    }
}

/// A bi-encoder's vectors of `texts`, scaled to unit length (so a dot product is a cosine).
pub async fn embed_texts(model: &BertClassifier, tokenizer: &BertTokenizer, texts: &[String], device: &Device) -> crate::Result<Vec<Vec<f32>>> {
    if model.spec.level != Level::Embedding {
        return Err(Error::Input("only a bi-encoder gives each text its own vector; this model reads pairs together".into()));
    }
    let encoded = texts
        .iter()
        .enumerate()
        .map(|(i, t)| tokenizer.encode(t).map_err(|e| if texts.len() > 1 { Error::Input(format!("text {}: {e}", i + 1)) } else { e }))
        .collect::<crate::Result<Vec<Encoded>>>()?;
    let rows = rows_by_length(&encoded, tokenizer.pad_id, 32, device, |input| model.forward(input)).await?;
    Ok(rows.into_iter().map(unit).collect())
}

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The indices of `vectors` by cosine with `query`, highest first, with the cosine (all
/// vectors of unit length, from [`embed_texts`]).
pub fn rank(query: &[f32], vectors: &[Vec<f32>]) -> Vec<(usize, f32)> {
    let mut scored: Vec<(usize, f32)> = vectors.iter().enumerate().map(|(i, v)| (i, dot(query, v))).collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}

/// sentence-transformers' module list for a bi-encoder: the encoder, its pooling, the dense layer.
const MODULES_JSON: &str = r#"[
  {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
  {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
  {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}
]
"#;

/// Where a bi-encoder's dense layer is kept in its folder.
pub const DENSE_FILE: &str = "2_Dense/model.safetensors";

/// A bi-encoder's class: a sentence-transformers folder ([`export_bi_encoder`]), always saved
/// whole.
pub(crate) struct BiEncoderClass;

impl HeadClass for BiEncoderClass {
    fn suffix(&self) -> &'static str {
        "ForSequenceClassification"
    }

    fn reads(&self) -> Option<&'static str> {
        Some("each text alone")
    }

    fn not_per_text(&self) -> Option<&'static str> {
        Some("a bi-encoder gives each text a vector, not a label; compare two texts instead")
    }

    fn export(&self, config: &BertConfig, model: &BertClassifier, meta: &ClassifierMeta, tokenizer: &TokenizerFiles) -> Option<crate::Result<Vec<(String, Vec<u8>)>>> {
        Some(export_bi_encoder(config, model, meta, tokenizer.tokenizer_config.clone(), tokenizer.tokenizer_json, tokenizer.vocab_txt))
    }

    fn saved_alone(&self) -> crate::Result<()> {
        Err(Error::Input("a bi-encoder is saved whole, as a sentence-transformers folder".into()))
    }
}

/// Writes a bi-encoder as a sentence-transformers folder, `(path, bytes)` pairs:
/// `SentenceTransformer(folder)` loads it and gives the page's vectors (before its optional
/// normalisation); `AutoModel` loads the encoder alone. `config.json` is the encoder's, with
/// `bertbench_head` (features, length, the score scale) for the page to read it back.
pub fn export_bi_encoder(
    config: &BertConfig,
    model: &BertClassifier,
    meta: &ClassifierMeta,
    tokenizer_config: Vec<u8>,
    tokenizer_json: Option<&[u8]>,
    vocab_txt: Option<&[u8]>,
) -> crate::Result<Vec<(String, Vec<u8>)>> {
    check_bi_encoder_spec(&meta.spec)?;
    let family = config.model_type;
    let mut value: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).map_err(|e| Error::Config(e.to_string()))?;
    let obj = value.as_object_mut().expect("config is an object");
    obj.insert("architectures".into(), serde_json::json!([family.base_architecture()]));
    obj.insert("bertbench_head".into(), serde_json::json!({
        "spec": meta.spec,
        "max_len": meta.max_len,
        "scale": meta.scale,
        "file": DENSE_FILE,
        "how": "a bi-encoder (sentence-transformers): each text's pooled last layer through 2_Dense (identity activation); similarity = cosine",
    }));
    let config_json = serde_json::to_vec_pretty(&value).map_err(|e| Error::Config(e.to_string()))?;
    let hidden = config.hidden_size;
    let mean = meta.spec.pooling == Pooling::Mean;
    let pooling = serde_json::json!({
        "word_embedding_dimension": hidden,
        "pooling_mode_cls_token": !mean,
        "pooling_mode_mean_tokens": mean,
        "pooling_mode_max_tokens": false,
        "pooling_mode_mean_sqrt_len_tokens": false,
        "pooling_mode_weightedmean_tokens": false,
        "pooling_mode_lasttoken": false,
        "include_prompt": true,
    });
    let width = model.head.classifier.weight.dims()[1];
    let dense = serde_json::json!({
        "in_features": hidden,
        "out_features": width,
        "bias": true,
        "activation_function": "torch.nn.modules.linear.Identity",
    });
    let json = |v: serde_json::Value| serde_json::to_vec_pretty(&v).expect("JSON serialises");
    let weight = model.head.classifier.weight.val().transpose();
    let bias = model.head.classifier.bias.as_ref().map_or_else(|| Tensor::<1>::zeros([width], &weight.device()), |b| b.val());
    let read = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().map_err(|e| Error::Device(format!("{e:?}")));
    let dense_weights = f32_safetensors(vec![
        ("linear.weight".into(), read(weight)?, vec![width, hidden]),
        ("linear.bias".into(), read(bias.unsqueeze())?, vec![width]),
    ])?;
    let mut files = vec![
        ("config.json".to_string(), config_json),
        ("model.safetensors".into(), save_weights(&model.bert)?),
        ("modules.json".into(), MODULES_JSON.as_bytes().to_vec()),
        ("sentence_bert_config.json".into(), json(serde_json::json!({ "max_seq_length": meta.max_len, "do_lower_case": false }))),
        ("config_sentence_transformers.json".into(), json(serde_json::json!({ "similarity_fn_name": "cosine" }))),
        ("1_Pooling/config.json".into(), json(pooling)),
        ("2_Dense/config.json".into(), json(dense)),
        (DENSE_FILE.into(), dense_weights),
        ("tokenizer_config.json".into(), tokenizer_config),
    ];
    files.extend(tokenizer_json.map(|b| ("tokenizer.json".to_string(), crate::tokenizer::tokenizer_json_as_run(b))));
    files.extend(vocab_txt.map(|b| ("vocab.txt".to_string(), b.to_vec())));
    Ok(files)
}

fn f32_safetensors(tensors: Vec<(String, Vec<f32>, Vec<usize>)>) -> crate::Result<Vec<u8>> {
    let bytes: Vec<(String, Vec<u8>, Vec<usize>)> =
        tensors.into_iter().map(|(n, v, s)| (n, v.iter().flat_map(|x| x.to_le_bytes()).collect(), s)).collect();
    let views = bytes
        .iter()
        .map(|(n, data, shape)| {
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), data).map(|v| (n.clone(), v)).map_err(|e| Error::Weights(e.to_string()))
        })
        .collect::<crate::Result<Vec<_>>>()?;
    let meta: BTreeMap<String, String> = BTreeMap::from([("format".to_string(), "pt".to_string())]);
    safetensors::serialize(views, Some(meta.into_iter().collect())).map_err(|e| Error::Weights(e.to_string()))
}

/// Where a sentence-transformers folder keeps its modules (from its `modules.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentenceTransformerModules {
    /// The `Pooling` module's folder (`1_Pooling`).
    pub pooling: String,
    /// The `Dense` module's folder (`2_Dense`), if it has one.
    pub dense: Option<String>,
}

/// Reads a sentence-transformers `modules.json`: the encoder (`Transformer`), its `Pooling`, and
/// optionally a `Dense` layer and a `Normalize` (which changes no cosine). Any other module is
/// refused by name: the page would compute something else.
pub fn sentence_transformer_modules(modules_json: &[u8]) -> crate::Result<SentenceTransformerModules> {
    let list: Vec<serde_json::Value> = serde_json::from_slice(modules_json).map_err(|e| Error::Config(format!("modules.json: {e}")))?;
    let (mut pooling, mut dense) = (None, None);
    for m in &list {
        let kind = m.get("type").and_then(serde_json::Value::as_str).unwrap_or_default();
        let path = m.get("path").and_then(serde_json::Value::as_str).unwrap_or_default().trim_end_matches('/').to_string();
        match kind.rsplit('.').next().unwrap_or_default() {
            "Transformer" | "Normalize" => {}
            "Pooling" if pooling.is_none() => pooling = Some(path),
            "Dense" if dense.is_none() => dense = Some(path),
            other => {
                return Err(Error::UnsupportedConfig(format!(
                    "modules.json: the sentence-transformers module {other:?} is not computed by the page (it computes Transformer, Pooling, one Dense and Normalize)"
                )));
            }
        }
    }
    let pooling = pooling.ok_or_else(|| Error::Config("modules.json names no Pooling module: it is not a sentence-transformers bi-encoder".into()))?;
    Ok(SentenceTransformerModules { pooling, dense })
}

/// Loads a bi-encoder from a sentence-transformers folder: the encoder's files, its pooling's
/// `config.json`, and its dense layer's `config.json` and `model.safetensors` (`linear.weight`,
/// `linear.bias`, an identity activation) when it has one (without, the dense layer is the
/// identity: the model's own sentence vectors). Refuses a pooling or an activation the page does
/// not compute.
pub fn load_bi_encoder(files: CheckpointFiles, pooling_json: &[u8], dense: Option<(&[u8], &[u8])>, device: &Device) -> crate::Result<LoadedClassifier> {
    let raw: serde_json::Value = serde_json::from_slice(&files.config_json).map_err(|e| Error::Config(e.to_string()))?;
    let pool: serde_json::Value = serde_json::from_slice(pooling_json).map_err(|e| Error::Config(format!("1_Pooling/config.json: {e}")))?;
    let on = |key: &str| pool.get(key).and_then(serde_json::Value::as_bool).unwrap_or(false);
    let pooling = match (on("pooling_mode_mean_tokens"), on("pooling_mode_cls_token")) {
        (true, false) => Pooling::Mean,
        (false, true) => Pooling::Cls,
        _ => return Err(Error::UnsupportedConfig("1_Pooling/config.json: the page computes mean or [CLS] pooling, one of them".into())),
    };
    let other = ["pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"];
    if let Some(mode) = other.iter().find(|k| on(k)) {
        return Err(Error::UnsupportedConfig(format!("1_Pooling/config.json: {mode} is not computed by the page")));
    }
    let spec = FeatureSpec { pooling, layers: FeatureLayers::Last, level: Level::Embedding };
    let scale = raw.pointer("/bertbench_head/scale").and_then(|s| serde_json::from_value(s.clone()).ok()).flatten();
    let bert = crate::bert::checkpoint::load(files, device)?;
    let hidden = bert.config.hidden_size;
    let head = match dense {
        Some((config, weights)) => read_dense(config, weights, hidden, device)?,
        None => identity_head(hidden, device),
    };
    let max_len = raw.pointer("/bertbench_head/max_len").and_then(serde_json::Value::as_u64).map_or(bert.config.read_len(), |n| n as usize);
    Ok(LoadedClassifier {
        config: bert.config,
        model: BertClassifier { bert: bert.model, head, spec },
        tokenizer: bert.tokenizer.with_max_len(max_len),
        meta: ClassifierMeta { labels: LABELS.iter().map(|l| l.to_string()).collect(), spec, max_len, scale, problem: None, threshold: None },
    })
}

/// A sentence-transformers `Dense` module: its `config.json` (an identity activation) and
/// weights (`linear.weight` `[out, in]`, `linear.bias`).
fn read_dense(config: &[u8], dense: &[u8], hidden: usize, device: &Device) -> crate::Result<ClassificationHead> {
    let dense_cfg: serde_json::Value = serde_json::from_slice(config).map_err(|e| Error::Config(format!("2_Dense/config.json: {e}")))?;
    let activation = dense_cfg.get("activation_function").and_then(serde_json::Value::as_str).unwrap_or("torch.nn.modules.activation.Tanh");
    if !activation.ends_with("Identity") {
        return Err(Error::UnsupportedConfig(format!("2_Dense/config.json: the activation {activation} is not computed by the page (only Identity)")));
    }
    let st = SafeTensors::deserialize(dense).map_err(|e| Error::Weights(format!("{DENSE_FILE}: {e}")))?;
    let read = |name: &str| -> crate::Result<(Vec<f32>, Vec<usize>)> {
        let view = st.tensor(name).map_err(|_| Error::MissingTensors(vec![format!("2_Dense: {name}")]))?;
        if view.dtype() != safetensors::Dtype::F32 {
            return Err(Error::Weights(format!("2_Dense: {name} is {:?}; expected F32", view.dtype())));
        }
        Ok((view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(), view.shape().to_vec()))
    };
    let (weight, wshape) = read("linear.weight")?;
    let (bias, bshape) = read("linear.bias")?;
    if wshape.len() != 2 || wshape[1] != hidden || bshape != [wshape[0]] {
        return Err(Error::ShapeMismatch(vec![format!("2_Dense: linear.weight is {wshape:?} and linear.bias {bshape:?}; expected [out, {hidden}] and [out]")]));
    }
    let width = wshape[0];
    Ok(ClassificationHead {
        transform: None,
        dropout: DropoutConfig::new(0.0).init(),
        classifier: Linear {
            weight: burn::module::Param::from_tensor(Tensor::<2>::from_data(TensorData::new(weight, [width, hidden]), device).transpose()),
            bias: Some(burn::module::Param::from_tensor(Tensor::<1>::from_data(TensorData::new(bias, [width]), device))),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_average_ties_as_scipy_does() {
        // scipy.stats.rankdata([3, 1, 4, 1, 5]) == [3, 1.5, 4, 1.5, 5]
        assert_eq!(ranks(&[3.0, 1.0, 4.0, 1.0, 5.0]), vec![3.0, 1.5, 4.0, 1.5, 5.0]);
    }

    #[test]
    fn correlations_of_hand_made_cases() {
        let gold = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
        assert!((pearson(&gold, &gold) - 1.0).abs() < 1e-6);
        let flipped: Vec<f32> = gold.iter().map(|g| 1.0 - g).collect();
        assert!((spearman(&gold, &flipped) + 1.0).abs() < 1e-6);
        // A monotone but curved prediction: Spearman 1, Pearson below.
        let curved: Vec<f32> = gold.iter().map(|g| g.powi(4)).collect();
        assert!((spearman(&gold, &curved) - 1.0).abs() < 1e-6);
        assert!(pearson(&gold, &curved) < 0.95);
        // scipy.stats.spearmanr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == 0.8207826816681233
        assert!((spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[5.0, 6.0, 7.0, 8.0, 7.0]) - 0.820_782_7).abs() < 1e-5);
        // scipy.stats.pearsonr([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == 0.8
        assert!((pearson(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 1.0, 4.0, 3.0, 5.0]) - 0.8).abs() < 1e-6);
        assert_eq!(pearson(&gold, &[0.5; 6]), 0.0, "a constant prediction correlates with nothing");
        let m = SimilarityMetrics::new(&[0.0, 1.0, 1.0, 0.0], &[0.1, 0.9, 0.4, 0.3], true);
        assert_eq!(m.accuracy, Some(0.75));
        assert!((m.mse - (0.01 + 0.01 + 0.36 + 0.09) / 4.0).abs() < 1e-6);
    }

    #[test]
    fn cosines_and_losses_on_the_device_equal_the_host_ones() {
        let device = Device::flex();
        let rows = Tensor::<2>::from_data(TensorData::new(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 3.0, 0.0, -1.0, 0.0], [6, 2]), &device);
        let cos = pair_cosines(rows).into_data().try_to_vec::<f32>().unwrap();
        for (got, want) in cos.iter().zip([0.0, 1.0, -1.0]) {
            assert!((got - want).abs() < 1e-6, "{cos:?}");
        }
        let pred = [0.9f32, 0.2, -0.3, 0.7];
        let scores = [1.0f32, 0.0, 0.0, 1.0];
        for level in [Level::Score, Level::Embedding] {
            for kind in [SimilarityLoss::Cosine, SimilarityLoss::Contrastive] {
                let p = Tensor::<2>::from_data(TensorData::new(pred.to_vec(), [4, 1]), &device);
                let s = Tensor::<1>::from_data(TensorData::new(scores.to_vec(), [4]), &device);
                let on_device = loss(level, kind, p, s).into_scalar::<f32>();
                assert!((on_device - host_loss(level, kind, &pred, &scores)).abs() < 1e-6, "{level:?} {kind:?}");
            }
        }
        // Contrastive by hand: d = 0.1, 0.8, 1.3, 0.3 → ½ (0.01 + 0 + 0 + 0.09) / 4.
        let contrastive = host_loss(Level::Embedding, SimilarityLoss::Contrastive, &pred, &scores);
        assert!((contrastive - 0.5 * (0.01 + 0.09) / 4.0).abs() < 1e-6, "{contrastive}");
    }

    #[test]
    fn ranking_is_by_cosine_highest_first() {
        let v = |x: f32, y: f32| unit(vec![x, y]);
        let order = rank(&v(1.0, 0.0), &[v(0.0, 1.0), v(1.0, 0.1), v(-1.0, 0.0)]);
        assert_eq!(order.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1, 0, 2]);
    }
}
