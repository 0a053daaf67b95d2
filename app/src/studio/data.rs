//! Studio step 1 of the classification mode: a labeled file in, columns mapped, checked before
//! training; the mode's state, and its run's start.

use std::sync::Arc;

use bertbench_core::bert::family::Family;
use bertbench_core::data::{ColumnMap, Dataset, Table, ValidationReport, guess_columns, parse_table, to_examples, validate};
use bertbench_core::tasks::distillation::Distillation;
use bertbench_core::tasks::classification::Level;
use bertbench_core::train::{TrainMode, memory};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::app::AppState;
use crate::runs::{RunData, RunSummary, TextRequest};
use super::data_card::{DataCard, Example};
use super::task_state::TaskState;
use super::task::{Features, TaskPanel};
use super::{EXAMPLE_CSV, Studio, Task, recipe};
use crate::files::on_files;
use crate::widgets::{confusion_matrix, scores_table};

const PREVIEW_ROWS: usize = 8;

/// The files the classification mode's pickers offer.
const TABLE_FILES: &str = ".csv,.tsv,.tab,.txt,.jsonl,.ndjson,.json,.gz,.parquet";

/// An uploaded file, parsed.
#[derive(Debug, Clone)]
pub struct Upload {
    /// The file's name.
    pub name: String,
    /// Its rows.
    pub table: Arc<Table>,
}

/// The data after column mapping and validation.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Usable examples and labels (skips recorded).
    pub dataset: Arc<Dataset>,
    /// The validation report.
    pub report: ValidationReport,
    /// Examples of the separate validation file, if one is used.
    pub valid_file: Option<Arc<Dataset>>,
}

/// The classification mode's own state.
#[derive(Debug, Clone, Copy)]
pub struct ClassifyState {
    /// The training file.
    pub upload: RwSignal<Option<Upload>>,
    /// A separate validation file (same columns).
    pub valid_upload: RwSignal<Option<Upload>>,
    /// Column mapping.
    pub columns: RwSignal<ColumnMap>,
    /// Mapping + validation result.
    pub prepared: RwSignal<Option<Prepared>>,
}

impl TaskState for ClassifyState {
    /// No file yet; the columns a two-column file has.
    fn new() -> Self {
        Self {
            upload: RwSignal::new(None),
            valid_upload: RwSignal::new(None),
            columns: RwSignal::new(ColumnMap { text: 0, text_pair: None, label: Some(1) }),
            prepared: RwSignal::new(None),
        }
    }
}

/// The mode's own state in `studio`.
fn own(studio: Studio) -> ClassifyState {
    studio.own()
}

/// The classification task (a label per text or pair of texts).
pub(super) struct Classification;

impl TaskPanel for Classification {
    fn export_note(&self) -> &'static str {
        "In Python, AutoModelForSequenceClassification.from_pretrained(folder) loads it and gives these probabilities: a classifier on [CLS] + pooler as it is (the family's own *ForSequenceClassification), any other choice with trust_remote_code=True (the folder carries modeling_bertbench.py, the few lines that compute its features; without trust_remote_code transformers refuses it rather than compute something else)."
    }

    fn run_label(&self, config: &bertbench_core::train::FineTuneConfig) -> String {
        recipe(config)
    }

    fn recipe_note(&self, _level: Level, pairs: bool) -> &'static str {
        if pairs {
            "full fine-tuning, batch 16, lr 5e-5, 2 epochs, chosen on MRPC's dev split for pairs of texts read together (MiniLM, one seed: 77.2 % against 70.6 % for the head alone; over three seeds full fine-tuning averages 76.0 %, each seed 2 to 3 points apart; docs/performance.md). A sentence encoder's frozen features place each text, not how two texts relate"
        } else {
            "head only on the frozen encoder's features, 20 epochs, in seconds (on SST-2's dev split, MiniLM: 79.6 %, where full fine-tuning gives 81.3 % in minutes)"
        }
    }

    fn model_noun(&self, _level: Level) -> &'static str {
        "a classifier"
    }

    fn opened(&self, model: &str, meta: &bertbench_core::tasks::classification::ClassifierMeta) -> String {
        format!("{model} carries a classifier ({} labels): it predicts here now. Export it, or train on your data for a new head on its encoder.", meta.labels.len())
    }

    fn choice(&self) -> (&'static str, &'static str) {
        (" a label per text (sentiment, topic, sentence pairs)", "task-classify")
    }

    fn data_panel(&self) -> AnyView {
        view! { <StudioDataPanel /> }.into_any()
    }

    fn has_data(&self, studio: Studio) -> bool {
        own(studio).prepared.with(|p| p.as_ref().is_some_and(|p| p.report.errors.is_empty()))
    }

    fn epoch_examples(&self, studio: Studio) -> usize {
        let Some(p) = own(studio).prepared.get_untracked() else { return 0 };
        match &p.valid_file {
            Some(_) => p.dataset.examples.len(),
            None => ((1.0 - studio.valid_fraction.get_untracked()) * p.dataset.examples.len() as f32).round() as usize,
        }
    }

    fn start(&self, studio: Studio, state: AppState) -> Result<(), String> {
        studio.start_classifier(state, None)
    }

    fn open_file(&self, studio: Studio, state: AppState, name: String, bytes: Vec<u8>) {
        studio.set_file(state, name, bytes, false);
    }

    fn results(&self, summary: Arc<RunSummary>, _: Studio) -> AnyView {
        classification_results(summary)
    }

    fn predict(&self) -> AnyView {
        view! { <super::predict::ClassifyPredict /> }.into_any()
    }

    fn export_name(&self, _: Level) -> &'static str {
        "bertbench-classifier"
    }

    fn reads_pairs(&self, studio: Studio) -> bool {
        own(studio).columns.with(|c| c.text_pair.is_some())
    }

    fn features(&self, _: Studio, _: Option<Family>) -> Features {
        Features::Pooled { pooler: true, layers: true, pooler_fixes_layers: true }
    }
}

impl Studio {
    /// Parses an uploaded training (or validation) file and re-validates.
    pub fn set_file(self, state: AppState, name: String, bytes: Vec<u8>, validation: bool) {
        match parse_table(&bytes, Some(&name)) {
            Ok(table) => {
                // A training file none of whose rows can be used with the guessed columns (no
                // label column, nothing readable) is refused like an unreadable one, keeping the
                // previous data: there would be nothing to fix by choosing columns.
                if !validation {
                    if let Err(e) = to_examples(&table, &guess_columns(&table)) {
                        self.data_error.set(Some(format!("{name}: {e} The data you had is kept.")));
                        return;
                    }
                }
                if !validation {
                    self.save_dataset(Task::Classify, name.clone(), bytes.clone(), table.rows.len());
                }
                let upload = Upload { name, table: Arc::new(table) };
                self.data_error.set(None);
                if validation {
                    own(self).valid_upload.set(Some(upload));
                } else {
                    own(self).columns.set(guess_columns(&upload.table));
                    own(self).upload.set(Some(upload));
                    own(self).valid_upload.set(None);
                }
                self.revalidate(state);
            }
            // The previous data stays as it was: a bad file changes nothing.
            Err(e) => self.data_error.set(Some(format!("{name}: {e} The data you had is kept."))),
        }
    }

    /// Maps columns, validates, and counts tokens (in chunks, yielding).
    pub fn revalidate(self, state: AppState) {
        let Some(upload) = own(self).upload.get_untracked() else { return };
        let map = own(self).columns.get_untracked();
        let max_len = self.max_len.get_untracked();
        let dataset = match to_examples(&upload.table, &map) {
            Ok(d) => Arc::new(d),
            Err(e) => {
                own(self).prepared.set(None);
                self.data_error.set(Some(e.to_string()));
                return;
            }
        };
        let valid_file = match own(self).valid_upload.get_untracked() {
            None => None,
            Some(v) => match to_examples(&v.table, &map) {
                Ok(d) => Some(Arc::new(d)),
                Err(e) => {
                    self.data_error.set(Some(format!("{} (validation file): {e}", v.name)));
                    None
                }
            },
        };
        self.data_error.set(None);
        spawn_local(async move {
            let Some(engine) = state.engine() else {
                self.data_error.set(Some("The model is still loading; its tokenizer is needed to count tokens.".into()));
                return;
            };
            let tok = &engine.bert.tokenizer;
            let lengths = super::data_card::token_counts(&dataset.examples, |ex| tok.encode_text(&ex.text, ex.text_pair.as_deref())).await;
            let report = validate(&dataset, &lengths, max_len, 2);
            own(self).prepared.set(Some(Prepared { dataset, report, valid_file }));
        });
    }

    /// Starts a sentence classifier's run on the prepared data: the studio's, or a student's of
    /// `student.0` layers (learning from the current classifier's probabilities too where
    /// `student.1` says how).
    pub(crate) fn start_classifier(self, state: AppState, student: Option<(usize, Option<Distillation>)>) -> Result<(), String> {
        let prepared = own(self).prepared.get_untracked().ok_or("load a dataset first")?;
        if let Some(first) = prepared.report.errors.first() {
            return Err(format!("The data has a problem to fix first: {first}"));
        }
        let engine = state.engine().ok_or("the model is still loading")?;
        let trains_encoder = self.config.get_untracked().mode != TrainMode::HeadOnly;
        memory::check_memory(engine.bert.report.num_params as u64, trains_encoder, memory::WASM_MEMORY).map_err(|e| format!("{}: {e}", engine.model_id))?;
        let dataset = &prepared.dataset;
        let (train, valid) = match &prepared.valid_file {
            Some(v) => {
                if let Some(bad) = v.examples.iter().find(|e| dataset.label_index(&e.label).is_none()) {
                    return Err(format!(
                        "the validation file has label {:?} (line {}), which the training file does not",
                        bad.label, bad.line
                    ));
                }
                (dataset.examples.clone(), v.examples.clone())
            }
            None => {
                let split = dataset
                    .split(self.valid_fraction.get_untracked(), self.split_seed.get_untracked())
                    .map_err(|e| e.to_string())?;
                let pick = |idx: &[usize]| idx.iter().map(|&i| dataset.examples[i].clone()).collect::<Vec<_>>();
                (pick(&split.train), pick(&split.valid))
            }
        };
        let config = self.config.get_untracked().with_distil(student.as_ref().and_then(|s| s.1.clone()));
        let (max_len, mut label) = (self.max_len.get_untracked(), recipe(&config));
        if let Some((n, _)) = &student {
            label = format!("student: {n} of {} layers · {label}", engine.bert.config.num_hidden_layers);
        }
        let keep_layers = student.map(|s| s.0);
        self.launch(&engine, label, config, dataset.labels.clone(), max_len, |r| {
            r.data = RunData::Texts(TextRequest { train, valid });
            r.keep_layers = keep_layers;
        })
    }
}

/// The data card (picker, drop zone, example), column mapping, preview and validation report.
#[component]
pub fn StudioDataPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();

    // A separate validation file (the training file comes through the data card).
    let on_valid = on_files(move |mut files| {
        if let Some((name, bytes)) = files.pop() {
            let bytes = studio.class_names.named(Task::Classify, &name, bytes);
            studio.set_file(state, name, bytes, true);
        }
    });

    // Re-check whenever the model (tokenizer) arrives or changes.
    Effect::new(move |_| {
        state.generation.get();
        if own(studio).upload.get_untracked().is_some() {
            studio.revalidate(state);
        }
    });

    let column_select = move |which: &'static str| {
        let options = move || {
            own(studio).upload.get().map(|u| {
                u.table.columns.iter().enumerate().map(|(i, c)| view! { <option value=i.to_string()>{c.clone()}</option> }).collect_view()
            })
        };
        let current = move || {
            let m = own(studio).columns.get();
            match which {
                "text" => m.text.to_string(),
                "pair" => m.text_pair.map(|i| i.to_string()).unwrap_or_default(),
                _ => m.label.map(|i| i.to_string()).unwrap_or_default(),
            }
        };
        let on_change = move |ev| {
            let v = event_target_value(&ev);
            let idx = v.parse::<usize>().ok();
            own(studio).columns.update(|m| match which {
                "text" => m.text = idx.unwrap_or(0),
                "pair" => m.text_pair = idx,
                _ => m.label = idx,
            });
            studio.revalidate(state);
        };
        view! {
            <select data-testid=format!("column-{which}") on:change=on_change prop:value=current>
                {(which != "text").then(|| view! { <option value="">"(none)"</option> })}
                {options}
            </select>
        }
    };

    let preview = move || {
        own(studio).upload.get().map(|u| {
            let t = u.table.clone();
            view! {
                <div class="scroll-x">
                    <table class="plain preview" data-testid="data-preview">
                        <tr><th>"line"</th>{t.columns.iter().map(|c| view! { <th>{c.clone()}</th> }).collect_view()}</tr>
                        {t.rows.iter().take(PREVIEW_ROWS).map(|r| view! {
                            <tr>
                                <td class="muted">{r.line}</td>
                                {r.fields.iter().map(|f| view! { <td>{clip(f, 90)}</td> }).collect_view()}
                            </tr>
                        }).collect_view()}
                    </table>
                    <p class="small muted">{if t.decoded.as_deref().is_some_and(|d| d.contains("read from Parquet")) {
                        // Parquet names its columns itself: no header row to guess.
                        format!("{} rows in {} (Parquet).", t.rows.len(), u.name)
                    } else {
                        format!("{} rows in {} ({:?}{}).", t.rows.len(), u.name, t.format, if t.has_header { ", with a header row" } else { ", no header row" })
                    }}</p>
                    {t.decoded.clone().map(|d| {
                        // A text encoding was guessed, or gzip undone: worth a look at the letters.
                        // Parquet's text is UTF-8 by its format: nothing to check there.
                        let said = if d.contains("read from Parquet") { format!("The file was {d}.") } else { format!("The file was {d}; check that accented letters look right above.") };
                        view! { <p class="banner warn small" data-testid="data-decoded">{said}</p> }
                    })}
                </div>
            }
        })
    };

    let report = move || {
        own(studio).prepared.get().map(|p| {
            let r = p.report.clone();
            let total: usize = r.class_counts.iter().map(|(_, n)| n).sum::<usize>().max(1);
            let skipped = p.dataset.skipped.clone();
            let max_len = studio.max_len.get_untracked();
            view! {
                <div data-testid="validation-report">
                    <div class="facts">
                        <div><b data-testid="usable-rows">{r.usable}</b>"usable examples"</div>
                        <div><b>{r.total_rows - r.usable}</b>"skipped rows"</div>
                        <div><b>{r.class_counts.len()}</b>"labels"</div>
                        <div><b>{r.duplicates.len()}</b>"duplicates"</div>
                        <div><b>{format!("{} / {:.0} / {}", r.token_lengths.max, r.token_lengths.mean, r.token_lengths.p95)}</b>"tokens max / mean / p95"</div>
                        <div><b data-testid="over-max-len">{r.over_max_len}</b>{format!("longer than {max_len} (truncated)")}</div>
                    </div>
                    <div class="bars" data-testid="class-balance">
                        {r.class_counts.iter().map(|(label, n)| {
                            let pct = *n as f64 * 100.0 / total as f64;
                            view! {
                                <div class="bar-row">
                                    <span class="bar-label">{label.clone()}</span>
                                    <span class="bar"><span style:width=format!("{pct:.1}%")></span></span>
                                    <span class="bar-value">{format!("{n} ({pct:.0}%)")}</span>
                                </div>
                            }
                        }).collect_view()}
                    </div>
                    {r.errors.iter().map(|e| view! { <p class="banner err small" data-testid="data-problem">{e.clone()}</p> }).collect_view()}
                    {r.warnings.iter().map(|w| view! { <p class="banner warn small" data-testid="data-warning">{w.clone()}</p> }).collect_view()}
                    {(!skipped.is_empty()).then(|| view! {
                        <details data-testid="skipped-rows">
                            <summary>{format!("Show the {} skipped row(s)", skipped.len())}</summary>
                            <table class="plain">
                                <tr><th>"line"</th><th>"why"</th><th>"row"</th></tr>
                                {skipped.iter().take(500).map(|s| view! {
                                    <tr><td>{s.line}</td><td>{s.reason.to_string()}</td><td class="mono small">{clip(&s.preview, 80)}</td></tr>
                                }).collect_view()}
                            </table>
                        </details>
                    })}
                </div>
            }
        })
    };

    view! {
        <DataCard task=Task::Classify testid="studio-data" title="1 · Labeled data"
            hint=concat!("A CSV, TSV or JSONL file with a text column and a label column (and optionally a second text column for sentence pairs), ",
                "as a spreadsheet or an editor saves it (UTF-8, UTF-16 or Windows-1252; gzipped too), or a Parquet file from the Hub (its class names kept). ",
                "It is read in this tab and never uploaded anywhere.")
            accept=TABLE_FILES file_testid="data-file"
            example=Example { testid: "use-example", label: "use the example dataset" }
            on_file=move |(name, bytes)| studio.set_file(state, name, bytes, false)
            on_example=move |()| studio.set_file(state, "sentiment.csv (built-in example)".into(), EXAMPLE_CSV.to_vec(), false)>
            {move || own(studio).upload.get().is_some().then(|| view! {
                <div>
                    <div class="row mapping">
                        <label class="small">"Text " {column_select("text")}</label>
                        <label class="small">"Second text (pairs) " {column_select("pair")}</label>
                        <label class="small">"Label " {column_select("label")}</label>
                    </div>
                    {preview}
                    {report}
                    <div class="row">
                        <label class="small">"Validation: "
                            <select data-testid="valid-fraction"
                                prop:disabled=move || own(studio).valid_upload.get().is_some()
                                on:change=move |ev| studio.valid_fraction.set(event_target_value(&ev).parse().unwrap_or(0.2))>
                                {[0.1f32, 0.2, 0.3].map(|f| view! { <option value=f.to_string() selected=move || studio.valid_fraction.get() == f>{format!("{:.0}% held out (stratified)", f * 100.0)}</option> }).collect_view()}
                            </select>
                        </label>
                        <label class="small">"split seed "
                            <input type="number" class="num" prop:value=move || studio.split_seed.get().to_string()
                                on:change=move |ev| studio.split_seed.set(event_target_value(&ev).parse().unwrap_or(13)) />
                        </label>
                        <label class="filebutton secondary small">"or a separate validation file"
                            <input type="file" accept=TABLE_FILES data-testid="valid-file"
                                on:change=on_valid />
                        </label>
                        {move || own(studio).valid_upload.get().map(|v| view! {
                            <span class="small">{format!("validating on {} ({} rows) ", v.name, v.table.rows.len())}
                                <button class="secondary small" on:click=move |_| { own(studio).valid_upload.set(None); studio.revalidate(state); }>"use a split instead"</button>
                            </span>
                        })}
                    </div>
                </div>
            })}
        </DataCard>
    }
}

/// At most `n` characters, with an ellipsis.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n).collect::<String>()) }
}

/// A sentence classifier's results: accuracy, macro-F1, per-class scores, the confusion and the
/// examples it got wrong.
fn classification_results(s: Arc<RunSummary>) -> AnyView {
    let m = s.metrics.clone();
    let labels = s.meta.labels.clone();
    let mistakes = s.mistakes.labels().to_vec();
    view! {
        <div>
            <div class="facts">
                <div><b data-testid="valid-accuracy">{format!("{:.1}%", m.accuracy * 100.0)}</b>"validation accuracy"</div>
                <div><b data-testid="macro-f1">{format!("{:.3}", m.macro_f1)}</b>"macro-F1"</div>
                <div><b>{m.count}</b>"validation examples"</div>
                <div><b>{s.meta.spec.label()}</b>"features"</div>
            </div>
            <div class="grid2">
                {scores_table(["label", "support"], &m.per_class, "per-class")}
                <div>
                    {confusion_matrix(&labels, &m.confusion, "confusion")}
                </div>
            </div>
            <details data-testid="mistakes">
                <summary>{format!("Misclassified validation examples ({}), most confident first", mistakes.len())}</summary>
                <table class="plain">
                    <tr><th>"line"</th><th>"text"</th><th>"true"</th><th>"predicted"</th><th>"probabilities"</th></tr>
                    {mistakes.iter().take(200).map(|x| view! {
                        <tr>
                            <td>{x.line}</td><td>{clip(&x.text, 140)}</td><td>{x.label.clone()}</td><td>{x.predicted.clone()}</td>
                            <td class="mono small">{labels.iter().zip(&x.probs).map(|(l, p)| format!("{l} {p:.2}")).collect::<Vec<_>>().join(" · ")}</td>
                        </tr>
                    }).collect_view()}
                </table>
            </details>
        </div>
    }
    .into_any()
}

impl Studio {
    /// Whether the layer views read the user's labeled texts, not the built-in examples (tracked).
    pub fn has_own_labeled_data(self) -> bool {
        own(self).prepared.with(Option::is_some)
    }

    /// Labeled texts for the layer views: the studio's dataset when one is loaded, otherwise
    /// the sentiment examples that ship with the page. Returns the dataset and where it came from.
    pub async fn labeled_data(self) -> Result<(Arc<Dataset>, String), String> {
        if let Some(p) = own(self).prepared.get_untracked() {
            let name = own(self).upload.get_untracked().map(|u| u.name).unwrap_or_else(|| "your data".into());
            return Ok((p.dataset.clone(), name));
        }
        Ok((super::builtin_sentiment()?, "the built-in sentiment examples".into()))
    }
}
