# Sourced by setup.sh (every npm run command that runs an operation, the watcher, the benchmarks) and test.sh:
# Node's options for a process that runs the Pulumi program. The SDK makes several promises per property of
# each resource (millions at 1,000 clusters): a young generation of 64 MiB semi-spaces lets V8 scavenge them
# less often, and AsyncLocalStorage on async context frames (Node 24's default; the SDK keeps each run's
# store in one) spares every promise Node's async hooks. Measured in BENCHMARKS.md §22.
PULUMI_FLEET_NODE_OPTIONS="--max-semi-space-size=64"
# Async context frames came in Node 22.7: an older Node 22 (one installed by hand) would refuse the option.
if node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 7) ? 0 : 1)' 2>/dev/null; then
  PULUMI_FLEET_NODE_OPTIONS+=" --experimental-async-context-frame"
fi
case " ${NODE_OPTIONS:-} " in
  *" $PULUMI_FLEET_NODE_OPTIONS "*) ;; # a child of a process that already has them
  *) export NODE_OPTIONS="$PULUMI_FLEET_NODE_OPTIONS${NODE_OPTIONS:+ $NODE_OPTIONS}" ;;
esac
