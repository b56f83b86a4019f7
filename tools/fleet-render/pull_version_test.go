package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// A Helm repository and an OCI registry's tag list on one loopback server: ResolveOnly jobs answer
// Fleet's ChartVersion and download nothing.
func TestResolveOnly(t *testing.T) {
	var requests atomic.Int32
	var archives atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch r.URL.Path {
		case "/charts/index.yaml":
			entry := func(name, v, url string) string {
				s := "  - name: " + name + "\n    version: " + v + "\n    apiVersion: v2\n"
				if url != "" {
					s += "    urls: [" + url + "]\n"
				}
				return s
			}
			_, _ = w.Write([]byte("apiVersion: v1\nentries:\n  demo:\n" +
				entry("demo", "1.2.3", "demo-1.2.3.tgz") + entry("demo", "1.2.5", "demo-1.2.5.tgz") +
				entry("demo", "1.3.0", "demo-1.3.0.tgz") + entry("demo", "2.0.0", "demo-2.0.0.tgz") +
				"  bare:\n" + entry("bare", "0.1.0", "")))
		case "/v2/charts/demo/tags/list":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"name":"charts/demo","tags":["1.10.0","1.2.3","1.9.0","2.0.0","latest"]}`))
		default:
			archives.Add(1)
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	allowed := []string{regexp.QuoteMeta(srv.URL) + "/.*"}
	oci := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/charts/demo"
	cases := []struct{ repo, chart, version, want, err string }{
		{srv.URL + "/charts", "demo", "~1.2", "1.2.5", ""},
		{srv.URL + "/charts", "demo", "1.3.0", "1.3.0", ""},
		{srv.URL + "/charts", "demo", "", "2.0.0", ""},
		{srv.URL + "/charts", "demo", "9.9.9", "", "no chart version found for demo-9.9.9"},
		{srv.URL + "/charts", "bare", "", "", "no URLs found for chart bare 0.1.0 at "},
		{oci, "", "<2.0.0", "1.10.0", ""},
		{oci, "", "1.2.3", "1.2.3", ""},
		{oci, "", "3.x", "", `could not find tag matching constraint "3.x" in registry ` + oci},
		{oci, "", "", "", `failed to compute version constraint from version ""`},
		{"", srv.URL + "/charts/demo-1.2.3.tgz", "1.2.3", "1.2.3", ""},
	}
	for _, c := range cases {
		res := pullChart(PullJob{Repo: c.repo, Chart: c.chart, Version: c.version, ResolveOnly: true, AllowedURLs: allowed, Auth: HelmAuth{BasicHTTP: true}})
		if res.Version != c.want || (c.err == "") != (res.Error == "") || !strings.Contains(res.Error, c.err) {
			t.Errorf("%s %s %q: version %q, error %q; want %q, error containing %q", c.repo, c.chart, c.version, res.Version, res.Error, c.want, c.err)
		}
	}
	if n := archives.Load(); n != 0 {
		t.Errorf("%d requests for something other than index.yaml or the tag list", n)
	}
	// No allow-list: refused before any request.
	before := requests.Load()
	res := pullChart(PullJob{Repo: srv.URL + "/charts", Chart: "demo", ResolveOnly: true})
	if !strings.Contains(res.Error, "allowedChartURLs is not set") || requests.Load() != before {
		t.Errorf("without allowedURLs: %q, %d requests", res.Error, requests.Load()-before)
	}
}
