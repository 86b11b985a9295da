//! The work budget of applying one file's chunks ([`Work`]), and why applying them can end
//! without a result ([`Failure`]).

/// Work units every patched file may use, whatever its size.
pub(super) const WORK_FLOOR: u64 = 20_000_000;

/// Work units allowed per line of the file and of the patch, on top of [`WORK_FLOOR`].
pub(super) const WORK_PER_LINE: u64 = 256;

/// How often (in work units) the stop flag is asked.
const CHECK_EVERY: u64 = 1 << 16;

/// Why applying the chunks ended without a result.
pub(crate) enum Failure {
    /// A context line did not match, or the work budget ran out: said for the model.
    Message(String),
    /// The caller's stop flag was set.
    Stopped,
}

/// The work budget of one file and the caller's stop flag.
pub(super) struct Work<'a> {
    pub(super) left: u64,
    pub(super) since_check: u64,
    pub(super) stop: &'a dyn Fn() -> bool,
    pub(super) path: &'a str,
}

impl Work<'_> {
    /// Spends `units` of work: an error past the budget, or once the stop flag is set.
    pub(super) fn spend(&mut self, units: usize) -> Result<(), Failure> {
        let units = units as u64;
        if units > self.left {
            return Err(Failure::Message(format!(
                "`{}`: finding where the changes go would take too much work (the context lines occur at too many places in the file); give fewer, more distinctive context lines, or split the change",
                self.path
            )));
        }
        self.left -= units;
        self.since_check += units;
        if self.since_check >= CHECK_EVERY {
            self.since_check = 0;
            self.check()?;
        }
        Ok(())
    }

    /// Whether the stop flag is set.
    pub(super) fn check(&self) -> Result<(), Failure> {
        if (self.stop)() {
            Err(Failure::Stopped)
        } else {
            Ok(())
        }
    }
}
