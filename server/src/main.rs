//! `chat-server`: serves the API and web client, or runs an operator command.

use anyhow::Context;
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
}

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    telemetry::init();
    let settings = Settings::load().context("loading settings")?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let app = Application::build(settings).await?;
            app.run_until_stopped().await.context("running the server")
        }
        Command::Users(UsersCommand::SetPlan { email, plan, days }) => {
            let summary = operator::set_plan(&settings, &email, &plan, days).await?;
            println!("{summary}");
            Ok(())
        }
    }
}
