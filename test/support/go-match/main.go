// The oracle of test/unit/go-glob.test.ts: Go's own filepath.Match for each [pattern, name] pair read
// as JSON on stdin; writes [matched, bad pattern] pairs. Standard library only, run with `go run`.
package main

import (
	"encoding/json"
	"os"
	"path/filepath"
)

func main() {
	var cases [][2]string
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := make([][2]bool, len(cases))
	for i, c := range cases {
		matched, err := filepath.Match(c[0], c[1])
		out[i] = [2]bool{matched, err != nil}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
