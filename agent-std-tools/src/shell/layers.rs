//! Which layers of the sandbox a command got, as the command's process reports them just before
//! `exec` (one byte on a pipe), and what a missing one leaves open, in words for the result.

/// A set of layers, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Layers(pub u8);

impl Layers {
    /// Landlock: files, TCP and signals confined ([`super::confine`]).
    pub const LANDLOCK: Layers = Layers(1);
    /// User, PID, mount and IPC namespaces of its own ([`super::namespaces`]).
    pub const NAMESPACES: Layers = Layers(1 << 1);
    /// A `/proc` showing only the call's processes.
    pub const OWN_PROC: Layers = Layers(1 << 2);
    /// A limit on the call's processes and threads (a pids cgroup, or `RLIMIT_NPROC` in the
    /// command's user namespace).
    pub const PROCESS_LIMIT: Layers = Layers(1 << 3);
    /// The limit is a pids cgroup, whose `pids.events` tells when it was reached.
    pub const CGROUP: Layers = Layers(1 << 4);
    /// Capabilities cut to [`super::capabilities::KEPT`].
    pub const CAPABILITIES: Layers = Layers(1 << 5);
    /// The seccomp filter ([`super::seccomp`]).
    pub const SECCOMP: Layers = Layers(1 << 6);
    /// The command refused to start: a layer [`super::Confinement::Required`] asks for is missing.
    pub const REFUSED: Layers = Layers(1 << 7);

    /// Every layer a fully confined command has.
    pub const COMPLETE: Layers = Layers(
        Self::LANDLOCK.0
            | Self::NAMESPACES.0
            | Self::OWN_PROC.0
            | Self::PROCESS_LIMIT.0
            | Self::CAPABILITIES.0
            | Self::SECCOMP.0,
    );

    /// Whether every layer of `other` is in `self`.
    pub fn contains(self, other: Layers) -> bool {
        self.0 & other.0 == other.0
    }

    /// `self` with the layers of `other` added.
    pub fn with(self, other: Layers) -> Layers {
        Layers(self.0 | other.0)
    }

    /// What the layers missing from [`Layers::COMPLETE`] leave open, in one sentence (Landlock's
    /// own gaps are said by [`super::confine::gaps`]); `None` when nothing is missing.
    pub fn gaps(self, max_processes: usize) -> Option<String> {
        let mut open = Vec::new();
        if !self.contains(Layers::NAMESPACES) {
            open.push(
                "no namespaces of its own (this kernel or container forbids user namespaces): \
                 it could see the agent's processes in /proc, and only the seccomp filter kept it \
                 from acting on them"
                    .to_owned(),
            );
        } else if !self.contains(Layers::OWN_PROC) {
            open.push(
                "no /proc of its own (a new proc could not be mounted): it could see other \
                 processes' ids and command lines, not touch them"
                    .to_owned(),
            );
        }
        if !self.contains(Layers::PROCESS_LIMIT) {
            open.push(format!(
                "no limit on its processes (the limit of {max_processes} needs a pids cgroup for \
                 a root agent, or a user namespace): a fork bomb could fill the machine until the \
                 time limit"
            ));
        }
        if !self.contains(Layers::CAPABILITIES) {
            open.push(
                "its capabilities could not be cut (no CAP_SETPCAP): a root command kept them"
                    .to_owned(),
            );
        }
        if !self.contains(Layers::SECCOMP) {
            open.push(
                "no seccomp filter (this kernel or architecture has none): terminal input \
                 injection, device files and Unix sockets were not refused"
                    .to_owned(),
            );
        }
        (!open.is_empty()).then(|| format!("the command ran with {}", open.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_complete_set_has_no_gaps_and_each_missing_layer_is_named() {
        assert_eq!(Layers::COMPLETE.gaps(64), None);
        assert_eq!(Layers::COMPLETE.with(Layers::CGROUP).gaps(64), None);
        let without = |layer: Layers| Layers(Layers::COMPLETE.0 & !layer.0).gaps(64).unwrap();
        assert!(without(Layers::NAMESPACES).contains("user namespaces"));
        assert!(without(Layers::OWN_PROC).contains("/proc of its own"));
        assert!(without(Layers::PROCESS_LIMIT).contains("limit of 64"));
        assert!(without(Layers::CAPABILITIES).contains("capabilities"));
        assert!(without(Layers::SECCOMP).contains("seccomp"));
    }
}
