//! Cosine similarity between several sentences' embeddings, contextual next to static.

use bertbench_core::analysis::embed::EmbedOptions;
use bertbench_core::analysis::similarity::cosine_matrix;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use crate::app::AppState;
use crate::compute::{self, claim};
use crate::widgets::{diverging, ink_on, now_ms};

const EXAMPLES: &str = "A man is playing a guitar.
Someone strums a guitar on stage.
The stock market fell sharply today.
Shares dropped as investors panicked.
I deposited my salary at the bank.
We had a picnic on the river bank.";

#[derive(Debug, Clone, PartialEq)]
struct Matrix {
    texts: Vec<String>,
    cosines: Vec<Vec<f32>>,
    /// The same from static vectors: each text's mean input (WordPiece) embedding, no context.
    statics: Vec<Vec<f32>>,
    millis: f64,
    /// Where the sentence vectors were computed, in words.
    on: String,
}

fn matrix_table(texts: &[String], cosines: &[Vec<f32>], testid: &'static str) -> AnyView {
    let n = texts.len();
    view! {
        <table class="matrix" data-testid=testid>
            <tr><th></th>{(1..=n).map(|j| view! { <th>{j}</th> }).collect_view()}</tr>
            {texts.iter().zip(cosines).enumerate().map(|(i, (t, row))| view! {
                <tr>
                    <th class="rowhead" title=t.clone()>{format!("{}. {t}", i + 1)}</th>
                    {row.iter().map(|&c| view! {
                        <td style:background=diverging(c) style:color=ink_on(c)>{format!("{c:.2}")}</td>
                    }).collect_view()}
                </tr>
            }).collect_view()}
        </table>
    }
    .into_any()
}

/// Pairwise cosine similarity of mean-pooled embeddings.
#[component]
pub fn SimilarityPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = RwSignal::new(EXAMPLES.to_string());
    let result = RwSignal::new(None::<Result<Matrix, String>>);
    let show_static = RwSignal::new(false);
    let run = move |_| {
        let texts: Vec<String> = text
            .get_untracked()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        if texts.len() < 2 {
            result.set(Some(Err("Enter at least two sentences, one per line.".into())));
            return;
        }
        if texts.len() > 64 {
            result.set(Some(Err(format!("{} sentences: the matrix shows at most 64.", texts.len()))));
            return;
        }
        spawn_in_view(async move {
            let Some(engine) = claim(state).await else { return };
            let start = now_ms();
            let out = async {
                let (vectors, on) = compute::embed(&engine, &texts, EmbedOptions::default()).await?;
                let millis = now_ms() - start;
                let encoded: Vec<_> = texts.iter().map(|t| engine.bert.tokenizer.encode(t)).collect::<Result<_, _>>().map_err(|e| e.to_string())?;
                let statics = engine.bert.static_vectors(&encoded, &engine.device).await.map_err(|e| e.to_string())?;
                Ok::<_, String>(Matrix { cosines: cosine_matrix(&vectors), on, statics: cosine_matrix(&statics), texts: texts.clone(), millis })
            }
            .await;
            result.set(Some(out));
            drop(engine);
        });
    };
    let table = move || {
        result.get().map(|r| match r {
            Err(e) => view! { <p class="banner warn small" data-testid="similarity-error">{e}</p> }.into_any(),
            Ok(m) => {
                let n = m.texts.len();
                view! {
                    <div>
                        <p class="small muted" data-testid="similarity-note" data-computed-on=m.on.clone()>{format!("{n} sentences embedded in {:.0} ms ({}). 1 = same direction, 0 = unrelated.", m.millis, m.on)}</p>
                        {matrix_table(&m.texts, &m.cosines, "similarity-matrix")}
                        {move || show_static.get().then(|| view! {
                            <h3>"Static vectors (no context)"</h3>
                            <p class="hint">"Each sentence as the average of its words' input embeddings, before any attention: "
                                "sentences sharing words look alike whatever they mean, and “bank” is the same vector in both bank sentences."</p>
                            {matrix_table(&m.texts, &m.statics, "similarity-static")}
                        })}
                    </div>
                }.into_any()
            }
        })
    };
    view! {
        <section class="card" data-testid="similarity-panel">
            <h2>"4 · Similarity"</h2>
            <p class="hint">"One sentence per line. A sentence encoder (all-MiniLM-L6-v2, the default, is one) gives sentences of similar meaning similar vectors, whatever their words; "
                "a model pretrained only by masked language modelling often does not: its raw vectors are all much alike, and the table shows which this model does."</p>
            <textarea data-testid="similarity-input" aria-label="Sentences to compare, one per line" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            <div class="row">
                <button data-testid="similarity-button" on:click=run
                    prop:disabled=move || !state.idle()>
                    "Compare"
                </button>
                <label class="small"><input type="checkbox" data-testid="similarity-static-toggle"
                    on:change=move |ev| show_static.set(event_target_checked(&ev)) />" also show static (context-free) vectors"</label>
            </div>
            {table}
        </section>
    }
}
