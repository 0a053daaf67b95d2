//! Word-level probes by layer: what a word's vector at each layer says about the word's part of
//! speech and its position in the sentence. Each word is read at its first piece (as BERT's
//! tagging reads it); a linear probe per layer and property ([`LeastSquaresProbes`]) is fitted on
//! the words of some sentences and scored on the words of sentences held out, beside the
//! majority label and Hewitt and Liang's control task ([`control_labels`]).

use crate::analysis::inspect::TextStates;
use crate::analysis::probe::{LeastSquaresProbes, ProbeResult, control_labels};
use crate::data::TaggedData;
use crate::error::{Error, Result};
use crate::tasks::tagging::{first_pieces, token_words};

/// Position labels: the word's index in its sentence, the last label for that index or later.
pub const POSITIONS: usize = 10;
/// The ridge penalty per training word (see [`LeastSquaresProbes::new`]).
pub const PENALTY: f64 = 0.2;

/// Each word's vector at every layer (`[word] → Some([layer][dim])`), read at its first piece;
/// `None` for a word the model's length cut off. `spans` are the words' character ranges in the
/// text `states` encodes (from [`join_words`](crate::tasks::tagging::join_words)).
pub fn word_vectors(states: &TextStates, spans: &[(usize, usize)]) -> Vec<Option<Vec<Vec<f32>>>> {
    let words = token_words(&states.encoded, spans);
    first_pieces(&words, spans.len())
        .into_iter()
        .map(|p| p.map(|t| (0..states.layers.len()).map(|l| states.token(l, t).to_vec()).collect()))
        .collect()
}

/// One layer's four probes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerScores {
    pub pos: ProbeResult,
    /// Each word type given a random part of speech.
    pub pos_control: ProbeResult,
    pub position: ProbeResult,
    /// Each word type given a random position.
    pub position_control: ProbeResult,
}

/// Tagged sentences' words, their vectors, labels and the split, ready to probe layer by layer.
#[derive(Debug, Clone)]
pub struct WordProbe {
    /// `[layer][row]`: each word's vector, train rows first.
    vectors: Vec<Vec<Vec<f32>>>,
    train: usize,
    pos: Vec<usize>,
    pos_control: Vec<usize>,
    position: Vec<usize>,
    position_control: Vec<usize>,
    /// The part-of-speech tags, as ids index them.
    pub tags: Vec<String>,
    /// The ridge penalty per training word ([`PENALTY`] unless changed).
    pub penalty: f64,
}

impl WordProbe {
    /// `vectors[s]` are sentence `s`'s [`word_vectors`]; the sentences `held_out` lists are
    /// scored on, the others trained on. `seed` draws the control tasks.
    pub fn new(data: &TaggedData, vectors: Vec<Vec<Option<Vec<Vec<f32>>>>>, held_out: &[usize], seed: u64) -> Result<Self> {
        if vectors.len() != data.sentences.len() {
            return Err(Error::Input("one set of word vectors per sentence is needed".into()));
        }
        let tag_ids = data.tag_ids();
        // Rows: (held out?, word type, tag, position, vectors), train rows first.
        let mut rows = Vec::new();
        for (s, words) in vectors.into_iter().enumerate() {
            let out = held_out.contains(&s);
            for (w, v) in words.into_iter().enumerate() {
                let Some(v) = v else { continue };
                rows.push((out, data.sentences[s].words[w].to_lowercase(), tag_ids[s][w], w.min(POSITIONS - 1), v));
            }
        }
        rows.sort_by_key(|r| r.0);
        let train = rows.iter().filter(|r| !r.0).count();
        if train == 0 || train == rows.len() {
            return Err(Error::Input("a probe needs words on both sides of the split".into()));
        }
        let types: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
        let pos: Vec<usize> = rows.iter().map(|r| r.2).collect();
        let position: Vec<usize> = rows.iter().map(|r| r.3).collect();
        let pos_control = control_labels(&types, &pos, seed);
        let position_control = control_labels(&types, &position, seed ^ 0x9e37_79b9);
        let layers = rows[0].4.len();
        let mut by_layer = vec![Vec::with_capacity(rows.len()); layers];
        for r in rows {
            for (l, v) in r.4.into_iter().enumerate() {
                by_layer[l].push(v);
            }
        }
        Ok(Self { vectors: by_layer, train, pos, pos_control, position, position_control, tags: data.tags.clone(), penalty: PENALTY })
    }

    /// Layers probed (0 = the input embeddings).
    pub fn layers(&self) -> usize {
        self.vectors.len()
    }

    /// Words trained on and held out.
    pub fn words(&self) -> (usize, usize) {
        (self.train, self.pos.len() - self.train)
    }

    /// The four probes of layer `l`.
    pub fn layer(&self, l: usize) -> Result<LayerScores> {
        let (train, test) = self.vectors[l].split_at(self.train);
        let probes = LeastSquaresProbes::new(train, self.penalty)?;
        let score = |labels: &[usize], n: usize| {
            let (fit, held) = labels.split_at(self.train);
            probes.score(fit, (test, held), n)
        };
        Ok(LayerScores {
            pos: score(&self.pos, self.tags.len())?,
            pos_control: score(&self.pos_control, self.tags.len())?,
            position: score(&self.position, POSITIONS)?,
            position_control: score(&self.position_control, POSITIONS)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::parse_tagged;
    use crate::rng::Rng;
    use crate::tokenizer::{Encoded, Token};

    /// Sentences of a few words, tagged by a rule a probe can learn: words ending in "s" are
    /// verbs, the others nouns, with word types shared across sentences.
    fn data(sentences: usize) -> TaggedData {
        let nouns = ["cat", "dog", "bird", "fish", "tree", "car"];
        let verbs = ["runs", "sits", "eats", "sees"];
        let mut rng = Rng::new(3);
        let mut conll = String::new();
        for _ in 0..sentences {
            for w in 0..3 + rng.below(4) {
                let (word, tag) = if w % 2 == 1 { (verbs[rng.below(4)], "VERB") } else { (nouns[rng.below(6)], "NOUN") };
                conll.push_str(&format!("{word}\t{tag}\n"));
            }
            conll.push('\n');
        }
        parse_tagged(conll.as_bytes()).unwrap()
    }

    /// Two layers: layer 0 holds the word's position and noise, layer 1 its tag and noise.
    fn vectors(data: &TaggedData, rng: &mut Rng) -> Vec<Vec<Option<Vec<Vec<f32>>>>> {
        let tags = data.tag_ids();
        data.sentences
            .iter()
            .enumerate()
            .map(|(s, sentence)| {
                (0..sentence.words.len())
                    .map(|w| {
                        let mut noise = |k: usize| (0..8).map(|i| if i == k { 4.0 } else { 0.0 } + rng.next_f32() - 0.5).collect::<Vec<f32>>();
                        Some(vec![noise(w.min(7)), noise(tags[s][w])])
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn each_property_is_read_where_it_is_and_the_controls_stay_below() {
        let data = data(60);
        let mut rng = Rng::new(5);
        let held_out: Vec<usize> = (0..60).filter(|s| s % 3 == 0).collect();
        let probe = WordProbe::new(&data, vectors(&data, &mut rng), &held_out, 11).unwrap();
        assert_eq!(probe.layers(), 2);
        let (train, test) = probe.words();
        assert!(train > test && test > 0, "{train} {test}");
        let (l0, l1) = (probe.layer(0).unwrap(), probe.layer(1).unwrap());
        assert!(l1.pos.test_accuracy > 0.95 && l0.pos.test_accuracy > 0.95, "position alternates nouns and verbs: {l0:?} {l1:?}");
        assert!(l0.position.test_accuracy > 0.95, "{l0:?}");
        assert!(l1.position.test_accuracy < 0.6, "{l1:?}");
        // A control task sticks to word types, not to where the property is.
        assert!(l1.pos_control.test_accuracy < l1.pos.test_accuracy - 0.2, "{l1:?}");
        assert!(WordProbe::new(&data, vectors(&data, &mut rng), &[], 11).is_err());
        assert!(WordProbe::new(&data, Vec::new(), &held_out, 11).is_err());
    }

    #[test]
    fn a_word_is_read_at_its_first_piece() {
        // "[CLS] play ##ing now [SEP]" for the words "playing now".
        let tok = |piece: &str, offsets: (usize, usize), special: bool| Token { piece: piece.into(), id: 0, type_id: 0, offsets, special };
        let encoded = Encoded {
            tokens: vec![tok("[CLS]", (0, 0), true), tok("play", (0, 4), false), tok("##ing", (4, 7), false), tok("now", (8, 11), false), tok("[SEP]", (0, 0), true)],
            truncated_from: None,
        };
        let layers = (0..2).map(|l| (0..5).map(|t| (10 * l + t) as f32).collect()).collect();
        let states = TextStates { encoded, hidden: 1, layers };
        let v = word_vectors(&states, &[(0, 7), (8, 11), (12, 15)]);
        assert_eq!(v, vec![Some(vec![vec![1.0], vec![11.0]]), Some(vec![vec![3.0], vec![13.0]]), None]);
    }
}
