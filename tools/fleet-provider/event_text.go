package main

// The Kubernetes Event's sink: `kubectl get events` prints a message as one table cell and terminals
// act on escape sequences, so content's words (an API server quoting an object, a template's `fail`)
// lose their line breaks, escape sequences, control and bidirectional-override characters, and are cut
// at the API server's limit.

import (
	"regexp"
	"strings"
)

var (
	eventANSI      = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|\x1b[@-_]?`)
	eventBreaks    = regexp.MustCompile(`\r\n|[\r\n\v\f\x{0085}\x{2028}\x{2029}]`)
	eventControls  = regexp.MustCompile(`[\x00-\x08\x0e-\x1f\x7f\x{0080}-\x{009f}\x{200e}\x{200f}\x{202a}-\x{202e}\x{2066}-\x{2069}]`)
	eventTabSpaces = strings.NewReplacer("\t", " ")
)

// eventText is content's text as an Event's message: one line of plain text, at most maxEventMessage bytes.
func eventText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = eventANSI.ReplaceAllString(s, "")
	s = eventBreaks.ReplaceAllString(s, " ")
	s = eventControls.ReplaceAllString(s, "")
	return cut(eventTabSpaces.Replace(s), maxEventMessage)
}
