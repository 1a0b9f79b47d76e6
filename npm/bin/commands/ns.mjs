// rangeid ns ...: create, list, show, freeze and unfreeze, export and
// import, floor and limits of namespaces.
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { call, needCount, needDecimal, needNamespace, needReason, nsPath, ok, query } from "../api.mjs";
import { Exit, out, usage } from "../exit.mjs";
import { exhaustionText, limitsPairs, pairs, percentLeft, rate, summaryText, table } from "../summary.mjs";

// A namespace's default max and the largest maxCount: 2^53 - 1, exact in JS.
const DEFAULT_MAX = "9007199254740991";
const MAX_COUNT = "9007199254740991";

/** Every page of the namespace listing, following nextAfter. */
export async function allNamespaces(conn, pageSize = "1000") {
  const namespaces = [];
  let after;
  for (let page = 0; page < 100_000; page++) {
    const body = ok(await call(conn, "GET", `v1/namespaces${query({ limit: pageSize, after })}`));
    namespaces.push(...body.namespaces);
    // A page may be empty (names whose object is gone) and still have a next one.
    if (body.nextAfter === null || body.nextAfter === after) break;
    after = body.nextAfter;
  }
  return namespaces;
}

export function namespacesTable(list) {
  return table(
    ["NAMESPACE", "STATE", "NEXT", "REMAINING", "LEFT", "IDS/S (1H)", "EXHAUSTION"],
    list.map((s) => [s.namespace, s.state, s.next, s.remaining, percentLeft(s), rate(s.grantRate.lastHour.idsPerSecond), exhaustionText(s)]),
  );
}

/** `ns freeze` and `ns unfreeze`: one entry, the action its only difference. */
export function stateCommand(action, about) {
  return {
    usage: `rangeid ns ${action} NAME --reason TEXT`,
    about,
    args: ["NAME"],
    options: { reason: { type: "string" } },
    optionsHelp: "  --reason TEXT  why (1 to 256 printable characters); kept in the audit log",
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const body = JSON.stringify({ reason: needReason(values.reason) });
      const res = await call(conn, "POST", `${nsPath(name)}/${action}`, { body });
      const state = ok(res).state;
      out(values.json ? res.text : `${name}: ${state}`);
    },
  };
}

/** The commands of this module, by name. */
export const nsCommands = {
  "ns create": {
    usage: "rangeid ns create NAME [--first N] [--max N] [--max-count N]",
    about: `Creates a namespace (admin). Creating it again with the same configuration
succeeds and changes nothing; another configuration is refused
(namespace_exists).`,
    args: ["NAME"],
    options: { first: { type: "string" }, max: { type: "string" }, "max-count": { type: "string" } },
    optionsHelp: `  --first N      the first ID (default 1)
  --max N        the last ID, inclusive (default 2^53 - 1; up to 2^64 - 1)
  --max-count N  the most IDs one grant may hold (default 10,000,000)`,
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      if (values.first !== undefined) needDecimal("--first", values.first);
      if (values.max !== undefined) needDecimal("--max", values.max);
      needCount("--max-count", values["max-count"], MAX_COUNT);
      const first = BigInt(values.first ?? "1");
      const max = BigInt(values.max ?? DEFAULT_MAX);
      if (max < first) {
        throw usage(values.max === undefined
          ? `--first ${first} is above the default --max (${DEFAULT_MAX}, 2^53 - 1); pass --max`
          : `--max ${max} is below --first ${first}`);
      }
      // Written by hand: IDs as strings, maxCount as the digits given (never rounded).
      const fields = [`"namespace":${JSON.stringify(name)}`];
      if (values.first !== undefined) fields.push(`"first":"${values.first}"`);
      if (values.max !== undefined) fields.push(`"max":"${values.max}"`);
      if (values["max-count"] !== undefined) fields.push(`"maxCount":${BigInt(values["max-count"])}`);
      const res = await call(conn, "POST", "v1/namespaces", { body: `{${fields.join(",")}}` });
      const body = ok(res, [200, 201]);
      if (values.json) return out(res.text);
      out(`${res.status === 201 ? "created" : "exists already, with this configuration:"} ${name}\n${summaryText(body)}`);
    },
  },

  "ns list": {
    usage: "rangeid ns list [--limit N] [--after NAME]",
    about: `Lists the namespaces the token may read (reader), by name. Without --limit or
--after it follows every page; with them it prints that one page (and, with
--json, the authority's document as is, nextAfter included).`,
    options: { limit: { type: "string" }, after: { type: "string" } },
    optionsHelp: `  --limit N     namespaces per page, 1 to 1000
  --after NAME  the previous page's nextAfter`,
    async run({ values, conn }) {
      needCount("--limit", values.limit, 1000);
      if (values.after !== undefined) needNamespace(values.after);
      if (values.limit !== undefined || values.after !== undefined) {
        const res = await call(conn, "GET", `v1/namespaces${query({ limit: values.limit, after: values.after })}`);
        const body = ok(res);
        if (values.json) return out(res.text);
        out(namespacesTable(body.namespaces));
        if (body.nextAfter !== null) out(`more: rangeid ns list --after ${body.nextAfter}${values.limit ? ` --limit ${values.limit}` : ""}`);
        return;
      }
      const namespaces = await allNamespaces(conn);
      if (values.json) return out(JSON.stringify({ namespaces, nextAfter: null }));
      out(namespaces.length ? namespacesTable(namespaces) : "no namespaces");
    },
  },

  "ns show": {
    usage: "rangeid ns show NAME",
    about: "Shows a namespace's summary (reader): bounds, what is left, grant rates, time to exhaustion, the fence.",
    args: ["NAME"],
    async run({ values, args, conn }) {
      const res = await call(conn, "GET", nsPath(needNamespace(args[0])));
      const body = ok(res);
      out(values.json ? res.text : summaryText(body));
    },
  },

  "ns freeze": stateCommand("freeze", "Freezes a namespace (admin): it refuses new grants (423) but still answers replays. Audited with the reason."),

  "ns unfreeze": stateCommand("unfreeze", `Unfreezes a namespace (admin): grants resume. Audited with the reason.
A namespace exported from here (ns export) is retired here and stays frozen
(namespace_exported): import its document on the destination to use it.`),

  "ns export": {
    usage: "rangeid ns export NAME --reason TEXT [--out FILE]",
    about: `Exports a namespace to move it to another authority (admin): the authority
reads its witness's mark, freezes the namespace and answers its export
document (configuration, next, fence, witness mark, where the destination
starts, a SHA-256 check), audited with the reason. Prints the document, or
writes it to a new FILE. The namespace stays frozen here: import the document
on the destination with \`rangeid ns import FILE\`.`,
    args: ["NAME"],
    options: { reason: { type: "string" }, out: { type: "string" } },
    optionsHelp: `  --reason TEXT  why (1 to 256 printable characters); kept in both audit logs
  --out FILE     write the document to FILE (never over an existing file)
                 instead of stdout`,
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const reason = needReason(values.reason);
      const res = await call(conn, "POST", `${nsPath(name)}/export`, { body: JSON.stringify({ reason }) });
      const doc = ok(res);
      const text = res.text.endsWith("\n") ? res.text : `${res.text}\n`;
      if (values.out === undefined) out(text);
      else {
        let fd;
        try {
          fd = openSync(values.out, "wx", 0o600);
        } catch (e) {
          if (e.code === "EEXIST") throw usage(`${values.out} exists; export never overwrites a file (the namespace is exported and frozen: export again to a new file)`);
          throw usage(`${values.out}: ${e.message}`);
        }
        try {
          writeSync(fd, text);
        } finally {
          closeSync(fd);
        }
      }
      process.stderr.write(`rangeid: exported ${name} (next ${doc.next}, fence ${doc.fence}, witness ${doc.witness}); the destination starts at ${doc.start}. ${name} stays frozen here.\n`);
    },
  },

  "ns import": {
    usage: "rangeid ns import FILE [--as NAME]",
    about: `Creates a namespace from an export document (admin), with its next at the
document's start: never below any ID the source granted, with the limits the
document carries (format 2; relays start off: the command says when they were
on at the source). FILE is the
document as \`rangeid ns export\` wrote it ('-' reads stdin). The authority
refuses, changing nothing: a document edited or cut (export_invalid), not a
rangeid export or of another version (export_unsupported), another
namespace's (export_namespace_mismatch), one imported here already
(already_imported), a namespace that exists (namespace_exists).`,
    args: ["FILE"],
    options: { as: { type: "string" } },
    optionsHelp: "  --as NAME  the namespace to import into (default: the document's); must be the document's",
    async run({ values, args, conn }) {
      let text;
      try {
        text = readFileSync(args[0] === "-" ? 0 : args[0], "utf8");
      } catch (e) {
        throw usage(`${args[0]}: ${e.message}`);
      }
      let name = values.as;
      let doc;
      try {
        doc = JSON.parse(text);
      } catch {
        if (name === undefined) throw usage(`${args[0]} is not an export document (not JSON); pass --as NAME to send it anyway`);
      }
      if (name === undefined) {
        if (typeof doc?.namespace !== "string") throw usage(`${args[0]} is not an export document (no namespace); pass --as NAME to send it anyway`);
        name = doc.namespace;
      }
      needNamespace(name);
      const res = await call(conn, "POST", `${nsPath(name)}/import`, { body: text });
      const body = ok(res, [201]);
      out(values.json ? res.text : `imported ${name}\n${summaryText(body)}`);
      // Relays start off at the destination (turning them on raises its
      // witness first: an admin act of its own).
      if (doc?.settings?.relays === true) {
        process.stderr.write(`rangeid: relays were on at the source; they start off here: turn them on with \`rangeid ns relays ${name} on --reason TEXT\`\n`);
      }
    },
  },

  "ns floor": {
    usage: "rangeid ns floor NAME --to N",
    about: `Raises a namespace's next ID to N (admin); a floor never lowers it
(floor_below_next). After restoring a whole system from a backup, raise
every namespace's floor past every ID in use before letting generators in.`,
    args: ["NAME"],
    options: { to: { type: "string" } },
    optionsHelp: "  --to N  the new next ID (a decimal integer up to 2^64 - 1)",
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const floor = needDecimal("--to", values.to);
      const res = await call(conn, "POST", `${nsPath(name)}/floor`, { body: `{"floor":"${floor}"}` });
      const body = ok(res);
      out(values.json ? res.text : `${name}: next is now ${body.next} (${body.remaining} IDs remain)`);
    },
  },

  "ns relays": {
    usage: "rangeid ns relays NAME on|off --reason TEXT",
    about: `Turns a namespace's relays on or off (admin; audited as relays). With
relays on, generators take sub-ranges from a relay of their region, in memory,
and the namespace object sees a request per relay range instead of one per
generator range (docs/relays.md). Turning them off is acknowledged once no
relay can still hand out a range it held.`,
    args: ["NAME", "SETTING"],
    options: { reason: { type: "string" } },
    optionsHelp: "  --reason TEXT  why (1 to 256 printable characters); kept in the audit log",
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const setting = args[1];
      if (setting !== "on" && setting !== "off") throw new Exit(2, `relays must be on or off (got ${JSON.stringify(setting ?? "")})`);
      const body = JSON.stringify({ relays: setting, reason: needReason(values.reason) });
      const res = await call(conn, "POST", `${nsPath(name)}/relays`, { body });
      const summary = ok(res);
      out(values.json ? res.text : `${name}: relays ${summary.relays}`);
    },
  },

  "ns limits": {
    usage: "rangeid ns limits NAME [--grants-per-second N] [--ledger-rows N] [--sub-ledger-rows N]",
    about: `Shows a namespace's limits on what callers add and what its grant ledger holds
(reader), or changes them (admin; audited as limits). Each token sub takes at
most --grants-per-second new grants a second and holds at most
--sub-ledger-rows ledger rows; the ledger holds at most --ledger-rows rows.
Past one, a grant is refused 429 (rate_limited, ledger_full) with Retry-After,
which generators wait out. "default" puts a limit back to the default; a
limit not given is kept.`,
    args: ["NAME"],
    options: { "grants-per-second": { type: "string" }, "ledger-rows": { type: "string" }, "sub-ledger-rows": { type: "string" } },
    optionsHelp: `  --grants-per-second N  new grants per second per sub, 1 to 1000000 (default 5000)
  --ledger-rows N        rows the ledger may hold, 1 to 1000000000 (default 32000000)
  --sub-ledger-rows N    rows one sub may hold, at most --ledger-rows (default 8000000)`,
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const fields = [];
      for (const [flag, key, max] of [["grants-per-second", "grantsPerSecond", 1_000_000], ["ledger-rows", "ledgerRows", 1_000_000_000], ["sub-ledger-rows", "subLedgerRows", 1_000_000_000]]) {
        const v = values[flag];
        if (v === undefined) continue;
        fields.push(`"${key}":${v === "default" ? "null" : needCount(`--${flag}`, v, max)}`);
      }
      const res = fields.length
        ? await call(conn, "POST", `${nsPath(name)}/limits`, { body: `{${fields.join(",")}}` })
        : await call(conn, "GET", nsPath(name));
      const body = ok(res);
      if (values.json) return out(res.text);
      if (!body.limits) throw new Exit(1, `${conn.base.origin} has no limits (an authority from before them)`);
      out(pairs([["namespace", body.namespace], ...limitsPairs(body)]));
    },
  },

};
