//! A server that runs out of file descriptors keeps serving: `accept()` failing with `EMFILE`
//! is retried after a pause, and never ends `serve_http`.
//!
//! A test binary of its own, with a single test, because it lowers this process's
//! `RLIMIT_NOFILE`.

#![cfg(target_os = "linux")]

#[path = "support/raw_http.rs"]
mod raw_http;

use std::fs::File;
use std::time::Duration;

use agent_core::{Registry, SkillError, skill};
use agent_mcp::McpServer;
use raw_http::{HANG_GUARD, initialize_body, post};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Say hello.
#[skill(read_only, register = false)]
async fn hello() -> Result<String, SkillError> {
    Ok("hello".into())
}

/// Sets the soft limit on open file descriptors; returns the one it replaced.
fn set_open_files_limit(soft: u64) -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for getrlimit and setrlimit to read and write.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        let previous = limit.rlim_cur;
        limit.rlim_cur = soft.min(limit.rlim_max);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
        previous
    }
}

#[tokio::test]
async fn running_out_of_file_descriptors_does_not_stop_the_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut registry = Registry::new();
    registry.add(HelloSkill);
    let server = tokio::spawn(
        McpServer::new(registry)
            .without_auth()
            // Far above the descriptors there are, so that accept() is what fails.
            .max_connections(100_000)
            .serve_http_on(listener),
    );

    // Take every free descriptor, then give one back for a client connection: the server's
    // accept() for it has no descriptor left and fails with EMFILE.
    let open = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
    let previous = set_open_files_limit(open + 64);
    let mut hoard: Vec<File> = std::iter::from_fn(|| File::open("/dev/null").ok()).collect();
    assert!(!hoard.is_empty(), "descriptors were taken");
    hoard.pop();
    let mut client = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the kernel completes the connection");
    // The server tries to accept it, and fails, while the descriptors are gone. (The pause is
    // only the opportunity to: nothing below depends on how long it takes.)
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !server.is_finished(),
        "serve_http_on returned: {:?}",
        server.await
    );

    // Descriptors back: the connection that waited is accepted and served.
    drop(hoard);
    set_open_files_limit(previous);
    let exchange = async {
        client
            .write_all(post("127.0.0.1", &[], &initialize_body()).as_bytes())
            .await
            .expect("sends");
        let mut raw = Vec::new();
        let _ = client.read_to_end(&mut raw).await;
        raw_http::parse(&raw)
    };
    let reply = tokio::time::timeout(HANG_GUARD, exchange)
        .await
        .expect("the waiting connection is served");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.message()["result"]["serverInfo"]["name"], "eugene");
    assert!(!server.is_finished(), "the server still runs");
}
