//! A real SMTP receiver for tests: speaks enough of RFC 5321 for lettre, keeps every mail.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

#[derive(Debug, Clone)]
pub struct ReceivedMail {
    pub to: Vec<String>,
    pub data: String,
}

impl ReceivedMail {
    fn parsed(&self) -> mailparse::ParsedMail<'_> {
        mailparse::parse_mail(self.data.as_bytes()).expect("a parseable mail")
    }

    pub fn subject(&self) -> String {
        use mailparse::MailHeaderMap;
        self.parsed()
            .headers
            .get_first_value("Subject")
            .unwrap_or_default()
    }

    /// The decoded text body.
    pub fn body(&self) -> String {
        self.parsed().get_body().expect("a text body")
    }

    /// The six-digit code in the body.
    pub fn code(&self) -> String {
        let body = self.body();
        let digits: Vec<char> = body.chars().collect();
        digits
            .windows(6)
            .enumerate()
            .find(|(i, w)| {
                w.iter().all(char::is_ascii_digit)
                    && !digits.get(i + 6).is_some_and(char::is_ascii_digit)
                    && (*i == 0 || !digits[i - 1].is_ascii_digit())
            })
            .map(|(_, w)| w.iter().collect())
            .unwrap_or_else(|| panic!("no code in mail body: {body}"))
    }
}

#[derive(Clone, Default)]
pub struct Mailbox {
    mails: Arc<Mutex<Vec<ReceivedMail>>>,
    arrived: Arc<Notify>,
}

impl Mailbox {
    /// Takes the oldest mail to `address`, waiting up to 10 s for one to arrive.
    pub async fn take_for(&self, address: &str) -> ReceivedMail {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let notified = self.arrived.notified();
            {
                let mut mails = self.mails.lock().unwrap();
                if let Some(i) = mails.iter().position(|m| m.to.iter().any(|t| t == address)) {
                    return mails.remove(i);
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("no mail to {address} arrived");
            }
        }
    }

    pub fn count_for(&self, address: &str) -> usize {
        self.mails
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m.to.iter().any(|t| t == address))
            .count()
    }
}

/// Starts the receiver on a free port.
pub async fn start() -> (u16, Mailbox) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mailbox = Mailbox::default();
    let accepting = mailbox.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, accepting.clone()));
        }
    });
    (port, mailbox)
}

fn address_of(arg: &str) -> String {
    let start = arg.find('<').map_or(0, |i| i + 1);
    let end = arg.rfind('>').unwrap_or(arg.len());
    arg[start..end].to_owned()
}

async fn serve(stream: TcpStream, mailbox: Mailbox) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let _ = write.write_all(b"220 test-smtp ESMTP ready\r\n").await;
    let mut to = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        let upper = line.to_ascii_uppercase();
        let reply: &[u8] = if upper.starts_with("EHLO") {
            b"250-test-smtp\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n"
        } else if upper.starts_with("HELO") || upper.starts_with("MAIL FROM") || upper.starts_with("NOOP") {
            b"250 OK\r\n"
        } else if upper.starts_with("RSET") {
            to.clear();
            b"250 OK\r\n"
        } else if upper.starts_with("RCPT TO") {
            to.push(address_of(&line));
            b"250 OK\r\n"
        } else if upper.starts_with("DATA") {
            let _ = write.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await;
            let mut data = String::new();
            while let Ok(Some(l)) = lines.next_line().await {
                if l == "." {
                    break;
                }
                data.push_str(l.strip_prefix('.').unwrap_or(&l));
                data.push_str("\r\n");
            }
            mailbox.mails.lock().unwrap().push(ReceivedMail {
                to: std::mem::take(&mut to),
                data,
            });
            mailbox.arrived.notify_waiters();
            b"250 OK queued\r\n"
        } else if upper.starts_with("QUIT") {
            let _ = write.write_all(b"221 bye\r\n").await;
            break;
        } else {
            b"502 command not implemented\r\n"
        };
        if write.write_all(reply).await.is_err() {
            break;
        }
    }
}
