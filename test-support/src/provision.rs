//! Real outside programs the tests need, installed on first use from the package registries, so
//! that `cargo test --workspace` passes on a fresh clone without a setup step and no test passes
//! by skipping what it cannot start.
//!
//! Each is looked for first where CI puts it (an environment variable), then in the test
//! target's own directory, where the first test that needs it installs it once. When it cannot
//! be installed, the test fails with the command that installs it by hand.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// A Python interpreter with the PyPI package `mcp` (pinned) installed: `AGENT_MCP_PYTHON` if
/// set, else a virtual environment made once in `target_tmp` (pass `env!("CARGO_TARGET_TMPDIR")`).
pub fn python_with_mcp(target_tmp: &str) -> PathBuf {
    if let Some(python) = std::env::var_os("AGENT_MCP_PYTHON") {
        return PathBuf::from(python);
    }
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let made = PYTHON.get_or_init(|| {
        install(Path::new(target_tmp), "python-mcp", "bin/python", |dir| {
            run(Command::new("python3").args(["-m", "venv"]).arg(dir))?;
            run(Command::new(dir.join("bin/pip")).args(["install", "--quiet", "mcp==2.3.0"]))
        })
    });
    match made {
        Ok(python) => python.clone(),
        Err(why) => panic!(
            "this test needs Python with the `mcp` package and could not install it ({why}). \
             Install it by hand: python3 -m venv /tmp/mcpvenv && /tmp/mcpvenv/bin/pip install \
             mcp==2.3.0, then set AGENT_MCP_PYTHON=/tmp/mcpvenv/bin/python"
        ),
    }
}

/// A Python interpreter with the PyPI package `a2a-sdk` (pinned, with its `http-server` extra)
/// and `uvicorn` (to serve an a2a-sdk agent) installed: `AGENT_A2A_PYTHON` if set, else a
/// virtual environment made once in `target_tmp` (pass `env!("CARGO_TARGET_TMPDIR")`).
pub fn python_with_a2a(target_tmp: &str) -> PathBuf {
    if let Some(python) = std::env::var_os("AGENT_A2A_PYTHON") {
        return PathBuf::from(python);
    }
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let made = PYTHON.get_or_init(|| {
        install(Path::new(target_tmp), "python-a2a", "bin/python", |dir| {
            run(Command::new("python3").args(["-m", "venv"]).arg(dir))?;
            run(Command::new(dir.join("bin/pip"))
                .args(["install", "--quiet"])
                .args(A2A_PACKAGES))
        })
    });
    match made {
        Ok(python) => python.clone(),
        Err(why) => panic!(
            "this test needs Python with the `a2a-sdk` package and could not install it ({why}). \
             Install it by hand: python3 -m venv /tmp/a2avenv && /tmp/a2avenv/bin/pip install \
             'a2a-sdk[http-server]==1.3.0' uvicorn==0.55.0, then set \
             AGENT_A2A_PYTHON=/tmp/a2avenv/bin/python"
        ),
    }
}

/// What [`python_with_selenium`] installs (and `.ci/run` too): Selenium, which drives the
/// headless Chromium the console's tests show the page in.
pub const SELENIUM_PACKAGE: &str = "selenium==4.27.1";

/// A Python interpreter with the PyPI package `selenium` ([`SELENIUM_PACKAGE`]) installed:
/// `AGENT_SELENIUM_PYTHON` if set, else a virtual environment made once in `target_tmp` (pass
/// `env!("CARGO_TARGET_TMPDIR")`). Chromium and its driver come from the system (Debian's
/// `chromium` and `chromium-driver`); the test that starts them says how to install them.
pub fn python_with_selenium(target_tmp: &str) -> PathBuf {
    if let Some(python) = std::env::var_os("AGENT_SELENIUM_PYTHON") {
        return PathBuf::from(python);
    }
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let made = PYTHON.get_or_init(|| {
        install(
            Path::new(target_tmp),
            "python-selenium",
            "bin/python",
            |dir| {
                run(Command::new("python3").args(["-m", "venv"]).arg(dir))?;
                run(Command::new(dir.join("bin/pip")).args([
                    "install",
                    "--quiet",
                    SELENIUM_PACKAGE,
                ]))
            },
        )
    });
    match made {
        Ok(python) => python.clone(),
        Err(why) => panic!(
            "this test needs Python with the `selenium` package and could not install it \
             ({why}). Install it by hand: python3 -m venv /tmp/selvenv && /tmp/selvenv/bin/pip \
             install {SELENIUM_PACKAGE}, then set AGENT_SELENIUM_PYTHON=/tmp/selvenv/bin/python"
        ),
    }
}

/// What [`python_with_a2a`] installs (and `.ci/run` too).
pub const A2A_PACKAGES: [&str; 2] = ["a2a-sdk[http-server]==1.3.0", "uvicorn==0.55.0"];

/// What [`phoenix`] installs (and `.ci/run` too): Arize Phoenix, an OpenTelemetry receiver with
/// a REST API to read spans back (agent-otel's tests).
pub const PHOENIX_PACKAGE: &str = "arize-phoenix==20.26.1";

/// The virtual environment [`phoenix`] installs [`PHOENIX_PACKAGE`] into, the one `.ci/run` makes.
pub const PHOENIX_VENV: &str = "/tmp/agent-otel-venv";

/// The `phoenix` program of the PyPI package `arize-phoenix` (pinned): `AGENT_PHOENIX_BIN` if set
/// (CI sets it), else the one in [`PHOENIX_VENV`], made or brought to the pinned version once per
/// test process (`pip install` does nothing when it is there already).
pub fn phoenix() -> PathBuf {
    if let Some(program) = std::env::var_os("AGENT_PHOENIX_BIN") {
        return PathBuf::from(program);
    }
    static PHOENIX: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let made = PHOENIX.get_or_init(|| {
        let venv = Path::new(PHOENIX_VENV);
        if !venv.join("bin/pip").exists() {
            run(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
        }
        run(Command::new(venv.join("bin/pip")).args(["install", "--quiet", PHOENIX_PACKAGE]))?;
        let program = venv.join("bin/phoenix");
        if program.exists() {
            Ok(program)
        } else {
            Err(format!(
                "{} is missing after the install",
                program.display()
            ))
        }
    });
    match made {
        Ok(program) => program.clone(),
        Err(why) => panic!(
            "this test needs Arize Phoenix and could not install it ({why}). Install it by hand: \
             python3 -m venv {PHOENIX_VENV} && {PHOENIX_VENV}/bin/pip install {PHOENIX_PACKAGE}, \
             then set AGENT_PHOENIX_BIN={PHOENIX_VENV}/bin/phoenix"
        ),
    }
}

/// A program from an npm package: `env` if set, else `package` installed once with npm into
/// `target_tmp`, and `bin` (a path inside its `node_modules`) returned.
pub fn npm_program(target_tmp: &str, env: &str, package: &str, bin: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(env) {
        return PathBuf::from(path);
    }
    static INSTALLED: Mutex<Vec<(String, Result<PathBuf, String>)>> = Mutex::new(Vec::new());
    let mut installed = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, made)) = installed.iter().find(|(p, _)| p == package) {
        return made
            .clone()
            .unwrap_or_else(|why| npm_failed(package, env, &why));
    }
    let folder = format!("npm-{}", package.replace(['@', '/'], "_"));
    let made = install(
        Path::new(target_tmp),
        &folder,
        &format!("node_modules/{bin}"),
        |dir| {
            run(Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--loglevel=error",
                ])
                .arg("--prefix")
                .arg(dir)
                .arg(package)
                .env("SCARF_ANALYTICS", "false"))
        },
    );
    installed.push((package.to_owned(), made.clone()));
    made.unwrap_or_else(|why| npm_failed(package, env, &why))
}

fn npm_failed(package: &str, env: &str, why: &str) -> PathBuf {
    panic!(
        "this test needs {package} and could not install it ({why}). Install it by hand: \
         npm install --prefix /tmp/npm {package}, then set {env} to the program inside \
         /tmp/npm/node_modules"
    )
}

/// `target_tmp/name`, made by `make` unless a finished install is there (a marker file, written
/// last, says so: a half-made one is removed and made again); `program` is the path inside it.
/// The tests that need one program live in one test binary, where a lock makes the install
/// happen once.
fn install(
    target_tmp: &Path,
    name: &str,
    program: &str,
    make: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    let dir = target_tmp.join(name);
    let marker = dir.join(".installed");
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        make(&dir)?;
        std::fs::write(&marker, b"").map_err(|e| format!("{}: {e}", marker.display()))?;
    }
    let program = dir.join(program);
    if program.exists() {
        Ok(program)
    } else {
        Err(format!(
            "{} is missing after the install",
            program.display()
        ))
    }
}

fn run(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    match command.output() {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!(
            "{shown} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(error) => Err(format!("{shown} could not start: {error}")),
    }
}
