//! The studio's question-answering mode (extractive QA, as SQuAD): questions over passages in
//! (SQuAD JSON v1.1/v2, JSON Lines, a CSV table) with a report and a preview, the run's window
//! length, and a model's results: SQuAD's exact match and F1 (answered and unanswered questions
//! apart), the questions it got wrong, and a typed passage and question answered with the answer
//! marked in the passage, the best spans, and where the model puts the start and the end.

use std::sync::Arc;

use bertbench_core::data::{QaData, QaItem, parse_qa, parse_questions};
use bertbench_core::tasks::classification::{FeatureSpec, Level};
use bertbench_core::tasks::qa::{AnswerMetrics, Answered, LABELS, SpanConfig, encode_question};
use bertbench_core::train::{TrainMode, memory};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::data_card::{DataCard, Example};
use super::held_out::{HeldOutChoice, HeldOutRead};
use super::task_state::TaskState;
use super::task::TaskPanel;
use super::{Studio, Task, recipe};
use crate::app::AppState;
use crate::fetch::yield_to_browser;
use crate::files::{download, on_files};
use crate::runs::{QaRequest, RunData, RunSummary};
use crate::widgets::now_ms;

/// The example for question answering, written for this project
/// (`scripts/make_questions_example.py`).
pub const EXAMPLE_QUESTIONS: &[u8] = crate::examples::QUESTIONS_JSON;

/// The files the question-answering mode's pickers offer.
const QA_FILES: &str = ".json,.jsonl,.csv,.tsv,.txt,.gz,.parquet";

/// A question-answering file, read and measured against the model's tokenizer.
#[derive(Debug, Clone)]
pub struct QaUpload {
    /// The file's name.
    pub name: String,
    /// Its questions.
    pub data: Arc<QaData>,
    /// Windows the questions take at the run's window length (`None` until counted).
    pub windows: Option<usize>,
    /// Questions whose passage takes more than one window.
    pub split_passages: usize,
    /// Answered questions whose answer is whole in no window (longer than the window leaves the
    /// passage): they can only learn "no answer".
    pub answers_cut: usize,
}

/// The question-answering mode's own state.
#[derive(Debug, Clone, Copy)]
pub struct QaState {
    /// The questions over passages.
    pub questions: RwSignal<Option<QaUpload>>,
    /// A window's length in tokens.
    pub window_len: RwSignal<usize>,
    /// Whether the model may answer "no answer" (SQuAD 2.0).
    pub allow_null: RwSignal<bool>,
}

impl TaskState for QaState {
    /// No file yet; windows of 192 tokens; every question answered.
    fn new() -> Self {
        Self { questions: RwSignal::new(None), window_len: RwSignal::new(192), allow_null: RwSignal::new(false) }
    }
}

/// The mode's own state in `studio`.
fn own(studio: Studio) -> QaState {
    studio.own()
}

/// The question-answering task (an answer span per question over a passage).
pub(super) struct Answering;

impl TaskPanel for Answering {
    fn mode_warning(&self, mode: TrainMode) -> Option<AnyView> {
        // A start/end head on frozen features is a weak baseline (figures: docs/performance.md,
        // "Question answering on the example data").
        (mode == TrainMode::HeadOnly).then(|| {
            view! {
                <p class="banner warn small" data-testid="qa-head-only-warning">
                    "Head only is weak for question answering. The frozen encoder reads the question and the passage together, so each "
                    "token's vector does depend on the question; but those features were never trained to mark where an answer starts "
                    "and ends, and a linear start/end head on them cannot learn it (on the built-in example, MiniLM: F1 22.5 % head only, "
                    "94.9 % with this task's default, full fine-tuning; docs/performance.md). Use it as a baseline; for answers, train everything."
                </p>
            }
            .into_any()
        })
    }

    fn sets_own_length(&self) -> bool {
        true
    }

    fn export_note(&self) -> &'static str {
        "In Python, AutoModelForQuestionAnswering.from_pretrained(folder) loads it (*ForQuestionAnswering; another layer with trust_remote_code=True) with the start and end scores it has here."
    }

    fn run_label(&self, config: &bertbench_core::train::FineTuneConfig) -> String {
        format!("question answering · {}", recipe(config))
    }

    fn recipe_note(&self, _level: Level, _pairs: bool) -> &'static str {
        "full fine-tuning, batch 16, lr 1.5e-4, 5 epochs (MiniLM on 1,500 SQuAD questions: F1 51.8 % on held-out ones, as much as 10 epochs gave; on the built-in example F1 95 % in about 2 minutes on 2 CPU threads)"
    }

    fn model_noun(&self, _level: Level) -> &'static str {
        "a question-answering model"
    }

    fn opened(&self, model: &str, _meta: &bertbench_core::tasks::classification::ClassifierMeta) -> String {
        format!("{model} answers questions (a start/end head): give it a passage and a question here. Export it, or train on your questions for a new head on its encoder.")
    }

    fn read_held_out(&self, _studio: Studio, name: &str, bytes: &[u8]) -> Result<HeldOutRead, String> {
        let data = parse_qa(bytes, Some(name)).map_err(|e| e.to_string())?;
        let count = format!("{} questions", data.items.len());
        Ok(HeldOutRead::new(data, count))
    }

    fn choice(&self) -> (&'static str, &'static str) {
        (" answers found in a passage (question answering, SQuAD)", "task-answer")
    }

    fn data_panel(&self) -> AnyView {
        view! { <StudioQaDataPanel /> }.into_any()
    }

    fn has_data(&self, studio: Studio) -> bool {
        own(studio).questions.with(Option::is_some)
    }

    fn epoch_examples(&self, studio: Studio) -> usize {
        studio.training_windows()
    }

    fn start(&self, studio: Studio, state: AppState) -> Result<(), String> {
        studio.start_answering(state)
    }

    fn open_file(&self, studio: Studio, state: AppState, name: String, bytes: Vec<u8>) {
        studio.set_qa_file(state, name, bytes);
    }

    fn results(&self, summary: Arc<RunSummary>, _: Studio) -> AnyView {
        qa_results(summary).into_any()
    }

    fn predict(&self) -> AnyView {
        view! { <QaPredict /> }.into_any()
    }

    fn export_name(&self, _: Level) -> &'static str {
        "bertbench-qa"
    }
}

impl Studio {
    /// Reads a question-answering file; a file that cannot be read leaves the data as it was.
    pub fn set_qa_file(self, state: AppState, name: String, bytes: Vec<u8>) {
        match parse_qa(&bytes, Some(&name)) {
            Ok(data) => {
                self.data_error.set(None);
                self.save_dataset(Task::Answer, name.clone(), bytes.clone(), data.items.len());
                own(self).allow_null.set(data.unanswerable);
                own(self).questions.set(Some(QaUpload { name, data: Arc::new(data), windows: None, split_passages: 0, answers_cut: 0 }));
                self.count_windows(state);
            }
            Err(e) => self.data_error.set(Some(format!("{name}: {e} The data you had is kept."))),
        }
    }

    /// Counts each question's windows with the model's tokenizer (in chunks, yielding).
    pub fn count_windows(self, state: AppState) {
        let Some(upload) = own(self).questions.get_untracked() else { return };
        let window = own(self).window_len.get_untracked();
        spawn_local(async move {
            let Some(engine) = state.engine() else { return };
            let tok = &engine.bert.tokenizer;
            let spans = SpanConfig::new().with_max_len(window).with_stride(window / 3);
            let (mut windows, mut cut) = (0, 0);
            // Distinct passages cut into several windows (several questions may share one).
            let mut split = std::collections::HashSet::new();
            let mut last = now_ms();
            for q in &upload.data.items {
                let encoded = encode_question(tok, q, &spans).unwrap_or_default();
                windows += encoded.len();
                if encoded.len() > 1 {
                    split.insert(q.context.as_str());
                }
                cut += usize::from(!q.answers.is_empty() && encoded.iter().all(|(_, at)| *at == (0, 0)));
                if now_ms() - last > 40.0 {
                    yield_to_browser().await;
                    last = now_ms();
                }
            }
            own(self).questions.update(|t| {
                if let Some(t) = t.as_mut().filter(|t| Arc::ptr_eq(&t.data, &upload.data)) {
                    t.windows = Some(windows);
                    t.split_passages = split.len();
                    t.answers_cut = cut;
                }
            });
        });
    }

    /// Starts a question-answering run on the loaded questions.
    fn start_answering(self, state: AppState) -> Result<(), String> {
        let upload = own(self).questions.get_untracked().ok_or("load a file of questions first")?;
        let engine = state.engine().ok_or("the model is still loading")?;
        let window = own(self).window_len.get_untracked();
        let mut config = self.config.get_untracked();
        config.features = FeatureSpec { layers: config.features.layers, ..FeatureSpec::spans() };
        config.spans = SpanConfig::new().with_max_len(window).with_stride(window / 3);
        memory::check_memory(engine.bert.report.num_params as u64, config.mode != TrainMode::HeadOnly, memory::WASM_MEMORY)
            .map_err(|e| format!("{}: {e}", engine.model_id))?;
        let data = &upload.data;
        let questions = match self.held_out_file().and_then(|h| h.data::<QaData>()) {
            Some(valid) => QaRequest { train: data.items.clone(), valid: valid.items.clone() },
            None => {
                let split = data.split(self.valid_fraction.get_untracked(), self.split_seed.get_untracked()).map_err(|e| e.to_string())?;
                let pick = |idx: &[usize]| idx.iter().map(|&i| data.items[i].clone()).collect::<Vec<QaItem>>();
                QaRequest { train: pick(&split.train), valid: pick(&split.valid) }
            }
        };
        let label = Answering.run_label(&config);
        let labels = LABELS.iter().map(|l| l.to_string()).collect();
        self.launch(&engine, label, config, labels, window, |r| r.data = RunData::Questions(questions))
    }

    /// Training windows of the loaded questions (about: the split is by passage).
    fn training_windows(self) -> usize {
        let Some(u) = own(self).questions.get_untracked() else { return 0 };
        let n = u.data.items.len();
        let windows = u.windows.unwrap_or(n);
        (windows as f32 * (1.0 - self.held_out_fraction())).round() as usize
    }
}

/// A passage with `spans` (character ranges, with a class each) marked.
fn marked(context: &str, spans: &[(usize, usize, &'static str)]) -> Vec<AnyView> {
    let chars: Vec<char> = context.chars().collect();
    let mut spans: Vec<(usize, usize, &'static str)> = spans.iter().copied().filter(|(a, b, _)| a < b && *b <= chars.len()).collect();
    spans.sort();
    let mut out = Vec::new();
    let mut at = 0;
    for (a, b, class) in spans {
        if a < at {
            continue;
        }
        out.push(view! { <span>{chars[at..a].iter().collect::<String>()}</span> }.into_any());
        out.push(view! { <mark class=class>{chars[a..b].iter().collect::<String>()}</mark> }.into_any());
        at = b;
    }
    out.push(view! { <span>{chars[at..].iter().collect::<String>()}</span> }.into_any());
    out
}

/// Step 1 in question-answering mode: a file of questions, its report and preview.
#[component]
pub fn StudioQaDataPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    Effect::new(move |_| {
        state.generation.get();
        own(studio).window_len.get();
        studio.count_windows(state);
    });
    let report = move || {
        own(studio).questions.get().map(|u| {
            let d = u.data.clone();
            view! {
                <div data-testid="qa-report">
                    <div class="facts">
                        <div><b data-testid="qa-questions">{d.items.len()}</b>"questions"</div>
                        <div><b>{d.contexts()}</b>"passages"</div>
                        <div><b data-testid="qa-unanswerable">{d.without_answer()}</b>"without an answer"</div>
                        <div><b data-testid="qa-windows">{u.windows.map_or("…".to_string(), |n| n.to_string())}</b>"windows"</div>
                        <div><b>{u.split_passages}</b>"passages longer than a window"</div>
                    </div>
                    <p class="small muted">{format!("{} · {}{}", u.name, d.format.label(),
                        if d.unanswerable { " · SQuAD 2.0: some questions have no answer in their passage" } else { "" })}</p>
                    {d.warnings.iter().map(|w| view! { <p class="banner warn small" data-testid="data-warning">{w.clone()}</p> }).collect_view()}
                    {(u.answers_cut > 0).then(|| view! {
                        <p class="banner warn small" data-testid="qa-answers-cut">{format!(
                            "{} answer{} too long for a window of {} tokens with {} question: {} only learn \"no answer\". Choose a longer window.",
                            u.answers_cut,
                            if u.answers_cut == 1 { " is" } else { "s are" },
                            own(studio).window_len.get_untracked(),
                            if u.answers_cut == 1 { "its" } else { "their" },
                            if u.answers_cut == 1 { "that question can" } else { "those questions can" },
                        )}</p>
                    })}
                    <div class="qa-preview" data-testid="qa-preview">
                        {d.items.iter().take(4).map(|q| {
                            let spans: Vec<(usize, usize, &'static str)> = q.answers.iter().take(1).map(|a| (a.start, a.start + a.text.chars().count(), "ans")).collect();
                            view! {
                                <div class="qa-item">
                                    <p><b>{q.question.clone()}</b>" "<span class="muted small">{if q.answers.is_empty() { "(no answer in the passage)".to_string() } else { format!("→ {}", q.answers[0].text) }}</span></p>
                                    <p class="small">{marked(&q.context, &spans)}</p>
                                </div>
                            }
                        }).collect_view()}
                    </div>
                </div>
            }
        })
    };
    view! {
        <DataCard task=Task::Answer testid="studio-qa-data" title="1 · Questions over passages"
            hint=concat!("SQuAD's JSON (v1.1, or v2.0 with questions the passage does not answer), JSON Lines with \"question\", ",
                "\"context\" and \"answers\" ({\"text\": [...], \"answer_start\": [...]}, as the datasets library writes SQuAD), or a ",
                "table with question, context, answer and answer_start columns; the Hub's Parquet files too. The model reads \"[CLS] question [SEP] passage [SEP]\" ",
                "and learns where the answer starts and ends. Read in this tab, never uploaded.")
            accept=QA_FILES file_testid="qa-file"
            example=Example { testid: "use-qa-example", label: "use the example (questions about invented towns)" }
            on_file=move |(name, bytes)| studio.set_qa_file(state, name, bytes)
            on_example=move |()| studio.set_qa_file(state, "questions.json (built-in example)".into(), EXAMPLE_QUESTIONS.to_vec())>
            {report}
            <div class="row">
                <HeldOutChoice task=Task::Answer prefix="qa" unit="of passages held out" accept=QA_FILES />
                <label class="small" title="A longer passage is cut into windows that overlap by a third; each window holds the whole question">
                    "Window: "
                    <select data-testid="qa-window" on:change=move |ev| own(studio).window_len.set(event_target_value(&ev).parse().unwrap_or(192))>
                        {[128usize, 192, 256, 384].map(|n| view! { <option value=n.to_string() selected=move || own(studio).window_len.get() == n>{format!("{n} tokens (stride {})", n / 3)}</option> }).collect_view()}
                    </select>
                </label>
            </div>
        </DataCard>
    }
}

/// A question-answering model's validation results: exact match and F1, answered and unanswered
/// questions apart, the questions it got wrong.
pub fn qa_results(s: Arc<RunSummary>) -> impl IntoView {
    let a = s.scores.answers().cloned().unwrap_or_else(|| AnswerMetrics::new::<String, String>(&[], &[]));
    view! {
        <div data-testid="qa-results">
            <div class="facts">
                <div><b data-testid="qa-exact">{format!("{:.1}%", a.all.exact * 100.0)}</b>"exact match"</div>
                <div><b data-testid="qa-f1">{format!("{:.1}%", a.all.f1 * 100.0)}</b>"F1 (words shared with the answer)"</div>
                <div><b>{a.all.count}</b>"validation questions"</div>
                <div><b>{s.meta.spec.label()}</b>"features"</div>
            </div>
            <table class="plain small" data-testid="qa-breakdown">
                <tr><th>"questions"</th><th>"count"</th><th>"exact match"</th><th>"F1"</th></tr>
                <tr><td>"with an answer"</td><td>{a.has_answer.count}</td><td>{format!("{:.1}%", a.has_answer.exact * 100.0)}</td><td>{format!("{:.1}%", a.has_answer.f1 * 100.0)}</td></tr>
                {(a.no_answer.count > 0).then(|| view! {
                    <tr><td>"without (right when it says none)"</td><td>{a.no_answer.count}</td><td>{format!("{:.1}%", a.no_answer.exact * 100.0)}</td><td>{format!("{:.1}%", a.no_answer.f1 * 100.0)}</td></tr>
                })}
            </table>
            <p class="hint">"SQuAD's scores: answers compared after lower-casing and dropping punctuation and a/an/the; F1 counts the words the answer shares with the best gold answer."</p>
            <details data-testid="qa-mistakes">
                <summary>{format!("Validation questions answered wrong ({}), furthest off first", s.mistakes.answers().len())}</summary>
                <table class="plain">
                    <tr><th>"line"</th><th>"question"</th><th>"true answer"</th><th>"model's answer"</th><th>"F1"</th></tr>
                    {s.mistakes.answers().iter().take(200).map(|x| view! {
                        <tr title=x.context.clone()>
                            <td>{x.line}</td><td>{x.question.clone()}</td>
                            <td>{if x.gold.is_empty() { "(none)".to_string() } else { x.gold.join(" | ") }}</td>
                            <td>{if x.predicted.is_empty() { "(none)".to_string() } else { x.predicted.clone() }}</td>
                            <td>{format!("{:.2}", x.f1)}</td>
                        </tr>
                    }).collect_view()}
                </table>
            </details>
        </div>
    }
}

/// A typed passage and question answered: the answer marked in the passage, the best spans, and
/// each passage token's start and end probabilities.
#[component]
pub fn QaPredict() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let context = RwSignal::new(
        "Harwick is a town on the Lune river in the western valleys. It was founded in 1312 by Grace Kim, a teacher. Today about 18,400 people live there. It is best known for its salt mines.".to_string(),
    );
    let question = RwSignal::new("Who founded Harwick?".to_string());
    let result = RwSignal::new(None::<Result<(String, Answered), String>>);
    let note = RwSignal::new(None::<Result<String, String>>);
    let busy = RwSignal::new(false);
    let answers = RwSignal::new(0u32);
    let ask = move |_| {
        let (q, c) = (question.get_untracked(), context.get_untracked());
        busy.set(true);
        crate::widgets::spawn_in_view(async move {
            let r = studio.client.answer(q, c.clone(), own(studio).allow_null.get_untracked()).await;
            busy.set(false);
            answers.update(|n| *n += 1);
            result.set(Some(r.map(|a| (c, a))));
        });
    };
    // A file of questions answered one by one, downloaded as SQuAD's predictions file (id →
    // answer), and scored when the file has answers.
    let batch = on_files(move |mut files| {
        let Some((name, bytes)) = files.pop() else { return };
        crate::widgets::spawn_in_view(async move {
            let data = match parse_questions(&bytes, Some(&name)) {
                Ok(d) => d,
                Err(e) => return note.set(Some(Err(format!("{name}: {e}")))),
            };
            busy.set(true);
            let allow_null = own(studio).allow_null.get_untracked();
            let (mut predictions, mut said) = (serde_json::Map::new(), Vec::new());
            for (i, q) in data.items.iter().enumerate() {
                note.set(Some(Ok(format!("Answering question {} of {} of {name}…", i + 1, data.items.len()))));
                match studio.client.answer(q.question.clone(), q.context.clone(), allow_null).await {
                    Ok(a) => {
                        let text = a.answer.map(|b| b.text).unwrap_or_default();
                        predictions.insert(q.id.clone(), text.clone().into());
                        said.push(text);
                    }
                    Err(e) => {
                        busy.set(false);
                        return note.set(Some(Err(format!("{name}, line {} (question {}): {e}", q.line, q.id))));
                    }
                }
            }
            busy.set(false);
            let out_name = format!("{}-predictions.json", name.rsplit_once('.').map_or(name.as_str(), |(a, _)| a));
            download(&out_name, &serde_json::to_vec_pretty(&predictions).unwrap_or_default(), "application/json");
            let gold: Vec<Vec<String>> = data.items.iter().map(|q| q.answers.iter().map(|a| a.text.clone()).collect()).collect();
            let scores = data.items.iter().any(|q| !q.answers.is_empty()).then(|| AnswerMetrics::new(&gold, &said));
            note.set(Some(Ok(format!(
                "Answered {} questions; downloaded {out_name} (SQuAD's predictions format: id → answer){}.",
                said.len(),
                scores.map(|m| format!("; against the file's answers: exact match {:.1}%, F1 {:.1}%", m.all.exact * 100.0, m.all.f1 * 100.0)).unwrap_or_default()
            ))));
        });
    });
    view! {
        <textarea rows="4" data-testid="qa-context" aria-label="Passage" prop:value=move || context.get() on:input=move |ev| context.set(event_target_value(&ev))></textarea>
        <div class="row">
            <input type="text" data-testid="qa-question" aria-label="Question" prop:value=move || question.get() on:input=move |ev| question.set(event_target_value(&ev)) />
            <button data-testid="qa-button" on:click=ask prop:disabled=move || busy.get()>"Answer"</button>
            <label class="small" title="SQuAD 2.0: the model may say the passage does not answer the question, when [CLS] scores above every span">
                <input type="checkbox" data-testid="qa-allow-null" prop:checked=move || own(studio).allow_null.get()
                    on:change=move |ev| own(studio).allow_null.set(event_target_checked(&ev)) />
                " allow \"no answer\""
            </label>
            <label class="filebutton secondary">"Answer a file of questions (predictions download)"
                <input type="file" accept=".json,.jsonl,.csv,.tsv,.txt,.gz,.parquet" data-testid="qa-batch-file" on:change=batch />
            </label>
        </div>
        {move || note.get().map(|r| match r {
            Ok(m) => view! { <p class="small" data-testid="batch-note">{m}</p> }.into_any(),
            Err(e) => view! { <p class="banner err small" data-testid="batch-error">{e}</p> }.into_any(),
        })}
        {move || result.get().map(|r| match r {
            Ok((context, a)) => answered(context, a, answers.get_untracked()).into_any(),
            Err(e) => view! { <p class="banner warn small" data-testid="predict-error">{e}</p> }.into_any(),
        })}
    }
}

fn answered(context: String, a: Answered, n: u32) -> impl IntoView {
    let best = a.answer.clone();
    let spans: Vec<(usize, usize, &'static str)> = best.iter().map(|b| (b.start, b.end, "ans")).collect();
    let chars: Vec<char> = context.chars().collect();
    view! {
        <div data-testid="qa-answer" data-answer=n data-text=best.as_ref().map(|b| b.text.clone()).unwrap_or_default()>
            <p>{match &best {
                Some(b) => view! { <span>"Answer: "<b data-testid="qa-answer-text">{b.text.clone()}</b>{format!(" · probability {:.3} · score {:.2}", b.probability, b.score)}</span> }.into_any(),
                None => view! { <span><b data-testid="qa-answer-text">"(no answer)"</b>{a.null.map(|(s, p)| format!(" · \"no answer\" scores {s:.2} (probability {p:.3}), above every span")).unwrap_or_default()}</span> }.into_any(),
            }}{format!(" · {} window{}", a.windows, if a.windows == 1 { "" } else { "s" })}</p>
            <p class="qa-passage">{marked(&context, &spans)}</p>
            <table class="plain small" data-testid="qa-spans">
                <tr><th>"#"</th><th>"span"</th><th>"score (start + end logit)"</th><th>"probability"</th></tr>
                {a.spans.iter().take(5).enumerate().map(|(i, s)| view! {
                    <tr data-testid="qa-span"><td>{i + 1}</td><td>{s.text.clone()}</td><td>{format!("{:.2}", s.score)}</td><td>{format!("{:.3}", s.probability)}</td></tr>
                }).collect_view()}
                {a.null.map(|(s, p)| view! { <tr><td>"–"</td><td class="muted">"(no answer: [CLS])"</td><td>{format!("{s:.2}")}</td><td>{format!("{p:.3}")}</td></tr> })}
            </table>
            <p class="small muted">"Where the model puts the start (blue shading) and the end (orange underline) of the answer, token by token:"</p>
            <p class="qa-probs" data-testid="qa-probs">
                {a.tokens.iter().enumerate().map(|(i, t)| {
                    let piece = |a: usize, b: usize| chars.get(a.min(b)..b.min(chars.len())).map(|c| c.iter().collect::<String>()).unwrap_or_default();
                    let text = piece(t.offsets.0, t.offsets.1);
                    // What the passage has between this token and the previous one (a space, or
                    // nothing inside a word).
                    let gap = piece(if i == 0 { 0 } else { a.tokens[i - 1].offsets.1 }, t.offsets.0);
                    let title = format!("{text}: start {:.3}, end {:.3}", t.start, t.end);
                    view! {
                        {gap}
                        <span class="qa-tok" style=format!("--s:{:.3};--e:{:.3}", t.start, t.end) title=title
                            data-probs=format!("[{:?},{:?}]", t.start, t.end)>{text}</span>
                    }
                }).collect_view()}
            </p>
        </div>
    }
}
