//! The input representation: each token's vector is its WordPiece embedding plus a segment
//! embedding plus a position embedding, then LayerNorm. Shown as vector lengths per token.

use bertbench_core::analysis::inspect::{InputParts, norm};
use bertbench_core::analysis::similarity::cosine;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use crate::app::AppState;
use crate::compute::{self, claim};

const PARTS: [(&str, &str); 5] = [
    ("token", "#4e79a7"),
    ("segment", "#f28e2b"),
    ("position", "#59a14f"),
    ("sum", "#b07aa1"),
    ("after LayerNorm", "#9c755f"),
];

/// Norms of the input parts of sentence A (and B).
#[component]
pub fn InputPartsPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let result = RwSignal::new(None::<Result<(InputParts, String), String>>);
    let run = move |_| {
        spawn_in_view(async move {
            let Some(engine) = claim(state).await else { return };
            let (a, b) = (state.sentence_a.get_untracked(), state.sentence_b.get_untracked());
            let tok = &engine.bert.tokenizer;
            let out = match if b.trim().is_empty() { tok.encode(&a) } else { tok.encode_pair(&a, &b) } {
                Ok(e) => compute::input_parts(&engine, &e).await,
                Err(e) => Err(e.to_string()),
            };
            result.set(Some(out));
            drop(engine);
        });
    };
    let body = move || {
        result.get().map(|r| match r {
            Err(e) => view! { <p class="banner err small">{e}</p> }.into_any(),
            Ok((p, on)) => {
                let rows: Vec<(String, [f32; 5], f32)> = (0..p.tokens.len())
                    .map(|i| {
                        let n = [norm(&p.token[i]), norm(&p.segment[i]), norm(&p.position[i]), norm(&p.sum[i]), norm(&p.normalized[i])];
                        (p.tokens[i].clone(), n, cosine(&p.token[i], &p.sum[i]))
                    })
                    .collect();
                let max = rows.iter().flat_map(|r| r.1).fold(1e-6f32, f32::max);
                view! {
                    <div class="legend">{PARTS.iter().map(|(n, c)| view! { <span><i style:background=*c></i>{*n}</span> }).collect_view()}</div>
                    <div class="scroll-x">
                    <table class="plain small parts" data-testid="input-parts" data-computed-on=on>
                        <tr><th>"#"</th><th>"token"</th><th>"lengths (L2 norm) of the parts"</th><th>"token · segment · position · sum · normed"</th><th>"cos(token, sum)"</th></tr>
                        {rows.into_iter().enumerate().map(|(i, (t, n, c))| view! {
                            <tr class:selected=move || state.token_position() == Some(i)>
                                <td class="muted">{i}</td>
                                <td class="mono">{t}</td>
                                <td>
                                    {n.iter().zip(PARTS).map(|(v, (_, color))| view! {
                                        <div class="partbar" style:width=format!("{:.1}%", v / max * 100.0) style:background=color></div>
                                    }).collect_view()}
                                </td>
                                <td class="mono">{n.iter().map(|v| format!("{v:.2}")).collect::<Vec<_>>().join(" · ")}</td>
                                <td class="mono">{format!("{c:.2}")}</td>
                            </tr>
                        }).collect_view()}
                    </table>
                    </div>
                    <p class="small muted">"The same word at two positions gets the same token part but a different position part; "
                        "a word in sentence B gets a different segment part. LayerNorm then rescales every sum to a similar length."</p>
                }
                .into_any()
            }
        })
    };
    view! {
        <section class="card" data-testid="input-parts-panel">
            <h2>"2 · Input representation"</h2>
            <p class="hint">"What layer 1 receives for each token of sentence A (and B): token + segment + position embeddings, summed and normalised. "
                "Pieces marked ## continue a word; [UNK] stands for characters the vocabulary does not have."</p>
            <button data-testid="input-parts-button" on:click=run prop:disabled=move || !state.idle()>"Show the parts"</button>
            {body}
        </section>
    }
}
