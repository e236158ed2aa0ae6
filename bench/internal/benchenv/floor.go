package benchenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// Floor is the time this control plane needs for objects without weir:
// each server-side applied directly into ns, concurrency at a time, then
// waited for until every Deployment in ns is Available (deployments of
// them). It returns the time from the first apply to the last Available
// Deployment, then deletes ns and waits until it is gone, so that what is
// measured next does not share the node with the floor's objects.
func Floor(b *testing.B, env *testenv.Env, ns string, objs []*unstructured.Unstructured, deployments, concurrency int) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	if err := ApplyDirect(ctx, env.Client, objs, concurrency); err != nil {
		b.Fatalf("floor apply: %v", err)
	}
	Poll(b, 30*time.Minute, func(ctx context.Context) (bool, string) {
		available, err := AvailableDeployments(ctx, env.Client, ns)
		if err != nil {
			return false, err.Error()
		}
		return available == deployments, fmt.Sprintf("%d of %d Deployments available", available, deployments)
	})
	elapsed := time.Since(start)
	DeleteNamespace(b, env, ns, 30*time.Minute)
	return elapsed
}

// AvailableDeployments counts the Deployments in ns whose replicas are
// all available at their generation.
func AvailableDeployments(ctx context.Context, c client.Client, ns string) (int, error) {
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return 0, fmt.Errorf("listing Deployments in %s: %w", ns, err)
	}
	available := 0
	for _, d := range list.Items {
		if d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == *d.Spec.Replicas {
			available++
		}
	}
	return available, nil
}

// ApplyDirect server-side applies objs with c as a plain client does (field
// manager bench-floor, force), concurrency at a time: what any tool that
// applies manifests must at least spend.
func ApplyDirect(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, concurrency int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for _, o := range objs {
		g.Go(func() error {
			//nolint:staticcheck // SA1019: client.Apply with an unstructured object is the plain SSA call
			return c.Patch(gctx, o.DeepCopy(), client.Apply, client.FieldOwner("bench-floor"), client.ForceOwnership)
		})
	}
	return g.Wait()
}
