//! The blended retrieval score of SPEC §4:
//! `score = w_rel * relevance + w_rec * exp(-λ * Δt_days) + w_imp * importance`,
//! with `λ = ln 2 / half_life_days`.

/// Weights and half-life of the blended score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreWeights {
    /// Weight of relevance.
    pub relevance: f64,
    /// Weight of recency.
    pub recency: f64,
    /// Weight of importance.
    pub importance: f64,
    /// Days after which recency halves.
    pub half_life_days: f64,
}

impl Default for ScoreWeights {
    fn default() -> Self {
        Self { relevance: 0.6, recency: 0.2, importance: 0.2, half_life_days: 30.0 }
    }
}

/// The parts of one blended score, kept for `--explain`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreParts {
    /// Relevance, 0..1.
    pub relevance: f64,
    /// Recency factor `exp(-λ Δt)`, 0..1.
    pub recency: f64,
    /// Importance, 0..1.
    pub importance: f64,
    /// The weighted sum.
    pub score: f64,
}

impl ScoreWeights {
    /// Blends relevance, age in days (since last update or use) and importance.
    pub fn blend(&self, relevance: f64, age_days: f64, importance: f64) -> ScoreParts {
        let lambda = std::f64::consts::LN_2 / self.half_life_days;
        let recency = (-lambda * age_days.max(0.0)).exp();
        let score =
            self.relevance * relevance + self.recency * recency + self.importance * importance;
        ScoreParts { relevance, recency, importance, score }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC §4's worked example must reproduce exactly.
    #[test]
    fn spec_worked_example() {
        let w = ScoreWeights::default();
        let a = w.blend(0.82, 2.0, 0.3).score;
        let b = w.blend(0.75, 0.5, 0.9).score;
        let c = w.blend(0.88, 120.0, 0.2).score;
        assert_eq!(format!("{a:.3} {b:.3} {c:.3}"), "0.743 0.828 0.581");
        let mut ranked = [("A", a), ("B", b), ("C", c)];
        ranked.sort_by(|x, y| y.1.total_cmp(&x.1));
        assert_eq!(ranked.map(|r| r.0), ["B", "A", "C"]);
    }

    #[test]
    fn recency_halves_at_half_life() {
        let w = ScoreWeights::default();
        assert!((w.blend(0.0, 30.0, 0.0).recency - 0.5).abs() < 1e-12);
        assert_eq!(w.blend(0.0, -5.0, 0.0).recency, 1.0);
    }
}
