//! Studio step 3: how good is it, where is it wrong, use it, take it away.

use bertbench_core::data::{self, ColumnMap};
use bertbench_core::tasks::classification::Level;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;

use super::{Studio, Task};
use crate::runs::KnownBy;
use crate::files::{download, file_list, read_files};

/// CSV text with a header, quoting every field (RFC 4180).
fn to_csv(header: &[String], rows: &[Vec<String>]) -> String {
    let quote = |s: &String| format!("\"{}\"", s.replace('"', "\"\""));
    let mut out = header.iter().map(quote).collect::<Vec<_>>().join(",");
    out.push_str("\r\n");
    for r in rows {
        out.push_str(&r.iter().map(quote).collect::<Vec<_>>().join(","));
        out.push_str("\r\n");
    }
    out
}

fn prob_bars(labels: Vec<String>, probs: Vec<f32>) -> impl IntoView {
    view! {
        <div class="bars" data-testid="prediction">
            {labels.into_iter().zip(probs).map(|(l, p)| view! {
                <div class="bar-row">
                    <span class="bar-label">{l.clone()}</span>
                    <span class="bar"><span style:width=format!("{:.1}%", p * 100.0)></span></span>
                    <span class="bar-value" data-testid="prob" data-label=l data-value=p.to_string()>{format!("{p:.4}")}</span>
                </div>
            }).collect_view()}
        </div>
    }
}

/// Metrics, confusion matrix, mistakes, prediction, export and import.
#[component]
pub fn StudioResultsPanel() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let text = RwSignal::new("What a wonderful, warm little film.".to_string());
    let pair = RwSignal::new(String::new());
    let prediction = RwSignal::new(None::<Result<(Vec<String>, Vec<f32>), String>>);
    let batch_note = RwSignal::new(None::<Result<String, String>>);
    let predicting = RwSignal::new(false);

    let predict = move |_| {
        let t = text.get_untracked();
        let p = pair.get_untracked();
        predicting.set(true);
        spawn_in_view(async move {
            let r = studio.client.predict(vec![(t, (!p.trim().is_empty()).then_some(p))]).await;
            predicting.set(false);
            prediction.set(Some(r.map(|(labels, mut rows)| (labels, rows.pop().unwrap_or_default()))));
        });
    };

    let batch = move |ev: web_sys::Event| {
        let input: HtmlInputElement = ev.target().expect("input").unchecked_into();
        let Some(files) = input.files().map(|f| file_list(&f)) else { return };
        input.set_value("");
        spawn_in_view(async move {
            let Some((name, bytes)) = read_files(files).await.pop() else { return };
            let table = match data::parse_table(&bytes, Some(&name)) {
                Ok(t) => t,
                Err(e) => {
                    batch_note.set(Some(Err(format!("{name}: {e}"))));
                    return;
                }
            };
            // The text column by name or content; labels, if any, are ignored.
            let guess = data::guess_columns(&table);
            let map = ColumnMap { text: guess.text, text_pair: guess.text_pair, label: None };
            let rows = match data::to_examples(&table, &map) {
                Ok(d) => d,
                Err(e) => {
                    batch_note.set(Some(Err(format!("{name}: {e}"))));
                    return;
                }
            };
            let n = rows.examples.len();
            let skipped = rows.skipped.len();
            batch_note.set(Some(Ok(format!("Predicting {n} rows of {name}…"))));
            let texts: Vec<(String, Option<String>)> = rows.examples.iter().map(|e| (e.text.clone(), e.text_pair.clone())).collect();
            let out_name = format!("{}-predictions.csv", name.rsplit_once('.').map_or(name.as_str(), |(a, _)| a));
            match studio.client.predict(texts).await {
                Ok((labels, probs)) => {
                    let mut header = vec!["line".to_string(), "text".to_string()];
                    if map.text_pair.is_some() {
                        header.push("text_pair".into());
                    }
                    header.push("predicted".into());
                    header.extend(labels.iter().map(|l| format!("p({l})")));
                    let body: Vec<Vec<String>> = rows
                        .examples
                        .iter()
                        .zip(&probs)
                        .map(|(e, p)| {
                            let mut row = vec![e.line.to_string(), e.text.clone()];
                            if map.text_pair.is_some() {
                                row.push(e.text_pair.clone().unwrap_or_default());
                            }
                            row.push(labels[bertbench_core::tasks::metrics::argmax(p)].clone());
                            row.extend(p.iter().map(|x| format!("{x:.6}")));
                            row
                        })
                        .collect();
                    download(&out_name, to_csv(&header, &body).as_bytes(), "text/csv");
                    batch_note.set(Some(Ok(format!(
                        "Predicted {n} rows; downloaded {out_name}.{}",
                        if skipped > 0 { format!(" {skipped} empty row(s) were skipped.") } else { String::new() }
                    ))));
                }
                Err(e) => batch_note.set(Some(Err(e))),
            }
        });
    };

    let import = crate::files::on_files(move |files| {
        if !files.is_empty() {
            studio.import(files);
        }
    });

    let is_tagger = move || studio.classifier.with(|c| c.as_ref().is_some_and(|(m, _)| m.spec.level == Level::Token));
    let is_qa = move || studio.classifier.with(|c| c.as_ref().is_some_and(|(m, _)| m.spec.level == Level::Span));
    let is_similarity = move || studio.classifier.with(|c| c.as_ref().is_some_and(|(m, _)| m.spec.level.similarity()));
    let is_choice = move || studio.classifier.with(|c| c.as_ref().is_some_and(|(m, _)| m.spec.level == Level::Choice));
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
                        // A question-answering run has no accuracy (its score is the next column's).
                        <td data-testid="run-accuracy">{match r.known_by {
                            KnownBy::Answers { .. } | KnownBy::Correlations { .. } => "—".to_string(),
                            _ => format!("{:.1}%", r.accuracy * 100.0),
                        }}</td>
                        <td>{match r.known_by {
                            KnownBy::Correlations { pearson, spearman } => format!("Spearman {spearman:.3} · Pearson {pearson:.3}"),
                            KnownBy::Answers { exact, f1 } => format!("EM {:.1}% · F1 {:.1}%", exact * 100.0, f1 * 100.0),
                            KnownBy::EntityF1(f) => format!("entity F1 {f:.3}"),
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
                <p class="muted small">"Train a classifier above, or import one exported earlier."</p>
            })}
            {metrics}
            {history}
            <h3>"Predict"</h3>
            <Show when=is_tagger>
                <super::tagging::TagPredict />
            </Show>
            <Show when=is_qa>
                <super::answering::QaPredict />
            </Show>
            <Show when=is_similarity>
                <super::similarity::SimilarityPredict />
            </Show>
            <Show when=is_choice>
                <super::choice::ChoicePredict />
            </Show>
            <div class:hidden=move || is_tagger() || is_qa() || is_similarity() || is_choice()>
            <div class="grid2">
                <input type="text" data-testid="predict-text" aria-label="Text to classify" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev)) />
                <input type="text" data-testid="predict-pair" aria-label="Second text of a pair" placeholder="second text (only for a pair classifier)" prop:value=move || pair.get() on:input=move |ev| pair.set(event_target_value(&ev)) />
            </div>
            <div class="row">
                <button data-testid="predict-button" on:click=predict prop:disabled=move || studio.classifier.get().is_none() || predicting.get()>"Predict"</button>
                <label class="filebutton secondary" class:disabled=move || studio.classifier.get().is_none()>"Predict a file (CSV download)"
                    <input type="file" accept=".csv,.tsv,.tab,.txt,.jsonl,.ndjson,.json,.gz" data-testid="batch-file"
                        prop:disabled=move || studio.classifier.get().is_none() on:change=batch />
                </label>
            </div>
            {move || prediction.get().map(|r| match r {
                Ok((labels, probs)) => prob_bars(labels, probs).into_any(),
                Err(e) => view! { <p class="banner warn small" data-testid="predict-error">{e}</p> }.into_any(),
            })}
            {move || batch_note.get().map(|r| match r {
                Ok(m) => view! { <p class="small" data-testid="batch-note">{m}</p> }.into_any(),
                Err(e) => view! { <p class="banner err small" data-testid="batch-error">{e}</p> }.into_any(),
            })}
            </div>
            <h3>"Take it away"</h3>
            <p class="hint">"Export a Hugging Face folder (zip): config.json with id2label, model.safetensors, the tokenizer. "
                "In Python, AutoModelForSequenceClassification.from_pretrained(folder) loads it and gives these probabilities: "
                "a classifier on [CLS] + pooler as it is (the family's own *ForSequenceClassification), any other choice with trust_remote_code=True (the folder carries "
                "modeling_bertbench.py, the few lines that compute its features; without trust_remote_code transformers refuses it "
                "rather than compute something else). A tagger loads with "
                "AutoModelForTokenClassification (on the last layer, as the family's own *ForTokenClassification), a question-answering "
                "model with AutoModelForQuestionAnswering (*ForQuestionAnswering), a similarity cross-encoder with AutoModelForSequenceClassification "
                "(one output, regression), a bi-encoder with sentence-transformers' SentenceTransformer(folder), a multiple-choice model with "
                "AutoModelForMultipleChoice (*ForMultipleChoice: classifier.weight of shape [1, hidden])."</p>
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

/// The exported zip's name: what the model does.
fn export_name(level: Option<Level>) -> &'static str {
    match level {
        Some(Level::Token) => "bertbench-tagger",
        Some(Level::Span) => "bertbench-qa",
        Some(Level::Score) => "bertbench-cross-encoder",
        Some(Level::Embedding) => "bertbench-bi-encoder",
        Some(Level::Choice) => "bertbench-multiple-choice",
        Some(Level::Sentence) | None => "bertbench-classifier",
    }
}
