//! Model status: download progress, architecture facts, load errors.

use leptos::prelude::*;

use crate::app::{AppState, LoadState, Tab};
use crate::widgets::{ProgressBar, human_count, megabytes};

use super::open_model::OpenModel;

/// Shows what is loaded, or how far loading has got, or why it failed.
#[component]
pub fn ModelPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let fraction = Signal::derive(move || match state.load.get() {
        LoadState::Downloading { got, total: Some(t), .. } if t > 0 => Some(got as f64 / t as f64),
        _ => None,
    });
    let facts = move || {
        state.generation.get();
        state.engine().map(|e| {
            let c = &e.bert.config;
            let r = &e.bert.report;
            view! {
                <div class="facts" data-testid="model-facts">
                    <div><b>{e.model_id.clone()}</b>"model"</div>
                    <div data-testid="model-family"><b>{c.model_type.display_name()}</b>{if e.bert.tokenizer.is_cased() { "cased" } else { "uncased" }}</div>
                    <div><b>{c.num_hidden_layers}</b>"layers"</div>
                    <div><b>{c.hidden_size}</b>"hidden size"</div>
                    <div><b>{c.num_attention_heads}</b>"attention heads"</div>
                    <div><b>{human_count(r.num_params)}</b>"parameters"</div>
                    <div><b>{human_count(e.bert.tokenizer.vocab_size())}</b>"vocabulary"</div>
                    <div data-testid="model-max-tokens"><b>{c.max_len()}</b>{if c.read_len() < c.max_len() { format!("max tokens (read {} at a time here)", c.read_len()) } else { "max tokens".to_string() }}</div>
                </div>
                <p class="small muted" data-testid="model-architecture">{architecture_note(c, e.bert.tokenizer.piece_kind())}</p>
                <p class="small muted" data-testid="model-suits">{suits_note(e.bert.tokenizer.is_cased(), &r.heads, &e.model_id)}</p>
                <p class="small muted" data-testid="model-precision">{precision_note(&e.model_id, &r.stored)}</p>
                <p class="small muted" data-testid="model-heads">{if r.heads.is_empty() {
                    "Encoder only: no task heads in the checkpoint.".to_string()
                } else {
                    let label = |h: &bertbench_core::bert::checkpoint::Head| match h {
                        bertbench_core::bert::checkpoint::Head::Classifier => format!("{} ({})", h.label(), classifier_outputs(e.config_json())),
                        _ => h.label().to_string(),
                    };
                    format!("Heads in the checkpoint: {}.", r.heads.iter().map(label).collect::<Vec<_>>().join(", "))
                }}</p>
            }
        })
    };
    // On a phone, and in the lessons tab, the panel shows the model's name only until asked (the
    // style sheet hides the rest below 600 px, or when `compact`, unless `expanded`), so the
    // first screen shows the tab's own work.
    let expanded = RwSignal::new(false);
    let compact = move || state.tab.get() == Tab::Lessons;
    view! {
        <section class="card model-panel" class:expanded=move || expanded.get() class:compact=compact data-testid="model-panel">
            <div class="row model-heading">
                <h2>"Model"</h2>
                <button class="secondary small phone-only" data-testid="model-more" aria-expanded=move || expanded.get().to_string()
                    on:click=move |_| expanded.update(|e| *e = !*e)>
                    {move || if expanded.get() { "Less" } else { "Details, your own model" }}
                </button>
            </div>
            {move || match state.load.get() {
                LoadState::Starting => view! { <div><p class="muted">"Looking for a GPU…"</p><ProgressBar fraction=fraction /></div> }.into_any(),
                LoadState::Downloading { file, got, total } => view! {
                    <div data-testid="model-progress">
                        <p class="muted">{format!("Downloading {file}: {}{}", megabytes(got), total.map(|t| format!(" of {}", megabytes(t))).unwrap_or_default())}
                            {move || state.weights_arriving().then_some(". The tokenizer is here: lesson 1 and the explorer's tokens work meanwhile.")}</p>
                        <ProgressBar fraction=fraction />
                    </div>
                }.into_any(),
                LoadState::Building(what) => view! { <div><p class="muted">{what}"…"</p><ProgressBar fraction=fraction /></div> }.into_any(),
                LoadState::Failed(msg) => view! { <div class="banner err" data-testid="load-error">{msg}</div> }.into_any(),
                LoadState::Ready => ().into_any(),
            }}
            {facts}
            <OpenModel />
            // A browser without WebGPU is normal (the CPU build is the page's fallback): a plain
            // line. WebGPU that failed or disagreed with the CPU is a problem: a warning.
            {move || {
                let b = state.backend.get();
                b.gpu_note.map(|n| if b.gpu_absent {
                    view! { <p class="small muted" data-testid="gpu-note" data-problem="false">{format!("Runs on the CPU: {n}.")}</p> }.into_any()
                } else {
                    view! { <p class="banner warn small" data-testid="gpu-note" data-problem="true">"WebGPU is not in use: "{n}</p> }.into_any()
                })
            }}
            <crate::backend_choice::BackendChoiceNote />
        </section>
    }
}

/// How the model's weights are stored, and for the default model's lighter copies what that
/// costs against PyTorch (`engine::STORED_ERROR`).
fn precision_note(model_id: &str, stored: &str) -> String {
    let how = match stored {
        "int8" => "in 8 bits with a scale per 64 weights (a quarter of the f32 download)".to_string(),
        "f16" | "bf16" => format!("as {stored} (half the f32 download)"),
        other => return format!("Weights stored as {other}."),
    };
    match crate::engine::STORED_ERROR.iter().find(|(id, _)| *id == model_id) {
        Some((_, error)) => format!(
            "Weights stored {how} and read as f32: hidden states within {error} of PyTorch's on the f32 weights. \
             For exactly PyTorch's numbers choose the f32 weights in the model menu."
        ),
        None => format!("Weights stored {how}, read as f32."),
    }
}

/// What a sequence classifier's outputs are, as its `config.json` says (`problem_type`, its
/// labels): what `transformers`' pipeline, and the studio, make of them.
fn classifier_outputs(config_json: &[u8]) -> String {
    use bertbench_core::tasks::classification::ProblemType;
    let raw: serde_json::Value = serde_json::from_slice(config_json).unwrap_or_default();
    let labels = raw.get("id2label").and_then(|m| m.as_object()).map(|m| m.len());
    match (ProblemType::of_config(&raw), labels) {
        (Some(ProblemType::Regression), _) => "one number per text: a regression".to_string(),
        (Some(ProblemType::MultiLabelClassification), Some(n)) => format!("multi-label: each of its {n} labels a yes or no of its own, a sigmoid each"),
        (Some(ProblemType::MultiLabelClassification), None) => "multi-label: each label a yes or no of its own, a sigmoid each".to_string(),
        (_, Some(1)) => "one output: a score, its sigmoid as transformers' pipeline gives it".to_string(),
        (_, Some(n)) => format!("{n} labels, one per text: a softmax over them"),
        (_, None) => "no id2label, as transformers 5 saves two labels: its outputs are LABEL_0, LABEL_1, …".to_string(),
    }
}

/// What the model is good and bad at, from its facts: case (a tagger of names reads capitals),
/// and whether it kept a masked-language-model head (a sentence encoder was trained to place
/// whole texts, and cannot fill in blanks).
fn suits_note(cased: bool, heads: &[bertbench_core::bert::checkpoint::Head], id: &str) -> String {
    use bertbench_core::bert::checkpoint::Head;
    let mut out = Vec::new();
    if heads.contains(&Head::MaskedLm) {
        out.push("It kept its masked-language-model head: it fills in blanks, can be pretrained further in the lab, and classifies zero-shot by prompting (lesson 7).".to_string());
    } else if id.starts_with("all-MiniLM") {
        out.push("A sentence encoder: trained to place whole sentences near others of the same meaning, so it is strong for similarity and for classifying texts from its frozen features; saved without its masked-language-model head, it cannot fill in blanks.".to_string());
    }
    if !cased {
        out.push("Uncased: \"Apple\" and \"apple\" are the same tokens, so a tagger of names cannot use capitals; for named entities a cased model (bert-base-cased, or a cased NER checkpoint) does better.".to_string());
    }
    out.join(" ")
}

/// What sets the model's architecture apart, and its kind of vocabulary.
fn architecture_note(config: &bertbench_core::bert::config::BertConfig, pieces: &str) -> String {
    let family = config.model_type.display_name();
    let apart = config.distinctions();
    if apart.is_empty() {
        format!("{family}: BERT's own architecture; {pieces} pieces.")
    } else {
        format!("{family}: {}; {pieces} pieces.", apart.join("; "))
    }
}
