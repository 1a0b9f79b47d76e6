//! `rangeid-token`: mints authority tokens and signing keys.
//!
//! ```text
//! rangeid-token token --role generator|reader|admin --ns orders[,other]|'*' --ttl 30d
//!                     [--sub NAME] [--aud AUDIENCE] [--kid KID] [--keys FILE]
//! rangeid-token keygen [--kid KID]
//! ```
//!
//! `--aud` must match the authority's `RANGEID_TOKEN_AUDIENCE` when that is
//! set (a token without it is then refused).
//!
//! `token` prints the token alone on stdout. Keys come from `--keys FILE`
//! (a JSON map kid → key) or the `RANGEID_SIGNING_KEYS` environment
//! variable; `--kid` picks one when there are several (default: the
//! greatest kid, i.e. the newest when kids sort by date). `keygen` prints a
//! new key map `{"KID":"<64 hex digits>"}` from the OS's randomness.

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use rangeid_authority::token::{mint_with, parse_ttl, Claims, Keyring, Role, Scope};
use rangeid_core::Namespace;

const USAGE: &str = "usage:
  rangeid-token token --role generator|reader|admin --ns NS[,NS...]|'*' --ttl 30d [--sub NAME] [--aud AUDIENCE] [--kid KID] [--keys FILE]
  rangeid-token keygen [--kid KID]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(out) => {
            println!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rangeid-token: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn flag<'a>(args: &'a [String], name: &str) -> Result<Option<&'a str>, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(None),
        Some(i) => args
            .get(i + 1)
            .map(|v| Some(v.as_str()))
            .ok_or_else(|| format!("{name} needs a value")),
    }
}

fn check_flags(args: &[String], known: &[&str]) -> Result<(), String> {
    let mut i = 0;
    while i < args.len() {
        if !known.contains(&args[i].as_str()) {
            return Err(format!("unknown argument {:?}", args[i]));
        }
        i += 2;
    }
    Ok(())
}

fn run(args: &[String]) -> Result<String, String> {
    match args.first().map(String::as_str) {
        Some("token") => token(&args[1..]),
        Some("keygen") => keygen(&args[1..]),
        _ => Err("expected a command: token or keygen".into()),
    }
}

fn keygen(args: &[String]) -> Result<String, String> {
    check_flags(args, &["--kid"])?;
    let kid = flag(args, "--kid")?.unwrap_or("local-1");
    let mut bytes = [0u8; 32];
    let mut f = std::fs::File::open("/dev/urandom").map_err(|e| format!("/dev/urandom: {e}"))?;
    std::io::Read::read_exact(&mut f, &mut bytes).map_err(|e| format!("/dev/urandom: {e}"))?;
    let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let map = serde_json::json!({ kid: key });
    // Validate what we print with the same rules the Worker applies.
    Keyring::from_json(&map.to_string()).map_err(|e| e.to_string())?;
    Ok(map.to_string())
}

fn token(args: &[String]) -> Result<String, String> {
    check_flags(
        args,
        &[
            "--role", "--ns", "--ttl", "--sub", "--aud", "--kid", "--keys",
        ],
    )?;
    let role = flag(args, "--role")?.ok_or("--role is required")?;
    let role = Role::parse(role).ok_or("--role must be generator, reader or admin")?;
    let ns = flag(args, "--ns")?.ok_or("--ns is required")?;
    let scope = if ns == "*" {
        Scope::All
    } else {
        Scope::Only(
            ns.split(',')
                .map(|n| Namespace::new(n.trim()).map_err(|e| format!("--ns {n:?}: {e}")))
                .collect::<Result<_, _>>()?,
        )
    };
    let ttl = flag(args, "--ttl")?.unwrap_or("30d");
    let ttl = parse_ttl(ttl).ok_or("--ttl must look like 30d, 12h, 15m or 90s")?;
    let sub = flag(args, "--sub")?.unwrap_or(match role {
        Role::Generator => "generator",
        Role::Reader => "reader",
        Role::Admin => "admin",
    });
    let text = match flag(args, "--keys")? {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?,
        None => std::env::var("RANGEID_SIGNING_KEYS")
            .map_err(|_| "no --keys FILE and no RANGEID_SIGNING_KEYS in the environment")?,
    };
    let keys: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&text).map_err(|e| format!("signing keys: {e}"))?;
    Keyring::from_json(&text).map_err(|e| e.to_string())?;
    let (kid, key) = match flag(args, "--kid")? {
        Some(kid) => keys
            .get_key_value(kid)
            .ok_or_else(|| format!("no key named {kid:?}"))?,
        None => keys.iter().next_back().ok_or("no signing keys")?,
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|_| "the clock is before 1970")?
        .as_secs();
    let claims = Claims {
        sub: sub.to_owned(),
        role,
        ns: scope,
        exp: now.saturating_add(ttl),
    };
    if claims.sub.is_empty()
        || claims.sub.len() > rangeid_authority::token::MAX_SUB_LEN
        || claims.sub.chars().any(char::is_control)
    {
        return Err("--sub must be 1 to 128 bytes without control characters".into());
    }
    let aud = flag(args, "--aud")?;
    if aud.is_some_and(|a| a.is_empty() || a.len() > 256) {
        return Err("--aud must be 1 to 256 characters".into());
    }
    Ok(mint_with(&claims, kid, key.as_bytes(), None, aud))
}
