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

// Wait polls objects every PollInterval until each is Current by kstatus
// rules (sigs.k8s.io/cli-utils kstatus: the rules of `kubectl wait`, the
// flux CLI and Flux's health checks), or until timeout. A Namespace must
// also be Active. On timeout the error names every object still not
// Current, with its status and kstatus's reason, as Flux does:
//
//	timeout waiting for: [Deployment/default/podinfo status: 'InProgress': Deployment does not have minimum availability.]
func (m *Manager) Wait(ctx context.Context, objects []ObjMetadata, timeout time.Duration) error {
	pending := slices.Clone(objects)
	slices.SortFunc(pending, compareObjects)
	pending = slices.Compact(pending)
	if len(pending) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := make(map[ObjMetadata]*status.Result, len(pending))
	for {
		results := make([]*status.Result, len(pending))
		_ = forEach(ctx, len(pending), m.concurrency, func(ctx context.Context, i int) error {
			results[i] = m.status(ctx, pending[i])
			return nil
		})
		var next []ObjMetadata
		for i, id := range pending {
			res := results[i]
			if res != nil && res.Status == status.CurrentStatus {
				continue
			}
			next = append(next, id)
			// A poll cut short by the deadline says nothing new.
			if res != nil && ctx.Err() == nil {
				last[id] = res
			}
		}
		pending = next
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return waitError(ctx, pending, last)
		case <-time.After(m.pollInterval):
		}
	}
}

func waitError(ctx context.Context, pending []ObjMetadata, last map[ObjMetadata]*status.Result) error {
	reasons := make([]string, len(pending))
	for i, id := range pending {
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
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("waiting for [%s]: %w", strings.Join(reasons, ", "), ctx.Err())
	}
	return fmt.Errorf("timeout waiting for: [%s]", strings.Join(reasons, ", "))
}

// status reads one object and computes its kstatus. A failure to read it
// is an Unknown status whose message says why, so that it ends up in the
// timeout message.
func (m *Manager) status(ctx context.Context, id ObjMetadata) *status.Result {
	obj, err := m.get(ctx, id)
	switch {
	case apierrors.IsNotFound(err) || isNoMatch(err):
		return &status.Result{Status: status.NotFoundStatus, Message: "object not found"}
	case err != nil:
		return &status.Result{Status: status.UnknownStatus, Message: err.Error()}
	}
	res, err := status.Compute(obj)
	if err != nil {
		return &status.Result{Status: status.UnknownStatus, Message: err.Error()}
	}
	if res.Status == status.CurrentStatus && id.GroupKind == (schema.GroupKind{Kind: "Namespace"}) {
		if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase != "Active" {
			return &status.Result{Status: status.InProgressStatus, Message: fmt.Sprintf("Namespace is %q", phase)}
		}
	}
	return res
}

// get reads the object id names in the API version the server prefers.
func (m *Manager) get(ctx context.Context, id ObjMetadata) (*unstructured.Unstructured, error) {
	mapping, err := m.client.RESTMapper().RESTMapping(id.GroupKind)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := m.client.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
