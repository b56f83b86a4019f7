package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every hostile shape an object's identity can take on its way to a file name.
var hostileIdentities = []renderIdentity{
	{"v1", "ConfigMap", "team", "b-cfg"},
	{"v1", "ConfigMap", "team-b", "cfg"},
	{"v1", "ConfigMap", "team_b", "cfg"},
	{"v1", "ConfigMap", "team", "b_cfg"},
	{"v1", "ConfigMap", "", "team_b_cfg"},
	{"v1", "Configmap", "team", "b-cfg"},
	{"v1", "configmap", "team", "b-cfg"},
	{"apps/v1", "Deployment", "a", "b"},
	{"apps_v1", "Deployment", "a", "b"},
	{"apps~v1", "Deployment", "a", "b"},
	{"apps%7Ev1", "Deployment", "a", "b"},
	{"v1", "Secret", "ns", "../../etc/passwd"},
	{"v1", "Secret", "ns", ".."},
	{"v1", "Secret", "..", "."},
	{"v1", "Secret", "ns", "a/b"},
	{"v1", "Secret", "ns", `a\b`},
	{"v1", "Secret", "ns", "a\x00b"},
	{"v1", "Secret", "ns", "a\nb\r\u2028c"},
	{"v1", "Secret", "ns", "\x1b[31mred"},
	{"v1", "Secret", "ns", "раураl"}, // Cyrillic lookalikes
	{"v1", "Secret", "ns", "paypal"},
	{"v1", "Secret", "ns", "A"},
	{"v1", "Secret", "ns", "a"},
	{"rbac.authorization.k8s.io/v1", "ClusterRole", "", "system:controller:x"},
	{"v1", "Secret", "ns", "x+"},
	{"v1", "Secret", "ns", strings.Repeat("a", 253)},
	{"v1", "Secret", "ns", strings.Repeat("a", 252) + "b"},
	{"v1", "Secret", "ns", strings.Repeat("-", 253)},
	{"v1", "Secret", "ns", strings.Repeat("_", 253)},
	{"v1", "Secret", "ns", strings.Repeat("é", 200)},
	{strings.Repeat("g.", 120) + "io/v1", strings.Repeat("K", 63), strings.Repeat("n", 63), strings.Repeat("x", 253)},
}

// Injective, reversible, and always one path under the directory: no segment is "..", ".", or longer
// than a file system allows, and only a long name's directories (ending in "+") add segments.
func TestRenderFileNamesAreInjectiveReversibleAndStayInTheirDirectory(t *testing.T) {
	seen := map[string]renderIdentity{}
	for _, id := range hostileIdentities {
		name := renderFileName(id)
		if other, ok := seen[name]; ok {
			t.Fatalf("%+v and %+v share %s", id, other, name)
		}
		// A case-insensitive file system: names differing in case only are told apart by content (fileHolds).
		seen[name] = id
		back, err := parseRenderFileName(name)
		if err != nil || back != id {
			t.Fatalf("%s gives back %+v (%v), not %+v", name, back, err, id)
		}
		segments := strings.Split(name, string(filepath.Separator))
		for i, seg := range segments {
			if seg == "" || seg == "." || seg == ".." || len(seg) > 255 || strings.ContainsAny(seg, "/\\\x00\n\r\x1b") {
				t.Fatalf("%+v: segment %q of %s", id, seg, name)
			}
			if i < len(segments)-1 && !strings.HasSuffix(seg, "+") || i == len(segments)-1 && !strings.HasSuffix(seg, ".yaml") {
				t.Fatalf("%+v: segment %q of %s", id, seg, name)
			}
		}
		if filepath.Clean(filepath.Join("d", name)) != filepath.Join("d", name) || !strings.HasPrefix(filepath.Join("d", name), "d/") {
			t.Fatalf("%s leaves its directory", name)
		}
	}
}

func manifestOf(id renderIdentity) map[string]any {
	meta := map[string]any{"name": id.Name}
	if id.Namespace != "" {
		meta["namespace"] = id.Namespace
	}
	return map[string]any{"apiVersion": id.APIVersion, "kind": id.Kind, "metadata": meta}
}

// The review's case: namespace team name b-cfg and namespace team-b name cfg were one file; the second
// overwrote the first, and its prune deleted it. Now each has its own file, and a prune removes only a
// file that holds its own object.
func TestTheSquattersPruneNeverRemovesAnotherObjectsFile(t *testing.T) {
	dir := t.TempDir()
	victim, squatter := manifestOf(hostileIdentities[1]), manifestOf(hostileIdentities[0])
	if err := writeManifest(dir, victim); err != nil {
		t.Fatal(err)
	}
	if err := writeManifest(dir, squatter); err != nil {
		t.Fatal(err)
	}
	removeRendered(dir, squatter)
	if _, err := os.Stat(renderPath(dir, victim)); err != nil {
		t.Fatalf("the victim's file went with the squatter's prune: %v", err)
	}
	if _, err := os.Stat(renderPath(dir, squatter)); err == nil {
		t.Fatal("the squatter's own file stayed")
	}
}

// A file that holds another object (a case-insensitive file system, a hand-placed file) is refused,
// not overwritten, and not removed by a prune.
func TestAFileHoldingAnotherObjectIsNeitherOverwrittenNorPruned(t *testing.T) {
	dir := t.TempDir()
	mine := manifestOf(renderIdentity{"v1", "ConfigMap", "app", "a"})
	path := renderPath(dir, mine)
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Configmap\nmetadata: {name: a, namespace: app}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeManifest(dir, mine)
	if err == nil || !strings.Contains(err.Error(), "not overwritten") {
		t.Fatalf("want a refusal naming the file, got %v", err)
	}
	removeRendered(dir, mine)
	if text, _ := os.ReadFile(path); !strings.Contains(string(text), "Configmap") {
		t.Fatal("another object's file was removed or overwritten")
	}
}

// An earlier version's file (the colliding name) is moved to the new name when it holds the object,
// and left alone when it holds the other object that shared its name.
func TestEarlierFileNamesMoveOnlyWhenTheyHoldTheObject(t *testing.T) {
	dir := t.TempDir()
	victim, squatter := manifestOf(hostileIdentities[1]), manifestOf(hostileIdentities[0])
	legacy := legacyRenderPath(dir, victim)
	if legacy != legacyRenderPath(dir, squatter) {
		t.Fatal("the two shared one file before")
	}
	_ = os.MkdirAll(filepath.Dir(legacy), 0o755)
	if err := os.WriteFile(legacy, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: team-b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeManifest(dir, squatter); err != nil {
		t.Fatal(err)
	}
	removeRendered(dir, squatter)
	if _, err := os.Stat(legacy); err != nil {
		t.Fatal("the squatter removed the victim's earlier file")
	}
	if err := writeManifest(dir, victim); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); err == nil {
		t.Fatal("the victim's earlier file was not moved")
	}
	if _, err := os.Stat(renderPath(dir, victim)); err != nil {
		t.Fatal(err)
	}
}

// A name too long for one file is cut into directories, removed again with the file.
func TestALongNamesDirectoriesGoWithItsFile(t *testing.T) {
	dir := t.TempDir()
	long := manifestOf(hostileIdentities[len(hostileIdentities)-1])
	if err := writeManifest(dir, long); err != nil {
		t.Fatal(err)
	}
	removeRendered(dir, long)
	entries, _ := os.ReadDir(filepath.Join(dir, "1-manifest"))
	if len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}
