//! The MLM lab: its state on the page, and its panel (`view.rs`). Training runs in the training
//! worker (one run at a time, shared with the studio), reached through the page's worker client;
//! this holds what the page shows and sends the requests. `saved.rs`: what the lab saves;
//! `compare.rs`: the runs of this tab side by side; `downstream.rs`: a head fine-tuned on each.

use bertbench_core::bert::checkpoint::CheckpointFiles;
use bertbench_core::bert::config::BertConfig;
use bertbench_core::tasks::masking::MaskingConfig;
use bertbench_core::tasks::pretraining::MaskFill;
use bertbench_core::train::{PretrainConfig, PretrainStep, ShownToken};
use leptos::prelude::*;

use crate::app::AppState;
use crate::engine::Engine;
use crate::protocol::{Outcome, Progress, RunUpdate, Work};
use crate::runs::{Backend, LabEvent, LabRequest, LabSettings, LabVocab, SavedLab};
use crate::saved_work::SavedWork;
use crate::worker_client::WorkerClient;

mod compare;
mod downstream;
mod saved;
mod view;

pub use compare::electra_learned_from;
pub use downstream::best_downstream;
pub use view::LabPanel;

/// Where a lab run stands.
#[derive(Debug, Clone, PartialEq)]
pub enum LabRun {
    /// Nothing started yet.
    Idle,
    /// Training; `paused` while paused.
    Running { paused: bool },
    /// Ended; the model is kept in the worker.
    Finished { cancelled: bool, steps: usize, seconds: f64 },
    /// Failed; the message says why.
    Failed(String),
}

/// What the lab shows.
#[derive(Clone, Copy)]
pub struct Lab {
    /// The training worker.
    pub client: WorkerClient,
    /// Work saved in this browser.
    pub saved: SavedWork,
    /// The corpus text (one sentence or paragraph per line).
    pub corpus: RwSignal<String>,
    /// Where the corpus came from.
    pub corpus_name: RwSignal<String>,
    /// Vocabulary choice.
    pub vocab: RwSignal<LabVocab>,
    /// Model size preset (`bert-tiny`, ...).
    pub preset: RwSignal<String>,
    /// Continue pretraining the page's model instead of starting from scratch.
    pub continue_pretrained: RwSignal<bool>,
    /// From scratch, one layer's weights shared by every layer (ALBERT).
    pub share_layers: RwSignal<bool>,
    /// Hyper-parameters.
    pub config: RwSignal<PretrainConfig>,
    /// Probe sentences, one per line, each with `[MASK]`.
    pub probes: RwSignal<String>,
    /// Steps between probe evaluations.
    pub probe_every: RwSignal<usize>,
    /// Where to train.
    pub backend: RwSignal<Backend>,
    /// Run state.
    pub run: RwSignal<LabRun>,
    /// Vocabulary facts from the worker.
    pub vocab_info: RwSignal<Option<(usize, bool, Vec<String>)>>,
    /// Parameters and planned steps.
    pub ready: RwSignal<Option<(usize, usize)>>,
    /// A masked batch, for the "before and after masking" view.
    pub preview: RwSignal<Vec<Vec<ShownToken>>>,
    /// Every step so far.
    pub steps: RwSignal<Vec<PretrainStep>>,
    /// Probe results, newest last.
    pub probe_results: RwSignal<Vec<(usize, Vec<(String, Vec<MaskFill>)>)>>,
    /// Whether a trained lab model exists in the worker.
    pub has_model: RwSignal<bool>,
    /// What saving the finished model (or opening a saved one) came to.
    pub storage_note: RwSignal<Option<Result<String, String>>>,
    /// Training speed in work units per second ([`work_per_token`] × tokens), CPU then WebGPU:
    /// measured defaults until a run here measures this machine.
    pub rates: RwSignal<[(f64, bool); 2]>,
    /// The lab's runs that finished or were stopped, oldest first, to compare (kept in this
    /// browser across a reload, `saved.rs`).
    pub compared: RwSignal<Vec<compare::KeptRun>>,
    /// The run in progress as it will be kept when it ends (its steps and time then filled in).
    started: StoredValue<Option<compare::KeptRun>>,
    /// "Fine-tune each" is training a head on the kept runs' encoders.
    pub downstream_busy: RwSignal<bool>,
    /// What "Fine-tune each" is doing, or why it stopped.
    pub downstream_note: RwSignal<Option<Result<String, String>>>,
    /// The settings of the run whose model the lab holds (as it ran, whatever the page shows
    /// since), which name the model on the page.
    model_settings: StoredValue<Option<LabSettings>>,
    /// Work the run in progress plans to do, and where.
    planned: StoredValue<Option<(Backend, f64)>>,
    /// The worker's id of the lab's run (or of the run a saved model was opened from: none).
    run_id: StoredValue<u32>,
    /// Runs started or opened here, to name each run's model apart.
    pub(crate) runs: StoredValue<u32>,
}

/// Training work per corpus token: about 6 operations (forward, backward, weight gradients) per
/// weight of the matrices every token passes through, plus the vocabulary logits at the 15%
/// picked positions. Embedding look-ups cost next to nothing. A layer shared by every depth
/// (ALBERT) is passed through at every depth: it costs what the unshared model costs.
pub fn work_per_token(config: &BertConfig) -> f64 {
    let unshared = if config.distinct_layers() < config.num_hidden_layers {
        config.clone().with_model_type(bertbench_core::bert::family::Family::Bert).with_embedding_size(None)
    } else {
        config.clone()
    };
    let h = config.hidden_size as f64;
    let embeddings = ((config.vocab_size + config.max_position_embeddings + config.type_vocab_size) as f64) * h;
    let matrices = unshared.num_params(false) as f64 - embeddings + h * h;
    6.0 * (matrices + 0.15 * config.vocab_size as f64 * h)
}

/// [`work_per_token`] under the objective set: ELECTRA's discriminator scores one logit per
/// token instead of vocabulary logits at the picked ones, and its generator's work is added.
pub fn objective_work_per_token(config: &BertConfig, electra: bool) -> f64 {
    if !electra {
        return work_per_token(config);
    }
    let h = config.hidden_size as f64;
    let generator = bertbench_core::tasks::replaced_token::generator_config(config);
    work_per_token(config) - 6.0 * 0.15 * config.vocab_size as f64 * h + 6.0 * (h * h + h) + work_per_token(&generator)
}

/// A quick token count for estimates: WordPiece splits about 1.3 pieces per word here, plus
/// `[CLS]` and `[SEP]` per line.
pub fn estimate_tokens(corpus: &str) -> f64 {
    corpus.lines().filter(|l| !l.trim().is_empty()).map(|l| l.split_whitespace().count() as f64 * 1.3 + 2.0).sum()
}

/// Default speeds (work per second) before any run in this tab: BERT-tiny on the built-in corpus
/// in headless Chromium on a 2-core machine (docs/performance.md, "MLM lab"), on the CPU
/// fallback and on WebGPU (SwiftShader). The tab's own last run replaces them.
const DEFAULT_RATES: [(f64, bool); 2] = [(3.3e9, false), (1.7e9, false)];

/// The probes the built-in corpus can answer.
pub const DEFAULT_PROBES: &str = "the cow [MASK].
the banana is [MASK].
in the morning the sun [MASK].
in winter it is [MASK].
after four comes [MASK].";

impl Lab {
    /// Empty state with the built-in settings.
    pub fn new(client: WorkerClient, saved: SavedWork) -> Self {
        Self {
            client,
            saved,
            corpus: RwSignal::new(String::new()),
            corpus_name: RwSignal::new(String::new()),
            vocab: RwSignal::new(LabVocab::Train(2000)),
            preset: RwSignal::new("bert-tiny".into()),
            continue_pretrained: RwSignal::new(false),
            share_layers: RwSignal::new(false),
            config: RwSignal::new(PretrainConfig::new().with_epochs(5).with_masking(MaskingConfig::new())),
            probes: RwSignal::new(DEFAULT_PROBES.into()),
            probe_every: RwSignal::new(25),
            backend: RwSignal::new(Backend::Cpu),
            run: RwSignal::new(LabRun::Idle),
            vocab_info: RwSignal::new(None),
            ready: RwSignal::new(None),
            preview: RwSignal::new(Vec::new()),
            steps: RwSignal::new(Vec::new()),
            probe_results: RwSignal::new(Vec::new()),
            has_model: RwSignal::new(false),
            storage_note: RwSignal::new(None),
            rates: RwSignal::new(DEFAULT_RATES),
            compared: RwSignal::new(Vec::new()),
            started: StoredValue::new(None),
            downstream_busy: RwSignal::new(false),
            downstream_note: RwSignal::new(None),
            model_settings: StoredValue::new(None),
            planned: StoredValue::new(None),
            run_id: StoredValue::new(0),
            runs: StoredValue::new(0),
        }
    }

    /// Estimated seconds per epoch of `config` on the current corpus and backend, and whether the
    /// speed was measured on this machine.
    pub fn epoch_seconds(&self, config: &BertConfig) -> (f64, bool) {
        let tokens = self.corpus.with(|c| estimate_tokens(c));
        let (rate, measured) = self.rates.get()[self.backend.get() as usize];
        let electra = self.config.with(|c| c.electra());
        (tokens * objective_work_per_token(config, electra) / rate, measured)
    }

    /// The corpus as trimmed lines, blank ones kept: a blank line ends a document (NSP draws
    /// its negatives from another one).
    pub fn lines(&self) -> Vec<String> {
        self.corpus.with_untracked(|c| c.lines().map(|l| l.trim().to_string()).collect())
    }

    /// The corpus's documents (blank lines between them), each its non-empty lines.
    pub fn documents(&self) -> Vec<Vec<String>> {
        self.corpus.with(|c| bertbench_core::tasks::masking::documents(&c.lines().map(String::from).collect::<Vec<_>>()))
    }

    /// Makes the model the lab trained last the page's model (the one it had is kept as the
    /// base the explorer compares with); for the explorer, the studio and lesson 4's game.
    pub async fn load_on_page(self, state: AppState) -> Result<(), String> {
        let files = self.client.lab_files().await?;
        let current = state.engine().ok_or("no model is loaded")?;
        // Unique per run: the worker keeps the base it has when the name is the same.
        let number = self.runs.get_value();
        let settings = self.model_settings.get_value().unwrap_or_else(|| untrack(|| self.settings()));
        let name = match (settings.continue_pretrained, settings.share_layers) {
            (true, _) => format!("{} + MLM on {} #{number}", current.model_id, settings.corpus_name),
            (false, _) if settings.config.electra() => format!("MLM lab ({}, ELECTRA discriminator) #{number}", settings.preset),
            (false, true) => format!("MLM lab ({}, one shared layer) #{number}", settings.preset),
            (false, false) => format!("MLM lab ({}) #{number}", settings.preset),
        };
        let name = match settings.config.pair_task {
            Some(bertbench_core::tasks::masking::PairTask::Nsp) => name.replacen(" #", " + NSP #", 1),
            Some(bertbench_core::tasks::masking::PairTask::Sop) => name.replacen(" #", " + SOP #", 1),
            None => name,
        };
        let engine = Engine::build(&name, checkpoint_from(&files)?, current.device.clone(), current.backend)?;
        if state.base.with_value(Option::is_none) {
            state.base.set_value(Some(current));
        }
        state.set_engine(engine);
        Ok(())
    }

    /// Starts a run in the worker (which also needs the page's model when the vocabulary or
    /// the weights come from it).
    ///
    /// `model_config` is the shape about to train, for the speed measurement.
    pub fn start(self, state: AppState, model_config: Option<BertConfig>) -> Result<(), String> {
        let lines = self.lines();
        if lines.iter().all(|l| l.is_empty()) {
            return Err("the corpus is empty: pick the built-in corpus or upload a .txt file".into());
        }
        let config = self.config.get_untracked();
        config.masking.validate().map_err(|e| e.to_string())?;
        if let Some(task) = config.pair_task {
            let documents = untrack(|| self.documents());
            if documents.iter().map(Vec::len).sum::<usize>() < 3 || bertbench_core::tasks::masking::pair_count(&documents) == 0 {
                return Err(format!("{} needs at least 3 lines in order, two of them in the same document (a blank line ends one)", task.label()));
            }
        }
        let settings = untrack(|| self.settings());
        if config.electra() && (settings.continue_pretrained || settings.share_layers) {
            return Err("ELECTRA's replaced-token detection trains a new discriminator (and its generator) from scratch, each layer its own: \
                        pick a model size and “each layer its own weights”"
                .into());
        }
        let shared = settings.share_layers && !settings.continue_pretrained;
        if shared && config.pair_task == Some(bertbench_core::tasks::masking::PairTask::Nsp) {
            return Err("a model with one shared layer is an ALBERT, whose pretraining head predicts sentence order (AlbertForPreTraining has no \
                        next-sentence head, so the model could not be saved as one): pick “MLM + sentence-order prediction” or “MLM only”"
                .into());
        }
        let needs_base = self.continue_pretrained.get_untracked() || self.vocab.get_untracked() == LabVocab::Pretrained;
        // The loaded model's vocabulary masks with its own token (RoBERTa's `<mask>`).
        let mask = match state.engine().filter(|_| needs_base) {
            Some(engine) => engine.bert.tokenizer.mask_token(),
            None => "[MASK]".to_string(),
        };
        if let Some(bad) = settings.probe_lines().iter().find(|p| !p.contains(&mask)) {
            return Err(format!("the probe “{bad}” has no {mask}"));
        }
        if needs_base {
            let engine = state.engine().ok_or("the model is still loading")?;
            if shared && !engine.bert.tokenizer.is_wordpiece() {
                return Err(format!(
                    "{}'s vocabulary is not WordPiece, and a shared-layer (ALBERT) model is saved for BertTokenizer, which reads only WordPiece: \
                     train a vocabulary for it instead",
                    engine.model_id
                ));
            }
            if self.continue_pretrained.get_untracked() {
                use bertbench_core::train::memory;
                memory::check_memory(engine.bert.report.num_params as u64, true, memory::WASM_MEMORY).map_err(|e| format!("{}: {e}", engine.model_id))?;
            }
            self.client.send_base(&engine, settings.backend)?;
        }
        self.runs.update_value(|n| *n += 1);
        let model = match state.engine().filter(|_| settings.continue_pretrained) {
            Some(engine) => format!("{} (continued)", engine.model_id),
            None => settings.preset.clone(),
        };
        let layers = model_config.as_ref().map_or(0, |c| c.num_hidden_layers);
        self.started.set_value(Some(compare::KeptRun {
            number: self.runs.get_value(),
            settings: settings.clone(),
            model,
            layers,
            shared: model_config.as_ref().is_some_and(|c| c.distinct_layers() < c.num_hidden_layers),
            params: 0,
            steps: Vec::new(),
            seconds: 0.0,
            cancelled: false,
            files: None,
            downstream: None,
            saved_as: None,
        }));
        self.steps.set(Vec::new());
        self.probe_results.set(Vec::new());
        self.preview.set(Vec::new());
        self.vocab_info.set(None);
        self.ready.set(None);
        self.run.set(LabRun::Running { paused: false });
        self.storage_note.set(None);
        self.planned.set_value(model_config.map(|c| {
            let work = self.corpus.with_untracked(|t| estimate_tokens(t)) * objective_work_per_token(&c, config.electra()) * config.epochs as f64;
            (self.backend.get_untracked(), work)
        }));
        let request = LabRequest { settings, lines };
        let run = self.client.start_run(Work::Pretrain(Box::new(request)), move |run, update| self.on_run(run, update));
        self.run_id.set_value(run);
        Ok(())
    }

    /// An update of run `run`; those of an older run are ignored, but for its save's end.
    fn on_run(self, run: u32, update: RunUpdate) {
        if let RunUpdate::Saved { result, .. } = update {
            self.on_saved(run == self.run_id.get_value(), result);
            return;
        }
        if run != self.run_id.get_value() {
            return;
        }
        match update {
            RunUpdate::Progress(Progress::Pretrain(event)) => self.on_event(event.into()),
            RunUpdate::Paused(paused) => self.run.set(LabRun::Running { paused }),
            RunUpdate::Finished { outcome: Outcome::Pretrain { cancelled, steps, seconds }, saving } => self.on_finished(cancelled, steps, seconds, saving),
            RunUpdate::Failed { message, .. } => self.run.set(LabRun::Failed(message)),
            _ => {}
        }
    }

    fn on_event(self, event: LabEvent) {
        match event {
            LabEvent::Vocab { size, trained, sample } => self.vocab_info.set(Some((size, trained, sample))),
            LabEvent::Ready { params, total_steps, preview } => {
                self.ready.set(Some((params, total_steps)));
                self.preview.set(preview);
            }
            LabEvent::Step(s) => self.steps.update(|v| v.push(s)),
            LabEvent::Probes { step, fills } => self.probe_results.update(|v| v.push((step, fills))),
        }
    }

    /// The run ended: the model is kept in the worker, the run is kept to compare (unless it
    /// took no step), and its speed measures this machine.
    /// `saving`: the id its saved lab model is being written under.
    fn on_finished(self, cancelled: bool, steps: usize, seconds: f64, saving: Option<String>) {
        self.has_model.set(true);
        let started = self.started.get_value();
        if let Some(run) = &started {
            self.model_settings.set_value(Some(run.settings.clone()));
        }
        if let Some(mut kept) = started.filter(|_| steps > 0) {
            kept.params = self.ready.get_untracked().map_or(0, |(p, _)| p);
            kept.steps = self.steps.get_untracked();
            kept.seconds = seconds;
            kept.cancelled = cancelled;
            kept.saved_as = saving;
            let (number, small) = (kept.number, !kept.settings.continue_pretrained && kept.params <= compare::MAX_KEPT_PARAMS);
            self.compared.update(|runs| runs.push(kept));
            // Its model, for "Fine-tune each": the worker holds it until the next run.
            if small {
                leptos::task::spawn_local(async move {
                    if let Ok(files) = self.client.lab_files().await {
                        self.compared.update(|runs| runs.iter_mut().filter(|r| r.number == number).for_each(|r| r.files = Some(std::sync::Arc::new(files.clone()))));
                    }
                });
            }
        }
        self.started.set_value(None);
        let total = self.ready.get_untracked().map(|(_, t)| t).unwrap_or(0);
        if let Some((backend, work)) = self.planned.get_value() {
            if total > 0 && steps > 0 && seconds > 2.0 {
                let rate = work * steps as f64 / total as f64 / seconds;
                self.rates.update(|r| r[backend as usize] = (rate, true));
            }
        }
        self.run.set(LabRun::Finished { cancelled, steps, seconds });
    }
}

/// The built-in corpus (`scripts/make_mlm_corpus.py`), in the wasm so it works offline.
pub const BUILTIN_CORPUS: &str = crate::examples::CORPUS;

/// How the built-in corpus is named on the page.
pub const BUILTIN_NAME: &str = "the built-in corpus";

impl Lab {
    /// The settings as they are (tracked: an effect reading them reruns on every change).
    pub fn settings(self) -> LabSettings {
        LabSettings {
            corpus_name: self.corpus_name.get(),
            vocab: self.vocab.get(),
            preset: self.preset.get(),
            continue_pretrained: self.continue_pretrained.get(),
            share_layers: self.share_layers.get(),
            config: self.config.get(),
            probes: self.probes.get(),
            probe_every: self.probe_every.get(),
            backend: self.backend.get(),
        }
    }

    /// Puts saved settings back, with the saved corpus (`None`: the built-in one).
    pub fn apply_settings(self, s: LabSettings, corpus: Option<String>) {
        match corpus.filter(|_| s.corpus_name != BUILTIN_NAME) {
            Some(text) => {
                self.corpus.set(text);
                self.corpus_name.set(s.corpus_name);
            }
            None => self.use_builtin(),
        }
        self.vocab.set(s.vocab);
        self.preset.set(s.preset);
        self.continue_pretrained.set(s.continue_pretrained);
        self.share_layers.set(s.share_layers);
        self.config.set(s.config);
        self.probes.set(s.probes);
        self.probe_every.set(s.probe_every);
        self.backend.set(s.backend);
    }

    /// Switches to the built-in corpus.
    pub fn use_builtin(self) {
        self.corpus.set(BUILTIN_CORPUS.to_string());
        self.corpus_name.set(BUILTIN_NAME.into());
    }
}

impl Lab {
    /// Shows a saved run (its corpus, settings, curves and probes) as a new, finished lab run;
    /// the model itself is usable once the worker has opened it.
    pub fn show_saved(self, saved: SavedLab, corpus: String) {
        self.run_id.set_value(0);
        self.runs.update_value(|n| *n += 1);
        self.planned.set_value(None);
        self.started.set_value(None);
        self.model_settings.set_value(Some(saved.settings.clone()));
        self.has_model.set(false);
        self.apply_settings(saved.settings, Some(corpus));
        self.vocab_info.set(saved.vocab_info);
        self.ready.set(saved.ready);
        self.preview.set(saved.preview);
        self.steps.set(saved.steps);
        self.probe_results.set(saved.probe_results);
        self.run.set(LabRun::Finished { cancelled: saved.cancelled, steps: saved.done, seconds: saved.seconds });
    }
}

/// The lab model's files as a checkpoint the page can load (for the explorer or the studio).
pub fn checkpoint_from(files: &[(String, Vec<u8>)]) -> Result<CheckpointFiles, String> {
    let get = |n: &str| files.iter().find(|(f, _)| f == n).map(|(_, b)| b.clone());
    Ok(CheckpointFiles {
        config_json: get("config.json").ok_or("the lab model has no config.json")?,
        weights: get("model.safetensors").ok_or("the lab model has no model.safetensors")?,
        tokenizer_json: get("tokenizer.json"),
        vocab_txt: get("vocab.txt"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bertbench_core::Preset;

    #[test]
    fn the_token_estimate_counts_words_and_two_specials_per_line() {
        assert_eq!(estimate_tokens("the cow eats\n\n  \ngrass\n"), 3.0 * 1.3 + 2.0 + 1.3 + 2.0);
        assert_eq!(estimate_tokens(""), 0.0);
    }

    /// A shared layer saves parameters, not work: every depth still runs it.
    #[test]
    fn a_shared_layer_costs_the_same_work_per_token() {
        let own = crate::runs::scratch_config("bert-mini", false, 64, 2000).unwrap();
        let shared = crate::runs::scratch_config("bert-mini", true, 64, 2000).unwrap();
        assert!(shared.num_params(false) < own.num_params(false));
        assert_eq!(work_per_token(&shared), work_per_token(&own));
    }

    #[test]
    fn a_bigger_model_costs_more_per_token() {
        let work: Vec<f64> = Preset::ALL.iter().map(|p| work_per_token(&p.config(1000))).collect();
        assert!(work.windows(2).all(|w| w[1] > w[0]), "{work:?}");
    }
}
