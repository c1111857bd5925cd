//! An embedder's calibration: its common direction and its cosine scale for unrelated texts.
//!
//! Sentence vectors share a common component (what every sentence of a language, or every
//! statement of one person, has in common: "I", tense, sentence shape). It lifts the cosine
//! of unrelated statements and drowns what tells them apart; removing the projection on it
//! (as in SIF sentence embeddings, Arora et al. 2017) leaves what each statement is about.
//! The read path removes a notebook's common direction, estimated from its own records with
//! an embedder's calibration as a prior, so a small notebook is judged like a large one.
//!
//! [`calibrate`] derives both from the vectors of [`CALIBRATION_SENTENCES`]: everyday
//! statements on unrelated subjects, in the third and the first person.

/// Everyday statements on mutually unrelated subjects.
pub const CALIBRATION_SENTENCES: [&str; 60] = [
    "The train to the airport leaves every twenty minutes.",
    "Add two cups of flour and a pinch of salt.",
    "The quarterly report is due next Thursday.",
    "Our cat knocked a glass off the kitchen table.",
    "The museum is closed on public holidays.",
    "Please restart the router if the light turns red.",
    "She scored the winning goal in extra time.",
    "The recipe calls for fresh basil, not dried.",
    "Interest rates rose by a quarter of a point.",
    "The hiking trail is muddy after the rain.",
    "He has been learning to play the cello.",
    "The invoice was paid by bank transfer.",
    "My phone battery drains fast in the cold.",
    "The concert starts at eight in the evening.",
    "Tomatoes grow best with plenty of sunlight.",
    "The library extended its opening hours.",
    "We painted the fence a dark shade of green.",
    "The flight was delayed because of fog.",
    "Remember to water the plants on Sunday.",
    "The new bridge will open in the spring.",
    "The dentist appointment moved to Monday.",
    "Chess clubs meet in the community hall.",
    "The soup needs another ten minutes on the stove.",
    "A storm knocked out power across the valley.",
    "The software update fixed the login bug.",
    "Our team won the regional quiz night.",
    "The bakery sells out of croissants by noon.",
    "Traffic was heavy on the ring road this morning.",
    "The hotel room had a view of the harbour.",
    "I need to renew my passport before summer.",
    "The kids built a sandcastle on the beach.",
    "The printer on the third floor is out of toner.",
    "Parking is free after six in the evening.",
    "The volcano last erupted two centuries ago.",
    "Birthday candles are in the top drawer.",
    "The orchestra tuned up before the overture.",
    "Our neighbours are renovating their attic.",
    "The marathon route passes the old cathedral.",
    "Sales of electric bikes doubled this year.",
    "The password reset email never arrived.",
    "I usually take the bus to work.",
    "I spilled coffee on my notebook yesterday.",
    "My sister is visiting next weekend.",
    "I have a meeting with the landlord on Friday.",
    "I prefer to answer emails in the morning.",
    "My knee has been sore since the football match.",
    "I finally fixed the squeaky door.",
    "I am saving up for a new laptop.",
    "My grandmother taught me to knit.",
    "I forgot to buy milk again.",
    "I think the museum tour was too long.",
    "My flat gets very cold in winter.",
    "I booked a table for two at eight.",
    "I have never been good at drawing.",
    "My brother works night shifts at the port.",
    "I want to learn how to bake bread.",
    "I watched a documentary about whales.",
    "My bike needs a new chain.",
    "I am allergic to cats but I love dogs.",
    "I moved the sofa closer to the window.",
];

/// Pseudo-records of the embedder's common direction added to a notebook's own vectors when
/// estimating the notebook's common direction (a notebook of a few records is judged by the
/// embedder's; a large one by its own).
pub const COMMON_PRIOR_RECORDS: f32 = 30.0;

/// An embedder's calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The mean of the calibration sentences' unit vectors (not normalised: its length says
    /// how much they share).
    pub common: Vec<f32>,
    /// Mean and standard deviation of the cosine between distinct calibration sentences once
    /// the common direction is removed: the embedder's scale for "unrelated" in ranking.
    pub cosine_prior: (f64, f64),
    /// The same of their raw cosines: the scale the relevance gate judges on.
    pub raw_cosine_prior: (f64, f64),
}

/// The calibration of an embedder from its vectors of [`CALIBRATION_SENTENCES`] (any
/// sentences of unrelated subjects); `None` for fewer than two non-zero vectors.
pub fn calibrate(vectors: &[Vec<f32>]) -> Option<Calibration> {
    let units: Vec<Vec<f32>> = vectors.iter().filter_map(|v| unit(v)).collect();
    let dims = units.first()?.len();
    if units.len() < 2 || units.iter().any(|u| u.len() != dims) {
        return None;
    }
    let mut common = vec![0.0_f32; dims];
    for u in &units {
        for (c, x) in common.iter_mut().zip(u) {
            *c += x / units.len() as f32;
        }
    }
    let direction = unit(&common)?;
    let along: Vec<f64> = units.iter().map(|u| f64::from(dot(u, &direction))).collect();
    let (mut ranked, mut raw) = (Vec::new(), Vec::new());
    for i in 0..units.len() {
        for j in i + 1..units.len() {
            let cosine = f64::from(dot(&units[i], &units[j]));
            raw.push(cosine);
            ranked.push(without_common(cosine, along[i], along[j]));
        }
    }
    Some(Calibration {
        common,
        cosine_prior: mean_and_std(&ranked),
        raw_cosine_prior: mean_and_std(&raw),
    })
}

/// Mean and standard deviation (at least 0.001) of a non-empty sample.
fn mean_and_std(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, variance.sqrt().max(1e-3))
}

/// The cosine of two unit vectors once the projection on a unit direction is removed from
/// both, from their cosine and their components along it. A vector (nearly) along the
/// direction itself has nothing left to compare: 0.
pub fn without_common(cosine: f64, a_along: f64, b_along: f64) -> f64 {
    let rest = (1.0 - a_along * a_along) * (1.0 - b_along * b_along);
    if rest < 1e-6 {
        return 0.0;
    }
    ((cosine - a_along * b_along) / rest.sqrt()).clamp(-1.0, 1.0)
}

/// The notebook's common direction: the sum of its unit vectors plus
/// [`COMMON_PRIOR_RECORDS`] of the embedder's mean, normalised; `None` when it is zero.
pub fn common_direction(sum: &[f64], prior: &[f32]) -> Option<Vec<f32>> {
    if sum.len() != prior.len() {
        return None;
    }
    let mixed: Vec<f64> = sum
        .iter()
        .zip(prior)
        .map(|(s, p)| s + f64::from(COMMON_PRIOR_RECORDS) * f64::from(*p))
        .collect();
    let norm = mixed.iter().map(|x| x * x).sum::<f64>().sqrt();
    (norm > 0.0 && norm.is_finite()).then(|| mixed.iter().map(|x| (x / norm) as f32).collect())
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn unit(v: &[f32]) -> Option<Vec<f32>> {
    let norm = dot(v, v).sqrt();
    (norm > 0.0 && norm.is_finite()).then(|| v.iter().map(|x| x / norm).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_a_shared_direction_separates_what_differs() {
        // Two unit vectors sharing a large component along e0 (0.9 each), one differing along
        // e1 and the other along e2: their cosine is 0.81, all of it from what they share.
        let s = 0.9_f64;
        let cosine = s * s;
        assert!(cosine > 0.8);
        assert!(without_common(cosine, s, s).abs() < 1e-9);
        // The same vector stays identical.
        assert!((without_common(1.0, s, s) - 1.0).abs() < 1e-9);
        // Along the direction itself, nothing is left.
        assert_eq!(without_common(1.0, 1.0, 1.0), 0.0);
    }

    #[test]
    fn calibration_finds_the_shared_component_and_the_unrelated_scale() {
        // Four vectors: a shared e0 part plus one distinct axis each.
        let vectors: Vec<Vec<f32>> = (1..5)
            .map(|axis| {
                (0..5)
                    .map(|i| {
                        if i == 0 {
                            0.8
                        } else if i == axis {
                            0.6
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        let calibration = calibrate(&vectors).unwrap();
        assert!((calibration.common[0] - 0.8).abs() < 1e-6);
        // Once the shared part is gone, what is left of distinct axes points slightly apart
        // (as centred vectors do), all pairs alike.
        let (mean, std) = calibration.cosine_prior;
        assert!(mean < 0.0 && mean > -0.5, "{mean}");
        assert!(std < 0.01, "{std}");
        assert!(calibrate(&vectors[..1]).is_none());
    }

    #[test]
    fn a_small_notebook_leans_on_the_prior() {
        let prior = [1.0, 0.0];
        // One record along e1 against 30 pseudo-records along e0.
        let p = common_direction(&[0.0, 1.0], &prior).unwrap();
        assert!(p[0] > 0.99);
        let p = common_direction(&[0.0, 3000.0], &prior).unwrap();
        assert!(p[1] > 0.99);
    }
}
