package dependency

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/health"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// ErrCycle marks a dependsOn graph that leads back to the object being
// reconciled. It cannot resolve by waiting: the controllers report it as
// Stalled, while the watches still catch the fix.
var ErrCycle = errors.New("dependency cycle")

// Object is a kind with spec.dependsOn and a status with conditions.
type Object interface {
	client.Object
	meta.ObjectWithConditions
	GetDependsOn() []meta.DependencyReference
}

// Key names the object ref points at from an object in namespace ns.
func Key(ns string, ref meta.DependencyReference) types.NamespacedName {
	if ref.Namespace != "" {
		ns = ref.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: ref.Name}
}

// Kind describes a kind whose objects depend on objects of the same kind.
type Kind[T Object] struct {
	// New returns an empty object to read a dependency into.
	New func() T
	// ObservedGeneration returns status.observedGeneration.
	ObservedGeneration func(T) int64
	// NotFound is the kind's message for a dependency that cannot be read.
	NotFound func(key types.NamespacedName, err error) error
	// NewList returns an empty list of the kind, for the dependents lookup.
	NewList func() client.ObjectList
	// Revision returns what else of a dependency the kind's check reads
	// (the Kustomization's lastAppliedRevision), so that a change of it
	// queues the dependents; nil for nothing.
	Revision func(T) string
}

// Checker applies Flux's dependsOn rules for one kind.
type Checker[T Object] struct {
	Kind Kind[T]
	// Reader reads dependencies uncached, so a status written a moment
	// ago counts.
	Reader client.Reader
	// Cache walks the graph when looking for a cycle.
	Cache client.Reader
	// Additive is the AdditiveCELDependencyCheck feature gate: a readyExpr
	// adds to the built-in check instead of replacing it.
	Additive bool
	// RequeueAfter is --requeue-dependency, the safety net behind the
	// dependents watch.
	RequeueAfter time.Duration
}

// Check applies the rules to every spec.dependsOn entry of obj, in order,
// and returns the first that is not ready as an *errs.Waiting with reason
// DependencyNotReady (a cycle wraps ErrCycle), or an *errs.Stalling with
// reason InvalidCELExpression for a readyExpr that does not compile.
// extra, when not nil, is a kind's addition to the built-in check (the
// Kustomization's revision gate).
func (c *Checker[T]) Check(ctx context.Context, obj T, extra func(dep T) error) error {
	for _, ref := range obj.GetDependsOn() {
		key := Key(obj.GetNamespace(), ref)
		dep := c.Kind.New()
		if err := c.Reader.Get(ctx, key, dep); err != nil {
			return c.wait(c.Kind.NotFound(key, err))
		}
		if ref.ReadyExpr != "" {
			ready, err := c.evalReadyExpr(ctx, ref.ReadyExpr, obj, dep)
			if err != nil {
				return err
			}
			if !ready {
				return c.wait(fmt.Errorf("dependency '%s' is not ready according to readyExpr eval", key))
			}
			if !c.Additive {
				continue
			}
		}
		if err := c.builtin(dep, extra); err != nil {
			if cycle := c.FindCycle(ctx, obj); cycle != nil {
				return c.wait(fmt.Errorf("%w: %s", ErrCycle, strings.Join(cycle, " -> ")))
			}
			return c.wait(err)
		}
	}
	return nil
}

// builtin is Flux's built-in check: the dependency is Ready at its
// generation, then whatever the kind adds.
func (c *Checker[T]) builtin(dep T, extra func(T) error) error {
	if dep.GetGeneration() != c.Kind.ObservedGeneration(dep) ||
		!apimeta.IsStatusConditionTrue(dep.GetConditions(), meta.ReadyCondition) {
		return fmt.Errorf("dependency '%s' is not ready", client.ObjectKeyFromObject(dep))
	}
	if extra != nil {
		return extra(dep)
	}
	return nil
}

func (c *Checker[T]) wait(err error) error {
	return &errs.Waiting{Err: err, Reason: meta.DependencyNotReadyReason, RequeueAfter: c.RequeueAfter}
}

// evalReadyExpr evaluates a readyExpr with the dependency as dep and obj
// as self. An expression that does not compile stalls obj; one that fails
// to evaluate (a field the dependency does not have yet) waits.
func (c *Checker[T]) evalReadyExpr(ctx context.Context, expr string, obj, dep T) (bool, error) {
	key := client.ObjectKeyFromObject(dep)
	ready, err := health.CompileReadyExpr(expr)
	if err != nil {
		return false, &errs.Stalling{Err: fmt.Errorf("dependency '%s': %w", key, err), Reason: meta.InvalidCELExpressionReason}
	}
	self, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false, fmt.Errorf("converting %s for readyExpr: %w", client.ObjectKeyFromObject(obj), err)
	}
	depMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dep)
	if err != nil {
		return false, fmt.Errorf("converting dependency '%s' for readyExpr: %w", key, err)
	}
	ok, err := ready.Evaluate(ctx, depMap, self)
	if err != nil {
		return false, c.wait(fmt.Errorf("dependency '%s': %w", key, err))
	}
	return ok, nil
}

// FindCycle walks dependsOn from obj through the cache and returns the path
// of a cycle through obj ("ns/a", "ns/b", "ns/a"), or nil. Only cycles that
// pass through obj are reported: an object that merely depends on a cycle
// is waiting, not part of it.
func (c *Checker[T]) FindCycle(ctx context.Context, obj T) []string {
	start := client.ObjectKeyFromObject(obj)
	visited := map[types.NamespacedName]bool{}
	var walk func(cur T, path []string) []string
	walk = func(cur T, path []string) []string {
		for _, ref := range cur.GetDependsOn() {
			next := Key(cur.GetNamespace(), ref)
			if next == start {
				return append(slices.Clone(path), next.String())
			}
			if visited[next] {
				continue
			}
			visited[next] = true
			dep := c.Kind.New()
			if err := c.Cache.Get(ctx, next, dep); err != nil {
				continue
			}
			if found := walk(dep, append(path, next.String())); found != nil {
				return found
			}
		}
		return nil
	}
	return walk(obj, []string{start.String()})
}
