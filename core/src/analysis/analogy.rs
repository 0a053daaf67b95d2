//! Static vectors and analogies: word2vec-style arithmetic (king − man + woman) on a model's
//! input embedding table, the one place in BERT where a word has a single vector whatever its
//! sentence. The nearest rows to `a − b + c` by cosine, as Mikolov et al. (2013) scored word2vec's
//! analogies, with the three words left out.

use burn::prelude::*;
use burn::tensor::TensorData;

use crate::bert::checkpoint::LoadedModel;
use crate::error::{Error, Result};
use crate::nn::read_f32;

/// A vocabulary piece near a query vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbour {
    /// The piece as the vocabulary writes it (RoBERTa's `Ġ` and SentencePiece's `▁` taken off).
    pub word: String,
    /// Its row in the embedding table.
    pub id: u32,
    /// Cosine of its input embedding with the query.
    pub cosine: f32,
}

impl LoadedModel {
    /// The embedding-table row of `word`, which the tokenizer must keep as one piece; a word it
    /// cuts into several is refused, naming the pieces.
    pub fn word_row(&self, word: &str) -> Result<u32> {
        let encoded = self.tokenizer.encode(word.trim())?;
        let pieces: Vec<_> = encoded.tokens.iter().filter(|t| !t.special).collect();
        match pieces.as_slice() {
            [one] => Ok(one.id),
            [] => Err(Error::Input("type a word".into())),
            many => Err(Error::Input(format!(
                "“{}” is {} pieces in this vocabulary ({}), so it has no row of its own: choose a word that stays whole",
                word.trim(),
                many.len(),
                many.iter().map(|t| t.piece.as_str()).collect::<Vec<_>>().join(" ")
            ))),
        }
    }

    /// The `k` whole words whose input embeddings are nearest (cosine) to
    /// `e(a) − e(b) + e(c)`, leaving out `a`, `b` and `c` themselves, special tokens, `##`
    /// continuations and pieces without a letter.
    pub async fn analogy(&self, [a, b, c]: [&str; 3], k: usize, device: &Device) -> Result<Vec<Neighbour>> {
        let rows = [self.word_row(a)?, self.word_row(b)?, self.word_row(c)?];
        let table = self.model.embeddings.word_embeddings.weight.val();
        let [vocab, width] = table.dims();
        let pick = |id: u32| table.clone().select(0, Tensor::<1, Int>::from_data(TensorData::new(vec![id as i64], [1]), device));
        // [1, width]
        let query = pick(rows[0]) - pick(rows[1]) + pick(rows[2]);
        // [vocab]
        let dots = table.clone().matmul(query.clone().transpose()).reshape([vocab]);
        let norms = table.powf_scalar(2.0).sum_dim(1).sqrt().reshape([vocab]);
        let query_norm = query.powf_scalar(2.0).sum().sqrt();
        let cosines = read_f32(dots / (norms * query_norm).clamp_min(1e-12)).await?;
        if cosines.len() != vocab || width == 0 {
            return Err(Error::Input("the embedding table could not be read".into()));
        }
        let mut nearest: Vec<Neighbour> = cosines
            .iter()
            .enumerate()
            .filter(|&(id, c)| !rows.contains(&(id as u32)) && c.is_finite())
            .filter_map(|(id, &cosine)| {
                let piece = self.tokenizer.id_to_piece(id as u32)?;
                let word = piece.trim_start_matches(['Ġ', '▁']).to_string();
                let special = (piece.starts_with('[') && piece.ends_with(']')) || (piece.starts_with('<') && piece.ends_with('>'));
                let whole = !piece.starts_with("##") && !special && word.chars().any(char::is_alphabetic);
                whole.then_some(Neighbour { word, id: id as u32, cosine })
            })
            .collect();
        nearest.sort_by(|x, y| y.cosine.total_cmp(&x.cosine));
        nearest.truncate(k);
        Ok(nearest)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::tiny_bert;

    #[test]
    fn the_nearest_rows_are_those_of_the_arithmetic_computed_by_hand() {
        let (bert, device) = tiny_bert();
        let got = pollster::block_on(bert.analogy(["river", "bank", "money"], 20, &device)).unwrap();
        let table = bert.model.embeddings.word_embeddings.weight.val().into_data().try_to_vec::<f32>().unwrap();
        let h = bert.config.hidden_size;
        let row = |w: &str| bert.word_row(w).unwrap() as usize;
        let q: Vec<f32> = (0..h).map(|k| table[row("river") * h + k] - table[row("bank") * h + k] + table[row("money") * h + k]).collect();
        let cos = |id: usize| {
            let r = &table[id * h..(id + 1) * h];
            let dot: f32 = r.iter().zip(&q).map(|(x, y)| x * y).sum();
            dot / (r.iter().map(|x| x * x).sum::<f32>().sqrt() * q.iter().map(|x| x * x).sum::<f32>().sqrt())
        };
        // The tiny vocabulary's whole words, the three of the query left out.
        let mut want: Vec<(String, f32)> =
            ["the", "loan", "a"].iter().map(|w| (w.to_string(), cos(row(w)))).collect();
        want.sort_by(|x, y| y.1.total_cmp(&x.1));
        assert_eq!(got.iter().map(|n| n.word.clone()).collect::<Vec<_>>(), want.iter().map(|w| w.0.clone()).collect::<Vec<_>>());
        for (n, (_, c)) in got.iter().zip(&want) {
            assert!((n.cosine - c).abs() < 1e-5, "{} {} against {c}", n.word, n.cosine);
        }
    }

    #[test]
    fn a_word_of_several_pieces_is_refused_by_name() {
        let (bert, device) = tiny_bert();
        let err = pollster::block_on(bert.analogy(["banks", "bank", "river"], 5, &device)).unwrap_err().to_string();
        assert!(err.contains("“banks” is 2 pieces in this vocabulary (bank ##s)"), "{err}");
    }
}
