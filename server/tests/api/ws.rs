//! A real websocket client for tests (tokio-tungstenite), reading JSON frames.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::helpers::TestApp;

pub struct WsClient {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

const FRAME_TIMEOUT: Duration = Duration::from_secs(10);

impl WsClient {
    fn url(app: &TestApp) -> String {
        format!("{}/api/ws", app.address.replacen("http://", "ws://", 1))
    }

    /// Connects with the token in the `Authorization` header (or none).
    pub async fn connect(app: &TestApp, token: Option<&str>) -> WsClient {
        Self::connect_to(&app.address, token).await
    }

    /// [`Self::connect`] to the server at `base` (`http://…`), one not started by the test.
    pub async fn connect_to(base: &str, token: Option<&str>) -> WsClient {
        let url = format!("{}/api/ws", base.replacen("http://", "ws://", 1));
        let mut request = url.into_client_request().unwrap();
        if let Some(token) = token {
            request
                .headers_mut()
                .insert("Authorization", format!("Bearer {token}").parse().unwrap());
        }
        let (ws, _) = tokio_tungstenite::connect_async(request)
            .await
            .expect("websocket upgrade");
        WsClient { ws }
    }

    /// Connects as a browser would: the token in the `token` cookie, from `origin`.
    pub async fn connect_with_cookie(app: &TestApp, token: &str, origin: &str) -> WsClient {
        Self::connect_with_cookie_and(app, token, origin, &[]).await
    }

    /// [`Self::connect_with_cookie`], with more request headers (a proxy's, say).
    pub async fn connect_with_cookie_and(
        app: &TestApp,
        token: &str,
        origin: &str,
        headers: &[(&'static str, &str)],
    ) -> WsClient {
        let mut request = Self::url(app).into_client_request().unwrap();
        request
            .headers_mut()
            .insert("Cookie", format!("token={token}").parse().unwrap());
        request.headers_mut().insert("Origin", origin.parse().unwrap());
        for (name, value) in headers {
            request.headers_mut().append(*name, value.parse().unwrap());
        }
        let (ws, _) = tokio_tungstenite::connect_async(request)
            .await
            .expect("websocket upgrade");
        WsClient { ws }
    }

    /// Connects and waits for `ready`.
    pub async fn ready(app: &TestApp, token: &str) -> (WsClient, Value) {
        let mut client = Self::connect(app, Some(token)).await;
        let ready = client.expect("ready").await;
        (client, ready)
    }

    /// Connects over a socket with a tiny receive buffer, for a tab that does not read.
    pub async fn connect_slow(app: &TestApp, token: &str) -> WsClient {
        let address: std::net::SocketAddr = app.address.trim_start_matches("http://").parse().unwrap();
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        socket.connect(&address.into()).unwrap();
        socket.set_nonblocking(true).unwrap();
        let stream = TcpStream::from_std(socket.into()).unwrap();
        let mut request = Self::url(app).into_client_request().unwrap();
        request
            .headers_mut()
            .insert("Authorization", format!("Bearer {token}").parse().unwrap());
        let (ws, _) = tokio_tungstenite::client_async(request, MaybeTlsStream::Plain(stream))
            .await
            .unwrap();
        WsClient { ws }
    }

    pub async fn send(&mut self, frame: Value) {
        self.ws.send(Message::text(frame.to_string())).await.unwrap();
    }

    /// Sends any text, JSON or not.
    pub async fn send_raw(&mut self, text: String) {
        self.ws.send(Message::text(text)).await.unwrap();
    }

    /// Sends frames in one write, so the server reads them all at once.
    pub async fn send_all(&mut self, frames: &[Value]) {
        for frame in frames {
            self.ws.feed(Message::text(frame.to_string())).await.unwrap();
        }
        self.ws.flush().await.unwrap();
    }

    /// The next JSON frame; `None` once the server closed the socket.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            let message = tokio::time::timeout(FRAME_TIMEOUT, self.ws.next())
                .await
                .expect("a frame in time")?;
            match message {
                Ok(Message::Text(text)) => return Some(serde_json::from_str(&text).unwrap()),
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => continue,
            }
        }
    }

    /// The next frame, which must be of type `kind`.
    pub async fn expect(&mut self, kind: &str) -> Value {
        let frame = self
            .next()
            .await
            .unwrap_or_else(|| panic!("closed while waiting for {kind}"));
        assert_eq!(frame["type"], kind, "{frame}");
        frame
    }

    /// Frames up to and including the first of type `kind`.
    pub async fn until(&mut self, kind: &str) -> Vec<Value> {
        let mut frames = Vec::new();
        loop {
            let frame = self
                .next()
                .await
                .unwrap_or_else(|| panic!("closed while waiting for {kind}: {frames:?}"));
            let done = frame["type"] == kind;
            frames.push(frame);
            if done {
                return frames;
            }
        }
    }

    /// Sends a websocket ping and waits for the server's pong.
    /// How the send `client_id` ended: its error's code, or `"answered"` once its
    /// answer completed (other frames are skipped).
    pub async fn outcome_of(&mut self, client_id: &str) -> String {
        loop {
            let f = self.next().await.expect("a frame");
            if f["type"] == "error" && f["clientId"] == client_id {
                return f["code"].as_str().unwrap().to_owned();
            }
            if f["type"] == "message.completed" && f["message"]["clientId"] == client_id {
                return "answered".to_owned();
            }
        }
    }

    pub async fn ping_answered(&mut self) -> bool {
        self.ws.send(Message::Ping(b"hi".to_vec().into())).await.unwrap();
        loop {
            match tokio::time::timeout(FRAME_TIMEOUT, self.ws.next())
                .await
                .expect("a pong in time")
            {
                Some(Ok(Message::Pong(payload))) => return &payload[..] == b"hi",
                Some(Ok(_)) => continue,
                _ => return false,
            }
        }
    }

    /// Reads until the server closes; returns its close frame.
    pub async fn close_frame(&mut self) -> Option<CloseFrame> {
        loop {
            match tokio::time::timeout(FRAME_TIMEOUT, self.ws.next())
                .await
                .expect("a close in time")
            {
                Some(Ok(Message::Close(frame))) => return frame,
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return None,
            }
        }
    }
}

/// The text of an answer from its deltas, checking they come in order with no gap.
pub fn joined_deltas(frames: &[Value], message_id: &Value, after_seq: u64) -> String {
    let deltas = frames
        .iter()
        .filter(|f| f["type"] == "message.delta" && &f["messageId"] == message_id);
    let mut text = String::new();
    for (expected, f) in (after_seq + 1..).zip(deltas) {
        assert_eq!(
            f["seq"].as_u64().unwrap(),
            expected,
            "deltas out of order: {frames:?}"
        );
        text.push_str(f["delta"].as_str().unwrap());
    }
    text
}
