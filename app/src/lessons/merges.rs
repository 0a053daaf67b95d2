//! Lesson 1's vocabulary trainer one merge at a time, on a corpus the student can edit (the
//! lesson's text and a few built-in sentences to start): at each step, the pair the trainer
//! merged, how often it stood side by side just then, and how the corpus's words are cut. The
//! steps are the trainer's own (`bertbench_core::tokenizer::merges`); the question's answer is
//! the pair most counted before the first merge. On screen only: the handout keeps lesson 1 to
//! one page.

use bertbench_core::tokenizer::merges::{MergeSteps, Pair, merge_steps};
use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use crate::lab::BUILTIN_CORPUS;

/// The check's id, listed in the lesson's `CHECKS`.
pub const CHECK: &str = "tokens-first-merge";
/// Merges stepped through.
const STEPS: usize = 30;
/// Built-in sentences after the lesson's text in the starting corpus.
const CORPUS_LINES: usize = 16;
/// Words whose cut is shown, most frequent first.
const WORDS_SHOWN: usize = 24;

/// The starting corpus: the lesson's text, then a few sentences of the built-in corpus.
fn starting_corpus(text: &str) -> String {
    std::iter::once(text).chain(BUILTIN_CORPUS.lines().take(CORPUS_LINES)).collect::<Vec<_>>().join("\n")
}

fn pair_text((a, b): &Pair) -> String {
    format!("{a} + {b}")
}

/// The question: which pair is merged first, among the pairs most counted before it
/// (alphabetical, so the order gives nothing away); every pair tied at the top is right.
fn first_merge(steps: &MergeSteps) -> Result<Answer, String> {
    let first = steps.steps.first().ok_or("No pair occurs twice in this corpus: the trainer merges nothing. Add text to it.")?;
    let mut options: Vec<(String, u64)> = first.candidates.iter().map(|(p, n)| (pair_text(p), *n)).collect();
    options.sort();
    let right = options.iter().enumerate().filter(|(_, (_, n))| *n == first.count).map(|(i, _)| i).collect();
    Ok(Answer {
        expected: Expected::Choice { options: options.into_iter().map(|(o, _)| o).collect(), right },
        why: format!(
            "before any merge, “{}” stands side by side {} times and no other pair more often, so the trainer merges it first into “{}”.",
            pair_text(&first.pair),
            first.count,
            first.piece
        ),
    })
}

/// The stepper.
#[component]
pub fn MergesOneByOne(text: RwSignal<String>) -> impl IntoView {
    let edited = RwSignal::new(None::<String>);
    let corpus = Memo::new(move |_| edited.get().unwrap_or_else(|| starting_corpus(&text.get())));
    let steps = Memo::new(move |_| {
        let lines: Vec<String> = corpus.get().lines().map(str::to_string).collect();
        merge_steps(&lines, STEPS, true).map_err(|e| e.to_string())
    });
    let k = RwSignal::new(0usize);
    // Another corpus starts again before the first merge.
    Effect::new(move |_| {
        steps.track();
        k.set(0);
    });
    let answer = Signal::derive(move || Some(steps.get().and_then(|s| first_merge(&s))));
    view! {
        <section class="screen-only" data-testid="lesson-merges" aria-labelledby="lesson-merges-title">
        <h3 id="lesson-merges-title">"Merges one by one"</h3>
        <p>"Watch the trainer at work. It starts from single characters (a character inside a word written with ##), "
            "counts every pair of neighbouring pieces over the corpus, merges the pair counted most into one new piece, "
            "and counts again. A pair must occur at least twice to be merged."</p>
        <div>
            <label class="field" for="lesson-merges-corpus">"Corpus for the merges (your text above, then built-in sentences; edit it, one sentence a line)"</label>
            <textarea id="lesson-merges-corpus" rows="4" data-testid="lesson-merges-corpus" prop:value=move || corpus.get()
                on:change=move |ev| edited.set(Some(event_target_value(&ev)))></textarea>
        </div>
        {move || match steps.get() {
            Err(e) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Ok(s) => {
                let s = std::sync::Arc::new(s);
                let total: u64 = s.words.iter().map(|(_, n)| n).sum();
                let last = s.steps.len();
                view! {
                    <p class="small muted">{format!("The corpus: {} lines, {total} words, {} of them different.", corpus.get().lines().count(), s.words.len())}</p>
                    <div class="row" role="group" aria-labelledby="lesson-merges-title" data-steps=last>
                        <button class="secondary" data-testid="lesson-merge-previous" prop:disabled=move || k.get() == 0
                            on:click=move |_| k.update(|k| *k = k.saturating_sub(1))>"← Previous merge"</button>
                        <button data-testid="lesson-merge-next" prop:disabled=move || { k.get() >= last }
                            on:click=move |_| k.update(|k| *k = (*k + 1).min(last))>"Next merge →"</button>
                    </div>
                    <MergeView steps=s k=k />
                }.into_any()
            }
        }}
        <Check id=CHECK question="Which pair of pieces does the trainer merge first in this corpus? Step to merge 1, or read the counts before it.".to_string() answer=answer />
        </section>
    }
}

/// Step `k` of `steps`: what was merged, the pairs counted most now, and the words' cuts.
#[component]
fn MergeView(steps: std::sync::Arc<MergeSteps>, k: RwSignal<usize>) -> impl IntoView {
    move || {
        let k = k.get().min(steps.steps.len());
        let n = steps.steps.len();
        let pieces = steps.pieces_after(k);
        let made = k.checked_sub(1).map(|i| steps.steps[i].piece.clone());
        let total: u64 = pieces.iter().zip(&steps.words).map(|(p, (_, c))| p.len() as u64 * c).sum();
        let said = match k.checked_sub(1).map(|i| &steps.steps[i]) {
            None => format!("Before any merge: every word is cut into its characters, {total} pieces in all."),
            Some(m) => format!(
                "Merge {k} of {n}: “{}” + “{}” → “{}”, side by side {} times in the corpus just before. The words are now {total} pieces in all.",
                m.pair.0, m.pair.1, m.piece, m.count
            ),
        };
        let next = steps.steps.get(k);
        let next_view = match next {
            Some(m) => view! {
                <table class="plain small" data-testid="lesson-merge-candidates">
                    <caption>{format!("The pairs counted most now, before merge {}", k + 1)}</caption>
                    <tr><th scope="col">"pair"</th><th scope="col">"side by side"</th><th scope="col">"merged next"</th></tr>
                    {m.candidates.iter().map(|(p, c)| {
                        let chosen = *p == m.pair;
                        view! {
                            <tr data-pair=pair_text(p) data-count=c.to_string()>
                                <td class="mono">{pair_text(p)}</td><td>{c.to_string()}</td><td>{if chosen { "✓ yes" } else { "" }}</td>
                            </tr>
                        }
                    }).collect_view()}
                </table>
            }.into_any(),
            None if steps.exhausted => view! { <p class="small">"The trainer stops here: no pair of pieces is left that occurs twice."</p> }.into_any(),
            None => view! { <p class="small">{format!("The lesson shows the first {n} merges; the trainer goes on until the vocabulary has the size asked for.")}</p> }.into_any(),
        };
        view! {
            <p class="small" role="status" aria-live="polite" data-testid="lesson-merge-step" data-step=k.to_string()
                data-count=k.checked_sub(1).map(|i| steps.steps[i].count.to_string()).unwrap_or_default()
                data-pair=k.checked_sub(1).map(|i| pair_text(&steps.steps[i].pair)).unwrap_or_default()>{said}</p>
            {next_view}
            <ul class="merge-words" data-testid="lesson-merge-words" aria-label="The most frequent words, cut after this merge">
                {pieces.iter().zip(&steps.words).take(WORDS_SHOWN).map(|(p, (w, c))| view! {
                    <li data-word=w.clone() data-pieces=p.len().to_string()>
                        <span class="muted">{format!("{w} ×{c}: ")}</span>
                        {p.iter().map(|piece| {
                            let new = made.as_deref() == Some(piece.as_str());
                            view! { <span class="piece mono" class:new=new>{if new { view! { <strong>{piece.clone()}</strong> }.into_any() } else { piece.clone().into_any() }}</span> }
                        }).collect_view()}
                    </li>
                }).collect_view()}
            </ul>
        }
    }
}
