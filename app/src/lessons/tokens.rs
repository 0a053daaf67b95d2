//! Lesson 1: from text to tokens. WordPiece, `##`, `[UNK]`, why neither letters nor words.

use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use super::{Lessons, Maths, TryThis};
use crate::app::AppState;
use crate::explore::token_view;

pub const EXAMPLE: &str = "Tokenization is unbelievably useful 🙂";
pub const CHECKS: [&str; 2] = ["tokens-word", "tokens-count"];
/// The word the first question asks about.
const WORD: &str = "unbelievably";

/// The lesson.
#[component]
pub fn TokensLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = expect_context::<Lessons>().input("tokens");
    let tokenizer = move || {
        state.generation.get();
        state.engine()
    };
    let encoded = Memo::new(move |_| tokenizer().map(|e| e.bert.tokenizer.encode(&text.get()).map(|enc| (enc, e.bert.tokenizer.unk_id)).map_err(|e| e.to_string())));
    let word_pieces = Signal::derive(move || {
        let engine = tokenizer()?;
        Some(engine.bert.tokenizer.encode(WORD).map_err(|e| e.to_string()).map(|enc| {
            let pieces: Vec<String> = enc.tokens.iter().filter(|t| !t.special).map(|t| t.piece.clone()).collect();
            Answer {
                expected: Expected::Number { value: pieces.len() as f64, tolerance: 0.0 },
                why: format!("“{WORD}” becomes {} piece(s): {}.", pieces.len(), pieces.join(" ")),
            }
        }))
    });
    let count = Signal::derive(move || {
        encoded.get().map(|r| {
            r.map(|(enc, _)| Answer {
                expected: Expected::Number { value: enc.tokens.len() as f64, tolerance: 0.0 },
                why: format!("{} tokens: the text's {} pieces plus [CLS] and [SEP].", enc.tokens.len(), enc.tokens.len() - 2),
            })
        })
    });
    view! {
        <p>"A network reads numbers, not letters. BERT first cuts the text into "<em>"tokens"</em>
            " and looks each one up in a vocabulary of about 30,000 entries: its number (id) picks the row of a table "
            "of vectors, the token's embedding."</p>
        <p>"Why not one token per letter? The sequences would be five times longer, and attention costs grow with the "
            "square of the length; a letter alone also means little. Why not one per word? English alone has hundreds of "
            "thousands of words, names and typos, and every word missing from the vocabulary would be lost. "
            "WordPiece sits between the two: common words stay whole, rarer ones are cut into pieces that are in the "
            "vocabulary. A piece that continues a word is written with "<code>"##"</code>
            ". A character that is in no piece at all (an emoji, for this vocabulary) becomes "<code>"[UNK]"</code>", unknown."</p>
        <Maths>
            <p>"WordPiece tokenizes a word greedily, longest match first: take the longest prefix of the word that is in the "
                "vocabulary, then the longest vocabulary entry (with ##) for the rest, and so on. If some part matches "
                "nothing, the whole word becomes [UNK]."</p>
            <p>"The vocabulary is learned from a corpus: start from single characters and repeatedly add the merge of two "
                "pieces that raises the likelihood of the corpus most, score(a, b) = count(ab) / (count(a) · count(b)), "
                "until the vocabulary has the size wanted. The MLM lab tab trains such a vocabulary on a small corpus."</p>
            <p>"The input BERT reads is [CLS] + pieces + [SEP], at most 512 tokens: [CLS]'s final vector stands for the "
                "whole text, [SEP] ends each sentence."</p>
        </Maths>
        <label class="field" for="lesson-tokens-text">"Text"</label>
        <input id="lesson-tokens-text" type="text" data-testid="lesson-input" prop:value=move || text.get()
            on:input=move |ev| text.set(event_target_value(&ev)) />
        {move || match encoded.get() {
            None => view! { <p class="muted small">"The tokenizer arrives with the model."</p> }.into_any(),
            Some(Err(e)) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Some(Ok((enc, unk))) => {
                let summary = format!(
                    "{} tokens: {} from the text, {} special; {} [UNK].",
                    enc.tokens.len(),
                    enc.tokens.iter().filter(|t| !t.special).count(),
                    enc.tokens.iter().filter(|t| t.special).count(),
                    enc.tokens.iter().filter(|t| t.id == unk).count(),
                );
                view! {
                    <p class="small muted" data-testid="lesson-token-count" aria-live="polite">{summary}</p>
                    <div class="tokens" data-testid="lesson-tokens">
                        {enc.tokens.into_iter().enumerate().map(|(i, t)| token_view(i, t, unk, None)).collect_view()}
                    </div>
                }.into_any()
            }
        }}
        <TryThis>
            <ul>
                <li>"Type your own name, a long chemical word, or a word in another language: which stay whole?"</li>
                <li>"Compare “play”, “playing”, “replay” and “playfulness”."</li>
                <li>"Type an emoji or a character from another script and find the [UNK]."</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question=format!("Into how many pieces does this model's tokenizer cut the word “{WORD}”? Type it above to find out.") answer=word_pieces />
        <Check id=CHECKS[1] question="How many tokens does BERT read for the text above, [CLS] and [SEP] included?".to_string() answer=count />
    }
}
