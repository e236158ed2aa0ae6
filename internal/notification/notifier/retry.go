package notifier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Retry says how often and how far apart a delivery is tried again.
type Retry struct {
	// Max is the number of retries after the first attempt.
	Max int
	// WaitMin and WaitMax bound the exponential back-off between tries;
	// a Retry-After header on a 429 or 503 answer wins.
	WaitMin, WaitMax time.Duration
}

// FluxRetry is the policy of Flux's notification-controller, whose
// notifiers post through go-retryablehttp with RetryMax 4, RetryWaitMin
// 2s and RetryWaitMax 30s: five attempts, 2s, 4s, 8s and 16s apart, all
// within the Provider's timeout.
var FluxRetry = Retry{Max: 4, WaitMin: 2 * time.Second, WaitMax: 30 * time.Second}

// Retrying returns a client sending through c that retries each request
// as r says, with go-retryablehttp's default policy, as Flux's notifiers
// do: connection errors, 429 and every 5xx but 501 are tried again; other
// answers, a bad certificate and an unsupported scheme are not. c's
// timeout bounds all the attempts together: the Provider's timeout, like
// Flux's context, covers the whole delivery.
//
// When the retries give up, the request fails with an error saying how
// many attempts were made and what the last one got; it never names the
// address, which may carry a webhook's key.
func Retrying(c *http.Client, r Retry) *http.Client {
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out := *c
	out.Transport = &retryTransport{base: base, policy: r}
	return &out
}

// retryTransport is an http.RoundTripper retrying through
// go-retryablehttp.
type retryTransport struct {
	base   http.RoundTripper
	policy Retry
}

// outcome remembers what the attempts of one request got, to report it
// when the retries stop.
type outcome struct {
	attempts int
	last     string
	// reported: giveUp made the error.
	reported bool
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A RoundTripper must not change the request it is given; retrying
	// rewinds the body on its own copy.
	req = req.Clone(req.Context())
	rreq, err := retryablehttp.FromRequest(req)
	if req.Body != nil {
		req.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	var o outcome
	c := &retryablehttp.Client{
		HTTPClient: &http.Client{
			Transport: t.base,
			// Redirects are the caller's client's to follow.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		RetryMax:     t.policy.Max,
		RetryWaitMin: t.policy.WaitMin,
		RetryWaitMax: t.policy.WaitMax,
		Backoff:      retryablehttp.DefaultBackoff,
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			o.attempts++
			o.last = describe(resp, err)
			return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
		},
		ErrorHandler: o.giveUp,
	}
	resp, err := c.Do(rreq)
	if err == nil {
		return resp, nil
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		// The caller's client wraps the error with the address again.
		err = uerr.Err
	}
	if !o.reported && o.attempts > 1 && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		// The timeout ended the wait for the next attempt.
		return nil, fmt.Errorf("giving up after %d attempts within the timeout, the last got %s: %w", o.attempts, o.last, err)
	}
	return nil, err
}

// giveUp is go-retryablehttp's ErrorHandler: it turns the last answer
// into an error, keeping the start of its body, once retrying stops.
func (o *outcome) giveUp(resp *http.Response, err error, attempts int) (*http.Response, error) {
	o.reported = true
	if resp != nil {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, fmt.Errorf("giving up after %d attempts: %s: %s", attempts, resp.Status, strings.TrimSpace(string(msg)))
	}
	if attempts > 1 {
		return nil, fmt.Errorf("giving up after %d attempts: %w", attempts, unwrapURL(err))
	}
	return nil, err
}

// describe says in a few words what one attempt got.
func describe(resp *http.Response, err error) string {
	if err != nil {
		return unwrapURL(err).Error()
	}
	return resp.Status
}

// unwrapURL drops url.Error's address from err.
func unwrapURL(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}
