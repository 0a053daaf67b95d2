//! Fill in the blank with the loaded model's own masked-language-model head: the task BERT was
//! pretrained on, on any checkpoint that kept its head (`BertForMaskedLM`, RoBERTa's
//! `lm_head`, DistilBERT's `vocab_*`).

use bertbench_core::tasks::pretraining::{MaskFill, fill_mask_with};
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use crate::app::AppState;
use crate::compute::{Latest, claim};
use crate::widgets::now_ms;

/// Predictions shown per blank.
const TOP_K: usize = 5;

/// The example, with `{mask}` where the model's mask token goes.
const EXAMPLE: &str = "The capital of France is {mask}.";

/// The mask tokens of the families the page reads, so a text written for one model follows
/// the page to the next.
const MASKS: [&str; 2] = ["[MASK]", "<mask>"];

/// A vocabulary piece as it reads in a sentence: WordPiece's `##` joins the word before,
/// byte-level BPE's `Ġ` and SentencePiece's `▁` (XLM-RoBERTa, CamemBERT) are a space.
fn as_text(piece: &str) -> String {
    match piece.strip_prefix("##") {
        Some(rest) => rest.to_string(),
        None => piece.replace(['Ġ', '▁'], " ").trim_start().to_string(),
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Filled {
    text: String,
    mask: String,
    fills: Vec<MaskFill>,
    millis: f64,
}

impl Filled {
    /// The text with every blank replaced by its most likely piece.
    fn completed(&self) -> String {
        let mut out = String::new();
        let mut best = self.fills.iter().map(|f| f.top.first().map(|(p, _)| as_text(p)).unwrap_or_default());
        let mut parts = self.text.split(self.mask.as_str()).peekable();
        while let Some(part) = parts.next() {
            out.push_str(part);
            if parts.peek().is_some() {
                out.push_str(&best.next().unwrap_or_else(|| self.mask.clone()));
            }
        }
        out
    }
}

fn blank_view(n: usize, fill: MaskFill) -> impl IntoView {
    view! {
        <div class="bars" data-testid="fillmask-blank">
            <p class="small"><b>{format!("Blank {n}")}</b>{format!(" (token {})", fill.position)}</p>
            {fill.top.into_iter().map(|(piece, p)| view! {
                <div class="bar-row" data-testid="fillmask-row">
                    <span class="bar-label mono" data-testid="fillmask-piece" title=piece.clone()>{piece.clone()}</span>
                    <span class="bar"><span style:width=format!("{:.1}%", p * 100.0)></span></span>
                    <span class="bar-value" data-testid="fillmask-prob" data-p=p.to_string()>{format!("{:.2}%", p * 100.0)}</span>
                </div>
            }).collect_view()}
        </div>
    }
}

/// Top predictions for every mask in a typed sentence.
#[component]
pub fn FillMaskPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = RwSignal::new(String::new());
    let result = RwSignal::new(None::<Result<Filled, String>>);
    let latest = Latest::new();
    // Why the loaded model cannot fill blanks, if it cannot; its mask token if it can.
    let ready = Memo::new(move |_| -> Option<Result<String, String>> {
        state.generation.get();
        let engine = state.engine()?;
        Some(engine.mlm.as_ref().map(|_| engine.bert.tokenizer.mask_token()).map_err(Clone::clone))
    });
    let run = move || {
        let Some(Ok(mask)) = ready.get_untracked() else { return };
        let input = text.get_untracked();
        let ticket = latest.next();
        result.set(None);
        spawn_in_view(async move {
            let Some(engine) = claim(state).await else { return };
            let start = now_ms();
            let out = match &engine.mlm {
                Ok(head) => fill_mask_with(&engine.bert.model, head, &engine.bert.tokenizer, &input, TOP_K, &engine.device)
                    .await
                    .map(|fills| Filled { text: input.clone(), mask: mask.clone(), fills, millis: now_ms() - start })
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.clone()),
            };
            drop(engine);
            if latest.is(ticket) {
                result.set(Some(out));
            }
        });
    };
    // A new model: the text takes its mask token, and is filled at once when it can be.
    Effect::new(move |_| match ready.get() {
        Some(Ok(mask)) => {
            let current = text.get_untracked();
            let next = if current.trim().is_empty() {
                EXAMPLE.replace("{mask}", &mask)
            } else {
                MASKS.iter().fold(current, |t, m| t.replace(m, &mask))
            };
            text.set(next);
            run();
        }
        _ => result.set(None),
    });
    let unavailable = move || match ready.get() {
        Some(Err(why)) => {
            // The model in use now: another model may have the same reason.
            state.generation.track();
            let name = state.engine().map(|e| e.model_id.clone()).unwrap_or_default();
            Some(view! {
                <p class="banner small" data-testid="fillmask-unavailable">
                    {format!("{name} cannot fill in blanks: {why} (sentence encoders and fine-tuned classifiers are saved without one). ")}
                    "Open a checkpoint saved with its head (a *ForMaskedLM folder such as bert-base-uncased) "
                    "with “Your own model” in the model panel above, or pretrain one in the MLM lab."
                </p>
            })
        }
        _ => None,
    };
    let results = move || {
        result.get().map(|r| match r {
            Err(e) => view! { <p class="banner warn small" data-testid="fillmask-error">{e}</p> }.into_any(),
            Ok(f) => {
                let completed = f.completed();
                let n = f.fills.len();
                view! {
                    <div data-testid="fillmask-result">
                        <p class="small muted">{format!("{n} blank{} filled in {:.0} ms. Most likely: ", if n == 1 { "" } else { "s" }, f.millis)}
                            <b data-testid="fillmask-completed">{completed}</b></p>
                        <div class="grid2">
                            {f.fills.into_iter().enumerate().map(|(i, fill)| blank_view(i + 1, fill)).collect_view()}
                        </div>
                    </div>
                }.into_any()
            }
        })
    };
    view! {
        <section class="card" data-testid="fillmask-panel">
            <h2>"8 · Fill in the blank"</h2>
            <p class="hint">"BERT learned language by guessing hidden words. Write "
                {move || match ready.get() { Some(Ok(m)) => m, _ => "[MASK]".to_string() }}
                " where a word is missing: the model's masked-language-model head scores every piece of its vocabulary for that place, "
                "using the words on both sides."</p>
            {unavailable}
            <div class="row">
                <input type="text" class="grow" data-testid="fillmask-input" aria-label="Sentence with a blank"
                    placeholder="e.g. The capital of France is [MASK]."
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))
                    on:keydown=move |ev| if ev.key() == "Enter" { run() } />
                <button data-testid="fillmask-button" on:click=move |_| run()
                    prop:disabled=move || !state.idle() || !matches!(ready.get(), Some(Ok(_)))>
                    "Fill"
                </button>
            </div>
            {results}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_read_as_text() {
        assert_eq!(as_text("##ing"), "ing");
        assert_eq!(as_text("Ġparis"), "paris");
        assert_eq!(as_text("▁rivière"), "rivière");
        assert_eq!(as_text("paris"), "paris");
    }

    #[test]
    fn the_completed_sentence_takes_each_blanks_best_piece_in_order() {
        let fill = |position, best: &str| MaskFill { position, top: vec![(best.to_string(), 0.5), ("x".into(), 0.1)] };
        let f = Filled { text: "a [MASK] b [MASK].".into(), mask: "[MASK]".into(), fills: vec![fill(2, "cat"), fill(4, "##s")], millis: 0.0 };
        assert_eq!(f.completed(), "a cat b s.");
    }
}
