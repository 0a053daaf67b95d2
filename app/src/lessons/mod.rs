//! The lessons tab: short lessons that follow a BERT lecture. Each has a few paragraphs of plain
//! text, the maths behind a fold, a live view of the page's model already set up with an
//! example, "try this" prompts, and questions the page checks against the live numbers
//! (`check.rs`). Progress stays in this browser (`progress.rs`); the address names the lesson
//! and its input, so a teacher's link opens the same view, offline too (`Lessons::link`).

mod analogy;
mod attention;
mod check;
mod distillation;
mod finetune;
mod forgetting;
mod input;
mod masking;
mod merges;
mod pairs;
mod probing;
mod prompting;
mod progress;
mod recipe_runs;
mod senses;
mod sizes;
mod teacher;
mod tokens;
mod word_probe;

use std::collections::BTreeSet;

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use crate::app::{AppState, Tab};

/// One lesson: its address, title, the example its view starts with (what a link may replace)
/// and the ids of its questions.
pub struct Lesson {
    pub id: &'static str,
    pub title: &'static str,
    pub example: &'static str,
    pub checks: &'static [&'static str],
}

/// The lessons, in the lecture's order.
pub const LESSONS: [Lesson; 9] = [
    Lesson { id: "tokens", title: "From text to tokens", example: tokens::EXAMPLE, checks: &tokens::CHECKS },
    Lesson { id: "input", title: "The input: token, segment, position", example: input::EXAMPLE, checks: &input::CHECKS },
    Lesson { id: "attention", title: "Attention", example: attention::EXAMPLE, checks: &attention::CHECKS },
    Lesson { id: "masking", title: "Masked language modelling", example: masking::EXAMPLE, checks: &masking::CHECKS },
    Lesson { id: "pairs", title: "Next sentence, sentence order", example: pairs::EXAMPLE, checks: &pairs::CHECKS },
    Lesson { id: "senses", title: "Contextual embeddings", example: senses::EXAMPLE, checks: &senses::CHECKS },
    Lesson { id: "finetune", title: "Fine-tuning: the head or everything", example: "", checks: &finetune::CHECKS },
    Lesson { id: "probing", title: "Probing: what each layer knows", example: "", checks: &probing::CHECKS },
    Lesson { id: "sizes", title: "Model sizes and variants", example: "", checks: &sizes::CHECKS },
];

/// The lessons tab's state (`Copy`: all handles).
#[derive(Clone, Copy)]
pub struct Lessons {
    /// The lesson shown, an index into [`LESSONS`].
    pub current: RwSignal<usize>,
    /// Each lesson's input (its example until the user or a link changes it).
    pub inputs: [RwSignal<String>; LESSONS.len()],
    /// The ids of the questions answered right, in this browser.
    pub solved: RwSignal<BTreeSet<String>>,
}

impl Lessons {
    /// The lessons as this browser left them, then as the page's address asks
    /// (`#lesson=<id>&input=<text>`).
    pub fn new() -> Self {
        let kept = progress::load();
        let lessons = Self {
            current: RwSignal::new(LESSONS.iter().position(|l| l.id == kept.lesson).unwrap_or(0)),
            inputs: std::array::from_fn(|i| RwSignal::new(LESSONS[i].example.to_string())),
            solved: RwSignal::new(kept.solved.into_iter().collect()),
        };
        lessons.open_address();
        lessons
    }

    /// Opens the lesson the page's address names, with its input; `false` if it names none.
    pub fn open_address(&self) -> bool {
        let Some((id, input)) = link_in_address() else { return false };
        let Some(i) = LESSONS.iter().position(|l| l.id == id) else { return false };
        self.current.set(i);
        if !LESSONS[i].example.is_empty() {
            self.inputs[i].set(input.unwrap_or_else(|| LESSONS[i].example.to_string()));
        }
        true
    }

    /// The input of the lesson `id`.
    pub fn input(&self, id: &str) -> RwSignal<String> {
        self.inputs[LESSONS.iter().position(|l| l.id == id).unwrap_or(0)]
    }

    /// Records a right answer to `check` and keeps it.
    pub fn solve(&self, check: &str) {
        if self.solved.with_untracked(|s| s.contains(check)) {
            return;
        }
        self.solved.update(|s| {
            s.insert(check.to_string());
        });
        self.save();
    }

    /// Whether `check` was answered right (reactive).
    pub fn is_solved(&self, check: &str) -> bool {
        self.solved.with(|s| s.contains(check))
    }

    fn save(&self) {
        progress::save(&progress::Progress {
            lesson: LESSONS[self.current.get_untracked()].id.to_string(),
            solved: self.solved.get_untracked().into_iter().collect(),
        });
    }

    /// The address of the lesson shown with its input: `#lesson=<id>`, and `&input=` when the
    /// input is not the lesson's own example.
    pub fn link(&self) -> String {
        let i = self.current.get();
        let input = self.inputs[i].get();
        let mut link = format!("#lesson={}", LESSONS[i].id);
        if input != LESSONS[i].example {
            link.push_str(&format!("&input={}", String::from(js_sys::encode_uri_component(&input))));
        }
        link
    }

    pub(super) fn go(&self, i: usize) {
        self.current.set(i.min(LESSONS.len() - 1));
        self.save();
    }
}

/// `(lesson id, input)` from an address `#lesson=<id>&input=<text>`.
fn link_in_address() -> Option<(String, Option<String>)> {
    let hash = web_sys::window()?.location().hash().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(hash.strip_prefix('#')?).ok()?;
    Some((params.get("lesson")?, params.get("input")))
}

/// Shows `link` in the address bar without a new history entry (each keystroke in a lesson's
/// input would otherwise add one).
fn replace_address(link: &str) {
    let Some(window) = web_sys::window() else { return };
    let Ok(history) = js_sys::Reflect::get(&window, &"history".into()) else { return };
    if let Ok(replace) = js_sys::Reflect::get(&history, &"replaceState".into()).and_then(|f| f.dyn_into::<js_sys::Function>()) {
        let _ = replace.call3(&history, &JsValue::NULL, &"".into(), &link.into());
    }
}

/// A lesson's "show the maths" fold.
#[component]
pub fn Maths(children: Children) -> impl IntoView {
    view! {
        <details class="maths">
            <summary>"Show the maths"</summary>
            <div class="maths-body">{children()}</div>
        </details>
    }
}

/// A lesson's text field, labelled, holding the lesson's input (what a lesson link carries): the
/// view follows it when the student commits it (Enter, or leaving the field).
#[component]
pub fn LessonText(id: &'static str, label: &'static str, text: RwSignal<String>) -> impl IntoView {
    view! {
        <label class="field" for=id>{label}</label>
        <input id=id type="text" data-testid="lesson-input" prop:value=move || text.get()
            on:change=move |ev| text.set(event_target_value(&ev)) />
    }
}

/// A lesson's "try this" prompts.
#[component]
pub fn TryThis(children: Children) -> impl IntoView {
    view! {
        <aside class="try" aria-label="Try this">
            <h3>"Try this"</h3>
            {children()}
        </aside>
    }
}

/// The lessons tab: the list of lessons with what is answered, the lesson shown, its link.
#[component]
pub fn LessonsPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let lessons = expect_context::<Lessons>();
    let heading = NodeRef::<leptos::html::H2>::new();
    // The address names the lesson while the tab is shown, so it can be copied or bookmarked.
    Effect::new(move |_| {
        let link = lessons.link();
        if state.tab.get() == Tab::Lessons {
            replace_address(&link);
        }
    });
    let answered = move || lessons.solved.with(|s| LESSONS.iter().flat_map(|l| l.checks).filter(|c| s.contains(**c)).count());
    let total: usize = LESSONS.iter().map(|l| l.checks.len()).sum();
    let go = move |i: usize| {
        lessons.go(i);
        // Keyboard and screen-reader users land on the new lesson's title.
        if let Some(h) = heading.get_untracked() {
            let _ = h.focus();
        }
    };
    let full_link = move || {
        let base = web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default();
        let base = base.split('#').next().unwrap_or_default().to_string();
        format!("{base}{}", lessons.link())
    };
    view! {
        <div class="lessons">
            <nav class="card lesson-list" aria-label="Lessons">
                <h2>"Lessons"</h2>
                <p class="small muted" data-testid="lessons-progress" role="status">
                    {move || format!("{} of {total} questions answered", answered())}
                </p>
                <ol>
                    {LESSONS.iter().enumerate().map(|(i, l)| {
                        let done = move || lessons.solved.with(|s| l.checks.iter().all(|c| s.contains(*c)));
                        view! {
                            <li>
                                <button class="link" data-testid=format!("lesson-nav-{}", l.id)
                                    aria-current=move || (lessons.current.get() == i).then_some("page")
                                    on:click=move |_| go(i)>
                                    {format!("{}. {}", i + 1, l.title)}
                                    <span class="done" aria-label=move || if done() { "all questions answered" } else { "" }>
                                        {move || if done() { " ✓" } else { "" }}
                                    </span>
                                </button>
                            </li>
                        }
                    }).collect_view()}
                </ol>
            </nav>
            <article class="card lesson" data-testid="lesson" data-lesson=move || LESSONS[lessons.current.get()].id>
                <h2 tabindex="-1" node_ref=heading data-testid="lesson-title">
                    {move || { let i = lessons.current.get(); format!("{}. {}", i + 1, LESSONS[i].title) }}
                </h2>
                {move || (LESSONS[lessons.current.get()].id != "tokens").then(|| view! { <crate::compute::WeightsArriving what="This lesson needs" /> })}
                {move || match LESSONS[lessons.current.get()].id {
                    "tokens" => view! { <tokens::TokensLesson /> }.into_any(),
                    "attention" => view! { <attention::AttentionLesson /> }.into_any(),
                    "input" => view! { <input::InputLesson /> }.into_any(),
                    "masking" => view! { <masking::MaskingLesson /> }.into_any(),
                    "pairs" => view! { <pairs::PairsLesson /> }.into_any(),
                    "probing" => view! { <probing::ProbingLesson /> }.into_any(),
                    "finetune" => view! { <finetune::FinetuneLesson /> }.into_any(),
                    "senses" => view! { <senses::SensesLesson /> }.into_any(),
                    _ => view! { <sizes::SizesLesson /> }.into_any(),
                }}
                <teacher::TeacherTools />
                <div class="row lesson-steps">
                    <button class="secondary" data-testid="lesson-previous" prop:disabled=move || lessons.current.get() == 0
                        on:click=move |_| go(lessons.current.get_untracked().saturating_sub(1))>"← Previous lesson"</button>
                    <button data-testid="lesson-next" prop:disabled=move || lessons.current.get() + 1 == LESSONS.len()
                        on:click=move |_| go(lessons.current.get_untracked() + 1)>"Next lesson →"</button>
                </div>
                <p class="small muted">
                    <label for="lesson-link">"Link to this lesson with its input (works offline once the page is saved): "</label>
                    <input id="lesson-link" class="mono" type="text" readonly data-testid="lesson-link" prop:value=full_link />
                </p>
            </article>
        </div>
    }
}
