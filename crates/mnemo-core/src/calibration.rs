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

/// Questions and the statement that answers each, as people ask and state things (a third
/// asked by an agent about its user, a third in the person's own words, a third as
/// keywords), on subjects of their own: how far an embedder places a statement nearer the
/// question it answers than the other statements measures how much its cosine can be
/// trusted for ranking ([`Calibration::answer_separation`]).
pub const CALIBRATION_QUESTIONS: [(&str, &str); 36] = [
    ("What instrument does the user practise?", "I've been taking violin lessons on Tuesdays."),
    ("How does the user get to the office?", "I cycle to the office along the canal path."),
    ("Which football club does the user support?", "I've followed Celtic since I was a kid."),
    (
        "What does the user grow in the garden?",
        "The raised beds are full of courgettes and beans this year.",
    ),
    ("Where is the user going on holiday?", "We fly out to Crete on the twelfth for a week."),
    ("What is the user's sister called?", "My sister Hannah is a paramedic."),
    ("Which browser does the user prefer?", "I stick with Firefox, Chrome eats all my memory."),
    ("When does the user's lease end?", "The flat contract runs out at the end of March."),
    (
        "What is the user saving money for?",
        "Putting a bit aside every month for a deposit on a house.",
    ),
    ("What does the user eat for breakfast?", "Usually porridge with blueberries before work."),
    ("Is the user a morning person?", "I'm useless before ten, honestly."),
    ("What medication does the user take?", "I take an inhaler twice a day for asthma."),
    (
        "Which podcast do I keep recommending?",
        "Everyone should listen to Hardcore History, it's brilliant.",
    ),
    ("What did I name the dog?", "We called the puppy Biscuit."),
    ("Where did I study?", "I did my degree in chemistry at Glasgow."),
    ("What am I reading right now?", "Halfway through a novel by Ursula Le Guin."),
    ("How long is my commute?", "It takes me about forty minutes each way on the tram."),
    ("What colour did I paint the kitchen?", "The kitchen walls are a pale sage now."),
    ("Who fixes my car?", "A mechanic called Dev on Mill Lane services the Corolla."),
    ("What time do I go to the gym?", "I lift weights at half six before breakfast."),
    ("Which team do I manage at work?", "I lead the payments squad, five engineers."),
    ("What's my favourite board game?", "Nothing beats a long evening of Catan."),
    ("Where does my mum live now?", "Mum retired to a cottage near Whitby."),
    ("What language are my grandparents from?", "My grandparents only spoke Tagalog at home."),
    ("user coffee order", "A flat white with oat milk, every time."),
    ("user shoe size", "I take a size nine in most trainers."),
    ("user vegetarian diet", "I haven't eaten meat for six years."),
    ("user phone model", "Still using an old Pixel, the battery is going."),
    ("user weekend routine", "Saturdays are for the farmers market and a long run."),
    ("user bedtime", "Lights out around eleven on weeknights."),
    ("user partner name", "Sam and I have been together since university."),
    ("user blood type", "The donor card says O negative."),
    ("user noise sensitivity", "Loud restaurants give me a headache."),
    ("user climbing grade", "I can lead 6b outdoors on a good day."),
    ("user wedding date", "We're getting married on the fourth of June."),
    ("user fear of heights", "Ladders and balconies make my legs shake."),
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
    /// The same of their raw cosines (for an embedder with a query encoder, of each
    /// calibration question as a query against the sentences as records): the scale the
    /// relevance gate judges on.
    pub raw_cosine_prior: (f64, f64),
    /// How far, in standard deviations, the embedder places the statement answering each of
    /// [`CALIBRATION_QUESTIONS`] above the other statements (the calibration sentences and
    /// the other answers), on ranking's scale, averaged over the questions; `None` when not
    /// measured.
    pub answer_separation: Option<f64>,
}

/// The calibration of an embedder, from `embed` (its vectors, in order, of the texts it is
/// given): the common direction and cosine scales of [`CALIBRATION_SENTENCES`] and the
/// answer separation of [`CALIBRATION_QUESTIONS`]. `None` when the sentences give fewer than
/// two non-zero vectors.
pub fn calibrate_embedder(embed: impl Fn(&[&str]) -> Vec<Vec<f32>>) -> Option<Calibration> {
    calibrate_embedder_with_queries(&embed, None)
}

/// Vectors of texts, in order.
pub type EmbedFn<'a> = dyn Fn(&[&str]) -> Vec<Vec<f32>> + 'a;

/// [`calibrate_embedder`] for an embedder that may encode queries (`embed_queries`)
/// otherwise than records (`embed`). With a query encoder, the raw cosine scale the gate
/// judges on is that of each calibration question as a query against every calibration
/// sentence (statements on other subjects) as a record, and the answer separation is
/// measured from the questions as queries; the common direction and ranking's scale stay
/// the records'. The query encoder embeds only the questions.
pub fn calibrate_embedder_with_queries(
    embed: &EmbedFn<'_>,
    embed_queries: Option<&EmbedFn<'_>>,
) -> Option<Calibration> {
    let sentences = embed(&CALIBRATION_SENTENCES);
    let questions: Vec<&str> = CALIBRATION_QUESTIONS.iter().map(|(q, _)| *q).collect();
    let answers: Vec<&str> = CALIBRATION_QUESTIONS.iter().map(|(_, a)| *a).collect();
    let queries = embed_queries.unwrap_or(embed);
    let (questions, answers) = (queries(&questions), embed(&answers));
    let mut calibration = calibrate(&sentences)?;
    if embed_queries.is_some() {
        let records: Vec<Vec<f32>> = sentences.iter().filter_map(|v| unit(v)).collect();
        let raw: Vec<f64> = questions
            .iter()
            .filter_map(|q| unit(q))
            .flat_map(|q| {
                records
                    .iter()
                    .filter(|r| r.len() == q.len())
                    .map(|r| f64::from(dot(&q, r)))
                    .collect::<Vec<f64>>()
            })
            .collect();
        if raw.len() >= 2 {
            calibration.raw_cosine_prior = mean_and_std(&raw);
        }
    }
    calibration.answer_separation =
        answer_separation(&calibration.common, &questions, &answers, &sentences);
    Some(calibration)
}

/// The mean over questions of the standard score of the question's own answer (the answer
/// at the same index) among every statement (`answers` and `others`), by cosine without the
/// `common` direction; `None` when no question and its answer can be compared.
pub fn answer_separation(
    common: &[f32],
    questions: &[Vec<f32>],
    answers: &[Vec<f32>],
    others: &[Vec<f32>],
) -> Option<f64> {
    let direction = unit(common)?;
    let ranked = |a: &[f32], b: &[f32]| -> Option<f64> {
        let (a, b) = (unit(a)?, unit(b)?);
        if a.len() != direction.len() || b.len() != direction.len() {
            return None;
        }
        let along = |v: &[f32]| f64::from(dot(v, &direction));
        Some(without_common(f64::from(dot(&a, &b)), along(&a), along(&b)))
    };
    let statements: Vec<&Vec<f32>> = answers.iter().chain(others).collect();
    let scores: Vec<f64> = questions
        .iter()
        .zip(answers)
        .enumerate()
        .filter_map(|(i, (question, answer))| {
            let own = ranked(question, answer)?;
            let rest: Vec<f64> = statements
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(_, s)| ranked(question, s))
                .collect();
            (rest.len() >= 2).then(|| {
                let (mean, std) = mean_and_std(&rest);
                (own - mean) / std
            })
        })
        .collect();
    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
}

/// The calibration of an embedder from its vectors of [`CALIBRATION_SENTENCES`] (any
/// sentences of unrelated subjects), without an answer separation; `None` for fewer than
/// two non-zero vectors.
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
        answer_separation: None,
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
/// direction itself has nothing left to compare: 0. (Inlined: a search computes it for every
/// record of a notebook, with one `a_along` throughout.)
#[inline]
pub fn without_common(cosine: f64, a_along: f64, b_along: f64) -> f64 {
    let rest = (1.0 - a_along * a_along) * (1.0 - b_along * b_along);
    // Computed either way and the degenerate case selected after, without a branch, so a
    // loop over many records compiles to vector code.
    let apart = ((cosine - a_along * b_along) / rest.sqrt()).clamp(-1.0, 1.0);
    if rest < 1e-6 { 0.0 } else { apart }
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

/// The magic that opens a calibration's bytes ([`Calibration::to_bytes`]).
const CALIBRATION_MAGIC: &[u8; 4] = b"CAL1";

/// Why bytes are not a calibration ([`Calibration::from_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("calibration bytes: {0}")]
pub struct CalibrationBytesError(&'static str);

impl Calibration {
    /// The calibration as bytes, for an embedder that ships its calibration instead of
    /// computing it at load: the magic `CAL1`, the common direction's length (u32 LE) and
    /// values (f32 LE), then the cosine prior, the raw cosine prior and the answer separation
    /// (f64 LE; NaN for none).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.common.len() * 4 + 5 * 8);
        out.extend_from_slice(CALIBRATION_MAGIC);
        out.extend_from_slice(&(self.common.len() as u32).to_le_bytes());
        for x in &self.common {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let (mean, std) = self.cosine_prior;
        let (raw_mean, raw_std) = self.raw_cosine_prior;
        let separation = self.answer_separation.unwrap_or(f64::NAN);
        for x in [mean, std, raw_mean, raw_std, separation] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    /// The calibration [`Calibration::to_bytes`] wrote.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CalibrationBytesError> {
        let rest =
            bytes.strip_prefix(CALIBRATION_MAGIC).ok_or(CalibrationBytesError("bad magic"))?;
        let (length, rest) =
            rest.split_first_chunk::<4>().ok_or(CalibrationBytesError("no length"))?;
        let dims = u32::from_le_bytes(*length) as usize;
        if rest.len() != dims * 4 + 5 * 8 {
            return Err(CalibrationBytesError("size does not match its length"));
        }
        let (common, scales) = rest.split_at(dims * 4);
        let common =
            common.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let scales: Vec<f64> = scales
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .collect();
        Ok(Self {
            common,
            cosine_prior: (scales[0], scales[1]),
            raw_cosine_prior: (scales[2], scales[3]),
            answer_separation: (!scales[4].is_nan()).then_some(scales[4]),
        })
    }

    /// Whether `other` is this calibration within `tolerance` in every value (one encoder's
    /// vectors differ in their last bits between the vector code and the plain loop).
    pub fn agrees_with(&self, other: &Self, tolerance: f64) -> bool {
        let close = |a: f64, b: f64| (a - b).abs() <= tolerance;
        self.common.len() == other.common.len()
            && self
                .common
                .iter()
                .zip(&other.common)
                .all(|(a, b)| close(f64::from(*a), f64::from(*b)))
            && close(self.cosine_prior.0, other.cosine_prior.0)
            && close(self.cosine_prior.1, other.cosine_prior.1)
            && close(self.raw_cosine_prior.0, other.raw_cosine_prior.0)
            && close(self.raw_cosine_prior.1, other.raw_cosine_prior.1)
            && match (self.answer_separation, other.answer_separation) {
                (Some(a), Some(b)) => close(a, b),
                (None, None) => true,
                _ => false,
            }
    }
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
    fn a_calibration_round_trips_through_its_bytes_and_bad_bytes_are_refused() {
        let sentences: Vec<Vec<f32>> =
            (0..6).map(|i| (0..8).map(|d| ((i * 7 + d * 3) % 5) as f32 - 1.5).collect()).collect();
        let mut calibration = calibrate(&sentences).unwrap();
        for separation in [Some(2.5), None] {
            calibration.answer_separation = separation;
            let bytes = calibration.to_bytes();
            assert_eq!(Calibration::from_bytes(&bytes).unwrap(), calibration);
            assert!(calibration.agrees_with(&Calibration::from_bytes(&bytes).unwrap(), 0.0));
            assert!(Calibration::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        }
        assert_eq!(
            Calibration::from_bytes(b"CAL0").unwrap_err().to_string(),
            "calibration bytes: bad magic"
        );
        let mut moved = calibration.clone();
        moved.cosine_prior.0 += 0.01;
        assert!(!calibration.agrees_with(&moved, 1e-3) && calibration.agrees_with(&moved, 0.02));
    }

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
    fn answer_separation_is_how_far_each_answer_stands_above_the_other_statements() {
        // Common direction e0; each question points at its answer's own axis.
        let common = [1.0, 0.0, 0.0, 0.0, 0.0];
        let axis = |i: usize, weight: f32| {
            let mut v = vec![0.5_f32, 0.0, 0.0, 0.0, 0.0];
            v[i] = weight;
            v
        };
        let questions = [axis(1, 1.0), axis(2, 1.0)];
        let answers = [axis(1, 1.0), axis(2, 1.0)];
        let others = [axis(3, 1.0), axis(4, 1.0), axis(3, 0.5)];
        let apart = answer_separation(&common, &questions, &answers, &others).unwrap();
        assert!(apart > 1.5, "{apart}");
        // Questions that point nowhere in particular tell their answers apart from nothing.
        let vague = [axis(3, 0.0), axis(3, 0.0)];
        let none = answer_separation(&common, &vague, &answers, &others).unwrap();
        assert!(none.abs() < 1e-9, "{none}");
        // Vectors of another size cannot be compared.
        assert!(answer_separation(&common, &[vec![1.0; 3]], &[vec![1.0; 3]], &others).is_none());
    }

    #[test]
    fn every_calibration_question_has_a_distinct_question_and_answer() {
        let mut seen = std::collections::HashSet::new();
        for (question, answer) in CALIBRATION_QUESTIONS {
            assert!(!question.is_empty() && !answer.is_empty() && question != answer);
            assert!(seen.insert(question) && seen.insert(answer), "{question} / {answer}");
        }
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
