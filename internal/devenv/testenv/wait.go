package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// DefaultTimeout bounds the helpers that wait for the cluster to converge.
const DefaultTimeout = 30 * time.Second

// Eventually polls check until it returns true, failing the test after
// timeout with the last error or state check reported.
func Eventually(t testing.TB, timeout time.Duration, check func(ctx context.Context) (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last string
	for {
		ok, state := check(ctx)
		if ok {
			return
		}
		last = state
		select {
		case <-ctx.Done():
			t.Fatalf("condition not met after %s: %s", timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Status computes the kstatus status of obj, as `kubectl wait`, the flux CLI
// and weir's health checks read it.
func (e *Env) Status(obj client.Object) (*status.Result, error) {
	u, err := e.toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return status.Compute(u)
}

// WaitForCurrent waits until obj is Current by kstatus rules, refetching
// it on each try, and leaves the latest state in obj.
func (e *Env) WaitForCurrent(t testing.TB, obj client.Object, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, func(ctx context.Context) (bool, string) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		res, err := e.Status(obj)
		if err != nil {
			return false, err.Error()
		}
		return res.Status == status.CurrentStatus, fmt.Sprintf("%s is %s: %s", obj.GetName(), res.Status, res.Message)
	})
}

func (e *Env) toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: data}
	gvk, err := apiutil.GVKForObject(obj, e.Scheme)
	if err != nil {
		return nil, err
	}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
