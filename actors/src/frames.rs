//! A tab's incoming side: websocket frames decoded from the request's payload (with
//! actix-http's codec), fragmented messages joined. It is a plain stream the session
//! actor reads, with no channel or task of its own.

use std::pin::Pin;
use std::task::{Context, Poll};

use actix_codec::Decoder;
use actix_http::error::PayloadError;
use actix_http::ws::{CloseReason, Codec, Frame, Item, ProtocolError};
use actix_web::web::{Bytes, BytesMut};
use bytestring::ByteString;
use futures_util::Stream;

/// A whole message from the tab.
#[derive(Debug)]
pub enum Incoming {
    Text(ByteString),
    Binary(Bytes),
    Ping(Bytes),
    Pong(Bytes),
    Close(Option<CloseReason>),
}

/// The messages of a websocket's payload; a message (or a frame) larger than
/// `max_size` is an [`ProtocolError::Overflow`].
pub struct Frames<S> {
    payload: S,
    buf: BytesMut,
    codec: Codec,
    max_size: usize,
    /// A fragmented message being joined: whether it is text, and its bytes so far.
    partial: Option<(bool, BytesMut)>,
    done: bool,
}

impl<S> Frames<S>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    pub fn new(payload: S, max_size: usize) -> Frames<S> {
        Frames {
            payload,
            buf: BytesMut::new(),
            codec: Codec::new().max_size(max_size),
            max_size,
            partial: None,
            done: false,
        }
    }

    /// The message a frame completes, if any.
    fn join(&mut self, frame: Frame) -> Result<Option<Incoming>, ProtocolError> {
        Ok(Some(match frame {
            Frame::Text(bytes) => Incoming::Text(text(bytes)?),
            Frame::Binary(bytes) => Incoming::Binary(bytes),
            Frame::Ping(bytes) => Incoming::Ping(bytes),
            Frame::Pong(bytes) => Incoming::Pong(bytes),
            Frame::Close(reason) => Incoming::Close(reason),
            Frame::Continuation(item) => match item {
                Item::FirstText(_) | Item::FirstBinary(_) if self.partial.is_some() => {
                    return Err(ProtocolError::ContinuationStarted);
                }
                Item::FirstText(bytes) => {
                    self.partial = Some((true, BytesMut::from(&bytes[..])));
                    return Ok(None);
                }
                Item::FirstBinary(bytes) => {
                    self.partial = Some((false, BytesMut::from(&bytes[..])));
                    return Ok(None);
                }
                Item::Continue(bytes) => {
                    self.append(&bytes)?;
                    return Ok(None);
                }
                Item::Last(bytes) => {
                    self.append(&bytes)?;
                    let (is_text, joined) = self.partial.take().expect("appended to");
                    let joined = joined.freeze();
                    if is_text {
                        Incoming::Text(text(joined)?)
                    } else {
                        Incoming::Binary(joined)
                    }
                }
            },
        }))
    }

    fn append(&mut self, bytes: &[u8]) -> Result<(), ProtocolError> {
        let Some((_, joined)) = self.partial.as_mut() else {
            return Err(ProtocolError::ContinuationNotStarted);
        };
        if joined.len() + bytes.len() > self.max_size {
            return Err(ProtocolError::Overflow);
        }
        joined.extend_from_slice(bytes);
        Ok(())
    }
}

fn text(bytes: Bytes) -> Result<ByteString, ProtocolError> {
    ByteString::try_from(bytes)
        .map_err(|e| ProtocolError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

impl<S> Stream for Frames<S>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    type Item = Result<Incoming, ProtocolError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            let decoded = this.codec.decode(&mut this.buf);
            if this.buf.is_empty() {
                // An idle socket keeps no buffer.
                this.buf = BytesMut::new();
            }
            match decoded {
                Err(e) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                Ok(Some(frame)) => match this.join(frame) {
                    Ok(Some(message)) => return Poll::Ready(Some(Ok(message))),
                    Ok(None) => continue,
                    Err(e) => {
                        this.done = true;
                        return Poll::Ready(Some(Err(e)));
                    }
                },
                Ok(None) => {}
            }
            match Pin::new(&mut this.payload).poll_next(cx) {
                Poll::Ready(Some(Ok(bytes))) => this.buf.extend_from_slice(&bytes),
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(ProtocolError::Io(std::io::Error::other(e)))));
                }
                Poll::Ready(None) => this.done = true,
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_codec::Encoder;
    use actix_http::ws::Message;
    use futures_util::{stream, StreamExt};

    /// The bytes a browser sends for `messages` (masked, as clients must).
    fn client_bytes(messages: Vec<Message>) -> Bytes {
        let mut codec = Codec::new().client_mode();
        let mut buf = BytesMut::new();
        for message in messages {
            codec.encode(message, &mut buf).unwrap();
        }
        buf.freeze()
    }

    /// Decodes `bytes` fed `step` bytes at a time.
    async fn decode(bytes: Bytes, step: usize, max: usize) -> Vec<Result<Incoming, ProtocolError>> {
        let chunks: Vec<Result<Bytes, PayloadError>> = bytes
            .chunks(step)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        Frames::new(stream::iter(chunks), max).collect().await
    }

    #[actix_rt::test]
    async fn fragmented_text_is_joined_around_a_ping_whatever_the_read_sizes() {
        let bytes = client_bytes(vec![
            Message::Continuation(Item::FirstText(Bytes::from_static(b"Hel"))),
            Message::Ping(Bytes::from_static(b"p")),
            Message::Continuation(Item::Continue(Bytes::from_static(b"lo, "))),
            Message::Continuation(Item::Last(Bytes::from_static("világ".as_bytes()))),
            Message::Text("next".into()),
        ]);
        for step in [1, 3, 1000] {
            let got = decode(bytes.clone(), step, 1024).await;
            let got: Vec<String> = got.into_iter().map(|m| format!("{:?}", m.unwrap())).collect();
            assert_eq!(
                got,
                vec![
                    r#"Ping(b"p")"#.to_owned(),
                    r#"Text("Hello, világ")"#.to_owned(),
                    r#"Text("next")"#.to_owned()
                ],
                "read {step} bytes at a time"
            );
        }
    }

    #[actix_rt::test]
    async fn oversized_messages_bad_text_and_stray_continuations_are_errors() {
        let joined_too_big = client_bytes(vec![
            Message::Continuation(Item::FirstText(Bytes::from(vec![b'a'; 60]))),
            Message::Continuation(Item::Last(Bytes::from(vec![b'a'; 60]))),
        ]);
        let frame_too_big = client_bytes(vec![Message::Text("a".repeat(200).into())]);
        // The encoder refuses what a hostile client may send anyway: these frames come
        // from encoders that each saw a different start.
        let first = |text: &'static [u8]| Message::Continuation(Item::FirstText(Bytes::from_static(text)));
        let with_start = client_bytes(vec![
            first(b"x"),
            Message::Continuation(Item::Continue(Bytes::from_static(b"y"))),
        ]);
        let stray = with_start.slice(client_bytes(vec![first(b"x")]).len()..);
        let restarted = [client_bytes(vec![first(b"x")]), client_bytes(vec![first(b"y")])].concat();
        let restarted = Bytes::from(restarted);
        // A binary frame of bytes that are not UTF-8, relabelled as text (opcode 1).
        let mut invalid = client_bytes(vec![Message::Binary(Bytes::from_static(&[0xff, 0xfe]))]).to_vec();
        invalid[0] = 0x81;
        for (name, bytes, expected) in [
            ("joined too big", joined_too_big, "Overflow"),
            ("frame too big", frame_too_big, "Overflow"),
            ("stray continuation", stray, "ContinuationNotStarted"),
            ("restarted continuation", restarted, "ContinuationStarted"),
            ("text not UTF-8", Bytes::from(invalid), "Io"),
        ] {
            let got = decode(bytes, 7, 100).await;
            let last = got.last().unwrap_or_else(|| panic!("{name}: nothing decoded"));
            let error = format!("{:?}", last.as_ref().expect_err(name));
            assert!(error.starts_with(expected), "{name}: {error}");
        }
    }
}
