//! The API tests: the real server over HTTP, on SQLite by default and on Postgres and
//! Redis when `TEST_DATABASE_URL` / `TEST_REDIS_URL` are set (see helpers.rs).

mod chat;
mod faults;
mod health;
mod helpers;
mod login;
mod model_stub;
mod operator;
mod password_reset;
mod profile;
mod quota;
mod register;
mod settings;
mod smtp;
mod subscription;
mod validation;
mod ws;
