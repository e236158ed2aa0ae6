package notifier_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
)

// fast is Flux's policy with waits short enough for tests.
var fast = notifier.Retry{Max: 4, WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond}

const secretPath = "/services/T0/B0/k3y-in-the-path"

func TestRetrying(t *testing.T) {
	tests := []struct {
		name     string
		fails    int
		code     int
		final    int // the answer after the failures
		wantReqs int
		wantErr  string // empty: success
	}{
		{name: "503 twice then 200", fails: 2, code: http.StatusServiceUnavailable, final: http.StatusOK, wantReqs: 3},
		{name: "429 then 200", fails: 1, code: http.StatusTooManyRequests, final: http.StatusOK, wantReqs: 2},
		{name: "500 every time gives up after five attempts", fails: 10, code: http.StatusInternalServerError, final: http.StatusOK,
			wantReqs: 5, wantErr: "giving up after 5 attempts: 500 Internal Server Error"},
		{name: "400 is not retried", final: http.StatusBadRequest, wantReqs: 1, wantErr: "400 Bad Request"},
		{name: "501 is not retried", final: http.StatusNotImplemented, wantReqs: 1, wantErr: "501 Not Implemented"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := notifiertest.NewService(t)
			svc.Answer(tt.final, `{"ok":false}`)
			svc.FailNext(tt.fails, tt.code)
			c := notifier.Retrying(svc.Server.Client(), fast)
			err := notifier.PostJSON(context.Background(), c, http.MethodPost, svc.Server.URL+secretPath, map[string]string{"a": "b"}, nil)
			reqs := svc.Requests()
			if len(reqs) != tt.wantReqs {
				t.Errorf("service got %d requests, want %d", len(reqs), tt.wantReqs)
			}
			for i, r := range reqs {
				if string(r.Body) != `{"a":"b"}` || r.Path != secretPath {
					t.Errorf("attempt %d sent %s %s, want the same request every time", i+1, r.Path, r.Body)
				}
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("PostJSON() = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("PostJSON() = %v, want %q", err, tt.wantErr)
			case err != nil && strings.Contains(err.Error(), "k3y"):
				t.Errorf("error names the address's path: %v", err)
			}
		})
	}
}

// TestRetryingWithinTimeout: the client's timeout covers every attempt
// and the waits between them, and the error says what the tries got.
func TestRetryingWithinTimeout(t *testing.T) {
	svc := notifiertest.NewService(t)
	svc.Answer(http.StatusServiceUnavailable, `{}`)
	base := svc.Server.Client()
	base.Timeout = time.Second
	c := notifier.Retrying(base, notifier.Retry{Max: 4, WaitMin: 600 * time.Millisecond, WaitMax: 5 * time.Second})
	start := time.Now()
	err := notifier.PostJSON(context.Background(), c, http.MethodPost, svc.Server.URL+secretPath, struct{}{}, nil)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("delivery took %s, past its 1s timeout", took)
	}
	// Tries at 0 and 600ms; the next wait, 1.2s, ends past the timeout.
	if n := len(svc.Requests()); n != 2 {
		t.Logf("service got %d requests, 2 expected on an idle machine", n)
	}
	if err == nil || !strings.Contains(err.Error(), "giving up after") || strings.Count(err.Error(), "giving up") != 1 ||
		strings.Contains(err.Error(), "k3y") {
		t.Errorf("PostJSON() = %v", err)
	}
}

func TestRetryingConnectionRefused(t *testing.T) {
	svc := notifiertest.NewService(t)
	addr := svc.Server.URL + secretPath
	svc.Server.Close()
	err := notifier.PostJSON(context.Background(), notifier.Retrying(&http.Client{}, fast), http.MethodPost, addr, struct{}{}, nil)
	if err == nil || !strings.Contains(err.Error(), "giving up after 5 attempts") || strings.Contains(err.Error(), "k3y") {
		t.Errorf("PostJSON() = %v, want five refused attempts reported without the path", err)
	}
}

// TestFluxRetry pins Flux's numbers and the waits they give.
func TestFluxRetry(t *testing.T) {
	if notifier.FluxRetry != (notifier.Retry{Max: 4, WaitMin: 2 * time.Second, WaitMax: 30 * time.Second}) {
		t.Errorf("FluxRetry = %+v", notifier.FluxRetry)
	}
	var waits []time.Duration
	for i := range notifier.FluxRetry.Max {
		waits = append(waits, retryablehttp.DefaultBackoff(notifier.FluxRetry.WaitMin, notifier.FluxRetry.WaitMax, i, nil))
	}
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Errorf("waits = %v, want %v", waits, want)
			break
		}
	}
}

func TestRetryingKeepsContextErrors(t *testing.T) {
	svc := notifiertest.NewService(t)
	svc.Answer(http.StatusServiceUnavailable, `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c := notifier.Retrying(svc.Server.Client(), notifier.Retry{Max: 4, WaitMin: 40 * time.Millisecond, WaitMax: time.Second})
	err := notifier.PostJSON(ctx, c, http.MethodPost, svc.Server.URL, struct{}{}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("PostJSON() = %v, want context.DeadlineExceeded in its chain", err)
	}
}
