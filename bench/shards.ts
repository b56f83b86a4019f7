/**
 * `npm run bench -- shards [--clusters 200] [--shards 4 | --per-shard 50] [--parallel 2] [--bundles 10]`:
 * one fleet as one stack and as shards run `parallel` at a time, both through the same runner
 * (automation/shards/runner.ts: one shard process per stack; the shards as `npm run <op> -- --stack ENV`
 * runs them), in render mode: `bundles` bundles x 10 ConfigMaps per cluster. Per layout: the first up,
 * a preview and a no-op up, and a target edit that prunes every bundle from some clusters: when the
 * prune has landed (the last stack that pruned finished) and when the whole run finished. The shards
 * run twice: every shard (--all-shards), and the default, which leaves out the shards whose inputs did
 * not change. Two layouts: `--shards N`, a rule per shard by a cluster label (cluster i in q<i mod N>),
 * the edit pruning 5 clusters all of shard q0 (an edit along the shards); `--per-shard N`, shards
 * chosen automatically (`clustersPerShard: N`), the edit pruning the first 5% of clusters by index,
 * which the hash spreads over the shards (an edit across them), and an edit of 5 clusters of one shard.
 * `--skip-one-stack` measures the shards only (a fleet too large for one stack on this machine);
 * `--default-only` leaves out the --all-shards full passes. `--shard-by` (with --per-shard): the clusters
 * labelled `region: r<i mod shards>` and placed with `shardBy: region`, the edit pruning region r0's
 * clusters (1/shards of them: 5% at 1,000 clusters x 50 per shard), an edit along the label.
 * Writes bench/results/shards.json.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { runShards, ShardRun } from "../automation/shards/runner";
import { readShardLayout, shardFileText, stackFilePath } from "../core/config/shard-files";
import { runSharded } from "../automation/shards/run";
import { Operation } from "../automation/run-operation";
import { toolchain } from "../automation/engine/toolchain";
import { arg, flag, printTable, seconds, syntheticRepo, writeResult, writeStackFile } from "./support";

interface Row {
  layout: string;
  firstUpS: number;
  previewS: number;
  noopUpS: number;
  editLandedS: number;
  editAllDoneS: number;
  stacksRun: number;
  objectsPruned: number;
  perStackS: string;
}

export async function shardsBench(): Promise<void> {
  toolchain();
  const clusters = Number(arg("clusters") ?? 200);
  const perShard = arg("per-shard") === undefined ? undefined : Number(arg("per-shard"));
  if (perShard !== undefined && !(Number.isInteger(perShard) && perShard > 0))
    throw new Error(`--per-shard ${arg("per-shard")}: a whole number of clusters, 1 or more`);
  const shards = perShard ? Math.ceil(clusters / perShard) : Number(arg("shards") ?? 4);
  const parallel = Number(arg("parallel") ?? 2);
  const bundles = Number(arg("bundles") ?? 10);
  const shardBy = flag("shard-by");
  const automatic = perShard ? (shardBy ? " (automatic, shardBy region)" : " (automatic)") : "";
  if (shardBy && !perShard) throw new Error("--shard-by: with --per-shard only (shards chosen automatically, kept together by a label)");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-shards-"));
  const repo = syntheticRepo(bundles, 10);
  const stacks = path.join(work, "stacks");
  fs.mkdirSync(stacks);
  Object.assign(process.env, { PULUMI_FLEET_STACKS_DIR: stacks, PULUMI_FLEET_STATE_DIR: path.join(work, "state"), PULUMI_CONFIG_PASSPHRASE: "bench" });
  // By label: the edit prunes every bundle from clusters 0, 4, 8, 12, 16, all in shard q0 (cluster i is in
  // q<i mod shards>). Automatic: from the first 5% of clusters, wherever the hash put them.
  // --shard-by: region r0's clusters (i mod shards = 0), then r1's.
  const editSize = shardBy ? Math.ceil(clusters / shards) : perShard ? Math.ceil(clusters * 0.05) : 5;
  const region = (r: number) => Array.from({ length: clusters }, (_, i) => i).filter((i) => i % shards === r);
  const pruned = shardBy ? region(0).map(String) : Array.from({ length: editSize }, (_, i) => String(perShard ? i : i * shards));
  const pruned2 = shardBy ? region(1).map(String) : Array.from({ length: editSize }, (_, i) => String(perShard ? i + editSize : (i + 5) * shards));
  const config = (excluded: string[]) => ({
    renderDir: path.join(work, "render"),
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    clusters: Array.from({ length: clusters }, (_, i) => ({
      name: `c-${String(i).padStart(3, "0")}`,
      labels: { env: "bench", idx: String(i), quarter: `q${i % shards}`, ...(shardBy ? { region: `r${i % shards}` } : {}) },
    })),
    gitRepos: [
      {
        name: "bench",
        repo,
        paths: ["b*"],
        targets: [{ name: "all", clusterSelector: { matchExpressions: [{ key: "idx", operator: "NotIn", values: excluded.length ? excluded : ["none"] }] } }],
      },
    ],
  });
  const shardRule = perShard
    ? { clustersPerShard: perShard, ...(shardBy ? { shardBy: "region" } : {}) }
    : { shards: Array.from({ length: shards }, (_, i) => ({ name: `q${i}`, clusterSelector: { matchLabels: { quarter: `q${i}` } } })) };
  const write = (excluded: string[]) => {
    writeStackFile(stacks, "one", config(excluded));
    writeStackFile(stacks, "big", { ...config(excluded), ...shardRule });
    for (const s of readShardLayout(stacks, "big")!.shards) fs.writeFileSync(stackFilePath(stacks, s.stack), shardFileText(stacks, "big", s.name));
  };
  const rows: Row[] = [];
  const timed = async (what: string, f: () => Promise<ShardRun[]>) => {
    const started = Date.now();
    const runs = await f();
    const failed = runs.filter((r) => r.exitCode !== 0);
    if (failed.length) throw new Error(`${what} failed on ${failed.map((r) => `${r.stack}: ${r.result?.error ?? r.exitCode}`).join("; ")}`);
    // When the change had landed: the last shard that ran and changed something finished.
    const changed = runs.filter((r) => !r.skipped && Object.entries(r.result?.changes ?? {}).some(([k, n]) => k !== "same" && k !== "read" && n > 0));
    return {
      wallMs: Date.now() - started,
      landedMs: Math.max(0, ...changed.map((r) => r.finishedAt - started)),
      ran: runs.filter((r) => !r.skipped).length,
      deleted: runs.reduce((n, r) => n + (r.result?.changes?.delete ?? 0), 0),
      perStack: runs.map((r) => (r.skipped ? "-" : seconds(r.durationMs))).join(" "),
    };
  };

  // One stack, through the same runner (one shard process); --skip-one-stack: a fleet too large for one stack here.
  const oneStack = !flag("skip-one-stack");
  if (oneStack) await measureOneStack();
  async function measureOneStack() {
    write([]);
    console.log(`one stack: ${clusters} clusters x ${bundles} bundles x 10 objects...`);
    const single = (op: Operation, expectNoChanges = false) =>
      timed(`one stack ${op}`, () =>
        runShards({ op, shards: [{ shard: "one", stack: "one" }], flags: { quiet: true, expectNoChanges }, parallel: 1, line: () => {} }),
      );
    const oneFirst = await single("up");
    const onePreview = await single("preview", true);
    const oneNoop = await single("up", true);
    write(pruned);
    const oneEdit = await single("up");
    rows.push({
      layout: "one stack",
      firstUpS: seconds(oneFirst.wallMs),
      previewS: seconds(onePreview.wallMs),
      noopUpS: seconds(oneNoop.wallMs),
      editLandedS: seconds(oneEdit.landedMs),
      editAllDoneS: seconds(oneEdit.wallMs),
      stacksRun: 1,
      objectsPruned: oneEdit.deleted,
      perStackS: oneEdit.perStack,
    });
  }

  // The shards, as `npm run <op> -- --stack big` runs them: every shard (--all-shards), and the default, which leaves out shards with nothing to do.
  write([]);
  console.log(
    `${shards} shards${perShard ? ` chosen automatically (clustersPerShard: ${perShard}${shardBy ? ", shardBy: region" : ""})` : ""}, ${parallel} at a time...`,
  );
  const layout = readShardLayout(stacks, "big")!;
  const sharded = (op: Operation, allShards: boolean, expectNoChanges = false) =>
    timed(`shards ${op}`, () =>
      runSharded({
        op,
        layout,
        dir: stacks,
        parallel,
        flags: { quiet: true, expectNoChanges },
        allShards,
        note: () => {},
        line: () => {},
      }),
    );
  // --default-only: not the full passes of --all-shards (a fleet whose full pass takes many minutes here).
  const everyShard = !flag("default-only");
  const first = await sharded("up", false);
  const previewAll = everyShard ? await sharded("preview", true, true) : undefined;
  const noopAll = everyShard ? await sharded("up", true, true) : undefined;
  const previewDefault = await sharded("preview", false, true);
  const noopDefault = await sharded("up", false, true);
  write(pruned);
  const editDefault = await sharded("up", false);
  // A second edit of the same kind (as many other clusters), with every shard run.
  if (everyShard) write([...pruned, ...pruned2]);
  const editAll = everyShard ? await sharded("up", true) : undefined;
  const editedSoFar = everyShard ? [...pruned, ...pruned2] : pruned;
  // Automatic shards: a third edit within one shard (5 of s1's clusters still deployed), as an edit of a
  // few clusters' labels or a GitRepo targeting a few clusters is: the default runs that shard alone.
  const within = perShard
    ? (
        readShardLayout(stacks, "big")!
          .shards.map((s) => s.clusters.map((c) => String(Number(c.slice(2)))).filter((i) => !editedSoFar.includes(i)))
          .find((left) => left.length >= 5) ?? []
      ).slice(0, 5)
    : [];
  if (within.length) write([...editedSoFar, ...within]);
  const editWithin = within.length ? await sharded("up", false) : undefined;
  if (previewAll && noopAll && editAll)
    rows.push({
      layout: `${shards} shards${automatic}, ${parallel} at a time, --all-shards`,
      firstUpS: seconds(first.wallMs),
      previewS: seconds(previewAll.wallMs),
      noopUpS: seconds(noopAll.wallMs),
      editLandedS: seconds(editAll.landedMs),
      editAllDoneS: seconds(editAll.wallMs),
      stacksRun: editAll.ran,
      objectsPruned: editAll.deleted,
      perStackS: editAll.perStack,
    });
  rows.push({
    layout: `${shards} shards${automatic}, ${parallel} at a time (default: unchanged shards left out)`,
    firstUpS: seconds(first.wallMs),
    previewS: seconds(previewDefault.wallMs),
    noopUpS: seconds(noopDefault.wallMs),
    editLandedS: seconds(editDefault.landedMs),
    editAllDoneS: seconds(editDefault.wallMs),
    stacksRun: editDefault.ran,
    objectsPruned: editDefault.deleted,
    perStackS: editDefault.perStack,
  });
  if (editWithin)
    rows.push({
      layout: `${shards} shards${automatic}, ${parallel} at a time (default), an edit of ${within.length} clusters of one shard`,
      firstUpS: seconds(first.wallMs),
      previewS: seconds(previewDefault.wallMs),
      noopUpS: seconds(noopDefault.wallMs),
      editLandedS: seconds(editWithin.landedMs),
      editAllDoneS: seconds(editWithin.wallMs),
      stacksRun: editWithin.ran,
      objectsPruned: editWithin.deleted,
      perStackS: editWithin.perStack,
    });
  const base = rows.find((r) => r.layout === "one stack");
  const ratio = (row: Row) => ({
    preview: +(row.previewS / base!.previewS).toFixed(2),
    noopUp: +(row.noopUpS / base!.noopUpS).toFixed(2),
    editLanded: +(row.editLandedS / base!.editLandedS).toFixed(2),
    editAllDone: +(row.editAllDoneS / base!.editAllDoneS).toFixed(2),
  });
  const shardRows = rows.filter((r) => r !== base);
  const ratios: Record<string, ReturnType<typeof ratio>> = base
    ? Object.fromEntries(shardRows.map((r, i) => [["allShards", "default", "withinOneShard"][everyShard ? i : i + 1], ratio(r)]))
    : {};
  printTable(rows as unknown as Record<string, string | number>[]);
  for (const [name, r] of Object.entries(ratios)) {
    console.log(
      `${name} / one stack: preview ${r.preview}, no-op up ${r.noopUp}, target edit landed ${r.editLanded} (goal < 0.25), all shards done ${r.editAllDone}`,
    );
  }
  console.log(`wrote ${writeResult("shards", { clusters, bundles, shards, perShard, shardBy, pruned: pruned.length, parallel, rows, ratios })}`);
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(repo, { recursive: true, force: true });
}
