// Package notifiertest holds what the notifier families' tests share: a
// service on 127.0.0.1 recording the requests it gets, and golden JSON
// bodies under testdata/.
package notifiertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// Request is one request a Service received.
type Request struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// Service records requests and answers each with Code and Answer.
type Service struct {
	Server *httptest.Server

	mu     sync.Mutex
	reqs   []Request
	code   int
	answer string
	// fails are answers given before code and answer, one a request.
	fails []int
}

// NewService starts a Service answering 200 with an empty JSON object.
func NewService(t *testing.T) *Service {
	t.Helper()
	s := &Service{code: http.StatusOK, answer: "{}"}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
			Header: r.Header.Clone(), Body: body})
		w.Header().Set("Content-Type", "application/json")
		if len(s.fails) > 0 {
			code := s.fails[0]
			s.fails = s.fails[1:]
			w.WriteHeader(code)
			_, _ = io.WriteString(w, `{"error":"`+http.StatusText(code)+`"}`)
			return
		}
		w.WriteHeader(s.code)
		_, _ = io.WriteString(w, s.answer)
	}))
	t.Cleanup(s.Server.Close)
	return s
}

// Answer makes the Service answer code and body from now on.
func (s *Service) Answer(code int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.code, s.answer = code, body
}

// FailNext makes the Service answer code to the next n requests, then
// answer as before: a service having a bad moment.
func (s *Service) FailNext(n, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails = append(s.fails, code)
	}
}

// Requests returns what the Service received.
func (s *Service) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Golden compares body, JSON with base (the fake's URL) replaced by
// "http://fake", with the file at path; update rewrites the file.
func Golden(t *testing.T, path string, body []byte, base string, update bool) {
	t.Helper()
	body = bytes.ReplaceAll(body, []byte(base), []byte("http://fake"))
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(body), "", "  "); err != nil {
		t.Fatalf("body is not JSON: %s", body)
	}
	buf.WriteByte('\n')
	if update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("body differs from %s:\ngot:\n%s\nwant:\n%s", path, buf.Bytes(), want)
	}
}

// Poster is what a notifier family returns: notifier.Notifier, restated
// so that this package stays free of the ones it tests.
type Poster interface {
	Post(ctx context.Context, e events.Event) error
}

// PostOnce posts e through n and returns the one request s got, failing
// unless there is exactly one and it is JSON.
func PostOnce(t *testing.T, s *Service, n Poster, e events.Event) Request {
	t.Helper()
	before := len(s.Requests())
	if err := n.Post(context.Background(), e); err != nil {
		t.Fatalf("Post() = %v", err)
	}
	reqs := s.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("service got %d requests, want 1", len(reqs))
	}
	if ct := reqs[0].Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	return reqs[0]
}
