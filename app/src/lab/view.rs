//! The MLM lab: pretrain a tiny BERT on a corpus in the worker and watch it learn to fill in
//! the blank.

use std::io::Write;

use bertbench_core::bert::config::{BertConfig, Preset};
use bertbench_core::train::PretrainStep;
use bertbench_core::tasks::masking::{MaskCase, MaskingConfig, PairTask};
use bertbench_core::tasks::pretraining::MaskFill;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;

use super::compare::{self, RunsCompared};
use super::downstream::FineTuneEach;
use super::{Lab, LabRun};
use crate::app::{AppState, BackendStatus, CheckState, Tab};
use crate::compute::Latest;
use crate::files::{download, file_list, read_files};
use crate::runs::{Backend, LabVocab, scratch_config};
use crate::store::{Item, Kind};
use crate::widgets::{LineChart, ProgressBar, Series, ago, duration, human_count, size};


fn fills_view(fills: &[MaskFill]) -> impl IntoView + use<> {
    let parts: Vec<String> = fills
        .iter()
        .map(|f| f.top.iter().map(|(w, p)| format!("{w} {:.0}%", p * 100.0)).collect::<Vec<_>>().join(", "))
        .collect();
    view! { <span class="mono small">{parts.join(" | ")}</span> }
}

fn zip_folder(name: &str, files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (file, bytes) in files {
        zip.start_file(format!("{name}/{file}"), options).map_err(|e| e.to_string())?;
        zip.write_all(bytes).map_err(|e| e.to_string())?;
    }
    Ok(zip.finish().map_err(|e| e.to_string())?.into_inner())
}

/// The lab models saved in this browser (newest first): open one to see its run again and use
/// its model, or delete it.
/// Masking rates the lab offers: the share of tokens picked for prediction.
const MASK_RATES: [f64; 7] = [0.05, 0.10, 0.15, 0.20, 0.30, 0.40, 0.50];

/// What becomes of the picked tokens: ([MASK], random token, the rest kept) and its name.
const MASK_SPLITS: [(f64, f64, &str); 4] = [
    (0.8, 0.1, "80% [MASK], 10% random, 10% kept (BERT)"),
    (1.0, 0.0, "100% [MASK]"),
    (0.8, 0.0, "80% [MASK], 20% kept"),
    (0.5, 0.25, "50% [MASK], 25% random, 25% kept"),
];

/// The masking rule the preview shows, from the settings.
fn masking_rule(m: &MaskingConfig) -> String {
    let pct = |p: f64| format!("{:.0}%", p * 100.0);
    format!(
        "{} of the tokens are picked (never [CLS]/[SEP]); of those {} become [MASK], {} a random token, {} stay. The loss counts only the picked tokens.",
        pct(m.pick_prob),
        pct(m.mask_prob),
        pct(m.random_prob),
        pct((1.0 - m.mask_prob - m.random_prob).max(0.0))
    )
}

/// What an ELECTRA run will do, with the sizes of its two models.
fn electra_note(lab: Lab) -> String {
    let scratch = lab.continue_pretrained.get() || lab.share_layers.get();
    if scratch {
        return "ELECTRA trains a new model from scratch with each layer its own: pick a model size above and “each layer its own weights”.".into();
    }
    // The widths do not depend on the vocabulary.
    let sizes = scratch_config(&lab.preset.get(), false, lab.config.get().max_len, 1000).map(|c| {
        let g = bertbench_core::tasks::replaced_token::generator_config(&c);
        (c.hidden_size, g.hidden_size)
    });
    let (wide, narrow) = sizes.unwrap_or((0, 0));
    format!(
        "A generator {narrow} wide (the model is {wide}) fills the masked tokens with its own guesses; the model, the discriminator, reads the result \
         and learns at every token whether it was replaced, so its loss counts every token of a line where MLM's counts only the {:.0}% picked. \
         They share one embedding table. The probes show the generator's fills; the model kept, saved, exported and fine-tuned is the discriminator \
         (as in ELECTRA, the generator is dropped).",
        lab.config.get().masking.pick_prob * 100.0
    )
}

#[component]
fn SavedLabModels() -> impl IntoView {
    let state = expect_context::<AppState>();
    let lab = expect_context::<Lab>();
    let items = move || lab.saved.items.get().into_iter().filter(|i| i.kind == Kind::LabModel).collect::<Vec<Item>>();
    move || {
        let items = items();
        (!items.is_empty()).then(|| {
            let rows = items
                .into_iter()
                .map(|item| {
                    let (open_item, delete_item) = (item.clone(), item.clone());
                    view! {
                        <tr data-testid="lab-saved-item">
                            <td data-testid="lab-saved-name">{item.name.clone()}</td>
                            <td>{size(item.size)}</td>
                            <td>{ago(item.saved_ms)}</td>
                            <td>
                                <button class="secondary small" data-testid="lab-open-saved" on:click=move |_| lab.open_saved(state, open_item.clone())>"Open"</button>
                                " "
                                <button class="secondary small" data-testid="lab-delete-saved" on:click=move |_| lab.delete_saved(delete_item.clone())>"Delete"</button>
                            </td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <details class="small" data-testid="lab-saved" open=true>
                    <summary>"Lab models saved in this browser"</summary>
                    <table class="plain small">{rows}</table>
                </details>
            }
        })
    }
}

/// Corpus, model, training, probes, fill-mask and hand-over.
#[component]
pub fn LabPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let lab = expect_context::<Lab>();
    let client = lab.client;
    if lab.corpus.get_untracked().is_empty() {
        lab.use_builtin();
    }
    let message = RwSignal::new(None::<Result<String, String>>);
    let fill_text = RwSignal::new("the duck [MASK] in the pond.".to_string());
    let fill_result = RwSignal::new(None::<Result<Vec<MaskFill>, String>>);

    let upload = move |ev: web_sys::Event| {
        let input: HtmlInputElement = ev.target().expect("input").unchecked_into();
        let Some(files) = input.files().map(|f| file_list(&f)) else { return };
        input.set_value("");
        spawn_in_view(async move {
            let Some((name, bytes)) = read_files(files).await.pop() else { return };
            match String::from_utf8(bytes) {
                Ok(text) if text.lines().any(|l| !l.trim().is_empty()) => {
                    lab.corpus.set(text);
                    lab.corpus_name.set(name);
                    message.set(None);
                }
                Ok(_) => message.set(Some(Err(format!("{name} has no text; the corpus is unchanged")))),
                Err(_) => message.set(Some(Err(format!("{name} is not UTF-8 text; the corpus is unchanged")))),
            }
        });
    };


    // Only the newest fill shows: an older one may answer after it.
    let fills = Latest::new();
    let fill = move |_| {
        let text = fill_text.get_untracked();
        let ticket = fills.next();
        spawn_in_view(async move {
            let r = client.fill_mask(text).await;
            if fills.is(ticket) {
                fill_result.set(Some(r));
            }
        });
    };

    let hand_over = move |to_studio: bool| {
        message.set(Some(Ok("Loading the lab's model on the page…".into())));
        spawn_in_view(async move {
            match lab.load_on_page(state).await {
                Ok(()) => {
                    message.set(Some(Ok("The lab's model is now the page's model: every explorer view and the studio use it.".into())));
                    state.show(if to_studio { Tab::Studio } else { Tab::Explore });
                }
                Err(e) => message.set(Some(Err(e))),
            }
        });
    };

    let save = move |_| {
        spawn_in_view(async move {
            match client.lab_files().await.and_then(|files| zip_folder("bertbench-mlm", &files)) {
                Ok(zip) => download("bertbench-mlm.zip", &zip, "application/zip"),
                Err(e) => message.set(Some(Err(e))),
            }
        });
    };

    let running = move || matches!(lab.run.get(), LabRun::Running { .. });
    let vocab_size = move || match (lab.continue_pretrained.get(), lab.vocab.get()) {
        (false, LabVocab::Train(n)) => n,
        _ => state.engine().map(|e| e.bert.tokenizer.vocab_size()).unwrap_or(30522),
    };
    // The encoder a run from scratch builds (as the worker builds it), with layers shared or not.
    let scratch = move |preset: &str, shared: bool| scratch_config(preset, shared, lab.config.with(|c| c.max_len), vocab_size()).ok();
    let size_options = move || {
        let shared = lab.share_layers.get();
        Preset::ALL
            .into_iter()
            .take(4)
            .map(|p| {
                let name = p.name();
                let params = scratch(name, shared).map_or(0, |c| c.num_params(false) as usize);
                view! { <option value=name selected=move || lab.preset.get() == name>{format!("{name} from scratch ({} parameters)", human_count(params))}</option> }
            })
            .collect_view()
    };

    let model_config = move || -> Option<BertConfig> {
        state.generation.get();
        if lab.continue_pretrained.get() {
            return state.engine().map(|e| e.bert.config.clone());
        }
        scratch(&lab.preset.get(), lab.share_layers.get())
    };
    // Each choice with the parameters it gives at the chosen size: the same depth either way.
    let sharing_options = move || {
        let preset = lab.preset.get();
        let [own, shared] = [false, true].map(|s| scratch(&preset, s));
        let (Some(own), Some(shared)) = (own, shared) else { return None };
        let layers = own.num_hidden_layers;
        let count = |c: &BertConfig| human_count(c.num_params(false) as usize);
        Some(view! {
            <option value="own" selected=move || !lab.share_layers.get()>{format!("each of the {layers} layers its own weights (BERT): {} parameters", count(&own))}</option>
            <option value="shared" selected=move || lab.share_layers.get()>{format!("share one layer across all {layers} layers (ALBERT): {} parameters", count(&shared))}</option>
        })
    };
    let gpu_ok = move || {
        let BackendStatus { adapter, .. } = state.backend.get();
        adapter.is_some() && matches!(state.check.get(), CheckState::Done(r) if r.passed)
    };
    let estimate = move || {
        let config = model_config()?;
        let (seconds, measured) = lab.epoch_seconds(&config);
        let on = match lab.backend.get() { Backend::Cpu => "the CPU", Backend::WebGpu => "WebGPU" };
        let basis = if measured { "speed measured by the last run in this tab" } else { "speed measured for the README; a run here measures this machine" };
        Some(format!("≈ {} per epoch on {on} ({basis})", duration(seconds)))
    };
    let start = move |_| match lab.start(state, untrack(model_config)) {
        Ok(()) => message.set(None),
        Err(e) => message.set(Some(Err(e))),
    };

    let progress = move || {
        let steps = lab.steps.get();
        let (params, total) = lab.ready.get()?;
        let last = steps.last().copied();
        let done = last.map(|s| s.step).unwrap_or(0);
        let recent = &steps[steps.len().saturating_sub(20)..];
        let mean = recent.iter().map(|s| s.mlm_loss).sum::<f32>() / recent.len().max(1) as f32;
        let note = last.map(|s| {
            format!(
                "step {done} of {total} · epoch {:.2} · MLM loss {:.3} (mean of the last {} steps {mean:.3}) · accuracy {:.0}%{} · {} parameters",
                s.epoch,
                s.mlm_loss,
                recent.len(),
                s.mlm_accuracy * 100.0,
                s.pair_loss.map(|p| format!(" · pair loss {p:.3}")).unwrap_or_default(),
                human_count(params)
            )
        });
        Some(view! {
            <ProgressBar fraction=Signal::derive(move || Some(done as f64 / total.max(1) as f64)) label="Pretraining progress" />
            <p class="small muted" data-testid="lab-progress">{note}</p>
        })
    };

    let charts = move || {
        let steps = lab.steps.get();
        let kept = lab.compared.get();
        if steps.is_empty() && kept.is_empty() {
            return None;
        }
        // The current run's curves first, then those of the runs kept to compare (but its own).
        let current = lab.runs.get_value();
        let mlm = |s: &PretrainStep| Some(s.mlm_loss);
        let right = |s: &PretrainStep| Some(s.mlm_accuracy);
        let electra = steps.iter().any(|s| s.rtd_loss.is_some());
        let (mlm_name, right_name) = if electra {
            ("MLM loss (the generator)", "picked tokens the generator guessed right")
        } else {
            ("MLM loss", "picked tokens guessed right")
        };
        let mut losses = vec![Series { name: mlm_name.into(), color: "#4e79a7", points: compare::smooth(&steps, &mlm), dots: false }];
        if steps.iter().any(|s| s.pair_loss.is_some()) {
            losses.push(Series { name: "NSP/SOP loss".into(), color: "#f28e2b", points: compare::smooth(&steps, &|s| s.pair_loss), dots: false });
        }
        let mut accuracy = vec![Series { name: right_name.into(), color: "#59a14f", points: compare::smooth(&steps, &right), dots: false }];
        if electra {
            losses.push(Series { name: "replaced-token loss (the discriminator, every token)".into(), color: "#e15759", points: compare::smooth(&steps, &|s| s.rtd_loss), dots: false });
            accuracy.push(Series { name: "tokens the discriminator judged right".into(), color: "#e15759", points: compare::smooth(&steps, &|s| s.rtd_accuracy), dots: false });
            let changed = |s: &PretrainStep| Some(s.replaced as f32 / s.picked.max(1) as f32);
            accuracy.push(Series { name: "picked tokens the generator replaced".into(), color: "#b07aa1", points: compare::smooth(&steps, &changed), dots: false });
        }
        losses.extend(compare::overlay(&kept, current, "MLM loss", &mlm));
        accuracy.extend(compare::overlay(&kept, current, "accuracy", &right));
        Some(view! {
            <div class="grid2">
                <LineChart series=Signal::derive(move || losses.clone()) x_label="step" y_label="loss (mean of 10 steps)" testid="lab-loss" />
                <LineChart series=Signal::derive(move || accuracy.clone()) x_label="step" y_label="accuracy" y_range=(0.0, 1.0) testid="lab-accuracy" />
            </div>
        })
    };

    let preview = move || {
        let rows = lab.preview.get();
        (!rows.is_empty()).then(|| view! {
            <h3>"What the model sees"</h3>
            <p class="hint" data-testid="lab-preview-rule">{move || masking_rule(&lab.config.get().masking)}</p>
            <div data-testid="lab-preview">
                {rows.into_iter().map(|row| view! {
                    <div class="tokens">
                        {row.into_iter().map(|t| {
                            let class = match t.case {
                                Some(MaskCase::Mask) => "tok masked",
                                Some(MaskCase::Random) => "tok random",
                                Some(MaskCase::Keep) => "tok kept",
                                None => "tok",
                            };
                            let title = match t.case {
                                Some(MaskCase::Mask) => format!("{} → [MASK]", t.original),
                                Some(MaskCase::Random) => format!("{} → {} (random)", t.original, t.shown),
                                Some(MaskCase::Keep) => format!("{} (picked, kept)", t.original),
                                None => t.original.clone(),
                            };
                            view! { <div class=class title=title><span class="piece">{t.shown.clone()}</span></div> }
                        }).collect_view()}
                    </div>
                }).collect_view()}
            </div>
            <div class="legend"><span><i class="masked"></i>"[MASK]"</span><span><i class="random"></i>"random"</span><span><i class="kept"></i>"kept"</span></div>
        })
    };

    let probes = move || {
        let results = lab.probe_results.get();
        let first = results.first().cloned();
        let last = results.last().cloned()?;
        Some(view! {
            <h3>{format!("Probe sentences after {} steps", last.0)}</h3>
            {lab.steps.with(|s| s.iter().any(|s| s.rtd_loss.is_some())).then(|| view! {
                <p class="small muted">"In an ELECTRA run the generator fills these blanks: its guesses are what the discriminator learns to tell from the real tokens."</p>
            })}
            <table class="plain small" data-testid="lab-probes">
                <tr><th>"sentence"</th><th>"before training"</th><th>"now (top 5)"</th></tr>
                {last.1.iter().enumerate().map(|(i, (text, fills))| {
                    let before = first.as_ref().and_then(|f| f.1.get(i)).map(|(_, f)| fills_view(f));
                    view! { <tr data-testid="lab-probe"><td>{text.clone()}</td><td>{before}</td><td>{fills_view(fills)}</td></tr> }
                }).collect_view()}
            </table>
        })
    };

    let vocab_info = move || {
        lab.vocab_info.get().map(|(size, trained, sample)| view! {
            <p class="small muted" data-testid="lab-vocab">{
                let asked = match lab.vocab.get_untracked() { LabVocab::Train(n) if trained && n > size => format!(
                    " (asked for {n}: the trainer stops when no pair of pieces occurs twice more, so a small corpus gives fewer)"
                ), _ => String::new() };
                format!("{} vocabulary: {size} pieces{asked}. Some of them:", if trained { "Trained WordPiece" } else { "Pretrained" })
            }</p>
            <div class="tokens">{sample.into_iter().map(|p| view! { <div class="tok"><span class="piece">{p}</span></div> }).collect_view()}</div>
        })
    };

    view! {
        <section class="card" data-testid="lab-panel">
            <h2>"MLM lab: pretrain a tiny BERT"</h2>
            <p class="hint">"BERT learns language by guessing hidden words. Pick a corpus, build a vocabulary, and train a small model here in the page; the probe sentences show its guesses improve."</p>
            <SavedLabModels />
            {move || lab.storage_note.get().map(|m| match m {
                Ok(t) => view! { <p class="banner ok small" data-testid="lab-storage-note">{t}</p> }.into_any(),
                Err(t) => view! { <p class="banner err small" data-testid="lab-storage-note">{t}</p> }.into_any(),
            })}
            <h3>"1 · Corpus"</h3>
            <div class="row">
                <button class="secondary" data-testid="lab-builtin" on:click=move |_| lab.use_builtin()>"Built-in corpus"</button>
                <label class="filebutton small">"Upload a .txt file"<input type="file" accept=".txt,text/plain" data-testid="lab-file" on:change=upload /></label>
                <span class="small muted" data-testid="lab-corpus">{move || {
                    let lines = lab.corpus.with(|c| c.lines().filter(|l| !l.trim().is_empty()).count());
                    format!("{}: {lines} lines", lab.corpus_name.get())
                }}</span>
            </div>
            <h3>"2 · Model and vocabulary"</h3>
            <div class="row">
                <select data-testid="lab-model" aria-label="Model to pretrain" on:change=move |ev| {
                    let v = event_target_value(&ev);
                    lab.continue_pretrained.set(v == "continue");
                    if v != "continue" { lab.preset.set(v); }
                }>
                    {size_options}
                    <option value="continue">{move || {
                        state.generation.get();
                        let head = match state.engine().map(|e| e.mlm.is_ok()) {
                            Some(true) => "from its own MLM head",
                            Some(false) => "with a new MLM head: it has none",
                            None => "",
                        };
                        format!("continue pretraining the loaded model (domain adaptation) {head}").trim_end().to_string()
                    }}</option>
                </select>
                <Show when=move || !lab.continue_pretrained.get()>
                    <select data-testid="lab-sharing" aria-label="Layers: each its own, or one shared by all" on:change=move |ev| lab.share_layers.set(event_target_value(&ev) == "shared")>
                        {sharing_options}
                    </select>
                    <select data-testid="lab-vocab-choice" aria-label="Vocabulary" on:change=move |ev| lab.vocab.set(match event_target_value(&ev).as_str() {
                        "pretrained" => LabVocab::Pretrained,
                        v => LabVocab::Train(v.parse().unwrap_or(2000)),
                    })>
                        {[1000usize, 2000, 4000, 8000].into_iter().map(|n| view! {
                            <option value=n.to_string() selected=move || lab.vocab.get() == LabVocab::Train(n)>{format!("train a WordPiece vocabulary of {n}")}</option>
                        }).collect_view()}
                        <option value="pretrained">"the loaded model's vocabulary"</option>
                    </select>
                </Show>
            </div>
            <p class="small muted" data-testid="lab-estimate">{estimate}</p>
            <h3>"3 · Training"</h3>
            <div class="row">
                <label class="small muted" for="lab-pair">"Objective"</label>
                <select id="lab-pair" data-testid="lab-pair" on:change=move |ev| {
                    let value = event_target_value(&ev);
                    let task = match value.as_str() { "nsp" => Some(PairTask::Nsp), "sop" => Some(PairTask::Sop), _ => None };
                    lab.config.update(|c| {
                        c.pair_task = task;
                        c.replaced_token_detection = Some(value == "rtd");
                    });
                }>
                    <option value="none">"MLM only"</option>
                    <option value="nsp">"MLM + next-sentence prediction"</option>
                    <option value="sop">"MLM + sentence-order prediction"</option>
                    <option value="rtd">"replaced-token detection (ELECTRA)"</option>
                </select>
                {move || lab.config.get().electra().then(|| view! {
                    <p class="small muted" data-testid="lab-electra-note">{electra_note(lab)}</p>
                })}
                {move || (lab.config.get().pair_task == Some(PairTask::Nsp)).then(|| {
                    let n = lab.documents().len();
                    let note = if n > 1 {
                        format!("NSP's “not next” sentences come from another of the corpus's {n} documents, as in BERT.")
                    } else {
                        "This corpus is one document (no blank line), so NSP's “not next” sentences come from elsewhere in it; \
                         BERT took them from another document. Put a blank line between documents.".to_string()
                    };
                    view! { <p class="small muted" data-testid="lab-nsp-note">{note}</p> }
                })}
                <label class="small"><input type="checkbox" prop:checked=move || lab.config.get().dynamic_masking
                    on:change=move |ev| { let on = event_target_checked(&ev); lab.config.update(|c| c.dynamic_masking = on); } />" new mask every epoch (dynamic, as RoBERTa; off, each line keeps one mask for the whole run, where BERT made 10 masked copies of each)"</label>
                <label class="small muted" for="lab-mask-rate">"Masked"</label>
                <select id="lab-mask-rate" data-testid="lab-mask-rate" title="Too little masking makes few predictions per sequence (training is slow to pay off); too much leaves too little context to predict from"
                    on:change=move |ev| { if let Ok(p) = event_target_value(&ev).parse::<f64>() { lab.config.update(|c| c.masking.pick_prob = p); } }>
                    {MASK_RATES.iter().map(|&p| view! {
                        <option value=p.to_string() selected=move || (lab.config.get().masking.pick_prob - p).abs() < 1e-9>
                            {format!("{:.0}% of tokens{}", p * 100.0, if p == 0.15 { " (BERT)" } else { "" })}
                        </option>
                    }).collect_view()}
                </select>
                <label class="small muted" for="lab-mask-split">"of which"</label>
                <select id="lab-mask-split" data-testid="lab-mask-split"
                    on:change=move |ev| { if let Some(&(m, r, _)) = MASK_SPLITS.get(event_target_value(&ev).parse::<usize>().unwrap_or(0)) { lab.config.update(|c| { c.masking.mask_prob = m; c.masking.random_prob = r; }); } }>
                    {MASK_SPLITS.iter().enumerate().map(|(i, &(m, r, label))| view! {
                        <option value=i.to_string() selected=move || { let c = lab.config.get().masking; (c.mask_prob - m).abs() < 1e-9 && (c.random_prob - r).abs() < 1e-9 }>{label}</option>
                    }).collect_view()}
                </select>
                <label class="small muted" for="lab-epochs">"Epochs"</label>
                <input id="lab-epochs" type="number" min="1" max="200" class="short" data-testid="lab-epochs" prop:value=move || lab.config.get().epochs.to_string()
                    on:change=move |ev| { if let Ok(n) = event_target_value(&ev).parse::<usize>() { lab.config.update(|c| c.epochs = n.clamp(1, 200)); } } />
                <label class="small muted" for="lab-lr">"Learning rate"</label>
                <input id="lab-lr" type="number" step="any" class="short" data-testid="lab-lr" prop:value=move || lab.config.get().learning_rate.to_string()
                    on:change=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<f64>() { if v > 0.0 && v < 1.0 { lab.config.update(|c| c.learning_rate = v); } } } />
                <label class="small muted" for="lab-backend">"Train on"</label>
                <select id="lab-backend" data-testid="lab-backend" on:change=move |ev| lab.backend.set(if event_target_value(&ev) == "webgpu" { Backend::WebGpu } else { Backend::Cpu })>
                    <option value="cpu" selected=move || lab.backend.get() == Backend::Cpu>{move || client.cpu_label()}</option>
                    <option value="webgpu" prop:disabled=move || !gpu_ok() selected=move || lab.backend.get() == Backend::WebGpu>
                        {move || if gpu_ok() { "WebGPU" } else { "WebGPU (not available or failed its check)" }}
                    </option>
                </select>
            </div>
            <label class="field">"Probe sentences (one per line, each with [MASK])"</label>
            <textarea rows="4" data-testid="lab-probes-input" aria-label="Probe sentences, one per line, each with [MASK]" prop:value=move || lab.probes.get() on:input=move |ev| lab.probes.set(event_target_value(&ev))></textarea>
            <div class="row">
                <button data-testid="lab-start" on:click=start prop:disabled=move || { state.generation.get(); running() || !client.ready.get() || state.engine().is_none() }>"Start pretraining"</button>
                <Show when=running>
                    <button class="secondary" data-testid="lab-pause" on:click=move |_| client.pause(!matches!(lab.run.get_untracked(), LabRun::Running { paused: true }))>
                        {move || if matches!(lab.run.get(), LabRun::Running { paused: true }) { "Resume" } else { "Pause" }}
                    </button>
                    <button class="secondary" data-testid="lab-cancel" on:click=move |_| client.cancel()>"Stop (keep the model)"</button>
                </Show>
            </div>
            {move || message.get().map(|m| match m {
                Ok(t) => view! { <p class="banner ok small" data-testid="lab-message">{t}</p> }.into_any(),
                Err(t) => view! { <p class="banner err small" data-testid="lab-message">{t}</p> }.into_any(),
            })}
            {move || match lab.run.get() {
                LabRun::Failed(e) => Some(view! { <p class="banner err small" data-testid="lab-failed">{e}</p> }.into_any()),
                LabRun::Finished { cancelled, steps, seconds } => {
                    let tokens: usize = lab.steps.with_untracked(|v| v.iter().map(|s| s.tokens).sum());
                    let rate = if steps > 0 && seconds > 0.0 {
                        format!(" ({:.2} s per step, {} tokens/s)", seconds / steps as f64, human_count((tokens as f64 / seconds) as usize))
                    } else {
                        String::new()
                    };
                    Some(view! {
                        <p class="banner ok small" data-testid="lab-done">{format!("{} after {steps} steps in {seconds:.0} s{rate}.", if cancelled { "Stopped" } else { "Finished" })}</p>
                    }.into_any())
                }
                _ => None,
            }}
            {vocab_info}
            {progress}
            {charts}
            <RunsCompared fine_tune_each=ViewFn::from(|| view! { <FineTuneEach /> }) />
            {preview}
            {probes}
            <Show when=move || lab.has_model.get()>
                <h3>"4 · Use the model"</h3>
                <div class="row">
                    <input type="text" data-testid="lab-fill-input" aria-label="A sentence with [MASK] for the lab's model to fill in" prop:value=move || fill_text.get() on:input=move |ev| fill_text.set(event_target_value(&ev)) />
                    <button data-testid="lab-fill" on:click=fill>"Fill in [MASK]"</button>
                </div>
                {move || fill_result.get().map(|r| match r {
                    Ok(f) => view! { <p data-testid="lab-fill-result">{fills_view(&f)}</p> }.into_any(),
                    Err(e) => view! { <p class="banner warn small" data-testid="lab-fill-error">{e}</p> }.into_any(),
                })}
                <div class="row">
                    <button class="secondary" data-testid="lab-save" on:click=save>"Save as a Hugging Face folder (zip)"</button>
                    <button class="secondary" data-testid="lab-explore" on:click=move |_| hand_over(false)>"Explore it"</button>
                    <button class="secondary" data-testid="lab-to-studio" on:click=move |_| hand_over(true)>"Fine-tune it in the studio"</button>
                </div>
            </Show>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preview_states_the_masking_set() {
        assert_eq!(
            masking_rule(&MaskingConfig::new()),
            "15% of the tokens are picked (never [CLS]/[SEP]); of those 80% become [MASK], 10% a random token, 10% stay. The loss counts only the picked tokens."
        );
        let all = MaskingConfig::new().with_pick_prob(0.3).with_mask_prob(1.0).with_random_prob(0.0);
        assert!(masking_rule(&all).starts_with("30% of the tokens are picked (never [CLS]/[SEP]); of those 100% become [MASK], 0% a random token, 0% stay."));
        for (m, r, _) in MASK_SPLITS {
            assert!(MaskingConfig::new().with_mask_prob(m).with_random_prob(r).validate().is_ok());
        }
        assert!(MASK_RATES.iter().all(|&p| MaskingConfig::new().with_pick_prob(p).validate().is_ok()));
    }
}
