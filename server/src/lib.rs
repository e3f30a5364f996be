//! The chat server: configuration, storage, accounts, settings and the HTTP API.
//! `main.rs` only parses the command line; tests start `startup::Application` on port 0.

pub mod accounts;
pub mod admin;
pub mod announce;
pub mod billing;
pub mod chat;
pub mod clock;
pub mod config;
pub mod conversation_search;
pub mod db;
pub mod documents;
pub mod domain;
pub mod entitlements;
pub mod error;
pub mod files;
#[cfg(test)]
mod generated_types;
pub mod http;
pub mod i18n;
pub mod imagegen;
pub mod images;
pub mod mail;
pub mod metering;
pub mod operator;
pub mod outage;
pub mod plans;
pub mod portability;
pub mod projects;
pub mod quota;
pub mod rate_limit;
pub mod realtime;
pub mod redis_conn;
pub mod scheduler;
pub mod search;
pub mod shares;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod views;
