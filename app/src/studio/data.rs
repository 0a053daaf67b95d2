//! Studio step 1: a labeled file in, columns mapped, checked before training.

use leptos::prelude::*;

use crate::app::AppState;
use super::data_card::{DataCard, Example};
use super::{EXAMPLE_CSV, Studio, Task};
use crate::files::on_files;

const PREVIEW_ROWS: usize = 8;

/// The files the classification mode's pickers offer.
const TABLE_FILES: &str = ".csv,.tsv,.tab,.txt,.jsonl,.ndjson,.json,.gz";

/// The data card (picker, drop zone, example), column mapping, preview and validation report.
#[component]
pub fn StudioDataPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();

    // A separate validation file (the training file comes through the data card).
    let on_valid = on_files(move |mut files| {
        if let Some((name, bytes)) = files.pop() {
            studio.set_file(state, name, bytes, true);
        }
    });

    // Re-check whenever the model (tokenizer) arrives or changes.
    Effect::new(move |_| {
        state.generation.get();
        if studio.upload.get_untracked().is_some() {
            studio.revalidate(state);
        }
    });

    let column_select = move |which: &'static str| {
        let options = move || {
            studio.upload.get().map(|u| {
                u.table.columns.iter().enumerate().map(|(i, c)| view! { <option value=i.to_string()>{c.clone()}</option> }).collect_view()
            })
        };
        let current = move || {
            let m = studio.columns.get();
            match which {
                "text" => m.text.to_string(),
                "pair" => m.text_pair.map(|i| i.to_string()).unwrap_or_default(),
                _ => m.label.map(|i| i.to_string()).unwrap_or_default(),
            }
        };
        let on_change = move |ev| {
            let v = event_target_value(&ev);
            let idx = v.parse::<usize>().ok();
            studio.columns.update(|m| match which {
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
        studio.upload.get().map(|u| {
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
                    <p class="small muted">{format!("{} rows in {} ({:?}{}).", t.rows.len(), u.name, t.format, if t.has_header { ", with a header row" } else { ", no header row" })}</p>
                    {t.decoded.clone().map(|d| view! { <p class="banner warn small" data-testid="data-decoded">{format!("The file was {d}; check that accented letters look right above.")}</p> })}
                </div>
            }
        })
    };

    let report = move || {
        studio.prepared.get().map(|p| {
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
                "as a spreadsheet or an editor saves it (UTF-8, UTF-16 or Windows-1252; gzipped too). ",
                "It is read in this tab and never uploaded anywhere.")
            accept=TABLE_FILES file_testid="data-file"
            example=Example { testid: "use-example", label: "use the example dataset" }
            on_file=move |(name, bytes)| studio.set_file(state, name, bytes, false)
            on_example=move |()| studio.set_file(state, "sentiment.csv (built-in example)".into(), EXAMPLE_CSV.to_vec(), false)>
            {move || studio.upload.get().is_some().then(|| view! {
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
                                prop:disabled=move || studio.valid_upload.get().is_some()
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
                        {move || studio.valid_upload.get().map(|v| view! {
                            <span class="small">{format!("validating on {} ({} rows) ", v.name, v.table.rows.len())}
                                <button class="secondary small" on:click=move |_| { studio.valid_upload.set(None); studio.revalidate(state); }>"use a split instead"</button>
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
