// fleet-schedule answers where a given time stands in each of a stack's maintenance windows (Fleet's
// Schedule: a Quartz cron expression, a duration, a time zone), with the cron library Fleet v0.16.0
// uses (github.com/reugn/go-quartz v0.15.2), so the fire times are Fleet's to the second.
//
// Usage: fleet-schedule windows < {"now": RFC 3339, "schedules": [...]}  ->  {"windows": [...]}
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
	_ "time/tzdata" // the IANA database when the host has none
)

type request struct {
	Now       time.Time  `json:"now"`
	Schedules []Schedule `json:"schedules"`
}

func main() {
	if len(os.Args) != 2 || os.Args[1] != "windows" {
		fmt.Fprintln(os.Stderr, "usage: fleet-schedule windows < request.json")
		os.Exit(2)
	}
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "fleet-schedule: reading the request: %v\n", err)
		os.Exit(1)
	}
	windows := make([]Window, 0, len(req.Schedules))
	for _, s := range req.Schedules {
		w, err := windowAt(s, req.Now)
		var fe *fieldError
		if errors.As(err, &fe) {
			w.Error, w.Field = fe.Error(), fe.field
		}
		windows = append(windows, w)
	}
	if err := json.NewEncoder(os.Stdout).Encode(map[string][]Window{"windows": windows}); err != nil {
		os.Exit(1)
	}
}
