//! The sentence embedding of sentence A: one vector, shown as a colour strip and as numbers.

use bertbench_core::Pooling;
use bertbench_core::analysis::embed::EmbedOptions;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use crate::app::AppState;
use crate::compute::{self, Latest, claim_newest};
use crate::widgets::{diverging, now_ms};

#[derive(Debug, Clone, PartialEq)]
struct Embedded {
    text: String,
    vector: Vec<f32>,
    millis: f64,
    /// Where it was computed, in words.
    on: String,
    pooling: Pooling,
    normalized: bool,
}

/// Embeds sentence A with the chosen pooling.
#[component]
pub fn EmbeddingPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let pooling = RwSignal::new(Pooling::Mean);
    let normalize = RwSignal::new(false);
    let result = RwSignal::new(None::<Result<Embedded, String>>);
    let latest = Latest::new();

    let run = move || {
        // Read the inputs now (what the user clicked with), then wait for the model's turn.
        let text = state.sentence_a.get_untracked();
        let (pooling, normalized) = (pooling.get_untracked(), normalize.get_untracked());
        let ticket = latest.next();
        spawn_in_view(async move {
            let Some(engine) = claim_newest(state, latest, ticket).await else { return };
            let start = now_ms();
            let options = EmbedOptions { pooling, normalize: normalized, ..Default::default() };
            let out = compute::embed(&engine, std::slice::from_ref(&text), options).await;
            let millis = now_ms() - start;
            drop(engine);
            if !latest.is(ticket) {
                return;
            }
            result.set(Some(out.map(|(mut vectors, on)| Embedded {
                text,
                vector: vectors.remove(0),
                millis,
                on,
                pooling,
                normalized,
            })));
        });
    };
    // Embed once whenever a model (re)loads.
    Effect::new(move |_| {
        if state.generation.get() > 0 {
            run();
        }
    });

    let details = move || {
        result.get().map(|r| match r {
            Err(e) => view! { <p class="banner err small" data-testid="embedding-error">{e}</p> }.into_any(),
            Ok(e) => {
                let norm = e.vector.iter().map(|x| x * x).sum::<f32>().sqrt();
                let scale = e.vector.iter().fold(1e-6f32, |m, x| m.max(x.abs()));
                let first: Vec<String> = e.vector.iter().take(8).map(|x| format!("{x:+.4}")).collect();
                let json = serde_json::to_string(&e.vector).unwrap_or_default();
                view! {
                    <div data-testid="embedding" data-computed-on=e.on.clone()>
                        <p class="small muted">{format!(
                            "“{}” → {} numbers ({} pooling{}) in {:.0} ms ({}). Length (L2 norm) {:.4}.",
                            e.text, e.vector.len(), e.pooling.label(), if e.normalized { ", normalised" } else { "" },
                            e.millis, e.on, norm
                        )}</p>
                        <div class="strip" title="each cell is one dimension: blue positive, orange negative">
                            {e.vector.iter().map(|&x| view! { <div style:background=diverging(x / scale)></div> }).collect_view()}
                        </div>
                        <p class="mono small">{format!("[{}, …]", first.join(", "))}</p>
                        <details>
                            <summary>{format!("All {} values", e.vector.len())}</summary>
                            <pre class="values" data-testid="embedding-values">{json}</pre>
                        </details>
                    </div>
                }.into_any()
            }
        })
    };

    view! {
        <section class="card" data-testid="embedding-panel">
            <h2>"3 · Sentence embedding"</h2>
            <p class="hint" data-testid="embedding-hint">"Every token leaves the encoder as a vector; pooling turns them into one vector for the sentence. "
                {move || {
                    state.generation.track();
                    match state.engine().map(|e| e.model_id.clone()) {
                        Some(id) if id.starts_with("all-MiniLM") => format!("{id} was trained so that the mean of its token vectors captures the meaning."),
                        Some(id) => format!("A sentence encoder such as all-MiniLM-L6-v2 is trained so that the mean of its token vectors captures the meaning; {id}'s vector is whatever the chosen pooling makes of its tokens."),
                        None => String::new(),
                    }
                }}</p>
            <div class="row">
                <label class="small muted" for="pooling">"Pooling"</label>
                <select id="pooling" on:change=move |ev| pooling.set(match event_target_value(&ev).as_str() {
                    "cls" => Pooling::Cls,
                    "pooler" => Pooling::Pooler,
                    _ => Pooling::Mean,
                })>
                    <option value="mean">"mean of real tokens"</option>
                    <option value="cls">"[CLS] token"</option>
                    <option value="pooler">"[CLS] through the pooler (tanh)"</option>
                </select>
                <label class="small"><input type="checkbox" on:change=move |ev| normalize.set(event_target_checked(&ev)) />" unit length"</label>
                // Enabled while other views compute: a click waits for the model's turn (and the
                // newest request wins), so none is lost to a button that turned disabled under it.
                <button data-testid="embed-button" on:click=move |_| run()
                    prop:disabled=move || !state.has_model()>
                    "Embed sentence A"
                </button>
                <Show when=move || state.busy.get()><span class="small muted">"computing…"</span></Show>
            </div>
            {details}
        </section>
    }
}
