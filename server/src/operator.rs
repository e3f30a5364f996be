//! Operator commands, run from the command line against the configured database.

use anyhow::Context;

use crate::admin::users;
use crate::clock::{Clock, SystemClock};
use crate::config::Settings;
use crate::db::audit::{Actor, AuditRecord};
use crate::db::Db;
use crate::domain::Email;
use crate::error::ApiError;
use crate::plans::PlanType;
use crate::quota::iso;
use chat_contract::states::{AuditAction, UserRole};

/// `chat-server users set-plan EMAIL PLAN [--days N]`: the rule of an operator's plan
/// (`admin::users::plan_grant`, shared with the console): paid from now for `days` days
/// with no payment and no renewal, `free` ends any paid plan at once; logged with the
/// command line as actor.
pub async fn set_plan(settings: &Settings, email: &str, plan: &str, days: i64) -> anyhow::Result<String> {
    let now = SystemClock.now_ms();
    let grant = users::plan_grant(Some(plan), Some(days), now).map_err(|e| match e {
        ApiError::Client {
            field: Some("days"), ..
        } => {
            anyhow::anyhow!("--days must be 1 to {}", users::MAX_DAYS)
        }
        _ => anyhow::anyhow!("unknown plan {plan:?}: use free, base, plus or pro"),
    })?;
    let email =
        Email::parse(Some(email)).map_err(|_| anyhow::anyhow!("{email:?} is not an e-mail address"))?;
    let db = Db::connect(&settings.database.url, &settings.server.data_dir, 2).await?;
    let user = db
        .user_by_email(email.as_str())
        .await?
        .with_context(|| format!("no user with e-mail {}", email.as_str()))?;
    let reason = "set with chat-server users set-plan";
    users::grant_plan(&db, &user, &grant, Actor::CommandLine, reason, now)
        .await
        .map_err(|e| anyhow::Error::new(e).context("changing the plan"))?;
    db.close().await;
    Ok(match &grant.activation {
        None => format!("{} is now on free", email.as_str()),
        Some(a) => format!(
            "{} is now on {} until {}",
            email.as_str(),
            grant.plan.as_str(),
            iso(a.end_date)
        ),
    })
}

/// `chat-server users grant-admin EMAIL` / `revoke-admin EMAIL`: the only way to change a
/// role (the API has none), recorded in the audit log with the command line as actor.
pub async fn set_role(settings: &Settings, email: &str, role: UserRole) -> anyhow::Result<String> {
    let email =
        Email::parse(Some(email)).map_err(|_| anyhow::anyhow!("{email:?} is not an e-mail address"))?;
    let db = Db::connect(&settings.database.url, &settings.server.data_dir, 2).await?;
    let user = db
        .user_by_email(email.as_str())
        .await?
        .with_context(|| format!("no user with e-mail {}", email.as_str()))?;
    let (action, reason) = match role {
        UserRole::Admin => (
            AuditAction::AdminGranted,
            "granted with chat-server users grant-admin",
        ),
        UserRole::User => (
            AuditAction::AdminRevoked,
            "revoked with chat-server users revoke-admin",
        ),
    };
    let record = AuditRecord {
        at: SystemClock.now_ms(),
        actor: Actor::CommandLine,
        action,
        target_user_id: Some(user.id.clone()),
        target: user.email.clone(),
        reason: reason.into(),
        before: [("role".to_owned(), user.role.as_str().to_owned())].into(),
        after: [("role".to_owned(), role.as_str().to_owned())].into(),
    };
    let changed = db.set_role(&user.id, role, &record).await?;
    db.close().await;
    Ok(if changed {
        format!("{} is now {}", email.as_str(), role.as_str())
    } else {
        format!(
            "{} was already {}; nothing changed",
            email.as_str(),
            role.as_str()
        )
    })
}

/// What `users seed` is asked for.
pub struct Seed<'a> {
    pub count: usize,
    pub password: &'a str,
    /// E-mails are `{prefix}{i}@example.com`, i from 0.
    pub prefix: &'a str,
    pub plan: &'a str,
    /// Where to write `email<TAB>token` lines for the load harness.
    pub tokens: Option<&'a std::path::Path>,
    /// Messages of made-up history each new user gets (the search bench), 20 a
    /// conversation.
    pub messages: usize,
}

/// `chat-server users seed`: load-test users that all share one password hash (one argon2
/// run however many), on `plan`, with access tokens for the load harness. Rerunning it
/// keeps the users that exist and writes fresh tokens.
pub async fn seed(settings: &Settings, seed: &Seed<'_>) -> anyhow::Result<String> {
    use crate::accounts::jwt::Tokens;
    use crate::accounts::password::PasswordHasher;
    use crate::db::users::NewUser;
    use crate::domain::Password;
    use crate::error::ErrorCode;
    use std::io::Write;

    anyhow::ensure!(seed.count >= 1, "--count must be at least 1");
    anyhow::ensure!(
        !seed.prefix.is_empty() && seed.prefix.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
        "--prefix takes letters, digits and '-'"
    );
    let plan = PlanType::parse(seed.plan)
        .ok_or_else(|| anyhow::anyhow!("unknown plan {:?}: use free, base, plus or pro", seed.plan))?;
    let password = Password::parse(Some(seed.password), ErrorCode::PasswordRequired)
        .map_err(|_| anyhow::anyhow!("the password must be 6 to 128 characters"))?;
    let data_dir = &settings.server.data_dir;
    std::fs::create_dir_all(data_dir)?;
    let db = Db::connect(&settings.database.url, data_dir, 2).await?;
    let hash = PasswordHasher::new(&settings.auth)?
        .hash(password.expose())
        .await
        .map_err(|e| anyhow::anyhow!("hashing the password: {e:?}"))?;
    let now = SystemClock.now_ms();
    let emails: Vec<String> = (0..seed.count)
        .map(|i| format!("{}{i}@example.com", seed.prefix.to_lowercase()))
        .collect();
    let mut added = 0;
    for chunk in emails.chunks(1000) {
        let ids: Vec<String> = chunk.iter().map(|_| uuid::Uuid::now_v7().to_string()).collect();
        let users: Vec<NewUser> = chunk
            .iter()
            .zip(&ids)
            .map(|(email, id)| NewUser {
                id,
                name: "Load Test",
                email,
                password_hash: &hash,
                language: crate::i18n::Lang::EnUs,
                now,
            })
            .collect();
        added += db.insert_seed_users(&users).await?;
    }
    let tokens = Tokens::new(
        crate::startup::token_secret(settings, &db, data_dir, now)
            .await?
            .as_bytes(),
    );
    let mut out = match seed.tokens {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => None,
    };
    let activation = (plan != PlanType::Free).then(|| users::operator_activation(plan, now, 30));
    for email in &emails {
        let user = db
            .user_by_email(email)
            .await?
            .with_context(|| format!("{email} vanished"))?;
        if let Some(activation) = &activation {
            db.activate_subscription(&user.id, activation, now).await?;
        }
        if seed.messages > 0 && db.conversations(&user.id, None, false, None, 1).await?.is_empty() {
            for batch in seed_history(&user.id, seed.messages).chunks(100) {
                db.insert_seed_history(&user.id, batch, now).await?;
            }
        }
        if let Some(out) = out.as_mut() {
            let token = tokens.issue(&user.id, user.token_version, now, settings.auth.remember_days)?;
            writeln!(out, "{email}\t{token}")?;
        }
    }
    if let Some(mut out) = out {
        out.flush()?;
    }
    db.close().await;
    Ok(format!(
        "{} users ({} new) on {}, e-mails {}0..{}@example.com",
        seed.count,
        added,
        plan.as_str(),
        seed.prefix,
        seed.count - 1
    ))
}

/// `messages` messages of made-up text, 20 a conversation: words of two or three
/// syllables (some with Hungarian accents) drawn by a generator seeded with the user's id,
/// so every user's history differs and reruns repeat it.
fn seed_history(user_id: &str, messages: usize) -> Vec<crate::db::conversations::SeedConversation> {
    const SYLLABLES: [&str; 48] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "bi", "de", "fo", "gu", "ha", "ji", "ko", "la", "ma",
        "no", "pe", "ri", "so", "tu", "va", "ze", "ár", "vé", "tő", "fű", "ró", "gé", "pő", "ün", "ban",
        "ker", "lin", "mor", "pal", "ros", "tan", "vil", "dor", "fen", "gal", "hor", "kis", "lem", "nar",
        "zet",
    ];
    let mut state = user_id.bytes().fold(0x9e37_79b9_7f4a_7c15u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mut next = move |n: usize| {
        // xorshift64: fast, repeatable, good enough for made-up words.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut words = |count: usize| {
        (0..count)
            .map(|_| {
                (0..2 + next(2))
                    .map(|_| SYLLABLES[next(SYLLABLES.len())])
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    (0..messages.div_ceil(20))
        .map(|c| crate::db::conversations::SeedConversation {
            title: words(3),
            messages: (0..20.min(messages - c * 20))
                .map(|j| words(if j % 2 == 0 { 15 } else { 60 }))
                .collect(),
        })
        .collect()
}
