package health

import (
	"context"
	"fmt"
)

// ReadyExpr is a compiled dependsOn readyExpr. It is safe for concurrent
// use.
type ReadyExpr struct {
	prog *program
}

// CompileReadyExpr compiles a readyExpr over `dep` and `self`. An
// expression that does not compile or is not of type bool is a
// *CompileError.
func CompileReadyExpr(expr string) (*ReadyExpr, error) {
	p, err := compile(readyMode, expr)
	if err != nil {
		return nil, &CompileError{Index: -1, Field: FieldReadyExpr, Expr: expr, Err: err}
	}
	return &ReadyExpr{prog: p}, nil
}

// String returns the expression's text.
func (r *ReadyExpr) String() string { return r.prog.expr }

// Evaluate reports whether dep, seen from self, is ready. Both are objects
// as maps (runtime.DefaultUnstructuredConverter.ToUnstructured of a typed
// object, or an Unstructured's Object).
func (r *ReadyExpr) Evaluate(ctx context.Context, dep, self map[string]any) (bool, error) {
	ok, err := r.prog.evalBool(ctx, map[string]any{depVar: dep, selfVar: self})
	if err != nil {
		return false, fmt.Errorf("evaluating readyExpr %q: %w", r.prog.expr, err)
	}
	return ok, nil
}

// Dependency is one dependsOn entry, read from the cluster.
type Dependency struct {
	// Name is "<namespace>/<name>", for messages.
	Name string
	// ReadyExpr is the entry's readyExpr; empty for none.
	ReadyExpr string
	// Object is the dependency; Self the dependent. Both only matter to
	// ReadyExpr.
	Object map[string]any
	Self   map[string]any
	// Builtin is the built-in check: the dependency's Ready condition is
	// true for its current generation and, when both use the same source,
	// it applied the source's current revision. It returns why not; nil
	// means there is no built-in check.
	Builtin func() error
}

// DependencyReady applies Flux's rule to d and returns nil when d is
// ready. Without a readyExpr the built-in check decides. With one,
// readyExpr is evaluated first and decides alone, unless additive (the
// AdditiveCELDependencyCheck feature gate) is set, in which case the
// built-in check must hold as well. An invalid readyExpr is a
// *CompileError (IsCompileError): stall, do not retry. Any other error
// means "not ready yet": requeue.
func DependencyReady(ctx context.Context, d Dependency, additive bool) error {
	if d.ReadyExpr != "" {
		expr, err := CompileReadyExpr(d.ReadyExpr)
		if err != nil {
			return fmt.Errorf("dependency '%s': %w", d.Name, err)
		}
		ok, err := expr.Evaluate(ctx, d.Object, d.Self)
		if err != nil {
			return fmt.Errorf("dependency '%s': %w", d.Name, err)
		}
		if !ok {
			return fmt.Errorf("dependency '%s' is not ready: readyExpr %q is false", d.Name, d.ReadyExpr)
		}
		if !additive {
			return nil
		}
	}
	if d.Builtin == nil {
		return nil
	}
	return d.Builtin()
}
