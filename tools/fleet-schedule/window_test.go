package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func at(t *testing.T, loc, s string) time.Time {
	t.Helper()
	l, err := time.LoadLocation(loc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04:05", s, l)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func check(t *testing.T, s Schedule, now time.Time, active bool, until time.Time) {
	t.Helper()
	w, err := windowAt(s, now)
	if err != nil {
		t.Fatalf("%s at %s: %v", s.Schedule, now, err)
	}
	if w.Active != active || !w.Until.Equal(until) {
		t.Fatalf("%s for %s at %s: got active=%v until %s, want active=%v until %s", s.Schedule, s.Duration, now, w.Active, w.Until, active, until)
	}
}

// Weekdays 22:00 to 02:00 in Berlin: a window that crosses midnight, read in its time zone.
func TestWindowCrossingMidnightInTimeZone(t *testing.T) {
	s := Schedule{Name: "nightly", Schedule: "0 0 22 ? * MON-FRI", Duration: "4h", Location: "Europe/Berlin"}
	b := func(v string) time.Time { return at(t, "Europe/Berlin", v) }
	// 2025-06-02 is a Monday.
	check(t, s, b("2025-06-02 21:59:59"), false, b("2025-06-02 22:00:00"))
	check(t, s, b("2025-06-02 22:00:00"), true, b("2025-06-03 02:00:00"))
	check(t, s, b("2025-06-03 01:59:59"), true, b("2025-06-03 02:00:00"))
	check(t, s, b("2025-06-03 02:00:00"), false, b("2025-06-03 22:00:00"))
	// Friday night runs into Saturday; Saturday night has no window: the next is Monday's.
	check(t, s, b("2025-06-07 01:00:00"), true, b("2025-06-07 02:00:00"))
	check(t, s, b("2025-06-07 23:00:00"), false, b("2025-06-09 22:00:00"))
	// The same instant seen from UTC: Berlin is UTC+2 in June.
	check(t, s, at(t, "UTC", "2025-06-02 20:30:00"), true, b("2025-06-03 02:00:00"))
	check(t, Schedule{Name: "utc", Schedule: "0 0 22 ? * MON-FRI", Duration: "4h", Location: "UTC"}, at(t, "UTC", "2025-06-02 20:30:00"), false, at(t, "UTC", "2025-06-02 22:00:00"))
}

// Quartz's day of week counts from Sunday = 1 (not cron's Monday = 1).
func TestQuartzDayOfWeekNumbers(t *testing.T) {
	s := Schedule{Name: "n", Schedule: "0 0 9 ? * 2", Duration: "1h", Location: "UTC"}
	// 2025-06-01 is a Sunday: the next "2" is Monday 2025-06-02.
	check(t, s, at(t, "UTC", "2025-06-01 10:00:00"), false, at(t, "UTC", "2025-06-02 09:00:00"))
}

// Daily at 02:30 in New York. On 2025-03-09 the clocks jump from 02:00 to 03:00: there is no 02:30 that
// day, and go-quartz (so Fleet) fires at 01:30 EST instead, an hour early; the window lasts one hour of
// real time, to 03:30 EDT. In the autumn, 02:30 happens once.
func TestWindowOverDaylightSaving(t *testing.T) {
	s := Schedule{Name: "dst", Schedule: "0 30 2 * * ?", Duration: "1h", Location: "America/New_York"}
	ny := func(v string) time.Time { return at(t, "America/New_York", v) }
	check(t, s, ny("2025-03-09 01:29:59"), false, ny("2025-03-09 01:30:00"))
	check(t, s, ny("2025-03-09 01:59:00"), true, ny("2025-03-09 03:30:00"))
	check(t, s, ny("2025-03-09 03:30:00"), false, ny("2025-03-10 02:30:00"))
	check(t, s, ny("2025-03-10 02:45:00"), true, ny("2025-03-10 03:30:00"))
	check(t, s, ny("2025-11-02 02:40:00"), true, ny("2025-11-02 03:30:00"))
}

func TestSecondsFieldAndSpecials(t *testing.T) {
	// Every minute, for 30 s (Fleet's own e2e schedule).
	s := Schedule{Name: "m", Schedule: "0 */1 * * * *", Duration: "30s", Location: "UTC"}
	check(t, s, at(t, "UTC", "2025-01-01 10:00:29"), true, at(t, "UTC", "2025-01-01 10:00:30"))
	check(t, s, at(t, "UTC", "2025-01-01 10:00:30"), false, at(t, "UTC", "2025-01-01 10:01:00"))
	check(t, Schedule{Name: "d", Schedule: "@daily", Duration: "1h", Location: "UTC"}, at(t, "UTC", "2025-01-01 00:10:00"), true, at(t, "UTC", "2025-01-01 01:00:00"))
}

func TestInvalidSchedulesNameTheirField(t *testing.T) {
	now := at(t, "UTC", "2025-01-01 00:00:00")
	cases := []struct {
		s     Schedule
		field string
		says  string
	}{
		{Schedule{Schedule: "0 22 * * 1-5", Duration: "1h"}, "schedule", "invalid expression length"},
		{Schedule{Schedule: "0 0 22 1 * MON", Duration: "1h"}, "schedule", "day field set twice"},
		{Schedule{Schedule: "0 0 22 * * ?", Duration: "1d"}, "duration", "unknown unit"},
		{Schedule{Schedule: "0 0 22 * * ?", Duration: "24h"}, "duration", "overlaps with the next execution time"},
		{Schedule{Schedule: "0 0 22 * * ?", Duration: "0s"}, "duration", "never opens"},
		{Schedule{Schedule: "0 0 22 * * ?", Duration: "1h", Location: "Mars/Olympus"}, "location", "unknown time zone"},
		{Schedule{Schedule: "0 0 0 1 1 ? 2020", Duration: "1h", Location: "UTC"}, "schedule", "never fires"},
	}
	for _, c := range cases {
		_, err := windowAt(c.s, now)
		var fe *fieldError
		if !errors.As(err, &fe) || fe.field != c.field || !strings.Contains(fe.Error(), c.says) {
			t.Errorf("%+v: got %v, want %s: ...%s...", c.s, err, c.field, c.says)
		}
	}
}
