//! Every family and format against PyTorch `transformers`: the small random-weight models that
//! `scripts/make_test_models.py` writes to `tests/models/` (BERT with an MLM head, a cased BERT
//! with only `vocab.txt`, sharded safetensors, `pytorch_model.bin`, bf16, a classifier with
//! `id2label`, DistilBERT, RoBERTa, ELECTRA (and ELECTRA-small's projected embeddings),
//! XLM-RoBERTa, CamemBERT and ALBERT (one shared layer) with SentencePiece Unigram tokenizers,
//! MPNet (relative position bias), ModernBERT (rotary positions, pre-norm gated layers, local
//! attention; every layer's hidden states; its token-classification and question-answering
//! classes through their `head`), DeBERTa-v2/v3 (disentangled attention, log buckets;
//! every layer's hidden states), an older RoBERTa with only `vocab.json` + `merges.txt`, and ALBERT,
//! XLM-R, CamemBERT and DeBERTa-v3 folders whose tokenizer is only SentencePiece's model file), each
//! read as a user's folder is: token ids and character offsets equal to `AutoTokenizer`'s,
//! hidden states within 1e-4, fill-mask and class probabilities within 1e-4, and weights saved
//! back under the family's own names. Exports loaded back in `transformers`: `exports.rs`.
//!
//! The models need PyTorch to make, so these tests are `#[ignore]`d in a plain `cargo test`
//! (which says so); `cargo xtask test` makes the models and runs them with `--include-ignored`.

mod common;

use std::collections::BTreeSet;

use bertbench_core::bert::checkpoint;
use bertbench_core::bert::model::{BertInput, ForwardOptions};
use bertbench_core::burn::prelude::*;
use bertbench_core::nn::read_f32;
use bertbench_core::tasks::{classification, pretraining};
use bertbench_core::tokenizer::Batch;

use common::{close, family_folder as folder, floats, ints as ids};

/// Ids and last hidden states of every test text, against `transformers`.
fn check_encoder(name: &str) {
    let device = Device::flex();
    let (files, expected) = folder(name);
    let original = weight_names(&files.weights);
    let loaded = checkpoint::load(files, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(loaded.config.model_type.model_type(), expected["family"], "{name}: family");
    assert_eq!(loaded.report.num_params as u64, expected["num_parameters"].as_u64().unwrap(), "{name}: parameters");
    for text in expected["texts"].as_array().unwrap() {
        let encoded = loaded.tokenizer.encode_text(text["text"].as_str().unwrap(), text["pair"].as_str()).unwrap();
        assert_eq!(encoded.ids(), ids(&text["input_ids"]), "{name}: ids of {}", text["text"]);
        // Character offsets as transformers' `offset_mapping` (what question answering and
        // tagging read), `(0, 0)` for specials.
        let offsets: Vec<(usize, usize)> = encoded.tokens.iter().map(|t| t.offsets).collect();
        let want: Vec<(usize, usize)> =
            text["offsets"].as_array().unwrap().iter().map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize)).collect();
        assert_eq!(offsets, want, "{name}: offsets of {}", text["text"]);
        let batch = Batch::from_encoded(std::slice::from_ref(&encoded), loaded.tokenizer.pad_id);
        let out = loaded.model.forward(BertInput::from_batch(&batch, &device), ForwardOptions::default());
        let got = pollster::block_on(read_f32(out.last_hidden_state)).unwrap();
        close(&format!("{name}: hidden states of {}", text["text"]), &got, &floats(&text["last_hidden_state"]));
    }
    // Saved back under the family's own names: every saved tensor is one the checkpoint had.
    let saved = weight_names(&checkpoint::save_weights(&loaded.model).unwrap());
    let prefix = loaded.config.model_type.prefix();
    let stripped: BTreeSet<String> = original.iter().map(|n| n.strip_prefix(prefix).unwrap_or(n).to_string()).collect();
    let strange: Vec<&String> = saved.iter().filter(|n| !stripped.contains(*n)).collect();
    assert!(strange.is_empty(), "{name}: saved names the checkpoint does not have: {strange:?}");
}

fn weight_names(bytes: &[u8]) -> BTreeSet<String> {
    safetensors::SafeTensors::deserialize(bytes).unwrap().names().into_iter().map(String::from).collect()
}

/// Top-5 fills at every mask, against `transformers`' probabilities.
fn check_fill_mask(name: &str) {
    let device = Device::flex();
    let (files, expected) = folder(name);
    let (model, tokenizer, _) = pretraining::load(files, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    for case in expected["fill_mask"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        assert_eq!(tokenizer.encode(text).unwrap().ids(), ids(&case["input_ids"]), "{name}: ids of {text}");
        let fills = pollster::block_on(pretraining::fill_mask(&model, &tokenizer, text, 5, &device)).unwrap();
        let masks = case["masks"].as_array().unwrap();
        assert_eq!(fills.len(), masks.len(), "{name}: masks in {text}");
        for (fill, want) in fills.iter().zip(masks) {
            assert_eq!(fill.position as u64, want["position"].as_u64().unwrap());
            let pieces: Vec<String> = ids(&want["ids"]).iter().map(|&i| tokenizer.id_to_piece(i).unwrap()).collect();
            let got_pieces: Vec<String> = fill.top.iter().map(|(p, _)| p.clone()).collect();
            assert_eq!(got_pieces, pieces, "{name}: top-5 of {text}");
            let probs: Vec<f32> = fill.top.iter().map(|(_, p)| *p).collect();
            close(&format!("{name}: probabilities of {text}"), &probs, &floats(&want["probs"]));
        }
    }
}

macro_rules! family_tests {
    ($($test:ident => $name:literal $(, $extra:ident)?;)*) => {$(
        #[test]
        #[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
        fn $test() {
            check_encoder($name);
            $( $extra($name); )?
        }
    )*};
}

family_tests! {
    bert_with_mlm_head_matches_transformers => "bert-mlm", check_fill_mask;
    cased_bert_with_only_vocab_txt_keeps_case => "bert-cased-vocab";
    sharded_safetensors_load_whole => "bert-sharded";
    pytorch_model_bin_loads => "bert-bin", check_fill_mask;
    bf16_weights_load => "bert-bf16";
    distilbert_matches_transformers => "distilbert", check_fill_mask;
    roberta_matches_transformers => "roberta", check_fill_mask;
    an_older_roberta_with_only_vocab_json_and_merges_txt_reads_as_transformers => "roberta-vocab-merges", check_fill_mask;
    a_token_classifier_opens_as_a_tagger_with_transformers_probabilities => "bert-ner", check_token_classifier;
    a_question_answering_model_opens_with_transformers_start_and_end_logits => "bert-qa", check_question_answering;
    electra_discriminator_matches_transformers => "electra";
    electra_generator_fills_masks_as_transformers => "electra-generator", check_fill_mask;
    xlm_roberta_with_a_unigram_tokenizer_matches_transformers => "xlm-roberta", check_fill_mask;
    electra_small_projects_its_embeddings_as_transformers => "electra-small";
    electra_small_generator_fills_masks_with_its_narrow_head => "electra-small-generator", check_fill_mask;
    albert_with_one_shared_layer_matches_transformers => "albert", check_albert_pretraining;
    mpnet_with_its_relative_position_bias_matches_transformers => "mpnet", check_mpnet;
    modernbert_with_rotary_positions_and_local_attention_matches_transformers => "modernbert", check_modernbert;
    a_modernbert_token_classifier_tags_through_its_head_as_transformers => "modernbert-ner", check_token_classifier;
    a_modernbert_question_answering_model_reads_spans_through_its_head_as_transformers => "modernbert-qa", check_question_answering;
    deberta_v3_with_disentangled_attention_matches_transformers => "deberta", check_deberta;
    an_albert_with_only_spiece_model_reads_as_transformers => "albert-spm", check_fill_mask;
    an_xlm_roberta_with_only_sentencepiece_bpe_model_reads_as_transformers => "xlm-roberta-spm", check_fill_mask;
    a_camembert_with_only_sentencepiece_bpe_model_reads_as_transformers => "camembert-spm", check_fill_mask;
    a_deberta_v3_with_only_spm_model_reads_as_transformers => "deberta-spm", check_fill_mask;
    albert_with_two_layer_groups_of_two_layers_matches_transformers => "albert-groups", check_layers_and_fills;
    deberta_with_v2_xlarge_s_convolution_matches_transformers => "deberta-conv", check_deberta_conv;
    deberta_without_relative_attention_matches_transformers => "deberta-norel", check_layers_and_fills;
    mpnet_with_a_larger_bias_table_matches_transformers => "mpnet-buckets", check_layers_and_fills;
    modernbert_with_silu_in_its_head_classifies_as_the_pipeline => "modernbert-silu", check_softmax_pipeline;
    bert_with_relative_key_distances_matches_transformers_4 => "bert-relative-key", check_layers_and_fills;
    bert_with_relative_key_query_distances_matches_transformers_4 => "bert-relative-key-query", check_layers_and_fills;
}

/// Every layer's hidden states (one per layer run: each of an ALBERT group's layers apart, as
/// `transformers` 5 records them) and fill-mask, as `transformers`.
fn check_layers_and_fills(name: &str) {
    let (files, expected) = folder(name);
    check_layers(name, files, &expected);
    check_fill_mask(name);
}

/// [`check_layers_and_fills`], and the real tokens of a right-padded batch as `transformers`
/// gives them: the convolution after the first layer reads zeros beside padding there.
fn check_deberta_conv(name: &str) {
    check_layers_and_fills(name);
    let device = Device::flex();
    let (files, expected) = folder(name);
    let loaded = checkpoint::load(files, &device).unwrap();
    let rows = expected["padded_batch"].as_array().unwrap();
    let encoded: Vec<_> = rows.iter().map(|r| loaded.tokenizer.encode_text(r["text"].as_str().unwrap(), None).unwrap()).collect();
    let lengths: Vec<usize> = encoded.iter().map(|e| e.ids().len()).collect();
    assert!(lengths.iter().min() < lengths.iter().max(), "{name}: the batch needs padding");
    let batch = Batch::from_encoded(&encoded, loaded.tokenizer.pad_id);
    let out = loaded.model.forward(BertInput::from_batch(&batch, &device), ForwardOptions::default());
    let [_, seq, hidden] = out.last_hidden_state.dims();
    let all = pollster::block_on(read_f32(out.last_hidden_state)).unwrap();
    for (i, (row, n)) in rows.iter().zip(&lengths).enumerate() {
        assert_eq!(encoded[i].ids(), ids(&row["input_ids"]), "{name}: ids of {}", row["text"]);
        let got = &all[i * seq * hidden..(i * seq + n) * hidden];
        close(&format!("{name}: padded batch row {i}"), got, &floats(&row["last_hidden_state"]));
    }
}

/// A single-label classifier folder whose scores are the pipeline's softmax.
fn check_softmax_pipeline(name: &str) {
    check_pipeline_classifier(name, "softmax");
}

/// Every layer's hidden states (the input to layer 0, then each layer's output, the last after
/// the final LayerNorm) of every test text within 1e-4 of `transformers`', the long text's
/// beyond the local layers' window.
fn check_every_layer(name: &str) {
    let (files, expected) = folder(name);
    let window = bertbench_core::bert::config::BertConfig::from_json_bytes(&files.config_json).unwrap().local_attention.unwrap_or(0);
    let longest = check_layers(name, files, &expected);
    assert!(window > 0 && longest > window, "{name}: no test text is longer than the local window of {window}");
}

/// [`check_every_layer`]'s comparison; the longest test text's length in tokens.
fn check_layers(name: &str, files: checkpoint::CheckpointFiles, expected: &serde_json::Value) -> usize {
    let device = Device::flex();
    let loaded = checkpoint::load(files, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut longest = 0;
    for text in expected["texts"].as_array().unwrap() {
        let encoded = loaded.tokenizer.encode_text(text["text"].as_str().unwrap(), text["pair"].as_str()).unwrap();
        longest = longest.max(encoded.ids().len());
        let batch = Batch::from_encoded(std::slice::from_ref(&encoded), loaded.tokenizer.pad_id);
        let options = ForwardOptions { hidden_states: true, ..Default::default() };
        let out = loaded.model.forward(BertInput::from_batch(&batch, &device), options);
        let want = text["hidden_states"].as_array().unwrap();
        assert_eq!(out.hidden_states.len(), want.len(), "{name}: layers");
        for (layer, (got, want)) in out.hidden_states.into_iter().zip(want).enumerate() {
            let got = pollster::block_on(read_f32(got)).unwrap();
            let want: Vec<f32> = want.as_array().unwrap().iter().flat_map(floats).collect();
            close(&format!("{name}: hidden states {layer} of {}", text["text"]), &got, &want);
        }
    }
    longest
}

/// `DebertaV2ForMaskedLM` with DeBERTa-v3's settings: every layer of every text (one of 328
/// tokens, beyond the buckets' reach of 64) and fill-mask as `transformers`, and every distance
/// to ±600 in the bucket `make_log_bucket_position` gives it (and to ±1200 in DeBERTa-v3-base's
/// 256 buckets reaching 512). The same model read with its reach
/// one further (65) moves its buckets' edges, and its hidden states off `transformers`' by more
/// than the tolerance: the test sees the bucketing.
fn check_deberta(name: &str) {
    use bertbench_core::bert::config::BertConfig;
    use bertbench_core::bert::disentangled_attention::RelativePositions;
    let (files, expected) = folder(name);
    let config = BertConfig::from_json_bytes(&files.config_json).unwrap();
    let longest = check_layers(name, files.clone(), &expected);
    assert!(longest > 4 * config.relative_reach(), "{name}: the test texts reach only {longest} tokens");
    check_fill_mask(name);
    let from = expected["relative_buckets"]["from"].as_i64().unwrap();
    let want: Vec<i64> = expected["relative_buckets"]["buckets"].as_array().unwrap().iter().map(|b| b.as_i64().unwrap()).collect();
    let positions = RelativePositions::of(&config);
    let got: Vec<i64> = (0..want.len() as i64).map(|i| positions.bucket(from + i)).collect();
    assert_eq!(got, want, "{name}: relative position buckets");
    let v3 = &expected["v3_base_buckets"];
    let positions = RelativePositions { buckets: Some(v3["position_buckets"].as_u64().unwrap() as usize), reach: v3["max_relative_positions"].as_u64().unwrap() as usize };
    let from = v3["from"].as_i64().unwrap();
    let want: Vec<i64> = v3["buckets"].as_array().unwrap().iter().map(|b| b.as_i64().unwrap()).collect();
    let got: Vec<i64> = (0..want.len() as i64).map(|i| positions.bucket(from + i)).collect();
    assert_eq!(got, want, "{name}: DeBERTa-v3-base's relative position buckets");
    // The reach one further: the same weights, other buckets.
    let device = Device::flex();
    let mut edited: serde_json::Value = serde_json::from_slice(&files.config_json).unwrap();
    edited["max_relative_positions"] = (config.relative_reach() + 1).into();
    let files = checkpoint::CheckpointFiles { config_json: serde_json::to_vec(&edited).unwrap(), ..files };
    let loaded = checkpoint::load(files, &device).unwrap();
    let text = expected["texts"].as_array().unwrap().iter().max_by_key(|t| t["input_ids"].as_array().unwrap().len()).unwrap();
    let encoded = loaded.tokenizer.encode_text(text["text"].as_str().unwrap(), None).unwrap();
    let batch = Batch::from_encoded(std::slice::from_ref(&encoded), loaded.tokenizer.pad_id);
    let out = loaded.model.forward(BertInput::from_batch(&batch, &device), ForwardOptions::default());
    let got = pollster::block_on(read_f32(out.last_hidden_state)).unwrap();
    let off = common::max_abs_diff(&got, &floats(&text["last_hidden_state"]));
    assert!(off > 1e-4, "{name}: buckets reaching 65 give transformers' states within {off}; the test does not see the bucketing");
}

/// `ModernBertForMaskedLM`: every layer, and fill-mask.
fn check_modernbert(name: &str) {
    check_every_layer(name);
    check_fill_mask(name);
}

/// `MPNetForMaskedLM` fills masks as `transformers`, and every distance up to 600 falls in the
/// bucket `MPNetEncoder.relative_position_bucket` gives it (the test texts reach 330 tokens).
fn check_mpnet(name: &str) {
    use bertbench_core::bert::relative_bias::RelativeBuckets;
    check_fill_mask(name);
    let (_, expected) = folder(name);
    let from = expected["relative_buckets"]["from"].as_i64().unwrap();
    let want: Vec<usize> = expected["relative_buckets"]["buckets"].as_array().unwrap().iter().map(|b| b.as_u64().unwrap() as usize).collect();
    let got: Vec<usize> = (0..want.len() as i64).map(|i| RelativeBuckets::MPNET.bucket(from + i)).collect();
    assert_eq!(got, want, "{name}: relative position buckets");
    let longest = expected["texts"].as_array().unwrap().iter().map(|t| t["input_ids"].as_array().unwrap().len()).max().unwrap();
    assert!(longest > 129, "{name}: the test texts reach only {longest} tokens, short of the far buckets");
}

/// `AlbertForPreTraining`: its MLM head fills masks, and its sentence-order head gives each
/// pair `transformers`' probabilities.
fn check_albert_pretraining(name: &str) {
    check_fill_mask(name);
    let device = Device::flex();
    let (files, expected) = folder(name);
    let (model, tokenizer, _) = pretraining::load(files, &device).unwrap();
    assert!(model.cls.seq_relationship.is_some(), "{name}: the sentence-order head was not read");
    for case in expected["sentence_order"].as_array().unwrap() {
        let encoded = tokenizer.encode_text(case["text"].as_str().unwrap(), case["pair"].as_str()).unwrap();
        let batch = Batch::from_encoded(std::slice::from_ref(&encoded), tokenizer.pad_id);
        let picked = Tensor::<1, Int>::from_data(bertbench_core::burn::tensor::TensorData::new(vec![0i64], [1]), &device);
        let (_, pair) = model.forward(BertInput::from_batch(&batch, &device), picked);
        let logits = pair.unwrap().into_data().try_to_vec::<f32>().unwrap();
        close(&format!("{name}: sentence order of {}", case["text"]), &bertbench_core::tasks::metrics::softmax(&logits), &floats(&case["probs"]));
    }
}

/// A `BertForTokenClassification` (a NER model) is named as one and never read as a text
/// classifier, though its `classifier.*` has a text classifier's shape.
fn check_token_classifier(name: &str) {
    use bertbench_core::bert::model::BertInput;
    use bertbench_core::tasks::classification::Level;
    use bertbench_core::tokenizer::Batch;
    let device = Device::flex();
    let (files, expected) = folder(name);
    let loaded = checkpoint::load(files.clone(), &device).unwrap();
    assert_eq!(loaded.report.heads, [checkpoint::Head::TokenClassifier]);
    let tagger = classification::load_classifier(files, None, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(tagger.meta.labels, ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]);
    assert_eq!(tagger.meta.spec.level, Level::Token);
    for case in expected["classify"].as_array().unwrap() {
        let encoded = tagger.tokenizer.encode_text(case["text"].as_str().unwrap(), case["pair"].as_str()).unwrap();
        let batch = Batch::from_encoded(&[encoded], tagger.tokenizer.pad_id);
        let logits = tagger.model.forward_tokens(BertInput::from_batch(&batch, &device)).unwrap();
        let values = logits.into_data().try_to_vec::<f32>().unwrap();
        let ours: Vec<f32> = values.chunks(5).flat_map(bertbench_core::tasks::metrics::softmax).collect();
        let theirs: Vec<f32> = case["probs"].as_array().unwrap().iter().flat_map(floats).collect();
        close(&format!("{name}: tag probabilities of {}", case["text"]), &ours, &theirs);
    }
}

/// A `BertForQuestionAnswering` folder from the Hub opens as a question-answering model: its
/// start and end logits equal `transformers'` on every token, its windows' tokens
/// `AutoTokenizer`'s.
fn check_question_answering(name: &str) {
    use bertbench_core::bert::model::BertInput;
    use bertbench_core::tasks::classification::Level;
    let device = Device::flex();
    let (files, expected) = folder(name);
    let loaded = checkpoint::load(files.clone(), &device).unwrap();
    assert_eq!(loaded.report.heads, [checkpoint::Head::QuestionAnswering]);
    let qa = classification::load_classifier(files, None, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(qa.meta.spec.level, Level::Span);
    assert_eq!(qa.meta.labels, bertbench_core::tasks::qa::LABELS);
    for case in expected["answer"].as_array().unwrap() {
        let (question, context) = (case["question"].as_str().unwrap(), case["context"].as_str().unwrap());
        let windows = qa.tokenizer.encode_windows(question, context, 512, 128).unwrap();
        assert_eq!(windows.len(), 1);
        assert_eq!(windows[0].encoded.ids(), ids(&case["input_ids"]), "{name}: token ids of {question:?}");
        let batch = Batch::from_encoded(&[windows[0].encoded.clone()], qa.tokenizer.pad_id);
        let values = qa.model.forward_tokens(BertInput::from_batch(&batch, &device)).unwrap().into_data().try_to_vec::<f32>().unwrap();
        let (starts, ends): (Vec<f32>, Vec<f32>) = values.chunks(2).map(|x| (x[0], x[1])).unzip();
        close(&format!("{name}: start logits of {question:?}"), &starts, &floats(&case["start_logits"]));
        close(&format!("{name}: end logits of {question:?}"), &ends, &floats(&case["end_logits"]));
    }
}

/// A `*ForSequenceClassification` folder from the Hub, read as the studio reads it: its labels
/// and class probabilities equal `transformers'`.
fn check_classifier(name: &str) {
    check_encoder(name);
    let device = Device::flex();
    let (files, expected) = folder(name);
    let loaded = classification::load_classifier(files, None, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(loaded.meta.labels, ["negative", "neutral", "positive"]);
    for case in expected["classify"].as_array().unwrap() {
        let encoded = loaded.tokenizer.encode_text(case["text"].as_str().unwrap(), case["pair"].as_str()).unwrap();
        let probs = pollster::block_on(classification::predict(&loaded.model, loaded.meta.scoring(), &[encoded], loaded.tokenizer.pad_id, 1, &device)).unwrap();
        close(&format!("{name}: class probabilities of {}", case["text"]), &probs[0], &floats(&case["probs"]));
    }
}

/// A `*ForSequenceClassification` folder as people bring them (no `id2label`, multi-label, one
/// output), read as the studio and `bertbench classify` read it: its labels (`LABEL_i` where the
/// config names none), its logits, and the scores of `transformers`' text-classification
/// pipeline from them (`function`: what the pipeline applies), all as PyTorch gives them.
fn check_pipeline_classifier(name: &str, function: &str) {
    check_encoder(name);
    let device = Device::flex();
    let (files, expected) = folder(name);
    let loaded = classification::load_classifier(files, None, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    let cases = expected["classify"].as_array().unwrap();
    let labels: Vec<String> = cases[0]["labels"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()).collect();
    assert_eq!(loaded.meta.labels, labels, "{name}: labels");
    let scoring = loaded.meta.pipeline_scoring();
    assert_eq!(scoring.name(), function, "{name}: the pipeline's function");
    for case in cases {
        let encoded = loaded.tokenizer.encode_text(case["text"].as_str().unwrap(), case["pair"].as_str()).unwrap();
        let logits = pollster::block_on(classification::predict(&loaded.model, classification::Scoring::Raw, &[encoded], loaded.tokenizer.pad_id, 1, &device)).unwrap();
        close(&format!("{name}: logits of {}", case["text"]), &logits[0], &floats(&case["logits"]));
        close(&format!("{name}: the pipeline's scores of {}", case["text"]), &scoring.apply(&logits[0]), &floats(&case["probs"]));
    }
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn binary_classifiers_saved_without_id2label_predict_as_the_pipeline() {
    for family in ["albert", "distilbert", "electra", "modernbert", "mpnet", "xlm-roberta"] {
        check_pipeline_classifier(&format!("{family}-binary-v5"), "softmax");
    }
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn a_multi_label_classifier_gives_each_label_its_sigmoid_as_the_pipeline() {
    check_pipeline_classifier("bert-multilabel", "sigmoid");
    let device = Device::flex();
    let (files, _) = folder("bert-multilabel");
    let loaded = classification::load_classifier(files, None, &device).unwrap();
    assert!(loaded.meta.multi_label());
    // What the page's predict box shows is the pipeline's.
    assert_eq!(loaded.meta.scoring(), loaded.meta.pipeline_scoring());
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn one_output_heads_give_the_pipeline_s_score_raw_for_regression_else_its_sigmoid() {
    check_pipeline_classifier("bert-one-output", "sigmoid");
    check_pipeline_classifier("bert-regression", "none");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn sequence_classifier_with_id2label_predicts_as_transformers() {
    check_classifier("bert-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn roberta_sequence_classifier_predicts_as_transformers() {
    check_classifier("roberta-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn distilbert_sequence_classifier_predicts_as_transformers() {
    check_classifier("distilbert-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn electra_sequence_classifier_predicts_as_transformers() {
    check_classifier("electra-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn camembert_sequence_classifier_predicts_as_transformers() {
    check_classifier("camembert-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn electra_small_sequence_classifier_predicts_as_transformers() {
    check_classifier("electra-small-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn albert_sequence_classifier_predicts_as_transformers() {
    check_classifier("albert-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn mpnet_sequence_classifier_predicts_as_transformers() {
    check_classifier("mpnet-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn modernbert_sequence_classifier_with_mean_pooling_and_every_bias_predicts_as_transformers() {
    check_classifier("modernbert-classifier");
    check_every_layer("modernbert-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn deberta_v2_classifier_with_its_own_position_projections_predicts_as_transformers() {
    check_classifier("deberta-classifier");
    let (files, expected) = folder("deberta-classifier");
    check_layers("deberta-classifier", files, &expected);
}

/// Prompting's scores (each label word's probability at the blank) are `transformers`'
/// fill-mask probabilities of those words: the fill-mask cases' top-5 pieces that stand as whole
/// words, read back through a template holding the case's text. (The test RoBERTa's `<mask>`
/// does not take the space before it, which stays a token of its own, `Ġ`: a word in its place
/// changes the tokens around the blank, and is refused so.)
#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn prompting_scores_are_transformers_fill_mask_probabilities() {
    use bertbench_core::analysis::prompting::{self, Prompt};
    for name in ["bert-mlm", "xlm-roberta"] {
        let device = Device::flex();
        let (files, expected) = folder(name);
        let (model, tokenizer, _) = pretraining::load(files, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut compared = 0;
        for case in expected["fill_mask"].as_array().unwrap() {
            let [mask] = case["masks"].as_array().unwrap().as_slice() else { continue };
            let template = format!("{}{}", case["text"].as_str().unwrap().replace(&tokenizer.mask_token(), prompting::MASK), prompting::TEXT);
            // The top-5 pieces that are whole words, written as a user types them.
            let mut words = Vec::new();
            for (id, p) in ids(&mask["ids"]).into_iter().zip(floats(&mask["probs"])) {
                let piece = tokenizer.id_to_piece(id).unwrap();
                let word = piece.trim_start_matches(['Ġ', '▁']).to_string();
                let alone = Prompt { template: template.clone(), words: vec![word.clone(), word.clone()] };
                if !piece.starts_with("##") && alone.verbalize(&tokenizer).is_ok_and(|v| v[0].id == id) {
                    words.push((word, p));
                }
            }
            if words.is_empty() {
                continue;
            }
            if words.len() == 1 {
                // A prompt has two labels at least: the one word stands for both.
                words.push(words[0].clone());
            }
            let prompt = Prompt { template, words: words.iter().map(|(w, _)| w.clone()).collect() };
            let got = pollster::block_on(prompting::score(&model.bert, &model.cls.predictions, &tokenizer, &prompt, &[String::new()], &device)).unwrap();
            let want: Vec<f32> = words.iter().map(|(_, p)| *p).collect();
            close(&format!("{name}: prompt probabilities of {}", case["text"]), &got.probs[0], &want);
            compared += words.len();
        }
        assert!(compared >= 2, "{name}: no fill-mask case had a whole word among its top 5");
    }
    let (files, _) = folder("roberta");
    let (_, tokenizer, _) = pretraining::load(files, &Device::flex()).unwrap();
    let prompt = Prompt { template: "{text} It was {mask}.".into(), words: vec!["over".into(), "the".into()] };
    let refused = prompt.verbalize(&tokenizer).unwrap_err().to_string();
    assert!(refused.contains("changes the tokens around the blank"), "{refused}");
}

/// What ModernBERT's folders hold that the page cannot compute as `transformers` does is refused
/// by name: a token class's `head` without its LayerNorm (transformers would start it fresh), a
/// masked-language-model decoder without a bias.
#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn modernbert_heads_it_cannot_compute_are_refused_by_name() {
    let device = Device::flex();
    let (mut files, _) = folder("modernbert-ner");
    let st = safetensors::SafeTensors::deserialize(&files.weights).unwrap();
    let kept: Vec<(String, safetensors::tensor::TensorView<'_>)> = st.tensors().into_iter().filter(|(n, _)| n != "head.norm.weight").collect();
    files.weights = safetensors::serialize(kept, None).unwrap();
    let err = classification::load_classifier(files, None, &device).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("head.norm.weight"), "{err}");
    let (mut files, _) = folder("modernbert");
    let mut config: serde_json::Value = serde_json::from_slice(&files.config_json).unwrap();
    config["decoder_bias"] = false.into();
    files.config_json = serde_json::to_vec(&config).unwrap();
    let err = pretraining::load(files, &device).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("decoder_bias is false"), "{err}");
}

/// What of DeBERTa's MLM heads the page cannot read as `transformers` does is refused by name:
/// the newer head (`lm_predictions.lm_head`, `legacy: false`), and a legacy folder that holds
/// only that head, as the Hub's DeBERTa-v3 models do (`transformers` would start
/// `cls.predictions` from random weights there). The encoder of either still opens.
#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn deberta_mlm_heads_it_cannot_compute_are_refused_by_name() {
    let device = Device::flex();
    let (files, _) = folder("deberta");
    // The same weights with the head under the newer names.
    let st = safetensors::SafeTensors::deserialize(&files.weights).unwrap();
    let renamed: Vec<(String, safetensors::tensor::TensorView<'_>)> =
        st.tensors().into_iter().map(|(n, v)| (n.replace("cls.predictions.transform.", "lm_predictions.lm_head.").replace("cls.predictions.bias", "lm_predictions.lm_head.bias"), v)).collect();
    let weights = safetensors::serialize(renamed, None).unwrap();
    for legacy in [true, false] {
        let mut config: serde_json::Value = serde_json::from_slice(&files.config_json).unwrap();
        config["legacy"] = legacy.into();
        let edited = checkpoint::CheckpointFiles { config_json: serde_json::to_vec(&config).unwrap(), weights: weights.clone(), ..files.clone() };
        assert!(checkpoint::load(edited.clone(), &device).is_ok(), "legacy {legacy}: the encoder opens");
        let err = pretraining::load(edited, &device).map(|_| ()).unwrap_err().to_string();
        let said = if legacy { "cls.predictions.bias (the checkpoint has no masked-language-model head)" } else { "legacy is false" };
        assert!(err.contains(said), "legacy {legacy}: {err}");
    }
}
