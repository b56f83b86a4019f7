// Command go-fields prints the JSON field paths of Fleet's FleetYAML Go type (the fleet.yaml schema
// as Fleet decodes it), one per line, from the Go sources of its v1alpha1 API package: the json tags,
// with inline structs flattened and lists marked `[]`; a field Fleet marks `jsonschema:"-"` (its own
// bookkeeping, left out of its published schema) is left out. Types from other packages (label
// selectors, int-or-string) are leaves. Standard library only, so it runs with no module download.
//
//	go run . <dir of pkg/apis/fleet.cattle.io/v1alpha1>
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go-fields <dir of the v1alpha1 package>")
		os.Exit(2)
	}
	structs, err := parseStructs(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if structs["FleetYAML"] == nil {
		fmt.Fprintln(os.Stderr, "no FleetYAML struct in", os.Args[1])
		os.Exit(1)
	}
	paths := map[string]bool{}
	walkStruct(structs, structs["FleetYAML"], "", paths, map[string]bool{"FleetYAML": true})
	out := make([]string, 0, len(paths))
	for p := range paths {
		out = append(out, p)
	}
	sort.Strings(out)
	fmt.Println(strings.Join(out, "\n"))
}

func parseStructs(dir string) (map[string]*ast.StructType, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	structs := map[string]*ast.StructType{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, dir+"/"+name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
			return true
		})
	}
	return structs, nil
}

func walkStruct(structs map[string]*ast.StructType, st *ast.StructType, prefix string, paths map[string]bool, seen map[string]bool) {
	for _, field := range st.Fields.List {
		tag := ""
		if field.Tag != nil {
			tags := reflect.StructTag(strings.Trim(field.Tag.Value, "`"))
			if tags.Get("jsonschema") == "-" {
				continue
			}
			tag = tags.Get("json")
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" && (len(field.Names) == 0 || strings.Contains(opts, "inline")) {
			walkType(structs, field.Type, prefix, paths, seen) // embedded or inline: its fields are this level's
			continue
		}
		if name == "" {
			name = field.Names[0].Name
		}
		at := name
		if prefix != "" {
			at = prefix + "." + name
		}
		paths[at] = true
		walkType(structs, field.Type, at, paths, seen)
	}
}

func walkType(structs map[string]*ast.StructType, t ast.Expr, at string, paths map[string]bool, seen map[string]bool) {
	switch x := t.(type) {
	case *ast.StarExpr:
		walkType(structs, x.X, at, paths, seen)
	case *ast.ArrayType:
		if id, ok := x.Elt.(*ast.Ident); ok && id.Name == "byte" {
			return
		}
		walkType(structs, x.Elt, at+"[]", paths, seen)
	case *ast.Ident:
		st := structs[x.Name]
		if st == nil || seen[x.Name] {
			return
		}
		seen[x.Name] = true
		walkStruct(structs, st, at, paths, seen)
		delete(seen, x.Name)
	}
}
