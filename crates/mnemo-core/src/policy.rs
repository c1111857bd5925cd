//! The policy gate (SPEC §3.3): rules enforced in code that decide whether a candidate may
//! become a memory at all, and with which status. Every refusal or hold carries a reason code.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::record::{Sensitivity, SourceType, Status};

/// Stable, snake_case reason codes attached to every write decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// A new statement, stored.
    New,
    /// A new value for an existing subject + attribute; the old record was superseded.
    NewValue,
    /// The same statement is already stored.
    Duplicate,
    /// A statement nearly identical to a stored one (cosine at or above the threshold).
    NearDuplicate,
    /// Memory is switched off for this user.
    MemoryDisabled,
    /// The session is incognito.
    Incognito,
    /// Content from a tool, document or web page needs the user's confirmation.
    UntrustedSource,
    /// A sensitive category needs the user's explicit consent.
    NeedsConsent,
    /// Sensitive facts are never stored from inference.
    SensitiveInference,
    /// The content holds a secret (key, token, password, card number).
    Secret,
    /// The content reads like an instruction; a poisoning suspect held for confirmation.
    InstructionLike,
    /// A less trusted or less confident candidate conflicts with a stored fact.
    ConflictsWithTrusted,
    /// A model proposed deleting a memory; deletions are left to the user.
    ModelDeleteNotApplied,
    /// The user asked to forget this statement; it is not written again unless they re-state
    /// it (see [`crate::ledger`]).
    Forgotten,
    /// A contributor's proposal to a shared space waits for a maintainer's review.
    NeedsReview,
    /// The statement's expiry has already passed: there is nothing to keep.
    Expired,
}

impl ReasonCode {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            ReasonCode::New => "new",
            ReasonCode::NewValue => "new_value",
            ReasonCode::Duplicate => "duplicate",
            ReasonCode::NearDuplicate => "near_duplicate",
            ReasonCode::MemoryDisabled => "memory_disabled",
            ReasonCode::Incognito => "incognito",
            ReasonCode::UntrustedSource => "untrusted_source",
            ReasonCode::NeedsConsent => "needs_consent",
            ReasonCode::SensitiveInference => "sensitive_inference",
            ReasonCode::Secret => "secret",
            ReasonCode::InstructionLike => "instruction_like",
            ReasonCode::ConflictsWithTrusted => "conflicts_with_trusted",
            ReasonCode::ModelDeleteNotApplied => "model_delete_not_applied",
            ReasonCode::Forgotten => "forgotten",
            ReasonCode::NeedsReview => "needs_review",
            ReasonCode::Expired => "expired",
        }
    }
}

impl ReasonCode {
    /// What the code means, in plain words for the person whose memory it is ("held because
    /// it reads like an instruction").
    pub const fn explanation(self) -> &'static str {
        match self {
            ReasonCode::New => "a new statement",
            ReasonCode::NewValue => "a new value that replaced an older one",
            ReasonCode::Duplicate => "the same statement is already remembered",
            ReasonCode::NearDuplicate => "an almost identical statement is already remembered",
            ReasonCode::MemoryDisabled => "memory is switched off",
            ReasonCode::Incognito => "the conversation is incognito",
            ReasonCode::UntrustedSource => {
                "it came from a tool, a document or a web page, not from the user"
            }
            ReasonCode::NeedsConsent => {
                "it touches a sensitive topic and the user has not consented"
            }
            ReasonCode::SensitiveInference => "sensitive facts are never kept from a guess",
            ReasonCode::Secret => "it holds a secret such as a password, key or card number",
            ReasonCode::InstructionLike => "it reads like an instruction to the assistant",
            ReasonCode::ConflictsWithTrusted => {
                "it contradicts something the user said, from a less trusted source"
            }
            ReasonCode::ModelDeleteNotApplied => "deleting memories is left to the user",
            ReasonCode::Forgotten => {
                "the user asked to forget it; it is kept again only if they say it again"
            }
            ReasonCode::NeedsReview => {
                "a proposal to a shared space waits for a maintainer's review"
            }
            ReasonCode::Expired => "its expiry had already passed",
        }
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A user's memory settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UserSettings {
    /// When false, nothing is read from or written to the user's memory.
    pub memory_enabled: bool,
}

impl Default for UserSettings {
    fn default() -> Self {
        Self { memory_enabled: true }
    }
}

/// What the gate lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateVerdict {
    /// May be stored as an active record (subject to conflict rules).
    Allow,
    /// May be stored only as `pending`, awaiting the user.
    Hold(ReasonCode),
    /// Must not be stored.
    Refuse(ReasonCode),
}

impl GateVerdict {
    /// The record status a candidate would get, if stored at all.
    pub fn status(self) -> Option<Status> {
        match self {
            GateVerdict::Allow => Some(Status::Active),
            GateVerdict::Hold(_) => Some(Status::Pending),
            GateVerdict::Refuse(_) => None,
        }
    }
}

/// The facts about a candidate the gate looks at.
#[derive(Debug, Clone, Copy)]
pub struct GateInput {
    /// The user's settings, read inside the write transaction.
    pub settings: UserSettings,
    /// Where the content came from.
    pub source: SourceType,
    /// Whether it falls in a sensitive category.
    pub sensitivity: Sensitivity,
    /// Whether the user consented to storing it.
    pub has_consent: bool,
    /// Whether the content holds a secret.
    pub secret: bool,
    /// Whether the content reads like an instruction that moves data or overrides rules.
    pub instruction_like: bool,
}

/// Applies the gate's rules, in order of precedence.
pub fn gate(input: GateInput) -> GateVerdict {
    if !input.settings.memory_enabled {
        return GateVerdict::Refuse(ReasonCode::MemoryDisabled);
    }
    if input.secret {
        return GateVerdict::Refuse(ReasonCode::Secret);
    }
    let sensitive = input.sensitivity == Sensitivity::Sensitive;
    if sensitive && input.source == SourceType::Inferred {
        return GateVerdict::Refuse(ReasonCode::SensitiveInference);
    }
    if !input.source.is_trusted() {
        return GateVerdict::Hold(ReasonCode::UntrustedSource);
    }
    if input.instruction_like {
        return GateVerdict::Hold(ReasonCode::InstructionLike);
    }
    if sensitive && !input.has_consent {
        return GateVerdict::Hold(ReasonCode::NeedsConsent);
    }
    GateVerdict::Allow
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(
        enabled: bool,
        source: SourceType,
        sensitive: bool,
        consent: bool,
        expected: GateVerdict,
    ) {
        check_screened(enabled, source, sensitive, consent, (false, false), expected);
    }

    fn check_screened(
        enabled: bool,
        source: SourceType,
        sensitive: bool,
        consent: bool,
        (secret, instruction_like): (bool, bool),
        expected: GateVerdict,
    ) {
        let input = GateInput {
            settings: UserSettings { memory_enabled: enabled },
            source,
            sensitivity: if sensitive { Sensitivity::Sensitive } else { Sensitivity::Normal },
            has_consent: consent,
            secret,
            instruction_like,
        };
        assert_eq!(gate(input), expected, "{input:?}");
    }

    #[test]
    fn gate_table() {
        use GateVerdict::*;
        use ReasonCode::*;
        use SourceType::*;
        check(true, UserStated, false, false, Allow);
        check(true, UserAction, false, false, Allow);
        check(true, System, false, false, Allow);
        check(true, Inferred, false, false, Allow);
        check(true, Tool, false, false, Hold(UntrustedSource));
        check(true, Document, false, false, Hold(UntrustedSource));
        check(true, Web, false, false, Hold(UntrustedSource));
        check(true, UserStated, true, false, Hold(NeedsConsent));
        check(true, UserStated, true, true, Allow);
        check(true, Inferred, true, true, Refuse(SensitiveInference));
        check(false, UserStated, false, false, Refuse(MemoryDisabled));
        check(false, Tool, true, false, Refuse(MemoryDisabled));
        check_screened(true, UserStated, false, true, (true, false), Refuse(Secret));
        check_screened(true, Tool, true, false, (true, true), Refuse(Secret));
        check_screened(false, UserStated, false, false, (true, false), Refuse(MemoryDisabled));
        check_screened(true, UserStated, false, false, (false, true), Hold(InstructionLike));
        check_screened(true, Web, false, false, (false, true), Hold(UntrustedSource));
        check_screened(true, UserStated, true, false, (false, true), Hold(InstructionLike));
    }
}
