package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/reugn/go-quartz/quartz"
)

// Schedule is a stack file's schedules[] entry, as Fleet's Schedule spec words it.
type Schedule struct {
	Name     string `json:"name"`
	Schedule string `json:"schedule"`
	Duration string `json:"duration"`
	Location string `json:"location,omitempty"`
}

// Window is where `now` stands in a schedule: inside a window (until it closes) or outside (until the next opens).
type Window struct {
	Name   string    `json:"name"`
	Active bool      `json:"active"`
	Until  time.Time `json:"until"`
	// Error and Field: the schedule is not valid; Field is the one at fault (schedule, duration, location).
	Error string `json:"error,omitempty"`
	Field string `json:"field,omitempty"`
}

// fieldError names the spec field a schedule fails on.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }

// windowAt is the decision, a pure function of the schedule and `now`. Fleet v0.16.0's controller
// (internal/cmd/controller/reconciler/cronduration_job.go) opens a window at each fire time of the
// Quartz cron trigger (go-quartz, in the location; "" is the controller's Local) and closes it
// `duration` later; a cluster is off schedule between windows. Stateless here: `now` is inside a
// window when a fire time f has f <= now < f+duration.
func windowAt(s Schedule, now time.Time) (Window, error) {
	out := Window{Name: s.Name}
	locName := s.Location
	if locName == "" {
		locName = "Local"
	}
	loc, err := time.LoadLocation(locName)
	if err != nil {
		return out, &fieldError{"location", fmt.Errorf("unknown time zone %q: %w", s.Location, err)}
	}
	trigger, err := quartz.NewCronTriggerWithLoc(s.Schedule, loc)
	if err != nil {
		return out, &fieldError{"schedule", err}
	}
	d, err := time.ParseDuration(s.Duration)
	if err != nil {
		return out, &fieldError{"duration", err}
	}
	if d <= 0 {
		return out, &fieldError{"duration", errors.New("must be more than 0: a window of no length never opens")}
	}
	// Fleet's check (checkScheduleAndDuration): the duration must be shorter than the time between the
	// next two fire times, or one window would run into the next.
	first, err := trigger.NextFireTime(now.UnixNano())
	if err != nil {
		return out, &fieldError{"schedule", fmt.Errorf("never fires after %s: %w", now.Format(time.RFC3339), err)}
	}
	second, err := trigger.NextFireTime(first)
	if err == nil && int64(d.Seconds()) >= second/1e9-first/1e9 {
		return out, &fieldError{"duration", fmt.Errorf("%s is too long and overlaps with the next execution time (%s, then %s)", s.Duration,
			time.Unix(0, first).In(loc).Format(time.RFC3339), time.Unix(0, second).In(loc).Format(time.RFC3339))}
	}
	// The first fire time after now-duration: at or before now, its window holds now.
	opened, err := trigger.NextFireTime(now.Add(-d).UnixNano())
	if err == nil && opened <= now.UnixNano() {
		out.Active = true
		out.Until = time.Unix(0, opened).Add(d).In(loc)
		return out, nil
	}
	out.Until = time.Unix(0, first).In(loc)
	return out, nil
}
