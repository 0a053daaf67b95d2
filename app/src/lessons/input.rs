//! Lesson 2: the input. Each token's vector is its token embedding plus a segment embedding plus
//! a position embedding, then LayerNorm: the same word twice gets the same token part and a
//! different position part (and a different segment part in sentence B).

use bertbench_core::analysis::inspect::{InputParts, norm};
use bertbench_core::analysis::similarity::cosine;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use super::check::{Answer, Check, Expected};
use super::{LessonText, Lessons, Maths, TryThis};
use crate::app::AppState;
use crate::compute::{self, Latest, claim_newest};

pub const EXAMPLE: &str = "the dog chased the cat | the cat ran up a tree";
pub const CHECKS: [&str; 2] = ["input-differs", "input-cosine"];

/// The parts compared, in the order the table shows them.
const PARTS: [&str; 5] = ["token", "segment", "position", "sum", "after LayerNorm"];

/// The answer options of the first question: which looked-up parts differ.
const DIFFER: [&str; 4] = ["only the token part", "only the segment part", "only the position part", "the segment and the position parts"];

#[derive(Clone, PartialEq)]
struct Seen {
    /// `(piece, segment, position)` of every token.
    tokens: Vec<(String, u32, usize)>,
    /// The repeated piece and its first two positions.
    repeated: Option<(String, usize, usize)>,
    /// Cosine of the two occurrences' vectors, per part of [`PARTS`].
    cosines: Vec<f32>,
    /// Length of each part of the first occurrence.
    norms: Vec<f32>,
}

/// The input, split at `|` into sentences A and B.
fn split(text: &str) -> (&str, Option<&str>) {
    match text.split_once('|') {
        Some((a, b)) if !b.trim().is_empty() => (a.trim(), Some(b.trim())),
        _ => (text.trim_end_matches('|').trim(), None),
    }
}

/// The first text piece that occurs twice: the one in sentence B when it occurs in both, since
/// then the segment differs too.
fn repeated(tokens: &[(String, u32, usize)], special: &[bool]) -> Option<(String, usize, usize)> {
    let pairs = (0..tokens.len()).flat_map(|i| (i + 1..tokens.len()).map(move |j| (i, j)));
    let same = |&(i, j): &(usize, usize)| !special[i] && !special[j] && tokens[i].0 == tokens[j].0;
    let mut found: Vec<(usize, usize)> = pairs.filter(same).collect();
    found.sort_by_key(|&(i, j)| (tokens[i].1 == tokens[j].1, i, j));
    found.first().map(|&(i, j)| (tokens[i].0.clone(), i, j))
}

/// What the cosine `c` between the two vectors of a repeated `piece` that layer 1 receives says.
fn repeated_piece(piece: &str, c: f32) -> String {
    if c >= 0.99995 {
        return format!(
            "{c:.4}: the two “{piece}” vectors layer 1 receives are the same: this model adds no position to its embeddings; its \
             attention is given the positions itself (rotary or relative positions), which is how it tells the two apart."
        );
    }
    let how = if c >= 0.99 {
        "almost the same (their position embeddings change them little)"
    } else if c >= 0.8 {
        "alike but not equal"
    } else if c >= 0.3 {
        "quite different"
    } else {
        "far apart"
    };
    format!("{c:.2}: the two “{piece}” vectors layer 1 receives are {how}: only their position (and segment) embeddings differ, so attention can tell them apart by position.")
}

fn seen(parts: &InputParts, tokens: Vec<(String, u32, usize)>, special: &[bool]) -> Seen {
    let repeated = repeated(&tokens, special);
    let (mut cosines, mut norms) = (Vec::new(), Vec::new());
    if let Some((_, i, j)) = &repeated {
        for part in [&parts.token, &parts.segment, &parts.position, &parts.sum, &parts.normalized] {
            cosines.push(cosine(&part[*i], &part[*j]));
            norms.push(norm(&part[*i]));
        }
    }
    Seen { tokens, repeated, cosines, norms }
}

/// The lesson.
#[component]
pub fn InputLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = expect_context::<Lessons>().input("input");
    let result = RwSignal::new(None::<Result<Seen, String>>);
    let latest = Latest::new();
    Effect::new(move |_| {
        state.generation.get();
        let text = text.get();
        let ticket = latest.next();
        result.set(None);
        spawn_in_view(async move {
            let Some(engine) = claim_newest(state, latest, ticket).await else { return };
            let tok = &engine.bert.tokenizer;
            let encoded = match split(&text) {
                (a, Some(b)) => tok.encode_pair(a, b),
                (a, None) => tok.encode(a),
            };
            let out = match encoded {
                Ok(e) => {
                    let tokens = e.tokens.iter().enumerate().map(|(p, t)| (t.piece.clone(), t.type_id, p)).collect();
                    let special: Vec<bool> = e.tokens.iter().map(|t| t.special).collect();
                    compute::input_parts(&engine, &e).await.map(|(p, _)| seen(&p, tokens, &special))
                }
                Err(e) => Err(e.to_string()),
            };
            drop(engine);
            if latest.is(ticket) {
                result.set(Some(out));
            }
        });
    });
    let need_repeat = "Type a text in which a word occurs twice (for example “the”).";
    let differs = Signal::derive(move || {
        result.get().map(|r| {
            r.and_then(|s| {
                let (piece, i, j) = s.repeated.clone().ok_or(need_repeat)?;
                let differ: Vec<&str> = PARTS[..3].iter().zip(&s.cosines).filter(|(_, c)| **c < 0.9999).map(|(p, _)| *p).collect();
                let right = match differ.as_slice() {
                    ["token"] => 0,
                    ["segment"] => 1,
                    ["position"] => 2,
                    ["segment", "position"] => 3,
                    _ => return Err(format!("For this model, {} of the parts differ; the question needs a word twice in an ordinary BERT.", differ.join(" and "))),
                };
                Ok(Answer {
                    expected: Expected::Choice { options: DIFFER.iter().map(|s| s.to_string()).collect(), right: vec![right] },
                    why: format!(
                        "“{piece}” at positions {i} and {j} looks up the same row of the token table; {}",
                        if right == 3 { "the second is in sentence B and at another position, so both the segment and the position parts differ." } else { "it sits at another position, so only the position part differs." }
                    ),
                })
            })
        })
    });
    let normed = Signal::derive(move || {
        result.get().map(|r| {
            r.and_then(|s| {
                let (piece, _, _) = s.repeated.clone().ok_or(need_repeat)?;
                let c = s.cosines[4];
                Ok(Answer {
                    expected: Expected::Number { value: c as f64, tolerance: 0.011 },
                    why: repeated_piece(&piece, c),
                })
            })
        })
    });
    let question = Signal::derive(move || match result.get() {
        Some(Ok(Seen { repeated: Some((piece, i, j)), .. })) => format!("“{piece}” occurs at positions {i} and {j}. Which looked-up parts of their input vectors differ?"),
        _ => "The repeated word's two input vectors: which looked-up parts differ?".to_string(),
    });
    let question_cos = Signal::derive(move || match result.get() {
        Some(Ok(Seen { repeated: Some((piece, _, _)), .. })) => format!("What is the cosine between the two “{piece}” vectors layer 1 receives (after LayerNorm)? Two decimals."),
        _ => "What is the cosine between the repeated word's two vectors after LayerNorm?".to_string(),
    });
    view! {
        <p>"Attention alone does not know where a token is: it compares every token with every other, in no order. So "
            "BERT builds each token's input vector from three looked-up vectors, each a row of a learned table: the "
            <em>"token"</em>" embedding (which piece), the "<em>"segment"</em>" embedding (sentence A or B) and the "
            <em>"position"</em>" embedding (0, 1, 2, … up to 511). It adds them and normalises the sum (LayerNorm)."</p>
        <p>"The same word twice therefore starts with the same token part but a different position part, and, if the second "
            "one is in sentence B, a different segment part too. Separate two sentences with "<code>"|"</code>" to make a pair."</p>
        <Maths>
            <p class="formula">"x"<sub>"i"</sub>" = LayerNorm(E"<sub>"token"</sub>"[id"<sub>"i"</sub>"] + E"<sub>"segment"</sub>"[s"<sub>"i"</sub>"] + E"<sub>"position"</sub>"[i])"</p>
            <p>"LayerNorm(v) = γ ⊙ (v − mean(v)) / √(var(v) + ε) + β: every vector gets mean 0 and variance 1 across its "
                "dimensions, then a learned scale γ and shift β. BERT learns its position table; the original Transformer "
                "used fixed sines and cosines instead. RoBERTa has one segment only; DistilBERT none."</p>
        </Maths>
        <LessonText id="lesson-input-text" label="Text (sentence A | sentence B)" text=text />
        {move || match result.get() {
            None => view! { <p class="small muted" role="status">"Looking up the input vectors…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Some(Ok(s)) => {
                let pick = s.repeated.clone();
                let marked = move |p: usize| pick.as_ref().is_some_and(|(_, i, j)| p == *i || p == *j);
                view! {
                    <div class="scroll-x">
                    <table class="plain small lesson-lookups" data-testid="lesson-input-tokens">
                        <caption>"The three look-ups of each token"</caption>
                        <tr><th scope="row">"token"</th>{s.tokens.iter().map(|(t, _, p)| view! { <td class="mono" class:chosen=marked(*p)>{t.clone()}{if marked(*p) { " ◆" } else { "" }}</td> }).collect_view()}</tr>
                        <tr><th scope="row">"segment"</th>{s.tokens.iter().map(|(_, seg, _)| view! { <td>{if *seg == 0 { "A" } else { "B" }}</td> }).collect_view()}</tr>
                        <tr><th scope="row">"position"</th>{s.tokens.iter().map(|(_, _, p)| view! { <td>{*p}</td> }).collect_view()}</tr>
                    </table>
                    </div>
                    {match s.repeated.clone() {
                        None => view! { <p class="small muted">{need_repeat}</p> }.into_any(),
                        Some((piece, i, j)) => view! {
                            <table class="plain small" data-testid="lesson-input-parts">
                                <caption>{format!("“{piece}” (◆) at positions {i} and {j}, part by part")}</caption>
                                <tr><th scope="col">"part"</th><th scope="col">{format!("cosine of the two")}</th><th scope="col">{format!("length at position {i}")}</th></tr>
                                {PARTS.iter().zip(s.cosines.iter().zip(&s.norms)).map(|(name, (c, n))| view! {
                                    <tr><th scope="row">{*name}</th><td data-v=c.to_string()>{format!("{c:.2}")}{if *c < 0.9999 { " (differs)" } else { " (same)" }}</td><td>{format!("{n:.2}")}</td></tr>
                                }).collect_view()}
                            </table>
                        }.into_any(),
                    }}
                }.into_any()
            }
        }}
        <TryThis>
            <ul>
                <li>"Remove the “|”: which part of the second “the” stops differing?"</li>
                <li>"Put the same word right next to itself (“very very”): how close are neighbouring positions?"</li>
                <li>"The explorer's “Input representation” view shows the lengths of every part for every token."</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question=question answer=differs />
        <Check id=CHECKS[1] question=question_cos answer=normed />
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sentence follows the cosine: the same vectors (no position embedding), nearly the
    /// same, alike, quite different, far apart.
    #[test]
    fn the_repeated_piece_sentence_follows_its_cosine() {
        assert!(repeated_piece("the", 1.0).contains("are the same: this model adds no position"));
        assert!(repeated_piece("the", 0.993).starts_with("0.99: the two “the” vectors layer 1 receives are almost the same"));
        assert!(repeated_piece("the", 0.9).contains("are alike but not equal"));
        assert!(repeated_piece("the", 0.5).contains("are quite different"));
        assert!(repeated_piece("the", 0.1).contains("are far apart"));
    }

    fn tokens(pieces: &[(&str, u32)]) -> Vec<(String, u32, usize)> {
        pieces.iter().enumerate().map(|(p, (t, s))| (t.to_string(), *s, p)).collect()
    }

    #[test]
    fn a_word_in_both_sentences_is_preferred_to_one_repeated_in_a() {
        let t = tokens(&[("[CLS]", 0), ("the", 0), ("dog", 0), ("the", 0), ("[SEP]", 0), ("the", 1), ("[SEP]", 1)]);
        let special = [true, false, false, false, true, false, true];
        assert_eq!(repeated(&t, &special), Some(("the".into(), 1, 5)));
        let one = &t[..5];
        assert_eq!(repeated(one, &special[..5]), Some(("the".into(), 1, 3)));
        assert_eq!(repeated(&t[..3], &special[..3]), None, "the specials are not words");
    }

    #[test]
    fn a_bar_splits_the_input_into_a_pair() {
        assert_eq!(split("a b | c d"), ("a b", Some("c d")));
        assert_eq!(split("a b |"), ("a b", None));
        assert_eq!(split("a b"), ("a b", None));
    }
}
