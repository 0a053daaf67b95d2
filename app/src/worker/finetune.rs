//! A fine-tuning run in the worker (`Job`): the base on the chosen device, restarts, the
//! session that drives each, checkpoints into the browser's storage, and the finished run.

use super::*;

/// Files written into [`BlobWriter`]s, one after another: the checkpoint's files go to the
/// browser's storage a few megabytes at a time, and neither the worker's memory nor the tab's
/// ever holds a whole file (360 MB for MiniLM with AdamW's moments and the best weights).
#[derive(Default)]
pub(super) struct BlobFiles {
    done: Vec<(String, StoredBlob)>,
    open: Option<(String, BlobWriter)>,
}

impl BlobFiles {
    async fn close(&mut self) -> Result<(), String> {
        if let Some((name, writer)) = self.open.take() {
            self.done.push((name, writer.finish().await?));
        }
        Ok(())
    }

    /// Every file, finished.
    async fn finish(mut self) -> Result<Vec<(String, StoredBlob)>, String> {
        self.close().await?;
        Ok(std::mem::take(&mut self.done))
    }
}

impl FileSink for BlobFiles {
    async fn begin(&mut self, name: &str) -> bertbench_core::Result<()> {
        self.close().await.map_err(bertbench_core::Error::Training)?;
        self.open = Some((name.to_string(), BlobWriter::new().await));
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> bertbench_core::Result<()> {
        let (_, writer) = self.open.as_mut().ok_or_else(|| bertbench_core::Error::Training("no file was begun".into()))?;
        writer.write(bytes).map_err(bertbench_core::Error::Training)
    }
}

/// `tuner`'s snapshot as stored blobs ([`BlobFiles`]). A failure says why, as a save's would
/// (the storage quota, say).
pub(super) async fn snapshot_blobs(tuner: &FineTuner, with_optimizer: bool) -> Result<Vec<(String, StoredBlob)>, String> {
    let mut files = BlobFiles::default();
    let written = tuner.write_snapshot(with_optimizer, &mut files).await;
    match written {
        Ok(()) => files.finish().await,
        Err(e) => Err(store::write_error("The checkpoint", e.to_string()).await),
    }
}

/// Files in memory as stored blobs.
pub(super) async fn stored_blobs(files: Vec<(String, Vec<u8>)>) -> Result<Vec<(String, StoredBlob)>, String> {
    let mut out = BlobFiles::default();
    for (name, bytes) in files {
        out.begin(&name).await.map_err(|e| e.to_string())?;
        out.write(&bytes).map_err(|e| e.to_string())?;
    }
    out.finish().await
}

/// Ends run `run`: keeps its classifier, forgets its checkpoint (unless it failed: then the
/// checkpoint stays, to resume from), tells the page, and saves the run (its record and curves,
/// and the classifier as a zip) in the browser's storage. The worker takes another run while
/// it saves.
pub(super) async fn finish_run(run: u32, result: Result<(RunSummary, Current, SavedRun), String>) {
    let gpu_lost = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.run = None;
        std::mem::take(&mut s.gpu_lost)
    });
    let (summary, current, saved) = match result {
        Ok(out) => out,
        Err(message) => return update(run, RunUpdate::Failed { message, gpu_lost }),
    };
    let current = Rc::new(current);
    STATE.with(|s| s.borrow_mut().current = Some(current.clone()));
    let _ = store::delete(CHECKPOINT_ID).await;
    let head_on = saved.head_on.clone();
    let (item, _) = saved.item(js_sys::Date::now());
    let id = item.id.clone();
    update(run, RunUpdate::Finished { outcome: Outcome::FineTune(Box::new(summary)), saving: Some(id.clone()) });
    let result = match head_on {
        // A head-only run: its head, on the base model by name (kilobytes, not the encoder).
        Some(_) => match head_files(&current).await {
            Ok(files) => {
                let parts: Vec<&[u8]> = files.iter().map(|(_, b)| b.as_slice()).collect();
                store::put(&Item { size: parts.iter().map(|p| p.len() as u64).sum(), ..item }, &parts).await
            }
            Err(e) => Err(e),
        },
        None => match host_zip(&current, &item.name).await {
            Ok(zip) => store::put(&Item { size: zip.len() as u64, ..item }, &[&zip]).await,
            Err(e) => Err(e),
        },
    };
    update(run, RunUpdate::Saved { id, result });
}

/// A head-only run's classifier as its head alone (`classification::export_head`), read on the
/// CPU (the export reads tensors synchronously, which WebGPU in a browser cannot).
async fn head_files(current: &Current) -> Result<Vec<(String, Vec<u8>)>, String> {
    let head = copy_to(current.loaded.model.head.clone(), &Device::flex()).await.map_err(|e| e.to_string())?;
    let model = classification::BertClassifier { head, ..current.loaded.model.clone() };
    classification::export_head(&current.loaded.config, &model, &current.loaded.meta).map_err(|e| e.to_string())
}

/// A run's state read back from a checkpoint: the current restart's snapshot and the best
/// earlier restart's.
pub(super) struct Resume {
    current: Snapshot,
    kept: Option<Snapshot>,
}

/// Reads the saved checkpoint; checks the worker has the base model it was trained from.
pub(super) async fn load_checkpoint() -> Result<(CheckpointMeta, Resume), String> {
    let item = store::get(CHECKPOINT_ID).await?.ok_or("there is no saved checkpoint to resume")?;
    let meta: CheckpointMeta = serde_json::from_str(&item.json).map_err(|e| format!("the checkpoint is unreadable: {e}"))?;
    let base = base_model().await.map(|b| b.id.clone());
    if base.as_deref() != Some(meta.base_model.as_str()) {
        return Err(format!("the checkpoint was trained from {}; load that model first", meta.base_model));
    }
    let mut bytes = store::bytes(CHECKPOINT_ID).await?.into_iter();
    let mut take = |names: &[String]| names.iter().map(|n| (n.clone(), bytes.next().unwrap_or_default())).collect::<Vec<_>>();
    let current = take(&meta.files);
    let kept = take(&meta.kept_files);
    let current = Snapshot::from_files(current).map_err(|e| e.to_string())?;
    let kept = if kept.is_empty() { None } else { Some(Snapshot::from_files(kept).map_err(|e| e.to_string())?) };
    Ok((meta, Resume { current, kept }))
}

pub(super) struct Job {
    run: u32,
    request: TrainRequest,
    control: Rc<Control>,
    resume: Option<(CheckpointMeta, Resume)>,
    /// Steps and evaluations of the current restart, for the checkpoint.
    log: RefCell<(Vec<StepPoint>, Vec<EvalReport>)>,
    /// Drives every restart: the checkpoint cadence (core's default policy) runs across them.
    session: RefCell<Session>,
    /// Seconds trained before a resume.
    seconds_before: f64,
    device_name: RefCell<String>,
    /// The base model's id, for the checkpoint (the worker may let go of the base itself).
    base_id: RefCell<String>,
}

impl Job {
    pub(super) fn new(run: u32, request: TrainRequest, control: Rc<Control>, resume: Option<(CheckpointMeta, Resume)>) -> Self {
        let (log, seconds_before) = match &resume {
            Some((meta, _)) => ((meta.steps.clone(), meta.evals.clone()), meta.seconds),
            None => ((Vec::new(), Vec::new()), 0.0),
        };
        Self {
            run,
            request,
            control,
            resume,
            log: RefCell::new(log),
            session: RefCell::new(Session::new(CheckpointPolicy::default())),
            seconds_before,
            device_name: RefCell::new(String::new()),
            base_id: RefCell::new(String::new()),
        }
    }

    fn send(&self, event: TrainEvent) {
        update(self.run, RunUpdate::Progress(Progress::FineTune(event.into())));
    }

    /// The message for a training error; notes a failed WebGPU device, so the page can go on
    /// on the CPU.
    fn failure(&self, e: bertbench_core::Error) -> String {
        if self.request.backend == Backend::WebGpu && matches!(e, bertbench_core::Error::Device(_)) {
            STATE.with(|s| s.borrow_mut().gpu_lost = true);
        }
        e.to_string()
    }

    /// Saves `tuner` (restart `restart`) and the best earlier restart's files as the checkpoint.
    async fn checkpoint(&self, tuner: &FineTuner, restart: usize, kept: &[(String, StoredBlob)], started: f64) {
        let run = self.run;
        // AdamW's moments are kept (read asynchronously, so on WebGPU too): a resumed run takes
        // the same steps as the uninterrupted one would have.
        let with_optimizer = true;
        let files = match snapshot_blobs(tuner, with_optimizer).await {
            Ok(f) => f,
            Err(message) => {
                update(run, RunUpdate::CheckpointFailed(message));
                return;
            }
        };
        let progress = tuner.progress();
        let epoch = tuner.epochs_done();
        let (steps, evals) = self.log.borrow().clone();
        let meta = CheckpointMeta {
            request: self.request.clone(),
            base_model: self.base_id.borrow().clone(),
            restart,
            files: files.iter().map(|(n, _)| n.clone()).collect(),
            kept_files: kept.iter().map(|(n, _)| n.clone()).collect(),
            step: progress.step,
            total_steps: progress.total_steps,
            epoch,
            phase: progress.phase,
            with_optimizer,
            seconds: self.seconds_before + (now_ms() - started) / 1000.0,
            device: self.device_name.borrow().clone(),
            steps,
            evals,
        };
        let blobs: Vec<Blob> = files.iter().chain(kept).map(|(_, b)| b.blob.clone()).collect();
        let item = Item {
            id: CHECKPOINT_ID.into(),
            kind: Kind::Checkpoint,
            name: format!("checkpoint of the run in progress (step {})", progress.step),
            saved_ms: js_sys::Date::now(),
            size: blobs.iter().map(|b| b.size() as u64).sum(),
            json: serde_json::to_string(&meta).unwrap_or_default(),
        };
        match store::put_blobs(&item, &blobs).await {
            Ok(()) => update(run, RunUpdate::Checkpointed { step: progress.step, epoch }),
            Err(message) => update(run, RunUpdate::CheckpointFailed(message)),
        }
    }

    /// Runs `tuner` to its end (or until cancelled: returns true) in the job's session,
    /// forwarding its events and saving checkpoints when the session says they are due.
    async fn drive(
        &self,
        tuner: &mut FineTuner,
        cached: &mut Option<(Tensor<2>, Tensor<2>)>,
        restart: usize,
        kept: &[(String, StoredBlob)],
        started: f64,
    ) -> Result<bool, String> {
        let mut session = self.session.borrow().clone();
        let ended = session
            .drive(
                tuner,
                &*self.control,
                async |tuner: &FineTuner, event: Event| {
                    let event = match event {
                        Event::Finished => return,
                        Event::Features { done, total } => TrainEvent::Features { done, total },
                        Event::PhaseStarted { phase, steps } => {
                            if cached.is_none() {
                                *cached = tuner.features();
                            }
                            TrainEvent::Phase { phase, steps }
                        }
                        Event::Step(point) => {
                            self.log.borrow_mut().0.push(point.clone());
                            TrainEvent::Step(point)
                        }
                        Event::Evaluating { done, total } => TrainEvent::Evaluating { done, total },
                        Event::Evaluated(report) => {
                            self.log.borrow_mut().1.push((*report).clone());
                            TrainEvent::Evaluated(report)
                        }
                    };
                    self.send(event);
                },
                async |tuner: &FineTuner| self.checkpoint(tuner, restart, kept, started).await,
            )
            .await;
        *self.session.borrow_mut() = session;
        Ok(ended.map_err(|e| self.failure(e))? == Ended::Cancelled)
    }

    /// Runs every restart; returns the kept classifier's summary, the classifier, and the run
    /// as it is to be saved.
    pub(super) async fn execute(mut self) -> Result<(RunSummary, Current, SavedRun), String> {
        let started = now_ms();
        let base = base_model().await.ok_or("no model is loaded in the worker yet")?;
        let (device, device_name) = match self.request.backend {
            Backend::Cpu => (Device::flex(), match threads() {
                1 => "CPU".to_string(),
                n => format!("CPU · {n} threads"),
            }),
            Backend::WebGpu => {
                let gpu = engine::gpu().await.map_err(|e| format!("WebGPU is unavailable in the worker: {e}"))?;
                (gpu.device, format!("WebGPU · {}", gpu.adapter))
            }
        };
        *self.device_name.borrow_mut() = device_name.clone();
        let ad = device.clone().autodiff();
        let LoadedModel { model: base_weights, config, tokenizer, head_weights, .. } = base.on(&ad, self.request.backend).await?;
        // The base's MLM head (ModernBERT's `head`), which some of its task classes start from;
        // a run from random weights starts them fresh.
        let head_weights = head_weights.filter(|_| !self.request.from_scratch);
        let restarts = self.request.restarts.max(1);
        // One run from one of the page's own models: the worker lets go of the base while it
        // trains (the run starts from its very tensors, the only copy then, 90 MB less for
        // MiniLM) and reads it again from the offline cache when it next needs it.
        let let_go = base.downloadable && restarts == 1;
        *self.base_id.borrow_mut() = base.id.clone();
        let (tokenizer_json, vocab_txt) = (base.tokenizer_json.clone(), base.vocab_txt.clone());
        if let_go {
            STATE.with(|s| {
                let mut s = s.borrow_mut();
                s.base = None;
                s.base_to_read = Some(base.id.clone());
            });
        }
        drop(base);
        let has_pooler = base_weights.pooler.is_some();
        let features = self.request.config.features;
        let fresh_sequence_pooler = !has_pooler && features.pooling == bertbench_core::bert::pooling::Pooling::Pooler && matches!(features.level, Level::Sentence | Level::Score | Level::MultiLabel);
        // A run from random weights never needs the base's.
        let base_weights = RefCell::new(Some(base_weights).filter(|_| !self.request.from_scratch));
        let max_len = self.request.max_len.clamp(8, config.max_position_embeddings);
        let tokenizer = tokenizer.with_max_len(max_len);
        let labels = &self.request.labels;
        let spans = self.request.config.spans.with_max_len(max_len);
        let level = self.request.config.features.level;
        let (train, valid) = self.request.data.task().encode(&Encoding { tokenizer: &tokenizer, labels, level, spans: &spans })?;
        // A token the model has no row for would stop the worker with a panic deep in the
        // embedding look-up: refuse the run by name instead (the tokenizer and the weights are
        // then not the same model's).
        let rows = config.vocab_size;
        let encodings = |t: &LabeledText| std::iter::once(&t.encoded).chain(&t.second).chain(&t.sequences).flat_map(|e| e.tokens.iter().map(|k| k.id)).collect::<Vec<_>>();
        if let Some(id) = train.iter().chain(&valid).flat_map(encodings).find(|&id| id as usize >= rows) {
            return Err(format!(
                "the worker's model {} has {rows} token rows but its tokenizer ({} pieces) gave token {id}: the tokenizer and the weights are not the same model's",
                self.base_id.borrow(),
                tokenizer.vocab_size()
            ));
        }
        // A student keeps some of the layers; one that distils learns its teacher's
        // probabilities too (the teacher is timed on the validation texts as it is read).
        let kept_layers = match self.request.keep_layers {
            Some(n) => Some(kept_layers(config.num_hidden_layers, n)?),
            None => None,
        };
        let (train, teacher_ms) = match &self.request.config.distil {
            Some(_) => {
                let (train, ms) = teach(train, &valid, labels).await?;
                (train, Some(ms))
            }
            None => (train, None),
        };
        let mut kept: Option<FineTuner> = None;
        // The best finished restart, as checkpoint files (written once, saved with every
        // checkpoint), in Blobs: out of wasm memory.
        let mut kept_files: Vec<(String, StoredBlob)> = Vec::new();
        let mut cancelled = false;
        // Frozen features are the same for every seed: computed once, reused by restarts.
        let mut cached = None;
        let fresh = |seed: u64| {
            let run_config = self.request.config.clone().with_seed(seed).with_spans(spans);
            // Every restart starts from the pretrained weights (modules are immutable values), or
            // from fresh random ones for the baseline.
            let start = if self.request.from_scratch {
                BertModelConfig::new(config.clone()).with_with_pooler(has_pooler).init(&ad)
            } else if let_go {
                base_weights.borrow_mut().take().ok_or("the base model's weights were already used")?
            } else {
                base_weights.borrow().clone().ok_or("the base model's weights were already used")?
            };
            // What the task's class adds on the encoder, where the checkpoint lacks it: a
            // classifier's pooler on `[CLS]` + pooler (an MLM checkpoint, DistilBERT, ELECTRA,
            // DeBERTa or ModernBERT gets its family's), or the pooler another class reads.
            let start = start_encoder(start, &config, &run_config.features, head_weights.as_deref(), seed, &ad).map_err(|e| e.to_string())?;
            let start = match &kept_layers {
                Some(keep) => start.keep_layers(keep).map_err(|e| e.to_string())?,
                None => start,
            };
            // ModernBERT's token and span classes apply its `head` to every token before the output.
            let transform = classification::HeadTransform::for_run(&config, run_config.features, head_weights.as_deref(), seed, &ad).map_err(|e| e.to_string())?;
            FineTuner::new(start, tokenizer.pad_id, max_len, self.request.labels.clone(), train.clone(), valid.clone(), run_config, &ad)
                .and_then(|tuner| tuner.with_head_transform(transform))
                .map_err(|e| e.to_string())
        };
        let resume = self.resume.take();
        let first = resume.as_ref().map_or(0, |(meta, _)| meta.restart);
        let mut resume = resume.map(|(_, r)| r);
        for index in first..restarts {
            let seed = restart_seed(self.request.config.seed, index);
            if restarts > 1 {
                self.send(TrainEvent::Restart { index, of: restarts, seed });
            }
            let mut tuner = fresh(seed)?;
            match resume.take() {
                Some(r) => {
                    if let Some(k) = r.kept {
                        let k_seed = k.state.seed;
                        kept_files = stored_blobs(k.clone().into_files()).await?;
                        kept = Some(fresh(k_seed)?.restore(k).map_err(|e| e.to_string())?);
                    }
                    tuner = tuner.restore(r.current).map_err(|e| e.to_string())?;
                    cached = tuner.features();
                    let p = tuner.progress();
                    self.send(TrainEvent::Phase { phase: p.phase, steps: p.total_steps });
                }
                None => {
                    self.log.replace((Vec::new(), Vec::new()));
                    if let Some((f_train, f_valid)) = cached.clone() {
                        tuner.reuse_features(f_train, f_valid).map_err(|e| e.to_string())?;
                    }
                }
            }
            cancelled = self.drive(&mut tuner, &mut cached, index, &kept_files, started).await?;
            if better(kept.as_ref().and_then(FineTuner::best_score), tuner.best_score()) {
                if index + 1 < restarts && !cancelled {
                    kept_files = snapshot_blobs(&tuner, false).await.unwrap_or_default();
                }
                kept = Some(tuner);
            }
            if cancelled {
                break;
            }
        }
        let Some(tuner) = kept else {
            return Err("the run was cancelled before its first evaluation, so there is no classifier to keep".into());
        };
        let (metrics, probs) = tuner.best().ok_or("no evaluation was recorded")?;
        let mistakes = self.request.data.task().mistakes(&Kept { valid: &valid, probs, predictions: tuner.best_predictions(), labels, scores: tuner.best_scores() });
        let speed = match self.request.keep_layers {
            Some(_) => Some(Speed { ms_per_text: ms_per_text(&tuner.best_model(), &valid, tokenizer.pad_id, &device).await?, teacher_ms_per_text: teacher_ms }),
            None => None,
        };
        let config = match &kept_layers {
            Some(keep) => config.with_num_hidden_layers(keep.len()),
            None => config,
        };
        let summary = RunSummary {
            meta: tuner.meta(),
            metrics: metrics.clone(),
            scores: tuner.best_scores().cloned().unwrap_or_default(),
            mistakes,
            cancelled,
            seconds: self.seconds_before + (now_ms() - started) / 1000.0,
            steps: tuner.progress().step,
            device: device_name,
            speed,
        };
        let current = Current {
            loaded: LoadedClassifier { config, model: tuner.best_model(), tokenizer, meta: tuner.meta() },
            device,
            tokenizer_json,
            vocab_txt,
        };
        let (steps, evals) = self.log.take();
        let saved = SavedRun {
            record: self.request.record.clone().finished(&summary),
            summary: summary.clone(),
            steps: thin(steps),
            evals,
            // A fresh pooler is not the base's: a head-only run on one is saved whole.
            head_on: self.request.head_on().filter(|_| !fresh_sequence_pooler),
        };
        Ok((summary, current, saved))
    }
}
