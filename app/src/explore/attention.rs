//! Attention maps of sentence A (or the A/B pair): who each token looks at, per layer and head,
//! as a heatmap or as lines, next to the same weights under a causal (left-to-right) mask.

use bertbench_core::bert::attention::AttentionMask;
use bertbench_core::analysis::inspect::AttentionMap;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use crate::app::AppState;
use crate::compute::{self, claim};
use crate::widgets::now_ms;

/// The heatmap and lines views draw at most this many tokens.
const MAX_DRAWN: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    Heatmap,
    Lines,
}

#[derive(Debug, Clone)]
struct Maps {
    bidirectional: AttentionMap,
    causal: Option<AttentionMap>,
    millis: f64,
    /// Where they were computed, in words.
    on: String,
    /// The sentences (A, B) they were computed for.
    text: (String, String),
}

/// The `seq × seq` matrix for a layer and a head (`None` = the mean over heads).
fn matrix(map: &AttentionMap, layer: usize, head: Option<usize>) -> Vec<f32> {
    match head {
        Some(h) => map.head(layer, h).to_vec(),
        None => map.mean(layer),
    }
}

/// White → dark blue; the square root lifts small weights so they stay visible.
fn heat(w: f32) -> String {
    let t = w.clamp(0.0, 1.0).sqrt();
    let mix = |c: f32| (255.0 + (c - 255.0) * t).round() as u8;
    format!("rgb({}, {}, {})", mix(22.0), mix(64.0), mix(160.0))
}

/// What the selected token attends to most and what attends to it most, in words.
fn selected_summary(tokens: &[String], seq: usize, m: &[f32], p: usize) -> String {
    let n = tokens.len();
    let top = |w: Vec<(usize, f32)>| {
        let mut w = w;
        w.sort_by(|a, b| b.1.total_cmp(&a.1));
        w.iter().take(3).map(|(j, x)| format!("“{}” ({x:.2})", tokens[*j])).collect::<Vec<_>>().join(", ")
    };
    let row = (0..n).map(|j| (j, m[p * seq + j])).collect();
    let column = (0..n).map(|i| (i, m[i * seq + p])).collect();
    format!("“{}” (position {p}) attends most to {}; the tokens attending most to it: {}.", tokens[p], top(row), top(column))
}

fn short(piece: &str) -> String {
    let chars: Vec<char> = piece.chars().collect();
    if chars.len() > 10 { format!("{}…", chars[..9].iter().collect::<String>()) } else { piece.to_string() }
}

/// One heatmap: rows are the attending (query) tokens, columns the attended (key) tokens. With
/// `linked`, the explorer's selected token has its row and column outlined, and clicking a
/// row's token selects it in every view.
pub(crate) fn heatmap(tokens: &[String], segments: &[u32], seq: usize, m: &[f32], testid: &'static str, linked: Option<AppState>) -> AnyView {
    let n = tokens.len().min(MAX_DRAWN);
    let cell = (420.0 / n as f64).clamp(6.0, 22.0);
    let label_w = 86.0;
    let top = 74.0;
    let size = n as f64 * cell;
    let font = (cell * 0.62).clamp(7.0, 12.0);
    let seg_class = |i: usize| if segments.get(i) == Some(&1) { "seg1" } else { "" };
    view! {
        <svg class="heatmap" data-testid=testid data-seq=n.to_string()
            viewBox=format!("0 0 {} {}", label_w + size + 4.0, top + size + 4.0)
            width=label_w + size + 4.0 role="img"
            aria-label=format!("Attention heatmap of {n} tokens: row i shows how much token i attends to each token (darker is more)")>
            {(0..n).map(|j| {
                let x = label_w + (j as f64 + 0.5) * cell;
                view! { <text class=format!("tlabel {}", seg_class(j)) font-size=font x=x y=top - 4.0
                    transform=format!("rotate(-60 {x} {})", top - 4.0)>{short(&tokens[j])}</text> }
            }).collect_view()}
            {(0..n).map(|i| view! {
                <text class=format!("tlabel {}", seg_class(i)) font-size=font x=label_w - 4.0 y=top + (i as f64 + 0.7) * cell
                    text-anchor="end" class:pickable=linked.is_some()
                    on:click=move |_| if let Some(state) = linked { state.select_token(|p, _| p == i, true) }>{short(&tokens[i])}</text>
                <g data-testid="attention-row" data-row=i.to_string()>
                    {(0..n).map(|j| {
                        let w = m[i * seq + j];
                        view! {
                            <rect x=label_w + j as f64 * cell y=top + i as f64 * cell width=cell height=cell
                                fill=heat(w) data-w=format!("{w:.6}")>
                                <title>{format!("{} → {}: {w:.3}", tokens[i], tokens[j])}</title>
                            </rect>
                        }
                    }).collect_view()}
                </g>
            }).collect_view()}
            {linked.map(|state| {
                let at = move || state.token_position().filter(|&p| p < n);
                view! {
                    <g class="selection" data-testid="attention-selection" data-position=move || at().map(|p| p.to_string()).unwrap_or_default()>
                        {move || at().map(|p| view! {
                            <rect x=label_w y=top + p as f64 * cell width=size height=cell />
                            <rect x=label_w + p as f64 * cell y=top width=cell height=size />
                        })}
                    </g>
                }
            })}
        </svg>
        {weights_table(tokens, seq, m, n)}
    }
    .into_any()
}

/// A heatmap's weights as a table behind a fold, built only when opened (a 64-token map has
/// 4,096 cells).
fn weights_table(tokens: &[String], seq: usize, m: &[f32], n: usize) -> impl IntoView + use<> {
    let open = RwSignal::new(false);
    let (tokens, m) = (tokens[..n].to_vec(), m.to_vec());
    view! {
        <details class="chart-data" on:toggle=move |ev| {
            let details = ev.target().map(wasm_bindgen::JsValue::from).unwrap_or_default();
            open.set(js_sys::Reflect::get(&details, &"open".into()).ok().and_then(|v| v.as_bool()).unwrap_or(false));
        }>
            <summary>"Show the numbers"</summary>
            {move || open.get().then(|| view! {
                <table class="plain small mono">
                    <caption>"Attention weights: row = the token attending, column = the token attended to"</caption>
                    <tr><th scope="col">"from ↓ / to →"</th>{tokens.iter().map(|t| view! { <th scope="col">{t.clone()}</th> }).collect_view()}</tr>
                    {(0..n).map(|i| view! {
                        <tr><th scope="row">{tokens[i].clone()}</th>{(0..n).map(|j| view! { <td>{format!("{:.3}", m[i * seq + j])}</td> }).collect_view()}</tr>
                    }).collect_view()}
                </table>
            })}
        </details>
    }
}

/// Lines from each token (left) to the tokens it attends to (right); thicker and darker =
/// more attention. Hovering a token on the left shows only its lines.
fn lines(tokens: &[String], seq: usize, m: &[f32], focus: RwSignal<Option<usize>>) -> AnyView {
    let n = tokens.len().min(MAX_DRAWN);
    let row_h = 18.0;
    let (left, right, width) = (110.0, 300.0, 410.0);
    let height = n as f64 * row_h + 8.0;
    let y = move |i: usize| 12.0 + i as f64 * row_h;
    let mut edges = Vec::new();
    for i in 0..n {
        for j in 0..n {
            let w = m[i * seq + j];
            if w >= 0.02 {
                edges.push((i, j, w));
            }
        }
    }
    view! {
        <svg class="attn-lines" data-testid="attention-lines" viewBox=format!("0 0 {width} {height}") width=width role="img">
            {edges.into_iter().map(|(i, j, w)| view! {
                <line x1=left + 4.0 y1=y(i) - 4.0 x2=right - 4.0 y2=y(j) - 4.0
                    stroke="#1640a0" stroke-width=format!("{:.2}", 0.5 + 3.0 * w)
                    stroke-opacity=move || match focus.get() {
                        Some(f) if f != i => "0.03".to_string(),
                        _ => format!("{:.3}", w.sqrt().min(1.0)),
                    } />
            }).collect_view()}
            {(0..n).map(|i| view! {
                <text x=left y=y(i) text-anchor="end" class="tlabel hoverable"
                    class:focus=move || focus.get() == Some(i)
                    on:mouseenter=move |_| focus.set(Some(i)) on:mouseleave=move |_| focus.set(None)>{short(&tokens[i])}</text>
                <text x=right y=y(i) class="tlabel">{short(&tokens[i])}</text>
            }).collect_view()}
        </svg>
    }
    .into_any()
}

/// Small maps of every head of one layer; clicking one selects it.
fn thumbnails(map: &AttentionMap, layer: usize, selected: RwSignal<Option<usize>>) -> AnyView {
    let n = map.tokens.len().min(24);
    let seq = map.seq;
    let px = 56.0 / n as f64;
    view! {
        <div class="thumbs" data-testid="attention-heads">
            {(0..map.heads).map(|h| {
                let m = map.head(layer, h).to_vec();
                view! {
                    <button class="thumb" class:active=move || selected.get() == Some(h)
                        title=format!("head {}", h + 1) on:click=move |_| selected.set(Some(h))>
                        <svg viewBox="0 0 56 56" width="56" height="56">
                            {(0..n).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| view! {
                                <rect x=j as f64 * px y=i as f64 * px width=px + 0.05 height=px + 0.05 fill=heat(m[i * seq + j]) />
                            }).collect_view()}
                        </svg>
                        <span>{h + 1}</span>
                    </button>
                }
            }).collect_view()}
        </div>
    }
    .into_any()
}

/// Attention weights of every layer and head.
#[component]
pub fn AttentionPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let maps = RwSignal::new(None::<Result<Maps, String>>);
    let layer = RwSignal::new(0usize);
    let head = RwSignal::new(None::<usize>);
    let view_kind = RwSignal::new(View::Heatmap);
    let causal = RwSignal::new(false);
    let focus = RwSignal::new(None::<usize>);
    // The lines view shows the selected token's lines, as when hovering it.
    Effect::new(move |_| focus.set(state.token_position()));

    let run = move || {
        spawn_in_view(async move {
            let Some(engine) = claim(state).await else { return };
            let (a, b) = (state.sentence_a.get_untracked(), state.sentence_b.get_untracked());
            let with_causal = causal.get_untracked();
            let start = now_ms();
            let out = async {
                let tok = &engine.bert.tokenizer;
                let encoded = if b.trim().is_empty() { tok.encode(&a) } else { tok.encode_pair(&a, &b) }.map_err(|e| e.to_string())?;
                let (bidirectional, on) = compute::attention_map(&engine, &encoded, AttentionMask::Bidirectional).await?;
                let causal = if with_causal { Some(compute::attention_map(&engine, &encoded, AttentionMask::Causal).await?.0) } else { None };
                Ok::<_, String>(Maps { bidirectional, causal, millis: now_ms() - start, on, text: (a.clone(), b.clone()) })
            }
            .await;
            if let Ok(m) = &out {
                layer.update(|l| *l = (*l).min(m.bidirectional.layers.saturating_sub(1)));
                head.update(|h| *h = h.filter(|&h| h < m.bidirectional.heads));
            }
            maps.set(Some(out));
            drop(engine);
        });
    };
    // Recompute when a model (re)loads.
    Effect::new(move |_| {
        if state.generation.get() > 0 {
            run();
        }
    });

    let controls = move || {
        let Some(Ok(m)) = maps.get() else { return None };
        let (layers, heads) = (m.bidirectional.layers, m.bidirectional.heads);
        Some(view! {
            <div class="row">
                <label class="small muted" for="attn-layer">"Layer"</label>
                <select id="attn-layer" data-testid="attention-layer"
                    on:change=move |ev| layer.set(event_target_value(&ev).parse().unwrap_or(0))>
                    {(0..layers).map(|l| view! { <option value=l.to_string() selected=move || layer.get() == l>{format!("{} of {layers}", l + 1)}</option> }).collect_view()}
                </select>
                <label class="small muted" for="attn-head">"Head"</label>
                <select id="attn-head" data-testid="attention-head"
                    on:change=move |ev| head.set(event_target_value(&ev).parse().ok())>
                    <option value="avg" selected=move || head.get().is_none()>"average of all heads"</option>
                    {(0..heads).map(|h| view! { <option value=h.to_string() selected=move || head.get() == Some(h)>{format!("head {}", h + 1)}</option> }).collect_view()}
                </select>
                <label class="small muted" for="attn-view">"Show as"</label>
                <select id="attn-view" data-testid="attention-view" on:change=move |ev| view_kind.set(
                    if event_target_value(&ev) == "lines" { View::Lines } else { View::Heatmap })>
                    <option value="heatmap">"heatmap"</option>
                    <option value="lines">"lines"</option>
                </select>
            </div>
        })
    };

    let body = move || {
        maps.get().map(|r| match r {
            Err(e) => view! { <p class="banner err small" data-testid="attention-error">{e}</p> }.into_any(),
            Ok(m) => {
                let (l, h) = (layer.get(), head.get());
                let bi = &m.bidirectional;
                let seq = bi.seq;
                let main = matrix(bi, l, h);
                let note = (bi.tokens.len() > MAX_DRAWN)
                    .then(|| format!(" The maps draw the first {MAX_DRAWN} of {} tokens.", bi.tokens.len()));
                let what = match h {
                    Some(h) => format!("layer {}, head {}", l + 1, h + 1),
                    None => format!("layer {}, mean of {} heads", l + 1, bi.heads),
                };
                let drawn = match view_kind.get() {
                    View::Heatmap => heatmap(&bi.tokens, &bi.segments, seq, &main, "attention-heatmap", Some(state)),
                    View::Lines => lines(&bi.tokens, seq, &main, focus),
                };
                let side = m.causal.as_ref().map(|c| {
                    let cm = matrix(c, l, h);
                    view! {
                        <figure>
                            <figcaption class="small"><b>"Causal mask"</b>" (GPT-style): each token sees only itself and the tokens before it"</figcaption>
                            {heatmap(&c.tokens, &c.segments, c.seq, &cm, "attention-causal", Some(state))}
                        </figure>
                    }
                });
                let (picked_tokens, picked_matrix) = (bi.tokens.clone(), main.clone());
                let selected = move || {
                    let p = state.token_position().filter(|&p| p < picked_tokens.len().min(MAX_DRAWN))?;
                    Some(view! { <p class="small" data-testid="attention-selected">{selected_summary(&picked_tokens, seq, &picked_matrix, p)}</p> })
                };
                // The sentence changed since: say the maps are of the old one, until recomputed.
                let text = m.text.clone();
                let stale = move || {
                    let now = (state.sentence_a.get(), state.sentence_b.get());
                    (now != text).then(|| view! {
                        <p class="banner warn small" data-testid="attention-stale">{format!(
                            "These maps are of “{}”{}; the sentence has changed since. Press “Recompute for the current sentence”.",
                            text.0, if text.1.trim().is_empty() { String::new() } else { format!(" | “{}”", text.1) }
                        )}</p>
                    })
                };
                view! {
                    {stale}
                    {selected}
                    <p class="small muted" data-testid="attention-note" data-computed-on=m.on.clone()>{format!(
                        "{what}. {} layers × {} heads computed in {:.0} ms ({}). Each row is one token's attention and sums to 1 (largest row error {:.1e}).{}",
                        bi.layers, bi.heads, m.millis, m.on, bi.max_row_sum_error(), note.unwrap_or_default()
                    )}</p>
                    <div class="attn-views">
                        <figure>
                            <figcaption class="small"><b>"Bidirectional"</b>" (BERT): every token sees the whole input"</figcaption>
                            {drawn}
                        </figure>
                        {side}
                    </div>
                    <h3>"All heads of this layer"</h3>
                    <p class="hint">"Heads specialise: some look at the next or previous token, some at [SEP] or [CLS], some at related words. Click one to select it."</p>
                    {thumbnails(bi, l, head)}
                }
                .into_any()
            }
        })
    };

    view! {
        <section class="card" data-testid="attention-panel">
            <h2>"5 · Attention"</h2>
            <p class="hint">"Each layer mixes every token's vector with the others', weighted by attention. "
                "Rows are the token doing the looking, columns the token looked at. Uses sentence A (and B, if given) from panel 1."</p>
            {controls}
            <div class="row">
                <label class="small"><input type="checkbox" data-testid="attention-causal-toggle"
                    on:change=move |ev| { causal.set(event_target_checked(&ev)); run(); } />
                    " also show a causal (left-to-right) mask, as GPT uses"</label>
                <button data-testid="attention-button" on:click=move |_| run() prop:disabled=move || !state.idle()>"Recompute for the current sentence"</button>
                <Show when=move || state.busy.get()><span class="small muted">"computing…"</span></Show>
            </div>
            {body}
        </section>
    }
}
