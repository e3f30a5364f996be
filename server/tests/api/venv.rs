//! Test fakes from PyPI (localstripe, moto), installed by `make test-deps` into $CHAT_VENV
//! (default /var/tmp/chat-venv) and started once per test run on a free port. Without
//! one, its tests are skipped with a note, except under CI, where they fail.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// Starts `$CHAT_VENV/bin/<tool> <args>` (`$1` in `args` is the port) and answers its base
/// URL once `probe` answers a success; `None` when the tool is not installed.
pub async fn serve(tool: &str, version: &str, args: &str, probe: &str) -> Option<String> {
    let venv = std::env::var("CHAT_VENV").unwrap_or_else(|_| "/var/tmp/chat-venv".into());
    let binary = PathBuf::from(venv).join("bin").join(tool);
    if !binary.exists() {
        let hint = format!(
            "{} is missing: run `make test-deps` (it installs {tool} {version})",
            binary.display()
        );
        if std::env::var_os("CI").is_some() {
            panic!("{hint}");
        }
        eprintln!("{hint}");
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // A watchdog shell ends the tool when this test process is gone, since nothing
    // drops a static.
    let script = format!(
        r#""$0" {args} >/dev/null 2>&1 & tool=$!
        while kill -0 "$2" 2>/dev/null; do sleep 1; done; kill "$tool""#
    );
    // Never waited for: it runs as long as this test process, and its watchdog ends it.
    #[allow(clippy::zombie_processes)]
    std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(&binary)
        .arg(port.to_string())
        .arg(std::process::id().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {tool}: {e}"));
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    for _ in 0..150 {
        let up = client.get(format!("{base}{probe}")).send().await;
        if up.is_ok_and(|r| r.status().is_success()) {
            return Some(base);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{tool} did not start on port {port}");
}
