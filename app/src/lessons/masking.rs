//! Lesson 4: masked language modelling. 15% of tokens picked, 80/10/10, and why.

use bertbench_core::rng::Rng;
use bertbench_core::tasks::masking::{MaskCase, MaskVocab, MaskingConfig};
use bertbench_core::tasks::pretraining::fill_mask_with;
use bertbench_core::train::{ShownToken, show_masking};
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use super::check::{Answer, Check, Expected};
use super::{LessonText, Lessons, Maths, TryThis};
use crate::app::AppState;
use crate::lab::Lab;
use crate::compute::{Latest, claim_newest};

pub const EXAMPLE: &str = "The students read the whole book the night before the exam, and then they slept.";
pub const CHECKS: [&str; 2] = ["masking-picked", "masking-share"];

/// The lesson.
#[component]
pub fn MaskingLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = expect_context::<Lessons>().input("masking");
    let seed = RwSignal::new(1u64);
    let config = MaskingConfig::new();
    let (pick, mask, random) = (config.pick_prob, config.mask_prob, config.random_prob);
    let rolled = Memo::new(move |_| -> Option<Result<Vec<ShownToken>, String>> {
        state.generation.get();
        let engine = state.engine()?;
        let tok = &engine.bert.tokenizer;
        let vocab = MaskVocab::from_tokenizer(tok);
        Some(tok.encode(&text.get()).map_err(|e| e.to_string()).map(|enc| show_masking(&enc, tok, &config, &vocab, &mut Rng::new(seed.get()))))
    });
    let picked = Signal::derive(move || {
        rolled.get().map(|r| {
            r.map(|shown| {
                let n = shown.iter().filter(|s| s.case.is_some()).count();
                let real = shown.len().saturating_sub(2);
                Answer {
                    expected: Expected::Number { value: n as f64, tolerance: 0.0 },
                    why: format!("{n} of the {real} text tokens were picked this time (15% on average: {:.1}); the loss is computed only there.", real as f64 * pick),
                }
            })
        })
    });
    let share = Signal::derive(move || {
        let options: Vec<String> = [0.15, 0.5, mask, 1.0].iter().map(|p| format!("{:.0}%", p * 100.0)).collect();
        Some(Ok(Answer {
            expected: Expected::Choice { options, right: vec![2] },
            why: format!(
                "{:.0}% become [MASK], {:.0}% a random token and {:.0}% stay as they were, so the model cannot rely on seeing [MASK], which never occurs when it is used.",
                mask * 100.0, random * 100.0, (1.0 - mask - random) * 100.0
            ),
        }))
    });
    let case_label = |c: Option<MaskCase>| match c {
        None => "",
        Some(MaskCase::Mask) => "masked",
        Some(MaskCase::Random) => "random token",
        Some(MaskCase::Keep) => "kept, still predicted",
    };
    view! {
        <p>"How does BERT learn language without labels? It plays a fill-in-the-blank game on billions of words. Some "
            "tokens of each text are hidden and the model must say which token was there, using the words on both sides. "
            "To guess “book” in “read the whole [MASK]”, it has to learn grammar, facts and meaning."</p>
        <p>"BERT picks 15% of the tokens. Of those, 80% are replaced by [MASK], 10% by a random token and 10% are left as "
            "they are; the model must predict the original token at every picked position. Why not always [MASK]? "
            "Because [MASK] never appears in real text: the model would learn to do its best work only where it sees "
            "[MASK]. The random and unchanged tokens force it to keep a good vector for every token."</p>
        <Maths>
            <p>"For the set M of picked positions, the loss is the mean cross-entropy of the original tokens:"</p>
            <p class="formula">"L = −(1/|M|) Σ"<sub>"i∈M"</sub>" log p(x"<sub>"i"</sub>" | x̃)"</p>
            <p>"where x̃ is the corrupted text and p comes from a softmax over the whole vocabulary of the final vector of "
                "position i times the word-embedding table (the output layer shares its weights with the input "
                "embeddings). With 15% picked, each pass teaches from fewer positions than a left-to-right model does, "
                "which is one reason BERT needs many passes."</p>
        </Maths>
        <LessonText id="lesson-masking-text" label="Text" text=text />
        <div class="row">
            <button data-testid="lesson-mask-roll" on:click=move |_| seed.update(|s| *s += 1)>"Mask again"</button>
            <span class="small muted" data-testid="lesson-mask-seed">{move || format!("roll {}", seed.get())}</span>
        </div>
        {move || rolled.get().map(|r| match r {
            Err(e) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Ok(shown) => view! {
                <table class="plain small masking" data-testid="lesson-masking">
                    <caption>"What the model is shown, and what it must predict"</caption>
                    <tr><th scope="col">"position"</th><th scope="col">"original"</th><th scope="col">"shown to the model"</th><th scope="col">"predicted here?"</th></tr>
                    {shown.into_iter().enumerate().map(|(i, s)| view! {
                        <tr class:picked=s.case.is_some() data-picked=s.case.is_some().to_string()>
                            <td>{i}</td><td>{s.original}</td><td>{s.shown}</td>
                            <td>{if s.case.is_some() { format!("yes: {}", case_label(s.case)) } else { String::new() }}</td>
                        </tr>
                    }).collect_view()}
                </table>
            }.into_any(),
        })}
        <FillInTheBlank />
        <TryThis>
            <ul>
                <li>"Mask again a few times: how many tokens are picked each time, and how often is one kept?"</li>
                <li>"Which picked words could you guess from the left side alone, and which need the right side?"</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question="In the roll shown, at how many positions must the model predict the original token?".to_string() answer=picked />
        <Check id=CHECKS[1] question="Of the tokens BERT picks for prediction, what share is replaced by [MASK]?".to_string() answer=share />
    }
}

/// The blank the lesson asks the model to fill, `{mask}` standing for the model's mask token.
const BLANK: &str = "The students read the whole {mask} the night before the exam.";

/// The game itself, played by the loaded model when it kept its masked-language-model head;
/// else why it cannot.
#[component]
fn FillInTheBlank() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = RwSignal::new(String::new());
    let result = RwSignal::new(None::<Result<Vec<(String, f32)>, String>>);
    let latest = Latest::new();
    let mask = Memo::new(move |_| {
        state.generation.get();
        state.engine().and_then(|e| e.mlm.is_ok().then(|| e.bert.tokenizer.mask_token()))
    });
    Effect::new(move |_| {
        if let Some(m) = mask.get() {
            text.set(BLANK.replace("{mask}", &m));
        }
    });
    Effect::new(move |_| {
        let input = text.get();
        if mask.get().is_none() || input.is_empty() {
            return;
        }
        let ticket = latest.next();
        result.set(None);
        spawn_in_view(async move {
            let Some(engine) = claim_newest(state, latest, ticket).await else { return };
            let out = match &engine.mlm {
                Ok(head) => fill_mask_with(&engine.bert.model, head, &engine.bert.tokenizer, &input, 5, &engine.device)
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|f| f.into_iter().next().map(|f| f.top).ok_or_else(|| "Put the mask token in the text.".to_string())),
                Err(e) => Err(e.clone()),
            };
            drop(engine);
            if latest.is(ticket) {
                result.set(Some(out));
            }
        });
    });
    let lab = expect_context::<Lab>();
    let loading = RwSignal::new(None::<Result<String, String>>);
    let use_lab = move |_| {
        loading.set(Some(Ok("Loading the lab's model…".into())));
        spawn_in_view(async move {
            let out = lab.load_on_page(state).await.map(|()| "The lab's model is now the page's model (the model menu switches back).".to_string());
            loading.set(Some(out));
        });
    };
    move || match mask.get() {
        None => view! {
            <p class="small muted" data-testid="lesson-fill-unavailable">
                "This model was saved without its masked-language-model head (a sentence encoder), so it cannot play the game itself. "
                "Models that can: any saved with their head (BertForMaskedLM, RobertaForMaskedLM, BertForPreTraining), and "
                "every model the MLM lab pretrains in this tab."
            </p>
            {move || if lab.has_model.get() {
                view! { <button class="secondary" data-testid="lesson-fill-use-lab" on:click=use_lab>"Let the lab's model play"</button> }.into_any()
            } else {
                view! { <p class="small muted">"Pretrain a tiny BERT in the MLM lab tab (a few minutes), then come back: it can play here."</p> }.into_any()
            }}
            {move || loading.get().map(|r| match r {
                Ok(m) => view! { <p class="small muted" role="status" data-testid="lesson-fill-status">{m}</p> }.into_any(),
                Err(e) => view! { <p class="banner warn small" data-testid="lesson-fill-status">{e}</p> }.into_any(),
            })}
        }.into_any(),
        Some(m) => view! {
            <h3>"The loaded model plays"</h3>
            <label class="field" for="lesson-fill-text">{format!("A text with {m} where the model should guess")}</label>
            <input id="lesson-fill-text" type="text" data-testid="lesson-fill-text" prop:value=move || text.get()
                on:change=move |ev| text.set(event_target_value(&ev)) />
            {move || match result.get() {
                None => view! { <p class="small muted" role="status">"Guessing…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="banner warn small">{e}</p> }.into_any(),
                Some(Ok(top)) => view! {
                    <table class="plain small" data-testid="lesson-fill">
                        <caption>"Its five most likely tokens for the blank"</caption>
                        <tr><th scope="col">"token"</th><th scope="col">"probability"</th></tr>
                        {top.into_iter().map(|(piece, p)| view! { <tr><td class="mono">{piece}</td><td>{format!("{:.1}%", p * 100.0)}</td></tr> }).collect_view()}
                    </table>
                }.into_any(),
            }}
        }.into_any(),
    }
}
