//! Extractive question answering, as `transformers.BertForQuestionAnswering` does it: the
//! question and a window of the passage in one sequence (`[CLS] question [SEP] passage [SEP]`),
//! a linear layer giving every token a start and an end logit (`qa_outputs`), and the answer the
//! span of the passage whose start and end logits sum highest. "No answer" (SQuAD 2.0) is the
//! span `[CLS]..[CLS]`.
//!
//! A passage longer than a window is split into windows that overlap by a stride
//! ([`BertTokenizer::encode_windows`]); a window that does not hold the whole answer learns
//! "no answer", and the best span is searched over every window (the post-processing of
//! `transformers`' question-answering examples). Metrics are SQuAD's: exact match and token F1
//! after its normalisation (lower case, no punctuation, no articles), the best over the gold
//! answers, a question without an answer scored against the empty answer.
//!
//! The model is a [`BertClassifier`] at [`Level::Span`] with two labels, `start` and `end`.

use std::collections::HashMap;
use std::ops::Range;

use burn::prelude::*;
use serde::{Deserialize, Serialize};

use super::classification::{BertClassifier, Level};
use crate::bert::model::BertInput;
use crate::data::{QaAnswer, QaItem};
use crate::error::Error;
use crate::nn::read_f32;
use crate::tasks::metrics::softmax;
use crate::tokenizer::{Batch, BertTokenizer, Encoded, Window};

/// The head's two labels: a token's start logit, then its end logit.
pub const LABELS: [&str; 2] = ["start", "end"];

/// How passages are windowed and answers searched.
#[derive(Config, Debug, Copy, PartialEq)]
pub struct SpanConfig {
    /// Tokens of a window, question included (never more than the model's length).
    #[config(default = 256)]
    pub max_len: usize,
    /// Passage tokens two consecutive windows share.
    #[config(default = 96)]
    pub stride: usize,
    /// The longest answer considered, in tokens.
    #[config(default = 30)]
    pub max_answer_len: usize,
    /// Start and end candidates kept per window.
    #[config(default = 20)]
    pub n_best: usize,
}

/// A question's windows, each with the token positions of its answer (`(0, 0)`, `[CLS]`, where
/// the window does not hold the whole answer or the question has none). The answer learned is
/// the first one.
pub fn encode_question(tokenizer: &BertTokenizer, item: &QaItem, config: &SpanConfig) -> crate::Result<Vec<(Window, (usize, usize))>> {
    let windows = tokenizer.encode_windows(&item.question, &item.context, config.max_len, config.stride)?;
    Ok(windows
        .into_iter()
        .map(|w| {
            let at = answer_positions(&w, item.answers.first());
            (w, at)
        })
        .collect())
}

/// The window tokens where `answer` starts and ends (characters `start..start + len`): the
/// passage token whose characters hold the first one and the one that holds the last.
pub fn answer_positions(window: &Window, answer: Option<&QaAnswer>) -> (usize, usize) {
    let Some(answer) = answer else { return (0, 0) };
    let (first, last) = (answer.start, answer.start + answer.text.chars().count());
    let tokens = &window.encoded.tokens[window.context.clone()];
    let inside = tokens.first().is_some_and(|t| t.offsets.0 <= first) && tokens.last().is_some_and(|t| t.offsets.1 >= last);
    if !inside {
        return (0, 0);
    }
    let start = tokens.iter().rposition(|t| t.offsets.0 <= first).unwrap_or(0);
    let end = tokens.iter().position(|t| t.offsets.1 >= last).unwrap_or(tokens.len() - 1);
    (window.context.start + start, window.context.start + end.max(start))
}

/// One candidate answer.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanAnswer {
    /// First character in the passage.
    pub start: usize,
    /// One past the last character.
    pub end: usize,
    /// The passage's text there.
    pub text: String,
    /// Start logit + end logit.
    pub score: f32,
    /// Softmax of the score among the candidates kept (and "no answer" where allowed).
    pub probability: f32,
}

/// A passage token with its start and end probabilities (the best over the windows it is in).
#[derive(Debug, Clone, PartialEq)]
pub struct PassageToken {
    /// Characters of the passage.
    pub offsets: (usize, usize),
    /// Softmax of the start logits over its window's tokens.
    pub start: f32,
    /// Softmax of the end logits.
    pub end: f32,
}

/// The answer to a question, from every window's logits.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered {
    /// The answer; `None`: the passage does not answer it (only when no answer is allowed).
    pub answer: Option<SpanAnswer>,
    /// The best distinct spans, best first.
    pub spans: Vec<SpanAnswer>,
    /// "No answer"'s score (the lowest `[CLS]` start + end over the windows) and probability,
    /// when no answer is allowed.
    pub null: Option<(f32, f32)>,
    /// The passage's tokens with their start and end probabilities.
    pub tokens: Vec<PassageToken>,
    /// How many windows the passage took.
    pub windows: usize,
}

/// Searches the best spans over a question's windows. `logits[w]` holds window `w`'s tokens'
/// `(start, end)` logits, row after row (`[len, 2]`).
pub fn best_spans(context: &str, windows: &[(&Encoded, Range<usize>)], logits: &[&[f32]], config: &SpanConfig, allow_null: bool) -> Answered {
    let chars: Vec<(usize, char)> = context.char_indices().collect();
    let byte = |c: usize| chars.get(c).map_or(context.len(), |(b, _)| *b);
    let mut found: HashMap<(usize, usize), f32> = HashMap::new();
    let mut null = f32::INFINITY;
    let mut tokens: Vec<PassageToken> = Vec::new();
    for ((encoded, window), rows) in windows.iter().zip(logits) {
        let (starts, ends): (Vec<f32>, Vec<f32>) = rows.chunks(2).map(|r| (r[0], r[1])).unzip();
        null = null.min(starts[0] + ends[0]);
        let top = |v: &[f32]| {
            let mut i: Vec<usize> = window.clone().collect();
            i.sort_by(|&a, &b| v[b].total_cmp(&v[a]));
            i.truncate(config.n_best);
            i
        };
        let (best_starts, best_ends) = (top(&starts), top(&ends));
        for &s in &best_starts {
            for &e in best_ends.iter().filter(|&&e| e >= s && e - s < config.max_answer_len) {
                let span = (encoded.tokens[s].offsets.0, encoded.tokens[e].offsets.1);
                let score = starts[s] + ends[e];
                let kept = found.entry(span).or_insert(score);
                *kept = kept.max(score);
            }
        }
        let (p_start, p_end) = (softmax(&starts), softmax(&ends));
        for t in window.clone() {
            let offsets = encoded.tokens[t].offsets;
            match tokens.iter_mut().find(|x| x.offsets == offsets) {
                Some(x) => {
                    x.start = x.start.max(p_start[t]);
                    x.end = x.end.max(p_end[t]);
                }
                None => tokens.push(PassageToken { offsets, start: p_start[t], end: p_end[t] }),
            }
        }
    }
    tokens.sort_by_key(|t| t.offsets);
    let mut spans: Vec<SpanAnswer> = found
        .into_iter()
        .map(|((start, end), score)| SpanAnswer { start, end, text: context[byte(start)..byte(end)].to_string(), score, probability: 0.0 })
        .collect();
    spans.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.start.cmp(&b.start)));
    spans.truncate(config.n_best);
    let mut scores: Vec<f32> = spans.iter().map(|s| s.score).collect();
    if allow_null {
        scores.push(null);
    }
    let probs = softmax(&scores);
    for (s, p) in spans.iter_mut().zip(&probs) {
        s.probability = *p;
    }
    let null = allow_null.then(|| (null, *probs.last().expect("null's score was pushed")));
    let answer = match (spans.first(), null) {
        (Some(best), Some((null, _))) if null > best.score => None,
        (best, _) => best.cloned(),
    };
    Answered { answer, spans, null, tokens, windows: windows.len() }
}

/// Answers `question` over `context` with a question-answering model (`Level::Span`).
pub async fn answer(model: &BertClassifier, tokenizer: &BertTokenizer, question: &str, context: &str, config: &SpanConfig, allow_null: bool) -> crate::Result<Answered> {
    if model.spec.level != Level::Span {
        return Err(Error::Input("this model does not answer questions: it has no start/end head".into()));
    }
    let windows = tokenizer.encode_windows(question, context, config.max_len, config.stride)?;
    let device = model.head.classifier.weight.device();
    let encoded: Vec<_> = windows.iter().map(|w| w.encoded.clone()).collect();
    let batch = Batch::from_encoded(&encoded, tokenizer.pad_id);
    let seq = batch.seq_len;
    let values = read_f32(model.forward_tokens(BertInput::from_batch(&batch, &device))?).await?;
    let rows: Vec<&[f32]> = windows.iter().enumerate().map(|(i, w)| &values[i * seq * 2..(i * seq + w.encoded.tokens.len()) * 2]).collect();
    let refs: Vec<(&Encoded, Range<usize>)> = windows.iter().map(|w| (&w.encoded, w.context.clone())).collect();
    Ok(best_spans(context, &refs, &rows, config, allow_null))
}

/// SQuAD's answer normalisation: lower case, ASCII punctuation removed, the words "a", "an" and
/// "the" removed, whitespace collapsed.
pub fn normalize_answer(s: &str) -> String {
    let lower: String = s.to_lowercase().chars().filter(|c| !c.is_ascii_punctuation()).collect();
    // `\b(a|an|the)\b`: a whole run of word characters.
    let mut out = String::with_capacity(lower.len());
    let mut word = String::new();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    for c in lower.chars().chain(std::iter::once(' ')) {
        if is_word(c) {
            word.push(c);
            continue;
        }
        out.push_str(if matches!(word.as_str(), "a" | "an" | "the") { " " } else { &word });
        word.clear();
        out.push(c);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// 1 when the normalised texts are equal.
pub fn exact_match(gold: &str, pred: &str) -> f32 {
    f32::from(u8::from(normalize_answer(gold) == normalize_answer(pred)))
}

/// SQuAD's token F1 of the normalised texts (1 when both are empty, 0 when one is).
pub fn token_f1(gold: &str, pred: &str) -> f32 {
    let (gold, pred) = (normalize_answer(gold), normalize_answer(pred));
    let (g, p): (Vec<&str>, Vec<&str>) = (gold.split_whitespace().collect(), pred.split_whitespace().collect());
    if g.is_empty() || p.is_empty() {
        return f32::from(u8::from(g == p));
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for w in &g {
        *counts.entry(w).or_default() += 1;
    }
    let mut same = 0;
    for w in &p {
        if let Some(n) = counts.get_mut(w).filter(|n| **n > 0) {
            *n -= 1;
            same += 1;
        }
    }
    if same == 0 {
        return 0.0;
    }
    let (precision, recall) = (same as f32 / p.len() as f32, same as f32 / g.len() as f32);
    2.0 * precision * recall / (precision + recall)
}

/// Exact match and F1 of a group of questions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerScores {
    /// Mean exact match (0..1).
    pub exact: f32,
    /// Mean token F1 (0..1).
    pub f1: f32,
    /// Questions.
    pub count: usize,
}

/// SQuAD's evaluation: over all questions, and over those with and without an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerMetrics {
    /// Every question.
    pub all: AnswerScores,
    /// Questions the passage answers.
    pub has_answer: AnswerScores,
    /// Questions it does not (SQuAD 2.0).
    pub no_answer: AnswerScores,
}

impl AnswerMetrics {
    /// Scores `pred[i]` (`""`: no answer) against the gold answers `gold[i]` (none: the question
    /// has no answer), as SQuAD 2.0's script does: gold answers that normalise to nothing are
    /// dropped, the best score over the rest counts.
    pub fn new<S: AsRef<str>, T: AsRef<str>>(gold: &[Vec<S>], pred: &[T]) -> Self {
        let mut sums = [(0.0f64, 0.0f64, 0usize); 2];
        for (g, p) in gold.iter().zip(pred) {
            let kept: Vec<&str> = g.iter().map(AsRef::as_ref).filter(|a| !normalize_answer(a).is_empty()).collect();
            let golds = if kept.is_empty() { vec![""] } else { kept };
            let best = |f: fn(&str, &str) -> f32| golds.iter().map(|a| f(a, p.as_ref())).fold(0.0f32, f32::max);
            let side = &mut sums[usize::from(golds == [""])];
            side.0 += f64::from(best(exact_match));
            side.1 += f64::from(best(token_f1));
            side.2 += 1;
        }
        let scores = |(e, f, n): (f64, f64, usize)| {
            let d = n.max(1) as f64;
            AnswerScores { exact: (e / d) as f32, f1: (f / d) as f32, count: n }
        };
        let all = (sums[0].0 + sums[1].0, sums[0].1 + sums[1].1, sums[0].2 + sums[1].2);
        Self { all: scores(all), has_answer: scores(sums[0]), no_answer: scores(sums[1]) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Token;

    #[test]
    fn normalisation_and_scores_follow_the_squad_script() {
        assert_eq!(normalize_answer("The  Cat's   hat, an apple!"), "cats hat apple");
        assert_eq!(normalize_answer("theatre a-b"), "theatre ab");
        assert_eq!(normalize_answer("l’the"), "l’");
        assert_eq!(exact_match("the Eiffel Tower", "Eiffel tower."), 1.0);
        assert_eq!(token_f1("Eiffel Tower in Paris", "the Eiffel Tower"), 2.0 * 1.0 * 0.5 / 1.5);
        assert_eq!(token_f1("", ""), 1.0);
        assert_eq!(token_f1("", "Paris"), 0.0);
        assert!((token_f1("a a b", "a b b") - 2.0 / 3.0).abs() < 1e-6, "articles are gone: b vs b b");
        assert!((token_f1("x y y", "y y z") - 2.0 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn metrics_take_the_best_gold_answer_and_score_no_answer_apart() {
        let gold = vec![vec!["Denver Broncos", "the Broncos"], vec![], vec!["1990"]];
        let pred = ["Broncos", "", "in 1991"];
        let m = AnswerMetrics::new(&gold, &pred);
        assert_eq!(m.has_answer.count, 2);
        assert_eq!(m.no_answer, AnswerScores { exact: 1.0, f1: 1.0, count: 1 });
        assert_eq!(m.has_answer.exact, 0.5);
        assert!((m.all.f1 - (1.0 + 1.0 + 0.0) / 3.0).abs() < 1e-6);
    }

    fn window(pieces: &[(&str, (usize, usize))], context: std::ops::Range<usize>) -> Window {
        let tokens = pieces
            .iter()
            .map(|(p, o)| Token { piece: p.to_string(), id: 0, type_id: 0, offsets: *o, special: p.starts_with('[') })
            .collect();
        Window { encoded: Encoded { tokens, truncated_from: None }, context }
    }

    // "Tom fed the cat." → passage tokens tom(0,3) fed(4,7) the(8,11) cat(12,15) .(15,16)
    fn fed() -> Window {
        let pieces = [
            ("[CLS]", (0, 0)),
            ("who", (0, 3)),
            ("[SEP]", (0, 0)),
            ("tom", (0, 3)),
            ("fed", (4, 7)),
            ("the", (8, 11)),
            ("cat", (12, 15)),
            (".", (15, 16)),
            ("[SEP]", (0, 0)),
        ];
        window(&pieces, 3..8)
    }

    #[test]
    fn answers_map_to_their_tokens_or_to_cls_outside_the_window() {
        let w = fed();
        assert_eq!(answer_positions(&w, Some(&QaAnswer { text: "the cat".into(), start: 8 })), (5, 6));
        assert_eq!(answer_positions(&w, Some(&QaAnswer { text: "om".into(), start: 1 })), (3, 3));
        assert_eq!(answer_positions(&w, Some(&QaAnswer { text: "dog".into(), start: 20 })), (0, 0));
        assert_eq!(answer_positions(&w, None), (0, 0));
    }

    #[test]
    fn the_best_span_is_in_the_passage_short_enough_and_beats_no_answer_or_not() {
        let w = fed();
        // Question token "who" has the highest start logit: it is not in the passage.
        let mut rows = vec![0.0f32; 9 * 2];
        let set = |rows: &mut Vec<f32>, t: usize, s: f32, e: f32| {
            rows[t * 2] = s;
            rows[t * 2 + 1] = e;
        };
        set(&mut rows, 1, 9.0, 9.0);
        set(&mut rows, 5, 3.0, 0.0);
        set(&mut rows, 6, 0.0, 4.0);
        set(&mut rows, 4, 0.0, 1.0);
        let config = SpanConfig::new();
        let a = best_spans("Tom fed the cat.", &[(&w.encoded, w.context.clone())], &[&rows], &config, false);
        let best = a.answer.unwrap();
        assert_eq!((best.text.as_str(), best.score), ("the cat", 7.0));
        assert!(a.spans.iter().all(|s| s.score <= 7.0) && a.spans.len() > 1);
        assert!(a.null.is_none());
        assert_eq!(a.tokens.len(), 5);
        // An end before the start is never a span: "fed" ends at 1.0 but starts at 0.
        assert!(!a.spans.iter().any(|s| s.start > s.end));
        // A longer answer limit of one token drops "the cat".
        let one = SpanConfig { max_answer_len: 1, ..config };
        assert_ne!(best_spans("Tom fed the cat.", &[(&w.encoded, w.context.clone())], &[&rows], &one, false).answer.unwrap().text, "the cat");
        // No answer wins when [CLS]'s start + end beats every span.
        set(&mut rows, 0, 5.0, 5.0);
        let a = best_spans("Tom fed the cat.", &[(&w.encoded, w.context.clone())], &[&rows], &config, true);
        assert!(a.answer.is_none());
        assert_eq!(a.null.unwrap().0, 10.0);
    }
}
