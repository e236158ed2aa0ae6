package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// maxErrorBody bounds how much of a refusing service's answer goes into
// the error.
const maxErrorBody = 256

// PostJSON sends body as JSON with method to address and fails on any
// answer outside 2xx, quoting the start of the answer. Errors name the
// address's host only: chat webhooks carry their key in the path or query.
func PostJSON(ctx context.Context, c *http.Client, method, address string, body any, header http.Header) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding payload: %w", err)
	}
	return Send(ctx, c, method, address, "application/json", b, header)
}

// Send sends body of the content type with method to address, as
// PostJSON does for JSON.
func Send(ctx context.Context, c *http.Client, method, address, contentType string, body []byte, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, method, address, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("building request to %s: invalid address", Host(address))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("posting to %s: %w", Host(address), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return fmt.Errorf("posting to %s: %s: %s", Host(address), resp.Status, strings.TrimSpace(string(msg)))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return nil
}

// Host keeps the scheme and host of an address, for errors and logs.
func Host(address string) string {
	u, err := url.Parse(address)
	if err != nil || u.Host == "" {
		return "<unparsable address>"
	}
	return u.Scheme + "://" + u.Host
}

// ObjectID names the event's object as Flux's messages do:
// "<kind>/<name>.<namespace>", the kind in lower case.
func ObjectID(e events.Event) string {
	o := e.InvolvedObject
	return strings.ToLower(o.Kind) + "/" + o.Name + "." + o.Namespace
}

// Field is one metadata entry of an event.
type Field struct{ Key, Value string }

// Fields returns e's metadata sorted by key, so that payloads are stable.
func Fields(e events.Event) []Field {
	out := make([]Field, 0, len(e.Metadata))
	for k, v := range e.Metadata {
		out = append(out, Field{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
