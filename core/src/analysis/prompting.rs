//! Prompting instead of a head: a text is classified zero-shot by filling a cloze template
//! ("{text} It was {mask}.") with the model's masked-language-model head and comparing the
//! probabilities of one word per label (great / terrible), as Schick and Schütze's
//! pattern-verbalizer pairs (2021) and GPT-style prompting do. Nothing is trained: what the
//! pretrained head already knows decides.

use burn::prelude::*;
use burn::tensor::TensorData;

use crate::bert::model::{BertInput, BertModel, ForwardOptions};
use crate::error::{Error, Result};
use crate::nn::read_f32;
use crate::tasks::metrics::softmax;
use crate::tasks::pretraining::MlmHead;
use crate::tokenizer::{Batch, BertTokenizer, Encoded};

/// Where the text goes in a template.
pub const TEXT: &str = "{text}";
/// Where the blank goes in a template (written as the model's own mask token when filled).
pub const MASK: &str = "{mask}";
/// Texts scored per forward pass.
const BATCH: usize = 16;

/// A cloze template with one word per label (the *verbalizer*).
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// The template, with [`TEXT`] and [`MASK`] once each.
    pub template: String,
    /// The word standing for each label, in the labels' order.
    pub words: Vec<String>,
}

/// A label's word as the model's vocabulary holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verbalized {
    /// The word as typed.
    pub word: String,
    /// The one piece it is at the blank (`great`, RoBERTa's `Ġgreat`).
    pub piece: String,
    /// That piece's id.
    pub id: u32,
}

/// Every text's scores under a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompted {
    /// The labels' words as pieces.
    pub words: Vec<Verbalized>,
    /// Per text, the head's probability (over the whole vocabulary) of each label's word at the
    /// blank.
    pub probs: Vec<Vec<f32>>,
    /// How many texts were cut short so that the filled template fits the model.
    pub shortened: usize,
}

impl Prompted {
    /// Per text, the label whose word is likeliest.
    pub fn predictions(&self) -> Vec<usize> {
        self.probs.iter().map(|p| crate::tasks::metrics::argmax(p)).collect()
    }

    /// The share of texts whose likeliest word is their label's.
    pub fn accuracy(&self, labels: &[usize]) -> f32 {
        let right = self.predictions().iter().zip(labels).filter(|(p, l)| p == l).count();
        right as f32 / labels.len().max(1) as f32
    }
}

impl Prompt {
    /// Checks the template: [`TEXT`] and [`MASK`] once each, and at least two words.
    pub fn check(&self) -> Result<()> {
        for place in [TEXT, MASK] {
            let n = self.template.matches(place).count();
            if n != 1 {
                return Err(Error::Input(format!("the template must hold {place} once (it holds it {n} times)")));
            }
        }
        if self.words.len() < 2 {
            return Err(Error::Input("a prompt needs a word for each of at least two labels".into()));
        }
        if let Some(i) = self.words.iter().position(|w| w.trim().is_empty()) {
            return Err(Error::Input(format!("label {} has no word", i + 1)));
        }
        Ok(())
    }

    /// The template filled with `text`, the blank written as `mask`.
    pub fn fill(&self, text: &str, mask: &str) -> String {
        self.template.replace(TEXT, text.trim()).replace(MASK, mask)
    }

    /// Each label's word as the one piece it is at the blank: the template is encoded once with
    /// the mask and once with the word in its place, and the word must replace the mask token by
    /// exactly one piece (so `Ġgreat` for RoBERTa after a space). A word cut into several pieces
    /// is refused, naming them.
    pub fn verbalize(&self, tokenizer: &BertTokenizer) -> Result<Vec<Verbalized>> {
        self.check()?;
        let mask = tokenizer.mask_token();
        let blank = tokenizer.encode(&self.fill("", &mask))?;
        let at = mask_position(&blank, tokenizer.mask_id)?;
        self.words
            .iter()
            .map(|word| {
                let filled = tokenizer.encode(&self.fill("", word.trim()))?;
                let extra = filled.tokens.len() as isize - blank.tokens.len() as isize;
                let same_around = extra >= 0
                    && blank.tokens[..at].iter().zip(&filled.tokens).all(|(a, b)| a.id == b.id)
                    && blank.tokens[at + 1..].iter().rev().zip(filled.tokens.iter().rev()).all(|(a, b)| a.id == b.id);
                let pieces = &filled.tokens[at..(at as isize + 1 + extra.max(0)) as usize];
                match (same_around, pieces) {
                    (true, [one]) if one.id == tokenizer.unk_id => {
                        Err(Error::Input(format!("“{}” is not in this model's vocabulary (it reads as {})", word.trim(), one.piece)))
                    }
                    (true, [one]) => Ok(Verbalized { word: word.trim().to_string(), piece: one.piece.clone(), id: one.id }),
                    (true, many) => Err(Error::Input(format!(
                        "“{}” is {} pieces for this model ({}); the blank takes one piece, so choose a word that stays whole",
                        word.trim(),
                        many.len(),
                        many.iter().map(|t| t.piece.as_str()).collect::<Vec<_>>().join(" ")
                    ))),
                    (false, _) => Err(Error::Input(format!("“{}” changes the tokens around the blank: choose a plain word", word.trim()))),
                }
            })
            .collect()
    }
}

/// The position of the one mask token in `encoded`.
fn mask_position(encoded: &Encoded, mask_id: u32) -> Result<usize> {
    let at: Vec<usize> = encoded.tokens.iter().enumerate().filter(|(_, t)| t.id == mask_id).map(|(i, _)| i).collect();
    match at.as_slice() {
        [one] => Ok(*one),
        [] => Err(Error::Input("the filled template lost its blank (was the text too long for the model?)".into())),
        _ => Err(Error::Input("the text itself holds the mask token: a prompt's text must not".into())),
    }
}

/// `text` in the template, cut from its end until the filled template fits the model, with the
/// blank's position; and whether it was cut.
fn encode_fitting(prompt: &Prompt, text: &str, tokenizer: &BertTokenizer) -> Result<(Encoded, usize, bool)> {
    let mask = tokenizer.mask_token();
    let mut text = text.trim().to_string();
    let mut cut = false;
    loop {
        let encoded = tokenizer.encode(&prompt.fill(&text, &mask))?;
        let Some(total) = encoded.truncated_from else {
            return Ok((encoded.clone(), mask_position(&encoded, tokenizer.mask_id)?, cut));
        };
        // Drop as many of the text's own pieces as the whole is over, from the text's end.
        let over = total - tokenizer.max_len();
        let alone = tokenizer.with_max_len(total).encode(&text)?;
        let kept: Vec<_> = alone.tokens.iter().filter(|t| !t.special).collect();
        if kept.len() <= over {
            return Err(Error::Input(format!("the template alone is longer than this model's {} tokens", tokenizer.max_len())));
        }
        text.truncate(kept[kept.len() - over - 1].offsets.1);
        cut = true;
    }
}

/// Scores `texts` under `prompt`: each label word's probability at the blank.
pub async fn score(bert: &BertModel, head: &MlmHead, tokenizer: &BertTokenizer, prompt: &Prompt, texts: &[String], device: &Device) -> Result<Prompted> {
    let words = prompt.verbalize(tokenizer)?;
    let mut probs = Vec::with_capacity(texts.len());
    let mut shortened = 0;
    for chunk in texts.chunks(BATCH) {
        let mut encoded = Vec::with_capacity(chunk.len());
        let mut blanks = Vec::with_capacity(chunk.len());
        for text in chunk {
            let (e, at, cut) = encode_fitting(prompt, text, tokenizer)?;
            shortened += cut as usize;
            encoded.push(e);
            blanks.push(at);
        }
        let batch = Batch::from_encoded(&encoded, tokenizer.pad_id);
        let rows: Vec<i64> = blanks.iter().enumerate().map(|(b, &at)| (b * batch.seq_len + at) as i64).collect();
        let picked = Tensor::<1, Int>::from_data(TensorData::new(rows, [chunk.len()]), device);
        let out = bert.forward(BertInput::from_batch(&batch, device), ForwardOptions::default());
        let [b, seq, hidden] = out.last_hidden_state.dims();
        let at_blank = out.last_hidden_state.reshape([b * seq, hidden]).select(0, picked);
        let logits = head.forward(at_blank, bert.embeddings.word_embeddings.weight.val());
        let vocab = logits.dims()[1];
        for row in read_f32(logits).await?.chunks(vocab) {
            let p = softmax(row);
            probs.push(words.iter().map(|w| p[w.id as usize]).collect());
        }
    }
    Ok(Prompted { words, probs, shortened })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::pretraining::{MlmHeadConfig, fill_mask_with};
    use crate::test_util::tiny_bert;

    fn prompt(template: &str, words: &[&str]) -> Prompt {
        Prompt { template: template.into(), words: words.iter().map(|w| w.to_string()).collect() }
    }

    #[test]
    fn a_template_needs_its_text_its_blank_and_two_words() {
        assert!(prompt("{text} It was {mask}.", &["a", "b"]).check().is_ok());
        assert!(prompt("It was {mask}.", &["a", "b"]).check().unwrap_err().to_string().contains("{text} once"));
        assert!(prompt("{text} {mask} {mask}", &["a", "b"]).check().unwrap_err().to_string().contains("2 times"));
        assert!(prompt("{text} {mask}", &["a"]).check().is_err());
        assert!(prompt("{text} {mask}", &["a", " "]).check().unwrap_err().to_string().contains("label 2"));
    }

    #[test]
    fn the_words_probabilities_are_the_fill_masks_and_the_accuracy_follows_them() {
        let (loaded, device) = tiny_bert();
        let config = MlmHeadConfig::new(loaded.config.hidden_size, loaded.config.vocab_size);
        let head = config.init(&device);
        let tok = &loaded.tokenizer;
        // Two whole words of the tiny vocabulary.
        let p = prompt("{text} the {mask} .", &["river", "money"]);
        let words = p.verbalize(tok).unwrap();
        assert_eq!(words.iter().map(|w| w.piece.as_str()).collect::<Vec<_>>(), ["river", "money"]);
        let texts = vec!["the river bank".to_string(), "a loan".to_string(), "money".to_string()];
        let got = pollster::block_on(score(&loaded.model, &head, tok, &p, &texts, &device)).unwrap();
        assert_eq!(got.shortened, 0);
        // Each text alone through fill-mask (every piece's probability): the same numbers.
        for (text, row) in texts.iter().zip(&got.probs) {
            let filled = p.fill(text, &tok.mask_token());
            let fills = pollster::block_on(fill_mask_with(&loaded.model, &head, tok, &filled, tok.vocab_size(), &device)).unwrap();
            for (w, &prob) in words.iter().zip(row) {
                let want = fills[0].top.iter().find(|(piece, _)| *piece == w.piece).unwrap().1;
                assert!((prob - want).abs() < 1e-5, "{text}: {} {prob} against {want}", w.piece);
            }
        }
        let predictions = got.predictions();
        let labels: Vec<usize> = predictions.iter().map(|&p| 1 - p).collect();
        assert_eq!(got.accuracy(&predictions), 1.0);
        assert_eq!(got.accuracy(&labels), 0.0);
    }

    #[test]
    fn a_word_of_several_pieces_is_refused_by_name_and_a_long_text_is_cut_to_fit() {
        let (loaded, device) = tiny_bert();
        let tok = &loaded.tokenizer;
        let err = prompt("{text} {mask}", &["bank", "banks"]).verbalize(tok).unwrap_err().to_string();
        assert!(err.contains("“banks” is 2 pieces for this model (bank ##s)"), "{err}");
        let err = prompt("{text} {mask}", &["bank", "cat"]).verbalize(tok).unwrap_err().to_string();
        assert!(err.contains("“cat” is not in this model's vocabulary (it reads as [UNK])"), "{err}");
        let p = prompt("{text} the {mask} .", &["river", "money"]);
        let long = vec!["the river bank ".repeat(tok.max_len())];
        let head = MlmHeadConfig::new(loaded.config.hidden_size, loaded.config.vocab_size).init(&device);
        let got = pollster::block_on(score(&loaded.model, &head, tok, &p, &long, &device)).unwrap();
        assert_eq!((got.shortened, got.probs.len()), (1, 1));
        let (e, at, cut) = encode_fitting(&p, &long[0], tok).unwrap();
        assert!(cut && e.truncated_from.is_none() && e.tokens[at].id == tok.mask_id);
    }
}
