//! One tab: a websocket to the server from a chosen 127.x source address, and the frames
//! it reads, parsed only as far as the harness needs.

use std::borrow::Cow;
use std::net::{IpAddr, SocketAddr};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use serde::Deserialize;
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::WebSocketStream;

pub type Ws = WebSocketStream<TcpStream>;

/// Where tabs connect: the servers' websocket URLs (tabs go round-robin) and the local
/// addresses they connect from. Each source address has its own ~28k ephemeral ports, so
/// more sessions than that need more than one.
#[derive(Clone, Debug)]
pub struct Target {
    pub urls: Vec<String>,
    pub sources: Vec<IpAddr>,
}

impl Target {
    /// The `n`-th tab's server and source address.
    pub fn pick(&self, n: usize) -> (&str, IpAddr) {
        let url = &self.urls[n % self.urls.len()];
        let source = self.sources[(n / self.urls.len()) % self.sources.len()];
        (url, source)
    }
}

/// `count` loopback addresses, 127.0.0.1 upwards.
pub fn loopback_sources(count: usize) -> Vec<IpAddr> {
    (1..=count.clamp(1, 250) as u8)
        .map(|i| IpAddr::from([127, 0, 0, i]))
        .collect()
}

/// Enough source addresses for `sessions` connections. A socket bound to a source
/// address before connecting holds its port whatever the server, so each address gives
/// one pool of ~28k ephemeral ports (32768-60999) for all servers together.
pub fn sources_needed(sessions: usize) -> usize {
    const PORTS_PER_SOURCE: usize = 25_000;
    sessions.div_ceil(PORTS_PER_SOURCE).max(1)
}

/// Opens a websocket to `url` from `source`, with the token in the Authorization header
/// (the baseline relay takes any name there), or with no header when `token` is `None`:
/// the web client's way, which sends an `auth` frame first.
pub async fn connect(url: &str, source: IpAddr, token: Option<&str>) -> anyhow::Result<Ws> {
    let mut request = url.into_client_request().context("websocket URL")?;
    if let Some(token) = token {
        request.headers_mut().insert(
            "Authorization",
            format!("Bearer {token}").parse().context("token header")?,
        );
    }
    let uri = request.uri();
    let host = uri.host().context("URL without host")?;
    let port = uri.port_u16().unwrap_or(80);
    let addr: SocketAddr = tokio::net::lookup_host((host, port))
        .await?
        .find(SocketAddr::is_ipv4)
        .context("no IPv4 address for the server")?;
    let socket = TcpSocket::new_v4()?;
    socket
        .bind(SocketAddr::new(source, 0))
        .with_context(|| format!("binding {source}"))?;
    let stream = socket.connect(addr).await.context("connecting")?;
    stream.set_nodelay(true)?;
    // Small buffers: tens of thousands of idle tabs must not cost the harness gigabytes.
    let config = WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0);
    let (ws, _) = tokio_tungstenite::client_async_with_config(request, stream, Some(config))
        .await
        .context("websocket handshake")?;
    Ok(ws)
}

/// Microseconds since the Unix epoch: the clock `emittedAt` is on.
pub fn wall_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// A server frame, with only the fields the harness reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Frame<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(default, borrow)]
    pub client_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub message_id: Option<Cow<'a, str>>,
    #[serde(default)]
    pub seq: Option<u64>,
    #[serde(default, borrow)]
    pub delta: Option<Cow<'a, str>>,
    #[serde(default)]
    pub emitted_at: Option<i64>,
    #[serde(default, borrow)]
    pub code: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub finish_reason: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub message: Option<MessageView<'a>>,
    #[serde(default, borrow)]
    pub conversation: Option<ConversationView<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct MessageView<'a> {
    #[serde(rename = "_id", borrow)]
    pub id: Cow<'a, str>,
    #[serde(borrow)]
    pub role: Cow<'a, str>,
    #[serde(borrow)]
    pub content: Cow<'a, str>,
}

#[derive(Debug, Deserialize)]
pub struct ConversationView<'a> {
    #[serde(rename = "_id", borrow)]
    pub id: Cow<'a, str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_spread_over_servers_then_sources() {
        let target = Target {
            urls: vec!["ws://a".into(), "ws://b".into()],
            sources: loopback_sources(2),
        };
        let picks: Vec<(String, String)> = (0..5)
            .map(|n| {
                let (url, ip) = target.pick(n);
                (url.to_owned(), ip.to_string())
            })
            .collect();
        let expect = [
            ("ws://a", "127.0.0.1"),
            ("ws://b", "127.0.0.1"),
            ("ws://a", "127.0.0.2"),
            ("ws://b", "127.0.0.2"),
            ("ws://a", "127.0.0.1"),
        ];
        for (got, want) in picks.iter().zip(expect) {
            assert_eq!((got.0.as_str(), got.1.as_str()), want);
        }
        assert_eq!(sources_needed(10), 1);
        assert_eq!(sources_needed(25_000), 1);
        assert_eq!(sources_needed(50_000), 2);
        assert_eq!(sources_needed(80_000), 4);
    }

    #[test]
    fn a_users_tabs_land_on_different_servers() {
        // User n's tab t is slot n * tabs + t (scenarios::run_user): with as many servers
        // as tabs, each tab of every user has its own server (the two-instance run).
        for servers in [2, 3] {
            let target = Target {
                urls: (0..servers).map(|s| format!("ws://s{s}")).collect(),
                sources: loopback_sources(1),
            };
            for user in 0..100 {
                let mut urls: Vec<&str> = (0..servers).map(|t| target.pick(user * servers + t).0).collect();
                urls.sort_unstable();
                urls.dedup();
                assert_eq!(urls.len(), servers, "user {user}");
            }
        }
    }

    #[test]
    fn frames_parse_with_escapes_and_unknown_fields() {
        let text = r#"{"type":"message.delta","conversationId":"c","messageId":"m","seq":4,"delta":"a \"b\"\n","emittedAt":17}"#;
        let f: Frame = serde_json::from_str(text).unwrap();
        assert_eq!(f.kind, "message.delta");
        assert_eq!((f.seq, f.emitted_at), (Some(4), Some(17)));
        assert_eq!(f.delta.as_deref(), Some("a \"b\"\n"));
        let done = r#"{"type":"message.completed","conversationId":"c","finishReason":"stop",
            "message":{"_id":"m","conversationId":"c","role":"assistant","content":"hi","status":"complete"}}"#;
        let f: Frame = serde_json::from_str(done).unwrap();
        let m = f.message.unwrap();
        assert_eq!(
            (m.id.as_ref(), m.role.as_ref(), m.content.as_ref()),
            ("m", "assistant", "hi")
        );
    }
}
