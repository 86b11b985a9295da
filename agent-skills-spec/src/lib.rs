//! The Agent Skills format (stub: being written).
