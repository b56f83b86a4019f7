/**
 * `npm run schemas`: writes the JSON Schemas of fleet.yaml and the stack file (schemas/*.json) from
 * the readers' field tables (core/schema/schemas.ts). test/unit/schemas.test.ts fails when the
 * committed files differ from what this writes.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_DIR } from "../core/base/project-dir";
import { schemaTexts } from "../core/schema/schemas";
import { runMain } from "./cli";

const SPEC = { usage: "npm run schemas", summary: "Writes schemas/*.json from the readers' field tables.", options: {} };

async function main(): Promise<void> {
  for (const [file, text] of Object.entries(schemaTexts())) {
    fs.mkdirSync(path.dirname(path.join(PROJECT_DIR, file)), { recursive: true });
    fs.writeFileSync(path.join(PROJECT_DIR, file), text);
    console.log(`wrote ${file}`);
  }
}

runMain(SPEC, main);
