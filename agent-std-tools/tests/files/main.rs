//! The file skills (`read_file`, `write_file`, `list_dir`, `delete_file`) in one test binary:
//! their calls, hostile names, long lines, media, write limits, special files and the sandbox's
//! attack suite. `read_file`'s peak memory (`read_file_bounds.rs`) and deep deletes under a lowered
//! open-file limit (`deep_delete.rs`) keep binaries of their own: each needs its process to
//! itself.

#[path = "../common/mod.rs"]
mod common;

mod files;
mod hostile_names;
mod read_file_lines;
mod read_media;
mod sandbox;
mod special_files;
mod write_bounds;
