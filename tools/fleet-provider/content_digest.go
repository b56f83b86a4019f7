package main

// The one rule for a render's digest, as core/model/content-digest.ts has it (both held to one fixture,
// test/fixtures/content-digest.json): an object's digest is the sha256 of its manifest's canonical JSON
// (object keys sorted by UTF-16 code units at every level, no white space, strings escaped as
// JSON.stringify escapes them, numbers as their JSON text); a content's digest is the sha256 of the
// canonical JSON of its objects' digests by key. Written here, not with encoding/json, whose escaping
// of <, >, &, U+2028 and U+2029 differs from JavaScript's.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// objectDigest is an object's digest: what a pair's inputs hold in place of its manifest.
func objectDigest(manifest map[string]any) string {
	var b strings.Builder
	writeCanonical(&b, manifest)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// contentDigest is a content's digest from its objects' digests by key.
func contentDigest(objectDigests map[string]string) string {
	m := make(map[string]any, len(objectDigests))
	for k, d := range objectDigests {
		m[k] = d
	}
	var b strings.Builder
	writeCanonical(&b, m)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

func writeCanonical(b *strings.Builder, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case json.Number:
		b.WriteString(t.String())
	case float64:
		// As JSON.stringify writes it (manifests decode numbers as json.Number; this is for a value built in Go).
		b.WriteString(jsNumber(t))
	case int:
		b.WriteString(strconv.Itoa(t))
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case string:
		writeString(b, t)
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, x)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return utf16Less(keys[i], keys[j]) })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCanonical(b, t[k])
		}
		b.WriteByte('}')
	default:
		// Not a JSON value a manifest decodes to; its JSON text, so the digest still depends on it.
		raw, _ := json.Marshal(t)
		b.Write(raw)
	}
}

// jsNumber writes a number as JSON.stringify does (ECMAScript's Number::toString): the shortest digits
// that read back as the same float64, written out in full for 1e-6 <= |x| < 1e21 and in exponent form
// otherwise ("1e-7", "1.5e+300": no leading zero in the exponent, always its sign); NaN and the
// infinities as null.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "null"
	case f == 0:
		return "0" // -0 too
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Go's shortest round-trip digits, d.ddde±XX: the digits and n, where f = 0.digits × 10^n.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mantissa, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	n, k := x+1, len(digits)
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	expSign := "+"
	if n-1 < 0 {
		expSign = "-"
	}
	abs := n - 1
	if abs < 0 {
		abs = -abs
	}
	if k == 1 {
		return sign + digits + "e" + expSign + strconv.Itoa(abs)
	}
	return sign + digits[:1] + "." + digits[1:] + "e" + expSign + strconv.Itoa(abs)
}

// writeString escapes as JSON.stringify does: ", \, and the control characters (\b \f \n \r \t by
// name, the rest as \u00xx); everything else as it is.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			fmt.Fprintf(b, `\u%04x`, c)
		}
		i++
	}
	b.WriteByte('"')
}

// utf16Less orders keys as JavaScript's default sort does (by UTF-16 code units), which differs from
// Go's byte order only past U+FFFF.
func utf16Less(a, b string) bool {
	if ascii(a) && ascii(b) {
		return a < b
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
