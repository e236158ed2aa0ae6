package kinds

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Poll re-reads the object at key every interval until done accepts it,
// returning the last state read. It stops with an error naming the object
// when done fails, the object cannot be read, or ctx ends.
func (k Kind) Poll(ctx context.Context, c client.Client, key client.ObjectKey, interval time.Duration,
	done func(*unstructured.Unstructured) (bool, error)) (*unstructured.Unstructured, error) {
	u := k.New()
	for {
		if err := c.Get(ctx, key, u); err != nil {
			if ctx.Err() != nil {
				return u, k.timeout(key, ctx.Err())
			}
			// client-go's rate limiter refuses a request that would outlive
			// the deadline before the context itself has expired.
			if strings.Contains(err.Error(), "would exceed context deadline") {
				return u, k.timeout(key, context.DeadlineExceeded)
			}
			return u, fmt.Errorf("reading %s %s: %w", k.Kind, key, err)
		}
		ok, err := done(u)
		if err != nil {
			return u, err
		}
		if ok {
			return u, nil
		}
		select {
		case <-ctx.Done():
			return u, k.timeout(key, ctx.Err())
		case <-time.After(interval):
		}
	}
}

func (k Kind) timeout(key client.ObjectKey, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timed out waiting for %s %s to be reconciled", k.Kind, key)
	}
	return fmt.Errorf("stopped waiting for %s %s: %w", k.Kind, key, err)
}

// WaitReady waits until the object at key is ready by the flux CLI's rule
// (IsReady).
func (k Kind) WaitReady(ctx context.Context, c client.Client, key client.ObjectKey, interval time.Duration) (*unstructured.Unstructured, error) {
	return k.Poll(ctx, c, key, interval, func(u *unstructured.Unstructured) (bool, error) {
		ready, err := IsReady(u, k.Static(u))
		if err != nil {
			return false, fmt.Errorf("%s %s: %w", k.Kind, key, err)
		}
		return ready, nil
	})
}
