package main

import (
	"math"
	"testing"
)

// A float64 is written as JSON.stringify writes it (each expected string is node's output), so a
// value built in Go digests as the same value does in TypeScript.
func TestJSNumberIsJSONStringifys(t *testing.T) {
	for f, js := range map[float64]string{
		1e-5: "0.00001", 1e20: "100000000000000000000", 1.5e-7: "1.5e-7", 1e21: "1e+21", -1e21: "-1e+21",
		123.456: "123.456", math.Copysign(0, -1): "0", 0.1: "0.1", 1e-6: "0.000001", 1e-7: "1e-7",
		-1.5e300: "-1.5e+300", 5e-324: "5e-324", 1e-323: "1e-323", 9007199254740994: "9007199254740994",
		123456789012345680000: "123456789012345680000", 0.000001234: "0.000001234",
		1.7976931348623157e308: "1.7976931348623157e+308", -42: "-42", math.NaN(): "null", math.Inf(-1): "null",
	} {
		if got := jsNumber(f); got != js {
			t.Errorf("%v: %s, JSON.stringify writes %s", f, got, js)
		}
	}
}
