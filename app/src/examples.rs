//! The built-in example data, written for this project (`public/examples/`), compiled into the
//! page: what the studio, the lab, the lessons and the backend probe start from.

/// Sentiment: 252 short sentences, half positive (the studio's classification example).
pub const SENTIMENT_CSV: &[u8] = include_bytes!("../../public/examples/sentiment.csv");

/// Questions over passages, SQuAD 2.0 JSON (the studio's question-answering example).
pub const QUESTIONS_JSON: &[u8] = include_bytes!("../../public/examples/questions.json");

/// Sentences tagged with named entities, CoNLL columns (the studio's tagging example).
pub const ENTITIES_CONLL: &[u8] = include_bytes!("../../public/examples/entities.conll");

/// Pairs of texts scored 0–5 (the studio's similarity example).
pub const SIMILARITY_CSV: &[u8] = include_bytes!("../../public/examples/similarity.csv");

/// Texts to search with a similarity model, one per line.
pub const SIMILARITY_TEXTS: &str = include_str!("../../public/examples/similarity-texts.txt");

/// Short sentences tagged with Universal POS tags, CoNLL columns (lesson 8's word probes).
pub const POS_CONLL: &[u8] = include_bytes!("../../public/examples/pos.conll");

/// The MLM lab's corpus of simple English, one sentence per line.
pub const CORPUS: &str = include_str!("../../public/examples/corpus.txt");
