// `rangeid deploy`: deploys the prebuilt authority (the npm package
// rangeid-authority) to Cloudflare with wrangler, the same bundle
// `rangeid dev` runs. The wrangler configuration is the package's template,
// written afresh on every run (so its Durable Object migrations always
// match the installed authority) into <state>/deploy/wrangler.toml. The
// signing keys (RANGEID_SIGNING_KEYS) go up with the version from
// --keys FILE (wrangler's --secrets-file), and the command says what to do
// when they are not given. `--dry-run` builds and checks it all offline.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { findAuthority, findWrangler, runSelf, stateFolder } from "./authority.mjs";

/** The command, for the rangeid command's table; `Exit` is its failure type. */
export function deployCommand({ Exit, out }) {
  const usage = (message) => new Exit(2, message);
  return {
    usage: "rangeid deploy [--dry-run] [--keys FILE] [--name NAME] [--domain HOST] [--cors-origins LIST] [-- WRANGLER_ARGS...]",
    about: `Deploys the prebuilt authority (the package rangeid-authority) to Cloudflare
with wrangler (npm install --save-dev wrangler; only this command needs it).
--keys FILE uploads the map in FILE (from \`rangeid keygen\`; keep it outside
the project) as the secret RANGEID_SIGNING_KEYS with this version, as the
authority holds it: Ed25519 keys' public halves only (keygen --alg EdDSA),
so the deployed Worker cannot mint; HS256 secrets as they are. Without
it the Worker keeps the keys it had, and a first deployment refuses every
request until they are set. --dry-run builds and checks everything and
uploads nothing (no account needed). Arguments after -- go to
\`wrangler deploy\` (e.g. -- --keep-vars); --name and --domain are written
into the generated configuration, so later wrangler commands given
--config .rangeid/deploy/wrangler.toml reach the same Worker.`,
    options: {
      "dry-run": { type: "boolean" },
      keys: { type: "string" },
      name: { type: "string" },
      domain: { type: "string" },
      "cors-origins": { type: "string" },
      outdir: { type: "string" },
      state: { type: "string" },
      authority: { type: "string" },
    },
    optionsHelp: `  --dry-run            build and check, upload nothing (wrangler deploy --dry-run)
  --keys FILE          the signing key map to upload as RANGEID_SIGNING_KEYS
  --name NAME          the Worker's name (default rangeid-authority)
  --domain HOST        serve on this Custom Domain only (a hostname in a zone
                       of the account): workers_dev = false, no preview URLs
  --cors-origins LIST  browser origins allowed to call the API, comma-separated;
                       give it on every deploy (a deploy without it sets none)
  --outdir DIR         keep the bundle wrangler makes in DIR
  --state DIR          where the generated configuration goes (default
                       $RANGEID_HOME or ./.rangeid; it holds no secret)
  --authority DIR      a rangeid-authority package folder (default: the one
                       installed in this project)`,
    local: true,
    passThrough: true,
    run: ({ values, passThrough }) => deploy(values, passThrough ?? [], { Exit, usage, out }),
  };
}

/** A TOML basic string (JSON's escapes are TOML's). */
const tomlString = (s) => JSON.stringify(s);

/** The template with main and the assets folder as absolute paths into the
 * installed package; with `domain`, served on that Custom Domain only
 * (`workers_dev = false`, no preview URLs), set before the first table. */
export function deployConfig(template, paths, { domain, name } = {}) {
  let section = "";
  let placed = domain === undefined;
  return template.split("\n").flatMap((line) => {
    const header = /^\s*\[+([^\]]*)\]+/.exec(line);
    if (header) section = header[1].trim();
    if (header && !placed) {
      placed = true;
      return [
        "# --domain: the Custom Domain only, no workers.dev or preview URL.",
        "workers_dev = false",
        "preview_urls = false",
        `routes = [{ pattern = ${tomlString(domain)}, custom_domain = true }]`,
        "",
        line,
      ];
    }
    if (section === "" && /^\s*main\s*=/.test(line)) return [`main = ${tomlString(paths.worker)}`];
    if (section === "" && name !== undefined && /^\s*name\s*=/.test(line)) return [`name = ${tomlString(name)}`];
    if (section === "assets" && /^\s*directory\s*=/.test(line)) return [`directory = ${tomlString(paths.assets)}`];
    return [line];
  }).join("\n");
}

/** Runs wrangler; a Ctrl-C (or SIGTERM, SIGHUP) while it runs goes to it
 * and `cleanup` still runs, so no secrets file outlives the command. */
function run(command, args, options, cleanup = () => {}) {
  return new Promise((done, reject) => {
    const child = spawn(command, args, { stdio: "inherit", ...options });
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
    const forward = (signal) => {
      cleanup();
      child.kill(signal);
    };
    for (const s of signals) process.on(s, forward);
    const settle = () => {
      for (const s of signals) process.off(s, forward);
      cleanup();
    };
    child.once("error", (e) => {
      settle();
      reject(e);
    });
    child.once("exit", (code, signal) => {
      settle();
      done({ code, signal });
    });
  });
}

async function deploy(values, wranglerArgs, { Exit, usage, out }) {
  const fail = (message) => new Exit(2, message);
  const dry = values["dry-run"] === true;
  const authority = findAuthority({ dir: values.authority, command: `deploy${dry ? " --dry-run" : ""}`, fail });
  const wrangler = findWrangler();
  if (!wrangler) {
    throw fail(`\`rangeid deploy\` uses wrangler, Cloudflare's deploy tool, which is not installed here (only this command needs it; \`rangeid dev\` does not).
Install the version this authority is tested with (it needs Node.js 22.12 or newer), then run this again:
  npm install --save-dev wrangler@${authority.testedWrangler}
  npx --no-install rangeid deploy --dry-run`);
  }
  const [major] = (wrangler.version ?? "0").split(".");
  if (major !== authority.testedWrangler.split(".")[0]) {
    process.stderr.write(`rangeid: warning: wrangler ${wrangler.version ?? "(version unknown)"} at ${wrangler.where}; this authority is tested with ${authority.testedWrangler} (npm install --save-dev wrangler@${authority.testedWrangler})\n`);
  }

  const home = stateFolder(values);
  // The signing keys: checked with the same parser that mints tokens.
  let keysText;
  if (values.keys !== undefined) {
    const keys = resolve(values.keys);
    if (!existsSync(keys)) throw usage(`--keys ${values.keys}: no such file (make one with: npx --no-install rangeid keygen --alg EdDSA --kid prod-1 --out ${values.keys})`);
    if (existsSync(join(home, "keys.json")) && realpathSync(keys) === realpathSync(join(home, "keys.json"))) {
      throw usage(`--keys ${values.keys} is rangeid dev's local key (its admin token was printed in a terminal); make a production key: npx --no-install rangeid keygen --alg EdDSA --kid prod-1 --out ~/rangeid-prod-keys.json`);
    }
    runSelf(["token", "--role", "admin", "--ns", "*", "--ttl", "60s", "--keys", keys], fail);
    if (!relative(process.cwd(), keys).startsWith("..")) {
      process.stderr.write(`rangeid: warning: ${values.keys} is inside this project; keep the production key out of version control (e.g. ~/rangeid-prod-keys.json)\n`);
    }
    // What the authority holds: Ed25519 keys' public halves (so the
    // deployed Worker cannot mint), HS256 secrets as they are.
    keysText = runSelf(["keygen", "--public", keys], fail);
  }

  // A Worker's name, as Cloudflare takes it: lowercase letters, digits and
  // dashes, at most 63, not starting or ending with a dash.
  if (values.name !== undefined && !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(values.name)) {
    throw usage(`--name ${JSON.stringify(values.name)} is not a Worker name (lowercase letters, digits and dashes, at most 63)`);
  }
  if (values.domain !== undefined && !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/i.test(values.domain)) {
    throw usage(`--domain ${JSON.stringify(values.domain)} is not a hostname (e.g. ids.example.com; no scheme, no path)`);
  }
  const dir = join(home, "deploy");
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "wrangler.toml");
  writeFileSync(config, `# Written by \`rangeid deploy\` from ${authority.paths.wranglerTemplate}\n# on every run; edit nothing here (pass flags instead).\n${deployConfig(readFileSync(authority.paths.wranglerTemplate, "utf8"), authority.paths, { domain: values.domain, name: values.name })}`);

  const args = [...wrangler.args, "deploy", "--config", config];
  if (dry) args.push("--dry-run");
  if (values.outdir !== undefined) args.push("--outdir", resolve(values.outdir));
  if (values["cors-origins"] !== undefined) args.push("--var", `RANGEID_CORS_ORIGINS:${values["cors-origins"]}`);
  let secrets;
  if (keysText !== undefined) {
    secrets = mkdtempSync(join(tmpdir(), "rangeid-deploy-"));
    writeFileSync(join(secrets, "secrets.json"), JSON.stringify({ RANGEID_SIGNING_KEYS: keysText }), { mode: 0o600 });
    args.push("--secrets-file", join(secrets, "secrets.json"));
  }
  args.push(...wranglerArgs);

  process.stderr.write(`rangeid deploy: rangeid-authority ${authority.version} with wrangler ${wrangler.version ?? ""}${dry ? " (dry run: nothing is uploaded)" : ""}\n`);
  const removeSecrets = () => {
    if (secrets) rmSync(secrets, { recursive: true, force: true });
  };
  let result;
  try {
    result = await run(wrangler.command, args, { cwd: process.cwd() }, removeSecrets);
  } finally {
    removeSecrets();
  }
  if (result.code !== 0) throw new Exit(1, `wrangler deploy failed (${result.signal ?? `exit status ${result.code}`}); its messages are above`);

  const keysLine = keysText !== undefined
    ? `RANGEID_SIGNING_KEYS: ${dry ? "would go up" : "uploaded"} with this version, from ${values.keys}`
    : `RANGEID_SIGNING_KEYS: not given, so ${dry ? "a deployment would keep" : "the Worker keeps"} the keys it had. A first deployment
refuses every request until they are set; make a key outside the project and deploy with it:
  npx --no-install rangeid keygen --alg EdDSA --kid prod-1 --out ~/rangeid-prod-keys.json
  npx --no-install rangeid deploy --keys ~/rangeid-prod-keys.json`;
  out(`${dry ? "rangeid deploy: dry run done; nothing was uploaded (the configuration: " + config + ")" : "rangeid deploy: deployed"}
${keysLine}
then an admin token for the admin page (https://<your worker>/admin/#token=<token>) and the API:
  npx --no-install rangeid token --role admin --ns '*' --ttl 1d --sub ops --keys ${values.keys ?? "~/rangeid-prod-keys.json"}`);
}
