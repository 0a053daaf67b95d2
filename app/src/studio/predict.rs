//! Studio step 3 for a classifier: the probabilities of a typed text (or pair), and a file of
//! texts predicted into a CSV download.

use bertbench_core::data::{self, ColumnMap};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;

use super::Studio;
use crate::files::{download, file_list, read_files};
use crate::widgets::spawn_in_view;

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

/// The labels a multi-label prediction gives a text: each whose own probability reaches the
/// threshold (the run's, else one half, as `transformers`' pipeline users threshold them).
fn chosen(labels: &[String], probs: &[f32], threshold: Option<f32>) -> String {
    let t = threshold.unwrap_or(0.5);
    labels.iter().zip(probs).filter(|(_, p)| **p >= t).map(|(l, _)| l.as_str()).collect::<Vec<_>>().join("; ")
}

/// Where a multi-label decision is drawn, said.
fn threshold_said(threshold: Option<f32>) -> String {
    match threshold {
        Some(t) => format!("At its threshold {t:.2} (chosen on validation by the run that trained it) or above"),
        None => "At 0.5 or above (it has no threshold of its own)".into(),
    }
}

fn prob_bars(labels: Vec<String>, probs: Vec<f32>, multi_label: bool, threshold: Option<f32>) -> impl IntoView {
    let note = multi_label.then(|| {
        let chosen = chosen(&labels, &probs, threshold);
        let chosen = if chosen.is_empty() { "none".to_string() } else { chosen };
        format!("Multi-label: each label's own probability (a sigmoid each; they need not add up to 1). {}: {chosen}.", threshold_said(threshold))
    });
    view! {
        {note.map(|n| view! { <p class="small muted" data-testid="prediction-note">{n}</p> })}
        <div class="bars" data-testid="prediction" data-multi-label=multi_label.to_string()>
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

/// A classifier's predict box: a text (and a second one for a pair), or a file of them.
#[component]
pub fn ClassifyPredict() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let text = RwSignal::new("What a wonderful, warm little film.".to_string());
    let pair = RwSignal::new(String::new());
    let prediction = RwSignal::new(None::<Result<(Vec<String>, Vec<f32>, bool, Option<f32>), String>>);
    let batch_note = RwSignal::new(None::<Result<String, String>>);
    let predicting = RwSignal::new(false);
    // What is shown belongs to the classifier that made it: another one (a model opened with
    // its own head, or none) clears it.
    Effect::new(move |_| {
        studio.classifier.track();
        prediction.set(None);
        batch_note.set(None);
    });

    let predict = move |_| {
        let t = text.get_untracked();
        let p = pair.get_untracked();
        predicting.set(true);
        spawn_in_view(async move {
            let r = studio.client.predict(vec![(t, (!p.trim().is_empty()).then_some(p))]).await;
            predicting.set(false);
            prediction.set(Some(r.map(|mut p| (p.labels, p.probs.pop().unwrap_or_default(), p.multi_label, p.threshold))));
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
                Ok(crate::protocol::Predictions { labels, probs, multi_label, threshold }) => {
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
                            // A multi-label head's labels at its threshold or above ("" for none).
                            row.push(if multi_label { chosen(&labels, p, threshold) } else { labels[bertbench_core::tasks::metrics::argmax(p)].clone() });
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

    view! {
        <div>
            <div class="grid2">
                <input type="text" data-testid="predict-text" aria-label="Text to classify" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev)) />
                <input type="text" data-testid="predict-pair" aria-label="Second text of a pair" placeholder="second text (only for a pair classifier)" prop:value=move || pair.get() on:input=move |ev| pair.set(event_target_value(&ev)) />
            </div>
            <div class="row">
                <button data-testid="predict-button" on:click=predict prop:disabled=move || studio.classifier.get().is_none() || predicting.get()>"Predict"</button>
                <label class="filebutton secondary" class:disabled=move || studio.classifier.get().is_none()>"Predict a file (CSV download)"
                    <input type="file" accept=".csv,.tsv,.tab,.txt,.jsonl,.ndjson,.json,.gz,.parquet" data-testid="batch-file"
                        prop:disabled=move || studio.classifier.get().is_none() on:change=batch />
                </label>
            </div>
            {move || prediction.get().map(|r| match r {
                Ok((labels, probs, multi_label, threshold)) => prob_bars(labels, probs, multi_label, threshold).into_any(),
                Err(e) => view! { <p class="banner warn small" data-testid="predict-error">{e}</p> }.into_any(),
            })}
            {move || batch_note.get().map(|r| match r {
                Ok(m) => view! { <p class="small" data-testid="batch-note">{m}</p> }.into_any(),
                Err(e) => view! { <p class="banner err small" data-testid="batch-error">{e}</p> }.into_any(),
            })}
        </div>
    }
}
