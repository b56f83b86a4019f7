package main

// The file name of an object in render mode: injective (two objects never share a file) and reversible
// (the name gives back the object's apiVersion, kind, namespace and name). The Kubernetes provider's
// layout joined the parts with "-" unescaped, so namespace "team" with name "b-cfg" and namespace
// "team-b" with name "cfg" were one file: one team's object overwrote another's, and its prune deleted
// it. Here each part is escaped so that it never holds the separator "_", and the parts are
// <apiVersion>_<kind>_<namespace>_<name>.yaml:
//   - kept as is: a-z 0-9 "." "-" (every DNS name), and A-Z in the kind (Kinds are CamelCase);
//   - "/" (the apiVersion's) becomes "~";
//   - every other byte (including "_", "~", "%", upper case outside the kind, non-ASCII) is %XX.
// A name longer than a file system allows (255 bytes) is cut into directories of renderChunk bytes,
// each ending in "+" (a byte the escaping never keeps), so a directory never has a file's name.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	renderSeparator = "_"
	renderMaxName   = 240
	renderChunk     = 200
)

// renderIdentity is what names an object's file.
type renderIdentity struct {
	APIVersion, Kind, Namespace, Name string
}

func identityOf(manifest map[string]any) renderIdentity {
	apiVersion, _ := manifest["apiVersion"].(string)
	kind, _ := manifest["kind"].(string)
	meta, _ := manifest["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	return renderIdentity{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
}

func escapeRenderPart(s string, upperAllowed bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '-', upperAllowed && c >= 'A' && c <= 'Z':
			b.WriteByte(c)
		case c == '/':
			b.WriteByte('~')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func unescapeRenderPart(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			b.WriteByte('/')
		case '%':
			if i+2 >= len(s) {
				return "", fmt.Errorf("a cut escape in %q", s)
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("a bad escape in %q", s)
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// renderFileName is the object's path relative to its directory (0-crd or 1-manifest).
func renderFileName(id renderIdentity) string {
	name := strings.Join([]string{
		escapeRenderPart(id.APIVersion, false),
		escapeRenderPart(id.Kind, true),
		escapeRenderPart(id.Namespace, false),
		escapeRenderPart(id.Name, false),
	}, renderSeparator) + ".yaml"
	if len(name) <= renderMaxName {
		return name
	}
	var parts []string
	for len(name) > renderMaxName {
		parts = append(parts, name[:renderChunk]+"+")
		name = name[renderChunk:]
	}
	return filepath.Join(append(parts, name)...)
}

// parseRenderFileName gives back the identity a file name was made from.
func parseRenderFileName(rel string) (renderIdentity, error) {
	segments := strings.Split(filepath.ToSlash(rel), "/")
	for i := range segments[:len(segments)-1] {
		segments[i] = strings.TrimSuffix(segments[i], "+")
	}
	joined := strings.Join(segments, "")
	if !strings.HasSuffix(joined, ".yaml") {
		return renderIdentity{}, fmt.Errorf("%s: not a rendered object's file", rel)
	}
	parts := strings.Split(strings.TrimSuffix(joined, ".yaml"), renderSeparator)
	if len(parts) != 4 {
		return renderIdentity{}, fmt.Errorf("%s: not a rendered object's file", rel)
	}
	var out [4]string
	for i, p := range parts {
		v, err := unescapeRenderPart(p)
		if err != nil {
			return renderIdentity{}, fmt.Errorf("%s: %v", rel, err)
		}
		out[i] = v
	}
	return renderIdentity{APIVersion: out[0], Kind: out[1], Namespace: out[2], Name: out[3]}, nil
}

// legacyRenderFileName is the name earlier versions wrote (the Kubernetes provider's, not injective):
// read only to move an object's own file to its new name, never to remove another's.
func legacyRenderFileName(id renderIdentity) string {
	namespace := id.Namespace
	if namespace == "" {
		namespace = "default"
	}
	return strings.Join([]string{strings.ReplaceAll(id.APIVersion, "/", "_"), strings.ToLower(id.Kind), namespace, id.Name}, "-") + ".yaml"
}
