//! The worker's answer to each request of `protocol/requests.rs`: one [`Handle`] impl per
//! request type, whose answer is the type the request names, so a request cannot be answered
//! with another's answer.

use super::*;
use crate::protocol::{self as ask, Ask, Request, answers};
use crate::saved::list;

mod choice;

/// How the worker answers request `Self`.
pub(super) trait Handle: Request + Sized {
    /// The answer to `self` (with `bytes`, its attachments), and the answer's attachments.
    async fn handle(self, bytes: Vec<Vec<u8>>) -> Result<(Self::Answer, Vec<Vec<u8>>), String>;
}

/// `ask`'s answer as JSON, and its attachments.
pub(super) async fn answer(ask: Ask, bytes: Vec<Vec<u8>>) -> Result<(serde_json::Value, Vec<Vec<u8>>), String> {
    async fn json<R: Handle>(request: R, bytes: Vec<Vec<u8>>) -> Result<(serde_json::Value, Vec<Vec<u8>>), String> {
        let (answer, files) = request.handle(bytes).await?;
        Ok((serde_json::to_value(answer).map_err(|e| e.to_string())?, files))
    }
    match ask {
        Ask::Predict(r) => json(r, bytes).await,
        Ask::Tag(r) => json(r, bytes).await,
        Ask::TagLayers(r) => json(r, bytes).await,
        Ask::Similar(r) => json(r, bytes).await,
        Ask::Search(r) => json(r, bytes).await,
        Ask::AnswerQuestion(r) => json(r, bytes).await,
        Ask::Choose(r) => json(r, bytes).await,
        Ask::Export(r) => json(r, bytes).await,
        Ask::Import(r) => json(r, bytes).await,
        Ask::AttachHead(r) => json(r, bytes).await,
        Ask::ForgetClassifier(r) => json(r, bytes).await,
        Ask::Encoder(r) => json(r, bytes).await,
        Ask::FillMask(r) => json(r, bytes).await,
        Ask::LabFiles(r) => json(r, bytes).await,
        Ask::OpenLab(r) => json(r, bytes).await,
        Ask::States(r) => json(r, bytes).await,
        Ask::Inspect(r) => json(r, bytes).await,
        Ask::TimeWork(r) => json(r, bytes).await,
    }
}

fn current() -> Option<Rc<Current>> {
    STATE.with(|s| s.borrow().current.clone())
}

fn lab() -> Result<Rc<LabModel>, String> {
    STATE.with(|s| s.borrow().lab.clone()).ok_or_else(|| "there is no lab model yet: train one first".to_string())
}

/// The current model when it is a tagger.
fn tagger() -> Result<Rc<Current>, String> {
    let current = current().ok_or("there is no tagger yet: train or import one first")?;
    if current.loaded.meta.spec.level != Level::Token {
        return Err("the current model classifies whole texts, not words; train a tagger first".into());
    }
    Ok(current)
}

impl Handle for ask::Predict {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(ask::Predictions, Vec<Vec<u8>>), String> {
        let current = current().ok_or("there is no classifier yet: train or import one first")?;
        match current.loaded.meta.spec.level {
            Level::Token => return Err("the current model tags words (a token classifier); type a sentence to tag it".into()),
            Level::Span => return Err("the current model answers questions over a passage; give it a passage and a question".into()),
            Level::Score => return Err("the current model scores how alike two texts are; give it two texts to compare".into()),
            Level::Sentence | Level::MultiLabel => {}
            level => return Err(level.not_per_text().unwrap_or("the current model gives no label per text").into()),
        }
        let probs = predict_texts(&current, &self.texts).await?;
        let meta = &current.loaded.meta;
        Ok((ask::Predictions { labels: meta.labels.clone(), probs, multi_label: meta.multi_label(), threshold: meta.threshold }, Vec::new()))
    }
}

impl Handle for ask::Tag {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(ask::Tagged, Vec<Vec<u8>>), String> {
        let current = tagger()?;
        let texts = tag_texts(&current, &self.texts).await?;
        Ok((ask::Tagged { tags: current.loaded.meta.labels.clone(), texts: texts.into_iter().map(list).collect() }, Vec::new()))
    }
}

impl Handle for ask::TagLayers {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(ask::LayerTags, Vec<Vec<u8>>), String> {
        let current = tagger()?;
        let c = &current.loaded;
        let layers = tagging::tags_by_layer(&c.model, &c.tokenizer, &self.text, &current.device).await.map_err(|e| e.to_string())?;
        Ok((ask::LayerTags { tags: c.meta.labels.clone(), layers: layers.into() }, Vec::new()))
    }
}

impl Handle for ask::Similar {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(Vec<f32>, Vec<Vec<u8>>), String> {
        Ok((search::similar(current(), &self.pairs).await?, Vec::new()))
    }
}

impl Handle for ask::Search {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(crate::runs::SearchResult, Vec<Vec<u8>>), String> {
        Ok((search::search(current(), self.query, self.texts, self.top).await?, Vec::new()))
    }
}

impl Handle for ask::AnswerQuestion {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(answers::Answered, Vec<Vec<u8>>), String> {
        let current = current().ok_or("there is no question-answering model yet: train or import one first")?;
        let c = &current.loaded;
        if c.meta.spec.level != Level::Span {
            return Err("the current model does not answer questions (it has no start/end head); train one on questions first".into());
        }
        let spans = SpanConfig::new().with_max_len(c.meta.max_len).with_stride(c.meta.max_len / 3);
        let answered = qa::answer(&c.model, &c.tokenizer, &self.question, &self.context, &spans, self.allow_null).await.map_err(|e| e.to_string())?;
        Ok((answered.into(), Vec::new()))
    }
}

impl Handle for ask::Export {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(String, Vec<Vec<u8>>), String> {
        let current = current().ok_or("there is no classifier to export yet")?;
        let zip = host_zip(&current, &self.name).await?;
        Ok((format!("{}.zip", self.name), vec![zip]))
    }
}

impl Handle for ask::AttachHead {
    async fn handle(self, bytes: Vec<Vec<u8>>) -> Result<(ask::Imported, Vec<Vec<u8>>), String> {
        let base = self.base;
        let held = base_model().await.filter(|b| b.id == base).ok_or_else(|| format!("the training worker does not hold {base}, which this head was trained on"))?;
        let files: Vec<(String, Vec<u8>)> = self.names.into_iter().zip(bytes).collect();
        // The base is kept for training (an autodiff device); the classifier predicts.
        let bert = LoadedModel { model: bertbench_core::burn::module::Module::valid(&held.bert.model), ..held.bert.clone() };
        let device = Device::flex();
        let loaded = classification::attach_head(bert, &files, &device).map_err(|e| format!("The saved head could not be put back on {base}: {e}"))?;
        let current = Current { loaded, device, tokenizer_json: held.tokenizer_json.clone(), vocab_txt: held.vocab_txt.clone() };
        let meta = current.loaded.meta.clone();
        let description = format!("{} on {base}", meta.labels.join(", "));
        STATE.with(|s| s.borrow_mut().current = Some(Rc::new(current)));
        Ok((ask::Imported { meta, description }, Vec::new()))
    }
}

impl Handle for ask::ForgetClassifier {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<((), Vec<Vec<u8>>), String> {
        STATE.with(|s| s.borrow_mut().current = None);
        Ok(((), Vec::new()))
    }
}

impl Handle for ask::Import {
    async fn handle(self, bytes: Vec<Vec<u8>>) -> Result<(ask::Imported, Vec<Vec<u8>>), String> {
        let current = import(self.names, bytes).map_err(|message| format!("The classifier could not be imported: {message}"))?;
        let meta = current.loaded.meta.clone();
        let what = match meta.spec.level {
            Level::Token => "tags",
            Level::Sentence | Level::MultiLabel => "labels",
            _ => "outputs",
        };
        let what = if meta.labels.len() == 1 { what.trim_end_matches('s') } else { what };
        let description = format!("{} {what} ({}), features: {}", meta.labels.len(), meta.labels.join(", "), meta.spec.label());
        STATE.with(|s| s.borrow_mut().current = Some(Rc::new(current)));
        Ok((ask::Imported { meta, description }, Vec::new()))
    }
}

impl Handle for ask::Encoder {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(ask::EncoderFiles, Vec<Vec<u8>>), String> {
        let c = current().ok_or("there is no fine-tuned model yet: train or import one first")?;
        // Copied to the CPU first: saving reads tensors synchronously (not possible on WebGPU).
        let bert = copy_to(c.loaded.model.bert.clone(), &Device::flex()).await.map_err(|e| e.to_string())?;
        let weights = checkpoint::save_weights(&bert).map_err(|e| e.to_string())?;
        let mut files = vec![c.loaded.config.to_hf_json(), weights];
        files.extend(c.tokenizer_json.clone());
        files.extend(c.vocab_txt.clone());
        let answer = ask::EncoderFiles { labels: c.loaded.meta.labels.clone(), tokenizer_json: c.tokenizer_json.is_some(), vocab_txt: c.vocab_txt.is_some() };
        Ok((answer, files))
    }
}

impl Handle for ask::FillMask {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(Vec<answers::MaskFill>, Vec<Vec<u8>>), String> {
        let lab = lab()?;
        let fills = pretraining::fill_mask(lab.mlm()?, &lab.tokenizer, &self.text, 5, &lab.device).await.map_err(|e| e.to_string())?;
        Ok((list(fills), Vec::new()))
    }
}

impl Handle for ask::LabFiles {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(Vec<String>, Vec<Vec<u8>>), String> {
        Ok(lab()?.files()?.into_iter().unzip())
    }
}

impl Handle for ask::OpenLab {
    async fn handle(self, bytes: Vec<Vec<u8>>) -> Result<((), Vec<Vec<u8>>), String> {
        if STATE.with(|s| s.borrow().run.is_some()) {
            return Err(BUSY.into());
        }
        let lab = open_lab(bytes)?;
        STATE.with(|s| s.borrow_mut().lab = Some(Rc::new(lab)));
        Ok(((), Vec::new()))
    }
}

impl Handle for ask::TimeWork {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(crate::runs::Timing, Vec<Vec<u8>>), String> {
        Ok((probe::time_work(self.backend, self.texts, self.max_len, self.step).await?, Vec::new()))
    }
}

impl Handle for ask::States {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(ask::StatesShape, Vec<Vec<u8>>), String> {
        inspect::states(&self.model_id, list(self.encoded)).await
    }
}

impl Handle for ask::Inspect {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<((), Vec<Vec<u8>>), String> {
        inspect::inspect(self).await
    }
}
