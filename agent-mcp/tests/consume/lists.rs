//! A remote server's resources and prompts.
