package main

// Remote charts, as `fleet apply` fetches them into a bundle (rancher/fleet internal/bundlereader:
// addRemoteCharts, ChartURL, GetContent, downloadOCIChart): a chart named by a Helm repository
// (`helm.repo` + `helm.chart` + `helm.version`, the version a semver constraint resolved against the
// repository's index.yaml), by an OCI reference (`oci://`, tags resolved by Helm's downloader) or by a
// URL to an archive is downloaded and its files become bundle files under
// `.chart/<sha256 of chart:repo:version>/`, where the renderer finds the chart. The archive is read in
// memory: no file is written, names that leave the archive root and links are refused.

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
	repov1 "helm.sh/helm/v4/pkg/repo/v1"
	kyaml "sigs.k8s.io/yaml"
)

const (
	ociPrefix = "oci://"
	// Limits on what one chart may unpack to (Fleet: 2 GiB and 100,000 files; a chart is far smaller).
	maxChartBytes = 256 << 20
	maxChartFiles = 20_000
	pullTimeout   = 5 * time.Minute
)

// PullJob is one remote chart of a bundle (the bundle's helm options or a target customization's).
type PullJob struct {
	ID      string   `json:"id"`
	Chart   string   `json:"chart"`
	Repo    string   `json:"repo"`
	Version string   `json:"version"`
	Auth    HelmAuth `json:"auth"`
	// CredentialsRegex is the GitRepo's helmRepoURLRegex: the credentials in Auth are sent only to a
	// repository (or, without one, a chart URL) it matches from the start; empty sends them nowhere.
	CredentialsRegex string `json:"credentialsRegex,omitempty"`
}

// HelmAuth is a GitRepo's Helm credentials and transport settings (Fleet's helmSecretName keys).
type HelmAuth struct {
	Username           string `json:"username,omitempty"`
	Password           string `json:"password,omitempty"`
	CABundle           string `json:"caBundle,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
	BasicHTTP          bool   `json:"basicHTTP,omitempty"`
}

type PullResult struct {
	// Prefix is the bundle directory the files belong under: Fleet's `.chart/<sha256>`.
	Prefix string      `json:"prefix"`
	Files  []FileInput `json:"files"`
	// Source is what was downloaded (the archive URL or OCI reference), for messages.
	Source   string   `json:"source"`
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// chartPrefix is Fleet's checksum(helm): where a remote chart's files live in the bundle.
func chartPrefix(chart, repo, version string) string {
	return fmt.Sprintf(".chart/%x", sha256.Sum256([]byte(chart+":"+repo+":"+version)))
}

func pullChart(job PullJob) PullResult {
	res := PullResult{Prefix: chartPrefix(job.Chart, job.Repo, job.Version)}
	send, err := sendCredentials(job)
	if err != nil {
		res.Error = describePull(job, err)
		return res
	}
	if !send && (job.Auth.Username != "" || job.Auth.Password != "") {
		job.Auth.Username, job.Auth.Password = "", ""
		if job.CredentialsRegex == "" {
			res.Warnings = append(res.Warnings, "helmRepoURLRegex is empty, so the GitRepo's Helm credentials were not sent; set helmRepoURLRegex to allow it")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
	defer cancel()
	source, data, name, err := fetchChart(ctx, job)
	res.Source = redact(source)
	if err != nil {
		res.Error = describePull(job, err)
		return res
	}
	files, err := unpackChart(name, data)
	if err != nil {
		res.Error = describePull(job, fmt.Errorf("unpacking %s: %w", redact(source), err))
		return res
	}
	for _, f := range files {
		in := FileInput{Name: res.Prefix + "/" + f.name, Content: string(f.data)}
		if !utf8.Valid(f.data) {
			in.Content, in.Encoding = base64.StdEncoding.EncodeToString(f.data), "base64"
		}
		res.Files = append(res.Files, in)
	}
	return res
}

// sendCredentials is Fleet's shouldAddAuthToRequest: the regex anchored at the start of the repository
// URL, or of the chart URL when there is no repository.
func sendCredentials(job PullJob) (bool, error) {
	if job.CredentialsRegex == "" {
		return false, nil
	}
	if _, err := regexp.Compile(job.CredentialsRegex); err != nil {
		return false, fmt.Errorf("helmRepoURLRegex: %w", err)
	}
	re := regexp.MustCompile("^(?:" + job.CredentialsRegex + ")")
	if job.Repo == "" {
		return re.MatchString(job.Chart), nil
	}
	return re.MatchString(job.Repo), nil
}

func describePull(job PullJob, err error) string {
	return fmt.Sprintf("helm chart repo=%s chart=%s version=%s: %v", redact(job.Repo), redact(job.Chart), job.Version, err)
}

// fetchChart returns the archive of the chart and the name its format is told by.
func fetchChart(ctx context.Context, job PullJob) (source string, data []byte, name string, err error) {
	client, err := httpClient(job.Auth)
	if err != nil {
		return "", nil, "", err
	}
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
	case isHTTPURL(job.Chart):
		source = job.Chart
	default:
		return job.Chart, nil, "", fmt.Errorf("%q is neither a chart in the bundle nor an https or oci:// chart (git and other go-getter sources are not supported)", job.Chart)
	}
	data, name, err = httpGet(ctx, client, source, job.Auth)
	return source, data, name, err
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// chartURLFromIndex is Fleet's ChartURL: the repository's index.yaml, the newest version matching the
// constraint, its first URL made absolute against the repository.
func chartURLFromIndex(ctx context.Context, client *http.Client, job PullJob) (string, error) {
	indexURL, err := url.JoinPath(job.Repo, "index.yaml")
	if err != nil {
		return "", err
	}
	data, _, err := httpGet(ctx, client, indexURL, job.Auth)
	if err != nil {
		return "", err
	}
	var index repov1.IndexFile
	if err := kyaml.Unmarshal(data, &index); err != nil {
		return "", fmt.Errorf("reading %s: %w", redact(indexURL), err)
	}
	index.SortEntries()
	cv, err := index.Get(job.Chart, job.Version)
	if err != nil {
		return "", fmt.Errorf("%s: %w", redact(indexURL), err)
	}
	if len(cv.URLs) == 0 {
		return "", fmt.Errorf("no URLs found for chart %s %s at %s", cv.Name, cv.Version, redact(job.Repo))
	}
	u, err := url.Parse(cv.URLs[0])
	if err != nil || u.IsAbs() {
		return cv.URLs[0], err
	}
	return url.JoinPath(job.Repo, cv.URLs[0])
}

func httpGet(ctx context.Context, client *http.Client, source string, auth HelmAuth) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
	if err != nil {
		return nil, "", err
	}
	if auth.Username != "" && auth.Password != "" {
		req.SetBasicAuth(auth.Username, auth.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
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
// version constraint against the repository's tags.
func pullOCI(ref, version string, auth HelmAuth, client *http.Client) (string, []byte, string, error) {
	tmp, err := os.MkdirTemp("", "fleet-render-oci-")
	if err != nil {
		return ref, nil, "", err
	}
	defer os.RemoveAll(tmp)
	opts := []registry.ClientOption{
		registry.ClientOptCredentialsFile(path.Join(tmp, "creds.json")),
		registry.ClientOptHTTPClient(client),
	}
	if auth.BasicHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	if auth.Username != "" && auth.Password != "" {
		opts = append(opts, registry.ClientOptBasicAuth(auth.Username, auth.Password))
	}
	rc, err := registry.NewClient(opts...)
	if err != nil {
		return ref, nil, "", err
	}
	getterOpts := []helmgetter.Option{helmgetter.WithInsecureSkipVerifyTLS(auth.InsecureSkipVerify)}
	if auth.Username != "" && auth.Password != "" {
		getterOpts = append(getterOpts, helmgetter.WithBasicAuth(auth.Username, auth.Password))
	}
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

// httpClient is Fleet's transportForAuth: the system roots plus the GitRepo's CA bundle, TLS 1.2 at
// least when a bundle is given, and insecureSkipVerify when asked.
func httpClient(auth HelmAuth) (*http.Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: auth.InsecureSkipVerify} //nolint:gosec // the user's explicit setting
	if auth.CABundle != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM([]byte(auth.CABundle)) {
			return nil, errors.New("helm caBundle contains no PEM certificate")
		}
		transport.TLSClientConfig.RootCAs = pool
		transport.TLSClientConfig.MinVersion = tls.VersionTLS12
	}
	return &http.Client{Transport: transport, Timeout: pullTimeout}, nil
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

var userinfo = regexp.MustCompile(`://[^/@]*@`)

// redact drops credentials embedded in a URL before it reaches a message.
func redact(s string) string {
	return userinfo.ReplaceAllString(s, "://***@")
}
