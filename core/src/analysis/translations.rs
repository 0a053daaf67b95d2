//! Do translations meet? Nine everyday sentences (one per colour of the map's palette), each in English, French, German and Spanish
//! (written for this project), and, for a model's sentence vectors, whether each sentence's
//! nearest neighbour is itself in another language (the model groups by meaning, as a
//! multilingual encoder trained for cross-lingual similarity does) or another sentence in its own
//! language (it groups by language: a monolingual model, and often a multilingual one's raw vectors).

use crate::analysis::similarity::cosine;

/// The languages, in the order each row of [`TRANSLATIONS`] gives them.
pub const LANGUAGES: [&str; 4] = ["English", "French", "German", "Spanish"];

/// What each sentence says, then the sentence in each of [`LANGUAGES`].
pub const TRANSLATIONS: [(&str, [&str; 4]); 9] = [
    ("weather", ["It is raining and the streets are wet.", "Il pleut et les rues sont mouillées.", "Es regnet und die Straßen sind nass.", "Está lloviendo y las calles están mojadas."]),
    ("breakfast", ["I drink a coffee with my breakfast.", "Je bois un café avec mon petit-déjeuner.", "Ich trinke einen Kaffee zum Frühstück.", "Bebo un café con mi desayuno."]),
    ("train", ["The train to the city leaves at eight.", "Le train pour la ville part à huit heures.", "Der Zug in die Stadt fährt um acht Uhr ab.", "El tren a la ciudad sale a las ocho."]),
    ("dog", ["My dog sleeps under the kitchen table.", "Mon chien dort sous la table de la cuisine.", "Mein Hund schläft unter dem Küchentisch.", "Mi perro duerme debajo de la mesa de la cocina."]),
    ("book", ["She is reading a book about the ocean.", "Elle lit un livre sur l'océan.", "Sie liest ein Buch über den Ozean.", "Ella está leyendo un libro sobre el océano."]),
    ("birthday", ["We are having a party for his birthday.", "Nous faisons une fête pour son anniversaire.", "Wir feiern eine Party zu seinem Geburtstag.", "Hacemos una fiesta para su cumpleaños."]),
    ("doctor", ["The doctor says I should rest for a week.", "Le médecin dit que je dois me reposer une semaine.", "Der Arzt sagt, ich soll mich eine Woche ausruhen.", "El médico dice que debo descansar una semana."]),
    ("football", ["The children play football in the park.", "Les enfants jouent au football dans le parc.", "Die Kinder spielen Fußball im Park.", "Los niños juegan al fútbol en el parque."]),
    ("music", ["He plays the piano every evening.", "Il joue du piano tous les soirs.", "Er spielt jeden Abend Klavier.", "Él toca el piano todas las noches."]),
];

/// Every sentence with its meaning, meaning by meaning, in [`LANGUAGES`] order within each:
/// sentence `i` says meaning `i / 4` in language `i % 4`.
pub fn sentences() -> Vec<(&'static str, &'static str)> {
    TRANSLATIONS.iter().flat_map(|(meaning, row)| row.iter().map(move |s| (*meaning, *s))).collect()
}

/// Where each sentence's nearest neighbour (by cosine) lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neighbours {
    /// The same meaning in another language.
    pub translation: usize,
    /// Another meaning in the same language.
    pub same_language: usize,
    /// Another meaning in another language.
    pub other: usize,
}

impl Neighbours {
    /// Counts, for vectors in [`sentences`]' order, where each one's nearest other vector lies.
    pub fn count(vectors: &[Vec<f32>]) -> Self {
        let languages = LANGUAGES.len();
        let mut out = Neighbours { translation: 0, same_language: 0, other: 0 };
        for (i, v) in vectors.iter().enumerate() {
            let nearest = (0..vectors.len())
                .filter(|&j| j != i)
                .max_by(|&a, &b| cosine(v, &vectors[a]).total_cmp(&cosine(v, &vectors[b])));
            let Some(j) = nearest else { continue };
            match (i / languages == j / languages, i % languages == j % languages) {
                (true, _) => out.translation += 1,
                (false, true) => out.same_language += 1,
                (false, false) => out.other += 1,
            }
        }
        out
    }

    /// What the counts say, in a sentence for the page, with what to open where the model groups
    /// by language.
    pub fn summary(self, layer: usize) -> String {
        let total = self.translation + self.same_language + self.other;
        let counts = format!(
            "At layer {layer}, for {} of {total} sentences the nearest other sentence is its translation; for {} it is another sentence in its own language; for {} neither.",
            self.translation, self.same_language, self.other
        );
        if self.translation > self.same_language {
            format!("{counts} This model places sentences by meaning more than by language.")
        } else {
            format!(
                "{counts} This model places sentences by language more than by meaning. A model pretrained on one language does so since it cuts the others' words into pieces it never learned to read; but multilingual pretraining alone often does too: raw XLM-RoBERTa and multilingual BERT vectors still carry each sentence's language (Pires et al. 2019; Libovický et al. 2020). Translations reliably meet in encoders trained for cross-lingual similarity, such as paraphrase-multilingual-MiniLM-L12-v2 or LaBSE."
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_meaning_is_in_every_language_once() {
        let all = sentences();
        assert_eq!(all.len(), TRANSLATIONS.len() * LANGUAGES.len());
        let distinct: std::collections::HashSet<_> = all.iter().map(|(_, s)| s).collect();
        assert_eq!(distinct.len(), all.len());
        assert_eq!(all[5], ("breakfast", "Je bois un café avec mon petit-déjeuner."));
    }

    /// Vectors that point by meaning, or by language, are counted so, and the sentence follows.
    #[test]
    fn the_counts_and_the_sentence_follow_the_vectors() {
        let n = sentences().len();
        // One axis per meaning (plus a little of the language), or one per language.
        let by = |meaning_weight: f32| -> Vec<Vec<f32>> {
            (0..n)
                .map(|i| {
                    let mut v = vec![0.0; 14];
                    v[i / 4] += meaning_weight;
                    v[10 + i % 4] += 1.0 - meaning_weight;
                    v[(i * 7) % 14] += 0.01;
                    v
                })
                .collect()
        };
        let meaning = Neighbours::count(&by(0.9));
        assert_eq!(meaning, Neighbours { translation: n, same_language: 0, other: 0 });
        assert!(meaning.summary(3).contains("by meaning more than by language"));
        let language = Neighbours::count(&by(0.1));
        assert_eq!(language.same_language, n);
        let text = language.summary(0);
        assert!(text.starts_with("At layer 0, for 0 of 36") && text.contains("by language more than by meaning"), "{text}");
        // Nothing said of the model beyond its numbers: not that it is English-only, not that
        // opening XLM-RoBERTa would make translations meet.
        assert!(!text.contains("English") && !text.contains("Open a multilingual"), "{text}");
    }
}
