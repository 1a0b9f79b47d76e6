// rangeid keygen and rangeid token: signing key maps and tokens, made
// locally with the authority's rules (keys.mjs); nothing is sent anywhere.
import { closeSync, existsSync, fchmodSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { authorityMap, datedKid, KeysError, KID_RE, MAX_TTL_SECONDS, keyMapText, mintToken, newKey, parseKeyMap } from "../keys.mjs";
import { out, usage } from "../exit.mjs";

/** `fn()`, with a refusal of bad local input (keys.mjs) as a usage error (exit 2). */
function local(fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof KeysError) throw usage(e.message);
    throw e;
  }
}

/** The text of a file named by a flag; a read error is a usage error. */
function readFlagFile(flag, file) {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw usage(`${flag} ${file}: ${e.message}`);
  }
}

/** Writes `text` to a new `file` with mode 0600; never over an existing file. */
function writeNewSecretFile(file, text) {
  let fd;
  try {
    fd = openSync(file, "wx", 0o600);
  } catch (e) {
    if (e.code === "EEXIST") throw usage(`${file} exists; keygen never overwrites a key file`);
    throw usage(`${file}: ${e.message}`);
  }
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Replaces `file` with `text` at once (a new file, mode 0600, renamed over it). */
function replaceSecretFile(file, text) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeNewSecretFile(tmp, text);
  try {
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw usage(`${file}: ${e.message}`);
  }
}

const DAYS = (role) => `${MAX_TTL_SECONDS[role] / 86_400}d`;

/** The commands of this module, by name. */
export const tokenCommands = {
  keygen: {
    usage: "rangeid keygen [--alg HS256|EdDSA] [--kid KID] [--out FILE | --add FILE] | keygen --public FILE [--out FILE]",
    about: `Makes signing keys, in the key map format the authority reads from
RANGEID_SIGNING_KEYS and \`rangeid token\` signs with: a JSON object of kid ->
key, each key with its creation time (\`token\` signs with the newest).

  keygen [--alg A] [--kid KID] [--out FILE]   a new map with one new key
  keygen --add FILE [--alg A] [--kid KID]     adds a new key to the map in FILE
  keygen --public FILE [--out FILE]           the map the authority holds

HS256 (the default) is a shared secret: the authority holds the same key and
could mint with it. EdDSA is an Ed25519 key pair: the map keygen writes holds
both halves and stays with whoever mints; the authority holds only the
public halves (--public), so a leak of its configuration mints nothing. Both
kinds may sit in one map during a rotation.

To rotate: keygen --add FILE; give the authority the new map (--public);
mint new tokens (the newest key signs them); once no old token is in use,
remove the old kid from FILE and give the authority the map again. Maps are
written with mode 0600, never over an existing file (--add replaces FILE at
once, atomically).`,
    options: {
      kid: { type: "string" }, out: { type: "string" }, alg: { type: "string" },
      add: { type: "string" }, public: { type: "string" },
    },
    optionsHelp: `  --alg A        HS256 (a shared secret, the default) or EdDSA (Ed25519)
  --kid KID      the new key's name, 1 to 64 of A-Z a-z 0-9 . _ - (default:
                 local-1 for a new map, key-YYYYMMDD-HHMMSS (UTC) with --add)
  --out FILE     write to a new FILE (mode 0600) instead of stdout
  --add FILE     add the new key to the map in FILE, keeping its other keys
  --public FILE  print the map in FILE as the authority holds it: Ed25519 keys'
                 public halves, HS256 secrets as they are (keep those secret)`,
    local: true,
    async run({ values }) {
      if (values.public !== undefined) {
        for (const f of ["add", "alg", "kid"]) if (values[f] !== undefined) throw usage(`--public takes no --${f}`);
        const { text, secrets } = local(() => authorityMap(parseKeyMap(readFlagFile("--public", values.public))));
        if (values.out === undefined) out(`${text}\n`);
        else writeNewSecretFile(values.out, `${text}\n`);
        if (secrets) process.stderr.write("rangeid: this map holds HS256 secrets, which the authority needs as they are; keep it secret\n");
        return;
      }
      if (values.add !== undefined && values.out !== undefined) throw usage("--add writes FILE itself; it takes no --out");
      const now = Math.floor(Date.now() / 1000);
      const kid = values.kid ?? (values.add === undefined ? "local-1" : datedKid(now));
      if (!KID_RE.test(kid)) throw usage(`--kid ${JSON.stringify(kid)}: a kid is 1 to 64 of A-Z a-z 0-9 . _ -`);
      if (values.add !== undefined) {
        if (!existsSync(values.add)) throw usage(`--add ${values.add}: no such file (make a new map with keygen --out)`);
        const entries = local(() => parseKeyMap(readFlagFile("--add", values.add)));
        // A rotation keeps the map's kind unless --alg says otherwise: the
        // newest key's (an EdDSA map must not gain an HS256 secret unasked).
        const newest = entries.reduce((a, e) => ((e.created ?? -1) >= (a?.created ?? -1) ? e : a), undefined);
        const key = local(() => newKey(values.alg ?? newest?.alg ?? "HS256", now));
        if (entries.some((e) => e.kid === kid)) throw usage(`--add ${values.add}: it already has a key named ${JSON.stringify(kid)}; pick another --kid`);
        replaceSecretFile(values.add, `${keyMapText([...entries, { kid, value: key }])}\n`);
        process.stderr.write(`rangeid: added ${key.alg} key ${kid} to ${values.add}; \`rangeid token\` now signs with it\n`);
        return;
      }
      const key = local(() => newKey(values.alg, now));
      const text = `${keyMapText([{ kid, value: key }])}\n`;
      if (values.out === undefined) return out(text);
      writeNewSecretFile(values.out, text);
      process.stderr.write(`rangeid: wrote a new ${key.alg} signing key to ${values.out} (mode 0600); keep it secret\n`);
    },
  },

  token: {
    usage: "rangeid token --role generator|reader|admin|relay --ns NS[,NS...]|'*' [--ttl 30d] [--sub NAME] [--aud AUDIENCE] [--kid KID] [--keys FILE]",
    about: `Mints a token for the authority and prints the token alone: HS256 or EdDSA,
as its key is. Keys come from --keys FILE (a key map, as keygen writes it) or
the RANGEID_SIGNING_KEYS environment variable; the newest key signs unless
--kid names one.

A generator's sub is who its requests belong to: the authority identifies a
grant request by (sub, incarnation, requestId). Without --sub, a generator
token gets a unique sub (generator-<16 hex digits>, printed on stderr), so
no two generators share one. When you rotate a generator's token (a new key,
a new expiry), keep its sub: its retries then replay exactly. A changed sub
is safe too, but a request in flight during the switch is then a new
request, and the IDs of its first grant are skipped (a gap, never a
duplicate).`,
    options: {
      role: { type: "string" }, ns: { type: "string" }, ttl: { type: "string" }, sub: { type: "string" },
      aud: { type: "string" }, kid: { type: "string" }, keys: { type: "string" },
    },
    optionsHelp: `  --role R     generator (takes ranges), reader (reads), admin (reads, creates,
               freezes, floors), relay (takes ranges for the generators routed
               to it, only while the namespace's relays are on); required
  --ns LIST    namespaces, comma-separated, or '*' for all; required
  --ttl T      lifetime: 30d, 12h, 15m, 90s or seconds (default 30d); at most
               ${DAYS("generator")} for a generator, a reader or a relay, ${DAYS("admin")} for an admin (the
               authority refuses longer-lived tokens)
  --sub NAME   who holds it, 1 to 128 bytes; recorded with grants and in the
               audit log (default: a unique generator-<hex> for a generator,
               printed on stderr; the role's name otherwise). A generator's
               rotated token must keep its sub.
  --aud A      audience, when the authority sets RANGEID_TOKEN_AUDIENCE
  --kid KID    the key to sign with (default: the newest by its creation time)
  --keys FILE  the key map (default: $RANGEID_SIGNING_KEYS)`,
    local: true,
    async run({ values }) {
      const keysText = values.keys !== undefined ? readFlagFile("--keys", values.keys) : process.env.RANGEID_SIGNING_KEYS;
      const minted = local(() => mintToken({ ...values, keysText }));
      out(minted.token);
      if (minted.generatedSub) {
        process.stderr.write(`rangeid: sub ${minted.sub} (unique, as no --sub was given); mint this generator's next token with --sub ${minted.sub}\n`);
      }
    },
  },

  // The prebuilt authority (the package rangeid-authority): bin/commands/.
};
