//! The studio's sentence-similarity mode: pairs of texts with a score (STS-style 0–5, 0–1) or a
//! two-valued label (duplicate or not) in, with columns, a report and a preview; a model trained
//! as a cross-encoder (the pair read together) or a bi-encoder (each text alone, compared by
//! cosine); its results (Pearson and Spearman, predicted against gold, the pairs furthest off);
//! two typed texts compared; a search over a list of texts; and the lectures' comparison of
//! the two kinds: accuracy against the cost of comparing one query with many texts.

use std::sync::Arc;

use bertbench_core::bert::family::Family;
use bertbench_core::data::{ColumnMap, PairData, Table, guess_pair_columns, parse_table, to_pairs};
use bertbench_core::tasks::classification::{ClassifierMeta, Level};
use bertbench_core::tasks::similarity::{LABELS, SimilarityLoss, SimilarityMetrics};
use bertbench_core::train::{TrainMode, memory};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::data::clip;
use super::data_card::{DataCard, Example};
use super::held_out::{HeldOutChoice, HeldOutRead};
use super::task_state::TaskState;
use super::task::{Features, TaskPanel};
use super::{RunState, Studio, Task, recipe};
use crate::app::AppState;
use crate::files::on_files;
use crate::runs::{KnownBy, PairRequest, RunData, RunSummary, SearchResult};
use crate::widgets::duration;

/// The example for similarity, written for this project (`scripts/make_similarity_example.py`).
pub const EXAMPLE_PAIRS: &[u8] = crate::examples::SIMILARITY_CSV;

/// The files the similarity mode's pickers offer.
const PAIR_FILES: &str = ".csv,.tsv,.tab,.txt,.jsonl,.ndjson,.json,.gz,.parquet";
/// Texts to search, from the same script.
pub const EXAMPLE_TEXTS: &str = crate::examples::SIMILARITY_TEXTS;

/// A file of scored pairs: its table, the columns chosen, and the pairs they give.
#[derive(Debug, Clone)]
pub struct PairUpload {
    /// The file's name.
    pub name: String,
    /// Its rows.
    pub table: Arc<Table>,
    /// Which columns are the two texts and the score.
    pub columns: ColumnMap,
    /// The pairs (`None` while the columns give none; `error` says why).
    pub data: Option<Arc<PairData>>,
    /// Why the columns give no pairs.
    pub error: Option<String>,
    /// Pairs longer than the run's length, as a cross-encoder reads them (`None` until counted).
    pub over_max_len: Option<usize>,
}

/// What one search cost, for the comparison of the two kinds of model.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    /// Cross- or bi-encoder.
    pub level: Level,
    /// Texts searched.
    pub texts: usize,
    /// The query's own time and encoder passes.
    pub seconds: f64,
    pub passes: usize,
    /// A bi-encoder's one-time encoding of the texts (the last time it was done).
    pub index_seconds: Option<f64>,
}

/// A short time, to the millisecond below ten seconds (a query's cost), else as [`duration`].
fn took(seconds: f64) -> String {
    if seconds < 10.0 { format!("{:.0} ms", seconds * 1000.0) } else { duration(seconds) }
}

/// "cross-encoder" or "bi-encoder".
pub fn kind(level: Level) -> &'static str {
    if level == Level::Score { "cross-encoder" } else { "bi-encoder" }
}

/// The similarity mode's own state.
#[derive(Debug, Clone, Copy)]
pub struct PairState {
    /// The scored pairs.
    pub pairs: RwSignal<Option<PairUpload>>,
    /// Which kind of model trains: a cross-encoder (`Score`) or a bi-encoder (`Embedding`).
    pub level: RwSignal<Level>,
    /// What the similarity searches of this session cost, for the comparison of the two kinds.
    pub costs: RwSignal<Vec<Cost>>,
}

impl TaskState for PairState {
    /// No file yet; a bi-encoder.
    fn new() -> Self {
        Self { pairs: RwSignal::new(None), level: RwSignal::new(Level::Embedding), costs: RwSignal::new(Vec::new()) }
    }
}

/// The mode's own state in `studio`.
fn own(studio: Studio) -> PairState {
    studio.own()
}

/// The similarity task (a score per pair of texts).
pub(super) struct Similarity;

impl TaskPanel for Similarity {
    fn export_note(&self) -> &'static str {
        "In Python, a cross-encoder loads with AutoModelForSequenceClassification.from_pretrained(folder) (one output, transformers' regression; on features other than [CLS] + pooler with trust_remote_code=True), a bi-encoder with sentence-transformers' SentenceTransformer(folder), each scoring pairs as it does here."
    }

    fn run_label(&self, config: &bertbench_core::train::FineTuneConfig) -> String {
        format!("{} · {}", kind(config.features.level), recipe(config))
    }

    fn recipe_note(&self, level: Level, _pairs: bool) -> &'static str {
        match level {
            Level::Embedding => "full fine-tuning, batch 16, lr 5e-5, 2 epochs, chosen on STS-B's dev split for a bi-encoder (MiniLM, a sentence encoder: Spearman 0.896, where the head alone gives 0.871 in seconds)",
            _ => "full fine-tuning, batch 16, lr 5e-5, 2 epochs, chosen on STS-B's dev split for a cross-encoder (MiniLM: Spearman 0.855, where the head alone gives 0.456: a cross-encoder must learn how the two texts read together relate)",
        }
    }

    fn model_noun(&self, level: Level) -> &'static str {
        if level == Level::Embedding { "a similarity bi-encoder" } else { "a similarity cross-encoder" }
    }

    /// A cross-encoder (a bi-encoder is a sentence-transformers folder, opened as a model).
    fn opened(&self, model: &str, _meta: &ClassifierMeta) -> String {
        format!("{model} scores pairs of texts read together (one output, transformers' regression): compare two texts here, or search a list.")
    }

    /// Pairs whose scores are read on the training file's scale.
    fn read_held_out(&self, studio: Studio, name: &str, bytes: &[u8]) -> Result<HeldOutRead, String> {
        let table = parse_table(bytes, Some(name)).map_err(|e| e.to_string())?;
        let pairs = to_pairs(&table, &guess_pair_columns(&table)).map_err(|e| e.to_string())?;
        let train = own(studio).pairs.with_untracked(|p| p.as_ref().and_then(|p| p.data.clone())).ok_or("load the training file first")?;
        let data = pairs.on_scale_of(&train).map_err(|e| e.to_string())?;
        let count = format!("{} pairs", data.pairs.len());
        Ok(HeldOutRead::new(data, count))
    }

    fn choice(&self) -> (&'static str, &'static str) {
        (" how alike two texts are (sentence similarity, STS)", "task-similar")
    }

    fn data_panel(&self) -> AnyView {
        view! { <StudioPairDataPanel /> }.into_any()
    }

    fn has_data(&self, studio: Studio) -> bool {
        own(studio).pairs.with(|u| u.as_ref().is_some_and(|u| u.data.is_some()))
    }

    fn epoch_examples(&self, studio: Studio) -> usize {
        studio.training_pairs()
    }

    fn start(&self, studio: Studio, state: AppState) -> Result<(), String> {
        studio.start_similarity(state)
    }

    fn open_file(&self, studio: Studio, state: AppState, name: String, bytes: Vec<u8>) {
        studio.set_pair_file(state, name, bytes);
    }

    fn results(&self, summary: Arc<RunSummary>, studio: Studio) -> AnyView {
        similarity_results(summary, studio).into_any()
    }

    fn predict(&self) -> AnyView {
        view! { <SimilarityPredict /> }.into_any()
    }

    fn export_name(&self, level: Level) -> &'static str {
        if level == Level::Embedding { "bertbench-bi-encoder" } else { "bertbench-cross-encoder" }
    }

    fn loss_name(&self) -> &'static str {
        "loss"
    }

    fn chosen_level(&self, studio: Studio) -> Option<Level> {
        Some(own(studio).level.get())
    }

    fn took(&self, studio: Studio, meta: &ClassifierMeta) {
        own(studio).level.set(meta.spec.level);
    }

    /// The bi-encoder pools the last layer (as sentence-transformers does), without a pooler;
    /// the cross-encoder chooses as a classifier does.
    fn features(&self, studio: Studio, _: Option<Family>) -> Features {
        let cross = own(studio).level.get() != Level::Embedding;
        Features::Pooled { pooler: cross, layers: cross, pooler_fixes_layers: false }
    }
}

impl Studio {
    /// Reads a file of pairs; a file that cannot be read (or gives no pair with any columns)
    /// leaves the data as it was.
    pub fn set_pair_file(self, state: AppState, name: String, bytes: Vec<u8>) {
        let table = match parse_table(&bytes, Some(&name)) {
            Ok(t) => t,
            Err(e) => return self.data_error.set(Some(format!("{name}: {e} The data you had is kept."))),
        };
        let columns = guess_pair_columns(&table);
        if let Err(e) = to_pairs(&table, &columns) {
            return self.data_error.set(Some(format!("{name}: {e} The data you had is kept.")));
        }
        self.data_error.set(None);
        self.save_dataset(Task::Similar, name.clone(), bytes.clone(), table.rows.len());
        own(self).pairs.set(Some(PairUpload { name, table: Arc::new(table), columns, data: None, error: None, over_max_len: None }));
        self.map_pairs(state, columns);
    }

    /// Reads the pairs with `columns` and counts their tokens (in chunks, yielding).
    pub fn map_pairs(self, state: AppState, columns: ColumnMap) {
        let Some(upload) = own(self).pairs.get_untracked() else { return };
        let (data, error) = match to_pairs(&upload.table, &columns) {
            Ok(d) => (Some(Arc::new(d)), None),
            Err(e) => (None, Some(e.to_string())),
        };
        if data.as_ref().is_some_and(|d| !d.binary) && self.config.with_untracked(|c| c.similarity_loss == SimilarityLoss::Contrastive) {
            self.config.update(|c| c.similarity_loss = SimilarityLoss::Cosine);
        }
        own(self).pairs.set(Some(PairUpload { columns, data: data.clone(), error, over_max_len: None, ..upload }));
        let Some(data) = data else { return };
        let max_len = self.max_len.get_untracked();
        spawn_local(async move {
            let Some(engine) = state.engine() else { return };
            let tok = &engine.bert.tokenizer;
            let counts = super::data_card::token_counts(&data.pairs, |p| tok.encode_pair(&p.text, &p.text_pair)).await;
            let over = counts.iter().filter(|&&n| n > max_len).count();
            own(self).pairs.update(|u| {
                if let Some(u) = u.as_mut().filter(|u| u.data.as_ref().is_some_and(|d| Arc::ptr_eq(d, &data))) {
                    u.over_max_len = Some(over);
                }
            });
        });
    }

    /// Starts a similarity run on the loaded pairs, as the chosen kind of model.
    fn start_similarity(self, state: AppState) -> Result<(), String> {
        let upload = own(self).pairs.get_untracked().ok_or("load a file of scored pairs first")?;
        let data = upload.data.clone().ok_or_else(|| upload.error.clone().unwrap_or_else(|| "choose the columns of the two texts and the score".into()))?;
        let engine = state.engine().ok_or("the model is still loading")?;
        let level = own(self).level.get_untracked();
        let config = self.config.get_untracked().for_similarity(level, &data);
        memory::check_memory(engine.bert.report.num_params as u64, config.mode != TrainMode::HeadOnly, memory::WASM_MEMORY)
            .map_err(|e| format!("{}: {e}", engine.model_id))?;
        let pairs = match self.held_out_file().and_then(|h| h.data::<PairData>()) {
            Some(valid) => PairRequest { train: data.pairs.clone(), valid: (*valid).clone().on_scale_of(&data).map_err(|e| e.to_string())?.pairs },
            _ => {
                let split = data.split(self.valid_fraction.get_untracked(), self.split_seed.get_untracked()).map_err(|e| e.to_string())?;
                let pick = |idx: &[usize]| idx.iter().map(|&i| data.pairs[i].clone()).collect::<Vec<_>>();
                PairRequest { train: pick(&split.train), valid: pick(&split.valid) }
            }
        };
        let label = Similarity.run_label(&config);
        let labels = LABELS.iter().map(|l| l.to_string()).collect();
        self.launch(&engine, label, config, labels, self.max_len.get_untracked(), |r| r.data = RunData::Pairs(pairs))
    }

    /// Training pairs of the loaded file (about: the split is stratified by score).
    fn training_pairs(self) -> usize {
        let n = own(self).pairs.with_untracked(|u| u.as_ref().and_then(|u| u.data.as_ref()).map_or(0, |d| d.pairs.len()));
        (n as f32 * (1.0 - self.held_out_fraction())).round() as usize
    }
}

/// Step 1 in similarity mode: a file of scored pairs, its columns, report and preview, and the
/// kind of model.
#[component]
pub fn StudioPairDataPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    Effect::new(move |_| {
        state.generation.get();
        if let Some(columns) = own(studio).pairs.with_untracked(|u| u.as_ref().map(|u| u.columns)) {
            studio.map_pairs(state, columns);
        }
    });
    let column_select = move |which: &'static str, label: &'static str| {
        let current = move || {
            own(studio).pairs.with(|u| {
                u.as_ref().map(|u| match which {
                    "text" => u.columns.text.to_string(),
                    "pair" => u.columns.text_pair.map(|i| i.to_string()).unwrap_or_default(),
                    _ => u.columns.label.map(|i| i.to_string()).unwrap_or_default(),
                })
            })
        };
        let on_change = move |ev| {
            let Some(mut columns) = own(studio).pairs.with_untracked(|u| u.as_ref().map(|u| u.columns)) else { return };
            let idx = event_target_value(&ev).parse::<usize>().ok();
            match which {
                "text" => columns.text = idx.unwrap_or(0),
                "pair" => columns.text_pair = idx,
                _ => columns.label = idx,
            }
            studio.map_pairs(state, columns);
        };
        view! {
            <label class="small">{label}
                <select data-testid=format!("pair-column-{which}") on:change=on_change prop:value=current>
                    {(which != "text").then(|| view! { <option value="">"(none)"</option> })}
                    {move || own(studio).pairs.with(|u| u.as_ref().map(|u| u.table.columns.iter().enumerate()
                        .map(|(i, c)| view! { <option value=i.to_string()>{c.clone()}</option> }).collect_view()))}
                </select>
            </label>
        }
    };
    let report = move || {
        own(studio).pairs.get().map(|u| {
            let Some(d) = u.data.clone() else {
                return view! { <p class="banner err small" data-testid="pair-error">{u.error.clone().unwrap_or_default()}</p> }.into_any();
            };
            let hist = d.histogram(10);
            let most = hist.iter().copied().max().unwrap_or(1).max(1);
            let scale = d.scale;
            view! {
                <div data-testid="pair-report">
                    <div class="facts">
                        <div><b data-testid="pair-count">{d.pairs.len()}</b>"pairs"</div>
                        <div><b>{d.skipped.len()}</b>"skipped rows"</div>
                        <div><b data-testid="pair-scale">{match &d.label_names {
                            Some((no, yes)) => format!("{no} / {yes}"),
                            None => scale.label(),
                        }}</b>{if d.binary { "labels (read as 0 and 1)" } else { "scores (read as 0..1)" }}</div>
                        <div><b>{format!("{:.2}", scale.denormalise(d.mean_score()))}</b>"mean score"</div>
                        <div><b>{u.over_max_len.map_or("…".to_string(), |n| n.to_string())}</b>{format!("pairs longer than {} tokens (truncated)", studio.max_len.get_untracked())}</div>
                    </div>
                    <div class="histogram" data-testid="pair-histogram" role="img"
                        aria-label=format!("How the scores spread over {}: {}", scale.label(), hist.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", "))>
                        {hist.iter().enumerate().map(|(i, &n)| view! {
                            <span class="hbar" style:height=format!("{:.0}%", 100.0 * n as f64 / most as f64)
                                title=format!("{:.2}–{:.2}: {n} pairs", scale.denormalise(i as f32 / 10.0), scale.denormalise((i + 1) as f32 / 10.0))></span>
                        }).collect_view()}
                    </div>
                    <p class="small muted">{format!("{} · scores from {} (low) to {} (high)", u.name, scale.denormalise(0.0), scale.denormalise(1.0))}</p>
                    {d.warnings.iter().map(|w| view! { <p class="banner warn small" data-testid="data-warning">{w.clone()}</p> }).collect_view()}
                    <table class="plain small" data-testid="pair-preview">
                        <tr><th>"line"</th><th>"text"</th><th>"second text"</th><th>"score"</th></tr>
                        {d.pairs.iter().take(5).map(|p| view! {
                            <tr><td class="muted">{p.line}</td><td>{clip(&p.text, 80)}</td><td>{clip(&p.text_pair, 80)}</td><td>{p.raw.clone()}</td></tr>
                        }).collect_view()}
                    </table>
                    {(!d.skipped.is_empty()).then(|| view! {
                        <details data-testid="skipped-rows">
                            <summary>{format!("Show the {} skipped row(s)", d.skipped.len())}</summary>
                            <table class="plain">
                                <tr><th>"line"</th><th>"why"</th><th>"row"</th></tr>
                                {d.skipped.iter().take(500).map(|s| view! {
                                    <tr><td>{s.line}</td><td>{s.reason.to_string()}</td><td class="mono small">{clip(&s.preview, 80)}</td></tr>
                                }).collect_view()}
                            </table>
                        </details>
                    })}
                </div>
            }
            .into_any()
        })
    };
    let binary = move || own(studio).pairs.with(|u| u.as_ref().and_then(|u| u.data.as_ref()).is_some_and(|d| d.binary));
    let running = move || matches!(studio.run.get(), RunState::Running { .. });
    let level = move || own(studio).level.get();
    view! {
        <DataCard task=Task::Similar testid="studio-pair-data" title="1 · Pairs of texts with a score"
            hint=concat!("A CSV, TSV or JSONL file with two text columns and a score: how alike the texts are (STS-B's 0–5, SICK's 1–5, ",
                "0–1), or a label with two values (duplicate or not, paraphrase or not); the Hub's Parquet files too. Scores are read as 0..1 from the lowest to the highest. ",
                "Read in this tab, never uploaded.")
            accept=PAIR_FILES file_testid="pair-file"
            example=Example { testid: "use-pair-example", label: "use the example (402 pairs scored 0–5)" }
            on_file=move |(name, bytes)| studio.set_pair_file(state, name, bytes)
            on_example=move |()| studio.set_pair_file(state, "similarity.csv (built-in example)".into(), EXAMPLE_PAIRS.to_vec())>
            {move || own(studio).pairs.with(Option::is_some).then(|| view! {
                <div class="row mapping">
                    {column_select("text", "Text ")}
                    {column_select("pair", "Second text ")}
                    {column_select("score", "Score or label ")}
                </div>
            })}
            {report}
            <div class="row">
                <HeldOutChoice task=Task::Similar prefix="pair" unit="held out (by score)" accept=PAIR_FILES />
            </div>
            <fieldset class="choice" data-testid="pair-model" prop:disabled=running>
                <legend>"Model"</legend>
                <label>
                    <input type="radio" name="pair-level" data-testid="pair-bi" prop:checked=move || level() == Level::Embedding
                        on:change=move |_| own(studio).level.set(Level::Embedding) />
                    <b>" bi-encoder"</b>": each text is encoded alone into a vector (mean or [CLS] of the last layer, then a dense layer), "
                    "and two texts are as alike as their vectors' cosine. Texts are encoded once: a query against N texts costs one pass and N dot products. "
                    "Before training it is the model's own sentence vector. Exports as a sentence-transformers folder."
                </label>
                <label>
                    <input type="radio" name="pair-level" data-testid="pair-cross" prop:checked=move || level() == Level::Score
                        on:change=move |_| own(studio).level.set(Level::Score) />
                    <b>" cross-encoder"</b>": the pair is read as one sequence, [CLS] text [SEP] second text [SEP], so every word of one text attends to "
                    "every word of the other, and a linear head gives the score (squared error). Reading both texts at once often scores better, above all from an encoder pretrained by masked language modelling; one pretrained as a bi-encoder (as the default MiniLM was) may not: the table below compares both on these pairs. A query against N texts costs N passes. "
                    "Exports as BertForSequenceClassification with one label (transformers' regression)."
                </label>
                <div class="row" class:hidden=move || level() != Level::Embedding>
                    <label class="small">"Loss "
                        <select data-testid="pair-loss" on:change=move |ev| studio.config.update(|c| c.similarity_loss =
                            if event_target_value(&ev) == "contrastive" { SimilarityLoss::Contrastive } else { SimilarityLoss::Cosine })>
                            <option value="cosine" selected=move || studio.config.with(|c| c.similarity_loss == SimilarityLoss::Cosine)>{SimilarityLoss::Cosine.label()}</option>
                            <option value="contrastive" prop:disabled=move || !binary()
                                selected=move || studio.config.with(|c| c.similarity_loss == SimilarityLoss::Contrastive)>
                                {move || if binary() { SimilarityLoss::Contrastive.label().to_string() } else { "contrastive (needs pairs labelled similar or not)".to_string() }}
                            </option>
                        </select>
                    </label>
                </div>
            </fieldset>
        </DataCard>
    }
}

/// A scatter of predicted against gold similarity (both 0..1), with the diagonal; its text
/// alternative says the correlation and how many pairs it shows.
fn scatter(points: &[(f32, f32)], metrics: &SimilarityMetrics) -> impl IntoView + use<> {
    let (w, pad) = (260.0f32, 28.0f32);
    let at = |v: f32| pad + v.clamp(-0.1, 1.1) * (w - 2.0 * pad);
    let summary = format!(
        "Predicted against gold similarity for {} validation pairs: Spearman {:.3}, Pearson {:.3}. Points on the diagonal are predicted exactly.",
        points.len(),
        metrics.spearman,
        metrics.pearson
    );
    view! {
        <figure class="scatter">
            <svg width=w height=w viewBox=format!("0 0 {w} {w}") role="img" aria-label=summary.clone() data-testid="pair-scatter">
                <line x1=at(0.0) y1=w - at(0.0) x2=at(1.0) y2=w - at(1.0) class="diag" />
                <line x1=pad y1=w - pad x2=w - pad y2=w - pad class="axis" />
                <line x1=pad y1=pad x2=pad y2=w - pad class="axis" />
                <text x=w / 2.0 y=w - 6.0 class="axis-label" text-anchor="middle">"gold score"</text>
                <text x=10.0 y=w / 2.0 class="axis-label" text-anchor="middle" transform=format!("rotate(-90 10 {})", w / 2.0)>"predicted"</text>
                {points.iter().map(|&(g, p)| view! { <circle cx=at(g) cy=w - at(p) r="2.5" /> }).collect_view()}
            </svg>
            <figcaption class="small muted">{summary}</figcaption>
        </figure>
    }
}

/// A similarity model's validation results: the correlations, predicted against gold, the
/// pairs furthest off, and the two kinds of model compared.
pub fn similarity_results(s: Arc<RunSummary>, studio: Studio) -> impl IntoView {
    let m = s.scores.similarity().cloned().unwrap_or_else(|| SimilarityMetrics::new(&[], &[], false));
    let scale = s.meta.scale.unwrap_or(bertbench_core::data::ScoreScale::UNIT);
    let points: Vec<(f32, f32)> = s.mistakes.pairs().iter().map(|x| (x.gold, x.predicted)).collect();
    let level = s.meta.spec.level;
    view! {
        <div data-testid="similarity-results">
            <div class="facts">
                <div><b data-testid="sim-spearman">{format!("{:.3}", m.spearman)}</b>"Spearman (rank) correlation"</div>
                <div><b data-testid="sim-pearson">{format!("{:.3}", m.pearson)}</b>"Pearson correlation"</div>
                <div><b>{format!("{:.4}", m.mse)}</b>"mean squared error (0..1)"</div>
                {m.accuracy.map(|a| view! { <div><b data-testid="sim-accuracy">{format!("{:.1}%", a * 100.0)}</b>"pairs on the right side of 0.5"</div> })}
                <div><b data-testid="sim-count">{m.count}</b>"validation pairs"</div>
                <div><b>{kind(level)}</b>{s.meta.spec.label()}</div>
            </div>
            <div class="grid2">
                {scatter(&points, &m)}
                <p class="hint">"Spearman's correlation compares the order of the pairs (is the more similar pair scored higher?), as the STS benchmarks do; "
                    "Pearson's how straight the line is. 1 is perfect, 0 no relation. A bi-encoder's score is its cosine, which training pulls towards the "
                    "gold score; a cross-encoder's is its head's output."</p>
            </div>
            <details data-testid="pair-mistakes">
                <summary>{format!("Validation pairs furthest off ({} shown)", s.mistakes.pairs().len().min(200))}</summary>
                <table class="plain">
                    <tr><th>"line"</th><th>"text"</th><th>"second text"</th><th>{format!("gold ({})", scale.label())}</th><th>"predicted"</th></tr>
                    {s.mistakes.pairs().iter().take(200).map(|x| view! {
                        <tr>
                            <td>{x.line}</td><td>{clip(&x.text, 90)}</td><td>{clip(&x.text_pair, 90)}</td>
                            <td>{format!("{:.2}", scale.denormalise(x.gold))}</td><td>{format!("{:.2}", scale.denormalise(x.predicted))}</td>
                        </tr>
                    }).collect_view()}
                </table>
            </details>
            {comparison(studio)}
        </div>
    }
}

/// The lectures' comparison: each kind's best validation Spearman this session, and what
/// comparing one query with N texts cost it, as measured by the search below.
fn comparison(studio: Studio) -> impl IntoView {
    let best = move |level: Level| {
        studio.history.with(|h| {
            h.iter().filter(|r| r.recipe.starts_with(kind(level))).filter_map(|r| match r.known_by { KnownBy::Correlations { spearman, .. } => Some(spearman), _ => None }).fold(None, |b: Option<f32>, x| Some(b.map_or(x, |b| b.max(x))))
        })
    };
    let row = move |level: Level| {
        let best = best(level);
        let cost = own(studio).costs.with(|c| c.iter().rev().find(|c| c.level == level).cloned());
        view! {
            <tr data-testid=format!("compare-{}", kind(level))>
                <td>{kind(level)}</td>
                <td>{best.map_or("not trained yet".to_string(), |b| format!("{b:.3}"))}</td>
                <td>{if level == Level::Score { "N passes of the pair, every query" } else { "N passes once, then 1 pass and N dot products per query" }}</td>
                <td>{cost.map_or("search below to measure".to_string(), |c| {
                    let once = c.index_seconds.map(|s| format!(" (+ {} once to encode the texts)", took(s))).unwrap_or_default();
                    format!("{} texts: {} pass{}, {}{once}", c.texts, c.passes, if c.passes == 1 { "" } else { "es" }, took(c.seconds))
                })}</td>
            </tr>
        }
    };
    view! {
        <h3>"Cross-encoder or bi-encoder?"</h3>
        <table class="plain small" data-testid="pair-comparison">
            <tr><th>"model"</th><th>"best validation Spearman"</th><th>"one query against N texts"</th><th>"measured here"</th></tr>
            {move || row(Level::Score)}
            {move || row(Level::Embedding)}
        </table>
        {move || which_reads_better(best(Level::Score), best(Level::Embedding)).map(|v| view! { <p data-testid="pair-verdict">{v}</p> })}
        <p class="hint">"Train both kinds on the same pairs to fill the table. Search engines use both: a bi-encoder finds the best hundred among millions "
            "(its vectors are computed ahead), then a cross-encoder re-orders those hundred."</p>
    }
}

/// What the comparison table's Spearman correlations say (`cross`, `bi`: each kind's best this
/// session), once both kinds are trained: which reads these pairs better, by how much.
fn which_reads_better(cross: Option<f32>, bi: Option<f32>) -> Option<String> {
    let (cross, bi) = (cross?, bi?);
    let gap = cross - bi;
    Some(if gap.abs() < 0.005 {
        format!("On these pairs the two read about as well (Spearman {cross:.3} and {bi:.3}).")
    } else if gap > 0.0 {
        format!("On these pairs the cross-encoder reads better: Spearman {cross:.3} against the bi-encoder's {bi:.3}, {gap:.3} higher, at N passes per query.")
    } else {
        format!(
            "On these pairs the bi-encoder reads better: Spearman {bi:.3} against the cross-encoder's {cross:.3}, {:.3} higher, and a query costs it one pass. \
             A model pretrained as a sentence encoder can do so; from a masked-language-model checkpoint the cross-encoder usually wins.",
            -gap
        )
    })
}

/// Two typed texts compared, and a search over a list of texts.
#[component]
pub fn SimilarityPredict() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let a = RwSignal::new("A man is playing a guitar on stage.".to_string());
    let b = RwSignal::new("Someone performs a song with a guitar.".to_string());
    let score = RwSignal::new(None::<Result<f32, String>>);
    let texts = RwSignal::new(EXAMPLE_TEXTS.trim().to_string());
    let query = RwSignal::new("a dog playing outside".to_string());
    let found = RwSignal::new(None::<Result<(SearchResult, Vec<String>), String>>);
    let searches = RwSignal::new(0u32);
    let busy = RwSignal::new(false);
    // A model trained here says the scale its data had; one from the Hub says none, and its one
    // output is its own (a regressor's raw score, the pipeline's sigmoid of it where
    // `problem_type` is not regression).
    let scale = move || studio.classifier.with(|c| c.as_ref().and_then(|(m, _)| m.scale));
    let meta = move || studio.classifier.with(|c| c.as_ref().map(|(m, _)| m.clone()));
    let said = move |s: f32| match (scale(), meta()) {
        (Some(scale), _) => format!("similarity {s:.3} (0..1) · {:.2} on the data's {} scale", scale.denormalise(s), scale.label()),
        (None, Some(m)) if m.spec.level == Level::Embedding => format!("cosine similarity {s:.3} (−1..1)"),
        (None, Some(m)) if m.pipeline_scoring() == bertbench_core::tasks::classification::Scoring::Sigmoid => {
            format!("score {s:.3}, the model's own output (its config.json gives no scale); its sigmoid, as transformers' pipeline shows it: {:.3}", bertbench_core::tasks::classification::sigmoid(s))
        }
        _ => format!("score {s:.3}, the model's own output (its config.json gives no scale; transformers' regression)"),
    };
    let compare = move |_| {
        let pair = (a.get_untracked(), b.get_untracked());
        busy.set(true);
        crate::widgets::spawn_in_view(async move {
            let r = studio.client.similar(vec![pair]).await.map(|s| s.first().copied().unwrap_or_default());
            busy.set(false);
            score.set(Some(r));
        });
    };
    let search = move |_| {
        let list: Vec<String> = texts.get_untracked().lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
        let q = query.get_untracked();
        busy.set(true);
        crate::widgets::spawn_in_view(async move {
            let r = studio.client.search(q, list.clone(), 10).await;
            busy.set(false);
            if let Ok(result) = &r {
                let level = studio.classifier.with_untracked(|c| c.as_ref().map_or(Level::Embedding, |(m, _)| m.spec.level));
                let index_seconds = result.index_seconds.or_else(|| {
                    own(studio).costs.with_untracked(|c| c.iter().rev().find(|c| c.level == level && c.texts == result.texts).and_then(|c| c.index_seconds))
                });
                own(studio).costs.update(|c| c.push(Cost { level, texts: result.texts, seconds: result.seconds, passes: result.passes, index_seconds }));
            }
            searches.update(|n| *n += 1);
            found.set(Some(r.map(|x| (x, list))));
        });
    };
    let load_texts = on_files(move |mut files| {
        if let Some((_, bytes)) = files.pop() {
            texts.set(String::from_utf8_lossy(&bytes).into_owned());
        }
    });
    view! {
        <div class="grid2">
            <input type="text" data-testid="sim-text" aria-label="first text" prop:value=move || a.get() on:input=move |ev| a.set(event_target_value(&ev)) />
            <input type="text" data-testid="sim-pair" aria-label="second text" placeholder="second text (empty: a model of single texts reads the first alone)"
                prop:value=move || b.get() on:input=move |ev| b.set(event_target_value(&ev)) />
        </div>
        <div class="row">
            <button data-testid="sim-button" on:click=compare prop:disabled=move || busy.get()>"Compare"</button>
            {move || score.get().map(|r| match r {
                Ok(s) => view! {
                    <span data-testid="sim-score" data-value=s.to_string()>{said(s)}</span>
                }.into_any(),
                Err(e) => view! { <span class="banner warn small" data-testid="predict-error">{e}</span> }.into_any(),
            })}
        </div>
        <h4>"Search a list of texts"</h4>
        <p class="hint">"One text per line. A bi-encoder encodes the list once and then answers each query with one pass; a cross-encoder reads the query "
            "with every text. The time of each search is measured and goes into the comparison above."</p>
        <textarea rows="5" data-testid="search-texts" aria-label="texts to search, one per line" prop:value=move || texts.get()
            on:input=move |ev| texts.set(event_target_value(&ev))></textarea>
        <div class="row">
            <input type="text" data-testid="search-query" aria-label="query" prop:value=move || query.get() on:input=move |ev| query.set(event_target_value(&ev)) />
            <button data-testid="search-button" on:click=search prop:disabled=move || busy.get()>"Search"</button>
            <label class="filebutton secondary">"texts from a file (.txt)"
                <input type="file" accept=".txt,.csv,.tsv" data-testid="search-file" on:change=load_texts />
            </label>
        </div>
        {move || found.get().map(|r| match r {
            Ok((res, list)) => view! {
                <div data-testid="search-results" data-searches=searches.get_untracked()>
                    <p class="small muted" data-testid="search-cost">{format!(
                        "{} texts · this query: {} encoder pass{}, {}{}",
                        res.texts, res.passes, if res.passes == 1 { "" } else { "es" }, took(res.seconds),
                        res.index_seconds.map(|s| format!(" · the texts were encoded first, once: {}", took(s))).unwrap_or_default()
                    )}</p>
                    <ol class="ranked">
                        {res.ranked.iter().map(|&(i, s)| view! {
                            <li data-testid="search-hit" data-score=s.to_string()><span class="mono">{format!("{s:.3}")}</span>" "{list.get(i).cloned().unwrap_or_default()}</li>
                        }).collect_view()}
                    </ol>
                </div>
            }.into_any(),
            Err(e) => view! { <p class="banner warn small" data-testid="search-error">{e}</p> }.into_any(),
        })}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sentence follows the table's numbers: nothing before both kinds are trained, the
    /// better one named with its lead, a tie called one.
    #[test]
    fn the_verdict_follows_the_two_spearman_correlations() {
        assert_eq!(which_reads_better(Some(0.8), None), None);
        assert_eq!(which_reads_better(None, Some(0.8)), None);
        let cross = which_reads_better(Some(0.86), Some(0.81)).unwrap();
        assert!(cross.starts_with("On these pairs the cross-encoder reads better: Spearman 0.860 against the bi-encoder's 0.810, 0.050 higher"), "{cross}");
        let bi = which_reads_better(Some(0.469), Some(0.927)).unwrap();
        assert!(bi.starts_with("On these pairs the bi-encoder reads better: Spearman 0.927 against the cross-encoder's 0.469, 0.458 higher"), "{bi}");
        assert!(which_reads_better(Some(0.802), Some(0.8)).unwrap().contains("about as well"));
    }
}
