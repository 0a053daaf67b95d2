//! Lesson 3: attention. Queries, keys, values, the √d scaling, one head, then all heads;
//! bidirectional against causal.

use bertbench_core::analysis::inspect::{AttentionMap, find_word};
use bertbench_core::bert::attention::AttentionMask;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use super::check::{Answer, Check, Expected, best};
use super::{LessonText, Lessons, Maths, TryThis};
use crate::app::AppState;
use crate::compute::{self, Latest, claim_newest};
use crate::explore::heatmap;

pub const EXAMPLE: &str = "The animal didn't cross the street because it was too tired.";
pub const CHECKS: [&str; 1] = ["attention-it"];

/// The token the question asks about: "it" where the sentence has it, else the first word.
fn asked(map: &AttentionMap, text: &str, encoded: &bertbench_core::tokenizer::Encoded) -> usize {
    find_word(encoded, text, "it").map(|r| r.start).unwrap_or(1.min(map.tokens.len().saturating_sub(1)))
}

/// Whether token `i` of `tokens` is a special one: the first ([CLS], `<s>`) and the last ([SEP],
/// `</s>`), and any other token spelt as the last (the [SEP] between two segments).
fn is_special(tokens: &[String], i: usize) -> bool {
    i == 0 || tokens.last().is_some_and(|last| tokens[i] == *last)
}

/// What `query`'s attention `row` says, from its numbers: how much of it rests on the special
/// tokens, and which word it looks at most once they are set aside.
fn special_share(tokens: &[String], row: &[f32], query: usize) -> String {
    let special: f32 = (0..row.len()).filter(|&j| is_special(tokens, j)).map(|j| row[j]).sum();
    let top = (0..row.len()).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap_or(0);
    let word = (0..row.len()).filter(|&j| !is_special(tokens, j) && j != query).max_by(|&a, &b| row[a].total_cmp(&row[b]));
    let among = word.map(|w| format!("Among the other words, “{}” looks most at “{}” ({:.0}%).", tokens[query], tokens[w], row[w] * 100.0)).unwrap_or_default();
    if is_special(tokens, top) {
        format!(
            "“{}” gives {:.0}% of its attention to the special tokens, the most to {}: a head with nothing to take from the \
             sentence rests its weight on the special tokens (Clark et al., 2019, found much of BERT's attention on [SEP] in \
             its middle layers and read it as a head's “no-op”). {among} Step through the heads for one that links them.",
            tokens[query],
            special * 100.0,
            tokens[top]
        )
    } else {
        format!("{among} The special tokens take {:.0}% together.", special * 100.0)
    }
}

#[derive(Clone)]
struct Computed {
    text: String,
    map: AttentionMap,
    causal: AttentionMap,
    query: usize,
}

/// The lesson.
#[component]
pub fn AttentionLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = expect_context::<Lessons>().input("attention");
    let computed = RwSignal::new(None::<Result<Computed, String>>);
    let layer = RwSignal::new(None::<usize>);
    let head = RwSignal::new(None::<usize>);
    let causal = RwSignal::new(false);
    let latest = Latest::new();
    Effect::new(move |_| {
        state.generation.get();
        let text = text.get();
        let ticket = latest.next();
        spawn_in_view(async move {
            let Some(engine) = claim_newest(state, latest, ticket).await else { return };
            let out = async {
                let encoded = engine.bert.tokenizer.encode(&text).map_err(|e| e.to_string())?;
                let map = compute::attention_map(&engine, &encoded, AttentionMask::Bidirectional).await?.0;
                let causal = compute::attention_map(&engine, &encoded, AttentionMask::Causal).await?.0;
                let query = asked(&map, &text, &encoded);
                Ok::<_, String>(Computed { text, map, causal, query })
            }
            .await;
            drop(engine);
            if latest.is(ticket) {
                computed.set(Some(out));
            }
        });
    });
    let last = move || computed.with(|c| c.as_ref().and_then(|c| c.as_ref().ok()).map(|c| c.map.layers.saturating_sub(1)));
    let shown_layer = move || layer.get().or_else(last).unwrap_or(0);
    let matrix = move |c: &Computed, causal: bool| {
        let map = if causal { &c.causal } else { &c.map };
        let l = shown_layer().min(map.layers.saturating_sub(1));
        match head.get().filter(|&h| h < map.heads) {
            Some(h) => map.head(l, h).to_vec(),
            None => map.mean(l),
        }
    };
    let answer = Signal::derive(move || {
        computed.get().map(|r| {
            r.map(|c| {
                let l = c.map.layers - 1;
                let row = &c.map.mean(l)[c.query * c.map.seq..(c.query + 1) * c.map.seq];
                let options: Vec<String> = c.map.tokens.iter().enumerate().map(|(i, t)| format!("{t} (position {i})")).collect();
                let right = best(row);
                let why = format!(
                    "In layer {} with the heads averaged, “{}” gives {:.0}% of its attention to {}.",
                    l + 1, c.map.tokens[c.query], row[right[0]] * 100.0, c.map.tokens[right[0]]
                );
                Answer { expected: Expected::Choice { options, right }, why }
            })
        })
    });
    let question = Signal::derive(move || match computed.get() {
        Some(Ok(c)) => format!(
            "In the last layer, with all heads averaged, which token does “{}” (position {}) attend to most? Its row in the map and the table above tell.",
            c.map.tokens[c.query], c.query
        ),
        _ => "In the last layer, with all heads averaged, which token does “it” attend to most?".to_string(),
    });
    let body = move || {
        computed.get().map(|r| match r {
            Err(e) => view! { <p class="banner err small">{e}</p> }.into_any(),
            Ok(c) => {
                let m = matrix(&c, false);
                let seq = c.map.seq;
                let q = c.query;
                let mut top: Vec<(usize, f32)> = m[q * seq..(q + 1) * seq].iter().copied().enumerate().collect();
                top.sort_by(|a, b| b.1.total_cmp(&a.1));
                let causal_view = causal.get().then(|| {
                    let cm = matrix(&c, true);
                    view! {
                        <figure>
                            <figcaption class="small"><b>"Causal mask"</b>": each token sees only itself and the tokens before it (a GPT)"</figcaption>
                            {heatmap(&c.causal.tokens, &c.causal.segments, c.causal.seq, &cm, "lesson-attention-causal", None)}
                        </figure>
                    }
                });
                view! {
                    <p class="small muted" data-testid="lesson-attention-summary">{format!(
                        "“{}”: {} tokens, layer {} of {}, {}. Rows attend, columns are attended to; each row sums to 1.",
                        c.text, c.map.tokens.len(), shown_layer() + 1, c.map.layers,
                        head.get().map(|h| format!("head {}", h + 1)).unwrap_or_else(|| format!("mean of {} heads", c.map.heads))
                    )}</p>
                    <div class="maps">
                        <figure>
                            <figcaption class="small"><b>"Bidirectional"</b>" (BERT): every token sees every token"</figcaption>
                            {heatmap(&c.map.tokens, &c.map.segments, seq, &m, "lesson-attention", None)}
                        </figure>
                        {causal_view}
                    </div>
                    <p class="small" data-testid="lesson-attention-note">{special_share(&c.map.tokens, &m[q * seq..(q + 1) * seq], q)}</p>
                    <table class="plain small" data-testid="lesson-attention-row">
                        <caption>{format!("Where “{}” (position {q}) looks, most first", c.map.tokens[q])}</caption>
                        <tr><th scope="col">"token"</th><th scope="col">"position"</th><th scope="col">"attention"</th></tr>
                        {top.into_iter().take(5).map(|(j, w)| view! {
                            <tr><td>{c.map.tokens[j].clone()}</td><td>{j}</td><td data-w=format!("{w:.6}")>{format!("{:.1}%", w * 100.0)}</td></tr>
                        }).collect_view()}
                    </table>
                }
                .into_any()
            }
        })
    };
    let (layers, heads) = (
        move || computed.with(|c| c.as_ref().and_then(|c| c.as_ref().ok()).map(|c| c.map.layers).unwrap_or(0)),
        move || computed.with(|c| c.as_ref().and_then(|c| c.as_ref().ok()).map(|c| c.map.heads).unwrap_or(0)),
    );
    view! {
        <p>"Each token's vector is rewritten, layer after layer, as a mix of the vectors of the tokens around it. "
            "Attention decides the mix. Every token asks a question (its "<em>"query"</em>"), offers a label (its "
            <em>"key"</em>") and a content (its "<em>"value"</em>"); the better a token's key matches the query, the more "
            "of its value goes into the mix."</p>
        <p>"A layer has several heads, each with its own queries, keys and values: one may link a pronoun to its noun, "
            "another look at the next word, another rest on [SEP]. BERT is "<em>"bidirectional"</em>": every token sees "
            "the whole text, left and right. A GPT is "<em>"causal"</em>": a token sees only what came before it, "
            "so that it can be trained to predict the next word."</p>
        <Maths>
            <p>"For the token vectors X (one row per token), each head computes Q = X·W"<sub>"Q"</sub>", K = X·W"<sub>"K"</sub>
                ", V = X·W"<sub>"V"</sub>", each of width d = hidden size / heads, then"</p>
            <p class="formula">"Attention(Q, K, V) = softmax(Q·K"<sup>"T"</sup>" / √d) · V"</p>
            <p>"Row i of softmax(Q·Kᵀ/√d) is what the map shows: how much token i takes from each token; it sums to 1. "
                "Dividing by √d keeps the dot products from growing with d, so the softmax does not saturate on one token. "
                "A causal mask sets the scores above the diagonal to −∞ before the softmax. The heads' outputs are "
                "concatenated and mixed by one more matrix, W"<sub>"O"</sub>"."</p>
        </Maths>
        <LessonText id="lesson-attention-text" label="Sentence" text=text />
        <div class="row screen-only">
            <label class="small" for="lesson-attention-layer">"Layer"</label>
            <select id="lesson-attention-layer" data-testid="lesson-attention-layer" on:change=move |ev| layer.set(event_target_value(&ev).parse().ok())>
                {move || (0..layers()).map(|l| view! { <option value=l.to_string() selected=move || shown_layer() == l>{format!("{}", l + 1)}</option> }).collect_view()}
            </select>
            <label class="small" for="lesson-attention-head">"Head"</label>
            <select id="lesson-attention-head" data-testid="lesson-attention-head" on:change=move |ev| head.set(event_target_value(&ev).parse().ok())>
                <option value="mean" selected=move || head.get().is_none()>"mean of all heads"</option>
                {move || (0..heads()).map(|h| view! { <option value=h.to_string() selected=move || head.get() == Some(h)>{format!("head {}", h + 1)}</option> }).collect_view()}
            </select>
            <label class="small"><input type="checkbox" data-testid="lesson-attention-causal" on:change=move |ev| causal.set(event_target_checked(&ev)) />" also show a causal mask"</label>
        </div>
        {body}
        <TryThis>
            <ul>
                <li>"Step through the heads of layer 1, then of the last layer: which heads look at the next or the previous token?"</li>
                <li>"Change “tired” to “wide”: does “it” now look at “street” in some head?"</li>
                <li>"Turn on the causal mask: what can the first word see?"</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question=question answer=answer />
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> Vec<String> {
        ["[CLS]", "the", "animal", "was", "tired", "because", "it", "[SEP]"].iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn attention_resting_on_cls_is_explained_and_the_words_best_named() {
        let row = [0.26, 0.05, 0.20, 0.04, 0.10, 0.05, 0.12, 0.18];
        let note = special_share(&tokens(), &row, 6);
        assert!(note.starts_with("“it” gives 44% of its attention to the special tokens, the most to [CLS]:"), "{note}");
        assert!(note.contains("Among the other words, “it” looks most at “animal” (20%)."), "{note}");
    }

    #[test]
    fn a_word_on_top_is_named_first() {
        let row = [0.05, 0.05, 0.50, 0.04, 0.10, 0.05, 0.12, 0.09];
        let note = special_share(&tokens(), &row, 6);
        assert!(note.starts_with("Among the other words, “it” looks most at “animal” (50%). The special tokens take 14% together."), "{note}");
    }
}
