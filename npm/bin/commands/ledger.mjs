// rangeid grants, lookup, audit and status: what a namespace has granted,
// who got an ID, its audit log, and the authority at a glance.
import { call, needCount, needDecimal, needNamespace, nsPath, ok, pagedList, query } from "../api.mjs";
import { Exit, out } from "../exit.mjs";
import { compact, pairs } from "../summary.mjs";
import { duration } from "../format.mjs";
import { allNamespaces, namespacesTable } from "./ns.mjs";

/** The commands of this module, by name. */
export const ledgerCommands = {
  grants: {
    usage: "rangeid grants NAME [--limit N] [--before START]",
    about: "Lists a namespace's retained grants (reader), newest first, with the token sub that took each.",
    args: ["NAME"],
    options: { limit: { type: "string" }, before: { type: "string" } },
    optionsHelp: `  --limit N       grants per page, 1 to 1000 (default 100)
  --before START  the previous page's nextBefore`,
    run: (ctx) => pagedList(ctx, {
      command: "grants",
      empty: "no retained grants",
      header: ["START", "END", "COUNT", "INCARNATION", "REQUEST", "SUB", "AT"],
      row: (g) => [g.start, g.end, g.count, g.incarnation, g.requestId, g.sub, g.at],
    }),
  },

  lookup: {
    usage: "rangeid lookup NAME ID",
    about: "Finds the retained grant holding ID (reader): who took it, when, and under which incarnation.",
    args: ["NAME", "ID"],
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const id = needDecimal("ID", args[1]);
      const res = await call(conn, "GET", `${nsPath(name)}/lookup${query({ id })}`);
      const g = ok(res);
      if (values.json) return out(res.text);
      out(pairs([
        ["id", g.id],
        ["namespace", g.namespace],
        ["range", `[${g.start}, ${g.end}) (${g.count} IDs)`],
        ["incarnation", g.incarnation],
        ["requestId", g.requestId],
        ["sub", g.sub],
        ["at", g.at],
        // An ID a relay handed out (authorities with relays): the relay's
        // grant that held it, and whether its report named the generator.
        ...(g.relay ? [["relay", `${g.relay.sub}: [${g.relay.start}, ${g.relay.end}) under ${g.relay.incarnation}; ${
          g.relay.reported ? `reported ${g.relay.reportedAt ?? ""}`.trim() : "not reported: no report names a generator (the relay may still hold this ID, may have abandoned it unused, or its report was lost)"}`]] : []),
      ]));
    },
  },

  audit: {
    usage: "rangeid audit NAME [--limit N] [--before ID]",
    about: "Lists a namespace's audit entries (admin), newest first: create, floor, freeze, unfreeze, limits, export, import, fence_forward, witness_behind.",
    args: ["NAME"],
    options: { limit: { type: "string" }, before: { type: "string" } },
    optionsHelp: `  --limit N    entries per page, 1 to 1000 (default 100)
  --before ID  the previous page's nextBefore`,
    run: (ctx) => pagedList(ctx, {
      command: "audit",
      empty: "no audit entries",
      header: ["ID", "AT", "ACTOR", "ACTION", "BEFORE", "AFTER", "REASON"],
      row: (a) => [a.id, a.at, a.actor, a.action, compact(a.before), compact(a.after), a.reason ?? "-"],
    }),
  },

  status: {
    usage: "rangeid status [--page-size N]",
    about: `One screen: the authority's health, who the token is, and every namespace it
may read with its state, exact capacity left and time to exhaustion at the
last hour's rate. Needs a reader or admin token for the namespaces.`,
    options: { "page-size": { type: "string" } },
    optionsHelp: "  --page-size N  namespaces per listing request, 1 to 1000 (default 1000)",
    async run({ values, conn }) {
      needCount("--page-size", values["page-size"], 1000);
      const started = performance.now();
      const health = await call(conn, "GET", "healthz", { auth: false });
      const ms = Math.round(performance.now() - started);
      if (health.status !== 200 && health.body?.error) {
        throw new Exit(1, `${conn.base.origin} is not healthy: ${health.body.error.code}: ${health.body.error.message} [HTTP ${health.status}]`, { document: health.text });
      }
      ok(health); // anything else but a 200 JSON document: not an authority

      const session = ok(await call(conn, "GET", "v1/session"));
      let namespaces;
      let refusal;
      try {
        namespaces = await allNamespaces(conn, values["page-size"]);
      } catch (e) {
        refusal = e;
      }
      if (values.json) {
        if (refusal) throw refusal;
        return out(JSON.stringify({ health: health.body, session, namespaces }));
      }
      const expMs = session.exp * 1000;
      const exp = expMs < 8.64e15 ? new Date(expMs).toISOString().replace(".000Z", "Z") : "beyond the year 275760";
      const inactive = namespaces?.filter((s) => s.state !== "active").length;
      out(pairs([
        ["authority", `${conn.base.href} healthy (${ms} ms)`],
        ["token", `sub ${session.sub}, role ${session.role}, ns ${session.ns.join(",")}, expires ${exp} (in ${duration(session.exp - Date.now() / 1000)})`],
        ["namespaces", namespaces ? `${namespaces.length}${inactive ? ` (${inactive} not active)` : ""}` : "(not readable with this token)"],
      ]));
      if (refusal) throw refusal;
      if (namespaces.length) out(`\n${namespacesTable(namespaces)}`);
    },
  },
};
