//! WordPiece tokenization of a sentence (or pair), live as you type.

use bertbench_core::tokenizer::{Encoded, Token};
use leptos::prelude::*;

use crate::app::{AppState, TokenChoice};

/// One token: its piece, id and segment. With `state`, a button that selects it in every view
/// of the explorer (the tokens panel); without, a plain box (a lesson's tokens).
pub(crate) fn token_view(i: usize, t: Token, unk_id: u32, state: Option<AppState>) -> impl IntoView {
    let continuation = t.piece.starts_with("##") && !t.special;
    let class = format!(
        "tok{}{}{}",
        if t.type_id == 1 { " seg1" } else { "" },
        if t.special { " special" } else { "" },
        if t.id == unk_id { " unk" } else { "" },
    );
    let piece = if continuation {
        view! { <span class="piece"><span class="cont">"##"</span>{t.piece[2..].to_string()}</span> }.into_any()
    } else {
        view! { <span class="piece">{t.piece.clone()}</span> }.into_any()
    };
    let title = format!("position {i} · id {} · segment {} · characters {}..{}", t.id, t.type_id, t.offsets.0, t.offsets.1);
    let id = t.id;
    let Some(state) = state else {
        return view! {
            <div class=class title=title data-testid="token">
                {piece}
                <div class="meta" data-testid="token-id">{id}</div>
            </div>
        }
        .into_any();
    };
    let choice = TokenChoice { position: i, piece: t.piece.clone(), segment: t.type_id, chars: t.offsets };
    let pick = move || state.toggle_token(choice.clone());
    let pick_key = pick.clone();
    let selected = move || state.token_position() == Some(i);
    view! {
        <div class=class class:selected=selected title=title data-testid="token" role="button" tabindex="0"
            aria-pressed=move || selected().to_string()
            on:click=move |_| pick()
            on:keydown=move |ev| {
                if ev.key() == "Enter" || ev.key() == " " {
                    ev.prevent_default();
                    pick_key();
                }
            }>
            {piece}
            <div class="meta" data-testid="token-id">{id}</div>
        </div>
    }
    .into_any()
}

/// How the open model cuts text and marks its inputs, from its own tokenizer and config.
fn pieces_hint(family: &str, kind: &str, cls: &str, sep: &str, segments: bool) -> String {
    let cut = match kind {
        "WordPiece" => "WordPiece pieces: common words stay whole, rare ones split into pieces marked ##",
        "BPE" => "byte-level BPE pieces: common words stay whole, rare ones split; Ġ marks a piece that starts after a space",
        "SentencePiece Unigram" => "SentencePiece Unigram pieces: common words stay whole, rare ones split; ▁ marks a piece that starts a word",
        _ => "whole words",
    };
    let pair = if segments { "a second sentence gets segment 1" } else { "this model has no segments: the separator alone tells the two sentences apart" };
    format!("{family} reads {cut}. {cls} starts every input and {sep} ends each sentence; {pair}.")
}

/// Sentence inputs and their tokens.
#[component]
pub fn TokensPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let encoded = Memo::new(move |_| -> Option<Result<(Encoded, u32), String>> {
        let (a, b) = (state.sentence_a.get(), state.sentence_b.get());
        // The tokenizer is here before the model's weights: this view works while they arrive.
        state.reader(|tok, _| {
            let result = if b.trim().is_empty() { tok.encode(&a) } else { tok.encode_pair(&a, &b) };
            result.map(|e| (e, tok.unk_id)).map_err(|e| e.to_string())
        })
    });
    view! {
        <section class="card" data-testid="tokens-panel">
            <h2>"1 · Tokens"</h2>
            <p class="hint" data-testid="tokens-hint">{move || {
                state.reader(|tok, config| {
                    let piece = |id| tok.id_to_piece(id).unwrap_or_default();
                    pieces_hint(config.model_type.display_name(), tok.piece_kind(), &piece(tok.cls_id), &piece(tok.sep_id), config.type_vocab_size > 1)
                })
            }}</p>
            <div class="grid2">
                <div>
                    <label class="field" for="sentence-a">"Sentence A"</label>
                    <input id="sentence-a" type="text" data-testid="sentence-a"
                        prop:value=move || state.sentence_a.get()
                        on:input=move |ev| state.sentence_a.set(event_target_value(&ev)) />
                </div>
                <div>
                    <label class="field" for="sentence-b">"Sentence B (optional, makes a pair)"</label>
                    <input id="sentence-b" type="text" data-testid="sentence-b" placeholder="e.g. a question about sentence A"
                        prop:value=move || state.sentence_b.get()
                        on:input=move |ev| state.sentence_b.set(event_target_value(&ev)) />
                </div>
            </div>
            // Lesson 2 writes a pair as "A | B"; here a `|` in sentence A is a character.
            {move || {
                let a = state.sentence_a.get();
                let split = a.split_once(" | ").filter(|(x, y)| !x.trim().is_empty() && !y.trim().is_empty() && state.sentence_b.with(|b| b.trim().is_empty()));
                split.map(|(x, y)| {
                    let (x, y) = (x.trim().to_string(), y.trim().to_string());
                    view! {
                        <p class="small" data-testid="pair-hint">"“|” is read here as a character, not as the break between two sentences. "
                            <button class="secondary small" data-testid="pair-split" on:click=move |_| {
                                state.sentence_a.set(x.clone());
                                state.sentence_b.set(y.clone());
                            }>"Make it a pair: A and B"</button>
                        </p>
                    }
                })
            }}
            {move || match encoded.get() {
                None => view! { <p class="muted small">"The tokenizer is on its way (it comes before the model's weights)."</p> }.into_any(),
                Some(Err(e)) => view! { <p class="banner warn small" data-testid="tokens-error">{e}</p> }.into_any(),
                Some(Ok((enc, unk))) => {
                    let n = enc.tokens.len();
                    let pieces = enc.tokens.iter().filter(|t| !t.special).count();
                    let warn = enc.truncated_from.map(|from| view! {
                        <p class="banner warn small" data-testid="truncated">
                            {format!("This input is {from} tokens long; BERT reads at most {n}, so the last {} were cut off.", from - n)}
                        </p>
                    });
                    view! {
                        <div>
                            {warn}
                            <p class="small muted" data-testid="token-count">{format!("{n} tokens ({pieces} from the text, {} special)", n - pieces)}</p>
                            <div class="tokens" data-testid="tokens">
                                {enc.tokens.into_iter().enumerate().map(|(i, t)| token_view(i, t, unk, Some(state))).collect_view()}
                            </div>
                            <div class="legend">
                                <span><i style="background: var(--seg-a)"></i>"segment 0 (A)"</span>
                                <span><i style="background: var(--seg-b)"></i>"segment 1 (B): dashed edge, dotted underline"</span>
                                <span><i style="background: #f1edfb"></i>"special token"</span>
                                <span><i style="background: var(--err-soft)"></i>"[UNK]: not in the vocabulary"</span>
                                <span>"number under each piece: vocabulary id"</span>
                            </div>
                            <p class="small muted" role="status" data-testid="token-selected">{move || match state.token.get() {
                                Some(c) => format!(
                                    "Selected: “{}” at position {}. The attention view outlines its row and column, the input parts its row, \
                                     and the map (token points of sentence A) its point with its nearest neighbours. Select it again to clear.",
                                    c.piece, c.position
                                ),
                                None => "Select a token (click, or Tab to it and press Enter) to follow it through the views below.".to_string(),
                            }}</p>
                        </div>
                    }.into_any()
                }
            }}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::pieces_hint;

    #[test]
    fn the_hint_follows_the_models_pieces_and_segments() {
        let bert = pieces_hint("BERT", "WordPiece", "[CLS]", "[SEP]", true);
        assert!(bert.starts_with("BERT reads WordPiece") && bert.contains("##") && bert.contains("[CLS] starts") && bert.contains("segment 1"), "{bert}");
        let xlmr = pieces_hint("XLM-RoBERTa", "SentencePiece Unigram", "<s>", "</s>", false);
        assert!(xlmr.contains("▁ marks") && !xlmr.contains("##") && xlmr.contains("<s> starts") && xlmr.contains("no segments"), "{xlmr}");
        assert!(pieces_hint("RoBERTa", "BPE", "<s>", "</s>", false).contains("Ġ marks"));
    }
}
