/**
 * The JSON Schemas editors and CI read (schemas/*.json), generated from the readers' field tables:
 * fleet.yaml's (core/config/fleetyaml-fields.ts) and the stack file's (core/config/stack-fields.ts).
 */
import { FLEET_YAML_FIELDS } from "../config/fleetyaml-fields";
import { STACK_FIELDS } from "../config/stack-fields";
import { CONFIG_NAMESPACE } from "../config/stack";
import { JsonSchema, tableSchema } from "./json-schema";

export const SCHEMA_FILES = { fleetYaml: "schemas/fleet.yaml.schema.json", stack: "schemas/stack.schema.json" } as const;

export function fleetYamlSchema(): JsonSchema {
  return tableSchema(
    "https://pulumi-fleet.invalid/schemas/fleet.yaml.schema.json",
    "fleet.yaml as pulumi-fleet reads it (generated from core/config/fleetyaml-fields.ts)",
    FLEET_YAML_FIELDS,
  );
}

/**
 * A stack file (stacks/Pulumi.<stack>.yaml): Pulumi's own keys, and under `config:` this project's keys
 * with their `pulumi-fleet:` prefix; other namespaces' keys are Pulumi's business and left open.
 */
export function stackSchema(): JsonSchema {
  const inner = tableSchema("", "", STACK_FIELDS);
  const properties = Object.fromEntries(Object.entries(inner.properties as Record<string, JsonSchema>).map(([k, v]) => [`${CONFIG_NAMESPACE}:${k}`, v]));
  return {
    $schema: inner.$schema,
    $id: "https://pulumi-fleet.invalid/schemas/stack.schema.json",
    title: "a pulumi-fleet stack file, stacks/Pulumi.<stack>.yaml (generated from core/config/stack-fields.ts)",
    type: "object",
    properties: {
      config: { type: "object", properties, propertyNames: { not: { pattern: `^${CONFIG_NAMESPACE}:(?!(${Object.keys(STACK_FIELDS).join("|")})$)` } } },
      encryptionsalt: { type: "string" },
      secretsprovider: { type: "string" },
      encryptedkey: { type: "string" },
    },
    definitions: inner.definitions,
  };
}

/** The committed files' text: the schema, two-space indented, with a final newline. */
export function schemaTexts(): Record<string, string> {
  return {
    [SCHEMA_FILES.fleetYaml]: `${JSON.stringify(fleetYamlSchema(), null, 2)}\n`,
    [SCHEMA_FILES.stack]: `${JSON.stringify(stackSchema(), null, 2)}\n`,
  };
}
