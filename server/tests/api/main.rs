//! The API tests: the real server over HTTP, on SQLite by default and on Postgres and
//! Redis when `TEST_DATABASE_URL` / `TEST_REDIS_URL` are set (see helpers.rs).

mod abuse;
mod chat;
mod code_attempts;
mod context;
mod cookies;
mod documents;
mod faults;
mod files;
mod fuzz;
mod headers;
mod health;
mod helpers;
mod image_generation;
mod invoices;
mod localstripe;
mod login;
mod model_stub;
mod operator;
mod password_reset;
mod profile;
mod projects;
mod quota;
mod rate_limit;
mod register;
mod search;
mod settings;
mod smtp;
mod spoofing;
mod startup_checks;
mod stripe;
mod subscription;
mod validation;
mod venv;
mod vies_stub;
mod ws;
