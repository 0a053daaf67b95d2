//! The task heads end to end on toy problems, one test binary for all of them (one link):
//! token tagging (`tagging.rs`), extractive question answering (`qa.rs`) and sentence
//! similarity (`similarity.rs`).

#[path = "../common/mod.rs"]
mod common;
mod qa;
mod similarity;
mod tagging;
