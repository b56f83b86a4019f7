/** GitRepo content the attack suites share. */

/** A template that ranges 10^15 times: it ends only when the renderer's time limit ends it. */
export const NESTED_FOREVER = "{{ range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}";
