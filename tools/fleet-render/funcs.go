package main

import (
	"fmt"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
)

// Removed by Fleet's tplFuncMap: they read the controller's environment or the network.
var fleetRemoved = []string{"env", "expandenv", "include", "tpl", "getHostByName"}

// Functions whose result changes from run to run. Fleet allows them; here every `pulumi up` would
// compute new values and redeploy, so a template that calls one is refused with this reason.
var nonDeterministic = []string{
	"now", "ago", "randAlpha", "randAlphaNum", "randAscii", "randNumeric",
	"randInt", "randBytes", "uuidv4", "shuffle", "genPrivateKey", "genCA", "genCAWithKey",
	"genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey",
	"encryptAES", "bcrypt", "htpasswd",
}

var funcMap = valuesFuncMap()

// valuesFuncMap is sprig's text function map as Fleet configures it, with the non-deterministic
// functions replaced by ones that fail naming themselves (a parse needs every name defined).
func valuesFuncMap() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range fleetRemoved {
		delete(f, name)
	}
	for _, name := range nonDeterministic {
		if _, ok := f[name]; !ok {
			continue
		}
		f[name] = refused(name)
	}
	refuseCurrentTime(f)
	return f
}

func refused(name string) func(...any) (any, error) {
	return func(...any) (any, error) {
		return nil, fmt.Errorf("function %q is not deterministic: every `pulumi up` would compute new values and redeploy; pulumi-fleet refuses it", name)
	}
}

// refuseCurrentTime wraps sprig's date formatting functions, deterministic for a time or Unix
// seconds, which format the current time when given anything else (a float64 from clusterValues, a
// string, nil: sprig's dateInZone defaults to time.Now()), and durationRound, which rounds the time
// since a time.Time. Those calls are refused as the functions above; other calls go to sprig as is,
// with the same parameter types, so argument errors stay sprig's.
func refuseCurrentTime(f template.FuncMap) {
	date := f["date"].(func(string, any) string)
	dateInZone := f["dateInZone"].(func(string, any, string) string)
	htmlDate := f["htmlDate"].(func(any) string)
	htmlDateInZone := f["htmlDateInZone"].(func(any, string) string)
	durationRound := f["durationRound"].(func(any) string)
	f["date"] = func(layout string, d any) (string, error) {
		if err := currentTimeRefused("date", d); err != nil {
			return "", err
		}
		return date(layout, d), nil
	}
	zoned := func(name string) func(string, any, string) (string, error) {
		return func(layout string, d any, zone string) (string, error) {
			if err := currentTimeRefused(name, d); err != nil {
				return "", err
			}
			return dateInZone(layout, d, zone), nil
		}
	}
	f["dateInZone"], f["date_in_zone"] = zoned("dateInZone"), zoned("date_in_zone")
	f["htmlDate"] = func(d any) (string, error) {
		if err := currentTimeRefused("htmlDate", d); err != nil {
			return "", err
		}
		return htmlDate(d), nil
	}
	f["htmlDateInZone"] = func(d any, zone string) (string, error) {
		if err := currentTimeRefused("htmlDateInZone", d); err != nil {
			return "", err
		}
		return htmlDateInZone(d, zone), nil
	}
	f["durationRound"] = func(d any) (string, error) {
		if _, ok := d.(time.Time); ok {
			return "", fmt.Errorf("function %q is not deterministic given a time (it rounds the time since then): every `pulumi up` would compute new values and redeploy; pulumi-fleet refuses it", "durationRound")
		}
		return durationRound(d), nil
	}
}

// currentTimeRefused: the argument types sprig's dateInZone formats; anything else means time.Now().
func currentTimeRefused(name string, d any) error {
	switch d.(type) {
	case time.Time, *time.Time, int64, int, int32:
		return nil
	}
	return fmt.Errorf("function %q is not deterministic given a %T (not a time or Unix seconds as an integer, sprig formats the current time): every `pulumi up` would compute new values and redeploy; pulumi-fleet refuses it", name, d)
}
