package commitstatus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxErrorBody bounds how much of a refusing host's answer goes into the
// error.
const maxErrorBody = 256

// errNotFound marks a 404 answer: for a status lookup, "none set yet".
var errNotFound = errors.New("not found")

// apiClient speaks JSON to one host's REST API, for the hosts without a
// maintained Go client.
type apiClient struct {
	http *http.Client
	// auth sets the request's credentials.
	auth func(*http.Request)
}

// do sends a request with in as the JSON body (none when nil) and decodes
// a 2xx answer into out (ignored when nil). what names the call in
// errors; paths carry no credentials.
func (c apiClient) do(ctx context.Context, method, target, what string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s: encoding request: %w", what, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return fmt.Errorf("%s: building request: %w", what, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.auth(req)
	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error quotes the whole address: keep only the cause.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s: %w", what, errNotFound)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return fmt.Errorf("%s: %s: %s", what, resp.Status, strings.TrimSpace(string(b)))
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(out); err != nil {
		return fmt.Errorf("%s: decoding answer: %w", what, err)
	}
	return nil
}
