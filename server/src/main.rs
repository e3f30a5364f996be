//! `chat-server`: serves the API and web client, or runs an operator command.

use anyhow::Context;
use chat_contract::states::UserRole;
use chat_server::config::Settings;
use chat_server::startup::Application;
use chat_server::{operator, telemetry};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "chat-server", version, about = "The AI chat service")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API and the web client (what runs with no command).
    Serve,
    /// Manage users.
    #[command(subcommand)]
    Users(UsersCommand),
    /// Reads one document from standard input under a memory limit (the server starts
    /// it for each upload; see `documents::reader`).
    #[command(name = "read-document", hide = true)]
    ReadDocument {
        format: String,
        #[arg(long)]
        memory_bytes: u64,
        #[arg(long)]
        check: bool,
    },
}

#[derive(Subcommand)]
enum UsersCommand {
    /// Put a user on a plan without a payment (support, tests); `free` ends any paid plan.
    SetPlan {
        email: String,
        /// free, base, plus or pro
        plan: String,
        /// Days of access for a paid plan.
        #[arg(long, default_value_t = 30)]
        days: i64,
    },
    /// Make a user an admin: they may open the operator console (`/admin`).
    GrantAdmin { email: String },
    /// Make an admin a user again; the console is closed to them at once.
    RevokeAdmin { email: String },
    /// Create load-test users `{prefix}{i}@example.com` sharing one password hash.
    Seed {
        #[arg(long)]
        count: usize,
        #[arg(long)]
        password: String,
        #[arg(long, default_value = "load")]
        prefix: String,
        /// free, base, plus or pro
        #[arg(long, default_value = "free")]
        plan: String,
        /// Write `email<TAB>access token` lines here, for `loadtest --tokens`.
        #[arg(long)]
        tokens: Option<std::path::PathBuf>,
        /// Messages of made-up history for each new user (20 a conversation).
        #[arg(long, default_value_t = 0)]
        messages: usize,
    },
}

/// SIGTERM (what service managers and orchestrators send) or Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM; Ctrl-C only");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(Command::ReadDocument {
        format,
        memory_bytes,
        check,
    }) = &cli.command
    {
        // Nothing else of the server starts in a reader.
        return chat_server::documents::reader::read_document(format, *memory_bytes, *check);
    }
    telemetry::init();
    let settings = Settings::load().context("loading settings")?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let app = Application::build(settings).await?;
            let shutdown = app.shutdown();
            actix_web::rt::spawn(async move {
                stop_signal().await;
                tracing::info!("stopping: running answers may finish (a second signal stops at once)");
                actix_web::rt::spawn(async move { shutdown.graceful().await });
                stop_signal().await;
                std::process::exit(130);
            });
            app.run_until_stopped().await.context("running the server")
        }
        Command::Users(UsersCommand::SetPlan { email, plan, days }) => {
            let summary = operator::set_plan(&settings, &email, &plan, days).await?;
            println!("{summary}");
            Ok(())
        }
        Command::Users(UsersCommand::GrantAdmin { email }) => {
            println!(
                "{}",
                operator::set_role(&settings, &email, UserRole::Admin).await?
            );
            Ok(())
        }
        Command::Users(UsersCommand::RevokeAdmin { email }) => {
            println!("{}", operator::set_role(&settings, &email, UserRole::User).await?);
            Ok(())
        }
        Command::ReadDocument { .. } => unreachable!("handled before the settings are read"),
        Command::Users(UsersCommand::Seed {
            count,
            password,
            prefix,
            plan,
            tokens,
            messages,
        }) => {
            let seed = operator::Seed {
                count,
                password: &password,
                prefix: &prefix,
                plan: &plan,
                tokens: tokens.as_deref(),
                messages,
            };
            let summary = operator::seed(&settings, &seed).await?;
            println!("{summary}");
            Ok(())
        }
    }
}
