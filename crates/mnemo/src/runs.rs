//! Runs: the working memory of one task (goal, plan steps, evidence, tool-result
//! references), kept in the store until the run is ended.

use std::cell::RefCell;

use mnemo_core::error::InvalidInput;
use mnemo_core::ports::PortError;
use mnemo_core::run::{Run, RunChange};
use mnemo_core::{ErrorKind, UserRef};

use crate::{Error, Mnemo, Result};

impl Mnemo {
    /// Starts a run for `goal` and returns it (with its new id).
    pub fn start_run(&self, who: &UserRef, goal: &str) -> Result<Run> {
        let run = Run::start(uuid::Uuid::now_v7().to_string(), goal, self.now())?;
        self.store.create_run(who, &run, &self.actor)?;
        Ok(run)
    }

    /// One of the user's runs.
    pub fn run(&self, who: &UserRef, id: &str) -> Result<Run> {
        self.store.run(who, id)?.ok_or_else(|| Error::RunNotFound(id.to_owned()))
    }

    /// The user's runs, oldest first.
    pub fn runs(&self, who: &UserRef) -> Result<Vec<Run>> {
        Ok(self.store.runs(who)?)
    }

    /// Applies one change to a run atomically and returns the run as it now stands; a
    /// change that breaks the run's rules is an error and changes nothing.
    pub fn change_run(&self, who: &UserRef, id: &str, change: &RunChange) -> Result<Run> {
        let now = self.now();
        let invalid: RefCell<Option<InvalidInput>> = RefCell::new(None);
        let missing_step: RefCell<Option<(u32, usize)>> = RefCell::new(None);
        let apply = |run: &mut Run| -> std::result::Result<(), PortError> {
            if let RunChange::SetStatus { number, .. } = change
                && (*number == 0 || *number as usize > run.steps.len())
            {
                *missing_step.borrow_mut() = Some((*number, run.steps.len()));
                return Err(PortError::new(ErrorKind::NotFound, "no such step"));
            }
            run.apply(change, now).map_err(|e| {
                let error = PortError::new(ErrorKind::InvalidInput, format!("invalid {e}"));
                *invalid.borrow_mut() = Some(e);
                error
            })
        };
        match self.store.update_run(who, id, &apply) {
            Ok(Some(run)) => Ok(run),
            Ok(None) => Err(Error::RunNotFound(id.to_owned())),
            Err(e) => Err(match (missing_step.into_inner(), invalid.into_inner()) {
                (Some((number, count)), _) => {
                    Error::StepNotFound { run: id.to_owned(), number, count }
                }
                (None, Some(invalid)) => Error::InvalidInput(invalid),
                (None, None) => Error::Port(e),
            }),
        }
    }

    /// Ends a run: its state is deleted, leaving one audit entry. Returns its last state.
    pub fn end_run(&self, who: &UserRef, id: &str) -> Result<Run> {
        self.store
            .end_run(who, id, self.now(), &self.actor)?
            .ok_or_else(|| Error::RunNotFound(id.to_owned()))
    }
}
