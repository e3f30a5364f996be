use anyhow::Context;
use chat_server::config::Settings;
use chat_server::startup::Application;
use chat_server::telemetry;

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    telemetry::init();
    let settings = Settings::load().context("loading settings")?;
    let app = Application::build(settings).await?;
    app.run_until_stopped().await.context("running the server")
}
