package helmrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// DownloadChart fetches the chart archive at chartURL, an entry of the
// index's urls: a relative URL is resolved against the repository URL
// (Helm's repo.ResolveReferenceURL). The credentials go only to the
// repository's own scheme and host (port included) unless
// spec.passCredentials is true, Helm's rule; a chart served from another
// host gets no Authorization header. More than maxSize bytes (0:
// Limits.MaxChartSize) fail with ErrTooLarge before the rest is read.
// Errors match ErrInvalidURL, ErrAuth, ErrNotFound, ErrTooLarge or ErrFetch.
func (c *Client) DownloadChart(ctx context.Context, chartURL string, maxSize int64) ([]byte, error) {
	if c.isOCI {
		return nil, errorf(ErrInvalidURL, "charts of an OCI Helm repository are pulled from the registry")
	}
	if maxSize <= 0 {
		maxSize = c.limits.MaxChartSize
	}
	resolved, err := c.ResolveChartURL(chartURL)
	if err != nil {
		return nil, err
	}
	resp, err := c.get(ctx, resolved, nil)
	if err != nil {
		return nil, err
	}
	defer drainClose(resp.Body)
	if resp.ContentLength > maxSize {
		return nil, chartTooLarge(resolved, maxSize)
	}
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	n, err := io.Copy(&buf, io.LimitReader(resp.Body, maxSize+1))
	if err != nil {
		return nil, errorf(ErrFetch, "failed to download chart from '%s': %w", redact(resolved), err)
	}
	if n > maxSize {
		return nil, chartTooLarge(resolved, maxSize)
	}
	return buf.Bytes(), nil
}

// ResolveChartURL turns an index entry's chart URL into an absolute one.
func (c *Client) ResolveChartURL(chartURL string) (string, error) {
	if chartURL == "" {
		return "", errorf(ErrInvalidURL, "chart has no downloadable URLs")
	}
	resolved, err := repo.ResolveReferenceURL(c.URL(), chartURL)
	if err != nil {
		return "", errorf(ErrInvalidURL, "invalid chart URL format '%s': %w", redact(chartURL), errors.Unwrap(err))
	}
	u, err := url.Parse(resolved)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errorf(ErrInvalidURL, "invalid chart URL format '%s': want an http(s) URL", redact(chartURL))
	}
	return resolved, nil
}

func chartTooLarge(u string, limit int64) error {
	return errorf(ErrTooLarge, "failed to download chart from '%s': chart exceeds the maximum chart size of %d bytes (--helm-chart-max-size)", redact(u), limit)
}

// get sends a GET to rawURL with the credentials when they may go there,
// and turns anything but 200 (and 304) into an error of the right kind.
func (c *Client) get(ctx context.Context, rawURL string, prepare func(*http.Request)) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, http.NoBody)
	if err != nil {
		return nil, errorf(ErrInvalidURL, "invalid URL '%s': %w", redact(rawURL), errors.Unwrap(err))
	}
	req.Header.Set("User-Agent", userAgent)
	if c.username != "" && c.credentialsFor(req.URL) {
		req.SetBasicAuth(c.username, c.password)
	}
	if prepare != nil {
		prepare(req)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error repeats the URL, which carries no secret: credentials
		// are never part of it (parseRepositoryURL refuses userinfo).
		return nil, errorf(ErrFetch, "failed to fetch %s: %w", redact(rawURL), unwrapURLError(err))
	}
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNotModified {
		return resp, nil
	}
	drainClose(resp.Body)
	return nil, statusError(rawURL, resp.StatusCode)
}

// credentialsFor is Helm's rule: same scheme and host (with port) as the
// repository URL, or spec.passCredentials.
func (c *Client) credentialsFor(u *url.URL) bool {
	return c.passCredentials || (u.Scheme == c.repoURL.Scheme && u.Host == c.repoURL.Host)
}

// statusError words a refused request as Helm's getter does ("failed to
// fetch <url> : 401 Unauthorized") and gives it its kind.
func statusError(rawURL string, code int) error {
	msg := fmt.Sprintf("failed to fetch %s : %d %s", redact(rawURL), code, http.StatusText(code))
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return errorf(ErrAuth, "%s", msg)
	case http.StatusNotFound:
		return errorf(ErrNotFound, "%s", msg)
	default:
		return errorf(ErrFetch, "%s", msg)
	}
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact drops userinfo and the query from a URL for messages: an index
// may carry signed chart URLs whose query is a credential.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "redacted"
	}
	return u.String()
}

func drainClose(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	_ = body.Close()
}
