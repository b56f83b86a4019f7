// chart-repo: a Helm chart repository and an OCI registry on loopback, for pulumi-fleet's remote-chart
// tests. Real servers, not stand-ins: the OCI side is go-containerregistry's registry (the in-memory
// implementation of the OCI distribution API that crane and ko test against; the CNCF distribution
// registry would add 286 packages and about a minute to a cold build), the charts are packaged,
// indexed and pushed with Helm's own SDK.
//
//	chart-repo --charts DIR [--files DIR] [--tls] [--user U --password P] [--log FILE]
//	           [--chart-url-base URL] [--redirect PATH=URL ...]
//
// Every subdirectory of DIR is a chart source directory. Each is packaged into a Helm repository
// served at <url>/charts (index.yaml with relative chart URLs) and pushed to oci://<host>/charts/<name>.
// When ready it prints one JSON line {"url", "repo", "oci", "caFile"} and serves until stdin closes or
// it is signalled. With --tls it serves HTTPS with a certificate of its own, the CA written to caFile.
// SIGHUP publishes charts added to DIR since, then prints {"reloaded": true}.
// With --user/--password every request needs that basic auth. --files serves a directory as is at
// <url>/files/, for archives a test makes by hand.
//
// For the tests of what a pull may reach (pulumi-fleet issue 27):
//   - --log FILE appends one JSON line {"method", "path", "authorization"} per request received once the
//     server is ready (before the basic auth check), so a test sees which requests carried credentials;
//   - --chart-url-base URL writes index.yaml with absolute chart URLs under URL (another server);
//   - --redirect PATH=URL answers requests for PATH with a 302 to URL (repeatable);
//   - /stall/... accepts the request and never answers; /trickle/... sends the headers and the first
//     KiB of a body it never finishes. Both hold until the client goes away or the server stops.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	ociregistry "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/registry"
	repov1 "helm.sh/helm/v4/pkg/repo/v1"
)

func main() {
	charts := flag.String("charts", "", "directory whose subdirectories are chart sources (required)")
	useTLS := flag.Bool("tls", false, "serve HTTPS with a self-signed certificate")
	user := flag.String("user", "", "basic auth user required on every request")
	password := flag.String("password", "", "basic auth password")
	files := flag.String("files", "", "a directory served as is at <url>/files/ (hand-made archives)")
	logFile := flag.String("log", "", "append one JSON line per request received to this file")
	chartURLBase := flag.String("chart-url-base", "", "index.yaml's chart URLs are absolute, under this URL")
	redirects := map[string]string{}
	flag.Func("redirect", "PATH=URL: answer PATH with a 302 to URL (repeatable)", func(v string) error {
		from, to, ok := strings.Cut(v, "=")
		if !ok || !strings.HasPrefix(from, "/") || to == "" {
			return fmt.Errorf("want PATH=URL, got %q", v)
		}
		redirects[from] = to
		return nil
	})
	flag.Parse()
	if *charts == "" || flag.NArg() > 0 || (*user == "") != (*password == "") {
		flag.Usage()
		os.Exit(2)
	}
	opts := options{chartsDir: *charts, filesDir: *files, useTLS: *useTLS, user: *user, password: *password, logFile: *logFile, chartURLBase: *chartURLBase, redirects: redirects}
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "chart-repo:", err)
		os.Exit(1)
	}
}

type options struct {
	chartsDir, filesDir   string
	useTLS                bool
	user, password        string
	logFile, chartURLBase string
	redirects             map[string]string
}

func run(o options) error {
	chartsDir, filesDir, useTLS, user, password := o.chartsDir, o.filesDir, o.useTLS, o.user, o.password
	work, err := os.MkdirTemp("", "chart-repo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	repoDir := filepath.Join(work, "charts")
	if err := os.MkdirAll(repoDir, 0o755); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	host := ln.Addr().String()
	scheme, caFile := "http", ""
	var certs *tls.Config
	if useTLS {
		scheme, caFile = "https", filepath.Join(work, "ca.pem")
		if certs, err = selfSigned(caFile); err != nil {
			return err
		}
		ln = tls.NewListener(ln, certs)
	}

	mux := http.NewServeMux()
	mux.Handle("/charts/", http.StripPrefix("/charts/", http.FileServer(http.Dir(repoDir))))
	mux.Handle("/v2/", ociregistry.New(ociregistry.Logger(log.New(io.Discard, "", 0))))
	if filesDir != "" {
		mux.Handle("/files/", http.StripPrefix("/files/", http.FileServer(http.Dir(filesDir))))
	}
	for from, to := range o.redirects {
		mux.HandleFunc(from, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
	}
	quit := make(chan struct{})
	hold := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-quit:
		}
	}
	mux.HandleFunc("/stall/", func(_ http.ResponseWriter, r *http.Request) { hold(r) })
	mux.HandleFunc("/trickle/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		w.Header().Set("Content-Length", "1048576")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(make([]byte, 1024))
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		hold(r)
	})
	requestLog, err := newRequestLog(o.logFile)
	if err != nil {
		return err
	}
	defer requestLog.close()
	server := &http.Server{Handler: requestLog.wrap(withBasicAuth(mux, user, password)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(ln) }()

	publish := func() error {
		// The server's own pushes are not the test's requests.
		requestLog.on.Store(false)
		defer requestLog.on.Store(true)
		archives, err := packageCharts(chartsDir, repoDir)
		if err != nil {
			return err
		}
		index, err := repov1.IndexDirectory(repoDir, o.chartURLBase)
		if err != nil {
			return err
		}
		if err := index.WriteFile(filepath.Join(repoDir, "index.yaml"), 0o644); err != nil {
			return err
		}
		return pushCharts(archives, host, useTLS, caFile, user, password)
	}
	if err := publish(); err != nil {
		return err
	}
	ready, _ := json.Marshal(map[string]string{
		"url": scheme + "://" + host, "repo": scheme + "://" + host + "/charts", "oci": "oci://" + host + "/charts", "caFile": caFile,
	})
	fmt.Println(string(ready))

	done := make(chan os.Signal, 1)
	signal.Notify(done, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() { _, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin)); done <- syscall.SIGTERM }()
	// SIGHUP publishes the charts added to the directory since (a release published meanwhile).
	for sig := <-done; sig == syscall.SIGHUP; sig = <-done {
		if err := publish(); err != nil {
			return err
		}
		fmt.Println(`{"reloaded": true}`)
	}
	close(quit)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return server.Shutdown(ctx)
}

// requestLog appends one JSON line per request to a file (--log), while on.
type requestLog struct {
	mu sync.Mutex
	f  *os.File
	on atomic.Bool
}

func newRequestLog(file string) (*requestLog, error) {
	l := &requestLog{}
	if file == "" {
		return l, nil
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	l.f = f
	return l, nil
}

func (l *requestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.f != nil && l.on.Load() {
			line, _ := json.Marshal(map[string]string{"method": r.Method, "path": r.URL.RequestURI(), "authorization": r.Header.Get("Authorization")})
			l.mu.Lock()
			_, _ = l.f.Write(append(line, '\n'))
			l.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

func (l *requestLog) close() {
	if l.f != nil {
		_ = l.f.Close()
	}
}

func packageCharts(src, dest string) ([]string, error) {
	entries, err := os.ReadDir(src)
	if err != nil {
		return nil, err
	}
	var archives []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		ch, err := loader.LoadDir(filepath.Join(src, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", e.Name(), err)
		}
		archive, err := chartutil.Save(ch, dest)
		if err != nil {
			return nil, fmt.Errorf("packaging %s: %w", e.Name(), err)
		}
		archives = append(archives, archive)
	}
	if len(archives) == 0 {
		return nil, fmt.Errorf("no chart directories in %s", src)
	}
	return archives, nil
}

func pushCharts(archives []string, host string, useTLS bool, caFile, user, password string) error {
	opts := []registry.ClientOption{registry.ClientOptWriter(io.Discard), registry.ClientOptCredentialsFile(filepath.Join(filepath.Dir(archives[0]), "..", "creds.json"))}
	if useTLS {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		opts = append(opts, registry.ClientOptHTTPClient(&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}))
	} else {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	if user != "" {
		opts = append(opts, registry.ClientOptBasicAuth(user, password))
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return err
	}
	for _, archive := range archives {
		data, err := os.ReadFile(archive)
		if err != nil {
			return err
		}
		ch, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			return err
		}
		ref := fmt.Sprintf("%s/charts/%s:%s", host, ch.Metadata.Name, ch.Metadata.Version)
		if _, err := client.Push(data, ref); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
	}
	return nil
}

func withBasicAuth(next http.Handler, user, password string) http.Handler {
	if user == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="chart-repo"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// selfSigned makes a certificate for 127.0.0.1 that is its own CA, and writes it to caFile.
func selfSigned(caFile string) (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "chart-repo test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(caFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}, nil
}
