// metrics-check parses Prometheus text exposition files with the Prometheus project's own parser
// (github.com/prometheus/common/expfmt, legacy metric names as the 0.0.4 format requires) and prints
// the metric families as JSON. It fails on anything the parser rejects, and on what node_exporter's
// textfile collector and the Pushgateway reject after parsing: a series given twice, a client-side
// timestamp. pulumi-fleet's tests read its metrics through it (automation/metrics/).
//
// Usage: metrics-check FILE... ("-" reads standard input)
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: metrics-check FILE... (- for standard input)")
		os.Exit(2)
	}
	var all []Family
	for _, name := range os.Args[1:] {
		in, err := open(name)
		if err != nil {
			fail(name, err)
		}
		families, err := Parse(in)
		in.Close()
		if err != nil {
			fail(name, err)
		}
		all = append(all, families...)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(all); err != nil {
		fail("stdout", err)
	}
}

func open(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(name)
}

func fail(name string, err error) {
	fmt.Fprintf(os.Stderr, "metrics-check: %s: %v\n", name, err)
	os.Exit(1)
}
