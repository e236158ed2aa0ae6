// Package errs holds errors that carry their reaction. A reconciler returns
// one of these from a phase; the shared result logic turns it into a
// condition (with the error's Reason) and a requeue decision:
//
//   - Stalling: the spec cannot work as written; no retry until it changes.
//   - Waiting: something outside is not ready yet (a dependency, an
//     artifact); requeue after RequeueAfter without backoff, not a failure
//     of ours.
//   - Generic: a failure worth retrying with backoff.
//   - InProgress: not a failure at all: the work is done and its result is
//     still coming (applied objects rolling out); look again after
//     RequeueAfter, or sooner when a watch says something changed. The
//     progress conditions stay as the phase set them.
package errs

import (
	"errors"
	"time"
)

// Stalling means the object cannot make progress until its spec changes.
type Stalling struct {
	Err    error
	Reason string
}

func (e *Stalling) Error() string { return e.Err.Error() }
func (e *Stalling) Unwrap() error { return e.Err }

// Waiting means the object waits for something else; retry later.
type Waiting struct {
	Err          error
	Reason       string
	RequeueAfter time.Duration
}

func (e *Waiting) Error() string { return e.Err.Error() }
func (e *Waiting) Unwrap() error { return e.Err }

// Generic is a failure to retry: with backoff, or after RetryAfter when set
// (Kustomization's spec.retryInterval).
type Generic struct {
	Err    error
	Reason string
	// RetryAfter, when positive, replaces the backoff with a fixed delay.
	RetryAfter time.Duration
}

func (e *Generic) Error() string { return e.Err.Error() }
func (e *Generic) Unwrap() error { return e.Err }

// InProgress means the object's work is under way outside the worker.
type InProgress struct {
	Err          error
	RequeueAfter time.Duration
}

func (e *InProgress) Error() string { return e.Err.Error() }
func (e *InProgress) Unwrap() error { return e.Err }

// AsInProgress returns the InProgress error in err's chain, if any.
func AsInProgress(err error) (*InProgress, bool) {
	var p *InProgress
	ok := errors.As(err, &p)
	return p, ok
}

// Reason returns the condition reason carried by err, or fallback.
func Reason(err error, fallback string) string {
	var s *Stalling
	var w *Waiting
	var g *Generic
	switch {
	case errors.As(err, &s) && s.Reason != "":
		return s.Reason
	case errors.As(err, &w) && w.Reason != "":
		return w.Reason
	case errors.As(err, &g) && g.Reason != "":
		return g.Reason
	}
	return fallback
}

// IsStalling reports whether err means "do not retry".
func IsStalling(err error) bool {
	var s *Stalling
	return errors.As(err, &s)
}

// AsWaiting returns the Waiting error in err's chain, if any.
func AsWaiting(err error) (*Waiting, bool) {
	var w *Waiting
	ok := errors.As(err, &w)
	return w, ok
}

// RetryAfter returns the fixed retry delay a Generic error asks for, or 0.
func RetryAfter(err error) time.Duration {
	var g *Generic
	if errors.As(err, &g) {
		return g.RetryAfter
	}
	return 0
}
