package main

import (
	"fmt"
	"text/template"

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
	return f
}

func refused(name string) func(...any) (any, error) {
	return func(...any) (any, error) {
		return nil, fmt.Errorf("function %q is not deterministic: every `pulumi up` would compute new values and redeploy; pulumi-fleet refuses it", name)
	}
}
