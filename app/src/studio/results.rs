//! Studio step 3: how good is it, where is it wrong, use it, take it away.

use bertbench_core::tasks::classification::Level;
use leptos::prelude::*;

use super::{Studio, Task};
use crate::runs::KnownBy;

/// Metrics, confusion matrix, mistakes, prediction, export and import.
#[component]
pub fn StudioResultsPanel() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let import = crate::files::on_files(move |files| {
        if !files.is_empty() {
            studio.import(files);
        }
    });

    // The predict box of the current model's task (a classifier's when there is none yet), drawn
    // again only when the task changes, so what is typed in it stays.
    let task = Memo::new(move |_| studio.classifier.with(|c| c.as_ref().map_or(Task::Classify, |(m, _)| Task::of(m.spec.level))));
    let predict = move || task.get().panel().predict();
    let metrics = move || studio.summary.get().map(|s| Task::of(s.meta.spec.level).panel().results(s, studio));

    let history = move || {
        let runs = studio.history.get();
        (!runs.is_empty()).then(|| view! {
            <h3>"Runs"</h3>
            <p class="hint">"Every run that ended, kept in this browser (step 5 lists them with their classifiers). Same data, different starts: a model pretrained first against the same shape from random weights shows what pretraining is worth."</p>
            <table class="plain small" data-testid="run-history">
                <tr><th>"#"</th><th>"model"</th><th>"start"</th><th>"training"</th><th>"accuracy"</th><th>"macro-F1"</th><th>"steps"</th><th>"time"</th><th>"on"</th></tr>
                {runs.into_iter().enumerate().map(|(i, r)| view! {
                    <tr data-testid="run-row">
                        <td>{i + 1}</td>
                        <td>{r.model}</td>
                        <td>{if r.from_scratch { "random weights" } else { "pretrained" }}</td>
                        <td>{r.recipe}{if r.cancelled { " (cancelled)" } else { "" }}</td>
                        // A question-answering or similarity run has no accuracy, a tagger's share
                        // of words tagged right counts the O words most of all, and a multi-label
                        // run's share of right decisions counts the many labels a text lacks (their
                        // scores are the next column's).
                        <td data-testid="run-accuracy">{match r.known_by {
                            KnownBy::Answers { .. } | KnownBy::Correlations { .. } | KnownBy::EntityF1(_) | KnownBy::LabelF1 { .. } => "—".to_string(),
                            _ => format!("{:.1}%", r.accuracy * 100.0),
                        }}</td>
                        <td>{match r.known_by {
                            KnownBy::Correlations { pearson, spearman } => format!("Spearman {spearman:.3} · Pearson {pearson:.3}"),
                            KnownBy::Answers { exact, f1 } => format!("EM {:.1}% · F1 {:.1}%", exact * 100.0, f1 * 100.0),
                            KnownBy::EntityF1(f) => format!("entity F1 {f:.3}"),
                            KnownBy::LabelF1 { micro, macro_f1 } => format!("micro-F1 {micro:.3} · macro-F1 {macro_f1:.3}"),
                            KnownBy::Accuracy => format!("{:.3}", r.macro_f1),
                        }}</td>
                        <td>{r.steps}</td>
                        <td>{format!("{:.0} s", r.seconds)}</td>
                        <td>{r.device}</td>
                    </tr>
                }).collect_view()}
            </table>
        })
    };

    view! {
        <section class="card" data-testid="studio-results">
            <h2>"3 · Results and use"</h2>
            {move || studio.classifier.get().is_none().then(|| view! {
                <p class="muted small" data-testid="no-classifier">"Train a classifier above, or import one exported earlier."</p>
            })}
            {metrics}
            {history}
            <h3>"Predict"</h3>
            {predict}
            <h3>"Take it away"</h3>
            <p class="hint" data-testid="export-note">"Export a Hugging Face folder (zip): config.json with id2label, model.safetensors, the tokenizer. "
                {move || studio.task.get().panel().export_note()}</p>
            <div class="row">
                <button class="secondary" data-testid="export-button" prop:disabled=move || studio.classifier.get().is_none()
                    on:click=move |_| studio.export(export_name(studio.classifier.get_untracked().map(|(m, _)| m.spec.level)).into())>"Export (zip)"</button>
                <label class="filebutton secondary">"Import a classifier (zip, or the folder's files)"
                    <input type="file" multiple accept=".zip,.json,.safetensors,.txt" data-testid="import-file" on:change=import />
                </label>
                {move || studio.classifier.get().map(|(meta, from)| view! {
                    <span class="small muted" data-testid="classifier-info">{format!("Current classifier: {from}; labels {}", meta.labels.join(", "))}</span>
                })}
            </div>
            {move || studio.notice.get().map(|r| match r {
                Ok(m) => view! { <p class="banner ok small" data-testid="studio-notice">{m}</p> }.into_any(),
                Err(e) => view! { <p class="banner err small" data-testid="studio-error">{e}</p> }.into_any(),
            })}
        </section>
    }
}

/// The exported zip's name: what the model does (a classifier's when there is none).
fn export_name(level: Option<Level>) -> &'static str {
    level.map_or("bertbench-classifier", |l| Task::of(l).panel().export_name(l))
}
