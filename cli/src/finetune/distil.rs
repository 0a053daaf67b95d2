//! `--keep-layers N` and `--teacher DIR`: a *student*, the studio's distillation run. The model
//! keeps N of its layers, spaced evenly from the first to the last (DistilBERT's start); with a
//! teacher (a sentence classifier exported by the page or by `--out`, of the same labels) each
//! training text also carries the teacher's probabilities, learned at `--temperature` (2) with
//! `--soft-weight` (0.5) of the loss. Without a teacher the student learns the gold labels alone,
//! the baseline a distilled student is compared with.

use std::path::Path;

use bertbench_core::bert::config::BertConfig;
use bertbench_core::bert::model::BertModel;
use bertbench_core::tasks::classification::{self, Scoring, predict};
use bertbench_core::tasks::distillation::{Distillation, spaced_layers};
use bertbench_core::train::{FineTuneConfig, LabeledText};
use bertbench_core::burn::prelude::Device;

use super::{CliTask, core_error};
use crate::{Args, Result, folder_files, parse, read_optional};

/// The student of `args` (or the model as it is without `--keep-layers` and `--teacher`): its
/// model and configuration, its training texts (with the teacher's probabilities) and the run's
/// configuration.
pub(super) fn student(
    args: &Args,
    task: &dyn CliTask,
    model: BertModel,
    bert: BertConfig,
    train: Vec<LabeledText>,
    labels: &[String],
    config: FineTuneConfig,
) -> Result<(BertModel, BertConfig, Vec<LabeledText>, FineTuneConfig)> {
    let (keep, teacher) = (args.get("keep-layers"), args.get("teacher"));
    if (keep.is_some() || teacher.is_some()) && !task.students() {
        return Err("--keep-layers and --teacher train a student sentence classifier: use them with --task classify".into());
    }
    let (model, bert) = match keep {
        None => (model, bert),
        Some(n) => {
            let n: usize = n.parse().map_err(|_| format!("--keep-layers: {n:?} is not a number of layers"))?;
            let depth = model.num_layers();
            if n == 0 || n > depth {
                return Err(format!("--keep-layers: the model has {depth} layers; keep 1 to {depth}"));
            }
            let kept = spaced_layers(depth, n);
            eprintln!("student: layers {kept:?} of {depth} kept");
            (model.keep_layers(&kept).map_err(core_error)?, bert.with_num_hidden_layers(n))
        }
    };
    let Some(dir) = teacher else { return Ok((model, bert, train, config)) };
    let dir = Path::new(dir);
    let device = Device::flex();
    let teacher = classification::load_classifier(folder_files(dir)?, read_optional(&dir.join(classification::HEAD_FILE)), &device)
        .map_err(|e| format!("--teacher {}: {e}", dir.display()))?;
    if teacher.meta.multi_label() {
        return Err(format!("--teacher {} is a multi-label classifier: a student learns one label per text from its teacher's softmax", dir.display()));
    }
    if teacher.meta.labels != labels {
        return Err(format!("--teacher {} has the labels {:?}, the data {labels:?}: a teacher must label the same classes in the same order", dir.display(), teacher.meta.labels));
    }
    let encoded: Vec<_> = train.iter().map(|t| t.encoded.clone()).collect();
    let probs = pollster::block_on(predict(&teacher.model, Scoring::Softmax, &encoded, teacher.tokenizer.pad_id, 32, &device)).map_err(core_error)?;
    let distil = Distillation::new().with_temperature(parse(args, "temperature", 2.0)?).with_soft_weight(parse(args, "soft-weight", 0.5)?);
    distil.check().map_err(core_error)?;
    eprintln!("teacher {}: its probabilities on the {} training texts, learned at temperature {} with weight {}", dir.display(), train.len(), distil.temperature, distil.soft_weight);
    let train = train.into_iter().zip(&probs).map(|(t, p)| t.with_teacher(p)).collect();
    Ok((model, bert, train, config.with_distil(Some(distil))))
}
