package main

// Remote charts, as `fleet apply` fetches them into a bundle (rancher/fleet internal/bundlereader:
// addRemoteCharts, ChartURL, GetContent, downloadOCIChart): a chart named by a Helm repository
// (`helm.repo` + `helm.chart` + `helm.version`, the version a semver constraint resolved against the
// repository's index.yaml), by an OCI reference (`oci://`, tags resolved by Helm's downloader) or by a
// URL to an archive is downloaded and its files become bundle files under
// `.chart/<sha256 of chart:repo:version>/`, where the renderer finds the chart. The archive is read in
// memory: no file is written, names that leave the archive root and links are refused. Every request
// goes through pullTransport (pull_transport.go): only URLs the operator allowed, credentials only where
// helmRepoURLRegex matches, and a time limit on the whole pull.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"helm.sh/helm/v4/pkg/downloader"
	helmgetter "helm.sh/helm/v4/pkg/getter"
	"helm.sh/helm/v4/pkg/registry"
	orasauth "oras.land/oras-go/v2/registry/remote/auth"
)

const (
	ociPrefix = "oci://"
	// Limits on what one chart may unpack to (Fleet: 2 GiB and 100,000 files; a chart is far smaller).
	maxChartBytes = 256 << 20
	maxChartFiles = 20_000
	// The default time limit of one pull, every request of it included (PullJob.TimeoutSeconds).
	pullTimeout = 5 * time.Minute
)

// chartPrefix is Fleet's checksum(helm): where a remote chart's files live in the bundle.
func chartPrefix(chart, repo, version string) string {
	return fmt.Sprintf(".chart/%x", sha256.Sum256([]byte(chart+":"+repo+":"+version)))
}

func pullChart(job PullJob) PullResult {
	res := PullResult{Prefix: chartPrefix(job.Chart, job.Repo, job.Version)}
	fail := func(err error) PullResult {
		res.Error = scrub(describePull(job, err), job.Auth)
		return res
	}
	ref, err := chartReference(job)
	if err != nil {
		return fail(err)
	}
	policy, err := newURLPolicy(job.AllowedURLs, job.CredentialsRegex, job.Auth)
	if err != nil {
		return fail(err)
	}
	policy.ociHost = registryHost(ref)
	if len(policy.allowed) == 0 {
		return fail(fmt.Errorf("no remote chart may be pulled: the GitRepo's %s is not set (the operator lists the chart URLs a GitRepo's content may pull from in the stack file, gitRepos[].%s: regular expressions, each matched against the whole URL of every request, e.g. %q)", allowSetting, allowSetting, suggestPattern(ref, job.Auth)))
	}
	if policy.username != "" && job.CredentialsRegex == "" {
		res.Warnings = append(res.Warnings, "helmRepoURLRegex is empty, so the GitRepo's Helm credentials were not sent; set helmRepoURLRegex to allow it")
	}
	timeout := pullTimeout
	if job.TimeoutSeconds > 0 {
		timeout = time.Duration(job.TimeoutSeconds * float64(time.Second))
	}
	client, transport, err := newPullClient(job.Auth, policy, timeout)
	if err != nil {
		return fail(err)
	}
	if job.ResolveOnly { // a HelmOp's version (pull_version.go): nothing downloaded
		res.Source = redact(ref.String())
		if res.Version, err = resolveChartVersion(client, job, timeout); err != nil {
			return fail(withCredentialsHint(err, policy, transport))
		}
		return res
	}
	source, data, name, err := fetchChart(client, job, timeout)
	res.Source = redact(source)
	if err != nil {
		return fail(withCredentialsHint(err, policy, transport))
	}
	files, err := unpackChart(name, data)
	if err != nil {
		return fail(fmt.Errorf("unpacking %s: %w", redact(source), err))
	}
	res.Version = pulledVersion(files)
	for _, f := range files {
		in := FileInput{Name: res.Prefix + "/" + f.name, Content: string(f.data)}
		if !utf8.Valid(f.data) {
			in.Content, in.Encoding = base64.StdEncoding.EncodeToString(f.data), "base64"
		}
		res.Files = append(res.Files, in)
	}
	return res
}

// chartReference parses the URL the fleet.yaml names (the repository, or without one an archive URL
// or OCI reference as the chart). One with userinfo, or of a kind that is not pulled, is refused
// before anything is requested.
func chartReference(job PullJob) (*url.URL, error) {
	raw := job.Repo
	if raw == "" {
		raw = job.Chart
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not a URL: %w", redact(raw), err)
	}
	if u.User != nil {
		_, err := normalizeURL(u)
		return nil, err
	}
	switch {
	case job.Repo != "" && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "oci") && u.Host != "":
	case job.Repo != "":
		return nil, fmt.Errorf("%q is neither an https or http Helm repository nor an oci:// registry", redact(job.Repo))
	case (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "oci") && u.Host != "":
	default:
		return nil, fmt.Errorf("%q is neither a chart in the bundle nor an https or oci:// chart (git and other go-getter sources are not supported)", job.Chart)
	}
	return u, nil
}

// suggestPattern is an allowedChartURLs entry that would allow this reference's requests.
func suggestPattern(ref *url.URL, auth HelmAuth) string {
	u := *ref
	switch u.Scheme {
	case "oci":
		// Registry requests: <registry>/v2/<repository>/..., https unless basicHTTP.
		u.Scheme = "https"
		if auth.BasicHTTP {
			u.Scheme = "http"
		}
		u.Path = "/v2/" + strings.Trim(u.Path, "/") + "/"
		u.RawPath = ""
	case "http", "https":
	default:
		return ""
	}
	n, err := normalizeURL(&u)
	if err != nil {
		return ""
	}
	if strings.HasSuffix(n, "/") {
		return regexp.QuoteMeta(n) + ".*"
	}
	return regexp.QuoteMeta(n)
}

// withCredentialsHint adds, to a failed pull that had credentials none of its requests carried, the
// URLs helmRepoURLRegex was matched against (a regex written for the oci:// reference matches none).
func withCredentialsHint(err error, policy *urlPolicy, t *pullTransport) error {
	sent, requested := t.credentialsSent()
	if sent || policy.username == "" || policy.credentials == nil || len(requested) == 0 {
		return err
	}
	if len(requested) > 3 {
		requested = append(requested[:3], "...")
	}
	return fmt.Errorf("%w (the GitRepo's Helm credentials went with none of the requests: helmRepoURLRegex is matched from the start of each request's URL, here %s)", err, strings.Join(requested, ", "))
}

// scrub removes the GitRepo's password from a message, whatever a library put in it.
func scrub(msg string, auth HelmAuth) string {
	if auth.Password != "" {
		msg = strings.ReplaceAll(msg, auth.Password, "***")
	}
	return msg
}

func describePull(job PullJob, err error) string {
	return fmt.Sprintf("helm chart repo=%s chart=%s version=%s: %v", redact(job.Repo), redact(job.Chart), job.Version, err)
}

// fetchChart returns the archive of the chart and the name its format is told by.
func fetchChart(client *http.Client, job PullJob, timeout time.Duration) (source string, data []byte, name string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch {
	case strings.HasPrefix(job.Repo, ociPrefix):
		return pullOCI(job.Repo, job.Version, job.Auth, client)
	case job.Repo != "":
		source, err = chartURLFromIndex(ctx, client, job)
		if err != nil {
			return "", nil, "", err
		}
	case strings.HasPrefix(job.Chart, ociPrefix):
		// Deprecated in Fleet (use helm.repo) but still pulled.
		return pullOCI(job.Chart, job.Version, job.Auth, client)
	default: // an http(s) archive URL (chartReference checked)
		source = job.Chart
	}
	data, name, err = httpGet(ctx, client, source)
	return source, data, name, err
}

// chartURLFromIndex is Fleet's ChartURL: the repository's index.yaml, the newest version matching the
// constraint, its first URL made absolute against the repository.
func chartURLFromIndex(ctx context.Context, client *http.Client, job PullJob) (string, error) {
	cv, err := indexEntry(ctx, client, job) // pull_version.go
	if err != nil {
		return "", err
	}
	u, err := url.Parse(cv.URLs[0])
	if err != nil || u.IsAbs() {
		return cv.URLs[0], err
	}
	return url.JoinPath(job.Repo, cv.URLs[0])
}

// httpGet downloads one URL; the client's transport decides whether it may be requested and with
// which credentials.
func httpGet(ctx context.Context, client *http.Client, source string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
	if err != nil {
		return nil, "", fmt.Errorf("downloading %s: %w", redact(source), err)
	}
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the transport's message names the URL (normalized, without userinfo)
		}
		return nil, "", fmt.Errorf("downloading %s: %w", redact(source), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("downloading %s: unexpected status %d", redact(source), resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxChartBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("downloading %s: %w", redact(source), err)
	}
	if len(data) > maxChartBytes {
		return nil, "", fmt.Errorf("downloading %s: larger than %d bytes", redact(source), maxChartBytes)
	}
	u, _ := url.Parse(source)
	name := path.Base(u.Path)
	if a := u.Query().Get("archive"); a != "" {
		name = "download." + strings.TrimPrefix(a, ".")
	}
	return data, name, nil
}

// pullOCI is Fleet's downloadOCIChart: Helm's registry client and chart downloader, which resolve a
// version constraint against the repository's tags. The registry client is given no credentials and
// an authorizer of its own, so it never reads the machine's Docker or Helm credential stores; the
// GitRepo's credentials are added by the transport, per request, where helmRepoURLRegex matches (the
// registry's token endpoint included), and a bearer token the client obtains stays with its registry.
func pullOCI(ref, version string, auth HelmAuth, client *http.Client) (string, []byte, string, error) {
	tmp, err := os.MkdirTemp("", "fleet-render-oci-")
	if err != nil {
		return ref, nil, "", err
	}
	defer os.RemoveAll(tmp)
	opts := []registry.ClientOption{
		registry.ClientOptCredentialsFile(path.Join(tmp, "creds.json")),
		registry.ClientOptHTTPClient(client),
		registry.ClientOptAuthorizer(orasauth.Client{Client: client, Credential: noCredential}),
	}
	if auth.BasicHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	rc, err := registry.NewClient(opts...)
	if err != nil {
		return ref, nil, "", err
	}
	getterOpts := []helmgetter.Option{helmgetter.WithInsecureSkipVerifyTLS(auth.InsecureSkipVerify)}
	if auth.BasicHTTP {
		getterOpts = append(getterOpts, helmgetter.WithPlainHTTP(true))
	}
	d := downloader.ChartDownloader{
		Out:          io.Discard,
		Verify:       downloader.VerifyNever,
		ContentCache: tmp,
		Getters: helmgetter.Providers{{
			Schemes: []string{registry.OCIScheme},
			New: func(options ...helmgetter.Option) (helmgetter.Getter, error) {
				return helmgetter.NewOCIGetter(helmgetter.WithRegistryClient(rc))
			},
		}},
		RegistryClient: rc,
		Options:        getterOpts,
	}
	saved, _, err := d.DownloadTo(ref, version, tmp)
	if err != nil {
		return ref, nil, "", fmt.Errorf("helm chart download from %s: %w", redact(ref), err)
	}
	data, err := os.ReadFile(saved)
	return ref, data, path.Base(saved), err
}

// noCredential is the registry client's credential for every registry: none (see pullOCI).
func noCredential(context.Context, string) (orasauth.Credential, error) {
	return orasauth.EmptyCredential, nil
}

// tlsConfigFor is Fleet's transportForAuth TLS part: the system roots plus the GitRepo's CA bundle,
// TLS 1.2 at least when a bundle is given, and insecureSkipVerify when asked.
func tlsConfigFor(auth HelmAuth) (*tls.Config, error) {
	config := &tls.Config{InsecureSkipVerify: auth.InsecureSkipVerify} //nolint:gosec // the operator's explicit setting
	if auth.CABundle != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM([]byte(auth.CABundle)) {
			return nil, errors.New("helm caBundle contains no PEM certificate")
		}
		config.RootCAs = pool
		config.MinVersion = tls.VersionTLS12
	}
	return config, nil
}

// unpackChart reads a chart archive into files relative to the archive root (a chart archive's top
// directory is kept, as Fleet extracts it). Hidden files are dropped as Fleet's content walk does.
func unpackChart(name string, data []byte) ([]file, error) {
	lower := strings.ToLower(name)
	var r io.Reader = bytes.NewReader(data)
	switch {
	case strings.HasSuffix(lower, ".tgz"), strings.HasSuffix(lower, ".tar.gz"):
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		defer gz.Close()
		r = gz
	case strings.HasSuffix(lower, ".tar"):
	default:
		return nil, fmt.Errorf("%s: only .tgz, .tar.gz and .tar chart archives are supported", name)
	}
	tr := tar.NewReader(r)
	var files []file
	left := int64(maxChartBytes)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		clean := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if path.IsAbs(hdr.Name) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, fmt.Errorf("archive entry %q leaves the chart", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("archive entry %q is a link or special file", hdr.Name)
		}
		if hidden(clean) {
			continue
		}
		if len(files) >= maxChartFiles {
			return nil, fmt.Errorf("more than %d files", maxChartFiles)
		}
		body, err := io.ReadAll(io.LimitReader(tr, left+1))
		if err != nil {
			return nil, err
		}
		if left -= int64(len(body)); left < 0 {
			return nil, fmt.Errorf("unpacks to more than %d bytes", maxChartBytes)
		}
		files = append(files, file{name: clean, data: body})
	}
	if len(files) == 0 {
		return nil, errors.New("the archive has no files")
	}
	return files, nil
}

func hidden(name string) bool {
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}
