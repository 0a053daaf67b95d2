//! The studio's token-tagging mode (named entities with BIO tags): what to train, a tagged file
//! in (CoNLL columns or JSON Lines) with its report and preview, and a tagger's results: entity
//! precision/recall/F1 per type, the tag confusion, the sentences it got wrong with gold and
//! predicted spans, typed text tagged, a file tagged, all beside the classification mode's
//! training, export and import.

use std::sync::Arc;

use bertbench_core::data::{TaggedData, parse_tagged};
use bertbench_core::tasks::metrics::argmax;
use bertbench_core::tasks::classification::Level;
use bertbench_core::tasks::tagging::{LabelPieces, TaggedWord, TagsByLayer, entities};
use bertbench_core::train::memory;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;

use super::data_card::{DataCard, Example};
use super::held_out::{HeldOutChoice, HeldOutRead};
use super::task_state::TaskState;
use super::task::TaskPanel;
use super::{Studio, Task, recipe};
use crate::app::AppState;
use crate::files::{download, file_list, read_files};
use crate::runs::{RunData, RunSummary, TaggedRequest};
use crate::widgets::{confusion_matrix, scores_table};

/// The example for tagging, written for this project (`scripts/make_entities_example.py`).
pub const EXAMPLE_CONLL: &[u8] = crate::examples::ENTITIES_CONLL;

/// The files a tagging mode's pickers offer.
const TAG_FILES: &str = ".conll,.txt,.tsv,.iob,.bio,.jsonl,.json,.gz,.parquet";

/// The tagging mode's own state.
#[derive(Debug, Clone, Copy)]
pub struct TagState {
    /// The tagged file.
    pub tagged: RwSignal<Option<TaggedUpload>>,
    /// Which pieces of a word a tagger's loss reads.
    pub pieces: RwSignal<LabelPieces>,
}

impl TaskState for TagState {
    /// No file yet; the loss on each word's first piece.
    fn new() -> Self {
        Self { tagged: RwSignal::new(None), pieces: RwSignal::new(LabelPieces::default()) }
    }
}

/// The mode's own state in `studio`.
fn own(studio: Studio) -> TagState {
    studio.own()
}

/// The tagging task (a tag per word).
pub(super) struct Tagging;

impl TaskPanel for Tagging {
    fn export_note(&self) -> &'static str {
        "In Python, AutoModelForTokenClassification.from_pretrained(folder) loads it (on the last layer, as the family's own *ForTokenClassification; another layer with trust_remote_code=True) and tags as it does here."
    }

    fn run_label(&self, config: &bertbench_core::train::FineTuneConfig) -> String {
        format!("tagging · {}", recipe(config))
    }

    fn recipe_note(&self, _level: Level, _pairs: bool) -> &'static str {
        "full fine-tuning, batch 16, lr 1e-4, 5 epochs, chosen on real news text. On CoNLL-2003's dev split (2,000 training sentences, MiniLM) it gives entity F1 0.84, where the head alone on frozen features gives 0.58 (docs/performance.md). On the small built-in example the head alone does well (0.95 in seconds) and this recipe gives 0.92 in about a minute: real text needs the encoder to learn"
    }

    fn model_noun(&self, _level: Level) -> &'static str {
        "a tagger"
    }

    fn opened(&self, model: &str, meta: &bertbench_core::tasks::classification::ClassifierMeta) -> String {
        format!(
            "{model} carries a tagger ({} tags: {}): it tags words here now. Export it, or train on your tagged data for a new head on its encoder.",
            meta.labels.len(),
            meta.labels.join(", ")
        )
    }

    fn read_held_out(&self, _studio: Studio, _name: &str, bytes: &[u8]) -> Result<HeldOutRead, String> {
        let data = parse_tagged(bytes).map_err(|e| e.to_string())?;
        let count = format!("{} sentences", data.sentences.len());
        Ok(HeldOutRead::new(data, count))
    }

    fn choice(&self) -> (&'static str, &'static str) {
        (" a tag per word (named entities, BIO)", "task-tag")
    }

    fn data_panel(&self) -> AnyView {
        view! { <StudioTagDataPanel /> }.into_any()
    }

    fn has_data(&self, studio: Studio) -> bool {
        own(studio).tagged.with(Option::is_some)
    }

    fn epoch_examples(&self, studio: Studio) -> usize {
        let Some(t) = own(studio).tagged.get_untracked() else { return 0 };
        let n = t.data.sentences.len();
        n - ((studio.valid_fraction.get_untracked() * n as f32).round() as usize).clamp(1, n.max(2) - 1)
    }

    fn start(&self, studio: Studio, state: AppState) -> Result<(), String> {
        studio.start_tagging(state)
    }

    fn open_file(&self, studio: Studio, state: AppState, name: String, bytes: Vec<u8>) {
        studio.set_tagged_file(state, name, bytes);
    }

    fn results(&self, summary: Arc<RunSummary>, _: Studio) -> AnyView {
        tag_results(summary).into_any()
    }

    fn predict(&self) -> AnyView {
        view! { <TagPredict /> }.into_any()
    }

    fn export_name(&self, _: Level) -> &'static str {
        "bertbench-tagger"
    }
}

/// A tagged file, read and measured against the model's tokenizer.
#[derive(Debug, Clone)]
pub struct TaggedUpload {
    /// The file's name.
    pub name: String,
    /// Its sentences and tags.
    pub data: Arc<TaggedData>,
    /// Pieces of the longest sentence, specials included (`None` until counted).
    pub longest: Option<usize>,
    /// Sentences longer than the run's length (their last words are cut off).
    pub over_max_len: usize,
}

impl Studio {
    /// Reads a tagged training file; a file that cannot be read leaves the data as it was.
    pub fn set_tagged_file(self, state: AppState, name: String, bytes: Vec<u8>) {
        match parse_tagged(&bytes) {
            Ok(data) => {
                self.data_error.set(None);
                self.save_dataset(Task::Tag, name.clone(), bytes.clone(), data.sentences.len());
                own(self).tagged.set(Some(TaggedUpload { name, data: Arc::new(data), longest: None, over_max_len: 0 }));
                self.count_tagged(state);
            }
            Err(e) => self.data_error.set(Some(format!("{name}: {e} The data you had is kept."))),
        }
    }

    /// Counts each sentence's pieces with the model's tokenizer (in chunks, yielding).
    pub fn count_tagged(self, state: AppState) {
        let Some(upload) = own(self).tagged.get_untracked() else { return };
        let max_len = self.max_len.get_untracked();
        spawn_local(async move {
            let Some(engine) = state.engine() else { return };
            let tok = &engine.bert.tokenizer;
            let counts = super::data_card::token_counts(&upload.data.sentences, |s| tok.encode(&s.words.join(" "))).await;
            let (longest, over) = (counts.iter().copied().max().unwrap_or(0), counts.iter().filter(|&&n| n > max_len).count());
            own(self).tagged.update(|t| {
                if let Some(t) = t.as_mut().filter(|t| Arc::ptr_eq(&t.data, &upload.data)) {
                    t.longest = Some(longest);
                    t.over_max_len = over;
                }
            });
        });
    }

    /// Starts a tagging run on the loaded sentences.
    fn start_tagging(self, state: AppState) -> Result<(), String> {
        let upload = own(self).tagged.get_untracked().ok_or("load a tagged file first")?;
        let engine = state.engine().ok_or("the model is still loading")?;
        let mut config = self.config.get_untracked();
        config.features = bertbench_core::tasks::classification::FeatureSpec { layers: config.features.layers, ..bertbench_core::tasks::classification::FeatureSpec::tokens() };
        let trains_encoder = config.mode != bertbench_core::train::TrainMode::HeadOnly;
        memory::check_memory(engine.bert.report.num_params as u64, trains_encoder, memory::WASM_MEMORY).map_err(|e| format!("{}: {e}", engine.model_id))?;
        let data = &upload.data;
        let tagged = match self.held_out_file().and_then(|h| h.data::<TaggedData>()) {
            Some(valid) => {
                if let Some(tag) = valid.tags.iter().find(|t| !data.tags.contains(t)) {
                    return Err(format!("the validation file has the tag {tag}, which the training file never uses; the model could not predict it"));
                }
                TaggedRequest { train: data.sentences.clone(), valid: valid.sentences.clone(), pieces: own(self).pieces.get_untracked() }
            }
            None => {
                let split = data.split(self.valid_fraction.get_untracked(), self.split_seed.get_untracked()).map_err(|e| e.to_string())?;
                let pick = |idx: &[usize]| idx.iter().map(|&i| data.sentences[i].clone()).collect::<Vec<_>>();
                TaggedRequest { train: pick(&split.train), valid: pick(&split.valid), pieces: own(self).pieces.get_untracked() }
            }
        };
        let label = Tagging.run_label(&config);
        self.launch(&engine, label, config, data.tags.clone(), self.max_len.get_untracked(), |r| r.data = RunData::Tagged(tagged))
    }
}

/// Step 1 in tagging mode: a tagged file, its report and preview.
#[component]
pub fn StudioTagDataPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    // Re-count whenever the model (tokenizer) changes.
    Effect::new(move |_| {
        state.generation.get();
        studio.max_len.get();
        studio.count_tagged(state);
    });
    let report = move || {
        own(studio).tagged.get().map(|u| {
            let d = u.data.clone();
            let words: usize = d.sentences.iter().map(|s| s.words.len()).sum();
            let mut per_type: Vec<(String, usize)> = d.entity_types().into_iter().map(|t| (t, 0)).collect();
            for s in &d.sentences {
                for e in entities(&s.tags) {
                    if let Some(c) = per_type.iter_mut().find(|(t, _)| *t == e.kind) {
                        c.1 += 1;
                    }
                }
            }
            let max_len = studio.max_len.get_untracked();
            view! {
                <div data-testid="tag-report">
                    <div class="facts">
                        <div><b data-testid="tag-sentences">{d.sentences.len()}</b>"sentences"</div>
                        <div><b>{words}</b>"words"</div>
                        <div><b data-testid="tag-count">{d.tags.len()}</b>"tags"</div>
                        <div><b>{u.longest.map_or("…".to_string(), |n| n.to_string())}</b>"pieces in the longest"</div>
                        <div><b data-testid="tag-over-max-len">{u.over_max_len}</b>{format!("longer than {max_len} (last words cut off)")}</div>
                    </div>
                    <p class="small muted">{format!("{} · {} · tags: {}", u.name, d.format.label(), d.tags.join(", "))}</p>
                    <div class="bars">
                        {per_type.into_iter().map(|(t, n)| view! {
                            <div class="bar-row"><span class="bar-label">{t}</span><span class="bar-value">{format!("{n} entities")}</span></div>
                        }).collect_view()}
                    </div>
                    {d.warnings.iter().map(|w| view! { <p class="banner warn small" data-testid="data-warning">{w.clone()}</p> }).collect_view()}
                    <div class="tagged-preview" data-testid="tag-preview">
                        {d.sentences.iter().take(6).map(|s| view! { <p>{spans(&s.words, &s.tags)}</p> }).collect_view()}
                    </div>
                </div>
            }
        })
    };
    view! {
        <DataCard task=Task::Tag testid="studio-tag-data" title="1 · Tagged data"
            hint=concat!("A word and its tag per line, a blank line between sentences (CoNLL, as in CoNLL-2003), or JSON Lines ",
                "with \"tokens\" and \"tags\" lists (or the Hub's Parquet, its tag names kept), or a \"text\" with \"entities\" as character spans (doccano, Prodigy, Label Studio's JSON exports). Tags are BIO: B-PER starts a ",
                "person's name, I-PER continues it, O is outside any entity. Read in this tab, never uploaded.")
            accept=TAG_FILES file_testid="tag-file"
            example=Example { testid: "use-tag-example", label: "use the example (people, places, organisations)" }
            on_file=move |(name, bytes)| studio.set_tagged_file(state, name, bytes)
            on_example=move |()| studio.set_tagged_file(state, "entities.conll (built-in example)".into(), EXAMPLE_CONLL.to_vec())>
            {report}
            <div class="row">
                <HeldOutChoice task=Task::Tag prefix="tag" unit="of sentences held out" accept=TAG_FILES />
                <label class="small" title="The BERT paper scores each word at its first piece and ignores the rest; reading every piece teaches the later pieces I- tags">
                    "The loss reads "
                    <select data-testid="tag-pieces" on:change=move |ev| own(studio).pieces.set(if event_target_value(&ev) == "all" { LabelPieces::All } else { LabelPieces::First })>
                        <option value="first" selected=move || own(studio).pieces.get() == LabelPieces::First>"each word's first piece"</option>
                        <option value="all" selected=move || own(studio).pieces.get() == LabelPieces::All>"every piece"</option>
                    </select>
                </label>
            </div>
        </DataCard>
    }
}

/// Words with their entities marked: each entity a `<mark>` with its type (as text, not only as
/// colour), other words plain.
fn spans(words: &[String], tags: &[String]) -> Vec<AnyView> {
    let found = entities(tags);
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if let Some(e) = found.iter().find(|e| e.start == i) {
            let text = words[e.start..e.end].join(" ");
            out.push(view! { <mark class=format!("ent ent-{}", e.kind.to_lowercase()) data-type=e.kind.clone()>{text}<sub>{e.kind.clone()}</sub></mark>" " }.into_any());
            i = e.end;
        } else {
            out.push(view! { <span>{format!("{} ", words[i])}</span> }.into_any());
            i += 1;
        }
    }
    out
}

/// A tagger's validation results: entities by type, word accuracy, the tag confusion, the
/// sentences it got wrong.
pub fn tag_results(s: Arc<RunSummary>) -> impl IntoView {
    let m = s.metrics.clone();
    let e = s.scores.entities().cloned();
    let tags = s.meta.labels.clone();
    view! {
        <div data-testid="tag-results">
            <div class="facts">
                {e.as_ref().map(|e| view! {
                    <div><b data-testid="entity-f1">{format!("{:.3}", e.f1)}</b>"entity F1 (exact spans)"</div>
                    <div><b>{format!("{:.3} / {:.3}", e.precision, e.recall)}</b>"precision / recall"</div>
                    <div><b>{e.support}</b>"entities in validation"</div>
                })}
                <div><b data-testid="word-accuracy">{format!("{:.1}%", m.accuracy * 100.0)}</b>"words tagged right"</div>
                <div><b>{s.meta.spec.label()}</b>"features"</div>
            </div>
            {e.map(|e| scores_table(["entity type", "entities"], &e.per_type, "per-type"))}
            <details>
                <summary>"Tag confusion (words)"</summary>
                <div class="scroll-x">
                    {confusion_matrix(&tags, &m.confusion, "tag-confusion")}
                </div>
            </details>
            <details data-testid="tag-mistakes">
                <summary>{format!("Validation sentences with a wrong tag ({}), most wrong tags first", s.mistakes.tags().len())}</summary>
                <table class="plain">
                    <tr><th>"line"</th><th>"true entities"</th><th>"predicted entities"</th></tr>
                    {s.mistakes.tags().iter().take(200).map(|x| {
                        let predicted: Vec<String> = x.predicted.iter().map(|t| if t.is_empty() { "O".to_string() } else { t.clone() }).collect();
                        view! { <tr><td>{x.line}</td><td>{spans(&x.words, &x.gold)}</td><td>{spans(&x.words, &predicted)}</td></tr> }
                    }).collect_view()}
                </table>
            </details>
        </div>
    }
}

/// Typed text tagged, and a text file tagged line by line (downloaded as CoNLL columns).
#[component]
pub fn TagPredict() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let text = RwSignal::new("Maria Lopez flew from Paris to Nairobi to meet Greenpeace.".to_string());
    let result = RwSignal::new(None::<Result<(Vec<String>, Vec<TaggedWord>), String>>);
    let by_layer = RwSignal::new(None::<Result<(Vec<String>, TagsByLayer), String>>);
    let note = RwSignal::new(None::<Result<String, String>>);
    let busy = RwSignal::new(false);
    // Answers so far, shown as `data-answer`: a test sees a new answer even when it is the same.
    let answers = RwSignal::new(0u32);
    let tag = move |_| {
        let t = text.get_untracked();
        busy.set(true);
        crate::widgets::spawn_in_view(async move {
            let r = studio.client.tag(vec![t]).await;
            busy.set(false);
            answers.update(|n| *n += 1);
            result.set(Some(r.map(|(tags, mut texts)| (tags, texts.pop().unwrap_or_default()))));
        });
    };
    let layers = move |_| {
        let t = text.get_untracked();
        busy.set(true);
        crate::widgets::spawn_in_view(async move {
            let r = studio.client.tag_layers(t).await;
            busy.set(false);
            by_layer.set(Some(r));
        });
    };
    let batch = move |ev: web_sys::Event| {
        let input: HtmlInputElement = ev.target().expect("input").unchecked_into();
        let Some(files) = input.files().map(|f| file_list(&f)) else { return };
        input.set_value("");
        crate::widgets::spawn_in_view(async move {
            let Some((name, bytes)) = read_files(files).await.pop() else { return };
            let text = match bertbench_core::data::decode(&bytes) {
                Ok(d) => d.text,
                Err(e) => return note.set(Some(Err(format!("{name}: {e}")))),
            };
            let lines: Vec<String> = text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
            if lines.is_empty() {
                return note.set(Some(Err(format!("{name}: no text in it (one sentence per line)"))));
            }
            note.set(Some(Ok(format!("Tagging {} lines of {name}…", lines.len()))));
            match studio.client.tag(lines).await {
                Ok((_, texts)) => {
                    let mut out = String::new();
                    for words in &texts {
                        for w in words {
                            out.push_str(&format!("{}\t{}\n", w.word, w.tag.as_deref().unwrap_or("O")));
                        }
                        out.push('\n');
                    }
                    let out_name = format!("{}-tagged.conll", name.rsplit_once('.').map_or(name.as_str(), |(a, _)| a));
                    download(&out_name, out.as_bytes(), "text/plain");
                    note.set(Some(Ok(format!("Tagged {} lines; downloaded {out_name} (a word and its tag per line).", texts.len()))));
                }
                Err(e) => note.set(Some(Err(e))),
            }
        });
    };
    view! {
        <div class="grid2">
            <input type="text" data-testid="tag-text" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev)) />
            <div class="row">
                <button data-testid="tag-button" on:click=tag prop:disabled=move || busy.get()>"Tag the words"</button>
                <button class="secondary" data-testid="tag-layers-button" on:click=layers prop:disabled=move || busy.get()
                    title="The tagger's head, trained on the last layer, applied to every layer's vectors: from which layer on its reading of each word gives the tag">"…read at every layer"</button>
                <label class="filebutton secondary">"Tag a text file (one sentence per line)"
                    <input type="file" accept=".txt,.csv,.gz" data-testid="tag-batch-file" on:change=batch />
                </label>
            </div>
        </div>
        {move || result.get().map(|r| match r {
            Ok((tags, words)) => view! { <div data-testid="tag-answer" data-answer=answers.get_untracked()>{tagged_words(tags, words)}</div> }.into_any(),
            Err(e) => view! { <p class="banner warn small" data-testid="predict-error">{e}</p> }.into_any(),
        })}
        {move || by_layer.get().map(|r| match r {
            Ok((tags, layers)) => layer_table(tags, layers).into_any(),
            Err(e) => view! { <p class="banner warn small" data-testid="tag-layers-error">{e}</p> }.into_any(),
        })}
        {move || note.get().map(|r| match r {
            Ok(m) => view! { <p class="small" data-testid="batch-note">{m}</p> }.into_any(),
            Err(e) => view! { <p class="banner err small" data-testid="batch-error">{e}</p> }.into_any(),
        })}
    }
}

/// The tag each layer's vectors would get from the tagger's head: a row per layer, a column per
/// word, the tag written in each cell (shaded by its probability, coloured by entity type).
fn layer_table(tags: Vec<String>, layers: TagsByLayer) -> impl IntoView {
    let last = layers.probs.len().saturating_sub(1);
    view! {
        <div class="scroll-x">
            <p class="small muted">"The tagger's head, trained on the last layer, reads each layer's vectors (the last row is its answer). The layer where a word's tag first appears is where that head's reading starts to work, not where the encoder first holds the tag: a lower layer may hold it in a form this head was never trained on. A probe trained on each layer (lesson 8) answers that."</p>
            <table class="plain small" data-testid="tag-layers">
                <tr><th>"layer"</th>{layers.words.iter().map(|w| view! { <th>{w.clone()}</th> }).collect_view()}</tr>
                {layers.probs.iter().enumerate().map(|(l, row)| view! {
                    <tr data-testid="tag-layer-row">
                        <th>{if l == 0 { "embeddings".to_string() } else if l == last { format!("{l} (output)") } else { l.to_string() }}</th>
                        {row.iter().map(|p| {
                            if p.is_empty() {
                                return view! { <td class="muted">"—"</td> }.into_any();
                            }
                            let best = argmax(p);
                            let tag = tags.get(best).cloned().unwrap_or_default();
                            let kind = tag.split_once('-').map(|(_, k)| k.to_lowercase()).unwrap_or_default();
                            view! {
                                <td class=format!("tag-cell ent-{kind}") style:opacity=format!("{:.2}", 0.35 + 0.65 * p[best])
                                    data-tag=tag.clone() title=format!("{tag} {:.3}", p[best])>{tag.clone()}</td>
                            }.into_any()
                        }).collect_view()}
                    </tr>
                }).collect_view()}
            </table>
        </div>
    }
}

/// The tagged words of a text: entities marked with their type, each word's tag probabilities
/// in its tooltip (and in `data-probs`).
fn tagged_words(tags: Vec<String>, words: Vec<TaggedWord>) -> impl IntoView {
    let names: Vec<String> = words.iter().map(|w| w.word.clone()).collect();
    let predicted: Vec<String> = words.iter().map(|w| w.tag.clone().unwrap_or_else(|| "O".into())).collect();
    view! {
        <div data-testid="tagged">
            <p class="tagged-text">{spans(&names, &predicted)}</p>
            <table class="plain small" data-testid="tagged-words">
                <tr><th>"word"</th><th>"tag"</th><th>"probability"</th><th>"next best"</th></tr>
                {words.into_iter().map(|w| {
                    let best = if w.probs.is_empty() { 0 } else { argmax(&w.probs) };
                    let mut order: Vec<usize> = (0..w.probs.len()).collect();
                    order.sort_by(|&a, &b| w.probs[b].total_cmp(&w.probs[a]));
                    let next = order.get(1).map(|&j| format!("{} {:.3}", tags[j], w.probs[j])).unwrap_or_default();
                    let title = tags.iter().zip(&w.probs).map(|(t, p)| format!("{t} {p:.3}")).collect::<Vec<_>>().join("\n");
                    view! {
                        <tr data-testid="tagged-word" data-tag=w.tag.clone().unwrap_or_default() data-probs=format!("{:?}", w.probs) title=title>
                            <td>{w.word.clone()}</td>
                            <td>{w.tag.clone().unwrap_or_else(|| "(cut off)".into())}</td>
                            <td>{w.probs.get(best).map(|p| format!("{p:.3}")).unwrap_or_default()}</td>
                            <td class="muted">{next}</td>
                        </tr>
                    }
                }).collect_view()}
            </table>
        </div>
    }
}
