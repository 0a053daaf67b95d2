//! One component per panel of the page.

mod device_check;
mod embedding;
mod header;
mod model;
mod similarity;
mod tokens;

pub use device_check::DeviceCheckPanel;
pub use embedding::EmbeddingPanel;
pub use header::Header;
pub use model::ModelPanel;
pub use similarity::SimilarityPanel;
pub use tokens::TokensPanel;
