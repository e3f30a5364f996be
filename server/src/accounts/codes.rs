//! One-time codes and opaque tokens for registration and password reset.
//! Both are stored only as HMAC-SHA256 under a server key, so a database leak reveals
//! neither, while lookups stay a simple equality.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::{Rng, RngCore};
use sha2::Sha256;

#[derive(Clone)]
pub struct CodeKey(Vec<u8>);

impl CodeKey {
    pub fn new(key: &[u8]) -> Self {
        CodeKey(key.to_vec())
    }

    /// Keyed hash of a token or code, hex encoded. `purpose` separates the uses.
    pub fn hash(&self, purpose: &str, value: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(purpose.as_bytes());
        mac.update(b"\0");
        mac.update(value.as_bytes());
        mac.finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// A code of [`chat_contract::limits::CODE_DIGITS`] digits, leading zeros kept.
pub fn new_code() -> String {
    let digits = chat_contract::limits::CODE_DIGITS as usize;
    format!(
        "{:0digits$}",
        rand::rngs::OsRng.gen_range(0..10u32.pow(digits as u32))
    )
}

/// 256 random bits, URL-safe.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Compares hex digests without an early exit on the first difference.
pub fn same_digest(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_six_digits() {
        for _ in 0..200 {
            let c = new_code();
            assert_eq!(c.len(), 6);
            assert!(c.chars().all(|ch| ch.is_ascii_digit()));
        }
    }

    #[test]
    fn hashes_depend_on_key_purpose_and_value() {
        let k = CodeKey::new(b"k1");
        assert_eq!(k.hash("code", "123456"), k.hash("code", "123456"));
        assert_ne!(k.hash("code", "123456"), k.hash("token", "123456"));
        assert_ne!(
            k.hash("code", "123456"),
            CodeKey::new(b"k2").hash("code", "123456")
        );
        assert!(same_digest(&k.hash("a", "b"), &k.hash("a", "b")));
        assert!(!same_digest(&k.hash("a", "b"), &k.hash("a", "c")));
    }
}
