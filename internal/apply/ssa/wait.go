package ssa

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatusFunc computes the status of an object read from the cluster. An
// error makes the status Unknown with the error as its message: the wait
// goes on. health.Checks.Status is one; KStatus is the default.
type StatusFunc func(ctx context.Context, obj *unstructured.Unstructured) (*status.Result, error)

// KStatus is the default StatusFunc: kstatus's rules (sigs.k8s.io/cli-utils,
// the rules of `kubectl wait`, the flux CLI and Flux's health checks).
func KStatus(_ context.Context, obj *unstructured.Unstructured) (*status.Result, error) {
	return status.Compute(obj)
}

// WaitOptions configures WaitFor.
type WaitOptions struct {
	// Timeout bounds the wait; zero or less leaves it to ctx.
	Timeout time.Duration
	// Interval is how often objects are read; zero means the Manager's
	// PollInterval. Flux's health checks poll every 5s.
	Interval time.Duration
	// FailFast stops the wait as soon as an object is Failed, as Flux's
	// kustomize-controller does unless its DisableFailFastBehavior feature
	// gate is set.
	FailFast bool
	// Status computes each object's status; nil means KStatus.
	Status StatusFunc
}

// Wait polls objects until each is Current by kstatus rules, or until
// timeout; it is WaitFor with only a timeout.
func (m *Manager) Wait(ctx context.Context, objects []ObjMetadata, timeout time.Duration) error {
	return m.WaitFor(ctx, objects, WaitOptions{Timeout: timeout})
}

// WaitFor polls objects until the status function says each is Current.
// A Namespace must also be Active, whatever the status function says. On
// timeout the error names every object still not Current, with its last
// status and message, in Flux's format:
//
//	timeout waiting for: [Deployment/default/podinfo status: 'InProgress': Deployment does not have minimum availability.]
//
// With FailFast, the wait ends as soon as a poll finds an object Failed,
// and the error names the Failed objects, again in Flux's format:
//
//	failed early due to stalled resources: [Widget/default/w status: 'Failed': quota exceeded]
//
// When ctx ends first, the error wraps ctx's error.
func (m *Manager) WaitFor(ctx context.Context, objects []ObjMetadata, opts WaitOptions) error {
	if opts.Interval <= 0 {
		opts.Interval = m.pollInterval
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	h := NewHealth(objects)
	for {
		m.Check(ctx, h, nil, opts.Status)
		if h.Done() {
			return nil
		}
		if err := h.FailedEarly(); opts.FailFast && err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return waitError(ctx, h.pending, h.last)
		case <-time.After(opts.Interval):
		}
	}
}

// Health follows a set of objects towards Current, one Check at a time:
// which are not Current yet and what each said last. A controller that
// gives its worker back between checks keeps one Health per wait.
type Health struct {
	pending []ObjMetadata
	failed  []ObjMetadata
	last    map[ObjMetadata]*status.Result
}

// NewHealth starts following objects (duplicates counted once).
func NewHealth(objects []ObjMetadata) *Health {
	pending := slices.Clone(objects)
	slices.SortFunc(pending, compareObjects)
	pending = slices.Compact(pending)
	return &Health{pending: pending, last: make(map[ObjMetadata]*status.Result, len(pending))}
}

// Check reads each object still pending once, through reader (nil: the
// Manager's client; a cache fed by watches makes a check cost no
// request), computes its status with fn (nil: KStatus), and drops the
// Current ones from h.
func (m *Manager) Check(ctx context.Context, h *Health, reader client.Reader, fn StatusFunc) {
	if fn == nil {
		fn = KStatus
	}
	if reader == nil {
		reader = m.client
	}
	results := make([]*status.Result, len(h.pending))
	_ = forEach(ctx, len(h.pending), m.concurrency, func(ctx context.Context, i int) error {
		results[i] = m.status(ctx, reader, h.pending[i], fn)
		return nil
	})
	var next, failed []ObjMetadata
	for i, id := range h.pending {
		res := results[i]
		if res != nil && res.Status == status.CurrentStatus {
			continue
		}
		next = append(next, id)
		// A poll cut short by the deadline says nothing new.
		if res != nil && ctx.Err() == nil {
			h.last[id] = res
			if res.Status == status.FailedStatus {
				failed = append(failed, id)
			}
		}
	}
	h.pending, h.failed = next, failed
}

// Done reports whether every object was Current at its last check.
func (h *Health) Done() bool { return len(h.pending) == 0 }

// Pending returns the objects not Current at their last check.
func (h *Health) Pending() []ObjMetadata { return slices.Clone(h.pending) }

// Last returns what the last check that read id said of it; nil when
// none did.
func (h *Health) Last(id ObjMetadata) *status.Result { return h.last[id] }

// FailedEarly returns Flux's fail-fast error when the last check found
// objects Failed, nil otherwise.
func (h *Health) FailedEarly() error {
	if len(h.failed) == 0 {
		return nil
	}
	return fmt.Errorf("failed early due to stalled resources: [%s]", describe(h.failed, h.last))
}

// TimedOut returns Flux's timeout error naming every object still pending.
func (h *Health) TimedOut() error {
	return fmt.Errorf("timeout waiting for: [%s]", describe(h.pending, h.last))
}

func waitError(ctx context.Context, pending []ObjMetadata, last map[ObjMetadata]*status.Result) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("waiting for [%s]: %w", describe(pending, last), ctx.Err())
	}
	return (&Health{pending: pending, last: last}).TimedOut()
}

// describe lists objects with their last status and message, or says that
// it is unknown.
func describe(ids []ObjMetadata, last map[ObjMetadata]*status.Result) string {
	reasons := make([]string, len(ids))
	for i, id := range ids {
		res := last[id]
		if res == nil {
			reasons[i] = fmt.Sprintf("can't determine status for %s", id)
			continue
		}
		reasons[i] = fmt.Sprintf("%s status: '%s'", id, res.Status)
		if res.Message != "" {
			reasons[i] += ": " + res.Message
		}
	}
	return strings.Join(reasons, ", ")
}

// status reads one object and computes its status with fn. A failure to
// read it, or an error from fn, is an Unknown status whose message says
// why, so that it ends up in the timeout message; nil means the poll was
// cut short by ctx.
func (m *Manager) status(ctx context.Context, reader client.Reader, id ObjMetadata, fn StatusFunc) *status.Result {
	obj, err := m.get(ctx, reader, id)
	switch {
	case apierrors.IsNotFound(err) || isNoMatch(err):
		return &status.Result{Status: status.NotFoundStatus, Message: "object not found"}
	case err != nil:
		return &status.Result{Status: status.UnknownStatus, Message: err.Error()}
	}
	res, err := fn(ctx, obj)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil
	case err != nil:
		return &status.Result{Status: status.UnknownStatus, Message: err.Error()}
	case res == nil:
		return &status.Result{Status: status.UnknownStatus, Message: "no status computed"}
	}
	if res.Status == status.CurrentStatus && id.GroupKind == (schema.GroupKind{Kind: "Namespace"}) {
		if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase != "Active" {
			return &status.Result{Status: status.InProgressStatus, Message: fmt.Sprintf("Namespace is %q", phase)}
		}
	}
	return res
}

// get reads the object id names in the API version the server prefers.
func (m *Manager) get(ctx context.Context, reader client.Reader, id ObjMetadata) (*unstructured.Unstructured, error) {
	mapping, err := m.client.RESTMapper().RESTMapping(id.GroupKind)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := reader.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
