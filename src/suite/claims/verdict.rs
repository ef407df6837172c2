//! The verdict table: a claim's verdict from its direction and its size (see `claims`).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Holds,
    HoldsInDirection,
    /// The direction inside the noise, the whole interval beyond the band.
    NotInSize,
    DoesNotHold,
    NotMeasured,
    Undecidable,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Holds => "holds",
            Outcome::HoldsInDirection => "holds in direction only",
            Outcome::NotInSize => "not the report's size",
            Outcome::DoesNotHold => "does not hold",
            Outcome::NotMeasured => "not measured",
            Outcome::Undecidable => "undecidable here",
        }
    }

    /// Whether the claim was decided (any verdict but not measured / undecidable).
    pub fn decided(self) -> bool {
        self.rank().is_some()
    }

    /// How far a decided verdict goes the claim's way (the other way 0 … holds 3); `None`
    /// for the undecided. The verdict table keeps it monotone: for a ratio on the claimed
    /// side of 1, a tighter interval never gives a lower rank.
    pub fn rank(self) -> Option<u8> {
        match self {
            Outcome::DoesNotHold => Some(0),
            Outcome::NotInSize => Some(1),
            Outcome::HoldsInDirection => Some(2),
            Outcome::Holds => Some(3),
            Outcome::NotMeasured | Outcome::Undecidable => None,
        }
    }

    pub(super) fn class(self) -> &'static str {
        match self {
            Outcome::Holds => "holds",
            Outcome::HoldsInDirection => "direction",
            Outcome::NotInSize | Outcome::DoesNotHold => "fails",
            Outcome::NotMeasured | Outcome::Undecidable => "unmeasured",
        }
    }
}

/// The verdict from the two judgements (docs/reproductions.md, "The verdict table").
/// `a > b` / `a < b`: the other way decides against the claim whatever the size; the claimed
/// way holds when a/b lies inside the band (or there is none) and holds in direction only
/// otherwise; inside the noise, an interval wholly beyond the band still says "not the
/// report's size". `a ~ b`: the direction level is the equivalence test itself.
pub fn verdict(equal: bool, direction: Direction, size: Size) -> Outcome {
    use Direction::{Claimed, Opposite, Unclear};
    if equal {
        return match direction {
            Claimed => Outcome::Holds,
            Opposite => Outcome::DoesNotHold,
            Unclear => Outcome::NotMeasured,
        };
    }
    match (direction, size) {
        (Opposite, _) => Outcome::DoesNotHold,
        (Claimed, Size::Inside | Size::NoBand) => Outcome::Holds,
        (Claimed, Size::Outside | Size::Undetermined) => Outcome::HoldsInDirection,
        (Unclear, Size::Outside) => Outcome::NotInSize,
        (Unclear, _) => Outcome::NotMeasured,
    }
}

/// Which evidence one evaluation reads and at what level: every pass up to `max_pass`, the
/// two-sided `alpha`.
#[derive(Debug, Clone, Copy)]
pub struct Look {
    pub max_pass: u32,
    pub alpha: f64,
}

impl Look {
    /// Every pass at 95 %: a fixed number of passes, judged once.
    pub const ALL: Look = Look {
        max_pass: u32::MAX,
        alpha: 0.05,
    };
}

/// The direction level of a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The claimed way, significant (`a ~ b`: equivalent inside the band).
    Claimed,
    /// The other way, significant (`a ~ b`: significantly outside the band).
    Opposite,
    /// Not decided by the evidence.
    Unclear,
}

/// The size level of a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    /// a/b inside the band.
    Inside,
    /// The whole interval beyond the band.
    Outside,
    /// a/b outside the band, its interval reaching into it.
    Undetermined,
    /// The claim has no figure to size it by.
    NoBand,
}
