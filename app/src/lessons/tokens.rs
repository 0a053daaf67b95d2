//! Lesson 1: from text to tokens. WordPiece, `##`, `[UNK]`, why neither letters nor words.

use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use super::merges::MergesOneByOne;
use super::{Lessons, Maths, TryThis};
use crate::app::AppState;
use crate::explore::token_view;
use crate::lab::BUILTIN_CORPUS;
use bertbench_core::tokenizer::BertTokenizer;
use std::sync::Arc;

pub const EXAMPLE: &str = "Tokenization is unbelievably useful 🙂";
pub const CHECKS: [&str; 3] = ["tokens-word", "tokens-count", super::merges::CHECK];
/// The word the first question asks about.
const WORD: &str = "unbelievably";

/// The lesson.
#[component]
pub fn TokensLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = expect_context::<Lessons>().input("tokens");
    // The tokenizer is here before the model's weights: this lesson works from the first seconds.
    let encoded = Memo::new(move |_| {
        let text = text.get();
        state.reader(|tok, _| tok.encode(&text).map(|enc| (enc, tok.unk_id)).map_err(|e| e.to_string()))
    });
    let word_pieces = Signal::derive(move || {
        state.reader(|tok, _| {
            tok.encode(WORD).map_err(|e| e.to_string()).map(|enc| {
                let pieces: Vec<String> = enc.tokens.iter().filter(|t| !t.special).map(|t| t.piece.clone()).collect();
                Answer {
                    expected: Expected::Number { value: pieces.len() as f64, tolerance: 0.0 },
                    why: format!("“{WORD}” becomes {} piece(s): {}.", pieces.len(), pieces.join(" ")),
                }
            })
        })
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
            <p>"The vocabulary is learned from a corpus: start from single characters and repeatedly merge the two "
                "neighbouring pieces that occur together most often, count(ab), until the vocabulary has the size wanted. "
                "That is what the trainer below does (Hugging Face's WordPiece trainer, which counts pairs as BPE does). "
                "WordPiece as Schuster and Nakajima (2012) defined it chooses instead the merge that raises the likelihood of the "
                "corpus under a language model of the pieces most; the score often quoted for it, "
                "score(a, b) = count(ab) / (count(a) · count(b)), is a cheap approximation of that gain (Hugging Face's "
                "description of the method), which prefers pieces that are rare apart but often together. "
                "Below, you train one; the MLM lab pretrains a tiny BERT on it."</p>
            <p>"The input BERT reads is [CLS] + pieces + [SEP], at most 512 tokens: [CLS]'s final vector stands for the "
                "whole text, [SEP] ends each sentence."</p>
        </Maths>
        <label class="field" for="lesson-tokens-text">"Text"</label>
        <input id="lesson-tokens-text" type="text" data-testid="lesson-input" prop:value=move || text.get()
            on:input=move |ev| text.set(event_target_value(&ev)) />
        {move || match encoded.get() {
            None => view! { <p class="muted small">"The tokenizer is on its way (it comes before the model's weights)."</p> }.into_any(),
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
        <VocabularyTraining text=text />
        <MergesOneByOne text=text />
        <TryThis>
            <ul>
                <li>"Type your own name, a long chemical word, or a word in another language: which stay whole?"</li>
                <li>"Compare “play”, “playing”, “replay” and “playfulness”."</li>
                <li>"Type an emoji or a character from another script and find the [UNK]."</li>
                <li>"Step through the merges: when does “the” become one piece? Put a word ten times into the corpus and see how soon it is merged whole."</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question=format!("Into how many pieces does this model's tokenizer cut the word “{WORD}”? Type it above to find out.") answer=word_pieces />
        <Check id=CHECKS[1] question="How many tokens does BERT read for the text above, [CLS] and [SEP] included?".to_string() answer=count />
    }
}

/// Vocabulary sizes offered for training one's own.
const SIZES: [usize; 4] = [60, 200, 1000, 4000];

/// Trains a WordPiece vocabulary of a chosen size on the built-in corpus and tokenizes the
/// lesson's text with it, beside the model's own vocabulary.
#[component]
fn VocabularyTraining(text: RwSignal<String>) -> impl IntoView {
    let size = RwSignal::new(SIZES[1]);
    let lines: Vec<String> = BUILTIN_CORPUS.lines().map(str::to_string).collect();
    let corpus_lines = lines.len();
    // Trained again when the size changes (not on each keystroke in the text).
    let trained = RwSignal::new(Err::<(Arc<BertTokenizer>, Vec<String>), String>("training…".into()));
    Effect::new(move |_| {
        let out = BertTokenizer::train_wordpiece(&lines, size.get(), true, 512).map_err(|e| e.to_string()).map(|(tok, vocab_txt)| {
            let learned = String::from_utf8_lossy(&vocab_txt).lines().filter(|p| !p.starts_with('[')).map(str::to_string).collect();
            (Arc::new(tok), learned)
        });
        trained.set(out);
    });
    view! {
        <h3>"Train a vocabulary"</h3>
        <p>"The model's vocabulary was learned from a large corpus before pretraining. Learn one yourself from this page's "
            {format!("built-in corpus ({corpus_lines} short sentences)")}
            " and see how its size changes the cut of the text above."</p>
        <div class="row">
            <label class="small" for="lesson-vocab-size">"Pieces in the vocabulary"</label>
            <select id="lesson-vocab-size" data-testid="lesson-vocab-size" on:change=move |ev| size.set(event_target_value(&ev).parse().unwrap_or(SIZES[1]))>
                {SIZES.iter().map(|n| view! { <option value=n.to_string() selected=move || size.get() == *n>{n.to_string()}</option> }).collect_view()}
            </select>
        </div>
        {move || match trained.get() {
            Err(e) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Ok((tok, learned)) => {
                let shown: Vec<String> = learned.iter().rev().take(24).cloned().collect();
                let view_of = match tok.encode(&text.get()) {
                    Ok(enc) => {
                        let n = enc.tokens.len();
                        let unk = tok.unk_id;
                        view! {
                            <p class="small muted" data-testid="lesson-vocab-count" aria-live="polite">
                                {format!("{} pieces learned, {} of them single characters. The text above becomes {n} tokens with it:", learned.len(), learned.iter().filter(|p| p.trim_start_matches("##").chars().count() == 1).count())}
                            </p>
                            <div class="tokens" data-testid="lesson-vocab-tokens">
                                {enc.tokens.into_iter().enumerate().map(|(i, t)| token_view(i, t, unk, None)).collect_view()}
                            </div>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="banner warn small">{e.to_string()}</p> }.into_any(),
                };
                view! {
                    {view_of}
                    <p class="small">"The last pieces it added (the merges it found worth keeping last): "
                        <span class="mono">{shown.join("  ")}</span></p>
                }.into_any()
            }
        }}
    }
}
