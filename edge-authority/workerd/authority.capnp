# The authority on the open-source workerd runtime, without Cloudflare: the
# same build (edge-authority/build, from scripts/build.sh) with every
# Durable Object on local disk. Served by `make authority RUNTIME=workerd`
# (edge-authority/scripts/workerd.sh), and by the integration tests.
#
#   workerd serve --experimental edge-authority/workerd/authority.capnp \
#     --directory-path state=/var/lib/rangeid \
#     --directory-path assets=/path/to/www/dist \
#     --socket-addr http=127.0.0.1:8787
#
# Settings come from the environment: RANGEID_SIGNING_KEYS (required: a
# JSON map kid -> key), RANGEID_CORS_ORIGINS, RANGEID_GRANT_RETENTION_SECONDS,
# RANGEID_TOKEN_AUDIENCE, RANGEID_CHECK_SECONDS, RANGEID_RELAY_LEASE_MS; unset
# ones take the defaults.
# Nothing else is read: the test suite's switches exist only in a separate
# test build, with its own generated configuration
# (edge-authority/scripts/test-switches.mjs).
#
# One machine, no replication: back up the state folder (stop workerd, or
# copy every *.sqlite with its -wal and -shm together).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .authority),
    (name = "state", disk = (path = "state", writable = true)),
    (name = "assets", disk = (path = "../../www/dist")),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "main")],
);

const authority :Workerd.Worker = (
  modules = [
    (name = "index.js", esModule = embed "../build/index.js"),
    (name = "index_bg.wasm", wasm = embed "../build/index_bg.wasm"),
  ],
  compatibilityDate = "2026-04-01",
  bindings = [
    (name = "NAMESPACE", durableObjectNamespace = "Namespace"),
    (name = "FENCE", durableObjectNamespace = "Fence"),
    (name = "REGISTRY", durableObjectNamespace = "Registry"),
    (name = "RELAY", durableObjectNamespace = "Relay"),
    (name = "ASSETS", service = "assets"),
    (name = "RANGEID_SIGNING_KEYS", fromEnvironment = "RANGEID_SIGNING_KEYS"),
    (name = "RANGEID_CORS_ORIGINS", fromEnvironment = "RANGEID_CORS_ORIGINS"),
    (name = "RANGEID_GRANT_RETENTION_SECONDS", fromEnvironment = "RANGEID_GRANT_RETENTION_SECONDS"),
    (name = "RANGEID_TOKEN_AUDIENCE", fromEnvironment = "RANGEID_TOKEN_AUDIENCE"),
    (name = "RANGEID_CHECK_SECONDS", fromEnvironment = "RANGEID_CHECK_SECONDS"),
    (name = "RANGEID_RELAY_LEASE_MS", fromEnvironment = "RANGEID_RELAY_LEASE_MS"),
  ],
  durableObjectNamespaces = [
    (className = "Namespace", uniqueKey = "rangeid-authority-namespace", enableSql = true),
    (className = "Fence", uniqueKey = "rangeid-authority-fence", enableSql = true),
    (className = "Registry", uniqueKey = "rangeid-authority-registry", enableSql = true),
    # Relays keep nothing on disk (docs/relays.md).
    (className = "Relay", uniqueKey = "rangeid-authority-relay"),
  ],
  durableObjectStorage = (localDisk = "state"),
);
