//! Lesson 5: next-sentence and sentence-order prediction. The pairs BERT (NSP) and ALBERT (SOP)
//! train on, made from the lesson's texts by the lab's own `make_pairs` (NSP's negatives from the
//! other text, as BERT drew them from another document), rolled again at will, and one pair as
//! the model reads it: `[CLS] A [SEP] B [SEP]` with its segments.

use bertbench_core::rng::Rng;
use bertbench_core::tasks::masking::{PairTask, SentencePair, make_pairs};
use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use super::{Lessons, Maths, TryThis};
use crate::app::AppState;
use crate::lab::{Lab, best_downstream, electra_learned_from};

pub const EXAMPLE: &str = "Mia packed her bag before dawn. She caught the first train to the coast. The sea was grey and calm. \
                           She walked along the beach until noon.\n\n\
                           The recipe needs three eggs and a cup of flour. Whisk the eggs until they are pale. \
                           Fold in the flour slowly. Bake the cake for forty minutes.";
pub const CHECKS: [&str; 2] = ["pairs-negatives", "pairs-topic"];
/// The lab's downstream comparison: not counted, since it needs runs in the lab.
pub const DOWNSTREAM: &str = "pairs-downstream";
/// ELECTRA against MLM in the lab: not counted either.
pub const ELECTRA: &str = "pairs-electra";

/// The texts (documents) of the lesson's input, a blank line between two, each cut into its
/// sentences.
pub fn documents(text: &str) -> Vec<Vec<String>> {
    text.split('\n')
        .collect::<Vec<_>>()
        .split(|line| line.trim().is_empty())
        .map(|lines| sentences(&lines.join("\n")))
        .filter(|d| !d.is_empty())
        .collect()
}

/// Sentences of a text: split after `.`, `!` or `?` followed by a space (or at line ends).
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        let ends = matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace());
        if ends || c == '\n' {
            let s = current.trim();
            if !s.is_empty() {
                out.push(s.to_string());
            }
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

fn label(task: PairTask, label: usize) -> &'static str {
    match (task, label) {
        (PairTask::Nsp, 0) => "IsNext",
        (PairTask::Nsp, _) => "NotNext (a sentence of another text)",
        (PairTask::Sop, 0) => "in order",
        (PairTask::Sop, _) => "swapped",
    }
}

/// Where this objective's negatives come from, for `texts` texts in the input.
fn negatives_source(task: PairTask, texts: usize) -> String {
    match task {
        PairTask::Sop => "Sentence-order prediction: each negative is a true pair swapped, from the same text.".into(),
        PairTask::Nsp if texts > 1 => format!(
            "Next-sentence prediction over {texts} texts: each “not next” sentence is drawn from another text than A's, as BERT \
             drew it from another document."
        ),
        PairTask::Nsp => "Next-sentence prediction over one text: with no other text to draw from, each “not next” sentence comes \
                          from elsewhere in the same text, so its topic gives nothing away. Add a second text after an empty line."
            .into(),
    }
}

/// The lesson.
#[component]
pub fn PairsLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = expect_context::<Lessons>().input("pairs");
    let task = RwSignal::new(PairTask::Nsp);
    let seed = RwSignal::new(1u64);
    let pairs = Memo::new(move |_| -> Result<Vec<SentencePair>, String> {
        make_pairs(&documents(&text.get()), task.get(), &mut Rng::new(seed.get())).map_err(|e| format!("{e}: end each sentence with a full stop."))
    });
    let negatives = Signal::derive(move || {
        Some(pairs.get().map(|p| {
            let n = p.iter().filter(|p| p.label == 1).count();
            Answer {
                expected: Expected::Number { value: n as f64, tolerance: 0.0 },
                why: format!("{n} of the {} pairs are negatives this roll: each pair is one with probability ½.", p.len()),
            }
        }))
    });
    let topic = Signal::derive(move || {
        Some(Ok(Answer {
            expected: Expected::Choice { options: vec![PairTask::Nsp.label().into(), PairTask::Sop.label().into()], right: vec![1] },
            why: "In sentence-order prediction both sentences always come from the same text, so the topic gives nothing away: \
                  only the flow of the text (what refers back to what) tells the order."
                .into(),
        }))
    });
    let lab = expect_context::<Lab>();
    let downstream = Signal::derive(move || {
        Some(match lab.compared.with(|runs| best_downstream(runs)) {
            Some((options, right, why)) => Ok(Answer { expected: Expected::Choice { options, right }, why }),
            None => Err("Compare two or more runs in the lab first, then press “Fine-tune each” (see Try this).".into()),
        })
    });
    let electra = Signal::derive(move || {
        Some(match lab.compared.with(|runs| electra_learned_from(runs)) {
            Some((ratio, why)) => Ok(Answer { expected: Expected::Number { value: ratio, tolerance: ratio * 0.1 }, why }),
            None => Err("Keep an “MLM only” run and a “replaced-token detection (ELECTRA)” run in the lab first (see Try this).".into()),
        })
    });
    // The first pair as the model reads it.
    let first = Memo::new(move |_| {
        state.generation.get();
        let engine = state.engine()?;
        let pairs = pairs.get().ok()?;
        let pair = pairs.first()?;
        Some(engine.bert.tokenizer.encode_pair(&pair.a, &pair.b).map_err(|e| e.to_string()))
    });
    view! {
        <p>"Masked language modelling teaches what words mean in their sentence. Many tasks are about two texts: does "
            "this answer fit that question, does this sentence follow from that one? BERT was also trained on "
            <em>"next-sentence prediction"</em>" (NSP): it reads two sentences A and B, and from [CLS]'s final vector "
            "says whether B really came next in the text, or is a random sentence from another document of the corpus "
            "(half of each)."</p>
        <p>"Later work found NSP too easy: a random sentence is usually about something else, so the topic alone "
            "answers it. RoBERTa dropped it and did as well or better. ALBERT replaced it with "<em>"sentence-order prediction"</em>
            " (SOP): two consecutive sentences, in order or swapped. Both come from the same text, so the model has to "
            "follow how the text flows."</p>
        <Maths>
            <p>"A two-way classifier on the pooled [CLS] vector h (a dense layer with tanh, the pooler), trained with "
                "cross-entropy next to the MLM loss:"</p>
            <p class="formula">"p(IsNext) = softmax(W · tanh(W"<sub>"p"</sub>" h + b"<sub>"p"</sub>") + b)"<sub>"0"</sub>",   L = L"<sub>"MLM"</sub>" + L"<sub>"NSP"</sub></p>
            <p>"The segment embeddings (lesson 2) are how the model knows which token belongs to A and which to B."</p>
        </Maths>
        <label class="field" for="lesson-pairs-text">"Texts (sentences in order; an empty line between two texts)"</label>
        <textarea id="lesson-pairs-text" rows="5" data-testid="lesson-input" prop:value=move || text.get()
            on:change=move |ev| text.set(event_target_value(&ev))></textarea>
        <div class="row">
            <label class="small" for="lesson-pairs-task">"Objective"</label>
            <select id="lesson-pairs-task" data-testid="lesson-pairs-task" on:change=move |ev| task.set(if event_target_value(&ev) == "sop" { PairTask::Sop } else { PairTask::Nsp })>
                <option value="nsp" selected=move || task.get() == PairTask::Nsp>"next-sentence prediction (BERT)"</option>
                <option value="sop" selected=move || task.get() == PairTask::Sop>"sentence-order prediction (ALBERT)"</option>
            </select>
            <button data-testid="lesson-pairs-roll" on:click=move |_| seed.update(|s| *s += 1)>"Make the pairs again"</button>
            <span class="small muted" data-testid="lesson-pairs-seed">{move || format!("roll {}", seed.get())}</span>
        </div>
        <p class="small" data-testid="lesson-pairs-source" aria-live="polite">{move || negatives_source(task.get(), documents(&text.get()).len())}</p>
        {move || match pairs.get() {
            Err(e) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Ok(p) => view! {
                <table class="plain small" data-testid="lesson-pairs">
                    <caption>"The training pairs made from the text"</caption>
                    <tr><th scope="col">"#"</th><th scope="col">"sentence A"</th><th scope="col">"sentence B"</th><th scope="col">"label"</th></tr>
                    {p.into_iter().enumerate().map(|(i, p)| view! {
                        <tr data-label=p.label.to_string()>
                            <td>{i + 1}</td><td>{p.a}</td><td>{p.b}</td>
                            <td>{if p.label == 1 { "✗ " } else { "✓ " }}{label(task.get_untracked(), p.label)}</td>
                        </tr>
                    }).collect_view()}
                </table>
            }.into_any(),
        }}
        {move || first.get().map(|r| match r {
            Err(e) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Ok(enc) => view! {
                <p class="small">"Pair 1 as the model reads it (segment A plain, segment B underlined):"</p>
                <p class="mono small pair-tokens" data-testid="lesson-pairs-tokens">
                    {enc.tokens.into_iter().map(|t| view! {
                        <span class="piece" class:segment-b=t.type_id == 1 title=if t.type_id == 1 { "segment B" } else { "segment A" }>{t.piece}</span>
                    }).collect_view()}
                </p>
            }.into_any(),
        })}
        <p class="small muted">"The MLM lab trains a tiny BERT with MLM and NSP or SOP on your own corpus, and shows how each loss falls."</p>
        // On screen only, as the lab questions below: the printed handout stays one page.
        <div class="screen-only">
            <p>"ELECTRA changed the objective itself. MLM learns only from the 15% of tokens it picks (80% of them hidden behind [MASK], 10% replaced, 10% kept). ELECTRA lets a small "
                <em>"generator"</em>" (an MLM model) fill those blanks with plausible tokens, and trains the model, the "
                <em>"discriminator"</em>", to say at every token whether it was replaced: a lesson from every token of the "
                "sequence. At the same compute, Clark et al. (2020) found its encoder better on GLUE than BERT's; the generator is "
                "then dropped. Try it: in the MLM lab, pretrain BERT-tiny once with “MLM only” and once with “replaced-token "
                "detection (ELECTRA)”, then read “Runs compared” and press “Fine-tune each”."</p>
        </div>
        <TryThis>
            <ul>
                <li>"Make the pairs again with NSP: could you tell the negatives without reading closely? Now with SOP?"</li>
                <li>"Delete the empty line so both texts become one: where do NSP's negatives come from now, and can the topic still give them away?"</li>
                <li>"In the MLM lab, pretrain BERT-tiny three times on one corpus: MLM only, + NSP, + SOP. Then press “Fine-tune each” under “Runs compared”: which objective gave a task the best encoder, and by more than two texts?"</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question="In the pairs shown, how many are negatives (label ✗)?".to_string() answer=negatives />
        <Check id=CHECKS[1] question="In which objective can the topic of the two sentences not give the answer away?".to_string() answer=topic />
        // On screen only, and not counted: it needs runs in the lab.
        <div class="screen-only">
            <Check id=DOWNSTREAM question="Of the lab's runs compared, whose encoder gave the sentiment task the best head?".to_string() answer=downstream />
            <Check id=ELECTRA question="About how many times more tokens per step did the ELECTRA run's discriminator learn from than the MLM run predicted?".to_string() answer=electra />
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bertbench_core::tasks::masking::nsp_negatives_from_other_documents;

    #[test]
    fn a_text_is_cut_after_its_full_stops() {
        assert_eq!(sentences("One. Two! Three? 3.5 is a number"), ["One.", "Two!", "Three?", "3.5 is a number"]);
        assert_eq!(sentences("a line\nanother line"), ["a line", "another line"]);
        assert_eq!(sentences(EXAMPLE).len(), 8);
    }

    #[test]
    fn the_example_is_two_texts_and_nsp_negatives_cross_between_them() {
        let docs = documents(EXAMPLE);
        assert_eq!(docs.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4]);
        assert!(nsp_negatives_from_other_documents(&docs));
        let pairs = make_pairs(&docs, PairTask::Nsp, &mut Rng::new(1)).unwrap();
        assert_eq!(pairs.len(), 6);
        for p in pairs.iter().filter(|p| p.label == 1) {
            assert_ne!(docs[0].contains(&p.a), docs[0].contains(&p.b), "a negative from the same text: {p:?}");
        }
        assert!(negatives_source(PairTask::Nsp, 2).contains("another text"));
        assert!(negatives_source(PairTask::Nsp, 1).contains("same text"));
        assert_eq!(documents("One. Two.\n  \nThree.\n\n"), [vec!["One.".to_string(), "Two.".into()], vec!["Three.".into()]]);
    }
}
