//! An MLM-lab run in the worker, and the lab's model kept after it.

use super::*;

/// A sample of a vocabulary's pieces for the page: every k-th entry after the specials.
pub(super) fn vocab_sample(tokenizer: &BertTokenizer, n: usize) -> Vec<String> {
    let size = tokenizer.vocab_size() as u32;
    let step = (size / n.max(1) as u32).max(1);
    (5..size).step_by(step as usize).filter_map(|id| tokenizer.id_to_piece(id)).take(n).collect()
}

/// Top-5 fills of every probe sentence (a probe the tokenizer cannot read is left out).
pub(super) async fn probe_all(trainer: &Pretrainer, probes: &[String]) -> Vec<(String, Vec<bertbench_core::tasks::pretraining::MaskFill>)> {
    let mut fills = Vec::new();
    for p in probes {
        if let Ok(f) = trainer.fill_mask(p, 5).await {
            fills.push((p.clone(), f));
        }
    }
    fills
}

impl LabModel {
    /// The model as a Hugging Face folder's files.
    /// An ELECTRA run's are its discriminator's: its generator is dropped, as ELECTRA does.
    pub(super) fn files(&self) -> Result<Vec<(String, Vec<u8>)>, String> {
        let (tokenizer_json, vocab_txt) = (self.tokenizer_json.as_deref(), self.vocab_txt.as_deref());
        match (&self.discriminator, &self.model) {
            (Some(d), _) => replaced_token::export(d, &self.config, &self.tokenizer, tokenizer_json, vocab_txt),
            (None, Some(m)) => pretraining::export(m, &self.config, &self.tokenizer, tokenizer_json, vocab_txt),
            (None, None) => return Err("the lab model has no weights".into()),
        }
        .map_err(|e| e.to_string())
    }

    /// The model that fills blanks, or why there is none.
    pub(super) fn mlm(&self) -> Result<&BertForPreTraining, String> {
        self.model.as_ref().ok_or_else(|| {
            "this lab model is an ELECTRA discriminator: it tells replaced tokens apart and cannot fill a blank (its generator, which could, is not kept)".to_string()
        })
    }
}

/// A saved lab model (its files in [`LAB_FILES`] order), on the CPU.
pub(super) fn open_lab(mut parts: Vec<Vec<u8>>) -> Result<LabModel, String> {
    if parts.len() != LAB_FILES.len() {
        return Err(format!("the saved lab model has {} files instead of {}", parts.len(), LAB_FILES.len()));
    }
    let some = |b: Vec<u8>| (!b.is_empty()).then_some(b);
    let vocab_txt = some(parts.pop().unwrap_or_default());
    let tokenizer_json = some(parts.pop().unwrap_or_default());
    let weights = parts.pop().unwrap_or_default();
    let config_json = parts.pop().unwrap_or_default();
    let files = CheckpointFiles { config_json, weights, tokenizer_json: tokenizer_json.clone(), vocab_txt: vocab_txt.clone() };
    let device = Device::flex();
    let unreadable = |e: bertbench_core::Error| format!("the saved lab model cannot be read: {e}");
    if is_electra_discriminator(&files.config_json) {
        let (discriminator, tokenizer, config) = replaced_token::load(files, &device).map_err(unreadable)?;
        return Ok(LabModel { model: None, discriminator: Some(discriminator), tokenizer, config, device, tokenizer_json, vocab_txt });
    }
    let (model, tokenizer, config) = pretraining::load(files, &device).map_err(unreadable)?;
    Ok(LabModel { model: Some(model), discriminator: None, tokenizer, config, device, tokenizer_json, vocab_txt })
}

/// Whether `config.json` names `ElectraForPreTraining`: a discriminator, what an ELECTRA run saves.
fn is_electra_discriminator(config_json: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(config_json)
        .ok()
        .and_then(|v| v["architectures"].as_array().map(|a| a.iter().any(|x| x == "ElectraForPreTraining")))
        .unwrap_or(false)
}

/// What an MLM-lab run leaves: its model, whether it was cancelled, the steps done, and the
/// run as it is to be saved.
pub(super) struct LabEnd {
    lab: LabModel,
    cancelled: bool,
    steps: usize,
    saved: SavedLab,
}

/// Runs MLM-lab request `request` as run `run` to its end or until cancelled.
pub(super) async fn run_lab(run: u32, request: &LabRequest, control: &Control) -> Result<LabEnd, String> {
    let settings = &request.settings;
    let saved = RefCell::new(SavedLab::starting(settings.clone()));
    let send = |event: LabEvent| {
        saved.borrow_mut().record(&event);
        update(run, RunUpdate::Progress(Progress::Pretrain(event.into())));
    };
    let device = match settings.backend {
        Backend::Cpu => Device::flex(),
        Backend::WebGpu => engine::gpu().await.map_err(|e| format!("WebGPU is unavailable in the worker: {e}"))?.device,
    };
    let ad = device.clone().autodiff();
    // New weights (a model from scratch, a fresh head) are drawn from the run's seed: the same
    // settings train the same model.
    ad.seed(settings.config.seed);
    let max_len = settings.config.max_len;
    let pair = settings.config.pair_task.is_some();
    let electra = settings.config.electra();
    if electra && (settings.continue_pretrained || settings.share_layers) {
        return Err("ELECTRA's replaced-token detection trains a new model with each layer its own: choose a model from scratch, layers unshared".into());
    }
    let base = base_model().await;
    let (model, tokenizer, config, tokenizer_json, vocab_txt) = if settings.continue_pretrained {
        let base = base.ok_or("the pretrained model is not loaded in the worker yet")?;
        let bert = base.on(&ad, settings.backend).await?;
        send(LabEvent::Vocab { size: bert.tokenizer.vocab_size(), trained: false, sample: vocab_sample(&bert.tokenizer, 40) });
        // The checkpoint's own MLM head (and next-sentence head) when it has one: continued
        // pretraining goes on from what the model knows, rather than from a random head.
        let own = pretraining::load_heads(&bert, &ad).ok();
        let mut model = BertForPreTraining::new(bert.model, &bert.config, pair, &ad);
        if let Some(cls) = own {
            model.cls.predictions = cls.predictions;
            if pair && cls.seq_relationship.is_some() {
                model.cls.seq_relationship = cls.seq_relationship;
            }
        }
        (model, bert.tokenizer, bert.config, base.tokenizer_json.clone(), base.vocab_txt.clone())
    } else {
        let (tokenizer, tokenizer_json, vocab_txt) = match settings.vocab {
            LabVocab::Train(size) => {
                let (tok, vocab) = BertTokenizer::train_wordpiece(&request.lines, size, true, max_len).map_err(|e| e.to_string())?;
                (tok, None, Some(vocab))
            }
            LabVocab::Pretrained => {
                let base = base.ok_or("the pretrained model is not loaded in the worker yet")?;
                let tok = base.bert.tokenizer.with_max_len(max_len);
                (tok, base.tokenizer_json.clone(), base.vocab_txt.clone())
            }
        };
        send(LabEvent::Vocab { size: tokenizer.vocab_size(), trained: matches!(settings.vocab, LabVocab::Train(_)), sample: vocab_sample(&tokenizer, 40) });
        // BERT of the preset's size, or with one layer shared by all (ALBERT), as the page said.
        let config = settings.scratch_config(tokenizer.vocab_size())?;
        let model = BertForPreTraining::from_scratch(&config, pair, &ad);
        (model, tokenizer, config, tokenizer_json, vocab_txt)
    };
    let (trainer, params, config) = if electra {
        // The discriminator is an ELECTRA of the preset's size, with its generator a quarter as
        // wide; the generator's own embedding tables go unused (it reads the discriminator's).
        let width = config.hidden_size;
        let config = config.with_model_type(bertbench_core::bert::family::Family::Electra).with_embedding_size(Some(width));
        let model = ElectraForPreTraining::from_scratch(&config, &ad);
        let unused = bertbench_core::burn::module::Module::num_params(&model.generator.bert.embeddings);
        let params = bertbench_core::burn::module::Module::num_params(&model) - unused;
        (Pretrainer::new_electra(model, &tokenizer, request.lines.clone(), settings.config.clone(), &ad), params, config)
    } else {
        let params = bertbench_core::burn::module::Module::num_params(&model);
        (Pretrainer::new(model, &tokenizer, request.lines.clone(), settings.config.clone(), &ad), params, config)
    };
    let mut trainer = trainer.map_err(|e| e.to_string())?;
    send(LabEvent::Ready { params, total_steps: trainer.progress().1, preview: trainer.masking_preview(4, 1) });
    let probes = &settings.probe_lines();
    send(LabEvent::Probes { step: 0, fills: probe_all(&trainer, probes).await });
    let ended = Session::new(CheckpointPolicy::NEVER)
        .drive(
            &mut trainer,
            control,
            async |trainer: &Pretrainer, step: PretrainStep| {
                send(LabEvent::Step(step));
                if settings.probe_every > 0 && (step.step % settings.probe_every == 0 || step.step == step.total_steps) {
                    send(LabEvent::Probes { step: step.step, fills: probe_all(trainer, probes).await });
                }
            },
            async |_: &Pretrainer| {},
        )
        .await
        .map_err(|e| e.to_string())?;
    let was_cancelled = ended == Ended::Cancelled;
    let steps = trainer.progress().0;
    let mut model = bertbench_core::burn::module::Module::valid(&trainer.mlm_model());
    let mut discriminator = trainer.discriminator().map(bertbench_core::burn::module::Module::valid);
    let mut device = device;
    if settings.backend == Backend::WebGpu {
        // Kept on the CPU: export and saving read the weights synchronously, which WebGPU cannot
        // do in the browser, and fill-mask on a tiny model is quick there.
        let cpu = Device::flex();
        model = copy_to(model, &cpu).await.map_err(|e| e.to_string())?;
        if let Some(d) = discriminator {
            discriminator = Some(copy_to(d, &cpu).await.map_err(|e| e.to_string())?);
        }
        device = cpu;
    }
    let lab = LabModel { model: Some(model), discriminator, tokenizer: trainer.tokenizer().clone(), config, device, tokenizer_json, vocab_txt };
    Ok(LabEnd { lab, cancelled: was_cancelled, steps, saved: saved.into_inner() })
}

/// Ends MLM-lab run `run` (of `request`, after `seconds`): keeps its model as the lab's, tells
/// the page, and saves it (with its curves, probes, settings and corpus) in the browser's
/// storage, unless it took no step. The worker takes another run while it saves.
pub(super) async fn finish_lab(run: u32, request: &LabRequest, result: Result<LabEnd, String>, seconds: f64) {
    STATE.with(|s| s.borrow_mut().run = None);
    let LabEnd { lab, cancelled, steps, saved } = match result {
        Ok(end) => end,
        Err(message) => return update(run, RunUpdate::Failed { message, gpu_lost: false }),
    };
    let lab = Rc::new(lab);
    STATE.with(|s| s.borrow_mut().lab = Some(lab.clone()));
    let outcome = Outcome::Pretrain { cancelled, steps, seconds };
    if steps == 0 {
        return update(run, RunUpdate::Finished { outcome, saving: None });
    }
    let item = saved.item(cancelled, steps, seconds, js_sys::Date::now());
    let id = item.id.clone();
    update(run, RunUpdate::Finished { outcome, saving: Some(id.clone()) });
    let corpus = request.lines.join("\n") + "\n";
    let result = match lab.files() {
        Ok(files) => {
            // The files in LAB_FILES order (an absent one empty), then the corpus.
            let parts: Vec<&[u8]> = LAB_FILES
                .iter()
                .map(|name| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_slice()).unwrap_or(&[]))
                .chain([corpus.as_bytes()])
                .collect();
            let item = Item { size: parts.iter().map(|p| p.len() as u64).sum(), ..item };
            store::put(&item, &parts).await
        }
        Err(e) => Err(e),
    };
    update(run, RunUpdate::Saved { id, result });
}
