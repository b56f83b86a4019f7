/**
 * The SOPS decryptor under the renderer's bounds (issue 53, point 2), team against team on live
 * clusters (test/support/teams-stack.ts). The attacker's GitRepo has an age key of its own and pushes
 * files that only look SOPS-encrypted: an alias bomb in the second document behind a made-up `sops`
 * block (which grew fleet-sops past 3 GiB in 49 s before), and a mapping of 20,000 keys (SOPS's
 * duplicate-key check is quadratic in it). Each fails its own bundle at once, naming the file and the
 * budget; the attacker's real encrypted Secret and its app deploy; the victim's push lands in the same
 * `up`, which stays short.
 */
import { expect } from "chai";
import { kubeGet } from "../../automation/clusters/kube-client";
import { ATTACKER_NS, TeamsStack } from "../support/teams-stack";
import { ageKey, fakeSopsBomb, sopsEncrypt } from "../support/sops";

const FLEET_YAML = `defaultNamespace: ${ATTACKER_NS}\n`;

describe("attacks on the SOPS decryptor: a fake encrypted file fails its own bundle, bounded (issue 53)", function () {
  this.timeout(15 * 60_000);
  const t = new TeamsStack();
  t.register();
  const key = ageKey();

  it("an alias bomb behind a fake sops block and a 20,000-key mapping fail alone and at once; the attacker's real Secret and the victim deploy", async () => {
    const wide = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: wide\ndata:\n${Array.from({ length: 20_000 }, (_, i) => `  k${i}: dg==\n`).join("")}`;
    t.commitVictim();
    t.commitAttacker(
      {
        "bomb/fleet.yaml": FLEET_YAML,
        "bomb/secret.yaml": fakeSopsBomb("attack-bomb"),
        "wide/fleet.yaml": FLEET_YAML,
        "wide/secret.yaml": `${wide}sops:\n  mac: ENC[AES256_GCM,data:x,iv:x,tag:x,type:str]\n  lastmodified: "2026-01-01T00:00:00Z"\n`,
        "own/fleet.yaml": FLEET_YAML,
        "own/secret.yaml": sopsEncrypt("secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: attacker-own\nstringData:\n  k: own\n", [
          key.recipient,
        ]),
      },
      "fake SOPS files",
    );
    const run = await t.attack({ attacker: { sopsAgeKey: key.identity } });
    await t.expectContained(run, {
      "attacker-bomb": [/bomb\/secret\.yaml/, /more than 200000 YAML nodes once its aliases are expanded/],
      "attacker-wide": [/wide\/secret\.yaml/, /a mapping in it has more than 10000 keys/],
    });
    expect(await kubeGet(t.dev, `/api/v1/namespaces/${ATTACKER_NS}/secrets/attacker-own`), "the attacker's real encrypted Secret").to.not.equal(undefined);
    // Unbounded, the bomb alone held this `up` for minutes; refused, the decryption costs milliseconds.
    expect(run.ms, "up's time").to.be.lessThan(5 * 60_000);
    console.log(`      up with the fake SOPS files: ${(run.ms / 1000).toFixed(1)} s`);
  });
});
