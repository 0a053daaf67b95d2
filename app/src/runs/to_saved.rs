//! The runs' values as their saved copies (`crate::saved`), and back: what a saved run, lab
//! model or checkpoint writes is the copy's JSON, never a core type's serde derive. Plain
//! field-by-field moves; a field added to one side and not the other fails to compile here.

use super::*;
use crate::saved::{Versioned, lab as s_lab, list, run as s_run, train as s_train};

/// Conversions both ways between one of `runs`' types and its saved copy, field by field.
macro_rules! both_ways {
    ($ours:ident <=> $saved:path { $($field:ident),+ $(,)? }) => {
        impl From<$ours> for $saved {
            fn from(c: $ours) -> Self {
                Self { $($field: c.$field.into()),+ }
            }
        }

        impl From<$saved> for $ours {
            fn from(s: $saved) -> Self {
                Self { $($field: s.$field.into()),+ }
            }
        }
    };
}

/// A saved item's type written and read through its copy, with the format's version.
macro_rules! versioned {
    ($ours:ident <=> $saved:path) => {
        impl From<$ours> for Versioned<$saved> {
            fn from(value: $ours) -> Self {
                Versioned(value.into())
            }
        }

        impl From<Versioned<$saved>> for $ours {
            fn from(Versioned(value): Versioned<$saved>) -> Self {
                value.into()
            }
        }
    };
}

versioned!(SavedRun <=> s_run::SavedRun);
versioned!(CheckpointMeta <=> s_train::CheckpointMeta);
versioned!(LabSettings <=> s_lab::LabSettings);
versioned!(SavedLab <=> s_lab::SavedLab);

both_ways!(Mistake <=> s_run::Mistake { line, text, label, predicted, probs });
both_ways!(TagMistake <=> s_run::TagMistake { line, words, gold, predicted });
both_ways!(AnswerMistake <=> s_run::AnswerMistake { line, question, context, gold, predicted, f1 });
both_ways!(PairMistake <=> s_run::PairMistake { line, text, text_pair, gold, predicted });
both_ways!(ChoiceMistake <=> s_run::ChoiceMistake { line, premise, chosen, chosen_prob, right, right_prob });
both_ways!(LabelSetMistake <=> s_run::LabelSetMistake { line, text, missed, extra });
both_ways!(Speed <=> s_run::Speed { ms_per_text, teacher_ms_per_text });
both_ways!(RunRecord <=> s_run::RunRecord { model, from_scratch, recipe, accuracy, macro_f1, steps, seconds, device, cancelled, saved_id, known_by });

impl From<SavedRun> for s_run::SavedRun {
    fn from(r: SavedRun) -> Self {
        Self { record: r.record.into(), summary: r.summary.into(), steps: list(r.steps), evals: list(r.evals), head_on: r.head_on }
    }
}

impl From<s_run::SavedRun> for SavedRun {
    fn from(s: s_run::SavedRun) -> Self {
        Self { record: s.record.into(), summary: s.summary.into(), steps: list(s.steps), evals: list(s.evals), head_on: s.head_on }
    }
}

impl From<KnownBy> for s_run::KnownBy {
    fn from(c: KnownBy) -> Self {
        match c {
            KnownBy::Accuracy => Self::Accuracy,
            KnownBy::EntityF1(f1) => Self::EntityF1(f1),
            KnownBy::Answers { exact, f1 } => Self::Answers { exact, f1 },
            KnownBy::Correlations { pearson, spearman } => Self::Correlations { pearson, spearman },
            KnownBy::LabelF1 { micro, macro_f1 } => Self::LabelF1 { micro, macro_f1 },
        }
    }
}

impl From<s_run::KnownBy> for KnownBy {
    fn from(s: s_run::KnownBy) -> Self {
        match s {
            s_run::KnownBy::Accuracy => Self::Accuracy,
            s_run::KnownBy::EntityF1(f1) => Self::EntityF1(f1),
            s_run::KnownBy::Answers { exact, f1 } => Self::Answers { exact, f1 },
            s_run::KnownBy::Correlations { pearson, spearman } => Self::Correlations { pearson, spearman },
            s_run::KnownBy::LabelF1 { micro, macro_f1 } => Self::LabelF1 { micro, macro_f1 },
        }
    }
}

impl From<Mistakes> for s_run::Mistakes {
    fn from(c: Mistakes) -> Self {
        match c {
            Mistakes::Labels(m) => Self::Labels(list(m)),
            Mistakes::Tags(m) => Self::Tags(list(m)),
            Mistakes::Answers(m) => Self::Answers(list(m)),
            Mistakes::Pairs(m) => Self::Pairs(list(m)),
            Mistakes::Choices(m) => Self::Choices(list(m)),
            Mistakes::LabelSets(m) => Self::LabelSets(list(m)),
        }
    }
}

impl From<s_run::Mistakes> for Mistakes {
    fn from(s: s_run::Mistakes) -> Self {
        match s {
            s_run::Mistakes::Labels(m) => Self::Labels(list(m)),
            s_run::Mistakes::Tags(m) => Self::Tags(list(m)),
            s_run::Mistakes::Answers(m) => Self::Answers(list(m)),
            s_run::Mistakes::Pairs(m) => Self::Pairs(list(m)),
            s_run::Mistakes::Choices(m) => Self::Choices(list(m)),
            s_run::Mistakes::LabelSets(m) => Self::LabelSets(list(m)),
        }
    }
}

impl From<RunSummary> for s_run::RunSummary {
    fn from(c: RunSummary) -> Self {
        Self {
            meta: c.meta.into(),
            metrics: c.metrics.into(),
            scores: c.scores.into(),
            mistakes: c.mistakes.into(),
            cancelled: c.cancelled,
            seconds: c.seconds,
            steps: c.steps,
            device: c.device,
            speed: c.speed.map(Into::into),
        }
    }
}

impl From<s_run::RunSummary> for RunSummary {
    fn from(s: s_run::RunSummary) -> Self {
        Self {
            meta: s.meta.into(),
            metrics: s.metrics.into(),
            scores: s.scores.into(),
            mistakes: s.mistakes.into(),
            cancelled: s.cancelled,
            seconds: s.seconds,
            steps: s.steps,
            device: s.device,
            speed: s.speed.map(Into::into),
        }
    }
}

impl From<Backend> for s_train::Backend {
    fn from(c: Backend) -> Self {
        match c {
            Backend::Cpu => Self::Cpu,
            Backend::WebGpu => Self::WebGpu,
        }
    }
}

impl From<s_train::Backend> for Backend {
    fn from(s: s_train::Backend) -> Self {
        match s {
            s_train::Backend::Cpu => Self::Cpu,
            s_train::Backend::WebGpu => Self::WebGpu,
        }
    }
}

impl From<RunData> for s_train::RunData {
    fn from(c: RunData) -> Self {
        match c {
            RunData::Texts(t) => Self::Texts { train: list(t.train), valid: list(t.valid) },
            RunData::Tagged(t) => Self::Tagged(s_train::TaggedRequest { train: list(t.train), valid: list(t.valid), pieces: t.pieces.into() }),
            RunData::Questions(q) => Self::Questions(s_train::Items { train: list(q.train), valid: list(q.valid) }),
            RunData::Pairs(p) => Self::Pairs(s_train::Items { train: list(p.train), valid: list(p.valid) }),
            RunData::Choices(c) => Self::Choices(s_train::Items { train: list(c.train), valid: list(c.valid) }),
            RunData::LabelSets(l) => Self::LabelSets(s_train::Items { train: list(l.train), valid: list(l.valid) }),
        }
    }
}

impl From<s_train::RunData> for RunData {
    fn from(s: s_train::RunData) -> Self {
        match s {
            s_train::RunData::Texts { train, valid } => Self::Texts(TextRequest { train: list(train), valid: list(valid) }),
            s_train::RunData::Tagged(t) => Self::Tagged(TaggedRequest { train: list(t.train), valid: list(t.valid), pieces: t.pieces.into() }),
            s_train::RunData::Questions(q) => Self::Questions(QaRequest { train: list(q.train), valid: list(q.valid) }),
            s_train::RunData::Pairs(p) => Self::Pairs(PairRequest { train: list(p.train), valid: list(p.valid) }),
            s_train::RunData::Choices(c) => Self::Choices(ChoiceRequest { train: list(c.train), valid: list(c.valid) }),
            s_train::RunData::LabelSets(l) => Self::LabelSets(LabelSetRequest { train: list(l.train), valid: list(l.valid) }),
        }
    }
}

both_ways!(TrainRequest <=> s_train::TrainRequest { config, labels, data, max_len, backend, restarts, from_scratch, record, base_kept, keep_layers });

impl From<CheckpointMeta> for s_train::CheckpointMeta {
    fn from(c: CheckpointMeta) -> Self {
        Self {
            request: c.request.into(),
            base_model: c.base_model,
            restart: c.restart,
            files: c.files,
            kept_files: c.kept_files,
            step: c.step,
            total_steps: c.total_steps,
            epoch: c.epoch,
            phase: c.phase.into(),
            with_optimizer: c.with_optimizer,
            seconds: c.seconds,
            device: c.device,
            steps: list(c.steps),
            evals: list(c.evals),
        }
    }
}

impl From<s_train::CheckpointMeta> for CheckpointMeta {
    fn from(s: s_train::CheckpointMeta) -> Self {
        Self {
            request: s.request.into(),
            base_model: s.base_model,
            restart: s.restart,
            files: s.files,
            kept_files: s.kept_files,
            step: s.step,
            total_steps: s.total_steps,
            epoch: s.epoch,
            phase: s.phase.into(),
            with_optimizer: s.with_optimizer,
            seconds: s.seconds,
            device: s.device,
            steps: list(s.steps),
            evals: list(s.evals),
        }
    }
}

impl From<LabVocab> for s_lab::LabVocab {
    fn from(c: LabVocab) -> Self {
        match c {
            LabVocab::Pretrained => Self::Pretrained,
            LabVocab::Train(n) => Self::Train(n),
        }
    }
}

impl From<s_lab::LabVocab> for LabVocab {
    fn from(s: s_lab::LabVocab) -> Self {
        match s {
            s_lab::LabVocab::Pretrained => Self::Pretrained,
            s_lab::LabVocab::Train(n) => Self::Train(n),
        }
    }
}

both_ways!(LabSettings <=> s_lab::LabSettings { corpus_name, vocab, preset, continue_pretrained, share_layers, config, probes, probe_every, backend });

impl From<SavedLab> for s_lab::SavedLab {
    fn from(c: SavedLab) -> Self {
        Self {
            settings: c.settings.into(),
            vocab_info: c.vocab_info,
            ready: c.ready,
            preview: c.preview.into_iter().map(list).collect(),
            steps: list(c.steps),
            probe_results: s_lab::probes_to_saved(c.probe_results),
            cancelled: c.cancelled,
            done: c.done,
            seconds: c.seconds,
        }
    }
}

impl From<s_lab::SavedLab> for SavedLab {
    fn from(s: s_lab::SavedLab) -> Self {
        Self {
            settings: s.settings.into(),
            vocab_info: s.vocab_info,
            ready: s.ready,
            preview: s.preview.into_iter().map(list).collect(),
            steps: list(s.steps),
            probe_results: s_lab::probes_from_saved(s.probe_results),
            cancelled: s.cancelled,
            done: s.done,
            seconds: s.seconds,
        }
    }
}

/// The saved copies pin the storage format: items read into today's types and written back
/// give the JSON they were read from (with the format's version), whatever core's types do.
#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::saved::VERSION;

    /// `tests/fixtures/saved-items/today.json`: an item of each kind and task as the build
    /// before the saved copies wrote it, by name.
    pub(crate) fn todays_items() -> Vec<(String, String)> {
        let fixture: Value = serde_json::from_str(include_str!("../../../tests/fixtures/saved-items/today.json")).unwrap();
        fixture["items"].as_object().unwrap().iter().map(|(name, json)| (name.clone(), json.as_str().unwrap().to_string())).collect()
    }

    /// `json` read as `T` and written back.
    fn again<T: serde::Serialize + serde::de::DeserializeOwned>(json: &str) -> String {
        let value: T = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
        serde_json::to_string(&value).unwrap()
    }

    /// `original` as today's build writes it: the format's version first, then the same bytes.
    pub(crate) fn versioned(original: &str) -> String {
        format!("{{\"v\":{VERSION},{}", &original[1..])
    }

    /// Today's items (a run of each task, a checkpoint of each task's data, a lab model and its
    /// settings) read into today's types and written back are the same bytes, with the version;
    /// and what is written reads back to itself.
    #[test]
    fn every_item_of_todays_build_is_written_back_byte_for_byte() {
        fn check<T: serde::Serialize + serde::de::DeserializeOwned>(name: &str, json: &str) {
            let written = again::<T>(json);
            assert_eq!(written, versioned(json), "{name}");
            assert_eq!(again::<T>(&written), written, "{name}: written by this build, read by it");
        }
        let mut read = 0;
        for (name, json) in todays_items() {
            match name.as_str() {
                n if n.starts_with("run_") => check::<SavedRun>(n, &json),
                n if n.starts_with("checkpoint_") => check::<CheckpointMeta>(n, &json),
                "lab_model" => check::<SavedLab>(&name, &json),
                "lab_settings" => check::<LabSettings>(&name, &json),
                _ => continue,
            }
            read += 1;
        }
        assert_eq!(read, 12, "five runs, five checkpoints, a lab model, lab settings");
    }

    /// Removes `fields` from `object` (each must be there: the earlier shape had it).
    fn drop(object: &mut Value, fields: &[&str]) {
        for f in fields {
            object.as_object_mut().unwrap().remove(*f).unwrap_or_else(|| panic!("{f} not in the earlier item"));
        }
    }

    /// An evaluation as saved before each task's scores had one field: its scores now.
    fn upgrade_eval(eval: &mut Value) {
        drop(eval, &["entities", "answers", "similarity"]);
        eval["scores"] = json!("Classes");
    }

    /// A record as saved before each task's score had one field.
    fn upgrade_record(record: &mut Value) {
        drop(record, &["entity_f1", "answer_scores", "correlations"]);
        record["known_by"] = json!("Accuracy");
    }

    /// The lab settings as saved before the shared layers and replaced-token detection.
    fn upgrade_lab_settings(settings: &mut Value) {
        settings["share_layers"] = json!(false);
        settings["config"]["replaced_token_detection"] = Value::Null;
    }

    /// `item`'s JSON, written back by today's types, and the JSON it was read from: equal but for
    /// the version and what `upgrade` says has changed since the item's build.
    fn written_back<T: serde::Serialize + serde::de::DeserializeOwned>(json: &str, upgrade: impl FnOnce(&mut Value)) -> (Value, Value) {
        let mut written: Value = serde_json::from_str(&again::<T>(json)).unwrap();
        assert_eq!(written.as_object_mut().unwrap().remove("v"), Some(json!(VERSION)));
        let mut expected: Value = serde_json::from_str(json).unwrap();
        upgrade(&mut expected);
        (written, expected)
    }

    /// The items an earlier build saved (`saved_by_an_earlier_build`'s fixture) come back out in
    /// today's shape: their every value kept, only the fields renamed or added since changed.
    #[test]
    fn items_of_an_earlier_build_are_written_back_in_todays_shape_with_every_value_kept() {
        let (_, items) = super::super::saved_by_an_earlier_build::fixture();
        let json = |kind: Kind| items.iter().find(|(i, _)| i.kind == kind).map(|(i, _)| i.json.clone()).unwrap();

        let (written, expected) = written_back::<SavedRun>(&json(Kind::Run), |run| {
            upgrade_record(&mut run["record"]);
            let summary = &mut run["summary"];
            drop(summary, &["entities", "tag_mistakes", "answers", "answer_mistakes", "similarity", "pair_mistakes"]);
            summary["scores"] = json!("Classes");
            summary["mistakes"] = json!({ "Labels": summary["mistakes"].take() });
            summary["speed"] = Value::Null;
            run["evals"].as_array_mut().unwrap().iter_mut().for_each(upgrade_eval);
        });
        assert_eq!(written, expected);

        let (written, expected) = written_back::<SavedLab>(&json(Kind::LabModel), |lab| {
            upgrade_lab_settings(lab);
            for step in lab["steps"].as_array_mut().unwrap() {
                step["picked"] = json!(0);
                step["rtd_loss"] = Value::Null;
                step["rtd_accuracy"] = Value::Null;
                step["replaced"] = json!(0);
            }
        });
        assert_eq!(written, expected);

        let (written, expected) = written_back::<LabSettings>(&json(Kind::LabSettings), upgrade_lab_settings);
        assert_eq!(written, expected);

        let fixture: Value = serde_json::from_str(include_str!("../../../tests/fixtures/saved-items/checkpoint.json")).unwrap();
        let item: crate::store::Item = serde_json::from_str(fixture["item"].as_str().unwrap()).unwrap();
        let (written, expected) = written_back::<CheckpointMeta>(&item.json, |meta| {
            let request = &mut meta["request"];
            let (train, valid) = (request["train"].take(), request["valid"].take());
            drop(request, &["train", "valid", "tagged", "questions", "pairs", "choices"]);
            request["data"] = json!({ "Texts": { "train": train, "valid": valid } });
            request["config"]["distil"] = Value::Null;
            request["keep_layers"] = Value::Null;
            upgrade_record(&mut request["record"]);
            meta["evals"].as_array_mut().unwrap().iter_mut().for_each(upgrade_eval);
        });
        assert_eq!(written, expected);
    }

    /// A saved run from a newer build is refused, saying why, not misread.
    #[test]
    fn a_run_saved_by_a_newer_build_is_refused_with_a_clear_message() {
        let (_, json) = todays_items().into_iter().find(|(n, _)| n == "run_classes").unwrap();
        let newer = format!("{{\"v\":{},{}", VERSION + 1, &json[1..]);
        let e = serde_json::from_str::<SavedRun>(&newer).unwrap_err().to_string();
        assert!(e.contains("newer version of this page"), "{e}");
        assert!(serde_json::from_str::<SavedRun>(&versioned(&json)).is_ok());
    }
}
