//! The task heads end to end on toy problems, one test binary for all of them (one link):
//! token tagging (`tagging.rs`) and extractive question answering (`qa.rs`).

#[path = "../common/mod.rs"]
mod common;
mod qa;
mod tagging;
