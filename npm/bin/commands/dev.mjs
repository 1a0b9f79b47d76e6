// `rangeid dev`: the prebuilt authority (the npm package rangeid-authority)
// on the workerd binary from npm, in the foreground, with no Rust, wrangler
// or clone. State (the signing key, every Durable Object) in ./.rangeid/;
// a signing key made on first run; an admin token and the admin page's link
// printed once it answers; Ctrl-C (or SIGTERM, SIGHUP) stops workerd with
// it. The repository's `make authority RUNTIME=workerd`
// (edge-authority/scripts/workerd.sh) is this command on the staged package.
import { spawn } from "node:child_process";
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, relative } from "node:path";
import { findAuthority, runSelf, stateFolder, workerdOf } from "./authority.mjs";

const DEFAULT_PORT = 8787;
const READY_WITHIN_MS = 30_000;
const STOP_WITHIN_MS = 5_000;
const PARENT_CHECK_MS = 500;
const TAKEOVER_STALE_MS = 10_000;
const KID = "local-1";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The command, for the rangeid command's table; `Exit` is its failure type. */
export function devCommand({ Exit, out }) {
  const usage = (message) => new Exit(2, message);
  return {
    usage: "rangeid dev [--port N] [--state DIR] [--cors-origins LIST]",
    about: `Runs the authority locally on 127.0.0.1 in the foreground, on the workerd
runtime from npm (the package rangeid-authority, installed beside rangeid:
npm install --save-dev rangeid-authority). No Rust, wrangler or clone needed.
The first run makes a signing key in the state folder (default ./.rangeid);
every run prints an admin token (30 days) and the admin page's link. Ctrl-C
stops it; the next run keeps every namespace. Other settings come from the
environment, as on a server: RANGEID_GRANT_RETENTION_SECONDS,
RANGEID_TOKEN_AUDIENCE.`,
    options: {
      port: { type: "string" },
      state: { type: "string" },
      "cors-origins": { type: "string" },
      authority: { type: "string" },
    },
    optionsHelp: `  --port N             the port on 127.0.0.1 (default $RANGEID_PORT or ${DEFAULT_PORT})
  --state DIR          the folder for the signing key and the authority's state
                       (default $RANGEID_HOME or ./.rangeid; keep it out of git)
  --cors-origins LIST  browser origins allowed to call the API, comma-separated
                       (default $RANGEID_CORS_ORIGINS or none)
  --authority DIR      a rangeid-authority package folder (default: the one
                       installed in this project)`,
    local: true,
    run: ({ values }) => dev(values, { Exit, usage, out }),
  };
}

function parsePort(text, usage) {
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
    throw usage(`--port must be a whole number from 1 to 65535, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** Resolves when 127.0.0.1:port can be listened on; refuses otherwise. */
function checkPortFree(port, usage) {
  return new Promise((resolveFree, reject) => {
    const srv = createServer();
    srv.once("error", (e) => reject(e.code === "EADDRINUSE"
      ? usage(`127.0.0.1:${port} is in use (another rangeid dev?); stop it or pass --port N`)
      : usage(`cannot listen on 127.0.0.1:${port}: ${e.message}`)));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolveFree()));
  });
}

/**
 * Claims the state folder for this process (`dev.pid`), so that a second
 * `rangeid dev` on the same state is refused: two workerd processes on one
 * SQLite state would each believe they hold every object.
 *
 * The claim appears whole or not at all: it is written to a file of its
 * own, then hard-linked to `dev.pid`, which fails if one exists. A claim
 * whose processes are all gone (a SIGKILL, a crash) is taken over, under a
 * takeover lock (`dev.pid.takeover`, made with mkdir) so that two starters
 * cannot both take over, each removing the other's fresh claim. A claim
 * that cannot be read is held. `note(pid)` adds workerd's pid once it runs,
 * so the claim stays held while workerd does, even if this process was
 * killed where workerd cannot follow it (no setpriv). Returns `{ note,
 * release }`; the claim is released at exit too.
 */
function claimState(home, fail) {
  const file = join(home, "dev.pid");
  const lock = `${file}.takeover`;
  const mine = `${file}.${process.pid}`;
  let pids = [processId(process.pid)];
  const write = (path) => writeFileSync(path, `${pids.join(" ")}\n`, { mode: 0o600 });
  const held = (text) => `${text}`.trim().split(/\s+/).filter((w) => /^[1-9][0-9]*(:[0-9]+)?$/.test(w));
  const refuse = (holders) => fail(`another rangeid dev (pid ${holders[0].split(":")[0]}) is serving the state in ${home}: stop it first, or pass another --state DIR`);
  const claimed = () => {
    const release = () => {
      try {
        if (held(readFileSync(file, "utf8"))[0] === pids[0]) rmSync(file, { force: true });
      } catch { /* already gone */ }
      rmSync(mine, { force: true });
    };
    process.once("exit", release);
    // Rewritten whole and renamed over the claim: readers see the old or the new list.
    const note = (pid) => {
      pids = [pids[0], processId(pid)];
      write(mine);
      renameSync(mine, file);
    };
    return { note, release };
  };
  write(mine);
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        linkSync(mine, file);
        rmSync(mine, { force: true });
        return claimed();
      } catch (e) {
        if (e.code !== "EEXIST") throw fail(`could not claim the state folder ${home}: ${e.message}`);
      }
      let holders;
      try {
        holders = held(readFileSync(file, "utf8"));
      } catch (e) {
        if (e.code === "ENOENT") continue; // released meanwhile: claim again
        throw fail(`could not read ${file}: ${e.message}`);
      }
      if (holders.length === 0 || holders.some(alive)) throw refuse(holders.length ? holders : ["unknown"]);
      // Every process of that claim is gone: take over, one starter at a time.
      try {
        mkdirSync(lock);
      } catch (e) {
        if (e.code !== "EEXIST") throw fail(`could not claim the state folder ${home}: ${e.message}`);
        // A takeover lock left by a starter that died in it goes after a while.
        try {
          if (Date.now() - statSync(lock).mtimeMs > TAKEOVER_STALE_MS) rmSync(lock, { recursive: true, force: true });
        } catch { /* gone meanwhile */ }
        throw fail(`another rangeid dev is starting on the state in ${home}; try again in a moment`);
      }
      try {
        // Still the dead claim read above (not one made since)? Then remove it.
        let now;
        try {
          now = held(readFileSync(file, "utf8"));
        } catch {
          now = [];
        }
        if (now.join(" ") === holders.join(" ")) rmSync(file, { force: true });
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
    throw fail(`could not claim the state folder ${home}: another rangeid dev is starting on it`);
  } catch (e) {
    rmSync(mine, { force: true });
    throw e;
  }
}

/**
 * A process as a claim names it: `pid:start`, its start time in clock
 * ticks since boot (field 22 of /proc/PID/stat), so a pid used again by
 * another process (after a restart of the machine or container, pids come
 * round in the same order) is not taken for the claim's; `pid` alone
 * where there is no /proc.
 */
function processId(pid) {
  const start = procStat(pid)?.[19];
  return start ? `${pid}:${start}` : `${pid}`;
}

/** The fields of /proc/PID/stat after the command's name (state first), or null. */
function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/**
 * Whether the process a claim names (`pid` or `pid:start`, see
 * processId) runs (EPERM: it does, as another user). Not this process,
 * which has no claim yet; not another process that got the pid since; not
 * a zombie: an orphaned workerd that exited stays one where the
 * container's init never reaps, and would hold the claim forever.
 */
function alive(entry) {
  const [pid, start] = entry.split(":").map(Number);
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return e.code === "EPERM";
  }
  const stat = procStat(pid);
  if (!stat) return !existsSync("/proc/self/stat"); // no /proc here: kill(0) is all there is
  if ("ZX".includes(stat[0])) return false;
  return start === undefined || Number(stat[19]) === start;
}

/** The state folder's workerd state and its signing key, made once. */
function prepareState(home, fail) {
  mkdirSync(join(home, "workerd-state"), { recursive: true });
  const keys = join(home, "keys.json");
  if (!existsSync(keys) || statSync(keys).size === 0) {
    process.stderr.write(`rangeid dev: creating a local signing key in ${keys}\n`);
    const tmp = `${keys}.tmp`;
    rmSync(tmp, { force: true });
    runSelf(["keygen", "--kid", KID, "--out", tmp], fail);
    renameSync(tmp, keys);
  }
  return keys;
}

/** Polls /healthz until it answers 200 (true), or workerd exits, `stopped()` or the deadline (false). */
async function waitHealthy(base, child, stopped) {
  const deadline = Date.now() + READY_WITHIN_MS;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null && !stopped()) {
    try {
      const r = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) });
      await r.arrayBuffer();
      if (r.status === 200) return true;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  return false;
}

/**
 * Spawns workerd so that it cannot outlive this process: on Linux through
 * setpriv's parent-death signal (even a SIGKILL of this process stops it),
 * and everywhere by forwarding SIGINT, SIGTERM and SIGHUP (and stopping
 * when this process's own parent goes, see dev()).
 */
function spawnWorkerd(bin, args, env) {
  const setpriv = "/usr/bin/setpriv";
  const guarded = process.platform === "linux" && existsSync(setpriv);
  return guarded
    ? spawn(setpriv, ["--pdeathsig", "TERM", "--", bin, ...args], { stdio: ["ignore", "inherit", "inherit"], env })
    : spawn(bin, args, { stdio: ["ignore", "inherit", "inherit"], env });
}

async function dev(values, { Exit, usage, out }) {
  const fail = (message) => new Exit(2, message);
  const port = parsePort(values.port ?? process.env.RANGEID_PORT ?? String(DEFAULT_PORT), usage);
  const authority = findAuthority({ dir: values.authority, command: "dev", fail });
  const workerd = workerdOf(authority, fail);
  await checkPortFree(port, usage);
  const home = stateFolder(values);
  // Claimed before the key is made: two first runs would otherwise both make one.
  const { note, release } = claimState(home, fail);
  const keys = prepareState(home, fail);

  const audience = process.env.RANGEID_TOKEN_AUDIENCE ?? "";
  const token = runSelf(["token", "--role", "admin", "--ns", "*", "--ttl", "30d", "--sub", "local-admin", "--keys", keys,
    ...(audience ? ["--aud", audience] : [])], fail);

  // Every setting the configuration reads is set (an unset one is null
  // there); nothing else from this shell reaches the authority.
  const env = {
    PATH: process.env.PATH ?? "",
    RANGEID_SIGNING_KEYS: readFileSync(keys, "utf8").trim(),
    RANGEID_CORS_ORIGINS: values["cors-origins"] ?? process.env.RANGEID_CORS_ORIGINS ?? "",
    RANGEID_GRANT_RETENTION_SECONDS: process.env.RANGEID_GRANT_RETENTION_SECONDS || "86400",
    RANGEID_TOKEN_AUDIENCE: audience,
    RANGEID_CHECK_SECONDS: process.env.RANGEID_CHECK_SECONDS ?? "",
    RANGEID_RELAY_LEASE_MS: process.env.RANGEID_RELAY_LEASE_MS ?? "",
  };
  const state = join(home, "workerd-state");
  const base = `http://127.0.0.1:${port}`;
  process.stderr.write(`rangeid dev: rangeid-authority ${authority.version} on workerd (${relative(process.cwd(), workerd) || workerd}), state in ${state}\n`);
  const child = spawnWorkerd(workerd, [
    "serve", "--experimental", authority.paths.workerdConfig,
    "--directory-path", `state=${state}`,
    "--directory-path", `assets=${authority.paths.assets}`,
    "--socket-addr", `http=127.0.0.1:${port}`,
  ], env);
  // Into the claim at once: a SIGKILL of this process from here on leaves
  // a claim that names workerd too (setpriv execs it under its own pid).
  if (child.pid) note(child.pid);

  let stopping = false;
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  const spawned = new Promise((r, reject) => {
    child.once("spawn", r);
    child.once("error", (e) => reject(new Exit(1, `could not start workerd (${workerd}): ${e.message}`)));
  });
  const stop = () => {
    if (stopping) return;
    stopping = true;
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), STOP_WITHIN_MS).unref();
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, stop);
  // Whoever started this may go without a signal to it: npx, sent SIGTERM,
  // passes it to its shell only, and this process is handed to init. A
  // new parent means the one it served is gone: stop as for Ctrl-C.
  const parent = process.ppid;
  const orphaned = setInterval(() => {
    if (process.ppid !== parent) {
      process.stderr.write("rangeid dev: the process that started it is gone; stopping\n");
      stop();
    }
  }, PARENT_CHECK_MS);
  orphaned.unref();
  try {
    await spawned;
    if (!(await waitHealthy(base, child, () => stopping))) {
      if (stopping) return void (await exited); // Ctrl-C while it started
      const died = child.exitCode !== null || child.signalCode !== null;
      stop();
      const { code, signal } = await exited;
      throw new Exit(1, died
        ? `workerd stopped before it served (${signal ?? `exit status ${code}`}); its messages are above`
        : `workerd did not answer on ${base}/healthz within ${READY_WITHIN_MS / 1000} s`);
    }
    const rel = relative(process.cwd(), keys);
    out(`rangeid dev: the authority is serving on ${base} (Ctrl-C stops it; the next run keeps every namespace)
admin token (30 days): ${token}
admin page: ${base}/admin/#token=${token}
next, in another shell:
  export RANGEID_URL=${base} RANGEID_TOKEN=<the admin token>
  npx --no-install rangeid ns create orders
  npx --no-install rangeid token --role generator --ns orders --keys ${rel.startsWith("..") ? keys : rel}`);
    const { code, signal } = await exited;
    if (!stopping) throw new Exit(1, `workerd stopped (${signal ?? `exit status ${code}`}); its messages are above`);
    process.stderr.write("rangeid dev: stopped\n");
  } finally {
    for (const s of signals) process.off(s, stop);
    clearInterval(orphaned);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    release();
  }
}
