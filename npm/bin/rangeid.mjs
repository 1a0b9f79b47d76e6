#!/usr/bin/env node
// rangeid: the command line of the rangeid package. Makes signing keys and
// tokens (locally, with the authority's rules) and talks to an authority's
// admin API (namespaces, grants, lookups, audit, status).
//
//   npx rangeid --help                  (in a project that installed rangeid)
//   node npm/bin/rangeid.mjs --help     (from a clone of the repository)
//
// Node's built-ins only. IDs are decimal strings from end to end: nothing
// here turns one into a JS number (capacity and percentages use BigInt).
//
// This file is the dispatch and the help; the commands live in commands/
// (tokens, ns, ledger, dev, deploy), the API calls in api.mjs, the text of
// documents in summary.mjs, shares and durations in format.mjs (the admin
// page's too), key maps and minting in keys.mjs.
//
// Exit status: 0 done; 1 the authority refused (its code and message on
// stderr) or is unhealthy; 2 usage error or bad local input (flags, names,
// the keys file); 3 the authority could not be reached, or what answered
// is not an authority.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { connection } from "./api.mjs";
import { deployCommand } from "./commands/deploy.mjs";
import { devCommand } from "./commands/dev.mjs";
import { ledgerCommands } from "./commands/ledger.mjs";
import { nsCommands } from "./commands/ns.mjs";
import { tokenCommands } from "./commands/tokens.mjs";
import { Exit, out, usage } from "./exit.mjs";

const VERSION = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
// Options whose values are numbers or durations, never negative: "--to -5"
// gets a plain message. Text options keep parseArgs' advice (--reason=-x).
const NUMERIC_FLAGS = new Set(["--to", "--first", "--max", "--max-count", "--limit", "--before", "--page-size", "--ttl"]);

// ---------------------------------------------------------------- commands

const common = {
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" },
};
const COMMON_HELP = `Options:
  --url URL      the authority (default: $RANGEID_URL), e.g. http://127.0.0.1:8787
  --token TOKEN  a token for it (default: $RANGEID_TOKEN; prefer the variable:
                 a flag shows in ps and in shell history)
  --json         print the authority's JSON document instead of text
  -h, --help     this help`;


const COMMANDS = {
  ...tokenCommands,
  dev: devCommand({ Exit, out }),
  deploy: deployCommand({ Exit, out }),
  ...nsCommands,
  ...ledgerCommands,
};

// ---------------------------------------------------------------- dispatch

const GROUPS = { ns: ["create", "list", "show", "freeze", "unfreeze", "floor", "limits", "export", "import"] };
// Long names of groups.
const ALIASES = { namespace: "ns" };

const MAIN_HELP = `rangeid ${VERSION}: keys, tokens and the authority's admin API from the shell

Usage: rangeid <command> [options]        (npx --no-install rangeid ..., or node npm/bin/rangeid.mjs ... from a clone)

Keys and tokens (local; nothing is sent anywhere):
  keygen [--alg HS256|EdDSA] [--kid KID] [--out FILE]   a new signing key map
  keygen --add FILE | --public FILE          add a key to a map; the authority's map
  token --role R --ns LIST [--ttl 30d] ...   a token, printed alone

The prebuilt authority (npm install --save-dev rangeid-authority):
  dev [--port N] [--state DIR]               run it locally on workerd (no Rust, no wrangler)
  deploy [--dry-run] [--keys FILE] ...       deploy it to Cloudflare with wrangler

The authority (--url or RANGEID_URL, --token or RANGEID_TOKEN):
  status                                      health, the token, every namespace on one screen
  ns create NAME [--first N] [--max N] [--max-count N]     admin
  ns list [--limit N] [--after NAME]                       reader
  ns show NAME                                             reader
  ns freeze NAME --reason TEXT                             admin
  ns unfreeze NAME --reason TEXT                           admin
  ns floor NAME --to N                                     admin
  ns relays NAME on|off --reason TEXT                      admin: relays (docs/relays.md)
  ns export NAME --reason TEXT [--out FILE]                admin: freeze, print the document
  ns import FILE [--as NAME]                               admin: create from a document
  ns limits NAME [--grants-per-second N] [--ledger-rows N] [--sub-ledger-rows N]
                                             reader; admin to change
  grants NAME [--limit N] [--before START]                 reader
  lookup NAME ID                                           reader
  audit NAME [--limit N] [--before ID]                     admin

\`namespace\` is a synonym of \`ns\`. Every authority command takes --json (the authority's JSON, one document) and
prints IDs exactly as decimal strings. \`rangeid <command> --help\` for more.

Exit status: 0 done; 1 the authority refused (its code and message on stderr)
or is unhealthy; 2 usage error or bad local input; 3 the authority could not be
reached, or what answered is not an authority.`;

function commandHelp(name) {
  const c = COMMANDS[name];
  const options = [c.optionsHelp, c.local ? "  -h, --help  this help" : COMMON_HELP.replace(/^Options:\n/, "")].filter(Boolean).join("\n");
  return `Usage: ${c.usage}\n\n${c.about}\n\nOptions:\n${options}\n`;
}

const STRING_OPTIONS = new Set(
  Object.values(COMMANDS).flatMap((c) => Object.entries({ ...common, ...c.options }).filter(([, o]) => o.type === "string").map(([k]) => k)),
);

/** Splits argv into the command's words and the rest (options may come anywhere). */
function split(argv) {
  const words = [];
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (a.startsWith("-") && a !== "-") {
      rest.push(a);
      if (a.startsWith("--") && !a.includes("=") && STRING_OPTIONS.has(a.slice(2)) && i + 1 < argv.length) rest.push(argv[++i]);
      continue;
    }
    // A command is one word, or a group and its subcommand; `help` takes either.
    const path = words[0] === "help" ? words.slice(1) : words;
    const complete = words.length > 0 && (path.length === 2 || (path.length === 1 && !(path[0] in GROUPS)));
    if (!complete) words.push(path.length === 0 && Object.hasOwn(ALIASES, a) ? ALIASES[a] : a);
    else rest.push(a);
  }
  return { words, rest };
}

async function main(argv) {
  const { words, rest } = split(argv);
  if (words.length === 0) {
    if (rest.includes("--version") || rest.includes("-v")) return out(VERSION);
    if (rest.length === 0 || rest.includes("--help") || rest.includes("-h")) return out(MAIN_HELP);
    throw usage(`expected a command before ${rest[0]}`);
  }
  if (words[0] === "help") {
    const name = words.slice(1).join(" ");
    if (!name) return out(MAIN_HELP);
    if (COMMANDS[name]) return out(commandHelp(name));
    if (GROUPS[name]) return out(groupHelp(name));
    throw usage(`no command ${JSON.stringify(name)}`);
  }
  if (words[0] in GROUPS && words.length === 1) {
    if (rest.includes("--help") || rest.includes("-h")) return out(groupHelp(words[0]));
    throw usage(`${words[0]} needs a subcommand: ${GROUPS[words[0]].join(", ")}`);
  }
  const name = words.join(" ");
  const command = COMMANDS[name];
  if (!command) throw usage(`unknown command ${JSON.stringify(name)}`);
  // What follows `--` goes, as it is, to the program a command runs (deploy: wrangler).
  const cut = command.passThrough ? rest.indexOf("--") : -1;
  const passThrough = cut === -1 ? undefined : rest.slice(cut + 1);
  let parsed;
  try {
    parsed = parseArgs({
      args: cut === -1 ? rest : rest.slice(0, cut),
      options: { ...(command.local ? {} : common), ...command.options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    // `--to -5`: parseArgs takes a value starting with "-" for an option.
    const ambiguous = /^Option '(--[a-z-]+)[^']*' argument is ambiguous/.exec(e.message);
    if (ambiguous && NUMERIC_FLAGS.has(ambiguous[1])) {
      throw usage(`${ambiguous[1]} needs a value, and values here are never negative (got one starting with "-")`);
    }
    throw usage(e.message);
  }
  const { values, positionals } = parsed;
  if (values.help) return out(commandHelp(name));
  const expected = command.args ?? [];
  if (positionals.length > expected.length) throw usage(`unexpected argument ${JSON.stringify(positionals[expected.length])}`);
  if (positionals.length < expected.length) throw usage(`missing ${expected.slice(positionals.length).join(" ")}`);
  const conn = command.local ? undefined : connection(values);
  await command.run({ values, args: positionals, conn, passThrough });
}

function groupHelp(group) {
  return `Usage: rangeid ${group} <${GROUPS[group].join("|")}> ...\n\n${GROUPS[group].map((s) => `  ${COMMANDS[`${group} ${s}`].usage.replace(/^rangeid /, "")}`).join("\n")}\n\n\`rangeid ${group} <subcommand> --help\` for more.\n`;
}

// `rangeid ns list | head -1`: a closed pipe ends the command quietly.
process.stdout.on("error", (e) => {
  if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw e;
});

main(process.argv.slice(2)).catch((e) => {
  if (!(e instanceof Exit)) {
    // A bug, not a refusal: show where.
    process.stderr.write(`rangeid: ${e?.stack ?? e}\n`);
    process.exitCode = 1;
    return;
  }
  if (e.document && process.argv.includes("--json")) out(e.document);
  process.stderr.write(`rangeid: ${e.message}\n`);
  if (e.status === 2) process.stderr.write("(rangeid --help for usage)\n");
  process.exitCode = e.status;
});
