//! Arize Phoenix as a real OTLP receiver for tests: `phoenix serve` ([`crate::provision::phoenix`])
//! started once per test binary on free loopback ports with a working directory of its own under
//! the test target's directory, and its REST API (`GET /v1/projects/{project}/spans/otlpv1`) to
//! read the spans back. Phoenix files spans under the resource attribute
//! `openinference.project.name`: give each scenario a project of its own.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The receiver this test binary shares; each scenario exports into a project of its own.
pub struct Phoenix {
    http_port: u16,
    grpc_port: u16,
}

/// How long Phoenix may take to answer `/healthz` (its first start migrates a fresh database).
const READY_WITHIN: Duration = Duration::from_secs(180);

/// How long the spans of a scenario may take to be readable after its process ended (Phoenix
/// ingests through a queue).
const SPANS_WITHIN: Duration = Duration::from_secs(60);

/// The shared receiver, started on first use (it fails the test, with the end of Phoenix's log,
/// when Phoenix does not come up). It is stopped when the test process ends:
/// `PR_SET_PDEATHSIG` kills it when the thread that started it ends, and that thread lives as
/// long as the process.
/// `target_tmp` is the test's `env!("CARGO_TARGET_TMPDIR")`, where Phoenix keeps its database.
pub fn phoenix(target_tmp: &str) -> &'static Phoenix {
    static PHOENIX: OnceLock<Phoenix> = OnceLock::new();
    PHOENIX.get_or_init(|| start(target_tmp))
}

fn start(target_tmp: &str) -> Phoenix {
    let program = crate::provision::phoenix();
    let http_port = free_port();
    let grpc_port = free_port();
    // A fresh database for each test process (no project of an earlier run is seen), in a
    // folder named by its pid; those of processes that are gone are removed.
    let all = PathBuf::from(target_tmp).join("phoenix");
    if let Ok(entries) = std::fs::read_dir(&all) {
        for entry in entries.flatten() {
            let pid = entry.file_name().to_string_lossy().into_owned();
            if !std::path::Path::new("/proc").join(&pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let work = all.join(std::process::id().to_string());
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let log = work.join("phoenix.log");
    let (started, ready) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("phoenix-owner".into())
        .spawn({
            let log = log.clone();
            move || {
                let out = std::fs::File::create(&log).unwrap();
                let mut command = Command::new(&program);
                command
                    .arg("serve")
                    .env("PHOENIX_HOST", "127.0.0.1")
                    .env("PHOENIX_PORT", http_port.to_string())
                    .env("PHOENIX_GRPC_PORT", grpc_port.to_string())
                    .env("PHOENIX_WORKING_DIR", &work)
                    .env("PHOENIX_TELEMETRY_ENABLED", "false")
                    .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
                    .stdin(Stdio::null())
                    .stdout(out.try_clone().unwrap())
                    .stderr(out);
                for (name, _) in std::env::vars() {
                    if name.starts_with("OTEL_") {
                        command.env_remove(name);
                    }
                }
                // SAFETY: prctl is async-signal-safe; it only sets this child's death signal.
                unsafe {
                    use std::os::unix::process::CommandExt;
                    command.pre_exec(|| {
                        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == 0 {
                            Ok(())
                        } else {
                            Err(std::io::Error::last_os_error())
                        }
                    });
                }
                let child = command.spawn();
                let failed = child.is_err();
                started
                    .send(child.map(|c| c.id()).map_err(|e| e.to_string()))
                    .unwrap();
                if !failed {
                    loop {
                        std::thread::park();
                    }
                }
            }
        })
        .unwrap();
    let pid = ready
        .recv()
        .unwrap()
        .unwrap_or_else(|e| panic!("phoenix serve could not start: {e}"));
    let phoenix = Phoenix {
        http_port,
        grpc_port,
    };
    let deadline = Instant::now() + READY_WITHIN;
    loop {
        if get(&format!("{}/healthz", phoenix.http_endpoint()))
            .is_ok_and(|(status, _)| status == 200)
        {
            return phoenix;
        }
        let alive = std::path::Path::new(&format!("/proc/{pid}")).exists();
        if !alive || Instant::now() > deadline {
            let mut text = String::new();
            let _ = std::fs::File::open(&log).map(|mut f| f.read_to_string(&mut text));
            let tail: String = text
                .chars()
                .rev()
                .take(4000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            panic!(
                "phoenix serve (pid {pid}, alive: {alive}) did not answer /healthz within \
                 {READY_WITHIN:?}; its log ends:\n{tail}"
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

impl Phoenix {
    /// Its OTLP/HTTP base URL (spans go to `/v1/traces` under it).
    pub fn http_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.http_port)
    }

    /// Its OTLP/gRPC URL.
    pub fn grpc_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc_port)
    }

    /// The spans of `project` once there are at least `at_least` of them, read through the REST
    /// API; fails after 60 s with what there was.
    pub fn spans(&self, project: &str, at_least: usize) -> Vec<Span> {
        let url = format!(
            "{}/v1/projects/{project}/spans/otlpv1?limit=1000",
            self.http_endpoint()
        );
        let deadline = Instant::now() + SPANS_WITHIN;
        loop {
            let last = get(&url);
            if let Ok((200, body)) = &last {
                let spans: Vec<Span> = body["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .cloned()
                    .map(Span)
                    .collect();
                if spans.len() >= at_least {
                    return spans;
                }
            }
            assert!(
                Instant::now() < deadline,
                "Phoenix's project {project} did not get {at_least} spans within \
                 {SPANS_WITHIN:?}; the last answer: {last:?}"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

/// A span as Phoenix's OTLP JSON gives it back.
#[derive(Debug, Clone)]
pub struct Span(pub Value);

impl Span {
    /// Its name.
    pub fn name(&self) -> &str {
        self.0["name"].as_str().unwrap()
    }

    /// Its trace id, 32 hex digits.
    pub fn trace_id(&self) -> &str {
        self.0["trace_id"].as_str().unwrap()
    }

    /// Its span id, 16 hex digits.
    pub fn span_id(&self) -> &str {
        self.0["span_id"].as_str().unwrap()
    }

    /// Its parent's span id; `None` for a root.
    pub fn parent_id(&self) -> Option<&str> {
        self.0["parent_span_id"].as_str().filter(|p| !p.is_empty())
    }

    /// The attribute `key`'s value, whatever its type, as OTLP JSON (`{"string_value": …}`).
    fn value(&self, key: &str) -> Option<&Value> {
        self.0["attributes"]
            .as_array()?
            .iter()
            .find(|kv| kv["key"] == key)
            .map(|kv| &kv["value"])
    }

    /// A string attribute.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.value(key)?["string_value"].as_str()
    }

    /// An integer attribute (OTLP JSON writes 64-bit integers as strings, or as numbers).
    pub fn int(&self, key: &str) -> Option<i64> {
        let value = &self.value(key)?["int_value"];
        value
            .as_i64()
            .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
    }

    /// A floating-point attribute.
    pub fn float(&self, key: &str) -> Option<f64> {
        self.value(key)?["double_value"].as_f64()
    }

    /// A string array attribute.
    pub fn strings(&self, key: &str) -> Option<Vec<&str>> {
        let values = self.value(key)?["array_value"]["values"].as_array()?;
        values.iter().map(|v| v["string_value"].as_str()).collect()
    }

    /// Every attribute and event of the span as text, to look for what must not be there.
    pub fn everything(&self) -> String {
        self.0.to_string()
    }
}

/// `GET url`: its status and JSON body.
fn get(url: &str) -> Result<(u16, Value), String> {
    let client = reqwest::blocking::Client::builder()
        .use_preconfigured_tls(agent_tls::tls_config()?)
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| e.to_string())?;
    let response = client.get(url).send().map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let text = response.text().map_err(|e| e.to_string())?;
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, body))
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
