//! The embedding map: sentences or tokens at any layer, drawn in 2-D with PCA or t-SNE,
//! coloured by label or word, with hover, nearest neighbours, word senses, anisotropy by layer
//! and an Embedding Projector export.

use std::sync::Arc;

use bertbench_core::analysis::samples::{SENSES, TOPIC_SENTENCES, balanced_sample, labeled_lines};
use bertbench_core::analysis::translations::{self, Neighbours};
use bertbench_core::analysis::projection::{Method, TsneOptions, project, projector_tsv};
use leptos::prelude::*;

use crate::app::AppState;
use super::map_data::{Drawn, Embedded, Kind, MAX_POINTS, MAX_TEXTS, Source, compute_map, groups, neighbours};
use super::{PALETTE, highlighted};
use crate::compute::{Latest, claim};
use crate::fetch::yield_to_browser;
use crate::files::download;
use crate::studio::Studio;
use crate::widgets::{LineChart, Series, first_seen, now_ms, spawn_in_view};

/// The map panel: its texts and settings, the map drawn, the hovered and selected points, the
/// curves across layers and the export.
#[component]
pub fn MapPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    let source = RwSignal::new(Source::Typed);
    let typed = RwSignal::new(TOPIC_SENTENCES.to_string());
    let focus_word = RwSignal::new(String::new());
    let kind = RwSignal::new(Kind::Mean);
    let layer = RwSignal::new(usize::MAX);
    let method = RwSignal::new(Method::Pca);
    let zscore = RwSignal::new(false);
    let by_label = RwSignal::new(true);
    let embedded = RwSignal::new(None::<Arc<Embedded>>);
    let error = RwSignal::new(None::<String>);
    let progress = RwSignal::new(None::<(usize, usize)>);
    let cancel = RwSignal::new(false);
    let drawn = RwSignal::new(None::<Result<Drawn, String>>);
    let projecting = RwSignal::new(false);
    let hovered = RwSignal::new(None::<usize>);
    let selected = RwSignal::new(None::<usize>);
    let ticket = StoredValue::new(0u32);
    let requests = Latest::new();

    let pick_source = move |v: String| {
        let s = match v.as_str() {
            "dataset" => Source::Dataset,
            "translations" => Source::Translations,
            v if v.starts_with("sense-") => Source::Sense(v[6..].parse().unwrap_or(0)),
            _ => Source::Typed,
        };
        source.set(s);
        if s == Source::Translations {
            by_label.set(true);
        }
        match s {
            Source::Sense(i) => {
                focus_word.set(SENSES[i].word.to_string());
                kind.set(Kind::Word);
                by_label.set(true);
            }
            _ => {
                focus_word.set(String::new());
                if kind.get_untracked() == Kind::Word {
                    kind.set(Kind::Mean);
                }
            }
        }
    };

    let embed = move || {
        error.set(None);
        cancel.set(false);
        let request = requests.next();
        spawn_in_view(async move {
            // Gather the texts first (the dataset may need fetching).
            let (texts, labels): (Vec<String>, Vec<Option<String>>) = match source.get_untracked() {
                Source::Typed => labeled_lines(&typed.get_untracked()).into_iter().map(|(l, t)| (t, l)).unzip(),
                Source::Sense(i) => SENSES[i].sentences.iter().map(|(l, t)| (t.to_string(), Some(l.to_string()))).unzip(),
                Source::Translations => translations::sentences().into_iter().map(|(meaning, t)| (t.to_string(), Some(meaning.to_string()))).unzip(),
                Source::Dataset => match studio.labeled_data().await {
                    Ok((d, _)) => balanced_sample(&d, MAX_TEXTS)
                        .into_iter()
                        .map(|i| (d.examples[i].text.clone(), Some(d.examples[i].label.clone()).filter(|l| !l.is_empty())))
                        .unzip(),
                    Err(e) => {
                        error.set(Some(e));
                        return;
                    }
                },
            };
            if texts.len() < 2 {
                error.set(Some("Enter at least two sentences, one per line.".into()));
                return;
            }
            if texts.len() > MAX_TEXTS {
                error.set(Some(format!("{} sentences: the map embeds at most {MAX_TEXTS}. Remove some lines.", texts.len())));
                return;
            }
            let kind_now = kind.get_untracked();
            let word = focus_word.get_untracked().trim().to_string();
            if kind_now == Kind::Word && word.is_empty() {
                error.set(Some("Type the word to follow in “focus word”.".into()));
                return;
            }
            let Some(engine) = claim(state).await else { return };
            if !requests.is(request) {
                // A newer request (with the settings as they are now) has replaced this one.
                drop(engine);
                return;
            }
            let result = compute_map(
                &engine,
                texts,
                labels,
                kind_now,
                &word,
                |done, total| progress.set(Some((done, total))),
                // A closed view cancels (its signal is gone).
                move || cancel.try_get_untracked().unwrap_or(true),
            )
            .await;
            progress.set(None);
            drop(engine);
            match result {
                Ok(e) => {
                    let last = e.layers.len() - 1;
                    layer.update(|l| *l = (*l).min(last));
                    selected.set(None);
                    hovered.set(None);
                    embedded.set(Some(Arc::new(e)));
                }
                Err(e) if e == "cancelled" => error.set(Some("Cancelled; the previous map is kept.".into())),
                Err(e) => error.set(Some(e)),
            }
        });
    };

    // Re-embed whenever a model (re)loads, so every view shows the current model: once the map
    // has been on screen (its texts take a while; a page that just loaded answers first).
    let panel = NodeRef::<leptos::html::Section>::new();
    let seen = first_seen(panel);
    Effect::new(move |_| {
        if state.generation.get() > 0 && seen.get() {
            embed();
        }
    });

    // Re-project when the vectors, layer, method or z-scoring change. Only the newest request
    // runs: each waits a frame first, and stale ones then give up.
    Effect::new(move |_| {
        let (Some(e), l, m, z) = (embedded.get(), layer.get(), method.get(), zscore.get()) else { return };
        let mine = ticket.get_value() + 1;
        ticket.set_value(mine);
        projecting.set(true);
        spawn_in_view(async move {
            yield_to_browser().await;
            if ticket.get_value() != mine {
                return;
            }
            let l = l.min(e.layers.len() - 1);
            let vectors = e.vectors(l, z);
            let start = now_ms();
            let out = project(&vectors, m, TsneOptions::default()).map_err(|e| e.to_string()).map(|p| Drawn {
                points: p.points,
                explained: p.explained,
                perplexity: p.perplexity,
                method: m,
                layer: l,
                z,
                millis: now_ms() - start,
            });
            if ticket.get_value() == mine {
                drawn.set(Some(out));
                projecting.set(false);
            }
        });
    });

    // Linked views: the token selected in the explorer is the selected point, where the map
    // shows the tokens of its sentence.
    Effect::new(move |_| {
        let (Some(c), Some(e)) = (state.token.get(), embedded.get()) else { return };
        if e.kind != Kind::Tokens {
            return;
        }
        let text = if c.segment == 0 { state.sentence_a.get_untracked() } else { state.sentence_b.get_untracked() };
        if let Some(i) = e.points.iter().position(|p| e.texts[p.text] == text && p.chars == Some(c.chars)) {
            selected.set(Some(i));
        }
    });
    // A clicked point of the explored sentence selects its token in every view.
    let pick_point = move |i: usize| {
        selected.set(Some(i));
        let Some(e) = embedded.get_untracked() else { return };
        let Some(p) = e.points.get(i) else { return };
        if e.kind != Kind::Tokens {
            return;
        }
        for (segment, sentence) in [(0, state.sentence_a.get_untracked()), (1, state.sentence_b.get_untracked())] {
            if e.texts[p.text] == sentence {
                state.select_token(|_, t| t.type_id == segment && !t.special && Some(t.offsets) == p.chars, false);
                return;
            }
        }
    };
    // Maps the explored sentence's tokens (among the typed sentences), so a selected token has a point.
    let map_sentence = move |_| {
        let a = state.sentence_a.get_untracked();
        if !typed.with_untracked(|t| t.lines().any(|l| l.trim() == a.trim())) {
            typed.update(|t| *t = format!("{a}\n{t}"));
        }
        source.set(Source::Typed);
        focus_word.set(String::new());
        kind.set(Kind::Tokens);
        by_label.set(false);
        embed();
    };

    let export = move |_| {
        let (Some(e), Some(Ok(d))) = (embedded.get_untracked(), drawn.get_untracked()) else { return };
        let vectors = e.vectors(d.layer, d.z);
        let meta: Vec<Vec<String>> = e
            .points
            .iter()
            .map(|p| {
                vec![
                    e.texts[p.text].clone(),
                    e.label_of(p).unwrap_or("").to_string(),
                    p.word.clone().unwrap_or_default(),
                ]
            })
            .collect();
        match projector_tsv(&vectors, &["text", "label", "token"], &meta) {
            Ok((v, m)) => {
                download(&format!("vectors-layer{}.tsv", d.layer), v.as_bytes(), "text/tab-separated-values");
                download(&format!("metadata-layer{}.tsv", d.layer), m.as_bytes(), "text/tab-separated-values");
            }
            Err(err) => error.set(Some(err.to_string())),
        }
    };

    let scatter = move || {
        let e = embedded.get()?;
        let d = match drawn.get()? {
            Ok(d) => d,
            Err(err) => return Some(view! { <p class="banner err small" data-testid="map-error">{err}</p> }.into_any()),
        };
        if d.points.len() != e.points.len() {
            return None;
        }
        let (group, legend) = groups(&e, by_label.get() && e.labels.iter().any(Option::is_some));
        let (w, h, pad) = (620.0f32, 420.0f32, 14.0f32);
        let (mut x0, mut x1, mut y0, mut y1) = (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
        for [x, y] in &d.points {
            (x0, x1, y0, y1) = (x0.min(*x), x1.max(*x), y0.min(*y), y1.max(*y));
        }
        let (sx, sy) = ((x1 - x0).max(1e-9), (y1 - y0).max(1e-9));
        let px = move |x: f32| pad + (x - x0) / sx * (w - 2.0 * pad);
        let py = move |y: f32| h - pad - (y - y0) / sy * (h - 2.0 * pad);
        let axes = match (d.method, d.explained) {
            (Method::Pca, Some([a, b])) => format!("PCA: the axes hold {:.0}% and {:.0}% of the variance", a * 100.0, b * 100.0),
            _ => format!("t-SNE (perplexity {:.0}): neighbourhoods are kept, distances between clusters mean little", d.perplexity.unwrap_or(0.0)),
        };
        let mut places: Vec<(i64, i64)> = d.points.iter().map(|[x, y]| ((px(*x) * 10.0) as i64, (py(*y) * 10.0) as i64)).collect();
        places.sort_unstable();
        places.dedup();
        let hidden = d.points.len() - places.len();
        let overlap = if hidden > 0 {
            format!(" · {hidden} points lie exactly on others (identical vectors: with no context, the same word at the same position)")
        } else {
            String::new()
        };
        let caption = format!(
            "{} points ({}) from {} at layer {}{} · {} · drawn in {:.0} ms{overlap}",
            d.points.len(),
            match e.kind {
                Kind::Tokens => "tokens",
                Kind::Word => "the focus word",
                Kind::Cls => "[CLS] vectors",
                Kind::Mean => "mean-pooled sentences",
            },
            e.model,
            d.layer,
            if d.z { ", z-scored" } else { "" },
            axes,
            d.millis,
        );
        let points = d.points.clone();
        Some(view! {
            <div>
                <p class="small muted" data-testid="map-caption">{caption}</p>
                <svg class="scatter" data-testid="map" data-method=d.method.label() data-layer=d.layer.to_string()
                    viewBox=format!("0 0 {w} {h}") role="img" on:mouseleave=move |_| hovered.set(None)>
                    {points.iter().enumerate().map(|(i, [x, y])| {
                        let color = legend[group[i]].1;
                        view! {
                            <circle data-testid="map-point" cx=px(*x) cy=py(*y)
                                r=move || if selected.get() == Some(i) { "7" } else if hovered.get() == Some(i) { "6" } else { "4.5" }
                                fill=color class:picked=move || selected.get() == Some(i)
                                on:mouseenter=move |_| hovered.set(Some(i))
                                on:click=move |_| pick_point(i) />
                        }
                    }).collect_view()}
                </svg>
                <div class="legend">
                    {legend.iter().take(PALETTE.len() + 1).enumerate().map(|(i, (name, color))| {
                        let name = if i == PALETTE.len() { "other".to_string() } else { name.clone() };
                        view! { <span><i style:background=*color></i>{name}</span> }
                    }).collect_view()}
                </div>
            </div>
        }.into_any())
    };

    let hover_box = move || {
        let e = embedded.get()?;
        let i = hovered.get().or(selected.get())?;
        let p = e.points.get(i)?;
        Some(view! {
            <p class="hoverbox" data-testid="map-hover">
                {e.label_of(p).map(|l| view! { <span class="badge">{l.to_string()}</span>" " })}
                {highlighted(&e.texts[p.text], p.chars)}
            </p>
        })
    };

    let neighbour_list = move || {
        let e = embedded.get()?;
        let i = selected.get()?;
        let Some(Ok(d)) = drawn.get() else { return None };
        let vectors = e.vectors(d.layer, d.z);
        let near = neighbours(&vectors, i, 8);
        let p = e.points.get(i)?;
        Some(view! {
            <div data-testid="map-neighbours">
                <h3>{format!("Nearest to point {} at layer {} (cosine in all {} dimensions)", i + 1, d.layer, vectors[0].len())}</h3>
                <p class="small">{highlighted(&e.texts[p.text], p.chars)}</p>
                <table class="plain">
                    <tr><th>"cosine"</th><th>"label"</th><th>"text"</th></tr>
                    {near.into_iter().map(|(j, c)| {
                        let q = &e.points[j];
                        view! {
                            <tr data-testid="neighbour">
                                <td class="mono">{format!("{c:.3}")}</td>
                                <td>{e.label_of(q).unwrap_or("").to_string()}</td>
                                <td>{highlighted(&e.texts[q.text], q.chars)}</td>
                            </tr>
                        }
                    }).collect_view()}
                </table>
            </div>
        })
    };

    let curves = move || {
        let e = embedded.get()?;
        let x = |l: usize| l as f64;
        let aniso = vec![
            Series { name: "raw".into(), color: "#4e79a7", points: e.anisotropy.iter().enumerate().map(|(l, a)| (x(l), a.0 as f64)).collect(), dots: true },
            Series { name: "z-scored".into(), color: "#f28e2b", points: e.anisotropy.iter().enumerate().map(|(l, a)| (x(l), a.1 as f64)).collect(), dots: true },
        ];
        let centroid = e.centroid.clone().map(|c| {
            vec![Series {
                name: "nearest-centroid accuracy (leave one out)".into(),
                color: "#59a14f",
                points: c.iter().enumerate().filter(|(_, a)| a.is_finite()).map(|(l, a)| (x(l), *a as f64)).collect(),
                dots: true,
            }]
        });
        let sense_text = e.centroid.as_ref().map(|c| {
            let best = c.iter().enumerate().filter(|(_, a)| a.is_finite()).max_by(|a, b| a.1.total_cmp(b.1));
            match best {
                Some((l, a)) => format!(
                    "Each point is given the label whose centroid (of the other points) is closest. Layer 0 is the input embedding (the word and its position, no context): it scores {:.0}%. The best layer is {l}, at {:.0}%.",
                    c[0] * 100.0, a * 100.0
                ),
                None => String::new(),
            }
        });
        Some(view! {
            <div class="grid2">
                <div>
                    <h3>"Anisotropy by layer"</h3>
                    <p class="hint">"Mean cosine between random pairs of these vectors. Far above 0 means they all point in a similar direction (a known trait of BERT), so raw cosines overstate similarity; z-scoring each dimension removes most of it."</p>
                    <LineChart series=Signal::derive(move || aniso.clone()) x_label="layer" y_label="mean cosine" testid="map-anisotropy" />
                </div>
                {centroid.map(|c| view! {
                    <div>
                        <h3>"Labels by layer"</h3>
                        <p class="hint">{sense_text.clone()}</p>
                        <LineChart series=Signal::derive(move || c.clone()) x_label="layer" y_label="accuracy" y_range=(0.0, 1.0) testid="map-centroid" />
                    </div>
                })}
            </div>
        })
    };

    let note = move || {
        let e = embedded.get()?;
        let mut parts = Vec::new();
        if e.missing_word > 0 {
            parts.push(format!("{} text(s) do not contain the focus word and are left out.", e.missing_word));
        }
        if e.over_cap > 0 {
            parts.push(format!("{} more points exist; the map draws the first {MAX_POINTS}.", e.over_cap));
        }
        parts.push(format!("Embedded {} texts in {:.1} s ({}).", e.texts.len(), e.millis / 1000.0, e.computed_on));
        Some(view! { <p class="small muted" data-testid="map-note" data-computed-on=e.computed_on.clone()>{parts.join(" ")}</p> })
    };

    // For the translations: where each sentence's nearest neighbour lies at the drawn layer, and
    // what that says (sentence vectors only; a token map has other points).
    let translations_note = move || {
        let (e, Some(Ok(d))) = (embedded.get()?, drawn.get()) else { return None };
        let sentences: Vec<&str> = translations::sentences().into_iter().map(|(_, t)| t).collect();
        if !matches!(e.kind, Kind::Mean | Kind::Cls) || e.texts.iter().map(String::as_str).ne(sentences.iter().copied()) {
            return None;
        }
        let summary = Neighbours::count(&e.vectors(d.layer, d.z)).summary(d.layer);
        Some(view! { <p class="small" data-testid="map-translations">{summary}</p> })
    };

    let num_layers = move || {
        state.generation.get();
        state.engine().map(|e| e.bert.model.num_layers()).unwrap_or(0)
    };

    view! {
        <section class="card" data-testid="map-panel" node_ref=panel>
            <h2>"6 · Embedding map"</h2>
            <p class="hint">"Every text (or token) becomes a point; nearby points have similar vectors. "
                "Slide through the layers to watch context reshape them: in layer 0 “bank” is the same vector in both senses (only its position differs), later the senses part."</p>
            <div class="row">
                <label class="small muted" for="map-source">"Texts"</label>
                <select id="map-source" data-testid="map-source" on:change=move |ev| pick_source(event_target_value(&ev))>
                    <option value="typed" selected=move || source.get() == Source::Typed>"the sentences below"</option>
                    {SENSES.iter().enumerate().map(|(i, s)| view! { <option value=format!("sense-{i}") selected=move || source.get() == Source::Sense(i)>{format!("word senses: “{}”", s.word)}</option> }).collect_view()}
                    <option value="translations" selected=move || source.get() == Source::Translations>"translations (English, French, German, Spanish)"</option>
                    <option value="dataset" selected=move || source.get() == Source::Dataset>{move || if studio.has_own_labeled_data() { "the studio's dataset" } else { "the built-in sentiment examples" }}</option>
                </select>
                <label class="small muted" for="map-kind">"Points"</label>
                <select id="map-kind" data-testid="map-kind" on:change=move |ev| kind.set(Kind::from_value(&event_target_value(&ev)))>
                    <option value="mean" selected=move || kind.get() == Kind::Mean>"sentences (mean of tokens)"</option>
                    <option value="cls" selected=move || kind.get() == Kind::Cls>"sentences ([CLS] token)"</option>
                    <option value="tokens" selected=move || kind.get() == Kind::Tokens>"every token"</option>
                    <option value="word" selected=move || kind.get() == Kind::Word>"one word in each sentence"</option>
                </select>
                <Show when=move || kind.get() == Kind::Word>
                    <input type="text" class="short" data-testid="map-word" placeholder="focus word"
                        prop:value=move || focus_word.get() on:input=move |ev| focus_word.set(event_target_value(&ev)) />
                </Show>
                <button data-testid="map-button" on:click=move |_| embed() prop:disabled=move || !state.idle()>"Embed"</button>
                <button class="secondary" data-testid="map-sentence-a" on:click=map_sentence prop:disabled=move || !state.idle()
                    title="Adds sentence A to the sentences below and maps every token, linked to the token selected above">"Map sentence A's tokens"</button>
                <Show when=move || progress.get().is_some()>
                    <span class="small muted">{move || progress.get().map(|(d, t)| format!("{d} / {t} texts"))}</span>
                    <button class="secondary small" on:click=move |_| cancel.set(true)>"Cancel"</button>
                </Show>
            </div>
            <Show when=move || source.get() == Source::Typed>
                <textarea data-testid="map-input" aria-label="Texts for the map, one per line" rows="6" prop:value=move || typed.get() on:input=move |ev| typed.set(event_target_value(&ev))></textarea>
                <p class="small muted">"One text per line; start a line with [label] to colour by label."</p>
            </Show>
            <div class="row">
                <label class="small muted" for="map-layer">{move || format!("Layer {}", layer.get().min(num_layers()))}</label>
                <input id="map-layer" type="range" min="0" max=move || num_layers().to_string() data-testid="map-layer"
                    prop:value=move || layer.get().min(num_layers()).to_string()
                    on:input=move |ev| layer.set(event_target_value(&ev).parse().unwrap_or(0)) />
                <span class="small muted">"0 = input embeddings"</span>
                <select data-testid="map-method" aria-label="Projection" on:change=move |ev| method.set(if event_target_value(&ev) == "tsne" { Method::Tsne } else { Method::Pca })>
                    <option value="pca">"PCA"</option>
                    <option value="tsne">"t-SNE"</option>
                </select>
                <label class="small"><input type="checkbox" data-testid="map-zscore" on:change=move |ev| zscore.set(event_target_checked(&ev)) />" z-score dimensions"</label>
                <label class="small"><input type="checkbox" prop:checked=move || by_label.get() on:change=move |ev| by_label.set(event_target_checked(&ev)) />" colour by label (else by word)"</label>
                <button class="secondary small" data-testid="map-export" on:click=export prop:disabled=move || embedded.get().is_none()>"Export for Embedding Projector"</button>
                <Show when=move || projecting.get()><span class="small muted">"drawing…"</span></Show>
            </div>
            {move || error.get().map(|e| view! { <p class="banner warn small" data-testid="map-message">{e}</p> })}
            {note}
            {translations_note}
            {scatter}
            {hover_box}
            {neighbour_list}
            {curves}
        </section>
    }
}
