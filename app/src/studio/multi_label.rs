//! The studio's multi-label mode (`*ForSequenceClassification` with `problem_type:
//! "multi_label_classification"`): texts with any number of labels in (one 0/1 column per
//! label, or a column of lists: JSON Lines arrays, or labels parted by a separator the user
//! names), read by core's reader with the columns it guesses and the user changes; a report (texts,
//! labels and how many texts have each, texts with none, rows skipped and why); a run through the
//! studio's one training job (binary cross-entropy per label); its results (micro and macro F1
//! at the threshold chosen on the validation set, each label's precision, recall and F1, the
//! texts not labelled exactly); and the classifier's predict box, which shows each label's
//! sigmoid.

use std::sync::Arc;

use bertbench_core::bert::family::Family;
use bertbench_core::data::{LabelColumns, LabelSet, LabelSetData, LabelSetMap, SEPARATORS, Separator, Table, guess_columns, guess_label_sets, held_out, parse_table, separators_in, to_label_sets};
use bertbench_core::tasks::classification::{ClassifierMeta, FeatureSpec, Level};
use bertbench_core::train::{FineTuneConfig, TrainMode, memory};
use leptos::prelude::*;

use super::data::clip;
use super::data_card::{DataCard, Example};
use super::held_out::{HeldOutChoice, HeldOutRead};
use super::task::{Features, TaskPanel};
use super::task_state::TaskState;
use super::{Studio, Task, recipe};
use crate::app::AppState;
use crate::runs::{LabelSetRequest, RunData, RunSummary};
use crate::widgets::scores_table;

/// The example for multi-label classification, written for this project: everyday texts about
/// none, one or two of five topics, a 0/1 column per topic.
pub const EXAMPLE_TOPICS: &[u8] = include_bytes!("../../../public/examples/topics.csv");

/// The files the mode's pickers offer.
const LABEL_FILES: &str = ".csv,.tsv,.jsonl,.json,.ndjson,.txt,.gz,.parquet";

/// A file of texts with their labels: its table, and where the labels are.
#[derive(Debug, Clone)]
pub struct LabelsUpload {
    /// The file's name.
    pub name: String,
    /// Its rows.
    pub table: Arc<Table>,
}

/// The mode's own state.
#[derive(Debug, Clone, Copy)]
pub struct LabelsState {
    /// The file.
    pub upload: RwSignal<Option<LabelsUpload>>,
    /// Where its texts and labels are: guessed, then as the user says.
    pub map: RwSignal<Option<LabelSetMap>>,
    /// The file read with `map`, or why it cannot be.
    pub data: RwSignal<Option<Result<Arc<LabelSetData>, String>>>,
}

impl TaskState for LabelsState {
    /// No file yet.
    fn new() -> Self {
        Self { upload: RwSignal::new(None), map: RwSignal::new(None), data: RwSignal::new(None) }
    }
}

fn own(studio: Studio) -> LabelsState {
    studio.own()
}

/// The map to start from when a file has none guessed: its guessed text column and, as 0/1
/// columns, none yet (the user ticks them).
fn starting_map(table: &Table) -> LabelSetMap {
    guess_label_sets(table).unwrap_or_else(|| {
        let texts = guess_columns(table);
        LabelSetMap { text: texts.text, text_pair: texts.text_pair, labels: LabelColumns::Flags(Vec::new()) }
    })
}

/// Indices of the training and validation texts when `fraction` of `n` is held out (at least
/// one each), shuffled by `seed`: the command line's split (`cli/src/finetune/multi_label.rs`).
pub fn split_texts(n: usize, fraction: f32, seed: u64) -> Result<(Vec<usize>, Vec<usize>), String> {
    held_out(n, fraction, seed).ok_or_else(|| format!("{n} text(s): holding some out for validation needs at least two; add texts or give a validation file"))
}

/// A validation file's texts read with the training file's columns (by name) and their label
/// ids in the training file's labels; labels the training file lacks are refused by name.
fn validation_texts(train: &LabelSetData, train_table: &Table, map: &LabelSetMap, name: &str, bytes: &[u8]) -> Result<Vec<LabelSet>, String> {
    let table = parse_table(bytes, Some(name)).map_err(|e| e.to_string())?;
    let column = |j: usize| {
        let wanted = train_table.columns.get(j).map(|c| c.trim()).unwrap_or_default();
        table.columns.iter().position(|c| c.trim() == wanted).ok_or_else(|| format!("it has no column “{wanted}”, which the training file's labels or texts are in"))
    };
    let labels = match &map.labels {
        LabelColumns::Flags(columns) => LabelColumns::Flags(columns.iter().map(|&j| column(j)).collect::<Result<_, _>>()?),
        LabelColumns::List { column: j, separator } => LabelColumns::List { column: column(*j)?, separator: *separator },
    };
    let valid_map = LabelSetMap { text: column(map.text)?, text_pair: map.text_pair.map(column).transpose()?, labels };
    to_label_sets(&table, &valid_map).and_then(|v| v.in_labels(&train.labels)).map_err(|e| e.to_string())
}

/// The multi-label task (any number of labels per text).
pub(in crate::studio) struct MultiLabelling;

impl TaskPanel for MultiLabelling {
    fn export_note(&self) -> &'static str {
        "In Python, AutoModelForSequenceClassification.from_pretrained(folder) loads it as a multi-label classifier (config.json says problem_type multi_label_classification; on features other than [CLS] + pooler with trust_remote_code=True), and pipeline(\"text-classification\", model=folder, top_k=None) gives each label's sigmoid, as here. Choose a label where its probability reaches the threshold the run chose: config.json keeps it as multi_label_threshold (model.config.multi_label_threshold in Python), and this page reads it back on import."
    }

    fn run_label(&self, config: &FineTuneConfig) -> String {
        format!("multi-label · {}", recipe(config))
    }

    fn recipe_note(&self, _level: Level, pairs: bool) -> &'static str {
        if pairs {
            "full fine-tuning, batch 16, lr 5e-5, 2 epochs: the single-label classifier's recipe for pairs of texts read together (no multi-label benchmark of pairs was at hand to choose another)"
        } else {
            "head only on the frozen encoder's features, 20 epochs, in seconds: the single-label classifier's recipe (no multi-label benchmark was at hand to choose another)"
        }
    }

    fn model_noun(&self, _level: Level) -> &'static str {
        "a multi-label classifier"
    }

    fn opened(&self, model: &str, meta: &ClassifierMeta) -> String {
        format!("{model} carries a multi-label classifier ({} labels, each a yes or no of its own): it predicts here now. Export it, or train on your data for a new head on its encoder.", meta.labels.len())
    }

    fn loss_name(&self) -> &'static str {
        "binary cross-entropy"
    }

    fn read_held_out(&self, studio: Studio, name: &str, bytes: &[u8]) -> Result<HeldOutRead, String> {
        let state = own(studio);
        let (Some(Ok(train)), Some(upload), Some(map)) = (state.data.get_untracked(), state.upload.get_untracked(), state.map.get_untracked()) else {
            return Err("load the training file first: a validation file is read with its columns and labels".into());
        };
        let texts = validation_texts(&train, &upload.table, &map, name, bytes)?;
        let count = format!("{} texts", texts.len());
        Ok(HeldOutRead::new(texts, count))
    }

    fn choice(&self) -> (&'static str, &'static str) {
        (" any number of labels per text (multi-label: topics, emotions, toxicity)", "task-multilabel")
    }

    fn data_panel(&self) -> AnyView {
        view! { <StudioLabelsDataPanel /> }.into_any()
    }

    fn has_data(&self, studio: Studio) -> bool {
        own(studio).data.with(|d| matches!(d, Some(Ok(_))))
    }

    fn epoch_examples(&self, studio: Studio) -> usize {
        let Some(Ok(data)) = own(studio).data.get_untracked() else { return 0 };
        let n = data.examples.len();
        if studio.held_out_file().is_some() { n } else { split_texts(n, studio.valid_fraction.get_untracked(), 0).map_or(n, |(t, _)| t.len()) }
    }

    fn start(&self, studio: Studio, state: AppState) -> Result<(), String> {
        studio.start_multi_label(state)
    }

    fn open_file(&self, studio: Studio, _: AppState, name: String, bytes: Vec<u8>) {
        studio.set_labels_file(name, bytes);
    }

    fn results(&self, summary: Arc<RunSummary>, _: Studio) -> AnyView {
        multi_label_results(summary).into_any()
    }

    fn predict(&self) -> AnyView {
        view! { <super::predict::ClassifyPredict /> }.into_any()
    }

    fn export_name(&self, _: Level) -> &'static str {
        "bertbench-multi-label"
    }

    fn reads_pairs(&self, studio: Studio) -> bool {
        own(studio).map.with(|m| m.as_ref().is_some_and(|m| m.text_pair.is_some()))
    }

    fn features(&self, _: Studio, _: Option<Family>) -> Features {
        Features::Pooled { pooler: true, layers: true, pooler_fixes_layers: true }
    }
}

impl Studio {
    /// Reads a file of texts with their labels, guessing where the labels are; a file that is
    /// no table leaves the data as it was and says why.
    pub fn set_labels_file(self, name: String, bytes: Vec<u8>) {
        match parse_table(&bytes, Some(&name)) {
            Ok(table) => {
                self.data_error.set(None);
                self.save_dataset(Task::MultiLabel, name.clone(), bytes.clone(), table.rows.len());
                let map = starting_map(&table);
                own(self).upload.set(Some(LabelsUpload { name, table: Arc::new(table) }));
                self.set_label_map(map);
            }
            Err(e) => self.data_error.set(Some(format!("{name}: {e} The data you had is kept."))),
        }
    }

    /// Reads the file again with `map`.
    pub fn set_label_map(self, map: LabelSetMap) {
        let state = own(self);
        let Some(upload) = state.upload.get_untracked() else { return };
        let read = match &map.labels {
            LabelColumns::Flags(c) if c.is_empty() => Err("Tick the columns that hold a label each (0 or 1), or choose a column of lists.".to_string()),
            _ => to_label_sets(&upload.table, &map).map_err(|e| e.to_string()).and_then(|d| match d.too_few_labels() {
                Some(why) => Err(why.to_string()),
                None => Ok(Arc::new(d)),
            }),
        };
        state.map.set(Some(map));
        state.data.set(Some(read));
    }

    /// Starts a multi-label run on the loaded texts: the features step 2 chose, validated on the
    /// separate file if one is loaded, else on a held-out share.
    fn start_multi_label(self, state: AppState) -> Result<(), String> {
        let data = match own(self).data.get_untracked() {
            Some(Ok(data)) => data,
            Some(Err(why)) => return Err(why),
            None => return Err("load a file of texts with their labels first".into()),
        };
        let engine = state.engine().ok_or("the model is still loading")?;
        let mut config = self.config.get_untracked();
        config.features = FeatureSpec { level: Level::MultiLabel, ..config.features };
        memory::check_memory(engine.bert.report.num_params as u64, config.mode != TrainMode::HeadOnly, memory::WASM_MEMORY)
            .map_err(|e| format!("{}: {e}", engine.model_id))?;
        let request = match self.held_out_file().and_then(|h| h.data::<Vec<LabelSet>>()) {
            Some(valid) => LabelSetRequest { train: data.examples.clone(), valid: valid.to_vec() },
            None => {
                let (train, valid) = split_texts(data.examples.len(), self.valid_fraction.get_untracked(), self.split_seed.get_untracked())?;
                let pick = |idx: &[usize]| idx.iter().map(|&i| data.examples[i].clone()).collect::<Vec<_>>();
                LabelSetRequest { train: pick(&train), valid: pick(&valid) }
            }
        };
        let label = MultiLabelling.run_label(&config);
        self.launch(&engine, label, config, data.labels.clone(), self.max_len.get_untracked(), |r| r.data = RunData::LabelSets(request))
    }
}

/// The separator choice's value for `s` ("json", or the character).
fn separator_value(s: Separator) -> String {
    match s {
        Separator::Json => "json".into(),
        Separator::Char(c) => c.to_string(),
    }
}

/// What the separator choice calls `c`.
fn separator_name(c: char) -> String {
    match c {
        ';' => "; (semicolon)".into(),
        '|' => "| (bar)".into(),
        ',' => ", (comma)".into(),
        ' ' => "a space".into(),
        c => format!("{c}"),
    }
}

/// Where the labels are: the text column, 0/1 columns ticked, or a column of lists and how its
/// labels are parted.
#[component]
fn LabelColumnsChoice() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let state = own(studio);
    let columns = move || state.upload.with(|u| u.as_ref().map(|u| u.table.columns.clone()).unwrap_or_default());
    let map = move || state.map.get();
    let set = move |f: &dyn Fn(&mut LabelSetMap)| {
        if let Some(mut m) = state.map.get_untracked() {
            f(&mut m);
            studio.set_label_map(m);
        }
    };
    let is_list = move || map().is_some_and(|m| matches!(m.labels, LabelColumns::List { .. }));
    view! {
        <div class="row small" data-testid="multilabel-columns">
            <label>"Text: "
                <select data-testid="multilabel-text-column" on:change=move |ev| {
                    let j: usize = event_target_value(&ev).parse().unwrap_or(0);
                    set(&|m| m.text = j);
                }>
                    {move || columns().into_iter().enumerate().map(|(j, c)| view! { <option value=j.to_string() selected={map().is_some_and(|m| m.text == j)}>{c}</option> }).collect_view()}
                </select>
            </label>
            <label>"Labels: "
                <select data-testid="multilabel-source" on:change=move |ev| {
                    let list = event_target_value(&ev) == "list";
                    let table = state.upload.get_untracked().map(|u| u.table);
                    set(&|m| {
                        let free = (0..table.as_ref().map_or(0, |t| t.columns.len())).find(|&j| j != m.text && Some(j) != m.text_pair).unwrap_or(0);
                        m.labels = if list {
                            let separator = table.as_ref().and_then(|t| separators_in(t, free).first().copied()).map_or(Separator::Json, Separator::Char);
                            LabelColumns::List { column: free, separator }
                        } else {
                            LabelColumns::Flags(Vec::new())
                        };
                    });
                }>
                    <option value="flags" selected=move || !is_list()>"a 0/1 column per label"</option>
                    <option value="list" selected=is_list>"one column of lists"</option>
                </select>
            </label>
        </div>
        {move || match map().map(|m| m.labels) {
            Some(LabelColumns::Flags(ticked)) => {
                let text = map().map_or(0, |m| m.text);
                view! {
                    <fieldset class="small" data-testid="multilabel-flags">
                        <legend>"The columns that hold a label each (0 or 1; the column's name is the label's):"</legend>
                        {columns().into_iter().enumerate().filter(|(j, _)| *j != text).map(|(j, c)| {
                            let on = ticked.contains(&j);
                            view! {
                                <label class="check"><input type="checkbox" data-testid="multilabel-column" data-column=c.clone() prop:checked=on
                                    on:change=move |_| set(&|m| if let LabelColumns::Flags(cols) = &mut m.labels {
                                        if let Some(at) = cols.iter().position(|&k| k == j) { cols.remove(at); } else { cols.push(j); cols.sort_unstable(); }
                                    }) />{c}</label>
                            }
                        }).collect_view()}
                    </fieldset>
                }.into_any()
            }
            Some(LabelColumns::List { column, separator }) => {
                let table = state.upload.get_untracked().map(|u| u.table);
                let found: Vec<char> = table.as_ref().map(|t| separators_in(t, column)).unwrap_or_default();
                view! {
                    <div class="row small">
                        <label>"Column of lists: "
                            <select data-testid="multilabel-list-column" on:change=move |ev| {
                                let j: usize = event_target_value(&ev).parse().unwrap_or(0);
                                set(&|m| if let LabelColumns::List { column, .. } = &mut m.labels { *column = j });
                            }>
                                {columns().into_iter().enumerate().map(|(j, c)| view! { <option value=j.to_string() selected={j == column}>{c}</option> }).collect_view()}
                            </select>
                        </label>
                        <label>"Labels parted by: "
                            <select data-testid="multilabel-separator" on:change=move |ev| {
                                let v = event_target_value(&ev);
                                let s = if v == "json" { Separator::Json } else { v.chars().next().map_or(Separator::Json, Separator::Char) };
                                set(&|m| if let LabelColumns::List { separator, .. } = &mut m.labels { *separator = s });
                            }>
                                <option value="json" selected={separator == Separator::Json}>"a JSON list ([\"a\", \"b\"])"</option>
                                {SEPARATORS.iter().map(|&c| {
                                    let name = if found.contains(&c) { format!("{} (in this column)", separator_name(c)) } else { separator_name(c) };
                                    view! { <option value=c.to_string() selected={separator_value(separator) == c.to_string()}>{name}</option> }
                                }).collect_view()}
                            </select>
                        </label>
                    </div>
                }.into_any()
            }
            None => ().into_any(),
        }}
    }
}

/// Step 1 in multi-label mode: a file of texts with their labels, where the labels are, the
/// report.
#[component]
pub fn StudioLabelsDataPanel() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let state = own(studio);
    let report = move || {
        let name = state.upload.with(|u| u.as_ref().map(|u| u.name.clone()))?;
        Some(match state.data.get()? {
            Err(why) => view! { <p class="banner warn small" data-testid="multilabel-error">{format!("{name}: {why}")}</p> }.into_any(),
            Ok(data) => {
                let counts = data.label_counts();
                let first_skip = data.skipped.first().map(|s| format!("line {}: {}", s.line, s.reason));
                let preview: Vec<LabelSet> = data.examples.iter().take(4).cloned().collect();
                let labels = data.labels.clone();
                view! {
                    <div data-testid="multilabel-report">
                        <div class="facts">
                            <div><b data-testid="multilabel-texts">{data.examples.len()}</b>"texts"</div>
                            <div><b data-testid="multilabel-labels">{data.labels.len()}</b>"labels"</div>
                            <div><b data-testid="multilabel-none">{data.without_labels()}</b>"texts with no label"</div>
                            <div><b data-testid="multilabel-skipped">{data.skipped.len()}</b>"rows skipped"</div>
                        </div>
                        {first_skip.map(|s| view! { <p class="small muted" data-testid="multilabel-skip-reason">{format!("First row skipped: {s}.")}</p> })}
                        <p class="small muted" id="multilabel-counts-title">{format!("{name} · how many texts have each label (each label is a yes or no of its own):")}</p>
                        <table class="plain small" data-testid="multilabel-counts" aria-labelledby="multilabel-counts-title">
                            <tr><th>"label"</th><th>"texts"</th></tr>
                            {data.labels.iter().zip(counts).map(|(l, n)| view! { <tr><td>{l.clone()}</td><td data-testid="multilabel-count">{n}</td></tr> }).collect_view()}
                        </table>
                        <table class="plain small" data-testid="multilabel-preview">
                            <tr><th>"line"</th><th>"text"</th><th>"labels"</th></tr>
                            {preview.into_iter().map(|e| {
                                let names: Vec<&str> = e.labels.iter().map(|&l| labels[l].as_str()).collect();
                                view! { <tr><td>{e.line}</td><td>{clip(&e.text, 120)}</td><td>{if names.is_empty() { "none".to_string() } else { names.join(", ") }}</td></tr> }
                            }).collect_view()}
                        </table>
                    </div>
                }.into_any()
            }
        })
    };
    view! {
        <DataCard task=Task::MultiLabel testid="studio-multilabel-data" title="1 · Texts with their labels"
            hint=concat!("CSV, TSV or JSON Lines: a text column and either a 0/1 column per label (as Kaggle's toxic-comment files) ",
                "or one column holding each text's labels (a JSON list, as datasets writes GoEmotions, or labels parted by ; or |); the Hub's Parquet files too. ",
                "A text may have any number of labels, or none. The model gives each label a probability of its own (a sigmoid) ",
                "and learns each as a yes or no (binary cross-entropy). Read in this tab, never uploaded.")
            accept=LABEL_FILES file_testid="multilabel-file"
            example=Example { testid: "use-multilabel-example", label: "use the example (218 everyday texts, 5 topics)" }
            on_file=move |(name, bytes)| studio.set_labels_file(name, bytes)
            on_example=move |()| studio.set_labels_file("topics.csv (built-in example)".into(), EXAMPLE_TOPICS.to_vec())>
            {move || state.upload.with(Option::is_some).then(|| view! { <LabelColumnsChoice /> })}
            {report}
            <div class="row">
                <HeldOutChoice task=Task::MultiLabel prefix="multilabel" unit="of texts held out" accept=LABEL_FILES />
            </div>
        </DataCard>
    }
}

/// A multi-label classifier's validation results: micro and macro F1 at the chosen threshold,
/// each label's scores, and the texts it did not label exactly.
pub fn multi_label_results(s: Arc<RunSummary>) -> impl IntoView {
    let scores = s.scores.labels().cloned();
    let mistakes = s.mistakes.label_sets().to_vec();
    let said = |list: &[(String, f32)]| list.iter().map(|(l, p)| format!("{l} {p:.2}")).collect::<Vec<_>>().join(" · ");
    view! {
        <div data-testid="multilabel-results">
            {scores.map(|m| view! {
                <div class="facts">
                    <div><b data-testid="multilabel-micro-f1">{format!("{:.3}", m.micro_f1)}</b>"micro-F1 (every text's every label pooled)"</div>
                    <div><b data-testid="multilabel-macro-f1">{format!("{:.3}", m.macro_f1)}</b>"macro-F1 (the labels' mean)"</div>
                    <div><b data-testid="multilabel-threshold">{format!("{:.2}", m.threshold)}</b>"threshold (a label is given at or above it)"</div>
                    <div><b data-testid="multilabel-exact">{format!("{:.1}%", m.exact_match * 100.0)}</b>"texts with every label right"</div>
                    <div><b>{m.texts}</b>"validation texts"</div>
                </div>
                <p class="small muted" data-testid="multilabel-threshold-note">{format!(
                    "The threshold is the one of 0.05, 0.10, …, 0.95 with the best micro-F1 on these validation texts, so the F1 above is a little better than on texts the run has not seen. Micro-F1 {:.3} = precision {:.3}, recall {:.3} of all decisions together.",
                    m.micro_f1, m.micro_precision, m.micro_recall
                )}</p>
                {scores_table(["label", "texts"], &m.per_label, "multilabel-per-label")}
            })}
            <details data-testid="multilabel-mistakes">
                <summary>{format!("Validation texts not labelled exactly ({}), the model's surest mistake first", mistakes.len())}</summary>
                <table class="plain">
                    <tr><th>"line"</th><th>"text"</th><th>"missed (probability)"</th><th>"given wrongly (probability)"</th></tr>
                    {mistakes.iter().take(200).map(|x| view! {
                        <tr data-testid="multilabel-mistake">
                            <td>{x.line}</td><td>{clip(&x.text, 140)}</td><td class="mono small">{said(&x.missed)}</td><td class="mono small">{said(&x.extra)}</td>
                        </tr>
                    }).collect_view()}
                </table>
            </details>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        parse_table(text.as_bytes(), Some("t.csv")).unwrap()
    }

    #[test]
    fn the_split_holds_out_a_share_and_keeps_every_text_once() {
        let (train, valid) = split_texts(218, 0.2, 13).unwrap();
        assert_eq!((train.len(), valid.len()), (174, 44));
        let mut all: Vec<usize> = train.iter().chain(&valid).copied().collect();
        all.sort();
        assert_eq!(all, (0..218).collect::<Vec<_>>());
        assert!(split_texts(1, 0.2, 1).unwrap_err().contains("at least two"));
    }

    /// The example's topics are guessed as 0/1 columns; a file with none starts with the text
    /// guessed and no label ticked.
    #[test]
    fn the_example_is_guessed_and_a_plain_table_starts_with_nothing_ticked() {
        let example = parse_table(EXAMPLE_TOPICS, Some("topics.csv")).unwrap();
        assert_eq!(starting_map(&example).labels, LabelColumns::Flags(vec![1, 2, 3, 4, 5]));
        let plain = table("text,label\nA long enough text here,a;b\nAnother long text here,b\n");
        assert_eq!(starting_map(&plain), LabelSetMap { text: 0, text_pair: None, labels: LabelColumns::Flags(Vec::new()) });
    }

    /// A validation file is read with the training file's columns by name, its label ids in
    /// the training labels' order; a label the training file lacks is refused by name.
    #[test]
    fn a_validation_file_takes_the_training_columns_and_labels() {
        let train_table = table("text,labels\nA long enough text here,b;a\nAnother long text here,b\n");
        let map = LabelSetMap { text: 0, text_pair: None, labels: LabelColumns::List { column: 1, separator: Separator::Char(';') } };
        let train = to_label_sets(&train_table, &map).unwrap();
        assert_eq!(train.labels, ["a", "b"]);
        let valid = validation_texts(&train, &train_table, &map, "v.csv", b"id,labels,text\n1,b,Only b here\n2,a,Only a here\n").unwrap();
        assert_eq!(valid.iter().map(|e| (e.text.as_str(), e.labels.clone())).collect::<Vec<_>>(), [("Only b here", vec![1]), ("Only a here", vec![0])]);
        let odd = validation_texts(&train, &train_table, &map, "v.csv", b"text,labels\nA new one,c\n").unwrap_err();
        assert!(odd.contains("Its labels c are not among"), "{odd}");
        let missing = validation_texts(&train, &train_table, &map, "v.csv", b"text,tags\nA new one,a\n").unwrap_err();
        assert!(missing.contains("no column “labels”"), "{missing}");
    }
}
