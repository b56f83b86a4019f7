package main

// The network side of a chart pull, with GitRepo content treated as untrusted (issue 27). The URLs a
// fleet.yaml names, and the URLs a repository's index.yaml or a server's redirects lead to, are
// chosen by whoever can push to the GitRepo or controls a chart server; the stack configuration
// (allowedChartURLs, helmSecret, helmRepoURLRegex) is the operator's. So every HTTP request of a pull
// (index.yaml, archive, absolute URLs from index.yaml, each redirect hop, every OCI registry request,
// token requests included) passes through pullTransport, which
//   - parses the request's URL and refuses one with userinfo, a scheme other than http/https, or a
//     `.`/`..` path segment;
//   - matches the URL, normalized from its parsed parts, against the allow-list: each pattern must
//     match the whole normalized URL, and a URL no pattern matches is refused before it is sent;
//   - adds the GitRepo's Helm credentials (basic auth header, never in a URL) only when
//     helmRepoURLRegex matches the normalized URL from its start (Fleet's meaning of the regex);
//   - bounds the pull in time: one deadline for the whole pull covers connecting, the TLS handshake,
//     waiting for headers and reading bodies, for every request of it.
//
// The normalized URL is scheme://host[:port]/path: scheme and host lower case, the port left out
// when it is the scheme's default (80 for http, 443 for https), the path as sent (percent-encoded,
// "/" when empty), no userinfo, no query, no fragment.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

const (
	// The setting named in messages: the operator adds patterns there, in the stack file.
	allowSetting = "allowedChartURLs"
	// How many redirects one request may follow (as net/http's default).
	maxRedirects = 10
	// Connecting and the TLS handshake get at most this long, within the pull's deadline.
	dialTimeout      = 30 * time.Second
	handshakeTimeout = 10 * time.Second
)

// normalizeURL is the string the allow-list and helmRepoURLRegex are matched against. A URL with
// userinfo, without a host, or with a `.` or `..` path segment (also percent-encoded or with
// backslashes, which servers may resolve as a parent directory) is an error.
func normalizeURL(u *url.URL) (string, error) {
	if u.User != nil {
		return "", fmt.Errorf("%s has a user name or password before the host %q: URLs with userinfo are refused (the GitRepo's helmSecret is the only source of chart credentials)", redactURL(u), u.Host)
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if scheme == "" || host == "" || u.Opaque != "" {
		return "", fmt.Errorf("%s is not an absolute URL with a host", redactURL(u))
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443") {
		host += ":" + port
	}
	for _, seg := range strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("%s has a %q path segment: refused, as the server would resolve it to another path than the one allowed", redactURL(u), seg)
		}
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return scheme + "://" + host + p, nil
}

// redactURL is the URL with any userinfo (a user name can be a token) replaced by ***.
func redactURL(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = nil
	s := c.String()
	if i := strings.Index(s, "://"); i >= 0 {
		return s[:i+3] + "***@" + s[i+3:]
	}
	return s
}

// redact drops credentials embedded in a URL (or in URLs inside a message) before it reaches a message.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.User != nil {
		return redactURL(u)
	}
	return userinfoInText.ReplaceAllString(s, "://***@")
}

var userinfoInText = regexp.MustCompile(`://[^/@\s"]*@`)

// urlPolicy is the operator's part of a pull: which URLs may be requested, and where the credentials go.
type urlPolicy struct {
	allowed     []*regexp.Regexp // each anchored at both ends
	credentials *regexp.Regexp   // anchored at the start; nil: the credentials go nowhere
	username    string
	password    string
	// ociHost: for an oci:// pull, the registry's host[:port]. Fleet matches helmRepoURLRegex against
	// the oci:// reference, so a registry request https://H/v2/P is also matched as oci://H/P.
	ociHost string
}

// newURLPolicy compiles the GitRepo's allowedChartURLs and helmRepoURLRegex (Go's regexp, RE2).
func newURLPolicy(allowed []string, credentialsRegex string, auth HelmAuth) (*urlPolicy, error) {
	p := &urlPolicy{}
	for i, pattern := range allowed {
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		if err == nil {
			_, err = regexp.Compile(pattern) // the pattern alone, so "a)|(b" cannot pass
		}
		if err != nil {
			return nil, fmt.Errorf("%s[%d] %q: %w", allowSetting, i, pattern, err)
		}
		p.allowed = append(p.allowed, re)
	}
	if credentialsRegex != "" {
		if _, err := regexp.Compile(credentialsRegex); err != nil {
			return nil, fmt.Errorf("helmRepoURLRegex: %w", err)
		}
		p.credentials = regexp.MustCompile("^(?:" + credentialsRegex + ")")
	}
	if auth.Username != "" && auth.Password != "" {
		p.username, p.password = auth.Username, auth.Password
	}
	return p, nil
}

func (p *urlPolicy) allows(normalized string) bool {
	for _, re := range p.allowed {
		if re.MatchString(normalized) {
			return true
		}
	}
	return false
}

// sendsCredentials: the GitRepo has credentials and helmRepoURLRegex matches this URL.
func (p *urlPolicy) sendsCredentials(normalized string) bool {
	if p.username == "" || p.credentials == nil {
		return false
	}
	if p.credentials.MatchString(normalized) {
		return true
	}
	if p.ociHost != "" {
		for _, scheme := range []string{"https://", "http://"} {
			if rest, ok := strings.CutPrefix(normalized, scheme+p.ociHost+"/v2/"); ok {
				return p.credentials.MatchString("oci://" + p.ociHost + "/" + rest)
			}
		}
	}
	return false
}

// registryHost is an oci:// reference's host as normalized URLs write it (default ports left out).
func registryHost(ref *url.URL) string {
	if ref.Scheme != "oci" {
		return ""
	}
	h := strings.ToLower(ref.Hostname())
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if port := ref.Port(); port != "" && port != "443" && port != "80" {
		h += ":" + port
	}
	return h
}

// notAllowed is a request refused because no allowedChartURLs pattern matches it.
func notAllowed(normalized string, redirectFrom *url.URL) error {
	what := fmt.Sprintf("request to %s", normalized)
	if redirectFrom != nil {
		what = fmt.Sprintf("redirect from %s to %s", redactURL(redirectFrom), normalized)
	}
	return fmt.Errorf("%s refused: %s matches none of the GitRepo's %s (the operator allows chart URLs in the stack file, gitRepos[].%s; a pattern must match the whole URL, e.g. %q)",
		what, normalized, allowSetting, allowSetting, regexp.QuoteMeta(normalized))
}

// pullTransport is the RoundTripper of every request a pull makes (see the top of this file).
type pullTransport struct {
	base     http.RoundTripper
	policy   *urlPolicy
	deadline time.Time
	timeout  time.Duration

	mu        sync.Mutex
	requested []string // normalized URLs requested, for messages
	sentTo    int      // how many requests carried the credentials
}

func (t *pullTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var from *url.URL
	if req.Response != nil && req.Response.Request != nil {
		from = req.Response.Request.URL
	}
	refuse := func(err error) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close()
		}
		if from != nil {
			err = fmt.Errorf("redirect from %s: %w", redactURL(from), err)
		}
		return nil, err
	}
	normalized, err := normalizeURL(req.URL)
	if err != nil {
		return refuse(err)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return refuse(fmt.Errorf("%s: only http and https requests are made", normalized))
	}
	if !t.policy.allows(normalized) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, notAllowed(normalized, from)
	}
	ctx, cancel := context.WithDeadline(req.Context(), t.deadline)
	out := req.Clone(ctx)
	// A header the caller set is kept (an OCI bearer token the registry client fetched); the GitRepo's
	// credentials are added here only, per request, never by the libraries.
	sent := false
	if out.Header.Get("Authorization") == "" && t.policy.sendsCredentials(normalized) {
		out.SetBasicAuth(t.policy.username, t.policy.password)
		sent = true
	}
	t.mu.Lock()
	t.requested = append(t.requested, normalized)
	if sent {
		t.sentTo++
	}
	t.mu.Unlock()
	resp, err := t.base.RoundTrip(out)
	if err != nil {
		cancel()
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, t.timedOut(req.Method, normalized)
		}
		return nil, err
	}
	resp.Body = &deadlineBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel, err: func() error { return t.timedOut(req.Method, normalized) }}
	return resp, nil
}

func (t *pullTransport) timedOut(method, normalized string) error {
	return fmt.Errorf("%s %s: no complete answer before the chart pull's time limit of %s ran out (a pull, every request of it included, must finish within %s; the operator sets it with PULUMI_FLEET_CHART_PULL_TIMEOUT_SECONDS)", method, normalized, t.timeout, t.timeout)
}

// credentialsSent reports whether any request carried the credentials, and the URLs requested.
func (t *pullTransport) credentialsSent() (bool, []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sentTo > 0, append([]string(nil), t.requested...)
}

// deadlineBody reports a body read cut by the pull's deadline as a timeout, and releases the
// request's context when closed.
type deadlineBody struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelFunc
	err    func() error
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && errors.Is(b.ctx.Err(), context.DeadlineExceeded) {
		return n, b.err()
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// newPullClient is the HTTP client of one pull: Fleet's transportForAuth (the system roots plus the
// GitRepo's CA bundle, TLS 1.2 at least when a bundle is given, insecureSkipVerify when asked) under
// pullTransport. No client-level timeout: the transport's deadline covers every request and body.
func newPullClient(auth HelmAuth, policy *urlPolicy, timeout time.Duration) (*http.Client, *pullTransport, error) {
	tlsConfig, err := tlsConfigFor(auth)
	if err != nil {
		return nil, nil, err
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = tlsConfig
	// Timers of their own only where they are shorter than the pull's limit: one as long would race the
	// deadline and win now and then with a message that does not name the limit. Waiting for headers
	// has none: the deadline covers it.
	base.DialContext = (&net.Dialer{Timeout: shorterThan(dialTimeout, timeout), KeepAlive: 30 * time.Second}).DialContext
	base.TLSHandshakeTimeout = shorterThan(handshakeTimeout, timeout)
	base.ResponseHeaderTimeout = 0
	t := &pullTransport{base: base, policy: policy, deadline: time.Now().Add(timeout), timeout: timeout}
	client := &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return nil
		},
	}
	return client, t, nil
}

// shorterThan is d when it ends well before limit, else 0 (no timer: the pull's deadline applies).
func shorterThan(d, limit time.Duration) time.Duration {
	if d < limit/2 {
		return d
	}
	return 0
}
