package health

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/weir-gitops/weir/api/meta"
)

// Field names of meta.HealthCheckExpressions, as users write them.
const (
	FieldCurrent    = "current"
	FieldInProgress = "inProgress"
	FieldFailed     = "failed"
	FieldAPIVersion = "apiVersion"
	// FieldReadyExpr is a dependsOn entry's readyExpr.
	FieldReadyExpr = "readyExpr"
)

// CompileError is an expression that cannot work as written. Retrying does
// not help: Flux stalls the object with reason InvalidCELExpression until
// its spec changes.
type CompileError struct {
	// Index is the entry's position in spec.healthCheckExprs, or -1 for a
	// readyExpr.
	Index int
	// APIVersion and Kind of the healthCheckExprs entry.
	APIVersion string
	Kind       string
	// Field is the expression at fault: current, inProgress, failed,
	// apiVersion or readyExpr.
	Field string
	// Expr is the text that failed.
	Expr string
	Err  error
}

func (e *CompileError) Error() string {
	if e.Field == FieldReadyExpr {
		return fmt.Sprintf("invalid readyExpr %q: %v", e.Expr, e.Err)
	}
	subject := e.APIVersion
	if e.Kind != "" {
		subject += " " + e.Kind
	}
	if e.Expr == "" {
		return fmt.Sprintf("healthCheckExprs[%d] (%s): %s: %v", e.Index, subject, e.Field, e.Err)
	}
	return fmt.Sprintf("healthCheckExprs[%d] (%s): invalid %s expression %q: %v", e.Index, subject, e.Field, e.Expr, e.Err)
}

func (e *CompileError) Unwrap() error { return e.Err }

// IsCompileError reports whether err holds a *CompileError: a spec error,
// not worth retrying.
func IsCompileError(err error) bool {
	var ce *CompileError
	return errors.As(err, &ce)
}

// Checks are a Kustomization's compiled healthCheckExprs. The zero value
// and nil have no expressions and judge every object by kstatus. Checks
// are safe for concurrent use.
type Checks struct {
	byKind  map[schema.GroupKind]*Evaluator
	byGroup map[string]*Evaluator
}

// Compile compiles exprs (spec.healthCheckExprs). The error joins a
// *CompileError for every invalid expression, so one reconcile reports
// them all.
func Compile(exprs []meta.HealthCheckExpressions) (*Checks, error) {
	c := &Checks{}
	var errs []error
	for i, e := range exprs {
		gv, err := schema.ParseGroupVersion(e.APIVersion)
		if err != nil || e.APIVersion == "" {
			if err == nil {
				err = errors.New("a value is required")
			}
			errs = append(errs, &CompileError{Index: i, APIVersion: e.APIVersion, Kind: e.Kind, Field: FieldAPIVersion, Expr: e.APIVersion, Err: err})
			continue
		}
		gk := schema.GroupKind{Group: gv.Group, Kind: e.Kind}
		if c.lookup(gk, true) != nil {
			continue // the first entry for a group and kind wins, as in Flux
		}
		ev, err := newEvaluator(i, e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if e.Kind == "" {
			if c.byGroup == nil {
				c.byGroup = map[string]*Evaluator{}
			}
			c.byGroup[gk.Group] = ev
			continue
		}
		if c.byKind == nil {
			c.byKind = map[schema.GroupKind]*Evaluator{}
		}
		c.byKind[gk] = ev
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// For returns the evaluator that applies to objects of gk: the entry
// naming gk, else the entry naming gk's group without a kind, else nil.
func (c *Checks) For(gk schema.GroupKind) *Evaluator {
	return c.lookup(gk, false)
}

// lookup finds the evaluator for gk; exact looks only at entries with
// gk's kind, or only at group-wide entries when gk.Kind is empty.
func (c *Checks) lookup(gk schema.GroupKind, exact bool) *Evaluator {
	if c == nil {
		return nil
	}
	if gk.Kind != "" {
		if ev, ok := c.byKind[gk]; ok || exact {
			return ev
		}
	}
	return c.byGroup[gk.Group]
}

// Len returns the number of entries in use.
func (c *Checks) Len() int {
	if c == nil {
		return 0
	}
	return len(c.byKind) + len(c.byGroup)
}

// Status is the status of obj: by the expressions that apply to its group
// and kind, or else by kstatus. Its signature is that of ssa.StatusFunc,
// so that checks.Status plugs into ssa.WaitOptions.
func (c *Checks) Status(ctx context.Context, obj *unstructured.Unstructured) (*status.Result, error) {
	if ev := c.For(obj.GroupVersionKind().GroupKind()); ev != nil {
		return ev.Evaluate(ctx, obj)
	}
	return status.Compute(obj)
}

// Evaluator judges the objects of one healthCheckExprs entry.
type Evaluator struct {
	subject    string
	current    *program
	inProgress *program
	failed     *program
}

func newEvaluator(i int, e meta.HealthCheckExpressions) (*Evaluator, error) {
	ev := &Evaluator{subject: e.APIVersion}
	if e.Kind != "" {
		ev.subject += " " + e.Kind
	}
	var errs []error
	for _, f := range []struct {
		name     string
		expr     string
		required bool
		into     **program
	}{
		{FieldInProgress, e.InProgress, false, &ev.inProgress},
		{FieldFailed, e.Failed, false, &ev.failed},
		{FieldCurrent, e.Current, true, &ev.current},
	} {
		if f.expr == "" {
			if f.required {
				errs = append(errs, &CompileError{Index: i, APIVersion: e.APIVersion, Kind: e.Kind, Field: f.name, Err: errors.New("an expression is required")})
			}
			continue
		}
		p, err := compile(healthMode, f.expr)
		if err != nil {
			errs = append(errs, &CompileError{Index: i, APIVersion: e.APIVersion, Kind: e.Kind, Field: f.name, Expr: f.expr, Err: err})
			continue
		}
		*f.into = p
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ev, nil
}

// Evaluate judges obj: InProgress while status.observedGeneration lags
// metadata.generation; otherwise the status of the first of inProgress,
// failed and current that holds; InProgress when none does. The message
// is the object's Ready condition message when it has one, else it says
// which expression decided. An expression that cannot be evaluated is an
// error.
func (e *Evaluator) Evaluate(ctx context.Context, obj *unstructured.Unstructured) (*status.Result, error) {
	if res, err := generationLag(obj); res != nil || err != nil {
		return res, err
	}
	for _, step := range []struct {
		name   string
		prog   *program
		status status.Status
	}{
		{FieldInProgress, e.inProgress, status.InProgressStatus},
		{FieldFailed, e.failed, status.FailedStatus},
		{FieldCurrent, e.current, status.CurrentStatus},
	} {
		if step.prog == nil {
			continue
		}
		ok, err := step.prog.evalBool(ctx, obj.Object)
		if err != nil {
			return nil, fmt.Errorf("healthCheckExprs %s %s expression %q: %w", e.subject, step.name, step.prog.expr, err)
		}
		if ok {
			msg := readyMessage(obj)
			if msg == "" && step.status != status.CurrentStatus {
				msg = fmt.Sprintf("healthCheckExprs %s expression holds", step.name)
			}
			return &status.Result{Status: step.status, Message: msg}, nil
		}
	}
	return &status.Result{Status: status.InProgressStatus, Message: "no healthCheckExprs expression holds yet"}, nil
}

// generationLag returns InProgress when the object reports an observed
// generation other than its generation.
func generationLag(obj *unstructured.Unstructured) (*status.Result, error) {
	observed, ok, err := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if err != nil {
		return nil, fmt.Errorf("reading status.observedGeneration: %w", err)
	}
	if !ok {
		return nil, nil
	}
	generation, ok, err := unstructured.NestedInt64(obj.Object, "metadata", "generation")
	if err != nil {
		return nil, fmt.Errorf("reading metadata.generation: %w", err)
	}
	if !ok || generation == observed {
		return nil, nil
	}
	return &status.Result{
		Status:  status.InProgressStatus,
		Message: fmt.Sprintf("generation %d is not observed yet (status.observedGeneration %d)", generation, observed),
	}, nil
}

// readyMessage returns the message of obj's Ready condition, if any.
func readyMessage(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "conditions")
	list, _ := conds.([]any)
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != meta.ReadyCondition {
			continue
		}
		msg, _ := m["message"].(string)
		return msg
	}
	return ""
}
