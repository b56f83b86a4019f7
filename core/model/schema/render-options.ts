/**
 * The fleet.yaml options a render reads (merged per cluster, templated): the one source of
 * renderer-protocol.ts's RenderOptions and fleet-render's (generated). Each path is one of fleet.yaml's
 * own (core/config/fleetyaml-fields.ts OPTION_FIELDS, same type): test/unit/go-schema-roundtrip.test.ts checks it.
 */
import { anyMap, bool, describe, list, struct, text } from "./describe";

const HELM = describe({
  name: "RenderHelmOptions",
  doc: "RenderHelmOptions: fleet.yaml's helm options a render reads.",
  fields: {
    chart: { type: text, optional: true, doc: "" },
    repo: { type: text, optional: true, doc: "" },
    version: { type: text, optional: true, doc: "" },
    releaseName: { type: text, optional: true, doc: "" },
    values: { type: anyMap, optional: true, doc: "" },
    disableDNS: { type: bool, optional: true, doc: "" },
    skipSchemaValidation: { type: bool, optional: true, doc: "" },
    disableDependencyUpdate: { type: bool, optional: true, doc: "" },
  },
});

export const RENDER_OPTIONS = describe({
  name: "RenderOptions",
  doc: "RenderOptions are the merged, templated deployment options that change what is rendered.",
  fields: {
    defaultNamespace: { type: text, optional: true, doc: "" },
    namespace: { type: text, optional: true, goName: "TargetNamespace", doc: "" },
    deleteCRDResources: { type: bool, optional: true, doc: "" },
    helm: { type: struct(HELM), doc: "" },
    kustomize: {
      type: struct(describe({ name: "RenderKustomizeOptions", doc: "", fields: { dir: { type: text, optional: true, doc: "" } } })),
      doc: "",
    },
    yaml: {
      type: struct(describe({ name: "RenderYAMLOptions", doc: "", fields: { overlays: { type: list(text), optional: true, doc: "" } } })),
      goName: "YAML",
      doc: "",
    },
  },
});
