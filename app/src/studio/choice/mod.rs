//! The studio's multiple-choice mode (SWAG, `*ForMultipleChoice`): questions with their endings
//! in (JSON Lines with `question`/`context`, `endings` and `label`, or SWAG's CSV), read by
//! core's reader, with a report (questions, endings per question, how often each ending is the
//! right one, pairs longer than the run's length) and a preview; a run on them through the
//! studio's one training job; a model's results (accuracy over questions, the questions it got
//! wrong with the ending it chose and the right one); and a typed question scored ending by
//! ending ([`predict::ChoicePredict`]).

use std::sync::Arc;

use bertbench_core::bert::family::Family;
use bertbench_core::bert::pooling::Pooling;
use bertbench_core::data::held_out;
use bertbench_core::tasks::choice::{ChoiceItem, parse_choices};
use bertbench_core::tasks::classification::{FeatureLayers, FeatureSpec, Level};
use bertbench_core::train::task::choice::choice_labels;
use bertbench_core::train::{TrainMode, memory};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::data::clip;
use super::data_card::{DataCard, Example};
use super::held_out::{HeldOutChoice, HeldOutRead};
use super::task_state::TaskState;
use super::task::{Features, TaskPanel};
use super::{Studio, Task, recipe};
use crate::app::AppState;
use crate::runs::{ChoiceRequest, RunData, RunSummary};

mod predict;

pub use predict::ChoicePredict;

/// The example for multiple choice, written for this project: questions with four endings each,
/// one sensible (JSON Lines).
pub const EXAMPLE_CHOICES: &[u8] = include_bytes!("../../../../public/examples/choices.jsonl");

/// The files the multiple-choice mode's pickers offer.
const CHOICE_FILES: &str = ".jsonl,.json,.ndjson,.csv,.tsv,.txt,.gz,.parquet";

/// A multiple-choice file, read and measured against the model's tokenizer.
#[derive(Debug, Clone)]
pub struct ChoiceUpload {
    /// The file's name.
    pub name: String,
    /// Its questions (every one with the same number of endings, as the reader checks).
    pub items: Arc<Vec<ChoiceItem>>,
    /// The questions left out for another number of endings than most, as a sentence.
    pub set_aside: Option<String>,
    /// Tokens of the longest (premise, ending) pair, specials included (`None` until counted).
    pub longest: Option<usize>,
    /// Pairs longer than the run's length (their ends are cut off).
    pub over_max_len: usize,
}

impl ChoiceUpload {
    /// Endings per question.
    pub fn endings(&self) -> usize {
        self.items.first().map_or(0, |q| q.choices.len())
    }
}

/// How many questions have each ending as their right one, by ending index.
pub fn label_balance(items: &[ChoiceItem]) -> Vec<usize> {
    let endings = items.first().map_or(0, |q| q.choices.len());
    let mut counts = vec![0; endings];
    for q in items {
        if let Some(c) = counts.get_mut(q.label) {
            *c += 1;
        }
    }
    counts
}

/// Indices of the training and validation questions when `fraction` of `n` is held out (at
/// least one each), shuffled by `seed`: the command line's split (`cli/src/finetune/choice.rs`).
pub fn split_questions(n: usize, fraction: f32, seed: u64) -> Result<(Vec<usize>, Vec<usize>), String> {
    held_out(n, fraction, seed).ok_or_else(|| format!("{n} question(s): holding some out for validation needs at least two; add questions or give a validation file"))
}

/// The multiple-choice mode's own state.
#[derive(Debug, Clone, Copy)]
pub struct ChoiceState {
    /// The questions with endings.
    pub choices: RwSignal<Option<ChoiceUpload>>,
}

impl TaskState for ChoiceState {
    /// No file yet.
    fn new() -> Self {
        Self { choices: RwSignal::new(None) }
    }
}

/// The mode's own state in `studio`.
fn own(studio: Studio) -> ChoiceState {
    studio.own()
}

/// The multiple-choice task (the right ending of a premise among several).
pub(in crate::studio) struct MultipleChoice;

impl TaskPanel for MultipleChoice {
    fn export_note(&self) -> &'static str {
        "In Python, AutoModelForMultipleChoice.from_pretrained(folder) loads it (*ForMultipleChoice: classifier.weight of shape [1, hidden]) and gives each ending the probability it has here."
    }

    fn run_label(&self, config: &bertbench_core::train::FineTuneConfig) -> String {
        format!("multiple choice · {}", recipe(config))
    }

    fn recipe_note(&self, _level: Level, _pairs: bool) -> &'static str {
        "full fine-tuning, batch 16, lr 5e-5, 3 epochs, as transformers' run_swag.py trains (on the built-in example, MiniLM: 5 of 12 held-out questions right, 41.7 % against 25 % by chance, in about half a minute on 2 CPU threads)"
    }

    fn model_noun(&self, _level: Level) -> &'static str {
        "a multiple-choice model"
    }

    fn opened(&self, model: &str, _meta: &bertbench_core::tasks::classification::ClassifierMeta) -> String {
        format!("{model} picks the right ending of a premise (a multiple-choice head): give it a question and its endings here, or train on your questions for a new head on its encoder.")
    }

    fn read_held_out(&self, _studio: Studio, name: &str, bytes: &[u8]) -> Result<HeldOutRead, String> {
        let file = parse_choices(bytes, Some(name)).map_err(|e| e.to_string())?;
        let count = match file.set_aside_note() {
            Some(note) => format!("{} questions; {note}", file.items.len()),
            None => format!("{} questions", file.items.len()),
        };
        Ok(HeldOutRead::new(file.items, count))
    }

    fn choice(&self) -> (&'static str, &'static str) {
        (" the right ending among several (multiple choice, SWAG)", "task-choice")
    }

    fn data_panel(&self) -> AnyView {
        view! { <StudioChoiceDataPanel /> }.into_any()
    }

    fn has_data(&self, studio: Studio) -> bool {
        own(studio).choices.with(Option::is_some)
    }

    fn epoch_examples(&self, studio: Studio) -> usize {
        studio.training_questions()
    }

    fn start(&self, studio: Studio, state: AppState) -> Result<(), String> {
        studio.start_choice(state)
    }

    fn open_file(&self, studio: Studio, state: AppState, name: String, bytes: Vec<u8>) {
        studio.set_choice_file(state, name, bytes);
    }

    fn results(&self, summary: Arc<RunSummary>, _: Studio) -> AnyView {
        choice_results(summary).into_any()
    }

    fn predict(&self) -> AnyView {
        view! { <ChoicePredict /> }.into_any()
    }

    fn export_name(&self, _: Level) -> &'static str {
        "bertbench-multiple-choice"
    }

    /// What the family's own `*ForMultipleChoice` reads of each ending, so that the model exports
    /// as that class.
    fn features(&self, _: Studio, family: Option<Family>) -> Features {
        let class = family.map_or("BertForMultipleChoice".to_string(), |f| f.base_architecture().replace("Model", "ForMultipleChoice"));
        let pooled = if family.is_some_and(|f| f.facts().choice_reads_sequence_head) {
            "pooled as its sequence classifier pools, through that head"
        } else {
            "[CLS] + pooler of the last layer"
        };
        Features::Fixed(format!("Features: each ending read with its premise, {pooled} (as {class})"))
    }
}

impl Studio {
    /// Reads a multiple-choice file; a file that cannot be read leaves the data as it was and
    /// says why (the reader names the line).
    pub fn set_choice_file(self, state: AppState, name: String, bytes: Vec<u8>) {
        match parse_choices(&bytes, Some(&name)) {
            Ok(file) => {
                self.data_error.set(None);
                self.save_dataset(Task::Choice, name.clone(), bytes.clone(), file.items.len());
                let set_aside = file.set_aside_note();
                own(self).choices.set(Some(ChoiceUpload { name, items: Arc::new(file.items), set_aside, longest: None, over_max_len: 0 }));
                self.count_choice_tokens(state);
            }
            Err(e) => self.data_error.set(Some(format!("{name}: {e}. The data you had is kept."))),
        }
    }

    /// Counts each (premise, ending) pair's tokens with the model's tokenizer (in chunks,
    /// yielding).
    pub fn count_choice_tokens(self, state: AppState) {
        let Some(upload) = own(self).choices.get_untracked() else { return };
        let max_len = self.max_len.get_untracked();
        spawn_local(async move {
            let Some(engine) = state.engine() else { return };
            let tok = &engine.bert.tokenizer;
            let pairs = upload.items.iter().flat_map(|q| q.choices.iter().map(move |ending| (q, ending)));
            let counts = super::data_card::token_counts(pairs, |(q, ending)| tok.encode_pair(&q.premise, ending)).await;
            let (longest, over) = (counts.iter().copied().max().unwrap_or(0), counts.iter().filter(|&&n| n > max_len).count());
            own(self).choices.update(|u| {
                if let Some(u) = u.as_mut().filter(|u| Arc::ptr_eq(&u.items, &upload.items)) {
                    u.longest = Some(longest);
                    u.over_max_len = over;
                }
            });
        });
    }

    /// Starts a multiple-choice run on the loaded questions: the features `BertForMultipleChoice`
    /// reads, validated on the separate file if one is loaded, else on a held-out share.
    fn start_choice(self, state: AppState) -> Result<(), String> {
        let upload = own(self).choices.get_untracked().ok_or("load a file of questions with endings first")?;
        let engine = state.engine().ok_or("the model is still loading")?;
        let mut config = self.config.get_untracked();
        config.features = FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, level: Level::Choice };
        memory::check_memory(engine.bert.report.num_params as u64, config.mode != TrainMode::HeadOnly, memory::WASM_MEMORY)
            .map_err(|e| format!("{}: {e}", engine.model_id))?;
        let items = &upload.items;
        let request = match self.held_out_file().and_then(|h| Some((h.data::<Vec<ChoiceItem>>()?, h.name))) {
            Some((valid, name)) => {
                let n = valid.first().map_or(0, |q| q.choices.len());
                if n != upload.endings() {
                    return Err(format!("{name} has {n} endings per question and {} has {}: a run needs one number of endings", upload.name, upload.endings()));
                }
                ChoiceRequest { train: items.to_vec(), valid: valid.to_vec() }
            }
            _ => {
                let (train, valid) = split_questions(items.len(), self.valid_fraction.get_untracked(), self.split_seed.get_untracked())?;
                let pick = |idx: &[usize]| idx.iter().map(|&i| items[i].clone()).collect::<Vec<_>>();
                ChoiceRequest { train: pick(&train), valid: pick(&valid) }
            }
        };
        let label = MultipleChoice.run_label(&config);
        self.launch(&engine, label, config, choice_labels(), self.max_len.get_untracked(), |r| r.data = RunData::Choices(request))
    }

    /// Training questions of the loaded file (all of them when a validation file is loaded).
    fn training_questions(self) -> usize {
        let Some(u) = own(self).choices.get_untracked() else { return 0 };
        let n = u.items.len();
        if self.held_out_file().is_some() { n } else { split_questions(n, self.valid_fraction.get_untracked(), 0).map_or(n, |(t, _)| t.len()) }
    }
}

/// Step 1 in multiple-choice mode: a file of questions with endings, its report and preview.
#[component]
pub fn StudioChoiceDataPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    // Re-count whenever the model (tokenizer) or the run's length changes.
    Effect::new(move |_| {
        state.generation.get();
        studio.max_len.get();
        studio.count_choice_tokens(state);
    });
    let report = move || {
        own(studio).choices.get().map(|u| {
            let balance = label_balance(&u.items);
            let endings = u.endings();
            let preview: Vec<ChoiceItem> = u.items.iter().take(3).cloned().collect();
            view! {
                <div data-testid="choice-report">
                    <div class="facts">
                        <div><b data-testid="choice-questions">{u.items.len()}</b>"questions"</div>
                        <div><b data-testid="choice-endings">{endings}</b>"endings per question"</div>
                        <div><b data-testid="choice-longest">{u.longest.map_or("…".to_string(), |n| n.to_string())}</b>"tokens in the longest premise + ending"</div>
                        <div><b>{format!("{:.0}%", 100.0 / endings.max(1) as f32)}</b>"chance (a guess among the endings)"</div>
                    </div>
                    <p class="small muted">{format!("{} · every question's premise is read with each of its endings, and the model scores each pair", u.name)}</p>
                    {u.set_aside.clone().map(|note| view! { <p class="banner warn small" data-testid="choice-set-aside">{format!("{note}: a run scores one number of endings.")}</p> })}
                    <p class="small muted" id="choice-balance-title">"How often each ending is the right one:"</p>
                    <table class="plain small" data-testid="choice-balance" aria-labelledby="choice-balance-title">
                        <tr><th>"right ending"</th>{(0..endings).map(|i| view! { <th>{format!("{}", i + 1)}</th> }).collect_view()}</tr>
                        <tr><td>"questions"</td>{balance.iter().map(|&n| view! { <td data-testid="choice-balance-count">{n}</td> }).collect_view()}</tr>
                    </table>
                    {balance.iter().any(|&n| n == 0).then(|| view! {
                        <p class="banner warn small" data-testid="data-warning">
                            "Some ending is never the right one: a model can learn the position instead of the meaning. Shuffle each question's endings."
                        </p>
                    })}
                    {(u.over_max_len > 0).then(|| view! {
                        <p class="banner warn small" data-testid="choice-over-max-len">{format!(
                            "{} premise + ending pair{} longer than {} tokens: the end is cut off. Raise \"max tokens per example\" in the settings below.",
                            u.over_max_len,
                            if u.over_max_len == 1 { " is" } else { "s are" },
                            studio.max_len.get_untracked(),
                        )}</p>
                    })}
                    <div class="qa-preview" data-testid="choice-preview">
                        {preview.into_iter().map(|q| view! {
                            <div class="qa-item">
                                <p><b>{q.premise.clone()}</b>" "<span class="muted small">{format!("(line {})", q.line)}</span></p>
                                <ol class="small">
                                    {q.choices.iter().enumerate().map(|(i, c)| {
                                        let right = i == q.label;
                                        view! { <li style:font-weight=right.then_some("600")>{clip(c, 160)}{right.then_some(" ✓ right")}</li> }
                                    }).collect_view()}
                                </ol>
                            </div>
                        }).collect_view()}
                    </div>
                </div>
            }
        })
    };
    view! {
        <DataCard task=Task::Choice testid="studio-choice-data" title="1 · Questions with endings"
            hint=concat!("JSON Lines, one question a line: \"question\" (or \"context\"), \"endings\" (a list of texts) and \"label\" ",
                "(the right ending's index, from 0), or SWAG, HellaSwag, ARC, OpenBookQA or CommonsenseQA as datasets writes them ",
                "(choices and answerKey), in JSON Lines or the Hub's Parquet; or SWAG's CSV (sent1, sent2, ending0, ending1, …, label: each ending is read as ",
                "sent2 + ending). A run scores one number of endings: questions with another number than most are left out, and said. The model reads \"[CLS] question [SEP] ending [SEP]\" ",
                "for each ending, gives each a score, and learns to score the right one highest. Read in this tab, never uploaded.")
            accept=CHOICE_FILES file_testid="choice-file"
            example=Example { testid: "use-choice-example", label: "use the example (60 everyday questions, 4 endings)" }
            on_file=move |(name, bytes)| studio.set_choice_file(state, name, bytes)
            on_example=move |()| studio.set_choice_file(state, "choices.jsonl (built-in example)".into(), EXAMPLE_CHOICES.to_vec())>
            {report}
            <div class="row">
                <HeldOutChoice task=Task::Choice prefix="choice" unit="of questions held out" accept=CHOICE_FILES />
            </div>
        </DataCard>
    }
}

/// A multiple-choice model's validation results: accuracy over questions, against chance, and
/// the questions it got wrong (the ending it chose and the right one).
pub fn choice_results(s: Arc<RunSummary>) -> impl IntoView {
    let m = s.metrics.clone();
    let endings = s.metrics.per_class.len().max(1);
    view! {
        <div data-testid="choice-results">
            <div class="facts">
                <div><b data-testid="choice-accuracy">{format!("{:.1}%", m.accuracy * 100.0)}</b>"validation accuracy (questions whose right ending scored highest)"</div>
                <div><b data-testid="choice-valid-count">{m.count}</b>"validation questions"</div>
                <div><b>{format!("{:.0}%", 100.0 / endings as f32)}</b>"chance"</div>
                <div><b>{s.meta.spec.label()}</b>"features"</div>
            </div>
            <details data-testid="choice-mistakes">
                <summary>{format!("Validation questions answered wrong ({}), the model's surest first", s.mistakes.choices().len())}</summary>
                <table class="plain">
                    <tr><th>"line"</th><th>"question"</th><th>"the model chose"</th><th>"the right ending"</th></tr>
                    {s.mistakes.choices().iter().take(200).map(|x| view! {
                        <tr data-testid="choice-mistake">
                            <td>{x.line}</td><td>{x.premise.clone()}</td>
                            <td>{format!("{} ({:.2})", x.chosen, x.chosen_prob)}</td>
                            <td>{format!("{} ({:.2})", x.right, x.right_prob)}</td>
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

    fn item(line: usize, label: usize) -> ChoiceItem {
        ChoiceItem { line, premise: format!("p{line}"), choices: vec!["a".into(), "b".into(), "c".into()], label }
    }

    #[test]
    fn the_balance_counts_each_right_ending() {
        let items = [item(1, 0), item(2, 2), item(3, 2), item(4, 0)];
        assert_eq!(label_balance(&items), [2, 0, 2]);
        assert!(label_balance(&[]).is_empty());
    }

    #[test]
    fn the_split_holds_out_a_share_and_keeps_every_question_once() {
        let (train, valid) = split_questions(60, 0.2, 13).unwrap();
        assert_eq!((train.len(), valid.len()), (48, 12));
        let mut all: Vec<usize> = train.iter().chain(&valid).copied().collect();
        all.sort();
        assert_eq!(all, (0..60).collect::<Vec<_>>());
        // Never an empty side, and the same seed gives the same split.
        assert_eq!(split_questions(2, 0.1, 1).map(|(t, v)| (t.len(), v.len())), Ok((1, 1)));
        assert_eq!(split_questions(60, 0.2, 13).unwrap(), (train, valid));
        assert!(split_questions(1, 0.2, 1).unwrap_err().contains("at least two"));
    }
}
