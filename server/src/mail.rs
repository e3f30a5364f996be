//! Outgoing mail: SMTP through lettre when `SMTP_URL` is set, else the log transport,
//! which writes each mail (code included) to the log so the service runs with no mail
//! server. Texts are in the recipient's language.

use anyhow::Context;
use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use secrecy::ExposeSecret;

use crate::config::{is_set, MailSettings};
use crate::i18n::Lang;

#[derive(Clone)]
pub enum Mailer {
    Smtp {
        // Boxed: the transport (a connection pool) is far larger than the log variant.
        transport: Box<AsyncSmtpTransport<Tokio1Executor>>,
        from: Mailbox,
        host: String,
    },
    Log {
        from: Mailbox,
    },
}

pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

impl Mailer {
    pub fn new(settings: &MailSettings) -> anyhow::Result<Mailer> {
        let from: Mailbox = settings.from.parse().context("MAIL_FROM is not a mailbox")?;
        if !is_set(&settings.smtp_url) {
            return Ok(Mailer::Log { from });
        }
        let url = settings.smtp_url.expose_secret();
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .context("SMTP_URL is not a valid smtp:// or smtps:// URL")?
            .build();
        let transport = Box::new(transport);
        let host = transport_host(url);
        Ok(Mailer::Smtp {
            transport,
            from,
            host,
        })
    }

    /// What the start-up log says about mail, without credentials.
    pub fn describe(&self) -> String {
        match self {
            Mailer::Smtp { host, .. } => format!("smtp ({host})"),
            Mailer::Log { .. } => "log transport (mails are written to the log)".into(),
        }
    }

    pub async fn send(&self, mail: Mail) -> anyhow::Result<()> {
        match self {
            Mailer::Log { from } => {
                tracing::info!(from = %from, to = %mail.to, subject = %mail.subject, body = %mail.body, "mail (log transport)");
                Ok(())
            }
            Mailer::Smtp { transport, from, .. } => {
                let message = Message::builder()
                    .from(from.clone())
                    .to(mail.to.parse().context("recipient address")?)
                    .subject(mail.subject)
                    .header(ContentType::TEXT_PLAIN)
                    .body(mail.body)
                    .context("building the mail")?;
                transport.send(message).await.context("sending mail over SMTP")?;
                Ok(())
            }
        }
    }
}

fn transport_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split(['/', '?']).next().unwrap_or("").to_owned()
}

pub fn registration_code(lang: Lang, to: &str, name: &str, code: &str, ttl_minutes: i64) -> Mail {
    let (subject, body) = match lang {
        Lang::EnUs => (
            format!("Your verification code: {code}"),
            format!(
                "Hello {name},\n\nYour verification code is: {code}\n\nIt is valid for {ttl_minutes} minutes. \
                 If you did not register, you can ignore this mail.\n"
            ),
        ),
        Lang::HuHu => (
            format!("Az Ön ellenőrző kódja: {code}"),
            format!(
                "Kedves {name}!\n\nAz Ön ellenőrző kódja: {code}\n\nA kód {ttl_minutes} percig érvényes. \
                 Ha nem Ön regisztrált, kérjük, hagyja figyelmen kívül ezt a levelet.\n"
            ),
        ),
    };
    Mail {
        to: to.to_owned(),
        subject,
        body,
    }
}

/// To an account's owner when someone tried to register with their address: the caller
/// was told a code is on its way, as for a new address, so the answer tells nobody
/// which addresses are registered.
pub fn registration_attempt(lang: Lang, to: &str, name: &str, public_url: &str) -> Mail {
    let (subject, body) = match lang {
        Lang::EnUs => (
            "Someone tried to register with your address".to_owned(),
            format!(
                "Hello {name},\n\nSomeone tried to create a new account at {public_url} with this e-mail \
                 address, which already has an account. If it was you, log in instead; if you forgot \
                 your password, use \"Forgot password\". If it was not you, you can ignore this mail: \
                 nothing has changed.\n"
            ),
        ),
        Lang::HuHu => (
            "Valaki az Ön címével próbált regisztrálni".to_owned(),
            format!(
                "Kedves {name}!\n\nValaki új fiókot próbált létrehozni itt: {public_url} ezzel az e-mail \
                 címmel, amelyhez már tartozik fiók. Ha Ön volt, jelentkezzen be; ha elfelejtette a \
                 jelszavát, használja az „Elfelejtett jelszó” lehetőséget. Ha nem Ön volt, hagyja \
                 figyelmen kívül ezt a levelet: semmi sem változott.\n"
            ),
        ),
    };
    Mail {
        to: to.to_owned(),
        subject,
        body,
    }
}

pub fn reset_code(lang: Lang, to: &str, name: &str, code: &str, ttl_minutes: i64) -> Mail {
    let (subject, body) = match lang {
        Lang::EnUs => (
            format!("Password reset code: {code}"),
            format!(
                "Hello {name},\n\nYour password reset code is: {code}\n\nIt is valid for {ttl_minutes} minutes. \
                 If you did not ask for a new password, you can ignore this mail: your password stays as it is.\n"
            ),
        ),
        Lang::HuHu => (
            format!("Jelszó-visszaállító kód: {code}"),
            format!(
                "Kedves {name}!\n\nAz Ön jelszó-visszaállító kódja: {code}\n\nA kód {ttl_minutes} percig érvényes. \
                 Ha nem Ön kért új jelszót, kérjük, hagyja figyelmen kívül ezt a levelet: a jelszava nem változik.\n"
            ),
        ),
    };
    Mail {
        to: to.to_owned(),
        subject,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smtp_host_is_described_without_credentials() {
        assert_eq!(
            transport_host("smtps://user:hunter2@mail.example.com:465"),
            "mail.example.com:465"
        );
        assert_eq!(
            transport_host("smtp://127.0.0.1:2525?tls=opportunistic"),
            "127.0.0.1:2525"
        );
    }
}
