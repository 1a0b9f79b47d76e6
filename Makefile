# rangeid: the two commands a fresh machine needs, and a few more.
.PHONY: demo test bench setup

# The main job: a traced simulation of generators and the authority.
demo:
	./scripts/setup.sh
	cargo run -p rangeid-sim --release --locked

# Every test; installs what it needs first. CI runs exactly this.
test:
	./scripts/test.sh

# Benchmarks that print ratios against baselines measured in the same run.
bench:
	./scripts/setup.sh
	cargo bench -p rangeid-core --bench next_id --locked

setup:
	./scripts/setup.sh
