//! Multiple choice (`*ForMultipleChoice`): a question is an example whose rows are its premise
//! read with each ending (one pooled vector each, one score each from the head's one output).
//! Its units are its endings, each labelled 1 when it is the right one and 0 otherwise, so a
//! batch holds whole questions and every row is a unit; the loss and the scores read the units
//! back as questions (a softmax over each question's endings, as
//! [`crate::tasks::choice::loss`]). Every question of a run has the same number of endings, so
//! a batch's questions are its right endings and its endings per question are its units over
//! them. Scored by accuracy over questions.

use super::*;
use crate::error::Error;
use crate::tasks::choice::{self, ChoiceItem, SCORE_LABEL};
use crate::tasks::metrics::Metrics;
use crate::tokenizer::BertTokenizer;
use crate::train::finetune::TrainMode;

pub(super) struct Choice;

/// The endings of each of a batch's questions, from its units' labels (one 1 per question).
fn endings(labels: &[usize]) -> usize {
    labels.len() / labels.iter().filter(|&&l| l == 1).count().max(1)
}

/// The right ending of each question, from its units' labels.
fn right_endings(labels: &[usize], endings: usize) -> Vec<usize> {
    labels.chunks(endings).map(|q| q.iter().position(|&l| l == 1).unwrap_or(0)).collect()
}

impl UnitTask for Choice {
    /// One output (each ending's score) and, in every question, the same number of endings (two
    /// or more) with the right one among them.
    fn check(&self, labels: &[String], examples: &[&LabeledText]) -> crate::Result<()> {
        if labels.len() != 1 {
            return Err(Error::Training("a multiple-choice model has one output, each ending's score".into()));
        }
        let n = examples.first().map_or(0, |t| t.sequences.len());
        if n < 2 {
            return Err(Error::Training("a multiple-choice question needs at least two endings".into()));
        }
        if let Some(t) = examples.iter().find(|t| t.sequences.len() != n) {
            return Err(Error::Training(format!(
                "every question needs the same number of endings: one has {}, another {n} (the training and the validation file must agree)",
                t.sequences.len()
            )));
        }
        if examples.iter().any(|t| t.label >= n) {
            return Err(Error::Training(format!("a question's right ending is not one of its {n} endings")));
        }
        Ok(())
    }

    /// `transformers`' `run_swag.py`: everything trains (the pooler's score of a pair means
    /// nothing until the encoder learns to compare premise and ending), 3 epochs at 5e-5.
    fn recipe(&self) -> FineTuneConfig {
        FineTuneConfig::new().with_mode(TrainMode::Full).with_batch_size(16).with_epochs(3)
    }

    /// The pooler its family's `*ForMultipleChoice` reads ([`choice::with_pooler`]).
    fn start(&self, bert: BertModel, config: &BertConfig, _features: &FeatureSpec, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> crate::Result<BertModel> {
        choice::with_pooler(bert, config, head_weights, seed, device)
    }

    fn head(&self, width: usize, _labels: usize, dropout: f64, device: &Device) -> ClassificationHead {
        choice::head(width, dropout, device)
    }

    fn inputs<'a>(&self, t: &'a LabeledText) -> Vec<&'a Encoded> {
        t.sequences.iter().collect()
    }

    fn unit_labels(&self, t: &LabeledText) -> Vec<usize> {
        (0..t.sequences.len()).map(|i| usize::from(i == t.label)).collect()
    }

    fn units(&self, t: &LabeledText) -> usize {
        t.sequences.len()
    }

    fn rows(&self, t: &LabeledText) -> usize {
        t.sequences.len()
    }

    /// The cross-entropy of each question's right ending, softmaxed over its endings.
    fn loss(&self, _config: &FineTuneConfig, out: Tensor<2>, labels: &[usize], _scores: &[f32], device: &Device) -> Tensor<1> {
        let n = endings(labels);
        choice::loss(choice::by_question(out, n), labels_tensor(&right_endings(labels, n), device))
    }

    /// A question's endings all count as right when its best-scored ending is the right one,
    /// else all as wrong: the share of units right is the share of questions answered.
    fn correct(&self, outputs: &[f32], _width: usize, labels: &[usize], _scores: &[f32]) -> usize {
        let n = endings(labels);
        let right = right_endings(labels, n);
        outputs.chunks(n).zip(right).filter(|(scores, r)| argmax(scores) == *r).count() * n
    }

    /// The loss and accuracy over questions; each question's ending probabilities.
    fn score(&self, tuner: &FineTuner, logits: &[f32]) -> Scored {
        let n = tuner.valid.first().map_or(1, |t| t.sequences.len());
        let truth: Vec<usize> = tuner.valid.iter().map(|t| t.label).collect();
        let valid_loss = cross_entropy(logits, &truth, n);
        let pred: Vec<usize> = logits.chunks(n).map(argmax).collect();
        let names: Vec<String> = (0..n).map(|i| format!("ending {i}")).collect();
        let metrics = Metrics::new(&truth, &pred, &names);
        let probs = logits.chunks(n).map(softmax).collect();
        Scored { valid_loss, metrics, scores: TaskScores::Classes, predictions: Vec::new(), probs }
    }
}

/// Tokenizes multiple-choice questions (from [`crate::tasks::choice::parse_choices`]): each
/// premise read with each ending. The run's one label is [`SCORE_LABEL`].
pub fn encode_choices(tokenizer: &BertTokenizer, items: &[ChoiceItem]) -> crate::Result<Vec<LabeledText>> {
    items
        .iter()
        .map(|q| {
            let encoded = choice::encode_question(tokenizer, &q.premise, &q.choices).map_err(|e| Error::Input(format!("line {}: {e}", q.line)))?;
            LabeledText::group(encoded, q.label).ok_or_else(|| Error::Input(format!("line {}: no ending", q.line)))
        })
        .collect()
}

/// The label list of a multiple-choice run.
pub fn choice_labels() -> Vec<String> {
    vec![SCORE_LABEL.to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::model::BertModelConfig;
    use crate::rng::Rng;
    use crate::tasks::classification::FeatureSpec;
    use crate::test_util::{device_rng, tiny_config};
    use crate::tokenizer::Token;
    use crate::train::finetune::{Event, Phase};

    /// A multiple-choice run starts with the pooler its class reads, fresh where the checkpoint
    /// has none, whatever the features' pooling.
    #[test]
    fn a_run_starts_with_the_pooler_its_class_reads() {
        use crate::bert::pooling::Pooling;
        use crate::train::finetune::task::tests::starts_with_pooler;
        assert!(starts_with_pooler(Level::Choice, Pooling::Pooler) && starts_with_pooler(Level::Choice, Pooling::Mean));
    }
    use crate::bert::pooling::Pooling;

    fn encoded(ids: &[u32]) -> Encoded {
        let tokens = ids.iter().map(|&id| Token { piece: format!("t{id}"), id, type_id: 0, offsets: (0, 0), special: id < 5 }).collect();
        Encoded { tokens, truncated_from: None }
    }

    /// `n` questions of 3 endings: a premise of random words, the right ending holding word 7
    /// and the others word 8, each among random words.
    fn questions(n: usize, seed: u64) -> Vec<LabeledText> {
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|i| {
                let label = i % 3;
                let premise: Vec<u32> = (0..2 + rng.below(3)).map(|_| 10 + rng.below(50) as u32).collect();
                let choices = (0..3)
                    .map(|e| {
                        let mut ids = vec![2];
                        ids.extend(&premise);
                        ids.extend([3, if e == label { 7 } else { 8 }, 10 + rng.below(50) as u32, 3]);
                        encoded(&ids)
                    })
                    .collect();
                LabeledText::group(choices, label).unwrap()
            })
            .collect()
    }

    fn tuner(mode: TrainMode, train: Vec<LabeledText>, valid: Vec<LabeledText>, device: &Device) -> crate::Result<FineTuner> {
        let bert = BertModelConfig::new(tiny_config(64)).init(device);
        let features = FeatureSpec { pooling: Pooling::Pooler, level: Level::Choice, ..Default::default() };
        let cfg = Choice.recipe().with_mode(mode).with_features(features).with_batch_size(8).with_learning_rate(1e-3).with_head_learning_rate(1e-2).with_epochs(3).with_head_epochs(4).with_seed(5);
        FineTuner::new(bert, 0, 16, choice_labels(), train, valid, cfg, device)
    }

    #[test]
    fn units_are_endings_labelled_right_or_not_and_the_loss_reads_them_as_questions() {
        let q = &questions(3, 1)[1];
        assert_eq!((Choice.units(q), Choice.rows(q), Choice.inputs(q).len()), (3, 3, 3));
        assert_eq!(Choice.unit_labels(q), [0, 1, 0]);
        let labels = [0, 0, 1, 1, 0, 0];
        assert_eq!((endings(&labels), right_endings(&labels, 3)), (3, vec![2, 0]));
        // Question 0 picks ending 2 (right), question 1 ending 1 (wrong): 3 units of 6 right.
        assert_eq!(Choice.correct(&[0.1, 0.2, 0.9, 0.0, 0.5, 0.4], 1, &labels, &[]), 3);
        let device = Device::flex();
        let out = Tensor::<2>::from_data(TensorData::new(vec![0.1f32, 0.2, 0.9, 0.0, 0.5, 0.4], [6, 1]), &device);
        let got = Choice.loss(&FineTuneConfig::new(), out, &labels, &[], &device).into_scalar::<f32>();
        let want = (cross_entropy(&[0.1, 0.2, 0.9], &[2], 3) + cross_entropy(&[0.0, 0.5, 0.4], &[0], 3)) / 2.0;
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    }

    #[test]
    fn a_run_learns_to_pick_the_right_ending_in_full_and_head_only_modes() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        // Head only: the head learns from each ending's cached pooled vector.
        for (mode, floor) in [(TrainMode::Full, 0.9), (TrainMode::HeadOnly, 0.9)] {
            let mut run = tuner(mode, questions(48, 1), questions(12, 2), &device).unwrap();
            let mut evals = Vec::new();
            while !matches!(pollster::block_on(run.advance()).unwrap(), Event::Finished) {
                if let Some((m, _)) = run.best() {
                    evals.push(m.accuracy);
                }
            }
            let (metrics, probs) = run.best().unwrap();
            assert_eq!(probs.len(), 12, "one row of probabilities per validation question");
            for p in probs {
                assert_eq!(p.len(), 3);
                assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            }
            assert_eq!(metrics.accuracy, run.best_accuracy().unwrap());
            assert!(metrics.accuracy >= floor, "{mode:?}: best accuracy {}", metrics.accuracy);
            assert_eq!(run.progress().phase, Phase::Done);
            // What the page asks of the trained model: each ending's probability, as the run
            // scored its validation questions.
            let model = run.best_model();
            let q = &run.valid[0];
            let batch = crate::tokenizer::Batch::from_encoded(&q.sequences, 0);
            let scores = model.forward(crate::bert::model::BertInput::from_batch(&batch, &device.clone().inner())).unwrap();
            let probs_now = softmax(&scores.into_data().try_to_vec::<f32>().unwrap());
            for (a, b) in probs_now.iter().zip(&run.best().unwrap().1[0]) {
                assert!((a - b).abs() < 1e-4, "{probs_now:?}");
            }
        }
    }

    #[test]
    fn a_run_refuses_questions_with_different_numbers_of_endings() {
        let device = Device::flex().autodiff();
        let mut valid = questions(4, 2);
        valid[1].sequences.pop();
        let err = tuner(TrainMode::Full, questions(8, 1), valid, &device).unwrap_err().to_string();
        assert!(err.contains("same number of endings") && err.contains("one has 2, another 3"), "{err}");
    }
}
