//! The `rangeid-token` command: prints the token alone on stdout, and the
//! token verifies with the Worker's rules.

use std::process::Command;

use rangeid_authority::token::{verify, Keyring, Role, Scope};
use rangeid_core::Namespace;

const BIN: &str = env!("CARGO_BIN_EXE_rangeid-token");

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[test]
fn keygen_then_token_verifies() {
    let dir = std::env::temp_dir().join(format!("rangeid-token-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys_path = dir.join("keys.json");

    let out = Command::new(BIN)
        .args(["keygen", "--kid", "k-2026"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let keys_text = String::from_utf8(out.stdout).unwrap();
    std::fs::write(&keys_path, keys_text.trim()).unwrap();
    let keys = Keyring::from_json(keys_text.trim()).unwrap();

    let out = Command::new(BIN)
        .args([
            "token",
            "--role",
            "generator",
            "--ns",
            "orders",
            "--ttl",
            "30d",
            "--keys",
        ])
        .arg(&keys_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "the token alone: {stdout:?}");
    let claims = verify(stdout.trim(), &keys, None, now()).unwrap();
    assert_eq!(claims.role, Role::Generator);
    assert_eq!(
        claims.ns,
        Scope::Only(vec![Namespace::new("orders").unwrap()])
    );
    assert!(claims.exp >= now() + 30 * 86_400 - 5);

    let out = Command::new(BIN)
        .args([
            "token",
            "--role",
            "admin",
            "--ns",
            "*",
            "--ttl",
            "1h",
            "--sub",
            "ops",
            "--aud",
            "ids.example",
        ])
        .env("RANGEID_SIGNING_KEYS", keys_text.trim())
        .output()
        .unwrap();
    assert!(out.status.success());
    let token = String::from_utf8(out.stdout).unwrap();
    assert!(verify(token.trim(), &keys, Some("other.example"), now()).is_err());
    let claims = verify(token.trim(), &keys, Some("ids.example"), now()).unwrap();
    assert_eq!(
        (claims.role, claims.ns, claims.sub.as_str()),
        (Role::Admin, Scope::All, "ops")
    );

    for bad in [
        &["token", "--role", "root", "--ns", "orders"][..],
        &["token", "--role", "admin", "--ns", "Bad Name"],
        &["token", "--role", "admin", "--ns", "x", "--ttl", "soon"],
        &["token", "--role", "admin", "--ns", "x", "--kid", "missing"],
        &["token", "--role", "admin", "--ns", "x", "--bogus", "1"],
        &["nothing"],
    ] {
        let out = Command::new(BIN)
            .args(bad)
            .arg("--keys")
            .arg(&keys_path)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?}");
        assert!(out.stdout.is_empty(), "{bad:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
